"""Faults of trust, a killed run (issue 15, §2): `sync` and `release` killed at several points
(the build and staging, the push, the pull request) by SIGINT, SIGTERM or SIGKILL leave nothing
of theirs in the system's temporary folder once the next run is done, and the next run
succeeds. SIGINT and SIGTERM clean up at once; SIGKILL cannot be caught, so the next run
removes what the killed one left (its owner is dead) and says so.

Each killed run is a child process (its own session, so what it started can be ended too) with
`TMPDIR` pointing at a folder of the test; it runs sync against the test's fake GitHub and bare
remote, with the fake build and check, and waits at the chosen point until it is killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from github_fake import FakeGitHub
from sync_fixtures import NAME, OWNER, SHA_OLD, TOKEN, Runner, branch_of, branches, git

from generator.release.run import run_release
from generator.release.step import ReleaseOptions
from generator.util.tempdirs import process_start, remove_stale

ROOT = Path(__file__).resolve().parents[2]

#: The child: sync or release, waiting at POINT (writes READY first) until it is killed.
CHILD = """
import os, sys, time
from pathlib import Path

sys.path[:0] = [{root!r}, {tests!r}]
from sync_fixtures import REFS, TOKEN, FakeBuild, FakeCheck

from generator.release import step as r
from generator.release.run import run_release
from generator.util.errors import error_handler
from generator.pipeline.run import BuildOptions
from generator.release.step import ReleaseOptions
from generator.sync.run import SyncOptions, run_sync
from generator.vcs import git as g
from generator.sync.github import GitHubRepo

verb, point, ready, api_url, remote = sys.argv[1:6]


def wait_here(here):
    if here == point:
        Path(ready).write_text(str(os.getpid()))
        time.sleep(600)


build = FakeBuild(dict(REFS))


def staged_build(options, out):
    result = build(options, out)
    wait_here("build")
    return result


push = g.push_with_lease


def waiting_push(*args, **kwargs):
    wait_here("push")
    return push(*args, **kwargs)


g.push_with_lease = waiting_push
push_tag = r.push_tag


def waiting_push_tag(*args, **kwargs):
    wait_here("push")
    return push_tag(*args, **kwargs)


r.push_tag = waiting_push_tag


class Waiting(GitHubRepo):
    def open_or_update(self, *args, **kwargs):
        wait_here("pr")
        return super().open_or_update(*args, **kwargs)


with error_handler():
    if verb == "sync":
        options = SyncOptions(
            build=BuildOptions(executorch_ref="v1.5.1", library_version="0.2.0"),
            repo="acme/ExecuTorch",
            remote=remote,
            api_url=api_url,
        )
        connect = lambda url, repo, token: Waiting(url, repo, token, throttle=False)
        run_sync(options, TOKEN, build=staged_build, check=FakeCheck(), connect=connect)
    else:
        run_release(ReleaseOptions(repo="acme/ExecuTorch", remote=remote), TOKEN)
"""


def ours(folder: Path) -> list[str]:
    """Names in `folder` that sync or release made."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("executorch-"))


def start_and_kill(
    tmp_path: Path, verb: str, point: str, sig: signal.Signals, api_url: str, remote: Path
) -> tuple[Path, list[str], int, str]:
    """Run the child until it waits at `point`, send it `sig`, wait for it to end.

    Returns:
        The child's TMPDIR, what of ours was in it while it waited, its exit code and its
        stderr.
    """
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir(exist_ok=True)
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(root=str(ROOT), tests=str(ROOT / "tests" / "support")))
    ready = tmp_path / f"ready-{verb}-{point}"
    child = subprocess.Popen(
        [sys.executable, str(script), verb, point, str(ready), api_url, str(remote)],
        env={**os.environ, "TMPDIR": str(tmpdir)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    err = ""
    try:
        deadline = time.monotonic() + 90
        while not ready.exists():
            if child.poll() is not None or time.monotonic() > deadline:
                _, err = child.communicate(timeout=30)
                pytest.fail(f"the child did not reach {point} (exit {child.returncode}):\n{err}")
            time.sleep(0.05)
        during = ours(tmpdir)
        os.kill(child.pid, sig)
        # wait for the end without reaping the child, so its process group cannot be reused
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
    finally:
        # end anything the child started (its own session: this test started all of it)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        if child.returncode is None:
            err = child.communicate(timeout=60)[1]
    return tmpdir, during, child.returncode, err


def use_tmpdir(monkeypatch: pytest.MonkeyPatch, tmpdir: Path) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmpdir))


SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGKILL]
EXIT = {signal.SIGINT: 130, signal.SIGTERM: 128 + signal.SIGTERM, signal.SIGKILL: -9}


@pytest.mark.parametrize("point", ["build", "push", "pr"])
@pytest.mark.parametrize("sig", SIGNALS, ids=[s.name for s in SIGNALS])
def test_killed_sync_leaves_nothing_once_the_next_run_is_done(
    point: str,
    sig: signal.Signals,
    sync: Runner,
    fake: FakeGitHub,
    remote: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tmpdir, during, code, child_err = start_and_kill(tmp_path, "sync", point, sig, fake.url, remote)
    # the work folder (clone and build) and, once the build is done (issue 29: an untrusted
    # build must not find it), the askpass folder, named by the run's pid
    assert len(during) == (1 if point == "build" else 2), during
    assert {name.split("-")[1] for name in during} == {"sync"}
    askpass = any(name.startswith("executorch-sync-askpass-") for name in during)
    assert askpass == (point != "build")
    assert code == EXIT[sig], child_err
    left = ours(tmpdir)
    if sig == signal.SIGKILL:
        assert left == during  # nothing could run: the next run must clean up
    else:
        assert left == [], child_err  # cleaned up on the way out
    if point == "pr" and sig != signal.SIGKILL:
        # interrupted during the pull request: the push was undone
        assert branch_of(SHA_OLD) not in branches(remote), child_err
    assert fake.pulls == {}

    use_tmpdir(monkeypatch, tmpdir)
    capsys.readouterr()
    result = sync("v1.5.1", "0.2.0")
    assert result.status == "opened"
    err = capsys.readouterr().err
    for name in left:
        assert f"removed {tmpdir / name}, left behind by an earlier " in err
    assert "left behind" not in err or left
    assert list(tmpdir.iterdir()) == []
    assert [p.state for p in fake.pulls.values()] == ["open"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_killed_release_leaves_nothing_once_the_next_run_is_done(
    sig: signal.Signals,
    fake: FakeGitHub,
    remote: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seed = tmp_path / "seed"
    git("clone", "--quiet", str(remote), str(seed))
    (seed / "library.properties").write_text("name=ExecuTorch\nversion=0.2.0\n")
    git("add", "-A", cwd=seed)
    git("commit", "--quiet", "-m", "0.2.0", cwd=seed)
    git("push", "--quiet", "origin", "main", cwd=seed)
    tmpdir, during, code, child_err = start_and_kill(
        tmp_path, "release", "push", sig, fake.url, remote
    )
    assert len(during) == 2 and code == EXIT[sig], child_err
    assert git("tag", "--list", cwd=remote) == ""
    use_tmpdir(monkeypatch, tmpdir)
    said: list[str] = []
    options = ReleaseOptions(repo=f"{OWNER}/{NAME}", remote=str(remote))
    result = run_release(options, TOKEN, say=said.append, emit=lambda _: None)
    assert result.status == "released" and git("tag", "--list", cwd=remote) == "v0.2.0"
    removed = [line for line in said if line.startswith("removed ")]
    assert len(removed) == (2 if sig == signal.SIGKILL else 0)
    assert list(tmpdir.iterdir()) == []


def test_folders_of_live_runs_and_of_others_are_kept(tmp_path: Path) -> None:
    me = os.getpid()
    alive = tmp_path / f"executorch-sync-{me}-{process_start(me)}-abc123"
    reused = tmp_path / f"executorch-sync-{me}-{process_start(me) + 1}-abc123"
    dead = tmp_path / "executorch-release-999999999-0-abc123"
    unnamed = tmp_path / "executorch-sync-abc123"  # not named by a run: not ours to judge
    other = tmp_path / "something-else-999999999-0-x"
    for folder in (alive, reused, dead, unnamed, other):
        folder.mkdir()
        (folder / "file").write_text("x")
    link = tmp_path / "executorch-sync-999999998-0-link"
    link.symlink_to(other)
    said: list[str] = []
    removed = remove_stale(said.append, tmp_path)
    # this process's own folder is kept (it is running), even under a reused start time
    assert sorted(p.name for p in removed) == [dead.name]
    assert said == [
        f"removed {dead}, left behind by an earlier release run (pid 999999999) that was killed"
    ]
    assert alive.is_dir() and reused.is_dir() and unnamed.is_dir() and other.is_dir()
    assert link.is_symlink() and (other / "file").exists()


def test_a_reused_pid_does_not_keep_a_dead_runs_folder(tmp_path: Path) -> None:
    # pid 1 runs, but started at another time than the run that named the folder
    start = process_start(1)
    if not start:
        pytest.skip("no /proc/1/stat to read a start time from")
    stale = tmp_path / f"executorch-sync-1-{start + 12345}-abc123"
    stale.mkdir()
    assert remove_stale(lambda _: None, tmp_path) == [stale]
    assert not stale.exists()
