"""The temporary folders of `sync` and `release` (the work folder with its clone and build, the
askpass folder), which a killed run must not leave in the system's temporary folder for good.

- Each is named `executorch-<kind>-<pid>-<start>-<random>`: the pid of the run that made it and
  that process's start time (`/proc/<pid>/stat`, field 22, clock ticks since boot; 0 where
  there is no /proc), so a later run can tell whether its owner still runs, even after the
  pid was reused.
- SIGTERM and SIGHUP are turned into an orderly exit (as Ctrl-C's SIGINT already is: Python
  raises KeyboardInterrupt), so every folder is removed on the way out (and a push made
  before the pull request is undone, see `generator.sync.push`).
- SIGKILL cannot be caught: the next run of sync or release removes the folders of ours whose
  owner is dead (`remove_stale`) and says which.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from generator.util.errors import FatalError

#: `executorch-<kind>-<pid>-<start>-<random>` as `owned_temp_dir` names them.
_OURS = re.compile(
    r"^executorch-(?P<kind>sync|release|sync-askpass)-(?P<pid>\d+)-(?P<start>\d+)-[A-Za-z0-9_]+$"
)
#: Signals that end a run in an orderly way (exit 128 + the signal's number, as a shell says).
_TERMINATING = (signal.SIGTERM, signal.SIGHUP)


def process_start(pid: int) -> int:
    """When process `pid` started, in clock ticks since boot (`/proc/<pid>/stat` field 22,
    proc(5)); 0 when that cannot be read (no /proc, or the process is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    # the command name (field 2) is in parentheses and may hold spaces or parentheses itself
    fields = stat[stat.rfind(")") + 2 :].split()
    return int(fields[19]) if len(fields) > 19 and fields[19].isdigit() else 0


def _owner_alive(pid: int, start: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: not ours to judge (and the folder is not ours)
    # alive; a different start time means the pid was reused by another process
    return start == 0 or process_start(pid) in (0, start)


@contextmanager
def owned_temp_dir(kind: str) -> Iterator[Path]:
    """A new folder `executorch-<kind>-<pid>-<start>-<random>` in the system's temporary
    folder (mode 0700), removed when the block ends, however it ends but by SIGKILL.

    Args:
        kind: "sync", "release" or "sync-askpass".
    """
    pid = os.getpid()
    path = Path(tempfile.mkdtemp(prefix=f"executorch-{kind}-{pid}-{process_start(pid)}-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextmanager
def work_folder(keep: Path | None, kind: str) -> Iterator[Path]:
    """`keep` (created, must be empty, kept afterwards: `_kept_work_folder`) or an
    `owned_temp_dir(kind)`: where sync and release clone and build.

    Raises:
        FatalError: `keep` is not empty.
    """
    if keep is not None:
        with _kept_work_folder(keep, f"executorch-{kind}-") as folder:
            yield folder
        return
    with owned_temp_dir(kind) as folder:
        yield folder


def remove_stale(say: Callable[[str], None], root: Path | None = None) -> list[Path]:
    """Remove the folders `owned_temp_dir` made in `root` (default: the system's temporary
    folder) whose run is gone (killed by SIGKILL, or a machine that lost power), and say each.

    Only folders that are ours are touched: the name `owned_temp_dir` gives, a real folder
    (not a link), owned by this user, and its run's pid dead or reused. A run still going
    (another sync beside this one) keeps its folders.

    Returns:
        The folders removed.
    """
    root = root or Path(tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return removed
    uid = os.getuid()
    for entry in entries:
        match = _OURS.match(entry.name)
        if match is None:
            continue
        try:
            st = entry.lstat()
        except OSError:
            continue
        if not entry.is_dir() or entry.is_symlink() or st.st_uid != uid:
            continue
        pid, start = int(match.group("pid")), int(match.group("start"))
        if pid == os.getpid() or _owner_alive(pid, start):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        if not entry.exists():
            removed.append(entry)
            say(
                f"removed {entry}, left behind by an earlier {match.group('kind')} run "
                f"(pid {pid}) that was killed"
            )
    return removed


class Terminated(SystemExit):
    """SIGTERM or SIGHUP arrived: unwind (removing temporary folders), exit 128 + signal."""


@contextmanager
def exit_cleanly_on_signals(say: Callable[[str], None]) -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP raise `Terminated` (a SystemExit with the
    shell's code 128 + signal) in the main thread, so `finally` blocks and context managers
    run (temporary folders are removed); SIGINT already raises KeyboardInterrupt. The earlier
    handlers come back afterwards. Outside the main thread (where Python allows no handlers)
    it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        say(f"{name} received: removing temporary folders and stopping")
        raise Terminated(128 + signum)

    previous = {sig: signal.signal(sig, terminate) for sig in _TERMINATING}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextmanager
def _kept_work_folder(keep: Path | None, prefix: str) -> Iterator[Path]:
    """`keep` (created, must be empty; kept afterwards for inspection) or a temporary folder
    named `prefix…`, removed afterwards. Where sync and release clone the library repo.

    Raises:
        FatalError: `keep` is not empty.
    """
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        if any(keep.iterdir()):
            raise FatalError(f"work folder {keep} is not empty; give an empty or new folder")
        yield keep
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        yield Path(tmp)
