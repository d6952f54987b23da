"""Scenario tests of `sync`: a real bare git repo is the library remote, a local fake GitHub
(validated against GitHub's OpenAPI description) answers the API, a fake build writes a small
library with the real layout, and a fake check reports sizes."""

from __future__ import annotations

import http.server
import os
import socket
import stat
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from github_fake import FakeGitHub, GitHubSpec, load, missing_reason
from github_fake.git_http import GitHttpRemote
from sync_fixtures import (
    MACHINE_NAME,
    FakeBuild,
    FakeCheck,
    FakeReport,
    branches,
    git,
    isolate_git,
    ls_tree,
    make_library_remote,
    merge_into_main,
    report_in,
    show,
)

from generator.checkout import default_cache_dir
from generator.errors import FatalError
from generator.main import main
from generator.pipeline import BuildOptions
from generator.sync import DEFAULT_BOT_EMAIL, DEFAULT_BOT_NAME, SyncOptions, SyncResult, run_sync
from generator.sync.github import GitHubRepo

TOKEN = "ghp_SyncTestToken0123456789abcdefABCDEF"
OWNER, NAME = "acme", "ExecuTorch"
SHA_OLD = "d756e7d8c2" + "0" * 30
SHA_NEW = "5f3e2a1b0c" + "1" * 30
REFS = {
    "v1.5.1": (SHA_OLD, "1.5.1", ["aten::add.out", "aten::mul.out"]),
    "main": (SHA_NEW, "1.6.0a0", ["aten::add.out", "aten::mul.out", "aten::relu.out"]),
}


@pytest.fixture(scope="session")
def spec() -> GitHubSpec:
    reason = missing_reason()
    if reason:
        pytest.skip(reason)
    return load()


@pytest.fixture
def gitenv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    variables = isolate_git(tmp_path / "home")
    for key, value in variables.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    return variables


@pytest.fixture
def remote(tmp_path: Path, gitenv: dict[str, str]) -> Path:
    return make_library_remote(tmp_path / "remote")


@pytest.fixture
def fake(spec: GitHubSpec, remote: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(spec, OWNER, NAME, TOKEN, git_dir=remote) as server:
        yield server
        server.assert_clean()


class Runner:
    """Runs sync against the fake GitHub and the bare remote, recording waits."""

    def __init__(self, fake: FakeGitHub, remote: Path, tmp_path: Path) -> None:
        self.fake = fake
        self.remote = remote
        self.tmp_path = tmp_path
        self.build = FakeBuild(dict(REFS))
        self.check = FakeCheck()
        self.sleeps: list[float] = []
        self.runs = 0
        self.repo_class: type[GitHubRepo] = GitHubRepo

    def __call__(
        self,
        ref: str = "v1.5.1",
        version: str | None = None,
        token: str | None = TOKEN,
        **options: Any,
    ) -> SyncResult:
        self.runs += 1
        opts = SyncOptions(
            build=BuildOptions(executorch_ref=ref, library_version=version),
            repo=options.pop("repo", f"{OWNER}/{NAME}"),
            remote=options.pop("remote", str(self.remote)),
            api_url=options.pop("api_url", self.fake.url),
            **options,
        )
        return run_sync(
            opts,
            token,
            build=self.build,
            check=self.check,
            connect=lambda url, repo, tok: self.repo_class(
                url, repo, tok, sleep=self.sleeps.append, throttle=False
            ),
        )


@pytest.fixture
def sync(fake: FakeGitHub, remote: Path, tmp_path: Path) -> Runner:
    return Runner(fake, remote, tmp_path)


def writes(fake: FakeGitHub) -> list[tuple[str, str, int]]:
    return [r for r in fake.requests if r[0] in ("POST", "PATCH")]


def branch_of(sha: str) -> str:
    return f"sync/executorch-{sha[:12]}"


# -- the main flow ---------------------------------------------------------------------------


def test_first_sync_opens_a_labelled_pr_from_a_bot_commit(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    main_before = branches(remote)["main"]
    result = sync("v1.5.1", "0.2.0")

    branch = branch_of(SHA_OLD)
    assert result.status == "opened"
    assert result.branch == branch
    assert [(p.number, p.head, p.base, p.labels) for p in fake.open_pulls()] == [
        (1, branch, "main", ["sync"])
    ]
    pull = fake.pulls[1]
    assert pull.title == f"Sync ExecuTorch v1.5.1 ({SHA_OLD[:12]}) as library 0.2.0"
    refs = branches(remote)
    assert refs["main"] == main_before  # never pushed to the base
    assert set(refs) == {"main", branch}
    # the commit: bot identity, not the machine's; message names ref, SHA and version
    who = git("log", "-1", "--format=%an|%ae|%cn|%ce", branch, cwd=remote)
    assert who == f"{DEFAULT_BOT_NAME}|{DEFAULT_BOT_EMAIL}|{DEFAULT_BOT_NAME}|{DEFAULT_BOT_EMAIL}"
    assert MACHINE_NAME not in git("log", "--format=%an %cn %ae %ce", branch, cwd=remote)
    message = git("log", "-1", "--format=%B", branch, cwd=remote)
    assert "v1.5.1" in message and SHA_OLD in message and "0.2.0" in message
    assert git("rev-parse", f"{branch}~1", cwd=remote) == main_before
    # the tree: generated paths + the repo's own files + the check report
    files = ls_tree(remote, branch)
    assert {"README.md", "CHANGELOG.md", ".github/workflows/lint.yml"} <= files
    assert {"library.properties", "executorch_pin.txt", "extras/check_report.json"} <= files
    assert show(remote, branch, "executorch_pin.txt") == SHA_OLD
    assert "version=0.2.0" in show(remote, branch, "library.properties")
    assert report_in(remote, branch) == FakeReport(True, 100_000, 20_000).to_dict()
    # the build got sync's build options; check ran on the build output
    assert [(c.executorch_ref, c.library_version) for c in sync.build.calls] == [
        ("v1.5.1", "0.2.0")
    ]
    assert len(sync.check.checked) == 1
    # body: ref, SHA, first sync, version, ops, files, check, manual steps
    body = pull.body
    assert f"`{SHA_OLD}`" in body
    assert "none (first sync)" in body
    assert "**0.2.0**" in body
    assert "Kernels registered: **2** (base: 0, +2)" in body
    assert "`aten::add.out`, `aten::mul.out`" in body
    assert "**9** added, **0** removed, **0** changed" in body
    assert "### Check: passed" in body and "**check passed**" in body
    assert "**AddModel**\n```\n=== AddModel ===\n[2, 3, 4]\n```" in body
    assert "host run" not in body
    assert "| AddModel | flash | 100,000 B | n/a | n/a |" in body
    assert "Tag the merge commit `v0.2.0`" in body
    assert result.body == body


def test_second_sync_of_the_same_ref_updates_the_pr_and_opens_none(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    first = sync("v1.5.1", "0.2.0")
    branch_sha = branches(remote)[first.branch]
    sync.check.flash = 100_500  # a new check report: the body changes
    second = sync("v1.5.1", "0.2.0")

    assert second.status == "updated"
    assert second.pull is not None and second.pull.number == first.pull.number  # type: ignore[union-attr]
    assert len(fake.pulls) == 1 and fake.pulls[1].updates == 1
    assert [r[:2] for r in writes(fake)].count(("POST", f"/repos/{OWNER}/{NAME}/pulls")) == 1
    assert "100,500 B" in fake.pulls[1].body
    # the branch moved by force-with-lease onto a new commit holding the new report
    assert branches(remote)[first.branch] != branch_sha
    assert report_in(remote, first.branch)["examples"][0]["sizes"]["flash"] == 100_500


def test_identical_resync_does_not_move_the_branch(sync: Runner, remote: Path) -> None:
    first = sync("v1.5.1", "0.2.0")
    before = branches(remote)[first.branch]
    second = sync("v1.5.1", "0.2.0")
    assert second.status == "updated"
    assert branches(remote)[first.branch] == before


def test_nothing_changed_says_already_in_sync_and_opens_none(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = sync("v1.5.1", "0.2.0")
    merge_into_main(remote, first.branch, tmp_path / "merge")
    refs_before = branches(remote)
    writes_before = len(writes(fake))
    sync.build.provenance_note = "rebuilt later"  # PROVENANCE differs, nothing else
    capsys.readouterr()

    result = sync("v1.5.1", "0.2.0")

    assert result.status == "in-sync"
    assert "already in sync" in capsys.readouterr().out
    assert branches(remote) == refs_before
    assert len(writes(fake)) == writes_before
    assert len(sync.check.checked) == 1  # not checked again


def test_generated_paths_are_deleted_before_writing(
    spec: GitHubSpec, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    remote = make_library_remote(
        tmp_path / "remote",
        {
            "src/stale_platform.cpp": "// from an old generator\n",
            "extras/old_tool.py": "print()\n",
            "library.properties": "name=ExecuTorch\nversion=0.1.0\n",
            "executorch_pin.txt": SHA_NEW + "\n",
        },
    )
    with FakeGitHub(spec, OWNER, NAME, TOKEN, git_dir=remote) as fake:
        runner = Runner(fake, remote, tmp_path)
        runner.build.extra = {"README.md": "# generated readme that must not be copied\n"}
        result = runner("v1.5.1", "0.2.0")
        fake.assert_clean()
    files = ls_tree(remote, result.branch)
    assert "src/stale_platform.cpp" not in files
    assert "extras/old_tool.py" not in files
    assert "src/ExecuTorch.h" in files
    assert show(remote, result.branch, "README.md") == "# ExecuTorch for Arduino"
    assert show(remote, result.branch, "CHANGELOG.md") == "# Changelog"
    assert ".github/workflows/lint.yml" in files
    body = fake.pulls[1].body
    assert f"[`{SHA_NEW[:12]}...{SHA_OLD[:12]}`]" in body
    assert "0.2.0** (base: 0.1.0)" in body
    assert "**7** added, **2** removed, **2** changed" in body


def test_next_ref_body_shows_compare_link_size_deltas_and_kernel_changes(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    first = sync("v1.5.1", "0.2.0")
    merge_into_main(remote, first.branch, tmp_path / "merge")
    sync.check.flash, sync.check.ram = 104_096, 19_000

    result = sync("main", "0.3.0")

    assert result.status == "opened" and result.branch == branch_of(SHA_NEW)
    body = fake.pulls[2].body
    compare = f"https://github.com/pytorch/executorch/compare/{SHA_OLD}...{SHA_NEW}"
    assert f"]({compare})" in body
    assert "**0.3.0** (base: 0.2.0)" in body
    assert "| AddModel | flash | 104,096 B | 100,000 B | +4,096 |" in body
    assert "| AddModel | ram | 19,000 B | 20,000 B | -1,000 |" in body
    assert "Kernels registered: **3** (base: 2, +1)" in body
    assert "- added: `aten::relu.out`" in body
    assert "**0** added, **0** removed, **6** changed" in body


# -- refusals --------------------------------------------------------------------------------


def test_reused_version_on_base_history_is_refused_before_any_push(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    first = sync("v1.5.1", "0.2.0")
    merge_into_main(remote, first.branch, tmp_path / "merge")
    refs_before, writes_before = branches(remote), len(writes(fake))

    with pytest.raises(FatalError, match=r"0\.2\.0 was already used on main for ExecuTorch "):
        sync("main", "0.2.0")

    assert branches(remote) == refs_before
    assert len(writes(fake)) == writes_before
    assert len(sync.check.checked) == 1  # refused before the check


def test_version_already_tagged_is_refused(sync: Runner, fake: FakeGitHub, remote: Path) -> None:
    git("tag", "v1.6.0-alpha.0", "main", cwd=remote)
    refs_before = branches(remote)
    with pytest.raises(
        FatalError,
        match=r"already released as tag v1\.6\.0-alpha\.0.*--library-version 1\.6\.0-alpha\.1 ",
    ):
        sync("main")  # version from version.txt 1.6.0a0 -> 1.6.0-alpha.0
    assert branches(remote) == refs_before
    assert writes(fake) == []


def test_same_version_for_the_same_pin_is_not_a_reuse(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    first = sync("v1.5.1", "0.2.0")
    merge_into_main(remote, first.branch, tmp_path / "merge")
    sync.build.extra = {"src/new_header.h": "#pragma once\n"}  # generator changed, same pin
    assert sync("v1.5.1", "0.2.0").status == "opened"


def test_failing_check_opens_nothing_and_prints_the_report(
    sync: Runner, fake: FakeGitHub, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sync.check.passed = False
    refs_before = branches(remote)
    with pytest.raises(FatalError, match=r"check failed .* no pull request was opened or updated"):
        sync("v1.5.1", "0.2.0")
    assert "**check FAILED**" in capsys.readouterr().out
    assert branches(remote) == refs_before
    assert writes(fake) == []


def test_failing_check_does_not_update_an_open_pr(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    first = sync("v1.5.1", "0.2.0")
    refs_before, body_before = branches(remote), fake.pulls[1].body
    sync.check.passed = False
    with pytest.raises(FatalError, match="check failed"):
        sync("v1.5.1", "0.2.0")
    assert branches(remote) == refs_before and fake.pulls[1].body == body_before
    assert first.status == "opened"


def test_unknown_ref_leaves_the_repo_untouched(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    refs_before = branches(remote)
    with pytest.raises(FatalError, match="'no-such-ref' does not exist"):
        sync("no-such-ref")
    assert branches(remote) == refs_before
    assert writes(fake) == []


def test_bad_explicit_version_is_refused_before_anything(sync: Runner, fake: FakeGitHub) -> None:
    with pytest.raises(FatalError, match="not a version the Library Manager accepts"):
        sync("v1.5.1", "v0.2")
    assert fake.requests == [] and sync.build.calls == []


# -- GitHub and git failures -----------------------------------------------------------------

PULLS = rf"^/repos/{OWNER}/{NAME}/pulls$"
REPO = rf"^/repos/{OWNER}/{NAME}$"


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


# -- secrets ---------------------------------------------------------------------------------


def test_token_never_appears_in_output_config_commits_or_body(
    sync: Runner,
    fake: FakeGitHub,
    remote: Path,
    tmp_path: Path,
    gitenv: dict[str, str],
    capfd: pytest.CaptureFixture[str],
) -> None:
    work = tmp_path / "work"
    result = sync("v1.5.1", "0.2.0", work_dir=work)
    fake.fail("POST", PULLS, 422, times=1)
    with pytest.raises(FatalError) as info:
        sync("main", "0.3.0")
    out, err = capfd.readouterr()
    assert TOKEN not in out + err + str(info.value)
    assert result.body is not None and TOKEN not in result.body
    assert all(TOKEN not in p.body + p.title for p in fake.pulls.values())
    config = (work / "library" / ".git" / "config").read_text()
    assert '[remote "origin"]' in config and TOKEN not in config
    for path in (work / "library" / ".git").rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path
    assert TOKEN not in Path(gitenv["GIT_CONFIG_GLOBAL"]).read_text()
    assert TOKEN not in git("log", "--all", "--format=%B", cwd=remote)


def test_missing_token_is_a_clear_error(sync: Runner, fake: FakeGitHub) -> None:
    with pytest.raises(FatalError, match="GITHUB_TOKEN is not set"):
        sync("v1.5.1", "0.2.0", token=None)
    assert fake.requests == []


def test_dry_run_needs_no_token_and_changes_nothing(
    sync: Runner, fake: FakeGitHub, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refs_before = branches(remote)
    result = sync("v1.5.1", "0.2.0", token=None, dry_run=True)
    assert result.status == "dry-run"
    out = capsys.readouterr().out
    assert f"would push {branch_of(SHA_OLD)}" in out
    assert f"# Sync ExecuTorch v1.5.1 ({SHA_OLD[:12]}) as library 0.2.0" in out
    assert fake.requests == [] and branches(remote) == refs_before


# -- the command line ------------------------------------------------------------------------


def test_cli_sync_without_token_fails_cleanly(
    gitenv: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["sync", "--executorch-ref", "v1.5.1", "--repo", "acme/ExecuTorch"])
    assert exit_info.value.code == 1
    assert "error: GITHUB_TOKEN is not set" in capsys.readouterr().err


def test_cli_rejects_a_repo_that_is_not_owner_name(
    gitenv: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["sync", "--repo", "just-a-name", "--dry-run"])
    assert exit_info.value.code == 1
    assert "is not OWNER/NAME" in capsys.readouterr().err


def test_token_reaches_git_only_through_askpass_and_is_never_stored(
    spec: GitHubSpec,
    remote: Path,
    tmp_path: Path,
    gitenv: dict[str, str],
    capfd: pytest.CaptureFixture[str],
) -> None:
    # an HTTP remote that demands the token, like github.com; the global git config of the
    # machine has `credential.helper = store`, which must not receive it
    with (
        GitHttpRemote(remote.parent, TOKEN) as http,
        FakeGitHub(spec, OWNER, NAME, TOKEN, git_dir=remote) as fake,
    ):
        runner = Runner(fake, remote, tmp_path)
        work = tmp_path / "work"
        result = runner("v1.5.1", "0.2.0", remote=f"{http.url}/library.git", work_dir=work)
        fake.assert_clean()
    assert result.status == "opened"
    assert branches(remote)[result.branch]  # pushed over authenticated HTTP
    assert ("x-access-token", TOKEN) in http.offered
    assert set(http.offered) == {("x-access-token", TOKEN)}
    store = Path(gitenv["GIT_CONFIG_GLOBAL"]).parent / "credentials"
    assert not store.exists() or TOKEN not in store.read_text()
    config = (work / "library" / ".git" / "config").read_text()
    assert f"url = {http.url}/library.git" in config and TOKEN not in config
    out, err = capfd.readouterr()
    assert TOKEN not in out + err


def test_wrong_token_for_the_git_remote_is_a_clear_error(
    spec: GitHubSpec, remote: Path, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    with (
        GitHttpRemote(remote.parent, "the-right-token") as http,
        FakeGitHub(spec, OWNER, NAME, TOKEN, git_dir=remote) as fake,
    ):
        runner = Runner(fake, remote, tmp_path)
        with pytest.raises(FatalError, match="refused the credentials") as info:
            runner("v1.5.1", "0.2.0", remote=f"{http.url}/library.git")
        fake.assert_clean()
    assert TOKEN not in str(info.value)
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


# -- review findings: token hygiene ----------------------------------------------------------


@pytest.mark.parametrize("padded", [f"{TOKEN}\n", f"  {TOKEN}\r\n", f"\t{TOKEN} "])
def test_token_surrounding_whitespace_is_stripped(
    sync: Runner, fake: FakeGitHub, padded: str, capfd: pytest.CaptureFixture[str]
) -> None:
    # the fake accepts only the exact token: a padded one would be refused (or break the header)
    assert sync("v1.5.1", "0.2.0", token=padded).status == "opened"
    out, err = capfd.readouterr()
    assert TOKEN not in out + err


@pytest.mark.parametrize(
    "bad",
    [TOKEN[:12] + " " + TOKEN[12:], TOKEN[:12] + "\n" + TOKEN[12:], TOKEN + "\x00", TOKEN + "…"],
)
def test_token_with_inner_whitespace_control_or_non_ascii_is_refused_without_showing_it(
    sync: Runner, fake: FakeGitHub, remote: Path, bad: str
) -> None:
    refs_before = branches(remote)
    with pytest.raises(
        FatalError, match="GITHUB_TOKEN contains spaces, control or non-ASCII"
    ) as info:
        sync("v1.5.1", "0.2.0", token=bad)
    message = str(info.value)
    assert TOKEN[:12] not in message and TOKEN[12:] not in message
    assert fake.requests == [] and sync.build.calls == []
    assert branches(remote) == refs_before


def test_cli_takes_github_token_out_of_the_environment_before_anything(
    gitenv: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    with pytest.raises(SystemExit) as exit_info:
        main(["sync", "--repo", "acme/ExecuTorch", "--api-url", "ftp://example.invalid"])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "error: --api-url 'ftp://example.invalid' is not an http(s) URL" in err
    assert "Traceback" not in err and TOKEN not in err
    # build and check subprocesses (compilers, QEMU, sketches) would inherit os.environ
    assert "GITHUB_TOKEN" not in os.environ
    child = subprocess.run(
        ["sh", "-c", 'echo "${GITHUB_TOKEN:-unset}"'], capture_output=True, text=True, check=True
    )
    assert child.stdout.strip() == "unset"


# -- review findings: inputs are checked up front --------------------------------------------


@pytest.mark.parametrize(
    ("option", "value", "expected"),
    [
        ("repo", "../..", r"--repo '\.\./\.\.' is not OWNER/NAME"),
        ("repo", "acme/..", "is not OWNER/NAME"),
        ("repo", "acme/.", "is not OWNER/NAME"),
        ("repo", "acme/Exec Torch", "is not OWNER/NAME"),
        ("repo", "-acme/ExecuTorch", "is not OWNER/NAME"),
        ("repo", "acme/ExecuTorch/x", "is not OWNER/NAME"),
        ("repo", "acme/ExecuTorch.git", "ends in .git"),
        ("api_url", "ftp://example.invalid", r"--api-url .* is not an http\(s\) URL with a host"),
        ("api_url", "api.github.com", r"is not an http\(s\) URL with a host"),
        ("api_url", "https://", r"is not an http\(s\) URL with a host"),
        ("api_url", "https://host:notaport/api/v3", "invalid port"),
        ("api_url", "https://me:pw@host/api/v3", "must not carry credentials"),
        ("api_url", "https://host/api/v3 ", "whitespace"),
        ("base", "HEAD", "--base 'HEAD' is not a branch name"),
        ("base", "refs/heads/main", "is not a branch name"),
        ("base", "@{-1}", "is not a branch name"),
        ("base", "a..b", "is not a valid git branch name"),
        ("base", "-main", "is not a valid git branch name"),
        ("base", "main.lock", "is not a valid git branch name"),
        ("base", "sync/executorch-d756e7d8c200", "is a sync branch"),
    ],
)
def test_bad_repo_api_url_or_base_is_refused_before_anything(
    sync: Runner, fake: FakeGitHub, remote: Path, option: str, value: str, expected: str
) -> None:
    refs_before = branches(remote)
    with pytest.raises(FatalError, match=expected):
        sync("v1.5.1", "0.2.0", **{option: value})
    assert fake.requests == [] and sync.build.calls == []
    assert branches(remote) == refs_before


def test_base_head_is_refused_even_though_the_clone_has_origin_head(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    with pytest.raises(FatalError, match="is not a branch name"):
        sync("v1.5.1", "0.2.0", token=None, dry_run=True, base="HEAD")
    assert sync.build.calls == []


# -- review findings: preflight, unexpected failures after the push --------------------------


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


# -- review findings: a failed label is a warning --------------------------------------------


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


# -- review findings: versions used elsewhere, relabelling -----------------------------------


def test_with_keep_older_the_version_of_another_open_sync_branch_is_refused(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    sync("v1.5.1", "0.5.0")  # open PR for SHA_OLD as 0.5.0, not merged
    refs_before, writes_before = branches(remote), len(writes(fake))
    with pytest.raises(
        FatalError,
        match=rf"0\.5\.0 was already used on the sync branch {branch_of(SHA_OLD)} "
        rf"for ExecuTorch {SHA_OLD[:12]}",
    ):
        sync("main", "0.5.0", keep_older=True)
    assert branches(remote) == refs_before and len(writes(fake)) == writes_before
    assert len(sync.check.checked) == 1


def _tag_side_commit(remote: Path, work: Path, tag: str, version: str, pin: str) -> None:
    """A commit off main (a release branch nobody merged) with `version` for `pin`, tagged."""
    git("clone", "--quiet", str(remote), str(work))
    git("checkout", "--quiet", "-b", "release", cwd=work)
    (work / "library.properties").write_text(f"name=ExecuTorch\nversion={version}\n")
    (work / "executorch_pin.txt").write_text(pin + "\n")
    git("add", "-A", cwd=work)
    git("commit", "--quiet", "-m", "release", cwd=work)
    git("tag", "-a", "-m", "release", tag, cwd=work)
    git("push", "--quiet", "origin", f"refs/tags/{tag}", cwd=work)


def test_version_carried_by_a_tag_for_another_pin_is_refused(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    _tag_side_commit(remote, tmp_path / "rel", "release-2024", "0.2.0", "a" * 40)
    refs_before = branches(remote)
    with pytest.raises(
        FatalError, match=r"0\.2\.0 was already used at tag release-2024 for ExecuTorch a{12}"
    ):
        sync("v1.5.1", "0.2.0")
    assert branches(remote) == refs_before and writes(fake) == []
    # the same tag for the same pin is no reuse
    assert sync("v1.5.1", "0.2.1").status == "opened"


def test_version_tagged_without_v_is_refused(sync: Runner, fake: FakeGitHub, remote: Path) -> None:
    git("tag", "0.2.0", "main", cwd=remote)
    with pytest.raises(FatalError, match=r"already released as tag 0\.2\.0;.*0\.2\.1"):
        sync("v1.5.1", "0.2.0")
    assert writes(fake) == []


def test_published_pin_is_never_relabelled(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    first = sync("v1.5.1", "0.2.0")
    merge_into_main(remote, first.branch, tmp_path / "merge")
    sync.build.extra = {"src/new_header.h": "#pragma once\n"}  # generator changed, same pin
    refs_before, writes_before = branches(remote), len(writes(fake))
    for version in ("0.2.1", None):  # explicit, and derived from version.txt (1.5.1)
        with pytest.raises(
            FatalError,
            match=rf"ExecuTorch {SHA_OLD[:12]} is already published on main as library version "
            r"0\.2\.0; published sources are never relabelled.*--library-version 0\.2\.0",
        ):
            sync("v1.5.1", version)
    assert branches(remote) == refs_before and len(writes(fake)) == writes_before
    assert sync("v1.5.1", "0.2.0").status == "opened"


# -- review findings: a maintainer's commits on the sync branch ------------------------------


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


# -- review findings: the committed check report is stable -----------------------------------


@dataclass
class _VolatileReport(FakeReport):
    """A report with what a real one has that changes from run to run."""

    library: Path = Path("/nowhere")
    run: int = 0

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data |= {
            "library": str(self.library),
            "seconds": 12.5 + self.run,
            "cache": {"hits": self.run, "misses": 3 - self.run, "failures": 0},
            "model_check": {"library": str(self.library), "passed": True},
        }
        example = data["examples"][0]
        example["seconds"] = 3.25 + self.run
        example["stages"] = [
            {
                "stage": "compile",
                "status": "pass",
                "summary": "compiled",
                "details": f"{self.library}/src/executorch/runtime/core/evalue.h: ok",
            },
            {
                "stage": "sizes",
                "status": "pass",
                "summary": "measured",
                "details": f"objects from {default_cache_dir()}/objects/ab.o",
            },
        ]
        for run in example["runs"]:
            run["seconds"] = 0.5 + self.run
        return data


def test_committed_report_drops_times_cache_counts_and_paths(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    runs = iter(range(2))

    def volatile_check(library: Path, options: Any) -> _VolatileReport:
        return _VolatileReport(True, 100_000, 20_000, library=library, run=next(runs))

    sync.check = volatile_check  # type: ignore[assignment]
    first = sync("v1.5.1", "0.2.0")
    before = branches(remote)[first.branch]
    second = sync("v1.5.1", "0.2.0")

    assert second.status == "updated"
    assert branches(remote)[first.branch] == before  # nothing new to push
    report = report_in(remote, first.branch)
    text = show(remote, first.branch, "extras/check_report.json")
    assert "seconds" not in text and '"cache"' not in text and "hits" not in text
    assert str(sync.tmp_path) not in text and "/tmp" not in text
    assert report["library"] == "." and report["model_check"]["library"] == "."
    stage = report["examples"][0]["stages"][0]
    assert stage["details"] == "./src/executorch/runtime/core/evalue.h: ok"
    assert report["examples"][0]["stages"][1]["details"] == "objects from <cache>/objects/ab.o"
    assert report["examples"][0]["sizes"] == {"flash": 100_000, "ram": 20_000}


def test_indented_version_line_on_the_base_counts_as_used(
    spec: GitHubSpec, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    remote = make_library_remote(
        tmp_path / "remote",
        {
            "library.properties": "name=ExecuTorch\r\n  version=0.2.0\r\n",
            "executorch_pin.txt": "b" * 40 + "\n",
        },
    )
    with FakeGitHub(spec, OWNER, NAME, TOKEN, git_dir=remote) as fake:
        with pytest.raises(FatalError, match=r"0\.2\.0 was already used on main for ExecuTorch b"):
            Runner(fake, remote, tmp_path)("v1.5.1", "0.2.0")
        assert writes(fake) == []
        fake.assert_clean()


# -- the pull request lifecycle: superseded and closed pull requests -------------------------

COMMENT_NEW = f"Superseded by #2 (ExecuTorch {SHA_NEW[:12]}, library 0.3.0)"


def test_new_sync_closes_the_older_sync_pr_with_a_comment_and_deletes_its_branch(
    sync: Runner, fake: FakeGitHub, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = sync("v1.5.1", "0.2.0")
    capsys.readouterr()
    new = sync("main", "0.3.0")

    assert new.status == "opened" and new.pull is not None and new.pull.number == 2
    assert new.superseded == [1]
    assert [(p.number, p.state, p.merged) for p in fake.pulls.values()] == [
        (1, "closed", False),
        (2, "open", False),
    ]
    assert fake.pulls[1].comments == [COMMENT_NEW]
    assert fake.pulls[2].comments == []
    assert set(branches(remote)) == {"main", new.branch}  # old.branch deleted
    # only once the new pull request stood
    calls = [r[:2] for r in fake.requests]
    opened = calls.index(("POST", f"/repos/{OWNER}/{NAME}/pulls"), 1)
    closed = calls.index(("PATCH", f"/repos/{OWNER}/{NAME}/pulls/1"))
    assert opened < closed
    out = capsys.readouterr().out
    assert f"closed superseded pull request #1 and deleted its branch {old.branch}" in out


def test_an_older_open_sync_pr_does_not_block_the_version_it_is_superseded_with(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    sync("v1.5.1", "0.5.0")  # open, never merged, so 0.5.0 was never published
    new = sync("main", "0.5.0")
    assert new.status == "opened" and new.superseded == [1]
    assert fake.pulls[1].state == "closed"
    assert fake.pulls[1].comments == [
        f"Superseded by #2 (ExecuTorch {SHA_NEW[:12]}, library 0.5.0)"
    ]


def test_keep_older_leaves_the_older_sync_pr_and_its_branch(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    old = sync("v1.5.1", "0.2.0")
    new = sync("main", "0.3.0", keep_older=True)
    assert new.status == "opened" and new.superseded == []
    assert [p.state for p in fake.pulls.values()] == ["open", "open"]
    assert fake.pulls[1].comments == []
    assert set(branches(remote)) == {"main", old.branch, new.branch}


def test_older_sync_prs_stay_open_when_the_new_pr_fails(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    old = sync("v1.5.1", "0.2.0")
    fake.fail("POST", PULLS, 422, times=1)
    with pytest.raises(FatalError, match="answered 422"):
        sync("main", "0.3.0")
    assert [(p.number, p.state, p.comments) for p in fake.pulls.values()] == [(1, "open", [])]
    assert set(branches(remote)) == {"main", old.branch}


def test_sync_prs_into_another_base_are_not_superseded(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    git("branch", "release-1.5", "main", cwd=remote)
    old = sync("v1.5.1", "0.2.0", base="release-1.5")
    new = sync("main", "0.3.0")
    assert new.superseded == []
    assert [(p.base, p.state) for p in fake.pulls.values()] == [
        ("release-1.5", "open"),
        ("main", "open"),
    ]
    assert old.branch in branches(remote)


def test_failing_to_close_an_older_pr_is_a_warning(
    sync: Runner, fake: FakeGitHub, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = sync("v1.5.1", "0.2.0")
    fake.fail("PATCH", r"/pulls/1$", 403, times=99)
    capsys.readouterr()
    new = sync("main", "0.3.0")
    assert new.status == "opened" and new.superseded == []
    assert [(p.number, p.state) for p in fake.pulls.values()] == [(1, "open"), (2, "open")]
    assert fake.pulls[1].comments == []
    assert set(branches(remote)) == {"main", old.branch, new.branch}  # not deleted either
    err = capsys.readouterr().err
    assert "warning: could not close the superseded pull request #1: could not close" in err
    assert "answered 403" in err


def test_failing_to_comment_or_delete_the_branch_is_a_warning(
    sync: Runner, fake: FakeGitHub, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = sync("v1.5.1", "0.2.0")
    fake.fail("POST", r"/issues/1/comments$", 403, times=99)
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\nwhile read old new ref; do\n"
        '  case "$new" in 0000000000000000000000000000000000000000)\n'
        '    echo "deleting branches is not allowed here" >&2; exit 1;;\n'
        "  esac\ndone\n"
    )
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    capsys.readouterr()
    new = sync("main", "0.3.0")
    assert new.status == "opened" and new.superseded == [1]
    assert fake.pulls[1].state == "closed" and fake.pulls[1].comments == []
    assert old.branch in branches(remote)
    err = capsys.readouterr().err
    assert "warning: closed superseded pull request #1 without a comment" in err
    assert "warning: closed superseded pull request #1 but could not delete its branch" in err
    assert "deleting branches is not allowed here" in err


def test_a_comment_that_failed_with_5xx_is_posted_once(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    sync("v1.5.1", "0.2.0")
    fake.fail("POST", r"/issues/1/comments$", 502, times=1)
    sync("main", "0.3.0")
    assert fake.pulls[1].comments == [COMMENT_NEW]
    assert sync.sleeps == [1.0]


def test_older_branch_pushed_to_since_the_clone_is_kept(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = sync("v1.5.1", "0.2.0")
    work = tmp_path / "bot-elsewhere"
    git("clone", "--quiet", "--branch", old.branch, str(remote), str(work))
    git(
        "commit",
        "--quiet",
        "--allow-empty",
        "-m",
        "again",
        cwd=work,
        env={"GIT_AUTHOR_NAME": DEFAULT_BOT_NAME, "GIT_AUTHOR_EMAIL": DEFAULT_BOT_EMAIL},
    )
    real_check = sync.check

    def check_then_someone_pushes(library: Path, options: Any) -> FakeReport:
        git("push", "--quiet", "origin", old.branch, cwd=work)  # after sync cloned
        return real_check(library, options)

    sync.check = check_then_someone_pushes  # type: ignore[assignment]
    capsys.readouterr()
    new = sync("main", "0.3.0")
    assert new.superseded == [1] and fake.pulls[1].state == "closed"
    assert branches(remote)[old.branch] == git("rev-parse", "HEAD", cwd=work)
    err = capsys.readouterr().err
    assert "could not delete its branch" in err and "stale info" in err


def test_older_branch_with_a_maintainers_commits_is_kept(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = sync("v1.5.1", "0.2.0")
    work = tmp_path / "maintainer"
    git("clone", "--quiet", "--branch", old.branch, str(remote), str(work))
    git("commit", "--quiet", "--allow-empty", "-m", "Note for the reviewers", cwd=work)
    git("push", "--quiet", "origin", old.branch, cwd=work)
    capsys.readouterr()
    new = sync("main", "0.3.0")
    assert new.superseded == [1] and fake.pulls[1].comments == [COMMENT_NEW]
    assert old.branch in branches(remote)
    assert "kept its branch" in capsys.readouterr().err


def test_a_pr_closed_without_merging_is_not_recreated(
    sync: Runner, fake: FakeGitHub, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = sync("v1.5.1", "0.2.0")
    fake.close(1, by="octo-maintainer")
    refs_before, writes_before = branches(remote), len(writes(fake))
    sync.check.flash = 100_500  # something new to push, were it not declined
    capsys.readouterr()

    result = sync("v1.5.1", "0.2.0")

    assert result.status == "closed" and result.closed is not None
    assert result.closed.number == 1 and result.closed.closed_by == "octo-maintainer"
    out = capsys.readouterr().out
    assert (
        f"pull request #1 (https://github.example/{OWNER}/{NAME}/pull/1) for {first.branch} "
        f"(ExecuTorch {SHA_OLD[:12]}, library 0.2.0) was closed without merging by "
        "octo-maintainer on 2026-01-01 00:00 UTC; not recreating it. Pass --recreate" in out
    )
    assert branches(remote) == refs_before and len(writes(fake)) == writes_before
    assert len(sync.check.checked) == 1  # not checked again
    assert [p.state for p in fake.pulls.values()] == ["closed"]


def test_recreate_opens_a_new_pr_for_a_closed_one(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    sync("v1.5.1", "0.2.0")
    fake.close(1)
    sync.check.flash = 100_500
    result = sync("v1.5.1", "0.2.0", recreate=True)
    assert result.status == "opened" and result.pull is not None and result.pull.number == 2
    assert [(p.number, p.state) for p in fake.pulls.values()] == [(1, "closed"), (2, "open")]
    assert "100,500 B" in fake.pulls[2].body
    # once recreated, the open one is the last word: later syncs update it
    assert sync("v1.5.1", "0.2.0").status == "updated"


def test_a_merged_pr_is_not_closed_without_merging(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    first = sync("v1.5.1", "0.2.0")
    merge_into_main(remote, first.branch, tmp_path / "merge")
    sync.build.extra = {"src/new_header.h": "#pragma once\n"}  # same pin, new sources
    result = sync("v1.5.1", "0.2.0")
    assert result.status == "opened" and result.closed is None
    assert [(p.state, p.merged) for p in fake.pulls.values()] == [
        ("closed", True),
        ("open", False),
    ]


# -- versions against what is published ------------------------------------------------------


def test_version_lower_than_a_published_one_is_refused_before_any_push(
    spec: GitHubSpec, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    remote = make_library_remote(
        tmp_path / "remote",
        {
            "library.properties": "name=ExecuTorch\nversion=1.6.0\n",
            "executorch_pin.txt": "c" * 40 + "\n",
        },
    )
    git("tag", "v1.6.0", "main", cwd=remote)
    with FakeGitHub(spec, OWNER, NAME, TOKEN, git_dir=remote) as fake:
        runner = Runner(fake, remote, tmp_path)
        runner.build.refs["v1.5.0"] = (SHA_OLD, "1.5.0", ["aten::add.out"])
        refs_before = branches(remote)
        with pytest.raises(
            FatalError,
            match=r"library version 1\.5\.0 is not greater than 1\.6\.0, already published "
            r"\(tag v1\.6\.0, version= on main\).*pass --library-version 1\.6\.1$",
        ):
            runner("v1.5.0")  # derived from version.txt
        assert branches(remote) == refs_before and writes(fake) == []
        assert runner.check.checked == []
        assert runner("v1.5.0", "1.6.1").status == "opened"
        fake.assert_clean()


def test_prerelease_below_a_published_one_suggests_the_next_prerelease(
    spec: GitHubSpec, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    remote = make_library_remote(
        tmp_path / "remote",
        {"library.properties": "version=1.5.1\n", "executorch_pin.txt": "c" * 40 + "\n"},
    )
    git("tag", "v1.6.0-alpha.0", "main", cwd=remote)
    git("tag", "v1.6.0-beta.0", "main", cwd=remote)
    with FakeGitHub(spec, OWNER, NAME, TOKEN, git_dir=remote) as fake:
        runner = Runner(fake, remote, tmp_path)
        with pytest.raises(
            FatalError,
            match=r"1\.6\.0-alpha\.1 is not greater than 1\.6\.0-beta\.0, already published "
            r"\(tag v1\.6\.0-beta\.0\).*--library-version 1\.6\.0-beta\.1$",
        ):
            runner("main", "1.6.0-alpha.1")
        assert writes(fake) == []
        fake.assert_clean()


# -- the Actions GITHUB_TOKEN: CI does not run on the pull request ---------------------------


def test_workflow_token_note_is_in_the_body_and_appended_to_the_step_summary(
    sync: Runner, fake: FakeGitHub, tmp_path: Path
) -> None:
    summary = tmp_path / "step_summary.md"
    summary.write_text("## an earlier step\n")
    sync("v1.5.1", "0.2.0", workflow_token=True, step_summary=summary)
    body = fake.pulls[1].body
    top = body.split("Regenerates the library", 1)[0]
    assert top.startswith("> [!WARNING]\n> **CI did not run on this pull request:**")
    for part in ("`SYNC_APP_ID`", "`SYNC_APP_PRIVATE_KEY`", "`SYNC_TOKEN`", "close and reopen"):
        assert part in top
    assert "contents: write and pull-requests: write" in top
    text = summary.read_text()
    assert text.startswith("## an earlier step\n### Sync pull request [#1](")
    assert "**CI did not run on this pull request:**" in text and "`SYNC_TOKEN`" in text


def test_without_workflow_token_there_is_no_note(
    sync: Runner, fake: FakeGitHub, tmp_path: Path
) -> None:
    summary = tmp_path / "step_summary.md"
    sync("v1.5.1", "0.2.0", step_summary=summary)
    assert "CI did not run" not in fake.pulls[1].body
    assert not summary.exists()


def test_cli_passes_the_lifecycle_flags_and_the_step_summary(
    sync: Runner,
    fake: FakeGitHub,
    remote: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import generator.commands.sync as command

    seen: list[SyncOptions] = []

    def run_with_fakes(options: SyncOptions, token: str | None) -> SyncResult:
        seen.append(options)
        return run_sync(
            options,
            token,
            build=sync.build,
            check=sync.check,
            connect=lambda url, repo, tok: GitHubRepo(url, repo, tok, throttle=False),
        )

    monkeypatch.setattr(command, "run_sync", run_with_fakes)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    common = ["sync", "--repo", f"{OWNER}/{NAME}", "--remote", str(remote)]
    common += ["--api-url", fake.url, "--library-version", "0.2.0"]
    assert main([*common, "--executorch-ref", "v1.5.1", "--workflow-token"]) == 0
    assert "CI did not run" in fake.pulls[1].body and "CI did not run" in summary.read_text()
    fake.close(1)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    assert main([*common, "--executorch-ref", "v1.5.1"]) == 0  # closed: exit 0, nothing done
    assert "was closed without merging" in capsys.readouterr().out
    assert len(fake.pulls) == 1
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    assert main([*common, "--executorch-ref", "v1.5.1", "--recreate", "--keep-older"]) == 0
    assert [(o.recreate, o.keep_older, o.workflow_token) for o in seen] == [
        (False, False, True),
        (False, False, False),
        (True, True, False),
    ]
    assert all(o.step_summary == summary for o in seen)
    assert [p.state for p in fake.pulls.values()] == ["closed", "open"]


def test_dry_run_assumes_other_sync_branches_would_be_superseded(
    sync: Runner, fake: FakeGitHub, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sync("v1.5.1", "0.5.0")
    refs_before, requests_before = branches(remote), len(fake.requests)
    capsys.readouterr()
    result = sync("main", "0.5.0", token=None, dry_run=True)
    assert result.status == "dry-run"
    assert "and close the other open sync pull requests:" in capsys.readouterr().out
    assert branches(remote) == refs_before and len(fake.requests) == requests_before
    with pytest.raises(FatalError, match="already used on the sync branch"):
        sync("main", "0.5.0", token=None, dry_run=True, keep_older=True)


# -- inputs that must never reach the network or the repo ------------------------------------------


def test_remote_with_credentials_is_refused_and_never_shown(
    gitenv: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    secret = "pw-Secret-4711"
    for remote in (f"https://user:{secret}@example.invalid/acme/ExecuTorch.git",
                   f"https://{secret}@example.invalid/acme/ExecuTorch.git"):  # fmt: skip
        with pytest.raises(SystemExit) as exit_info:
            main(["sync", "--repo", "acme/ExecuTorch", "--dry-run", "--remote", remote])
        assert exit_info.value.code == 1
        captured = capsys.readouterr()
        assert secret not in captured.out + captured.err
        assert "--remote https://example.invalid/acme/ExecuTorch.git" in captured.err
        assert "GITHUB_TOKEN" in captured.err


@pytest.mark.parametrize(
    ("api_url", "refused"),
    [
        ("http://ghe.example.com/api/v3", True),
        ("http://10.0.0.7/api/v3", True),
        ("http://127.0.0.1:8080/api/v3", False),
        ("http://[::1]:8080/api/v3", False),
        ("http://localhost/api/v3", False),
        ("https://ghe.example.com/api/v3", False),
    ],
)
def test_plain_http_api_url_only_on_loopback(api_url: str, refused: bool) -> None:
    from generator.sync.inputs import check_api_url

    if refused:
        with pytest.raises(FatalError, match="clear text.*Use https"):
            check_api_url(api_url)
    else:
        check_api_url(api_url)


def test_a_library_that_fails_lint_opens_nothing(
    sync: Runner, fake: FakeGitHub, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sync.build.extra = {"examples/Broken/Other.ino": "void setup() {}\nvoid loop() {}\n"}
    before = git("for-each-ref", cwd=remote)
    with pytest.raises(FatalError, match="fails 1 error of the Library Manager's rules"):
        sync()
    assert "SS001" in capsys.readouterr().out  # the rule is named in the printed report
    assert sync.check.checked == []  # lint comes first
    assert git("for-each-ref", cwd=remote) == before and writes(fake) == []


def test_body_says_when_the_repos_workflows_differ_from_the_generators(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    from generator.workflows import WORKFLOWS_DIR, render_workflows, write_workflows

    first = sync("v1.5.1", "0.2.0")
    assert first.body is not None
    assert "The repo's workflows differ from this generator's" in first.body
    assert "`.github/workflows/sync.yml`" in first.body
    # A maintainer installs the generator's workflows; the next sync says nothing about them.
    work = tmp_path / "maintainer"
    git("clone", "-q", str(remote), str(work))
    write_workflows(work, render_workflows("https://github.com/acme/generator.git", "a" * 40))
    git("add", WORKFLOWS_DIR, cwd=work)
    git("commit", "-q", "-m", "install workflows", cwd=work)
    git("push", "-q", "origin", "main", cwd=work)
    second = sync("main", "0.3.0")
    assert second.body is not None
    assert "workflows differ" not in second.body
