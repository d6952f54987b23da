"""The bot's identity: who sync's commits and release's tags are by, as git stores it."""

from __future__ import annotations

from dataclasses import dataclass

from generator.util.errors import FatalError

#: The bot that commits syncs and tags releases, unless --bot-name/--bot-email say otherwise.
DEFAULT_BOT_NAME = "executorch-arduino-bot"
DEFAULT_BOT_EMAIL = "executorch-arduino-bot@users.noreply.github.com"


@dataclass(frozen=True)
class Identity:
    """Who the bot's commits are by (author and committer); never the machine's identity."""

    name: str
    email: str


def _crud(c: str) -> bool:
    """What git strips from both ends of a name or email (git `ident.c`, `crud()`)."""
    return ord(c) <= 32 or c in ".,:;<>\"\\'"


def git_stored(value: str) -> str:
    """`value` as git stores it in a commit or tag as a name or email: leading and trailing
    crud (`_crud`) stripped, then every `<`, `>` and newline dropped (git `ident.c`,
    `strbuf_addstr_without_crud`, which `fmt_ident` applies to both)."""
    start, end = 0, len(value)
    while start < end and _crud(value[start]):
        start += 1
    while end > start and _crud(value[end - 1]):
        end -= 1
    return "".join(c for c in value[start:end] if c not in "<>\n")


def check_identity(
    identity: Identity, name_option: str = "--bot-name", email_option: str = "--bot-email"
) -> Identity:
    """Refuse a bot name or email that git would store differently, or that holds control
    characters; returns `identity` unchanged.

    Raises:
        FatalError: naming the option, the value as given (repr) and as git would store it.
    """
    for option, value, example in (
        (name_option, identity.name, "executorch-arduino-bot"),
        (email_option, identity.email, "bot@users.noreply.github.com"),
    ):
        stored = git_stored(value)
        if not stored:
            raise FatalError(
                f"{option} {value!r} is empty once git strips what it does not store (space, "
                f"control characters and . , : ; < > \" \\ ' at the ends): give e.g. {example}"
            )
        if any(not c.isprintable() for c in value) or stored != value:
            raise FatalError(
                f"{option} {value!r} would be stored by git as {stored!r} (git strips space, "
                "control characters and . , : ; < > \" \\ ' at the ends and drops < > and "
                "newlines), and sync would then not recognise its own commits: give "
                f"{stored!r} or another value git keeps as it is"
            )
    return identity
