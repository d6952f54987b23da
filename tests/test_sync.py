"""Scenario tests of `sync`: a real bare git repo is the library remote, a local fake GitHub
(validated against GitHub's OpenAPI description) answers the API, a fake build writes a small
library with the real layout, and a fake check reports sizes."""

from __future__ import annotations

import socket
import stat
from collections.abc import Iterator
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
            repo=f"{OWNER}/{NAME}",
            remote=options.pop("remote", str(self.remote)),
            api_url=options.pop("api_url", self.fake.url),
            **options,
        )
        return run_sync(
            opts,
            token,
            build=self.build,
            check=self.check,
            connect=lambda url, repo, tok: GitHubRepo(
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
    with pytest.raises(FatalError, match=r"already released as tag v1\.6\.0-alpha\.0.*1\.6\.1"):
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
