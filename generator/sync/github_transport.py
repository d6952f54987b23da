"""How sync's GitHub requests go out: retried (`SyncRetry`) and only over connections the token
rule allows (`check_connections`). `generator.sync.github.GitHubRepo` builds its PyGithub client
with both.

Retries are PyGithub's `GithubRetry` (a urllib3 `Retry`), bounded to `attempts` tries:
- a rate limit (GitHub REST docs, "Rate limits for the REST API": a 403 or 429 with
  `Retry-After`, or whose message says a primary or secondary limit was exceeded): wait
  `Retry-After` seconds, else until `x-ratelimit-reset`, else a minute; give up at once when
  that is longer than `max_wait`;
- 5xx and connection failures: back off exponentially (1, 2, 4 ... s).
`SyncRetry` adds only what GithubRetry does not do: a 429 without `Retry-After` is waited out as
GithubRetry waits out a 403 (it retries 429 only with the header), a `Retry-After` longer than
`max_wait` gives up instead of sleeping it, the first backoff is 1 s (urllib3 retries the first
failure at once), sleeping goes through an injectable `sleep` (tests record it), and a POST is
never retried by it after a 5xx or a lost answer: the POST may have taken effect, so
`GitHubRepo._call` first looks whether it did (the pull request or comment exists) and only then
tries again.

The token goes only where `generator.util.urls.token_url_problem` allows: PyGithub builds a
connection for the API root and for every URL of an answer that names another host, port or
scheme (`Requester.__customConnection`), and sends the token on each; `_Checked*Connection`
applies the rule before such a connection exists. A redirect of the API (301) to another host
or scheme is refused by PyGithub and explained by `GitHubRepo._call`; requests follows none by
itself.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Collection
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from github import GithubRetry
from github.GithubException import RateLimitExceededExceedsMaxWait
from github.Requester import HTTPRequestsConnectionClass, HTTPSRequestsConnectionClass, Requester
from urllib3.connectionpool import ConnectionPool
from urllib3.response import BaseHTTPResponse, HTTPResponse
from urllib3.util.retry import Retry

from generator.util.errors import FatalError
from generator.util.urls import check_token_url

#: urllib3's idempotent methods, PATCH (sync's edits set fields: sending one twice is harmless)
#: and POST, which `SyncRetry` retries only when it cannot have run: after a rate limit or a
#: connection that was never made.
RETRIED_METHODS: Collection[str] = Retry.DEFAULT_ALLOWED_METHODS | {"PATCH", "POST"}


class SyncRetry(GithubRetry):
    """GithubRetry with sync's additions (see the module docstring).

    Args:
        sleeper: how to wait (seconds).
        kwargs: GithubRetry's and urllib3 Retry's (`total`, `backoff_factor`,
            `max_rate_limit_wait` ...).
    """

    def __init__(self, *, sleeper: Callable[[float], None] = time.sleep, **kwargs: Any) -> None:
        self.sleeper = sleeper
        super().__init__(**kwargs)
        # GithubRetry logs each 403 ("Request GET ... failed with 403: ...") at INFO to the
        # stderr handler PyGithub installs on its "github" logger: a stray line beside the
        # explained error sync prints; its retries are sync's to report.
        logging.getLogger("github.GithubRetry").setLevel(logging.WARNING)

    def new(self, **kw: Any) -> SyncRetry:
        kw["sleeper"] = self.sleeper
        retry: SyncRetry = super().new(**kw)
        return retry

    def get_backoff_time(self) -> float:
        tries = len(self.history)
        return min(self.backoff_max, self.backoff_factor * 2.0 ** (tries - 1)) if tries else 0.0

    def sleep(self, response: BaseHTTPResponse | None = None) -> None:
        after = self.get_retry_after(response) if response is not None else None
        wait = after if after else self.get_backoff_time()
        if wait > 0:
            self.sleeper(float(wait))

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        if method.upper() == "POST" and status_code >= 500:
            return False  # it may have taken effect: GitHubRepo._call looks before it retries
        return super().is_retry(method, status_code, has_retry_after)

    def increment(  # type: ignore[override]
        self,
        method: str | None = None,
        url: str | None = None,
        response: HTTPResponse | None = None,
        error: Exception | None = None,
        _pool: ConnectionPool | None = None,
        _stacktrace: TracebackType | None = None,
    ) -> Retry:
        if error is not None and (method or "").upper() == "POST" and self._is_read_error(error):
            raise error.with_traceback(_stacktrace)  # sent, maybe taken effect: as for a 5xx
        if response is None:
            return super().increment(method, url, response, error, _pool, _stacktrace)
        if response.status == 403 and self.total == 0:
            # out of tries: raise it with its message (GithubRetry reads the body to look for a
            # rate limit, then hands the answer on without it)
            body = self.get_content(response, url or "")
            try:
                data = json.loads(body)
            except ValueError:
                data = {"message": body.decode("utf-8", "replace")}
            raise Requester.createException(403, dict(response.headers), data)
        after = self.get_retry_after(response)
        limit = self.max_rate_limit_wait
        if after is not None and limit is not None and after > limit:
            raise RateLimitExceededExceedsMaxWait(
                response.status, None, dict(response.headers), wait=after
            )
        if response.status != 429 or after is not None:
            return super().increment(method, url, response, error, _pool, _stacktrace)
        # a 429 without Retry-After: wait as GithubRetry waits out a 403 rate limit
        retry = super().increment(method, url, response, error, _pool, _stacktrace)
        reset = str(response.headers.get("X-RateLimit-Reset", ""))
        if response.headers.get("X-RateLimit-Remaining") == "0" and reset.isdigit():
            wait = int(reset) - time.time() + 1.0
        else:
            wait = self.secondary_rate_wait
        if limit is not None and wait > limit:
            raise RateLimitExceededExceedsMaxWait(
                response.status, None, dict(response.headers), wait=wait
            )
        wait = max(wait, retry.get_backoff_time())
        retry.get_backoff_time = lambda: wait  # type: ignore[method-assign]
        return retry


#: Where messages say a refused connection came from.
_CONNECTION_SOURCE = "a connection PyGithub was to open (the --api-url, or a URL in its answers)"


Origin = tuple[str, str, int]


def _check_connection(scheme: str, host: str, port: int | None, origin: Origin | None) -> None:
    """Refuse a connection to `scheme://host:port` that the token rule forbids (it names what
    is wrong with plain http), then one to another origin than `origin` (None: any).

    Raises:
        FatalError: naming the server and, for another origin, the --api-url's.
    """
    bracketed = f"[{host}]" if ":" in str(host) and not str(host).startswith("[") else host
    shown = f"{scheme}://{bracketed}{f':{port}' if port else ''}"
    check_token_url(f"{shown}/", _CONNECTION_SOURCE)
    if origin is not None and (scheme, str(host).lower(), port or _DEFAULT_PORTS[scheme]) != (
        origin
    ):
        raise FatalError(
            f"GitHub's answer points sync at {shown}, another server than the "
            f"--api-url's ({origin[0]}://{origin[1]}:{origin[2]}); the token goes to "
            "that one only, so nothing was sent there: check --api-url and any proxy "
            "on the way"
        )


class _CheckedHTTPConnection(HTTPRequestsConnectionClass):
    """PyGithub's http connection, refused by the token rule before it is made, and never
    through a proxy: the rule lets plain http go to loopback only, and requests would hand it
    (`Authorization: token …` in clear text) to `http_proxy` / `ALL_PROXY`'s machine.
    `origin`: the only server it may go to (set by `check_connections`), None for any."""

    origin: Origin | None = None

    def __init__(self, host: str, port: int | None = None, *args: Any, **kwargs: Any) -> None:
        _check_connection("http", host, port, self.origin)
        super().__init__(host, port, *args, **kwargs)
        self.session.trust_env = False  # no proxy (nor .netrc) from the environment


class _CheckedHTTPSConnection(HTTPSRequestsConnectionClass):
    """PyGithub's https connection, through the same rule (which allows https)."""

    origin: Origin | None = None

    def __init__(self, host: str, port: int | None = None, *args: Any, **kwargs: Any) -> None:
        _check_connection("https", host, port, self.origin)
        super().__init__(host, port, *args, **kwargs)


def check_connections(requester: Requester, api_url: str) -> None:
    """Make `requester` open its connections through `_Checked*Connection`, and only to
    `api_url`'s origin (scheme, host and port).

    PyGithub takes its connection classes from (name-mangled) attributes it reads on each new
    connection; they are set on this requester only (`Requester.injectConnectionClasses`
    would change every requester and turn off connection reuse). PyGithub opens a connection
    of its own for a URL of an answer (a `rel="next"` link, a `url` field) on another origin
    and sends the token on it; its own guard is an `assert` on the host's domain
    (`Requester.__assertUrlAllowed`), which `python -O` (or PYTHONOPTIMIZE in the
    environment) removes, so the origin is checked here too.

    Raises:
        RuntimeError: this PyGithub keeps them elsewhere (an upgrade must update this).
        FatalError: (when a connection is made) one to another origin than `api_url`'s.
    """
    origin = _origin(api_url)
    http = _bound(_CheckedHTTPConnection, origin)
    https = _bound(_CheckedHTTPSConnection, origin)
    chosen = https if api_url.lower().startswith("https:") else http
    for attribute, cls in (
        ("_Requester__httpConnectionClass", http),
        ("_Requester__httpsConnectionClass", https),
        ("_Requester__connectionClass", chosen),
    ):
        if not hasattr(requester, attribute):
            raise RuntimeError(f"PyGithub's Requester has no {attribute}; update this function")
        setattr(requester, attribute, cls)


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(url: str) -> Origin:
    """(scheme, host in lower case, port) of `url`, the port its scheme's default when none
    is given (RFC 6454, "Origin")."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS.get(scheme, 0)


def _bound(cls: type[Any], origin: Origin) -> type[Any]:
    """`cls` (a `_Checked*Connection`), refusing any origin but `origin`."""
    return type(f"{cls.__name__}To{origin[1]}", (cls,), {"origin": origin})
