"""Faults of trust, the token (issue 15, §1): the GitHub token never crosses plain http to
another machine, wherever the URL comes from: an option (`--remote`), an API answer (the
repo's `clone_url`), git's own URL rewriting (`url.<base>.insteadOf` / `pushInsteadOf`), or a
redirect; each is refused with no token sent.

"Another machine" without a network: git's `http.curloptResolve` (in the test's global git
config) points the name `evil.example` at a server on 127.0.0.1 that records every request
and every credential offered to it, so a token that went out would be seen there. The URL
says `evil.example`, which is not loopback, so the rule must refuse it; a plain server on
127.0.0.1 named as such counts as this machine and is allowed.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from github_fake import FakeGitHub
from github_fake.git_http import GitHttpRemote
from github_fake.local_server import LocalServer
from sync_fixtures import NAME, OWNER, TOKEN, Runner, branches, git
from werkzeug.wrappers import Request, Response

from generator.cli.main import main
from generator.release.run import run_release
from generator.release.step import ReleaseOptions
from generator.sync.github import GitHubRepo
from generator.util.errors import FatalError
from generator.util.urls import askpass_reply, check_token_url, token_url_problem

EVIL = "evil.example"
REPO = f"{OWNER}/{NAME}"


class RecordingRemote(GitHttpRemote):
    """`GitHttpRemote` that also records the Host header of every request and whether it
    carried credentials."""

    def __init__(self, root: Path, token: str) -> None:
        super().__init__(root, token)
        self.hits: list[tuple[str, bool]] = []

    def _handle(self, request: Request) -> Response:
        self.hits.append((request.host, "Authorization" in request.headers))
        return super()._handle(request)

    def hosts(self) -> set[str]:
        return {host.partition(":")[0] for host, _ in self.hits}


class Redirector(LocalServer):
    """Answers every request with a 301 to the same path and query on `target`."""

    def __init__(self, target: str) -> None:
        super().__init__()
        self.target = target
        self.hits = 0

    def _wsgi(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        self.hits += 1
        location = f"{self.target}{request.full_path.rstrip('?')}"
        return Response("moved\n", status=301, headers={"Location": location})(
            environ, start_response
        )


def add_git_config(gitenv: dict[str, str], text: str) -> None:
    """Append `text` to the test's global git config (the machine's, as sync sees it)."""
    config = Path(gitenv["GIT_CONFIG_GLOBAL"])
    config.write_text(config.read_text() + text)


def resolve_evil(gitenv: dict[str, str], port: int) -> str:
    """Make git connect `evil.example:port` to 127.0.0.1; returns `http://evil.example:port`."""
    add_git_config(gitenv, f"[http]\n\tcurloptResolve = {EVIL}:{port}:127.0.0.1\n")
    return f"http://{EVIL}:{port}"


@pytest.fixture
def served(remote: Path) -> Any:
    with RecordingRemote(remote.parent, TOKEN) as server:
        yield server


def port_of(server: LocalServer) -> int:
    return int(server.url.rsplit(":", 1)[1])


# -- the rule ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://github.com/acme/lib.git", True),
        ("https://ghe.example:8443/acme/lib.git", True),
        ("http://127.0.0.1:8080/lib.git", True),
        ("http://127.9.8.7/lib.git", True),
        ("http://localhost:9/lib.git", True),
        ("HTTP://LOCALHOST/lib.git", True),
        ("http://github.com/acme/lib.git", False),
        ("HTTP://GitHub.com/acme/lib.git", False),
        ("http://10.0.0.1/lib.git", False),
        ("http://127.0.0.1.evil.example/lib.git", False),
        ("http://[::1]:8080/lib.git", False),  # one rule for git and PyGithub (no IPv6 there)
        ("http://0x7f000001/lib.git", False),
        ("http:///lib.git", False),
        ("ftp://ftp.example/lib.git", False),
        ("ftps://ftp.example/lib.git", False),
        # no token goes over these: ssh keys (BatchMode), no auth, local files
        ("ssh://git@github.com/acme/lib.git", True),
        ("git@github.com:acme/lib.git", True),
        ("git://example.org/lib.git", True),
        ("file:///srv/lib.git", True),
        ("/srv/lib.git", True),
    ],
)
def test_one_rule_https_or_plain_http_only_to_loopback(url: str, allowed: bool) -> None:
    assert (token_url_problem(url) is None) is allowed


def test_a_refusal_names_url_and_source_without_credentials_and_says_what_to_do() -> None:
    with pytest.raises(FatalError) as info:
        check_token_url("http://user:hunter2@git.example/lib.git", "--remote")
    message = str(info.value)
    assert message.startswith(
        "not sending the GitHub token to http://git.example/lib.git (from --remote): plain "
        "http to another machine would carry the token in clear text. Use an https:// URL"
    )
    assert "hunter2" not in message and "user" not in message


@pytest.mark.parametrize(
    ("prompt", "answer"),
    [
        ("Username for 'https://github.com': ", "x-access-token"),
        ("Password for 'https://x-access-token@github.com': ", TOKEN),
        ("Password for 'http://x-access-token@127.0.0.1:8080': ", TOKEN),
        ("Username for 'http://github.com': ", None),
        ("Password for 'http://x-access-token@evil.example:80': ", None),
        ("Password for 'ftp://x-access-token@ftp.example': ", None),
        ("Enter passphrase for key '/root/.ssh/id_ed25519': ", None),
        ("Password for 'ssh://git@github.com': ", None),
    ],
)
def test_askpass_answers_only_prompts_for_urls_the_token_may_go_to(
    prompt: str, answer: str | None
) -> None:
    said, refusal = askpass_reply(prompt, "x-access-token", TOKEN)
    assert said == answer
    assert (refusal == "") is (answer is not None)
    assert TOKEN not in refusal


# -- sources of URLs: sync -------------------------------------------------------------------


def test_sync_remote_option_plain_http_to_another_host_is_refused_before_connecting(
    sync: Runner, fake: FakeGitHub, remote: Path, served: RecordingRemote, gitenv: dict[str, str]
) -> None:
    evil = resolve_evil(gitenv, port_of(served))
    before = branches(remote)
    with pytest.raises(FatalError) as info:
        sync("v1.5.1", "0.2.0", remote=f"{evil}/library.git")
    assert str(info.value).startswith(
        f"not sending the GitHub token to {evil}/library.git (from --remote): plain http"
    )
    assert served.hits == [] and served.offered == []
    assert fake.pulls == {} and branches(remote) == before
    assert sync.build.calls == []  # refused before the build, too


def test_sync_plain_http_to_loopback_still_works(
    sync: Runner, served: RecordingRemote, remote: Path
) -> None:
    result = sync("v1.5.1", "0.2.0", remote=f"{served.url}/library.git")
    assert result.status == "opened" and branches(remote)[result.branch]
    assert served.hosts() == {"127.0.0.1"}
    assert set(served.offered) == {("x-access-token", TOKEN)}


def test_sync_clone_url_of_the_api_answer_is_checked(
    sync: Runner, fake: FakeGitHub, remote: Path, served: RecordingRemote, gitenv: dict[str, str]
) -> None:
    evil = resolve_evil(gitenv, port_of(served))

    def plain_clone_url(method: str, template: str, payload: Any) -> Any:
        if template == "/repos/{owner}/{repo}" and isinstance(payload, dict):
            payload = {**payload, "clone_url": f"{evil}/library.git"}
        return payload

    fake.tamper = plain_clone_url
    before = branches(remote)
    with pytest.raises(FatalError) as info:
        sync("v1.5.1", "0.2.0", remote=None)
    assert str(info.value).startswith(
        f"not sending the GitHub token to {evil}/library.git (from the clone_url of "
        f"{OWNER}/{NAME} in the answer of {fake.url}): plain http"
    )
    assert served.hits == [] and fake.pulls == {} and branches(remote) == before


def test_sync_insteadof_rewrite_to_plain_http_is_refused_naming_both_urls(
    sync: Runner, fake: FakeGitHub, remote: Path, served: RecordingRemote, gitenv: dict[str, str]
) -> None:
    evil = resolve_evil(gitenv, port_of(served))
    # the rewrite even carries a password: it must not be shown either
    add_git_config(
        gitenv,
        f'[url "http://u:hunter2@{EVIL}:{port_of(served)}/"]\n\tinsteadOf = https://github.example/\n',
    )
    with pytest.raises(FatalError) as info:
        sync("v1.5.1", "0.2.0", remote="https://github.example/library.git")
    message = str(info.value)
    assert message.startswith(
        f"not sending the GitHub token to {evil}/library.git (--remote "
        "https://github.example/library.git, rewritten by git's url.<base>.insteadOf"
    )
    assert "hunter2" not in message and TOKEN not in message
    assert served.hits == [] and fake.pulls == {}


def test_sync_pushinsteadof_rewrite_is_refused_before_anything_is_pushed(
    sync: Runner, fake: FakeGitHub, remote: Path, served: RecordingRemote, gitenv: dict[str, str]
) -> None:
    evil = resolve_evil(gitenv, port_of(served))
    good = f"{served.url}/library.git"
    add_git_config(gitenv, f'[url "{evil}/"]\n\tpushInsteadOf = {served.url}/\n')
    before = branches(remote)
    with pytest.raises(FatalError) as info:
        sync("v1.5.1", "0.2.0", remote=good)
    assert str(info.value).startswith(
        f"not sending the GitHub token to {evil}/library.git (--remote {good}, rewritten by"
    )
    # the clone (fetch, from 127.0.0.1) went ahead; nothing went to the push URL
    assert served.hosts() == {"127.0.0.1"}
    assert fake.pulls == {} and branches(remote) == before
    assert len(sync.build.calls) == 1  # the build runs before the clone (issue 29)


def test_sync_redirect_to_plain_http_gets_no_token(
    sync: Runner, fake: FakeGitHub, remote: Path, served: RecordingRemote, gitenv: dict[str, str]
) -> None:
    evil = resolve_evil(gitenv, port_of(served))
    with Redirector(evil) as redirector, pytest.raises(FatalError) as info:
        sync("v1.5.1", "0.2.0", remote=f"{redirector.url}/library.git")
    message = str(info.value)
    assert f"not sending the GitHub token to {evil}" in message
    assert "use the https URL of the library repo" in message and TOKEN not in message
    assert redirector.hits >= 1
    # git followed the redirect and asked for credentials for evil.example: none were given
    assert served.hits and served.offered == []
    assert not any(auth for _, auth in served.hits)
    assert fake.pulls == {}


def test_sync_api_redirect_to_another_host_is_not_followed(
    sync: Runner, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    connected = record_connections(monkeypatch)
    fake.fail(
        "GET",
        rf"^/repos/{OWNER}/{NAME}$",
        301,
        headers={"Location": f"http://{EVIL}/repos/{OWNER}/{NAME}"},
        body={"message": "Moved Permanently", "url": f"http://{EVIL}/", "documentation_url": ""},
    )
    with pytest.raises(FatalError, match="answered with a redirect to another host or scheme"):
        sync("v1.5.1", "0.2.0")
    assert all(host == "127.0.0.1" for host, _ in connected)
    assert fake.pulls == {}


def record_connections(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every (host, port) urllib3 opens a socket to (PyGithub's requests) from now on."""
    import urllib3.util.connection as connection

    seen: list[tuple[str, int]] = []
    real = connection.create_connection

    def create(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        seen.append(address)
        return real(address, *args, **kwargs)

    monkeypatch.setattr(connection, "create_connection", create)
    return seen


def test_api_answer_url_on_plain_http_gets_no_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # PyGithub opens a connection of its own for a URL of an answer (a pull request's `url`,
    # an `issue_url`) on another host of the API's domain, with the token; over plain http
    # that is refused before the connection exists. No network is used.
    connected = record_connections(monkeypatch)
    gh = GitHubRepo("https://ghe.example/api/v3", REPO, TOKEN, attempts=1, throttle=False)
    answer_url = "http://uploads.ghe.example/api/v3/repos/acme/ExecuTorch/issues/1"
    with pytest.raises(FatalError) as info:
        gh._call(
            "read the issue",
            lambda: gh._github.requester.requestJsonAndCheck("GET", answer_url),
        )
    assert str(info.value).startswith(
        "not sending the GitHub token to http://uploads.ghe.example/ (from a connection "
        "PyGithub was to open"
    )
    assert connected == []


# -- sources of URLs: release ----------------------------------------------------------------


def test_release_remote_option_plain_http_to_another_host_is_refused(
    remote: Path, served: RecordingRemote, gitenv: dict[str, str], tmp_path: Path
) -> None:
    evil = resolve_evil(gitenv, port_of(served))
    said: list[str] = []
    options = ReleaseOptions(repo=REPO, remote=f"{evil}/library.git")
    with pytest.raises(FatalError, match=f"not sending the GitHub token to {evil}/library.git"):
        run_release(options, TOKEN, say=said.append, emit=said.append)
    assert served.hits == []
    assert git("tag", "--list", cwd=remote) == ""


def test_release_pushinsteadof_rewrite_is_refused_before_the_tag_is_pushed(
    remote: Path, served: RecordingRemote, gitenv: dict[str, str], tmp_path: Path
) -> None:
    seed = tmp_path / "seed-release"
    git("clone", "--quiet", str(remote), str(seed))
    (seed / "library.properties").write_text("name=ExecuTorch\nversion=0.2.0\n")
    git("add", "-A", cwd=seed)
    git("commit", "--quiet", "-m", "0.2.0", cwd=seed)
    git("push", "--quiet", "origin", "main", cwd=seed)
    evil = resolve_evil(gitenv, port_of(served))
    add_git_config(gitenv, f'[url "{evil}/"]\n\tpushInsteadOf = {served.url}/\n')
    said: list[str] = []
    options = ReleaseOptions(repo=REPO, remote=f"{served.url}/library.git")
    with pytest.raises(FatalError, match=f"not sending the GitHub token to {evil}/library.git"):
        run_release(options, TOKEN, say=said.append, emit=said.append)
    assert served.hosts() == {"127.0.0.1"}
    assert git("tag", "--list", cwd=remote) == ""


def test_cli_release_refusal_is_a_clean_error(
    remote: Path,
    served: RecordingRemote,
    gitenv: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    evil = resolve_evil(gitenv, port_of(served))
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    with pytest.raises(SystemExit) as exit_info:
        main(["release", "--repo", REPO, "--remote", f"{evil}/library.git"])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert f"error: not sending the GitHub token to {evil}/library.git (from --remote)" in err
    assert "Traceback" not in err and TOKEN not in err
    assert served.hits == []


# -- remote helpers (`fd::`, `ext::`): a program, not a server ---------------------------------


@pytest.mark.parametrize("url", ["fd::3", "ext::sh%-c%touch%/tmp/pwned"])
def test_sync_remote_helper_urls_are_refused_before_git_runs(
    sync: Runner, fake: FakeGitHub, url: str
) -> None:
    # Before: `git clone fd::3` waited on a file descriptor until the job was killed.
    with pytest.raises(FatalError) as info:
        sync("v1.5.1", "0.2.0", remote=url)
    assert f"--remote {url} names git's remote helper" in str(info.value)
    assert fake.pulls == {} and sync.build.calls == []


def test_sync_remote_helper_reached_by_insteadof_is_refused(
    sync: Runner, fake: FakeGitHub, gitenv: dict[str, str]
) -> None:
    add_git_config(gitenv, '[url "fd::3/"]\n\tinsteadOf = https://github.example/\n')
    with pytest.raises(FatalError) as info:
        sync("v1.5.1", "0.2.0", remote="https://github.example/library.git")
    assert "(as git's config rewrites it) fd::3/library.git names git's remote helper" in str(
        info.value
    )
    assert fake.pulls == {}
