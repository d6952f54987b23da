"""Check what `sync` alone is given before anything is cloned, built or asked of GitHub: the
API root and the base branch (the token and the repo name, which release is given too, are
checked by `generator.vcs.repo_inputs`). Each check raises a FatalError that says what to pass
instead.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from git import Git

from generator.util.errors import FatalError
from generator.util.urls import display_url, token_url_problem
from generator.vcs.git import SYNC_PREFIX


def check_api_url(url: str, source: str = "--api-url") -> None:
    """Refuse an `--api-url` that is not an http(s) URL with a host.

    Args:
        source: where the URL came from, as the message names it (`$GITHUB_API_URL` when sync
            took the runner's).

    Raises:
        FatalError: another scheme, no host, a bad port, credentials, a query or fragment,
            or whitespace in it.
    """
    hint = "give the REST API root, e.g. https://api.github.com or https://HOST/api/v3"
    if any(c.isspace() or not c.isprintable() for c in url):
        raise FatalError(
            f"{source} {display_url(url)!r} contains whitespace or control characters: {hint}"
        )
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - parsing the port validates it
    except ValueError:
        raise FatalError(f"{source} {display_url(url)!r} has an invalid port: {hint}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FatalError(f"{source} {display_url(url)!r} is not an http(s) URL with a host: {hint}")
    if parts.username is not None or parts.password is not None:
        raise FatalError(
            f"{source} must not carry credentials: {hint}; the token goes in GITHUB_TOKEN"
        )
    if parts.query or parts.fragment:
        raise FatalError(f"{source} {display_url(url)!r} has a query or fragment: {hint}")
    if token_url_problem(url) is not None:
        raise FatalError(
            f"{source} {display_url(url)!r} is plain http to another machine: the token would "
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
