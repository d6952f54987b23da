"""Scenario tests of `sync`: GitHub and git failures. Each is a clear error (or, after the pull
request stands, a warning) and leaves the repo as it was: a pushed branch is taken back, a
branch someone else pushed to is never overwritten.

A real bare git repo is the library remote, a local fake GitHub (validated against GitHub's
OpenAPI description) answers the API, a fake build writes a small library with the real
layout, and a fake check reports sizes (conftest.py, sync_fixtures.py).
"""

from __future__ import annotations

import http.server
import socket
import stat
import threading
from pathlib import Path
from typing import Any

import pytest
from github_fake import FakeGitHub, GitHubSpec
from sync_fixtures import (
    NAME,
    OWNER,
    PULLS,
    REPO,
    SHA_OLD,
    TOKEN,
    FakeReport,
    Runner,
    branch_of,
    branches,
    git,
    show,
    writes,
)

from generator.sync.github import GitHubRepo
from generator.util.errors import FatalError
from generator.vcs import git as g


def test_unknown_ref_leaves_the_repo_untouched(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    refs_before = branches(remote)
    with pytest.raises(FatalError, match="'no-such-ref' does not exist"):
        sync("no-such-ref")
    assert branches(remote) == refs_before
    assert writes(fake) == []


# -- GitHub's answers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "status", "headers", "expected", "sleeps"),
    [
        ("GET", REPO, 401, {}, r"answered 401: Bad credentials\n.*GITHUB_TOKEN", []),
        ("POST", PULLS, 403, {}, r"answered 403: Resource not accessible.*\n.*permission", []),
        ("POST", PULLS, 422, {}, r"answered 422: Validation Failed \(base is invalid\)", []),
        (
            "POST",
            PULLS,
            429,
            {"Retry-After": "3"},
            r"answered 429: You have exceeded a secondary rate limit",
            [3.0, 3.0, 3.0, 3.0],
        ),
        ("GET", REPO, 502, {}, r"answered 502: Server Error\n.*5 tries", [1.0, 2.0, 4.0, 8.0]),
    ],
)
def test_github_errors_are_clear_and_leave_the_repo_untouched(
    sync: Runner,
    fake: FakeGitHub,
    remote: Path,
    method: str,
    path: str,
    status: int,
    headers: dict[str, str],
    expected: str,
    sleeps: list[float],
) -> None:
    refs_before = branches(remote)
    fake.fail(method, path, status, times=99, headers=headers)
    with pytest.raises(FatalError, match=expected) as info:
        sync("v1.5.1", "0.2.0")
    assert TOKEN not in str(info.value)
    assert branches(remote) == refs_before  # a pushed branch is taken back
    assert fake.pulls == {}
    assert sync.sleeps == sleeps


def test_rate_limit_then_success_waits_as_told(sync: Runner, fake: FakeGitHub) -> None:
    fake.fail("POST", PULLS, 429, times=1, headers={"Retry-After": "7"})
    fake.fail("PATCH", r"/pulls/\d+$", 502, times=1)
    assert sync("v1.5.1", "0.2.0").status == "opened"
    assert sync.sleeps == [7.0]
    assert sync("v1.5.1", "0.2.0").status == "updated"
    assert sync.sleeps == [7.0, 1.0]
    assert len(fake.pulls) == 1


def test_secondary_rate_limit_403_is_retried(sync: Runner, fake: FakeGitHub) -> None:
    fake.fail(
        "GET",
        REPO,
        403,
        times=1,
        headers={"Retry-After": "2"},
        body={
            "message": "You have exceeded a secondary rate limit.",
            "documentation_url": "https://docs.github.com/rest",
        },
    )
    assert sync("v1.5.1", "0.2.0").status == "opened"
    assert sync.sleeps == [2.0]


def test_rate_limit_longer_than_we_wait_gives_up_at_once(sync: Runner, fake: FakeGitHub) -> None:
    fake.fail("GET", REPO, 429, times=1, headers={"Retry-After": "3600"})
    with pytest.raises(FatalError, match="asks to wait 3600 s"):
        sync("v1.5.1", "0.2.0")
    assert sync.sleeps == []


def test_token_without_push_permission_is_refused_up_front(
    spec: GitHubSpec, remote: Path, tmp_path: Path
) -> None:
    with FakeGitHub(spec, OWNER, NAME, TOKEN, git_dir=remote, can_push=False) as fake:
        with pytest.raises(FatalError, match="may not push to acme/ExecuTorch"):
            Runner(fake, remote, tmp_path)("v1.5.1", "0.2.0")
        fake.assert_clean()
        assert [r[:2] for r in fake.requests] == [("GET", f"/repos/{OWNER}/{NAME}")]


def test_network_down_is_a_clear_error(sync: Runner, remote: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(FatalError, match=rf"cannot reach http://127\.0\.0\.1:{port}"):
        sync("v1.5.1", "0.2.0", api_url=f"http://127.0.0.1:{port}")
    assert sync.sleeps == [1.0, 2.0, 4.0, 8.0]


def test_api_answer_for_another_repo_is_refused(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    def other_repo(method: str, template: str, payload: Any) -> Any:
        if template == "/repos/{owner}/{repo}" and isinstance(payload, dict):
            return payload | {"full_name": "someone/Else"}
        return payload

    fake.tamper = other_repo
    refs_before = branches(remote)
    with pytest.raises(
        FatalError, match=r"full_name 'someone/Else'.*probably not a GitHub API root.*api/v3"
    ):
        sync("v1.5.1", "0.2.0")
    assert branches(remote) == refs_before and writes(fake) == []
    assert sync.build.calls == []


@pytest.mark.parametrize(
    ("content_type", "answer"),
    [
        ("text/html", b"<html><body>GitHub Enterprise: sign in</body></html>"),
        ("application/json", b'{"current_user_url": "https://api.github.com/user"}'),
    ],
)
def test_api_url_that_is_not_an_api_root_is_a_clear_error(
    sync: Runner, fake: FakeGitHub, remote: Path, content_type: str, answer: bytes
) -> None:
    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    refs_before = branches(remote)
    try:
        with pytest.raises(
            FatalError, match=r"no full_name.*probably not a GitHub API root"
        ) as info:
            sync("v1.5.1", "0.2.0", api_url=f"http://127.0.0.1:{server.server_port}")
    finally:
        server.shutdown()
        server.server_close()
    assert TOKEN not in str(info.value)
    assert branches(remote) == refs_before and sync.build.calls == []


def test_failed_label_is_a_warning_and_keeps_the_pr_and_branch(
    sync: Runner, fake: FakeGitHub, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.fail("POST", r"/labels$", 403, times=99)
    result = sync("v1.5.1", "0.2.0")
    assert result.status == "opened"
    assert branches(remote)[result.branch] == result.commit
    assert [(p.number, p.state, p.labels) for p in fake.pulls.values()] == [(1, "open", [])]
    err = capsys.readouterr().err
    assert "warning: pull request #1 is ready but has no 'sync' label" in err
    assert "answered 403" in err

    sync.check.flash = 100_500  # the update path too
    again = sync("v1.5.1", "0.2.0")
    assert again.status == "updated" and branches(remote)[again.branch] == again.commit
    assert "100,500 B" in fake.pulls[1].body
    assert "has no 'sync' label" in capsys.readouterr().err


# -- git: the remote, hooks, branches someone else pushed to ---------------------------------


def test_unreachable_git_remote_is_a_clear_error(sync: Runner, tmp_path: Path) -> None:
    with pytest.raises(FatalError, match="could not clone the library repo"):
        sync("v1.5.1", "0.2.0", remote=str(tmp_path / "nowhere.git"))


def test_protected_branch_push_is_refused_clearly(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\nwhile read old new ref; do\n"
        '  echo "GH006: Protected branch update failed for $ref." >&2; exit 1\ndone\n'
    )
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    refs_before = branches(remote)
    with pytest.raises(
        FatalError, match=r"(?s)GH006: Protected branch.*protection rule covers the sync branch"
    ):
        sync("v1.5.1", "0.2.0")
    assert branches(remote) == refs_before
    assert fake.pulls == {}


def test_push_rejected_by_a_hook_is_a_clear_error(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'pushes are frozen today' >&2\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(FatalError, match=r"(?s)pushes are frozen today.*rejected the push"):
        sync("v1.5.1", "0.2.0")
    assert fake.pulls == {}


def test_force_with_lease_refuses_when_someone_pushed_to_the_sync_branch_meanwhile(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    first = sync("v1.5.1", "0.2.0")
    body_before = fake.pulls[1].body
    intruder = tmp_path / "intruder"
    git("clone", "--quiet", "--branch", first.branch, str(remote), str(intruder))
    (intruder / "NOTE.md").write_text("a maintainer's fix on the sync branch\n")
    git("add", "NOTE.md", cwd=intruder)
    git("commit", "--quiet", "-m", "Maintainer fix", cwd=intruder)

    real_check = sync.check
    real_check.flash = 100_500  # the new report makes the tree differ: a push is needed

    def check_then_someone_pushes(library: Path, options: Any) -> FakeReport:
        git("push", "--quiet", "origin", first.branch, cwd=intruder)  # after our clone
        return real_check(library, options)

    sync.check = check_then_someone_pushes  # type: ignore[assignment]
    with pytest.raises(FatalError, match=r"(?s)stale info.*someone else pushed"):
        sync("v1.5.1", "0.2.0")
    assert show(remote, first.branch, "NOTE.md") == "a maintainer's fix on the sync branch"
    assert fake.pulls[1].body == body_before and fake.pulls[1].updates == 0


def test_maintainer_commits_on_the_sync_branch_are_never_discarded(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    first = sync("v1.5.1", "0.2.0")
    work = tmp_path / "maintainer"
    git("clone", "--quiet", "--branch", first.branch, str(remote), str(work))
    (work / "src" / "fix.h").write_text("// a maintainer's fix\n")
    git("add", "-A", cwd=work)
    git("commit", "--quiet", "-m", "Fix a header by hand", cwd=work)
    git("push", "--quiet", "origin", first.branch, cwd=work)
    refs_before, body_before = branches(remote), fake.pulls[1].body
    sync.check.flash = 100_500

    with pytest.raises(
        FatalError,
        match=r"(?s)has commits by someone other than the bot.*Maintainer "
        r"<maintainer@example\.invalid>: Fix a header by hand.*delete the branch",
    ):
        sync("v1.5.1", "0.2.0")
    assert branches(remote) == refs_before
    assert show(remote, first.branch, "src/fix.h") == "// a maintainer's fix"
    assert fake.pulls[1].body == body_before and fake.pulls[1].updates == 0


# -- unexpected failures after the push --------------------------------------------------------


class _FailsAfterPush(GitHubRepo):
    """The API breaks in a way nobody planned for, after sync pushed."""

    error: BaseException = RuntimeError("boom")

    def find_open_pull(self, branch: str, base: str) -> Any:
        raise self.error


def test_unexpected_error_after_the_push_undoes_it_and_is_a_clear_error(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    first = sync("v1.5.1", "0.2.0")
    refs_before, body_before = branches(remote), fake.pulls[1].body
    sync.check.flash = 100_500  # a new report: a new commit is pushed
    sync.repo_class = _FailsAfterPush
    _FailsAfterPush.error = RuntimeError(f"server said: token {TOKEN} is odd")
    with pytest.raises(FatalError, match=r"unexpected RuntimeError: .*was put back") as info:
        sync("v1.5.1", "0.2.0")
    assert TOKEN not in str(info.value) and "***" in str(info.value)
    assert branches(remote) == refs_before  # the pushed commit was taken back
    assert fake.pulls[1].body == body_before
    assert first.status == "opened"


def test_interrupt_after_the_push_undoes_it(sync: Runner, fake: FakeGitHub, remote: Path) -> None:
    refs_before = branches(remote)
    sync.repo_class = _FailsAfterPush
    _FailsAfterPush.error = KeyboardInterrupt()
    with pytest.raises(KeyboardInterrupt):
        sync("v1.5.1", "0.2.0")
    assert branches(remote) == refs_before  # the new sync branch was deleted again
    assert fake.pulls == {}


def test_ctrl_c_while_labelling_a_just_opened_pull_keeps_it_and_its_branch(
    sync: Runner,
    fake: FakeGitHub,
    remote: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # deleting the head branch of the open pull request would close it on github.com, and
    # the next sync would take it for one a maintainer closed
    def interrupted(self: GitHubRepo, pull: object, label: str) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(GitHubRepo, "_add_label", interrupted)
        with pytest.raises(KeyboardInterrupt):
            sync("v1.5.1", "0.2.0")
    assert [(p.number, p.head, p.state) for p in fake.pulls.values()] == [
        (1, branch_of(SHA_OLD), "open")
    ]
    assert branch_of(SHA_OLD) in branches(remote)
    err = capsys.readouterr().err
    assert f"pull request #1 (https://github.example/{OWNER}/{NAME}/pull/1) stands with" in err
    again = sync("v1.5.1", "0.2.0")
    assert again.status == "updated" and len(fake.pulls) == 1


class _InterruptedWhileOpening(GitHubRepo):
    """GitHub opened the pull request, but sync was interrupted before it heard so."""

    def open_or_update(self, branch: str, base: str, *args: Any, **kwargs: Any) -> Any:
        super().open_or_update(branch, base, *args, **kwargs)
        kwargs["on_open"](None)  # as if the answer to the POST never came back
        raise KeyboardInterrupt


def test_an_interruption_while_opening_asks_github_and_keeps_the_opened_pull(
    sync: Runner, fake: FakeGitHub, remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sync.repo_class = _InterruptedWhileOpening
    with pytest.raises(KeyboardInterrupt):
        sync("v1.5.1", "0.2.0")
    assert [p.state for p in fake.pulls.values()] == ["open"]
    assert branch_of(SHA_OLD) in branches(remote)


@pytest.mark.parametrize("landed", [True, False], ids=["push-landed", "push-did-not-land"])
def test_an_interrupted_push_is_undone_with_a_lease_on_what_was_pushed(
    landed: bool,
    sync: Runner,
    fake: FakeGitHub,
    remote: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    refs_before = branches(remote)
    push = g.push_with_lease
    calls: list[str] = []

    def interrupted(*args: Any, **kwargs: Any) -> None:
        calls.append(args[5])
        if len(calls) == 1:
            if landed:
                push(*args, **kwargs)
            raise KeyboardInterrupt  # Ctrl-C while git push ran: its result unknown
        push(*args, **kwargs)

    monkeypatch.setattr(g, "push_with_lease", interrupted)
    with pytest.raises(KeyboardInterrupt):
        sync("v1.5.1", "0.2.0")
    assert branches(remote) == refs_before
    assert fake.pulls == {}
    err = capsys.readouterr().err
    branch = branch_of(SHA_OLD)
    if landed:
        assert calls == [f"push {branch} to the library repo", f"restore {branch}"]
        assert f"the branch {branch} pushed for it was deleted again" in err
    else:
        assert calls == [f"push {branch} to the library repo"]
        assert f"the interrupted push of {branch} did not land" in err
        assert "was deleted again" not in err
