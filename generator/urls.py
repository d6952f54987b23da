"""Git and API URLs the user gives: credentials are refused, user names never shown.

A password or token in a URL would leak wherever the URL goes: progress lines, error
messages, `extras/PROVENANCE.txt` (which sync commits and pushes), cache folder names. So a
URL that carries one is refused with a pointer to the safe ways (GITHUB_TOKEN, a git
credential helper), and every URL the tool prints, renders, records or turns into a path goes
through `display_url` first.

Also the one definition of ExecuTorch's canonical upstream URL (what `--executorch-repo`
defaults to; `vendored/executorch.yaml` names the same URL, a test checks).
"""

from __future__ import annotations

import re

from generator.errors import FatalError

#: ExecuTorch's canonical upstream (git's `url.<base>.insteadOf` maps it to a mirror).
DEFAULT_EXECUTORCH_REPO = "https://github.com/pytorch/executorch.git"
#: Its web pages: a commit, and the commits between two pins.
UPSTREAM_COMMIT = DEFAULT_EXECUTORCH_REPO.removesuffix(".git") + "/commit/{sha}"
UPSTREAM_COMPARE = DEFAULT_EXECUTORCH_REPO.removesuffix(".git") + "/compare/{old}...{new}"

#: Schemes where anything before '@' is a credential (GitHub takes a token as the user name).
_HTTP_SCHEMES = frozenset({"http", "https", "ftp", "ftps"})
#: `scheme://userinfo@` anywhere in a text (before the first '/' of the authority).
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<userinfo>[^/?#@\s]*)@")


def display_url(url: str) -> str:
    """`url` without its user-info (`https://user:pw@host/x` -> `https://host/x`), wherever
    a `scheme://…@` appears in it (leading spaces and malformed URLs included).

    scp-like git addresses (`git@github.com:owner/name.git`) and local paths are returned as
    they are: their user part is an account name, not a secret.
    """
    return _USERINFO.sub(lambda m: f"{m.group('scheme')}://", url)


def refuse_credentials(url: str, option: str) -> str:
    """Refuse a URL that carries a credential, or white space; return it unchanged otherwise.

    http(s) URLs may carry no user-info at all (GitHub reads a token given as the user name);
    other schemes (ssh://git@host/…) may name a user but not a password.

    Args:
        url: what the user passed; option: the option it came from, for the message.
    Raises:
        FatalError: naming the option and the URL without its user-info (never the
            credential), and the safe alternatives.
    """
    if any(c.isspace() or not c.isprintable() for c in url):
        raise FatalError(
            f"{option} {display_url(url).strip()!r} contains white space or control "
            "characters; pass the URL alone"
        )
    for m in _USERINFO.finditer(url):
        if m.group("scheme").lower() in _HTTP_SCHEMES or ":" in m.group("userinfo"):
            raise FatalError(
                f"{option} {display_url(url)} was given with credentials in the URL, which "
                "would end up in logs, PROVENANCE.txt and folder names: pass the URL without "
                "them, and the token through GITHUB_TOKEN or a git credential helper "
                "(git config credential.helper)"
            )
    return url
