"""Check what `sync` and `release` are both given before anything is cloned or asked of
GitHub: the token and the repo name. Each check raises a FatalError that says what to pass
instead; none of them ever puts the token in a message. (Sync's own inputs, the API root and
the base branch, are checked by `generator.sync.inputs`.)
"""

from __future__ import annotations

import re

from generator.errors import FatalError

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
