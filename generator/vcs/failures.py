"""What a failed git command said, and what the user can do about it.

git's own words always reach the user (its `fatal:`/`error:` lines, URLs stripped of
credentials); the hint is chosen from them, so a refused cached clone is never reported as a
network problem. The phrases matched are git's (builtin/clone.c, setup.c, http.c, transport
messages of git 2.30-2.47) and GitHub's.
"""

from __future__ import annotations

import re

from generator.util.urls import display_url

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"]+")


def redact_urls(text: str) -> str:
    """Every URL in `text` without its user-info (see `generator.util.urls.display_url`)."""
    return _URL.sub(lambda m: display_url(m.group(0)), text)


def git_reason(stderr: str, status: int | None = None) -> str:
    """git's message: its `fatal:`, `error:`, `remote:` and `!` lines (the last six), or all
    of stderr when it has none of them; URLs carry no credentials."""
    text = redact_urls(stderr.replace("stderr: ", "")).strip()
    # GitPython quotes stderr ("stderr: 'fatal: …'"): quotes around a line are not git's.
    stripped = (line.strip().strip("'\"").strip() for line in text.splitlines())
    lines = [
        line
        for line in stripped
        if line.startswith(("fatal:", "error:", "remote:", "!", "warning:"))
    ]
    if lines:
        return "\n".join(lines[-6:])
    if text:
        return text.strip("'\" \n")
    return f"git exited with {status}" if status is not None else "git failed"


def is_dubious_ownership(stderr: str) -> bool:
    """git refuses a repository owned by another user (safe.directory, git >= 2.35.2)."""
    return "dubious ownership" in stderr.lower()


def is_missing_ref(stderr: str) -> bool:
    """The remote answered and lacks what was asked for by name or SHA (upload-pack's "not
    our ref", an unadvertised object it will not serve, fetch's "couldn't find remote ref")."""
    low = stderr.lower()
    return (
        "not our ref" in low
        or "does not allow request for unadvertised object" in low
        or "couldn't find remote ref" in low
    )


def _transport_hint(low: str, url_option: str) -> str | None:
    """What to do when git refuses the URL's transport, or has none for it."""
    refused = re.search(r"transport '([^']+)' not allowed", low)
    if refused:
        return (
            f"git's configuration refuses the {refused.group(1)} transport "
            f"(protocol.allow, protocol.{refused.group(1)}.allow): check {url_option}, or give "
            "a URL of a transport git allows (https, ssh)"
        )
    helper = re.search(r"'remote-([^']+)' is not a git command", low)
    if helper:
        return (
            f"git has no transport for {helper.group(1)} URLs (no git-remote-{helper.group(1)}"
            f" helper): check {url_option}; give an https, ssh or git URL, or a path"
        )
    if "bad url syntax" in low or "unable to find remote helper" in low:
        return f"git cannot use this URL: check {url_option}; give an https, ssh or git URL"
    return None


def hint(stderr: str, *, url_option: str, folder: str | None = None) -> str:
    """What to do about a failed fetch, clone or ls-remote, from git's message.

    Args:
        stderr: what git printed.
        url_option: the option that named the URL (e.g. "--executorch-repo"), for the hint.
        folder: the local repository git worked in, when there is one (ownership hints).
    Returns:
        One sentence.
    """
    low = stderr.lower()
    transport = _transport_hint(low, url_option)
    if transport is not None:
        return transport
    if is_dubious_ownership(stderr):
        where = folder or "the repository"
        return (
            f"git refuses {where} because another user owns it: make it yours "
            f'(chown -R "$(id -u)" {where}), trust it (git config --global --add '
            f"safe.directory {where}), or pass another --cache-dir"
        )
    if (
        "authentication failed" in low
        or "could not read username" in low
        or "could not read password" in low
        or "returned error: 401" in low
        or "terminal prompts disabled" in low
    ):
        return (
            "the server asked for credentials: for a private repository give git a credential "
            "helper (git config credential.helper), never a token in the URL"
        )
    if "returned error: 403" in low or "permission denied" in low:
        return "the server refused access: check your credentials' permissions"
    if (
        "could not resolve host" in low
        or "connection refused" in low
        or "failed to connect" in low
        or "timed out" in low
        or "network is unreachable" in low
        or "couldn't connect" in low
    ):
        return (
            f"the server cannot be reached: check {url_option} and your network, or map the "
            "URL to a local mirror with git's url.<base>.insteadOf (README, 'Local mirrors')"
        )
    if (
        "not found" in low
        or "does not appear to be a git repository" in low
        or "repository not found" in low
        or "no such file or directory" in low
    ):
        return f"there is no repository at that URL: check {url_option}"
    if folder is not None:
        return f"see git's message; if the cached clone {folder} is damaged, delete it"
    return "see git's message"
