"""The GitHub side of `sync` (PyGithub): check access, find the open sync pull request, open or
update it, label it, find a sync pull request a maintainer closed, close the pull requests a
new sync supersedes; with bounded retries on rate limits and server errors.

Retries are PyGithub's `GithubRetry` (a urllib3 `Retry`), bounded to `attempts` tries:
- a rate limit (GitHub REST docs, "Rate limits for the REST API": a 403 or 429 with
  `Retry-After`, or whose message says a primary or secondary limit was exceeded): wait
  `Retry-After` seconds, else until `x-ratelimit-reset`, else a minute; give up at once when
  that is longer than `max_wait`;
- 5xx and connection failures: back off exponentially (1, 2, 4 ... s).
`_Retry` adds only what GithubRetry does not do: a 429 without `Retry-After` is waited out as
GithubRetry waits out a 403 (it retries 429 only with the header), a `Retry-After` longer than
`max_wait` gives up instead of sleeping it, the first backoff is 1 s (urllib3 retries the first
failure at once), sleeping goes through an injectable `sleep` (tests record it), and a POST is
never retried by it after a 5xx or a lost answer: the POST may have taken effect, so `_call`
first looks whether it did (the pull request or comment exists) and only then tries again.

Credentials: a fixed token (GITHUB_TOKEN, a SYNC_TOKEN), or a GitHub App (`--app-id`, its key
from SYNC_APP_PRIVATE_KEY): then the App's JWT finds its installation on the repo and the
installation tokens are minted as they are needed (`generator.sync.app`), through the same
checked and retried connection as every other call. `GitHubRepo.tokens` hands the same
credential to git.

GitHub's refusal to let the Actions GITHUB_TOKEN open a pull request (a 403 whose message is
`ACTIONS_MAY_NOT_CREATE_PULLS`) is recognised by that message and explained by the setting it
depends on; no API call can read that setting with a workflow token, so the refusal is the
only signal.

The token goes only where `generator.util.urls.token_url_problem` allows: PyGithub builds a
connection for the API root and for every URL of an answer that names another host, port or
scheme (`Requester.__customConnection`), and sends the token on each; `_Checked*Connection`
applies the rule before such a connection exists. A redirect of the API (301) to another host
or scheme is refused by PyGithub and explained here; requests follows none by itself.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import urlsplit

import requests
from github import Auth, Github, GithubException, GithubIntegration, GithubRetry
from github.GithubException import RateLimitExceededExceedsMaxWait
from github.GithubObject import GithubObject
from github.PaginatedList import PaginatedList
from github.PullRequest import PullRequest
from github.Repository import Repository
from github.Requester import HTTPRequestsConnectionClass, HTTPSRequestsConnectionClass, Requester
from urllib3.connectionpool import ConnectionPool
from urllib3.exceptions import MaxRetryError
from urllib3.response import BaseHTTPResponse, HTTPResponse
from urllib3.util.retry import Retry

from generator.sync.app import (
    REFRESH_MARGIN,
    AppCredentials,
    InstallationTokens,
    app_auth,
    utc_now,
)
from generator.util.errors import FatalError
from generator.util.urls import check_token_url
from generator.vcs.git import StaticToken, TokenSource

DEFAULT_API_URL = "https://api.github.com"
SYNC_LABEL = "sync"

#: What GitHub answers (403) when the workflow's GITHUB_TOKEN tries to open (or approve) a pull
#: request while the repository's or organisation's setting "Allow GitHub Actions to create and
#: approve pull requests" is off. Sources: the body quoted in danielroe/uppt issue #11 and
#: peter-evans/create-pull-request issues #1175 and #3979; GitHub changelog 2022-05-03
#: "GitHub Actions: Prevent GitHub Actions from creating and approving pull requests".
ACTIONS_MAY_NOT_CREATE_PULLS = "GitHub Actions is not permitted to create or approve pull requests"
#: Where that setting is, and what to do instead (also in the README, "Tokens").
ACTIONS_SETTING_HINT = (
    "the workflow's GITHUB_TOKEN may not open pull requests on this repository: turn on "
    'Settings → Actions → General → Workflow permissions → "Allow GitHub Actions to create and '
    'approve pull requests" on the repository (and, when the repository belongs to an '
    "organisation that turned it off, first on the organisation: Organisation settings → "
    "Actions → General), or give sync a GitHub App (--app-id with SYNC_APP_PRIVATE_KEY) or a "
    'SYNC_TOKEN instead (README, "Tokens"); a token of the App or SYNC_TOKEN also lets CI run '
    "on the pull request"
)

T = TypeVar("T")
G = TypeVar("G", bound=GithubObject)

#: urllib3's idempotent methods, PATCH (sync's edits set fields: sending one twice is harmless)
#: and POST, which `_Retry` retries only when it cannot have run: after a rate limit or a
#: connection that was never made.
_RETRIED_METHODS: Collection[str] = Retry.DEFAULT_ALLOWED_METHODS | {"PATCH", "POST"}


@dataclass(frozen=True)
class RepoInfo:
    """What the preflight learnt about the library repo.

    Attributes:
        full_name: OWNER/NAME as GitHub spells it; clone_url: its HTTPS git URL;
        default_branch: e.g. "main"; can_push: whether the token may push (None: not reported).
    """

    full_name: str
    clone_url: str
    default_branch: str
    can_push: bool | None


@dataclass(frozen=True)
class PullRequestResult:
    """The sync pull request after `open_or_update`: number, html URL, whether it was created,
    and why it could not be labelled (None: labelled)."""

    number: int
    url: str
    created: bool
    label_warning: str | None = None


@dataclass(frozen=True)
class SyncPull:
    """An open sync pull request of the repo (its head branch is a sync branch of this repo).

    Attributes:
        number, url: the pull request; branch: its head branch; head_sha: its head commit as
        GitHub reports it.
    """

    number: int
    url: str
    branch: str
    head_sha: str


@dataclass(frozen=True)
class ClosedPull:
    """A pull request that was closed without being merged.

    Attributes:
        number, url: the pull request; closed_at: when (None: not reported);
        closed_by: the login of who closed it (None: the API did not say).
    """

    number: int
    url: str
    closed_at: datetime | None
    closed_by: str | None


class _Retry(GithubRetry):
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

    def new(self, **kw: Any) -> _Retry:
        kw["sleeper"] = self.sleeper
        retry: _Retry = super().new(**kw)
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


class _CheckedHTTPConnection(HTTPRequestsConnectionClass):
    """PyGithub's http connection, refused by the token rule before it is made, and never
    through a proxy: the rule lets plain http go to loopback only, and requests would hand it
    (`Authorization: token …` in clear text) to `http_proxy` / `ALL_PROXY`'s machine."""

    def __init__(self, host: str, port: int | None = None, *args: Any, **kwargs: Any) -> None:
        check_token_url(f"http://{host}{f':{port}' if port else ''}/", _CONNECTION_SOURCE)
        super().__init__(host, port, *args, **kwargs)
        self.session.trust_env = False  # no proxy (nor .netrc) from the environment


class _CheckedHTTPSConnection(HTTPSRequestsConnectionClass):
    """PyGithub's https connection, through the same rule (which allows https)."""

    def __init__(self, host: str, port: int | None = None, *args: Any, **kwargs: Any) -> None:
        check_token_url(f"https://{host}{f':{port}' if port else ''}/", _CONNECTION_SOURCE)
        super().__init__(host, port, *args, **kwargs)


def _check_connections(requester: Requester, api_url: str) -> None:
    """Make `requester` open its connections through `_Checked*Connection`.

    PyGithub takes its connection classes from (name-mangled) attributes it reads on each new
    connection; they are set on this requester only (`Requester.injectConnectionClasses`
    would change every requester and turn off connection reuse).

    Raises:
        RuntimeError: this PyGithub keeps them elsewhere (an upgrade must update this).
    """
    chosen = _CheckedHTTPSConnection if api_url.startswith("https:") else _CheckedHTTPConnection
    for attribute, cls in (
        ("_Requester__httpConnectionClass", _CheckedHTTPConnection),
        ("_Requester__httpsConnectionClass", _CheckedHTTPSConnection),
        ("_Requester__connectionClass", chosen),
    ):
        if not hasattr(requester, attribute):
            raise RuntimeError(f"PyGithub's Requester has no {attribute}; update this function")
        setattr(requester, attribute, cls)


class GitHubRepo:
    """One library repository on GitHub (or GitHub Enterprise at `api_url`).

    Args:
        api_url: REST API root, e.g. https://api.github.com or https://ghe.example/api/v3.
        repo: OWNER/NAME.
        credentials: a token allowed to push and open pull requests (contents + pull-requests:
            write), or a GitHub App installed on the repo with those permissions (its
            installation is looked up now, its tokens minted when first needed and again near
            their end: `generator.sync.app`).
        sleep: how to wait between retries (seconds); tests pass a recorder.
        attempts: tries per call in all (>= 1).
        max_wait: longest single wait (s) we accept for a rate limit before giving up.
        throttle: keep PyGithub's spacing between requests (GitHub asks clients to space
            writes); tests against the local fake turn it off.
        clock: the current time (UTC), for the App tokens' expiry; tests share one with the
            fake GitHub.
        say: progress lines (no secret), e.g. each App token minted.
    Attributes:
        tokens: the credential as a `generator.vcs.git.TokenSource`, for git.
    Raises:
        FatalError: (App only) the installation could not be found: the JWT was refused, the
            App is not installed on the repo, GitHub or the network failed.
    """

    def __init__(
        self,
        api_url: str,
        repo: str,
        credentials: str | AppCredentials,
        *,
        sleep: Callable[[float], None] = time.sleep,
        attempts: int = 5,
        max_wait: float = 120.0,
        throttle: bool = True,
        clock: Callable[[], datetime] = utc_now,
        say: Callable[[str], None] = lambda text: None,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.name = repo
        self._secrets: set[str] = set()
        self._sleep = sleep
        self._attempts = max(1, attempts)
        self._max_wait = max_wait
        spacing: dict[str, Any] = {}
        if not throttle:
            spacing = {"seconds_between_requests": None, "seconds_between_writes": None}
        retry = _Retry(
            sleeper=sleep,
            total=self._attempts - 1,
            backoff_factor=1.0,
            max_rate_limit_wait=max_wait,
            status_forcelist=[*range(500, 600), 429],
            allowed_methods=_RETRIED_METHODS,
            raise_on_status=False,  # the last answer reaches PyGithub, which raises it
        )
        self._app = credentials if isinstance(credentials, AppCredentials) else None
        auth: Auth.Auth
        if isinstance(credentials, AppCredentials):
            tokens = self._installation_tokens(credentials, retry, spacing, clock, say)
            self.tokens: TokenSource = tokens
            auth = tokens
        else:
            self._secrets.add(credentials)
            self.tokens = StaticToken(credentials)
            auth = Auth.Token(credentials)
        self._github = Github(base_url=self.api_url, auth=auth, retry=retry, timeout=30, **spacing)
        _check_connections(self._github.requester, self.api_url)
        self._repo: Repository | None = None
        #: pull requests met in listings, by number (closing one needs no second GET)
        self._pulls: dict[int, PullRequest] = {}

    def _installation_tokens(
        self,
        credentials: AppCredentials,
        retry: _Retry,
        spacing: dict[str, Any],
        clock: Callable[[], datetime],
        say: Callable[[str], None],
    ) -> InstallationTokens:
        """Find the App's installation on the repo (GET /repos/{owner}/{repo}/installation,
        with the App's JWT) and return its token source; no token is minted yet."""
        jwt_auth = app_auth(credentials, self._secrets)
        integration = GithubIntegration(
            base_url=self.api_url, auth=jwt_auth, retry=retry, timeout=30, **spacing
        )
        _check_connections(integration.requester, self.api_url)
        owner, _, name = self.name.partition("/")
        installation = self._call(
            f"find the GitHub App {credentials.app_id}'s installation on {self.name}",
            lambda: integration.get_repo_installation(owner, name),
            hints=self._app_hints(),
        )
        installation_id = self._call(
            f"find the GitHub App {credentials.app_id}'s installation on {self.name}",
            lambda: int(installation.id),
        )

        def mint(number: int) -> Any:
            return self._call(
                f"mint a token for the GitHub App {credentials.app_id}'s installation {number}",
                lambda: integration.get_access_token(number),
                landed=lambda: None,  # minting twice only makes a spare token
                hints=self._app_hints(),
            )

        return InstallationTokens(
            jwt_auth,
            installation_id,
            mint,
            self._secrets,
            clock=clock,
            margin=REFRESH_MARGIN,
            say=say,
        )

    def _app_hints(self) -> dict[int, str]:
        """What to do when a call made with the App's JWT fails, by status."""
        app_id = self._app.app_id if self._app else "?"
        return {
            401: (
                f"GitHub refused the App's JWT: --app-id {app_id} and SYNC_APP_PRIVATE_KEY must "
                "belong to the same GitHub App (a key the App still lists under Private keys), "
                "and this machine's clock must be right (the JWT is valid for minutes)"
            ),
            403: (
                f"the GitHub App {app_id} may not do this on {self.name}: check the App's "
                "permissions (contents: write, pull requests: write) and that the installation "
                "is not suspended"
            ),
            404: (
                f"the GitHub App {app_id} is not installed on {self.name}: install it on the "
                "repository (the App's page → Install App, or the organisation's Settings → "
                "GitHub Apps → Configure → Repository access)"
            ),
            422: (
                f"GitHub would not mint a token for the GitHub App {app_id} on {self.name}; "
                "see its message"
            ),
        }

    # -- errors and retries -------------------------------------------------------------

    def _redact(self, text: str) -> str:
        for secret in sorted(self._secrets, key=len, reverse=True):
            text = redact(text, secret)
        return text

    def secrets(self) -> Collection[str]:
        """Every secret used so far: the token, or the App's key, JWTs and minted tokens."""
        return tuple(self._secrets)

    def _explain(
        self, error: GithubException, what: str, hints: dict[int, str] | None = None
    ) -> FatalError:
        data = error.data if isinstance(error.data, dict) else {}
        message = str(data.get("message") or error.message or "").strip()
        details = [
            str(e.get("message") or e.get("code") or e)
            for e in data.get("errors") or []
            if isinstance(e, dict)
        ]
        said = message + (f" ({'; '.join(details)})" if details else "")
        said = self._redact(said) or "no message"
        status = error.status
        stranger = _not_github(error) if status == 403 else None
        if stranger is not None:
            host = urlsplit(self.api_url).netloc or self.api_url
            return FatalError(
                f"could not {what}: the server at {host} answered {status} with {stranger}, "
                "not GitHub's API (GitHub answers JSON with a message): a proxy or firewall "
                "on the way? Check the network's proxy settings (https_proxy, no_proxy) and "
                "--api-url"
            )
        if status == 403 and ACTIONS_MAY_NOT_CREATE_PULLS.lower() in message.lower():
            hint = ACTIONS_SETTING_HINT
        elif status == 403 and _is_rate_limit(error):
            hint = "GitHub's rate limit did not clear in time: wait and run sync again"
        elif hints and status in hints:
            hint = hints[status]
        elif status == 401 and self._app is not None:
            hint = (
                f"GitHub refused {self.tokens.name} (expired or revoked): run sync again; if it "
                "persists, check that the App is still installed on the repository"
            )
        elif status == 401:
            hint = "GitHub refused the token: set GITHUB_TOKEN to a valid, unexpired token"
        elif status == 403 and self._app is not None:
            # what each call needs of an App: docs.github.com/en/rest/authentication/
            # permissions-required-for-github-apps (POST .../pulls: Pull requests write;
            # a push: Contents write); new permissions wait for the installation's owner to
            # accept them (docs.github.com/en/apps/maintaining-github-apps/
            # modifying-a-github-app-registration)
            hint = (
                f"the GitHub App {self._app.app_id} may not do this on {self.name}: give the "
                "App the repository permissions Contents and Pull requests, both Read and "
                "write (the App's settings → Permissions & events; an organisation must then "
                "approve the new permissions), and check that its installation includes "
                f"{self.name} (Settings → GitHub Apps → Configure → Repository access)"
            )
        elif status == 403:
            hint = (
                f"the token has no permission for this on {self.name}: it needs contents: write "
                "and pull-requests: write (a fine-grained token must include this repository)"
            )
        elif status == 404:
            hint = (
                f"{self.name} does not exist at {self.api_url}, or the token cannot see it: "
                "check --repo, --api-url and the token's repository access"
            )
        elif status == 422:
            hint = "GitHub rejected the request as invalid; see its message"
        elif status == 429:
            hint = "GitHub's rate limit did not clear in time: wait and run sync again"
        elif status >= 500:
            hint = f"GitHub kept failing ({self._attempts} tries); try again later"
        else:
            hint = "see GitHub's message"
        return FatalError(f"could not {what}: GitHub answered {status}: {said}\n{hint}")

    def _unexpected(self, what: str, e: Exception) -> str:
        return (
            f"could not {what}: unexpected answer from {self.api_url} "
            f"({type(e).__name__}: {self._redact(str(e))}); check that --api-url is "
            "GitHub's REST API root (GitHub Enterprise: https://HOST/api/v3)"
        )

    def _call(
        self,
        what: str,
        fn: Callable[[], T],
        *,
        landed: Callable[[], T | None] | None = None,
        hints: dict[int, str] | None = None,
    ) -> T:
        """Run `fn` (a PyGithub call, retried by `_Retry`) and explain its failure.

        Args:
            what: what the call does, for messages ("open the pull request").
            landed: for a POST: whether an earlier try took effect (a non-None result, returned
                instead of trying again); then a 5xx or a lost answer is tried again, `attempts`
                in all, each time after a backoff and a look.
            hints: what to do, by status, instead of the usual hints (the App's calls).
        Raises:
            FatalError: the final failure, explained.
        """
        attempt = 1
        while True:
            try:
                return fn()
            except RateLimitExceededExceedsMaxWait as e:
                raise FatalError(
                    f"could not {what}: GitHub's rate limit asks to wait {e.wait or 0:.0f} s, "
                    f"more than the {self._max_wait:.0f} s sync waits; run sync again later"
                ) from None
            except GithubException as e:
                if landed is None or e.status < 500 or attempt >= self._attempts:
                    raise self._explain(e, what, hints) from None
            except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as e:
                retried = bool(e.args) and isinstance(e.args[0], MaxRetryError)
                if landed is None or retried or attempt >= self._attempts:
                    raise FatalError(
                        f"could not {what}: cannot reach {self.api_url} "
                        f"({type(e).__name__}); check the network and --api-url"
                    ) from None
            except FatalError:
                raise
            except requests.exceptions.RequestException as e:
                raise FatalError(
                    f"could not {what}: the request to {self.api_url} failed "
                    f"({type(e).__name__}: {self._redact(str(e))}); check --api-url"
                ) from None
            except RuntimeError as e:
                if "redirected" not in str(e):
                    raise FatalError(self._unexpected(what, e)) from None
                raise FatalError(
                    f"could not {what}: {self.api_url} answered with a redirect to another host "
                    f"or scheme ({self._redact(str(e)).split(',')[0]}), which sync does not "
                    "follow (the token would go along): give the API root it means as --api-url"
                ) from None
            except Exception as e:
                # PyGithub meeting an answer that is not GitHub's (HTML, a redirect loop ...)
                raise FatalError(self._unexpected(what, e)) from None
            self._sleep(2.0 ** (attempt - 1))
            attempt += 1
            done = landed()
            if done is not None:
                return done

    # -- the operations sync uses --------------------------------------------------------

    def repository(self) -> Repository:
        """The repository object (fetched once: GET /repos/{owner}/{repo})."""
        if self._repo is None:
            self._repo = self._call(f"read {self.name}", lambda: self._github.get_repo(self.name))
        return self._repo

    def preflight(self) -> RepoInfo:
        """Check that the token reaches the repo and may push, before anything is changed.

        Raises:
            FatalError: 401, 403, 404, network down; or the token lacks push permission.
        """
        repo = self.repository()
        raw = self._call(f"read {self.name}", lambda: dict(repo.raw_data))
        full_name = raw.get("full_name")
        owner = raw.get("owner")
        login = owner.get("login") if isinstance(owner, dict) else None
        if (
            not isinstance(full_name, str)
            or full_name.lower() != self.name.lower()
            or not isinstance(login, str)
            or not login
        ):
            said = f"full_name {full_name!r}" if isinstance(full_name, str) else "no full_name"
            raise FatalError(
                f"{self.api_url} did not answer GET /repos/{self.name} with that repository "
                f"({said}, owner login {login!r}): the --api-url is probably not a GitHub API "
                "root; give https://api.github.com, or for GitHub Enterprise https://HOST/api/v3"
            )
        perms = self._call(f"read {self.name}", lambda: repo.permissions)
        can_push = bool(perms.push) if perms is not None else None
        if can_push is False:
            raise FatalError(
                f"the token may not push to {repo.full_name}: give it contents: write and "
                "pull-requests: write on this repository"
            )
        return RepoInfo(
            full_name,
            str(raw.get("clone_url") or ""),
            str(raw.get("default_branch") or ""),
            can_push,
        )

    def find_open_pull(self, branch: str, base: str) -> PullRequest | None:
        """The open pull request from `branch` (in this repo) into `base`, or None.

        (GET /repos/{owner}/{repo}/pulls?state=open&head=OWNER:branch&base=base)
        """
        repo = self.repository()
        owner = repo.owner.login
        pulls = self._call(
            "list the open pull requests",
            lambda: every_page(repo.get_pulls(state="open", head=f"{owner}:{branch}", base=base)),
        )
        for pull in pulls:
            if pull.head.ref == branch:
                return pull
        return None

    def open_or_update(
        self,
        branch: str,
        base: str,
        title: str,
        body: str,
        label: str = SYNC_LABEL,
        on_open: Callable[[PullRequestResult | None], None] | None = None,
    ) -> PullRequestResult:
        """Update the open pull request for `branch`, or open one; then make sure it has `label`.

        Never opens a second pull request for the same branch. A failed label does not fail
        the call (the pull request is fine without it): the result's `label_warning` says why.
        `on_open` is called with None right before the pull request is created (from then on
        it may exist), and with the result as soon as it is opened or updated (before the
        label), so a caller interrupted later knows how far it got.

        Raises:
            FatalError: 401/403/422/429/5xx/network failures, explained.
        """
        repo = self.repository()
        existing = self.find_open_pull(branch, base)
        if existing is not None:
            pull = existing
            self._call(
                f"update pull request #{pull.number}", lambda: pull.edit(title=title, body=body)
            )
            created = False
        else:
            if on_open is not None:
                on_open(None)
            pull = self._call(
                "open the pull request",
                lambda: repo.create_pull(base=base, head=branch, title=title, body=body),
                landed=lambda: self.find_open_pull(branch, base),
            )
            created = True
        if on_open is not None:
            on_open(PullRequestResult(pull.number, pull.html_url, created))
        warning = None
        if label not in {lb.name for lb in pull.labels}:
            try:
                self._call(
                    f"label pull request #{pull.number}",
                    lambda: self._add_label(pull, label),
                    landed=lambda: None,  # adding a label it already has changes nothing
                )
            except FatalError as e:
                warning = str(e)
        return PullRequestResult(pull.number, pull.html_url, created, warning)

    def closed_pull(self, branch: str, base: str) -> ClosedPull | None:
        """The pull request from `branch` into `base` that a maintainer closed without merging,
        when that is the last word on the branch: None when a pull request from it is open,
        the newest one was merged, or there never was one.

        (GET /repos/{owner}/{repo}/pulls?state=all&head=OWNER:branch&base=base; who closed it
        comes from GET /repos/{owner}/{repo}/issues/{n}, `closed_by`, and is left out when that
        call fails.)

        Raises:
            FatalError: the listing failed (401/403/404/429/5xx/network), explained.
        """
        repo = self.repository()
        owner = repo.owner.login
        pulls = self._call(
            "list the pull requests of the sync branch",
            lambda: every_page(repo.get_pulls(state="all", head=f"{owner}:{branch}", base=base)),
        )
        mine = [p for p in pulls if p.head.ref == branch]
        if not mine or any(p.state == "open" for p in mine):
            return None
        newest = max(mine, key=lambda p: p.number)
        if newest.merged_at is not None:
            return None
        closed_by: str | None = None
        try:
            issue = self._call(
                f"read who closed pull request #{newest.number}",
                lambda: self._github.requester.requestJsonAndCheck("GET", newest.issue_url)[1],
            )
            user = issue.get("closed_by") if isinstance(issue, dict) else None
            if isinstance(user, dict) and isinstance(user.get("login"), str):
                closed_by = user["login"]
        except FatalError:
            pass  # who closed it is a courtesy; the number and date say enough
        return ClosedPull(newest.number, newest.html_url, newest.closed_at, closed_by)

    def open_sync_pulls(self, base: str, prefix: str) -> list[SyncPull]:
        """Open pull requests into `base` whose head branch starts with `prefix` and lives in
        this repo (not a fork), oldest first.

        (GET /repos/{owner}/{repo}/pulls?state=open&base=base, every page)

        Raises:
            FatalError: the listing failed, explained.
        """
        repo = self.repository()
        full_name = repo.full_name.lower()
        pulls = self._call(
            "list the open pull requests",
            lambda: every_page(repo.get_pulls(state="open", base=base)),
        )
        found: list[SyncPull] = []
        for pull in pulls:
            head_repo = pull.head.repo
            if (
                pull.head.ref.startswith(prefix)
                and head_repo is not None
                and head_repo.full_name.lower() == full_name
            ):
                self._pulls[pull.number] = pull
                found.append(SyncPull(pull.number, pull.html_url, pull.head.ref, pull.head.sha))
        return sorted(found, key=lambda p: p.number)

    def _pull(self, number: int) -> PullRequest:
        """Pull request `number`: as met in a listing, else GET /repos/{owner}/{repo}/pulls/{n}."""
        pull = self._pulls.get(number)
        if pull is None:
            repo = self.repository()
            pull = self._call(f"read pull request #{number}", lambda: repo.get_pull(number))
            self._pulls[number] = pull
        return pull

    def close_pull(self, number: int) -> None:
        """Close pull request `number` without merging it (PATCH /repos/{owner}/{repo}/pulls/{n}
        with state=closed).

        Raises:
            FatalError: the call failed, explained.
        """
        pull = self._pull(number)
        self._call(f"close pull request #{number}", lambda: pull.edit(state="closed"))

    def comment(self, number: int, text: str) -> None:
        """Comment `text` on pull request `number` (POST /repos/{owner}/{repo}/issues/{n}/comments;
        after a 5xx it is retried only when GET .../comments shows it is not there yet).

        Raises:
            FatalError: the call failed, explained.
        """
        pull = self._pull(number)

        def posted() -> bool | None:
            return True if any(c.body == text for c in pull.get_issue_comments()) else None

        self._call(
            f"comment on pull request #{number}",
            lambda: bool(pull.create_issue_comment(text)),
            landed=posted,
        )

    def _add_label(self, pull: PullRequest, label: str) -> None:
        """POST /repos/{owner}/{repo}/issues/{n}/labels with `{"labels": [label]}`.

        Not `PullRequest.add_to_labels`: that sends a bare JSON array, which GitHub's published
        OpenAPI description (@octokit/openapi 23.0.2, operation issues/add-labels) does not
        allow; the object form is the one GitHub documents and recommends.
        """
        self._github.requester.requestJsonAndCheck(
            "POST", f"{pull.issue_url}/labels", input={"labels": [label]}
        )


#: The most pages one listing may take: 100, 3,000 pull requests at PyGithub's 30 a page
#: (`Requester.per_page`), far more than the sync's listings meet (the open pull requests of
#: one repository, those of one branch). A listing that goes on is a server that never stops
#: answering `Link: <...>; rel="next"` (GitHub REST docs, "Using pagination in the REST API":
#: the last page has no next link), which would otherwise loop forever.
MAX_PAGES = 100


def every_page(listing: PaginatedList[G], max_pages: int = MAX_PAGES) -> list[G]:
    """Every item of the REST listing `listing`, following its `rel="next"` links, bounded.

    PyGithub follows the next links without a bound (PaginatedList keeps the next URL in a
    private attribute, read here before each further page is fetched).

    Raises:
        FatalError: a next link repeats a URL already fetched (a page that points at itself,
            or a cycle), or the listing runs past `max_pages` pages; the message names the URL.
    """
    fetch = listing._fetchNextPage
    seen: set[str] = set()

    def bounded() -> list[G]:
        next_url = getattr(listing, "_PaginatedList__nextUrl", None)
        # a PyGithub without that attribute: pages are still counted, repeats not seen
        url = str(next_url) if next_url is not None else f"page {len(seen) + 1}"
        if url in seen:
            raise FatalError(
                f"GitHub's listing repeats a page: its next link points back at {url}, "
                "fetched already (a server that loops its pagination); check --api-url"
            )
        seen.add(url)
        if len(seen) > max_pages:
            raise FatalError(
                f"GitHub's listing runs past {max_pages} pages (next: {url}); it should end "
                "well before: check --api-url"
            )
        return fetch()

    setattr(listing, "_fetchNextPage", bounded)  # noqa: B010 (shadow the method on the instance)
    return list(listing)


_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.I | re.S)


def _not_github(error: GithubException) -> str | None:
    """What answered, when `error`'s answer is not GitHub's API: None when it is.

    GitHub's REST API answers every error with JSON (`Content-Type: application/json`)
    holding a `message` (GitHub REST docs, "Troubleshooting the REST API" / "Client
    errors"); a proxy's or firewall's refusal is an HTML page or plain text. Returns e.g.
    'an HTML page ("Access denied")'.
    """
    headers = {str(k).lower(): str(v) for k, v in (error.headers or {}).items()}
    kind = headers.get("content-type", "").split(";")[0].strip().lower()
    data = error.data
    if "json" in kind and isinstance(data, dict) and "message" in data:
        return None
    if isinstance(data, dict) and "message" in data and not kind:
        return None  # no type said: a JSON body with GitHub's message is taken as GitHub's
    if isinstance(data, bytes):
        body = data
    elif isinstance(data, dict):  # _Retry's last try wraps a body that is not JSON
        body = str(data.get("message", "")).encode()
    else:
        body = str(data or "").encode()
    if kind == "text/html" or body.lstrip()[:1] == b"<":
        title = _TITLE.search(body)
        shown = " ".join(title.group(1).decode("utf-8", "replace").split())[:80] if title else ""
        return "an HTML page" + (f' ("{shown}")' if shown else "")
    if not body.strip():
        return "an empty answer" + (f" ({kind})" if kind else "")
    return f"a {kind} answer" if kind else "an answer that is not JSON"


def redact(text: str, token: str | None) -> str:
    """`text` with `token` replaced by `***`, also as it appears stripped or escaped (a repr
    in an exception message shows a newline as backslash-n)."""
    if not token:
        return text
    for form in sorted({token, token.strip(), repr(token)[1:-1]}, key=len, reverse=True):
        if form:
            text = text.replace(form, "***")
    return text


def _is_rate_limit(error: GithubException) -> bool:
    headers = {k.lower(): v for k, v in (error.headers or {}).items()}
    data = error.data if isinstance(error.data, dict) else {}
    message = str(data.get("message") or "").lower()
    return (
        "retry-after" in headers
        or headers.get("x-ratelimit-remaining") == "0"
        or "rate limit" in message
    )
