"""Git and API URLs the user gives: credentials are refused, user names never shown.

A password or token in a URL would leak wherever the URL goes: progress lines, error
messages, `extras/PROVENANCE.txt` (which sync commits and pushes), cache folder names. So a
URL that carries one is refused with a pointer to the safe ways (GITHUB_TOKEN, a git
credential helper), and every URL the tool prints, renders, records or turns into a path goes
through `display_url` first.

The one rule for where the GitHub token may go (`token_url_problem`): over https, or over
plain http to this machine (loopback) only. Every URL the token can be sent to passes it
wherever the URL came from: `--api-url`, `--remote`, the clone URL GitHub's API answers, the URL
git really uses after its `url.<base>.insteadOf` / `pushInsteadOf` rewriting, each connection
PyGithub opens (API answers name URLs it follows), and each URL git asks the askpass script for
credentials for (which is where a redirect ends up): `askpass_reply`.

Also the one definition of ExecuTorch's canonical upstream URL (what `--executorch-repo`
defaults to; `data/vendored/executorch.yaml` names the same URL, a test checks).
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

import git
from git.exc import UnsafeProtocolError

from generator.util.errors import FatalError

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


def proxy_without_credentials(value: str) -> str:
    """A proxy setting (`http_proxy`, `HTTPS_PROXY`, ...) without its user-info:
    `http://user:pw@proxy:3128` and curl's scheme-less `user:pw@proxy:3128` become
    `http://proxy:3128` and `proxy:3128` (curl(1), its proxy option: the scheme may be left
    out). For the unprivileged sync child (issue 29): a proxy's password is a secret too,
    and the ref's code that child runs could read it from its environment.

    Everything before the value's last `@` goes, so an unencoded `@`, `/`, `?` or `#` in the
    password (which Python's `urllib.request._parse_proxy` still reads as one) leaves none of
    it; a proxy URL whose path holds an `@` loses that path's head, never a credential.
    """
    scheme, sep, rest = value.strip().partition("://")
    if not sep:
        scheme, rest = "", value.strip()
    return f"{scheme}{sep}{rest.rpartition('@')[2]}"


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


#: Schemes whose transports send a password the askpass script or PyGithub hands over (git's
#: http, https, ftp and ftps remote helpers; the REST API). The token may only go over https,
#: or over http to loopback; ssh (keys, `BatchMode=yes`), `git://`, `file://` and local paths
#: never ask for it.
_CREDENTIAL_SCHEMES = frozenset({"http", "https", "ftp", "ftps"})
#: What git's askpass prompt looks like (git `credential.c`, `credential_ask_one`:
#: "%s for '%s': " with "Username" or "Password" and the URL it would send them to).
_PROMPT = re.compile(r"^(?P<what>Username|Password) for '(?P<url>[^']*)': ?$")
#: The first words of every refusal (sync's git error messages look for them).
REFUSAL = "not sending the GitHub token to"


def is_loopback(host: str) -> bool:
    """`host` is `localhost` or an IPv4 loopback address (127.0.0.0/8): this machine.

    IPv6 literals are left out: PyGithub cannot parse `http://[::1]:PORT` (urllib3
    InvalidURL), and one rule serves the API and git.
    """
    if host.lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.version == 4 and address.is_loopback


def carries_token(url: str) -> bool:
    """Whether git sends the token to `url` at all: https, or plain http to loopback (what
    `token_url_problem` allows of the schemes that take a password). Every other git (ssh,
    a path, `git://`) gets no token in its environment."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    return scheme in ("https", "http") and token_url_problem(url) is None


def token_url_problem(url: str) -> str | None:
    """Why the GitHub token may not be sent to `url`, or None when it may.

    The one rule: https to any host; plain http only to loopback (`is_loopback`); ftp and
    ftps never (git would send the token as an ftp password). URLs of other kinds (ssh,
    scp-like `git@host:path`, `git://`, `file://`, local paths) carry no token and pass.

    Args:
        url: any URL or git remote address (user-info is ignored, never shown).
    Returns:
        A short reason for a message (None: allowed).
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in _CREDENTIAL_SCHEMES:
        return None
    try:
        host = parts.hostname
    except ValueError:
        host = None
    if not host:
        return "it names no host"
    if scheme == "https":
        return None
    if scheme == "http":
        if is_loopback(host):
            return None
        return "plain http to another machine would carry the token in clear text"
    return f"git would send the token as an {scheme} password"


#: What `no_proxy` always names for the processes that carry the token: plain http goes only to
#: this machine (`token_url_problem`), and a configured proxy (`http_proxy`, `ALL_PROXY`, git's
#: `http.proxy`) would carry such a request, credentials in clear text, to another machine.
#: curl and requests match `127.0.0.0/8`; older curl only the literal `127.0.0.1`.
LOOPBACK_NO_PROXY = ("localhost", "127.0.0.1", "127.0.0.0/8")


def no_proxy_with_loopback(current: str | None) -> str:
    """The `no_proxy` value for git run with the token: `current` (the machine's `no_proxy`
    or `NO_PROXY`, kept for its other hosts) plus `LOOPBACK_NO_PROXY`.

    A lone `*` (no proxy for any host) is kept as it is: curl reads `*` as "every host" only
    when it is the whole value.
    """
    entries = [e.strip() for e in (current or "").split(",") if e.strip()]
    if entries == ["*"]:
        return "*"
    return ",".join([*entries, *(h for h in LOOPBACK_NO_PROXY if h not in entries)])


def check_token_url(url: str, source: str, *, given: str | None = None) -> None:
    """Refuse to send the token to `url` (see `token_url_problem`), before any connection.

    Args:
        url: where the token would go; source: where the URL came from, for the message
            ("--remote", "the clone URL of acme/lib from the GitHub API" ...);
        given: what `source` said, when git's own config rewrote it into `url`.
    Raises:
        FatalError: naming the URL (without user-info), its source and what to do.
    """
    problem = token_url_problem(url)
    if problem is None:
        return
    shown = display_url(url)
    where = f"from {source}"
    if given is not None and given != url:
        where = (
            f"{source} {display_url(given)}, rewritten by git's url.<base>.insteadOf or "
            "pushInsteadOf config (see `git config --show-origin --get-regexp '^url\\.'`)"
        )
    raise FatalError(
        f"{REFUSAL} {shown} ({where}): {problem}. Use an https:// URL; plain http is accepted "
        "only for this machine (localhost, 127.0.0.0/8)"
    )


def askpass_reply(prompt: str, user: str, token: str) -> tuple[str | None, str]:
    """What the askpass script answers git's credential `prompt`: `user` for "Username for
    'URL': ", `token` for "Password for 'URL': ", when the token may go to URL.

    Git asks only once a server demanded credentials, after following any redirect, and names
    the URL it will send them to: so a redirect to plain http, or a URL git's config
    rewrote, is refused here, on the one rule, even when no earlier check saw it.

    Returns:
        (the answer, "") or (None, the refusal for stderr): a URL the rule refuses, or a
        prompt that is not git's credential prompt (e.g. an ssh passphrase).
    """
    match = _PROMPT.match(prompt.strip("\r\n"))
    if match is None:
        return None, f"executorch-arduino: not answering {display_url(prompt)!r} with the token"
    url = match.group("url")
    problem = token_url_problem(url)
    if problem is not None or urlsplit(url).scheme.lower() not in _CREDENTIAL_SCHEMES:
        why = problem or "not an http(s) URL"
        return None, f"fatal: executorch-arduino: {REFUSAL} {display_url(url)}: {why}"
    return (user if match.group("what") == "Username" else token), ""


#: The option that names ExecuTorch's URL (`build`, `sync`): what messages about it say.
REPO_OPTION = "--executorch-repo"


def refuse_transport(url: str, *, pinned: bool = False, option: str = REPO_OPTION) -> None:
    """Refuse a URL of git's `<transport>::<address>` form before anything is created.

    Those name a remote helper program (`ext::` runs a command, `fd::` talks over file
    descriptors of this process) rather than a server; GitPython refuses them too
    (`Git.check_unsafe_protocols`). Transports git itself refuses (`protocol.<name>.allow`,
    a scheme without a helper) fail at the first git command, with git's words.

    Args:
        pinned: the URL is a component's pin (named without an option).
        option: the option that gave the URL, for the message (`--remote` for sync).
    Raises:
        FatalError: naming the URL (without credentials) and the kinds of URL that work.
    """
    try:
        git.Git.check_unsafe_protocols(url)
    except UnsafeProtocolError:
        scheme = re.match(r"[A-Za-z0-9][A-Za-z0-9+.-]*", url)
        transport = scheme.group(0) if scheme else ""
        named = display_url(url) if pinned else f"{option} {display_url(url)}"
        raise FatalError(
            f"{named} names git's remote helper {transport}:: (a program, not a server), "
            "which this tool does not run: give an https, ssh or git URL, or a path"
        ) from None
