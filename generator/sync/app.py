"""A GitHub App as sync's credential: the App's installation tokens, minted by sync itself
when it needs one and again when the one it holds is near its end.

Why sync mints them: an installation token expires one hour after it is made (GitHub docs,
"Generating an installation access token for a GitHub App"; a request with an expired one is
answered 401), while a cold sync builds and checks for up to three hours and pushes at the
end. A token minted at job start (actions/create-github-app-token) is dead by then.

How (PyGithub 2.10.0's own App auth, no JWT code here): `github.Auth.AppAuth` signs the App's
JWT (RS256; `iss` = the App ID or client ID, both accepted by GitHub, "Generating a JSON Web
Token (JWT) for a GitHub App"); `GithubIntegration.get_repo_installation` finds the App's
installation on the library repo (GET /repos/{owner}/{repo}/installation) and
`GithubIntegration.get_access_token` mints a token (POST
/app/installations/{installation_id}/access_tokens). `InstallationTokens` is PyGithub's
`AppInstallationAuth`, which PyGithub asks for the token on every API request and which mints a
new one when the held one is expired (`github/Auth.py`: `_is_expired` is true within
`TOKEN_REFRESH_THRESHOLD_TIMEDELTA`, 20 s, of `expires_at`). Two changes: the margin is
`REFRESH_MARGIN` (a git push must stay valid for the whole command, not only its first
request), and minting goes through `GitHubRepo`'s checked, retried connection, so its failures
are explained like any other call. Git commands ask the same object (`generator.vcs.git.
TokenSource`), so API calls and git use one token at a time, valid when used.

The private key comes only from the environment (`SYNC_APP_PRIVATE_KEY`), never from argv.
`generator.cli.sync.run` takes it out of `os.environ` before anything else, so no child
process sync starts inherits it; sync's own process keeps it in memory, and the environment
it was started with stays readable in `/proc/<pid>/environ` (to its user and root) while it
runs. Every token minted and every JWT signed is kept in `secrets()` so that messages can be
redacted.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from github import Auth
from github.GithubException import BadAttributeException
from github.InstallationAuthorization import InstallationAuthorization

from generator.util.errors import FatalError

#: The environment variable the App's private key is read from (PEM, as GitHub downloads it).
APP_KEY_ENV = "SYNC_APP_PRIVATE_KEY"
#: A token is replaced when less than this is left of it: longer than any one git command or
#: API call of sync takes, and a small part of the hour a token lives (one mint per ~55 min).
REFRESH_MARGIN = timedelta(minutes=5)
#: How messages name the credential.
APP_TOKEN_NAME = "the GitHub App's installation token"


@dataclass(frozen=True)
class AppCredentials:
    """A GitHub App sync acts as.

    Attributes:
        app_id: the App's ID (digits) or client ID (`Iv…`), as given to --app-id.
        private_key: its private key, PEM (from SYNC_APP_PRIVATE_KEY; never shown: no repr).
    """

    app_id: str
    private_key: str = field(repr=False)


def utc_now() -> datetime:
    return datetime.now(UTC)


class InstallationTokens(Auth.AppInstallationAuth):
    """The App's installation tokens for one installation: PyGithub's `AppInstallationAuth`
    (the `Auth` of the API client) and a `generator.vcs.git.TokenSource` (for git).

    Args:
        app_auth: the App's JWT auth (`app_auth` below makes one that records each JWT).
        installation_id: the App's installation on the library repo.
        mint: installation id -> a new token (GitHubRepo: POST .../access_tokens, retried and
            explained; raises FatalError).
        secrets: where every secret is recorded (shared with `app_auth`'s JWT recorder).
        clock: the current time (tests share one with the fake GitHub).
        margin: mint anew when less than this is left of the held token.
        say: told (no secret) each time a token is minted.
    """

    def __init__(
        self,
        app_auth: Auth.AppAuth,
        installation_id: int,
        mint: Callable[[int], InstallationAuthorization],
        secrets: set[str],
        *,
        clock: Callable[[], datetime] = utc_now,
        margin: timedelta = REFRESH_MARGIN,
        say: Callable[[str], None] = lambda text: None,
    ) -> None:
        super().__init__(app_auth, installation_id)
        self._mint = mint
        self._secrets = secrets
        self._clock = clock
        self._margin = margin
        self._say = say
        self._held: InstallationAuthorization | None = None
        self._expires = datetime.min.replace(tzinfo=UTC)  # the held token's end (UTC)
        #: how many tokens were minted so far
        self.minted = 0

    @property
    def name(self) -> str:
        """How messages name this credential."""
        return APP_TOKEN_NAME

    def current(self) -> str:
        """A token valid for at least `margin` more (minted now if need be).

        Raises:
            FatalError: minting failed (explained by `mint`).
        """
        return self.token

    def secrets(self) -> Collection[str]:
        """The private key, every JWT signed and every token minted so far."""
        return tuple(self._secrets)

    def _get_installation_authorization(self) -> InstallationAuthorization:
        held = self._mint(self.installation_id)
        self._secrets.add(held.token)
        expires = _expiry(held, self.installation_id, self._secrets)
        self._held, self._expires = held, expires
        self.minted += 1
        self._say(f"minted a GitHub App installation token (valid until {expires:%H:%M:%S} UTC)")
        return held

    @property
    def _is_expired(self) -> bool:
        return self._held is None or self._expires - self._margin <= self._clock()


def _expiry(held: InstallationAuthorization, installation_id: int, secrets: set[str]) -> datetime:
    """When the minted token `held` expires (UTC), from the answer's `expires_at`.

    GitHub always sends it: the answer's schema requires `token` and `expires_at` (GitHub's
    OpenAPI description, `@octokit/openapi` 23.0.2, `components.schemas.installation-token`;
    an ISO 8601 time such as "2016-07-11T22:14:10Z" in the docs' example). An answer without
    a usable one (missing, null, not a time, or a time without its offset) is not GitHub's
    as documented, so sync stops rather than guess how long the token lives.

    Raises:
        FatalError: `expires_at` is missing or unusable; the message shows what was sent
            (shortened, secrets redacted), never the token.
    """
    answer = held.raw_data if isinstance(held.raw_data, dict) else {}
    try:
        expires = held.expires_at
    except BadAttributeException:
        expires = None
    if isinstance(expires, datetime) and expires.utcoffset() is not None:
        return expires.astimezone(UTC)
    if "expires_at" not in answer:
        shown = "no expires_at"
    elif answer["expires_at"] is None:
        shown = "expires_at null"
    else:
        shown = f"expires_at {str(answer['expires_at'])[:60]!r}"
    for secret in sorted(secrets, key=len, reverse=True):
        shown = shown.replace(secret, "***")
    raise FatalError(
        f"GitHub's answer to minting an installation token (POST /app/installations/"
        f"{installation_id}/access_tokens) has {shown}, not a time with its UTC offset "
        "(e.g. 2026-01-01T12:00:00Z), so how long the token lives is unknown: check that "
        "--api-url is GitHub's REST API root (GitHub Enterprise: https://HOST/api/v3), and "
        "report this if it persists"
    )


def app_auth(credentials: AppCredentials, secrets: set[str]) -> Auth.AppAuth:
    """PyGithub's `AppAuth` for `credentials`, signing with PyGithub's own RS256 signer, each
    JWT recorded in `secrets` (with the private key) so messages can redact them."""
    secrets.add(credentials.private_key)
    sign = Auth.AppAuth.create_jwt_sign(credentials.private_key, "RS256")

    def recorded(payload: dict[str, Any]) -> str | bytes:
        signed = sign(payload)
        secrets.add(signed.decode() if isinstance(signed, bytes) else signed)
        return signed

    return Auth.AppAuth(credentials.app_id, sign_func=recorded)
