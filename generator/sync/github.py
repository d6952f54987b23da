"""The GitHub side of `sync` (PyGithub): `GitHubRepo` checks access, finds the open sync pull
request, opens or updates it, labels it, finds a sync pull request a maintainer closed, closes
the pull requests a new sync supersedes; with bounded retries on rate limits and server errors
(`generator.sync.github_transport`), bounded listings (`generator.sync.github_paging`) and
failures explained (`generator.sync.github_errors`).

Credentials: a fixed token (GITHUB_TOKEN, a SYNC_TOKEN), or a GitHub App (`--app-id`, its key
from SYNC_APP_PRIVATE_KEY): then the App's JWT finds its installation on the repo and the
installation tokens are minted as they are needed (`generator.sync.app`), through the same
checked and retried connection as every other call. `GitHubRepo.tokens` hands the same
credential to git.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import requests
from github import Auth, Github, GithubException, GithubIntegration
from github.GithubException import RateLimitExceededExceedsMaxWait
from github.PullRequest import PullRequest
from github.Repository import Repository
from urllib3.exceptions import MaxRetryError

from generator.sync.app import (
    REFRESH_MARGIN,
    AppCredentials,
    InstallationTokens,
    app_auth,
    utc_now,
)
from generator.sync.github_errors import app_hints, explain
from generator.sync.github_paging import every_page
from generator.sync.github_transport import RETRIED_METHODS, SyncRetry, check_connections
from generator.util.errors import FatalError
from generator.vcs.git import StaticToken, TokenSource

DEFAULT_API_URL = "https://api.github.com"
SYNC_LABEL = "sync"

T = TypeVar("T")


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
        retry = SyncRetry(
            sleeper=sleep,
            total=self._attempts - 1,
            backoff_factor=1.0,
            max_rate_limit_wait=max_wait,
            status_forcelist=[*range(500, 600), 429],
            allowed_methods=RETRIED_METHODS,
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
        check_connections(self._github.requester, self.api_url)
        self._repo: Repository | None = None
        #: pull requests met in listings, by number (closing one needs no second GET)
        self._pulls: dict[int, PullRequest] = {}

    def _installation_tokens(
        self,
        credentials: AppCredentials,
        retry: SyncRetry,
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
        check_connections(integration.requester, self.api_url)
        owner, _, name = self.name.partition("/")
        installation = self._call(
            f"find the GitHub App {credentials.app_id}'s installation on {self.name}",
            lambda: integration.get_repo_installation(owner, name),
            hints=app_hints(credentials.app_id, self.name),
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
                hints=app_hints(credentials.app_id, self.name),
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
        return explain(
            error,
            what,
            api_url=self.api_url,
            repo=self.name,
            attempts=self._attempts,
            app_id=self._app.app_id if self._app is not None else None,
            redact=self._redact,
            hints=hints,
        )

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
        """Run `fn` (a PyGithub call, retried by `SyncRetry`) and explain its failure.

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


def redact(text: str, token: str | None) -> str:
    """`text` with `token` replaced by `***`, also as it appears stripped or escaped (a repr
    in an exception message shows a newline as backslash-n)."""
    if not token:
        return text
    for form in sorted({token, token.strip(), repr(token)[1:-1]}, key=len, reverse=True):
        if form:
            text = text.replace(form, "***")
    return text
