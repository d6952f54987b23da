"""Check what `sync` was given before anything is cloned, built or asked of GitHub: the token,
the repo name, the API root and the base branch. Each check raises a FatalError that says what
to pass instead; none of them ever puts the token in a message.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from git import Git

from generator.errors import FatalError
from generator.sync.git import SYNC_PREFIX
from generator.urls import display_url, token_url_problem

#: GitHub owner (user or organization): letters, digits, hyphens (underscores for Enterprise
#: managed users), not starting with a hyphen, at most 39 characters. Repository name: letters,
#: digits, `.`, `_`, `-`, at most 100 characters. Source: GitHub's sign-up and "Create a new
#: repository" forms (the rules they enforce).
_OWNER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,38}$")
_NAME = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
#: A token is printable ASCII without spaces (GitHub's are `ghp_`/`github_pat_` + base62/_).
_TOKEN = re.compile(r"^[\x21-\x7e]+$")


def clean_token(token: str | None) -> str | None:
    """The token with surrounding whitespace removed (a trailing newline from `gh auth token`
    or a secrets file is common), or None when nothing is left.

    Raises:
        FatalError: the token holds other whitespace, control or non-ASCII characters (it
            could not go into an HTTP header); the message never shows the token.
    """
    if token is None:
        return None
    stripped = token.strip()
    if not stripped:
        return None
    if not _TOKEN.match(stripped):
        raise FatalError(
            "GITHUB_TOKEN contains spaces, control or non-ASCII characters, so it is not a "
            "GitHub token (the value is not shown): set it to the token alone, e.g. "
            "`export GITHUB_TOKEN=$(gh auth token)`"
        )
    return stripped


def check_repo(repo: str) -> None:
    """Refuse a `--repo` that is not OWNER/NAME as GitHub spells repositories.

    Raises:
        FatalError: wrong shape, characters GitHub does not allow, `.`/`..`, or a `.git` suffix.
    """
    owner, slash, name = repo.partition("/")
    example = "e.g. pytorch/executorch"
    if not slash or not _OWNER.match(owner) or not _NAME.match(name) or name in (".", ".."):
        raise FatalError(
            f"--repo {repo!r} is not OWNER/NAME ({example}): the owner has letters, digits and "
            "hyphens; the name letters, digits, '.', '_' and '-' (and is not '.' or '..')"
        )
    if name.lower().endswith(".git"):
        raise FatalError(
            f"--repo {repo!r} ends in .git: give the repository as OWNER/NAME ({example}); "
            "a git URL goes in --remote"
        )


def check_api_url(url: str) -> None:
    """Refuse an `--api-url` that is not an http(s) URL with a host.

    Raises:
        FatalError: another scheme, no host, a bad port, credentials, a query or fragment,
            or whitespace in it.
    """
    hint = "give the REST API root, e.g. https://api.github.com or https://HOST/api/v3"
    if any(c.isspace() or not c.isprintable() for c in url):
        raise FatalError(
            f"--api-url {display_url(url)!r} contains whitespace or control characters: {hint}"
        )
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - parsing the port validates it
    except ValueError:
        raise FatalError(f"--api-url {display_url(url)!r} has an invalid port: {hint}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FatalError(
            f"--api-url {display_url(url)!r} is not an http(s) URL with a host: {hint}"
        )
    if parts.username is not None or parts.password is not None:
        raise FatalError(
            f"--api-url must not carry credentials: {hint}; the token goes in GITHUB_TOKEN"
        )
    if parts.query or parts.fragment:
        raise FatalError(f"--api-url {display_url(url)!r} has a query or fragment: {hint}")
    if token_url_problem(url) is not None:
        raise FatalError(
            f"--api-url {display_url(url)!r} is plain http to another machine: the token would "
            "cross the network in clear text. Use https (plain http is accepted only for "
            "loopback addresses: 127.0.0.0/8, localhost)"
        )


def check_base(base: str) -> None:
    """Refuse a `--base` that is not a plain branch name.

    Raises:
        FatalError: `HEAD`, `@`, a full ref (`refs/...`), a sync branch, or a name that
            `git check-ref-format --branch` rejects.
    """
    hint = "give the branch the pull request targets, e.g. main"
    if base in ("HEAD", "@") or base.startswith("refs/") or "@{" in base:
        raise FatalError(f"--base {base!r} is not a branch name: {hint}")
    status, _, _ = Git().execute(
        ["git", "check-ref-format", "--branch", base],
        with_extended_output=True,
        with_exceptions=False,
    )
    if status != 0 or base.startswith("-"):
        raise FatalError(f"--base {base!r} is not a valid git branch name: {hint}")
    if base.startswith(SYNC_PREFIX):
        raise FatalError(f"--base {base!r} is a sync branch; target e.g. main")
