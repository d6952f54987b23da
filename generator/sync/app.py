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
are explained like any other call. Git commands ask the same object (`generator.git.
TokenSource`), so API calls and git use one token at a time, valid when used.

The private key comes only from the environment (`SYNC_APP_PRIVATE_KEY`), never from argv;
every token minted and every JWT signed is kept in `secrets()` so that messages can be
redacted.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from github import Auth
from github.InstallationAuthorization import InstallationAuthorization

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
    (the `Auth` of the API client) and a `generator.git.TokenSource` (for git).

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
        self._held = held
        self.minted += 1
        self._say(
            f"minted a GitHub App installation token (valid until {held.expires_at:%H:%M:%S} UTC)"
        )
        return held

    @property
    def _is_expired(self) -> bool:
        held = self._held
        return held is None or held.expires_at - self._margin <= self._clock()


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
