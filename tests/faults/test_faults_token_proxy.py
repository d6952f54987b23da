"""Trust under faults (issue 15, §1): plain http to loopback must not go through a proxy.

The token rule lets plain http go to this machine only. With `http_proxy` (or `ALL_PROXY`, or
git's `http.proxy`) set, as CI runners behind a company proxy have, git (curl) and PyGithub
(requests) sent such a request to the proxy instead, Basic auth and `Authorization: token …`
included, in clear text to another machine. The proxy here is a loopback server standing for
that machine: it records what reaches it, and must see nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from github_fake.git_http import GitHttpRemote
from github_fake.local_server import LocalServer
from sync_fixtures import TOKEN, Runner, branches
from werkzeug.wrappers import Request, Response

from generator.sync.github import GitHubRepo
from generator.util.errors import FatalError
from generator.util.urls import no_proxy_with_loopback


class RecordingProxy(LocalServer):
    """Answers every request with 502 and records its target and its credentials."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, str]] = []

    def _wsgi(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        credentials = request.headers.get("Authorization", "") + request.headers.get(
            "Proxy-Authorization", ""
        )
        self.seen.append((request.url, credentials))
        return Response("proxy says no\n", status=502)(environ, start_response)


@pytest.fixture
def proxy() -> Any:
    with RecordingProxy() as server:
        yield server


@pytest.mark.parametrize("how", ["http_proxy", "HTTP_PROXY", "ALL_PROXY", "git http.proxy"])
def test_sync_to_loopback_bypasses_a_configured_proxy(
    how: str,
    sync: Runner,
    remote: Path,
    proxy: RecordingProxy,
    gitenv: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    if how == "git http.proxy":
        config = Path(gitenv["GIT_CONFIG_GLOBAL"])
        config.write_text(config.read_text() + f"[http]\n\tproxy = {proxy.url}\n")
    else:
        monkeypatch.setenv(how, proxy.url)
    # Before: git pushed through the proxy (which saw "Basic eC1hY2Nlc3Mt…", the token) and
    # PyGithub's API calls to the fake GitHub went there too.
    with GitHttpRemote(remote.parent, TOKEN) as served:
        result = sync("v1.5.1", "0.2.0", remote=f"{served.url}/library.git")
    assert proxy.seen == []
    assert result.status == "opened" and branches(remote)[result.branch]
    assert set(served.offered) == {("x-access-token", TOKEN)}  # git went straight there


@pytest.mark.parametrize(
    ("current", "expected"),
    [
        (None, "localhost,127.0.0.1,127.0.0.0/8"),
        ("", "localhost,127.0.0.1,127.0.0.0/8"),
        (".corp.example, 10.0.0.0/8", ".corp.example,10.0.0.0/8,localhost,127.0.0.1,127.0.0.0/8"),
        ("localhost,127.0.0.1", "localhost,127.0.0.1,127.0.0.0/8"),
        ("*", "*"),  # every host already: curl reads '*' so only as the whole value
    ],
)
def test_no_proxy_keeps_the_machines_hosts_and_adds_loopback(
    current: str | None, expected: str
) -> None:
    assert no_proxy_with_loopback(current) == expected


class RefusingProxy(LocalServer):
    """A proxy's or firewall's refusal: 403 with `body` of type `kind` to every request."""

    def __init__(self, body: str, kind: str) -> None:
        super().__init__()
        self.body, self.kind = body, kind

    def _wsgi(self, environ: dict[str, Any], start_response: Any) -> Any:
        return Response(self.body, status=403, content_type=self.kind)(environ, start_response)


@pytest.mark.parametrize(
    ("body", "kind", "said"),
    [
        (
            "<html><head><title>Access Denied</title></head><body>Blocked</body></html>",
            "text/html",
            'an HTML page ("Access Denied")',
        ),
        ("Forbidden by policy\n", "text/plain", "a text/plain answer"),
        ("", "text/plain", "an empty answer (text/plain)"),
    ],
)
def test_a_403_that_is_not_githubs_is_blamed_on_what_answered_not_the_token(
    body: str, kind: str, said: str, capfd: pytest.CaptureFixture[str]
) -> None:
    with RefusingProxy(body, kind) as server:
        gh = GitHubRepo(server.url, "acme/lib", TOKEN, throttle=False, sleep=lambda s: None)
        with pytest.raises(FatalError) as info:
            gh.preflight()
    message = str(info.value)
    host = server.url.removeprefix("http://")
    assert message == (
        f"could not read acme/lib: the server at {host} answered 403 with {said}, not "
        "GitHub's API (GitHub answers JSON with a message): a proxy or firewall on the way? "
        "Check the network's proxy settings (https_proxy, no_proxy) and --api-url"
    )
    assert "permission" not in message
    out, err = capfd.readouterr()
    assert "failed with 403" not in out + err  # GithubRetry's log line, printed before
