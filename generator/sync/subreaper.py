"""Ending every process the unprivileged prepare phase of a plain `sync` started (issue 29).

The prepare child runs in its own session and its process group is killed when it ends
(`generator.sync.stage.run_prepare_child`), but a process may leave that group: a double
fork and `setsid()` make a daemon in a session of its own, which `killpg` misses and which
could then read `/proc/<pid>/environ` of the git processes that later hold the token (execve
makes a process dumpable again). So the parent becomes a child subreaper first
(`make_subreaper`: prctl(2) `PR_SET_CHILD_SUBREAPER`): every orphan among the child's
descendants is re-parented to it instead of to init, and `end_orphans` kills each of them
(their own children are re-parented in turn, and killed in the next pass) until none is left.

What this does not close, for a child of the same user: a process started outside the tree
(a `systemd-run --user` unit, an `at` or cron job, a terminal multiplexer's server already
running, `ssh localhost`) survives, and so do files the child wrote that the parent later
runs or reads (its own sources, a `git` earlier on PATH, Python's user site). Only the
workflow's separate jobs, on separate machines, keep the token from such code.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from pathlib import Path

from generator.util.errors import FatalError

#: prctl(2): make this process the reaper of its descendants' orphans.
PR_SET_CHILD_SUBREAPER = 36
#: How long `end_orphans` keeps killing before it gives up (seconds).
END_TIMEOUT = 30.0


def make_subreaper() -> bool:
    """Make this process a child subreaper (Linux `prctl(PR_SET_CHILD_SUBREAPER, 1)`).

    Returns:
        Whether it is one now (False off Linux or where prctl is not available).
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return False
    return bool(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


def children(pid: int | None = None) -> set[int]:
    """The processes whose parent is `pid` (default: this process), from `/proc/<n>/stat`
    (field 4, ppid; proc(5)); zombies included. Empty where there is no /proc."""
    parent = os.getpid() if pid is None else pid
    found = set()
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue  # gone meanwhile
            if int(fields[1]) == parent:
                found.add(int(entry))
    return found


def end_orphans(keep: set[int], timeout: float = END_TIMEOUT) -> list[int]:
    """SIGKILL and reap every child of this process but `keep` (the children it had before the
    prepare child started), again and again until a pass finds none: each killed process's
    own children are re-parented here (`make_subreaper`) and found in the next pass.

    Returns:
        The processes killed.
    Raises:
        FatalError: some still appear after `timeout` seconds (nothing holds the token yet).
    """
    killed: list[int] = []
    deadline = time.monotonic() + timeout
    while True:
        left = children() - keep
        if not left:
            return killed
        if time.monotonic() > deadline:
            raise FatalError(
                f"processes the unprivileged build left behind ({sorted(left)[:10]}) could not "
                "be ended; nothing was published"
            )
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        for pid in left:
            _reap(pid, deadline)


def _reap(pid: int, deadline: float) -> None:
    """Wait (without blocking past `deadline`) for the killed child `pid`, so it is no zombie
    that the next pass of `end_orphans` finds again."""
    while time.monotonic() < deadline:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return  # not ours (any more), or reaped already
        if done:
            return
        time.sleep(0.01)
