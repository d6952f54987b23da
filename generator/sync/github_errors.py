"""What a failed GitHub call of sync means, and what to do: `explain` turns PyGithub's
`GithubException` into a `FatalError` whose message says what GitHub (or whatever answered in
its place) said and the hint that fits the status and the credential.

GitHub's refusal to let the Actions GITHUB_TOKEN open a pull request (a 403 whose message is
`ACTIONS_MAY_NOT_CREATE_PULLS`) is recognised by that message and explained by the setting it
depends on; no API call can read that setting with a workflow token, so the refusal is the
only signal.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urlsplit

from github import GithubException

from generator.sync.app import APP_TOKEN_NAME
from generator.util.errors import FatalError

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

#: What to do when GitHub's rate limit outlasted the retries.
_RATE_LIMIT_HINT = "GitHub's rate limit did not clear in time: wait and run sync again"


def explain(
    error: GithubException,
    what: str,
    *,
    api_url: str,
    repo: str,
    attempts: int,
    app_id: str | None,
    redact: Callable[[str], str],
    hints: dict[int, str] | None = None,
) -> FatalError:
    """The failure `error` of the call that was to `what` ("open the pull request"), explained.

    Args:
        api_url: the REST API root called; repo: OWNER/NAME; attempts: tries made per call;
        app_id: the GitHub App's ID when sync acts as one (None: a token);
        redact: hides every secret in GitHub's message;
        hints: what to do, by status, instead of the usual hints (the App's calls).
    Returns:
        "could not <what>: GitHub answered <status>: <message>\\n<hint>", or, for a 403 that is
        not GitHub's answer (`not_github`), a message that blames the proxy or firewall.
    """
    data = error.data if isinstance(error.data, dict) else {}
    message = str(data.get("message") or error.message or "").strip()
    details = [
        str(e.get("message") or e.get("code") or e)
        for e in data.get("errors") or []
        if isinstance(e, dict)
    ]
    said = message + (f" ({'; '.join(details)})" if details else "")
    said = redact(said) or "no message"
    status = error.status
    stranger = not_github(error) if status == 403 else None
    if stranger is not None:
        host = urlsplit(api_url).netloc or api_url
        return FatalError(
            f"could not {what}: the server at {host} answered {status} with {stranger}, "
            "not GitHub's API (GitHub answers JSON with a message): a proxy or firewall "
            "on the way? Check the network's proxy settings (https_proxy, no_proxy) and "
            "--api-url"
        )
    if status == 403 and ACTIONS_MAY_NOT_CREATE_PULLS.lower() in message.lower():
        hint = ACTIONS_SETTING_HINT
    elif status == 403 and is_rate_limit(error):
        hint = _RATE_LIMIT_HINT
    elif hints and status in hints:
        hint = hints[status]
    else:
        hint = _hint(status, api_url=api_url, repo=repo, attempts=attempts, app_id=app_id)
    return FatalError(f"could not {what}: GitHub answered {status}: {said}\n{hint}")


def _hint(status: int, *, api_url: str, repo: str, attempts: int, app_id: str | None) -> str:
    """The usual hint for an answer of HTTP `status` (arguments as for `explain`)."""
    if status == 401 and app_id is not None:
        return (
            f"GitHub refused {APP_TOKEN_NAME} (expired or revoked): run sync again; if it "
            "persists, check that the App is still installed on the repository"
        )
    if status == 401:
        return "GitHub refused the token: set GITHUB_TOKEN to a valid, unexpired token"
    if status == 403 and app_id is not None:
        # what each call needs of an App: docs.github.com/en/rest/authentication/
        # permissions-required-for-github-apps (POST .../pulls: Pull requests write;
        # a push: Contents write); new permissions wait for the installation's owner to
        # accept them (docs.github.com/en/apps/maintaining-github-apps/
        # modifying-a-github-app-registration)
        return (
            f"the GitHub App {app_id} may not do this on {repo}: give the "
            "App the repository permissions Contents and Pull requests, both Read and "
            "write (the App's settings → Permissions & events; an organisation must then "
            "approve the new permissions), and check that its installation includes "
            f"{repo} (Settings → GitHub Apps → Configure → Repository access)"
        )
    if status == 403:
        return (
            f"the token has no permission for this on {repo}: it needs contents: write "
            "and pull-requests: write (a fine-grained token must include this repository)"
        )
    if status == 404:
        return (
            f"{repo} does not exist at {api_url}, or the token cannot see it: "
            "check --repo, --api-url and the token's repository access"
        )
    if status == 422:
        return "GitHub rejected the request as invalid; see its message"
    if status == 429:
        return _RATE_LIMIT_HINT
    if status >= 500:
        return f"GitHub kept failing ({attempts} tries); try again later"
    return "see GitHub's message"


def app_hints(app_id: str, repo: str) -> dict[int, str]:
    """What to do, by status, when a call made with the App's JWT fails (`explain`'s `hints`):
    finding the App's installation on `repo` (OWNER/NAME) or minting its token."""
    return {
        401: (
            f"GitHub refused the App's JWT: --app-id {app_id} and SYNC_APP_PRIVATE_KEY must "
            "belong to the same GitHub App (a key the App still lists under Private keys), "
            "and this machine's clock must be right (the JWT is valid for minutes)"
        ),
        403: (
            f"the GitHub App {app_id} may not do this on {repo}: check the App's "
            "permissions (contents: write, pull requests: write) and that the installation "
            "is not suspended"
        ),
        404: (
            f"the GitHub App {app_id} is not installed on {repo}: install it on the "
            "repository (the App's page → Install App, or the organisation's Settings → "
            "GitHub Apps → Configure → Repository access)"
        ),
        422: (
            f"GitHub would not mint a token for the GitHub App {app_id} on {repo}; see its message"
        ),
    }


_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.I | re.S)


def not_github(error: GithubException) -> str | None:
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
    elif isinstance(data, dict):  # SyncRetry's last try wraps a body that is not JSON
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


def is_rate_limit(error: GithubException) -> bool:
    """Whether `error` is a rate limit: a `Retry-After`, no requests left, or a message saying
    so (GitHub REST docs, "Rate limits for the REST API")."""
    headers = {k.lower(): v for k, v in (error.headers or {}).items()}
    data = error.data if isinstance(error.data, dict) else {}
    message = str(data.get("message") or "").lower()
    return (
        "retry-after" in headers
        or headers.get("x-ratelimit-remaining") == "0"
        or "rate limit" in message
    )
