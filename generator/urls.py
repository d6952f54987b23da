"""Git and API URLs the user gives: credentials are refused, user names never shown.

A password or token in a URL would leak wherever the URL goes: progress lines, error
messages, `extras/PROVENANCE.txt` (which sync commits and pushes), cache folder names. So a
URL that carries one is refused with a pointer to the safe ways (GITHUB_TOKEN, a git
credential helper), and every URL the tool prints, renders, records or turns into a path goes
through `display_url` first.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from generator.errors import FatalError

#: Schemes where anything before '@' is a credential (GitHub takes a token as the user name).
_HTTP_SCHEMES = frozenset({"http", "https", "ftp", "ftps"})
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def display_url(url: str) -> str:
    """`url` without its user-info (`https://user:pw@host/x` -> `https://host/x`).

    scp-like git addresses (`git@github.com:owner/name.git`) and local paths are returned as
    they are: their user part is an account name, not a secret.
    """
    if not _SCHEME.match(url):
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<a malformed URL>"
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=host))


def refuse_credentials(url: str, option: str) -> str:
    """Refuse a URL that carries a credential; return it unchanged otherwise.

    http(s) URLs may carry no user-info at all (GitHub reads a token given as the user name);
    other schemes (ssh://git@host/…) may name a user but not a password.

    Args:
        url: what the user passed; option: the option it came from, for the message.
    Raises:
        FatalError: naming the option (never the credential) and the safe alternatives.
    """
    if not _SCHEME.match(url):
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        raise FatalError(f"{option} is not a valid URL: check its syntax") from None
    if "@" not in parts.netloc:
        return url
    userinfo = parts.netloc.rpartition("@")[0]
    if parts.scheme.lower() in _HTTP_SCHEMES or ":" in userinfo:
        raise FatalError(
            f"{option} {display_url(url)} was given with credentials in the URL, which would "
            "end up in logs, PROVENANCE.txt and folder names: pass the URL without them, and "
            "the token through GITHUB_TOKEN or a git credential helper "
            "(git config credential.helper)"
        )
    return url
