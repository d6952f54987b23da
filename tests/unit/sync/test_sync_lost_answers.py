"""Sync's undo when GitHub's or git's answer is lost (found by a reviewer): a pull request
GitHub opened although its answer was a 5xx, a lost connection or a retry's 422 "already
exists" keeps its branch (deleting it would close the pull request, and the next sync would
take that for a maintainer's refusal); a push the remote took although git reported a failure
is undone like any push, never left without a pull request.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest
from github.GithubException import GithubException
from github.Repository import Repository
from sync_fixtures import SHA_OLD, Runner, branch_of, branches

from generator.sync.github import GitHubRepo
from generator.util.errors import FatalError


class _LookupFails(GitHubRepo):
    """find_open_pull works for open_or_update's first look, then fails (network/5xx)."""

    looks = 0

    def find_open_pull(self, branch: str, base: str) -> Any:
        type(self).looks += 1
        if type(self).looks >= 2:
            raise FatalError("could not list the open pull requests: cannot reach the API")
        return super().find_open_pull(branch, base)


def test_pr_created_but_answer_lost_keeps_its_branch(
    sync: Runner, fake: Any, remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Repository.create_pull

    def created_then_502(self: Repository, *a: Any, **kw: Any) -> Any:
        real(self, *a, **kw)  # GitHub created it ...
        raise GithubException(502, {"message": "Server Error"}, {})  # ... answer lost

    monkeypatch.setattr(Repository, "create_pull", created_then_502)
    _LookupFails.looks = 0
    sync.repo_class = _LookupFails
    with pytest.raises(FatalError) as info:
        sync("v1.5.1", "0.2.0")
    assert [p.state for p in fake.pulls.values()] == ["open"]
    assert branch_of(SHA_OLD) in branches(remote), "the open PR's branch was deleted"
    assert "could not tell whether the pull request" in str(info.value)
    assert "kept the pushed branch" in str(info.value)


def test_final_attempt_502_that_created_the_pull(
    sync: Runner, fake: Any, remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every try answers 502; the last one created the pull request (no look after it)."""
    real = Repository.create_pull
    tries = []

    def flaky(self: Repository, *a: Any, **kw: Any) -> Any:
        tries.append(1)
        if len(tries) >= 5:  # attempts=5 (GitHubRepo's default)
            real(self, *a, **kw)
        raise GithubException(502, {"message": "Server Error"}, {})

    monkeypatch.setattr(Repository, "create_pull", flaky)
    with pytest.raises(FatalError) as info:
        sync("v1.5.1", "0.2.0")
    deleted = branch_of(SHA_OLD) not in branches(remote)
    assert "stands with the pushed branch" in str(info.value)
    again = sync("v1.5.1", "0.2.0")
    assert not deleted, "the open PR's branch was deleted; next run: " + again.status
    assert again.status == "updated" and len(fake.pulls) == 1


class _ListLags(GitHubRepo):
    """The pulls listing lags right after a create (the look between tries sees nothing)."""

    looks = 0

    def find_open_pull(self, branch: str, base: str) -> Any:
        type(self).looks += 1
        if type(self).looks == 2:
            return None  # the "landed" look, before the listing shows the new pull request
        return super().find_open_pull(branch, base)


def test_502_then_422_already_exists(
    sync: Runner, fake: Any, remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """POST creates but answers 502; the look misses it; the retry gets 422 'already exists'."""
    real = Repository.create_pull
    tries = []

    def first_lost(self: Repository, *a: Any, **kw: Any) -> Any:
        tries.append(1)
        created = real(self, *a, **kw)
        if len(tries) == 1:
            raise GithubException(502, {"message": "Server Error"}, {})
        return created

    monkeypatch.setattr(Repository, "create_pull", first_lost)
    _ListLags.looks = 0
    sync.repo_class = _ListLags
    with pytest.raises(FatalError) as info:
        sync("v1.5.1", "0.2.0")
    deleted = branch_of(SHA_OLD) not in branches(remote)
    assert "stands with the pushed branch" in str(info.value)
    again = sync("v1.5.1", "0.2.0")
    assert not deleted, "the open PR's branch was deleted; next run: " + again.status
    assert again.status == "updated" and len(fake.pulls) == 1


def test_push_that_landed_without_its_report(sync: Runner, fake: Any, remote: Path) -> None:
    hook = remote / "hooks" / "reference-transaction"
    hook.write_text('#!/bin/sh\nif [ "$1" = committed ]; then kill -9 $PPID; fi\n')
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(FatalError) as info:
        sync("v1.5.1", "0.2.0")
    left = branch_of(SHA_OLD) in branches(remote) and not fake.pulls
    # the hook drops the restoring push's answer too: git says it failed, the remote took it
    assert "could not push" in str(info.value) and "pushed for it" in str(info.value)
    hook.unlink()
    again = sync("v1.5.1", "0.2.0")
    assert not left, "a pushed branch without a pull request (until the next run)"
    assert again.status == "opened"
