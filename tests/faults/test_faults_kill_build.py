"""Trust under faults (issue 15): a build stopped at any point (SIGKILL, SIGINT, SIGTERM, sent
to its whole process group as a terminal or a CI runner does) leaves nothing that breaks the
next one, which succeeds and writes a tree byte-identical to an uninterrupted build's.

Each stopped run is `python -m generator build` paused at a point of the pipeline: inside
git's checkout of ExecuTorch while git holds the index lock (an `uploadpack.packObjectsHook`
sleeps in the lazy blob fetch the checkout makes), in git's first fetch, between two codegen
scripts, in the middle of following includes (vendoring), and between the two renames that
move the library into place (staging). The run signals readiness through a file, then the
test sends the signal.
"""

from __future__ import annotations

import hashlib
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from et_fixture import Upstream, make_upstream

REPO_ROOT = Path(__file__).resolve().parents[2]

#: Run by the stopped build's interpreter: pause at FAULT_POINT ("module:function:N", the Nth
#: call; "staging": the second rename of `move_into_place`), then run the CLI.
HARNESS = r"""
import importlib, os, sys, time
from pathlib import Path

ready = Path(os.environ["FAULT_READY"])
point = os.environ.get("FAULT_POINT", "")

def pause():
    ready.write_text(str(os.getpid()))
    time.sleep(300)

def pause_at(target, nth, real):
    calls = [0]
    def paused(*args, **kwargs):
        calls[0] += 1
        if calls[0] == nth:
            pause()
        return real(*args, **kwargs)
    return paused

if point == "staging":
    import generator.pipeline.output as staging
    class PausingOs:
        def __getattr__(self, name):
            return getattr(os, name)
    PausingOs.replace = staticmethod(pause_at("replace", 2, os.replace))
    staging.os = PausingOs()
elif point:
    module, name, nth = point.split(":")
    mod = importlib.import_module(module)
    setattr(mod, name, pause_at(name, int(nth), getattr(mod, name)))

from generator.cli.main import main
sys.exit(main(sys.argv[1:]))
"""

#: `uploadpack.packObjectsHook`: the upstream's side of a fetch sleeps once, in the fetch
#: made while the ExecuTorch clone's index is locked (FAULT_HOOK=checkout: the blobs of
#: `git checkout`) or in the first fetch (FAULT_HOOK=fetch).
HOOK = """#!/bin/sh
if [ ! -e "$FAULT_READY" ]; then
  case "$FAULT_HOOK" in
    fetch) echo hook > "$FAULT_READY"; sleep 300;;
    checkout)
      for lock in "$FAULT_CACHE"/repos/*executorch*/.git/index.lock; do
        if [ -e "$lock" ]; then echo hook > "$FAULT_READY"; sleep 300; fi
      done;;
  esac
fi
exec "$@"
"""

POINTS = {
    "fetch": "",
    "checkout": "",
    "codegen": "generator.pipeline.codegen:_run:2",
    "vendoring": "generator.pipeline.vendor:_copy_et:5",
    "staging": "staging",
}
SIGNALS = {"SIGKILL": signal.SIGKILL, "SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM}


def tree(root: Path) -> dict[str, str]:
    """Every file below `root` (relative path -> SHA-256 of its bytes)."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _build_args(out: Path, cache: Path) -> list[str]:
    return ["build", "--out", str(out), "--cache-dir", str(cache)]


def build(up: Upstream, out: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    """An uninterrupted `python -m generator build`."""
    return subprocess.run(
        [sys.executable, "-m", "generator", *_build_args(out, cache)],
        cwd=REPO_ROOT,
        env={**os.environ, **up.env()},
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
        timeout=600,
    )


@pytest.fixture(scope="module")
def upstream_once(tmp_path_factory: pytest.TempPathFactory) -> Upstream:
    return make_upstream(tmp_path_factory.mktemp("kill"))


@pytest.fixture(scope="module")
def reference(upstream_once: Upstream, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The tree of an uninterrupted build on a cold cache."""
    root = tmp_path_factory.mktemp("reference")
    done = build(upstream_once, root / "out" / "ExecuTorch", root / "cache")
    assert done.returncode == 0, done.stderr
    return tree(root / "out" / "ExecuTorch")


def stop_a_build(
    up: Upstream, tmp_path: Path, point: str, sig: signal.Signals, out: Path, cache: Path
) -> str:
    """Start a build, wait until it pauses at `point`, send `sig` to its process group, and
    return what it printed on stderr."""
    ready = tmp_path / "ready"
    env = {**os.environ, **up.env(), "FAULT_READY": str(ready), "FAULT_CACHE": str(cache)}
    if point in ("fetch", "checkout"):
        hook = tmp_path / "pack-objects-hook"
        hook.write_text(HOOK)
        hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
        config = tmp_path / "gitconfig"
        config.write_text(
            f"[include]\n\tpath = {up.gitconfig}\n[uploadpack]\n\tpackObjectsHook = {hook}\n"
        )
        env.update(GIT_CONFIG_GLOBAL=str(config), FAULT_HOOK=point)
    else:
        env["FAULT_POINT"] = POINTS[point]
    proc = subprocess.Popen(
        [sys.executable, "-c", HARNESS, *_build_args(out, cache)],
        cwd=REPO_ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: git and the hook are stopped too
    )
    try:
        deadline = time.monotonic() + 300
        while not ready.exists():
            if proc.poll() is not None:
                pytest.fail(f"the build ended before {point}: {proc.stderr.read()}")  # type: ignore[union-attr]
            if time.monotonic() > deadline:
                pytest.fail(f"the build never reached {point}")
            time.sleep(0.05)
        os.killpg(proc.pid, sig)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == -sig or proc.returncode == 128 + sig or proc.returncode == 130, (
        proc.returncode,
        err,
    )
    return err


@pytest.mark.parametrize("sig", list(SIGNALS))
@pytest.mark.parametrize("point", list(POINTS))
def test_a_stopped_build_leaves_nothing_that_breaks_the_next(
    point: str,
    sig: str,
    tmp_path: Path,
    upstream_once: Upstream,
    reference: dict[str, str],
) -> None:
    out = tmp_path / "out" / "ExecuTorch"
    cache = tmp_path / "cache"
    if point == "staging":
        first = build(upstream_once, out, cache)  # a previous library to be replaced
        assert first.returncode == 0, first.stderr
    err = stop_a_build(upstream_once, tmp_path, point, SIGNALS[sig], out, cache)
    if sig == "SIGINT":
        assert "interrupted" in err and "Traceback" not in err
    clone = next((cache / "repos").glob("*executorch*"), None) if point != "fetch" else None
    if point == "checkout" and sig == "SIGKILL":
        # The case: git was killed holding the index lock.
        assert clone is not None and (clone / ".git" / "index.lock").exists()

    again = build(upstream_once, out, cache)
    assert again.returncode == 0, again.stderr
    assert tree(out) == reference
    # Nothing of the stopped run is left beside the library.
    assert sorted(p.name for p in out.parent.iterdir()) == ["ExecuTorch"]
    if point == "checkout" and sig == "SIGKILL":
        assert "removed .git/index.lock" in again.stderr
    assert clone is None or not list(clone.glob(".git/**/*.lock"))
