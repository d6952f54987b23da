"""Scenario tests of `sync`: the pull request lifecycle. A new sync closes the older sync pull
requests it supersedes (with a comment, deleting their branches) unless told to keep them; a
pull request closed without merging is not recreated unless told to.

A real bare git repo is the library remote, a local fake GitHub (validated against GitHub's
OpenAPI description) answers the API, a fake build writes a small library with the real
layout, and a fake check reports sizes (conftest.py, sync_fixtures.py).
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest
from github_fake import FakeGitHub
from sync_fixtures import (
    NAME,
    OWNER,
    PULLS,
    SHA_NEW,
    SHA_OLD,
    TOKEN,
    FakeReport,
    Runner,
    branches,
    git,
    merge_into_main,
    writes,
)

from generator.cli.main import main
from generator.sync.github import GitHubRepo
from generator.sync.run import SyncOptions, SyncResult, run_sync
from generator.util.errors import FatalError
from generator.vcs.git import DEFAULT_BOT_EMAIL, DEFAULT_BOT_NAME

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


# -- closed pull requests ---------------------------------------------------------------------


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


def test_cli_passes_the_lifecycle_flags_and_the_step_summary(
    sync: Runner,
    fake: FakeGitHub,
    remote: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import generator.sync.run as command

    seen: list[SyncOptions] = []

    def run_with_fakes(options: SyncOptions, token: str | None, **_: object) -> SyncResult:
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


def test_a_sync_pr_opened_meanwhile_is_superseded_by_the_later_one(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    """Two refs synced at once (sync.yml runs one group per ref): the one that opens its pull
    request first is closed by the other, so they never pile up."""
    check = sync.check
    inner: list[SyncResult] = []

    def check_while_another_sync_finishes(library: Path, options: Any) -> Any:
        if not inner and sync.runs == 1:
            inner.append(sync("v1.5.1", "0.2.0"))  # started later, finishes first
        return check(library, options)

    sync.check = check_while_another_sync_finishes  # type: ignore[assignment]
    outer = sync("main", "0.3.0")
    (first,) = inner
    assert first.pull is not None and first.pull.number == 1 and first.superseded == []
    assert outer.pull is not None and outer.pull.number == 2 and outer.superseded == [1]
    assert [(p.number, p.state) for p in fake.pulls.values()] == [(1, "closed"), (2, "open")]
    assert set(branches(remote)) == {"main", outer.branch}  # fetched, then deleted


def test_a_sync_pr_opened_while_this_one_builds_loses_its_branch_too(
    sync: Runner, fake: FakeGitHub, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The other sync opens its pull request after this one cloned the library repo but
    before it lists the open pull requests: its branch is not in this clone, and was left on
    the remote with no word (the schedule then stopped quietly while it existed)."""
    build = sync.build
    inner: list[SyncResult] = []

    def build_while_another_sync_finishes(options: Any, out: Path) -> Any:
        if not inner and sync.runs == 1:
            inner.append(sync("v1.5.1", "0.2.0"))  # started later, finishes first
        return build(options, out)

    sync.build = build_while_another_sync_finishes  # type: ignore[assignment]
    outer = sync("main", "0.3.0")
    (first,) = inner
    assert first.pull is not None and first.pull.number == 1
    assert outer.superseded == [1]
    assert [(p.number, p.state) for p in fake.pulls.values()] == [(1, "closed"), (2, "open")]
    assert set(branches(remote)) == {"main", outer.branch}
    assert f"deleted its branch {first.branch}" in capsys.readouterr().out
