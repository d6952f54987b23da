"""The one error type for user-facing failures, and the one place that turns it into output."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from generator.util.workflow_commands import shown


class FatalError(Exception):
    """A failure the user can act on.

    The message says what was wrong and what to do about it; `error_handler` prints it
    without a traceback and exits with `exit_code`.
    """

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@contextmanager
def error_handler() -> Iterator[None]:
    """Turn `FatalError`, an operating-system error and Ctrl-C into a message on stderr and a
    non-zero exit.

    An `OSError` that no step turned into a `FatalError` (a full disk, a folder that vanished,
    a permission taken away mid-run) is still the user's to fix, not a bug: it is named with
    its file, without a traceback. The build writes into a staging folder, so such an error
    never leaves half-written output.

    Raises:
        SystemExit: with the error's exit code (1 by default and for OSError and text that
            is not UTF-8, 130 on Ctrl-C).
    """
    try:
        yield
    except FatalError as e:
        # a message may quote untrusted text (a staged manifest, git's stderr, an op name)
        print(shown(f"error: {e}"), file=sys.stderr)
        raise SystemExit(e.exit_code) from None
    except OSError as e:
        print(shown(f"error: {describe_os_error(e)}"), file=sys.stderr)
        raise SystemExit(1) from None
    except UnicodeError as e:
        print(f"error: {describe_unicode_error(e)}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        raise SystemExit(130) from None


#: errno values that mean the destination's file system cannot take more (POSIX errno.h).
_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG}


def describe_os_error(e: OSError) -> str:
    """One sentence for an `OSError` no step named: what failed, on which file, what to do.

    A full disk is reported on the file being written: `shutil`'s copies set `filename` to
    the source and `filename2` to the destination (CPython `shutil._fastcopy_sendfile`), and
    naming the source (the cache, often on another disk) sent users to the wrong disk. The
    mount point holding the destination is named.
    """
    if is_disk_full(e):
        target = e.filename2 if e.filename2 is not None else e.filename
        if target is not None:
            return describe_disk_full(e, Path(os.fsdecode(target)))
    where = f" ({os.fsdecode(e.filename)})" if e.filename is not None else ""
    return (
        f"{e.strerror or e}{where}; check that the folder exists, that you may write there "
        "and that the disk has room, then run again"
    )


def is_disk_full(e: OSError) -> bool:
    """True when `e` says the file system being written has no room (or quota) left."""
    return e.errno in _FULL


def describe_disk_full(e: OSError, target: Path) -> str:
    """The sentence for a full disk while writing `target`: the mount point that is full,
    and the options that move the work to another disk."""
    return (
        f"{e.strerror or e} writing {target}: the file system mounted at "
        f"{_mount_point(target)} has no room left. Free space there, or choose a folder "
        "on another disk (--out for the library, --cache-dir for the cache), then run again"
    )


def _mount_point(path: Path) -> Path:
    """The mount point of the file system holding `path` (its nearest existing ancestor)."""
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    while not os.path.ismount(path):
        path = path.parent
    return path


def describe_unicode_error(e: UnicodeError) -> str:
    """One sentence for text or a file name that is not UTF-8 (a name of Latin-1 bytes,
    read with surrogateescape and then written into a UTF-8 file), showing the offending
    characters escaped, never raw."""
    where = ""
    if isinstance(e, UnicodeEncodeError | UnicodeDecodeError):
        piece = e.object[max(0, e.start - 20) : e.end + 20]
        shown = (
            piece.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
            if isinstance(piece, str)
            else piece.decode("ascii", "backslashreplace")
        )
        where = f" near '{shown}' ({e.reason})"
    return (
        f"text or a file name is not UTF-8{where}; "
        "rename the file or fix the text so that it is UTF-8, then run again"
    )
