"""The fake GitHub itself: it must reject what GitHub's OpenAPI description rejects, or the
sync scenarios prove nothing."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jwt
import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from github_fake import FakeGitHub, GitHubSpec
from github_fake.git_http import GitHttpRemote
from github_fake.local_server import LocalServer
from github_fake.server import FakeApp
from github_fake.spec import OPERATIONS
from werkzeug.wrappers import Request, Response

from generator.sync.github import GitHubRepo
from generator.sync.github_paging import MAX_PAGES, every_page
from generator.util.errors import FatalError

TOKEN = "ghp_FakeServerTest"


@pytest.fixture
def fake(spec: GitHubSpec) -> Iterator[FakeGitHub]:
    with FakeGitHub(spec, "acme", "lib", TOKEN) as server:
        yield server


def headers() -> dict[str, str]:
    return {"Authorization": f"token {TOKEN}", "Accept": "application/vnd.github+json"}


def test_pruned_description_keeps_only_the_bot_operations(spec: GitHubSpec) -> None:
    kept = {(t, m) for t, item in spec.data["paths"].items() for m in item if m != "parameters"}
    assert kept == set(OPERATIONS)
    assert "full-repository" in spec.data["components"]["schemas"]
    assert "x-webhooks" not in spec.data
    assert spec.version == "23.0.2"


def test_a_response_the_description_rejects_is_a_violation(fake: FakeGitHub) -> None:
    def tamper(method: str, template: str, payload: Any) -> Any:
        return {**payload, "default_branch": 7} if template == "/repos/{owner}/{repo}" else payload

    fake.tamper = tamper
    response = requests.get(f"{fake.url}/repos/acme/lib", headers=headers(), timeout=10)
    assert response.status_code == 200
    assert len(fake.violations) == 1
    assert "['default_branch']: 7 is not of type 'string'" in fake.violations[0]
    with pytest.raises(AssertionError, match="GitHub OpenAPI violations"):
        fake.assert_clean()


def test_a_missing_required_field_is_a_violation(fake: FakeGitHub) -> None:
    def tamper(method: str, template: str, payload: Any) -> Any:
        return {k: v for k, v in payload.items() if k != "clone_url"}

    fake.tamper = tamper
    requests.get(f"{fake.url}/repos/acme/lib", headers=headers(), timeout=10)
    assert any("'clone_url' is a required property" in v for v in fake.violations)


def test_a_request_the_description_rejects_is_a_violation(fake: FakeGitHub) -> None:
    response = requests.post(
        f"{fake.url}/repos/acme/lib/issues/1/labels",
        json=["sync"],  # PyGithub's add_to_labels form; the description wants {"labels": [...]}
        headers=headers(),
        timeout=10,
    )
    assert response.status_code == 400
    assert any("request POST /repos/acme/lib/issues/1/labels" in v for v in fake.violations)


def test_an_undocumented_error_status_must_still_be_a_github_error(fake: FakeGitHub) -> None:
    fake.fail("GET", "/repos/acme/lib$", 502, body={"message": 502, "documentation_url": "x"})
    requests.get(f"{fake.url}/repos/acme/lib", headers=headers(), timeout=10)
    assert any("basic-error" in v for v in fake.violations)


def test_an_unexpected_endpoint_is_a_violation(fake: FakeGitHub) -> None:
    response = requests.get(f"{fake.url}/repos/acme/lib/branches", headers=headers(), timeout=10)
    assert response.status_code == 404
    assert fake.violations == ["unexpected request GET /repos/acme/lib/branches"]


def test_wrong_token_is_401_and_duplicate_pr_is_422(fake: FakeGitHub) -> None:
    bad = requests.get(
        f"{fake.url}/repos/acme/lib", headers={"Authorization": "token nope"}, timeout=10
    )
    assert bad.status_code == 401 and bad.json()["message"] == "Bad credentials"
    gh = GitHubRepo(fake.url, "acme/lib", TOKEN, throttle=False, sleep=lambda s: None)
    first = gh.open_or_update("sync/x", "main", "t", "b")
    assert first.created and first.number == 1
    again = requests.post(
        f"{fake.url}/repos/acme/lib/pulls",
        json={"title": "t", "head": "sync/x", "base": "main"},
        headers=headers(),
        timeout=10,
    )
    assert again.status_code == 422
    assert "A pull request already exists" in again.json()["errors"][0]["message"]
    fake.assert_clean()


def test_rate_limit_reset_header_sets_the_wait(fake: FakeGitHub) -> None:
    import time

    waits: list[float] = []
    reset = int(time.time()) + 30
    fake.fail(
        "GET",
        "/repos/acme/lib$",
        403,
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)},
        body={"message": "API rate limit exceeded", "documentation_url": "x"},
    )
    gh = GitHubRepo(fake.url, "acme/lib", TOKEN, throttle=False, sleep=waits.append)
    assert gh.preflight().can_push is True
    assert len(waits) == 1 and 25 <= waits[0] <= 32
    fake.assert_clean()


def test_closed_pull_says_who_closed_it_and_ignores_open_and_merged_ones(
    fake: FakeGitHub,
) -> None:
    gh = GitHubRepo(fake.url, "acme/lib", TOKEN, throttle=False, sleep=lambda s: None)
    assert gh.closed_pull("sync/x", "main") is None  # never had one
    gh.open_or_update("sync/x", "main", "t", "b")
    assert gh.closed_pull("sync/x", "main") is None  # open
    fake.close(1, by="alice")
    closed = gh.closed_pull("sync/x", "main")
    assert closed is not None
    assert (closed.number, closed.closed_by, closed.url) == (
        1,
        "alice",
        "https://github.example/acme/lib/pull/1",
    )
    assert closed.closed_at is not None and closed.closed_at.year == 2026
    assert gh.closed_pull("sync/x", "release") is None  # another base
    fake.pulls[1].merged = True
    assert gh.closed_pull("sync/x", "main") is None  # merged, not declined
    fake.assert_clean()


def test_closed_pull_without_who_when_the_issue_cannot_be_read(fake: FakeGitHub) -> None:
    gh = GitHubRepo(fake.url, "acme/lib", TOKEN, throttle=False, sleep=lambda s: None)
    gh.open_or_update("sync/x", "main", "t", "b")
    fake.close(1, by="alice")
    fake.fail("GET", r"/issues/1$", 403)
    closed = gh.closed_pull("sync/x", "main")
    assert closed is not None and closed.closed_by is None
    fake.assert_clean()


def test_open_sync_pulls_close_and_comment(fake: FakeGitHub) -> None:
    gh = GitHubRepo(fake.url, "acme/lib", TOKEN, throttle=False, sleep=lambda s: None)
    for head in ("sync/a", "feature", "sync/b", "sync/fork"):
        gh.open_or_update(head, "main", "t", "b")
    gh.open_or_update("sync/c", "release", "t", "b")

    def from_a_fork(method: str, template: str, payload: Any) -> Any:
        if template == "/repos/{owner}/{repo}/pulls" and isinstance(payload, list):
            for pull in payload:
                if pull["head"]["ref"] == "sync/fork":
                    pull["head"]["repo"] = {**pull["head"]["repo"], "full_name": "eve/lib"}
        return payload

    fake.tamper = from_a_fork
    found = gh.open_sync_pulls("main", "sync/")
    assert [(p.number, p.branch) for p in found] == [(1, "sync/a"), (3, "sync/b")]
    gh.close_pull(1)
    gh.comment(1, "Superseded by #3")
    assert (fake.pulls[1].state, fake.pulls[1].closed_by) == ("closed", fake.login)
    assert fake.pulls[1].comments == ["Superseded by #3"]
    fake.assert_clean()


# -- a GitHub App: JWTs, installation tokens and their expiry -----------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture(scope="module")
def app_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _public(key: rsa.RSAPrivateKey) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def _jwt(key: rsa.RSAPrivateKey, iss: str = "321", ahead: int = 300) -> str:
    now = int(time.time())
    return jwt.encode({"iat": now - 60, "exp": now + ahead, "iss": iss}, key, algorithm="RS256")


def test_app_jwt_and_installation_tokens_expire_on_the_fakes_clock(
    spec: GitHubSpec, app_key: rsa.RSAPrivateKey, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    clock = _Clock()
    app = FakeApp(321, _public(app_key), token_lifetime=timedelta(hours=1))
    bare = tmp_path / "lib.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    with (
        FakeGitHub(spec, "acme", "lib", TOKEN, app=app, clock=clock) as fake,
        GitHttpRemote(tmp_path, TOKEN, accept=fake.token_valid) as http,
    ):
        bearer = {"Authorization": f"Bearer {_jwt(app_key)}"}
        found = requests.get(f"{fake.url}/repos/acme/lib/installation", headers=bearer, timeout=10)
        assert found.status_code == 200 and found.json()["id"] == app.installation_id
        minted = requests.post(
            f"{fake.url}/app/installations/{app.installation_id}/access_tokens",
            json={"permissions": {}},
            headers=bearer,
            timeout=10,
        )
        assert minted.status_code == 201
        token = minted.json()["token"]
        expires = datetime.fromisoformat(minted.json()["expires_at"].replace("Z", "+00:00"))
        assert expires == (clock.now + timedelta(hours=1)).replace(microsecond=0)
        auth = {"Authorization": f"token {token}"}
        assert requests.get(f"{fake.url}/repos/acme/lib", headers=auth, timeout=10).ok

        def ls_remote() -> int:
            url = f"{http.url.replace('//', f'//x-access-token:{token}@')}/lib.git"
            return subprocess.run(
                ["git", "ls-remote", url], capture_output=True, check=False
            ).returncode

        assert ls_remote() == 0
        clock.now += timedelta(minutes=61)
        expired = requests.get(f"{fake.url}/repos/acme/lib", headers=auth, timeout=10)
        assert expired.status_code == 401 and expired.json()["message"] == "Bad credentials"
        assert ls_remote() != 0  # the git side refuses it too
        fake.assert_clean()


@pytest.mark.parametrize(
    "make",
    [
        lambda key: _jwt(rsa.generate_private_key(public_exponent=65537, key_size=2048)),
        lambda key: _jwt(key, iss="999"),
        lambda key: _jwt(key, ahead=3600),  # GitHub: exp no more than 10 minutes ahead
        lambda key: _jwt(key, ahead=-10),  # expired
        lambda key: TOKEN,  # a token, not a JWT
    ],
    ids=["another key", "another iss", "exp too far", "expired", "a token"],
)
def test_app_operations_refuse_a_jwt_github_would_refuse(
    spec: GitHubSpec, app_key: rsa.RSAPrivateKey, make: Any
) -> None:
    with FakeGitHub(spec, "acme", "lib", TOKEN, app=FakeApp(321, _public(app_key))) as fake:
        refused = requests.get(
            f"{fake.url}/repos/acme/lib/installation",
            headers={"Authorization": f"Bearer {make(app_key)}"},
            timeout=10,
        )
        assert refused.status_code == 401
        assert fake.minted == {}
        fake.assert_clean()


# -- a listing that never ends (issue 29): bounded pagination ------------------------------------


class _LoopingPages(LocalServer):
    """Answers the repository, then every page of its pull requests with one pull and a
    `rel="next"` link: to the same page (`loop`), or to page n + 1 forever."""

    def __init__(self, loop: bool) -> None:
        super().__init__()
        self.loop = loop
        self.pages = 0

    def _wsgi(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        if request.path == "/repos/acme/lib":
            body: Any = {"full_name": "acme/lib", "name": "lib", "owner": {"login": "acme"}}
            return Response(json.dumps(body), content_type="application/json")(
                environ, start_response
            )
        self.pages += 1
        page = int(request.args.get("page", "1"))
        following = page if self.loop else page + 1
        pull = {"number": page, "state": "open", "head": {"ref": "other", "sha": "0" * 40}}
        response = Response(json.dumps([pull]), content_type="application/json")
        response.headers["Link"] = (
            f'<{self.url}/repos/acme/lib/pulls?state=open&page={following}>; rel="next"'
        )
        return response(environ, start_response)


@pytest.mark.parametrize("loop", [True, False])
def test_a_listing_that_never_ends_is_refused_naming_the_url(loop: bool) -> None:
    with _LoopingPages(loop) as server:
        gh = GitHubRepo(server.url, "acme/lib", TOKEN, throttle=False, sleep=lambda s: None)
        with pytest.raises(FatalError) as info:
            gh.find_open_pull("sync/x", "main")
    message = str(info.value)
    if loop:
        assert "repeats a page" in message
        assert f"{server.url}/repos/acme/lib/pulls?state=open&page=1" in message
        assert server.pages == 2
    else:
        assert f"runs past {MAX_PAGES} pages" in message
        assert f"page={MAX_PAGES + 1}" in message
        assert server.pages == MAX_PAGES


class _EndlessListing:
    """A listing without PaginatedList's private next URL: every page has another."""

    def __init__(self) -> None:
        self.fetched = 0

    def _fetchNextPage(self) -> list[int]:
        self.fetched += 1
        return [self.fetched]

    def __iter__(self) -> Iterator[int]:
        while True:
            yield from self._fetchNextPage()


def test_pages_are_counted_even_when_the_next_url_cannot_be_read() -> None:
    listing = _EndlessListing()
    with pytest.raises(FatalError, match=r"runs past 3 pages \(next: page 4\)"):
        every_page(listing, max_pages=3)  # type: ignore[arg-type]
    assert listing.fetched == 3
