"""Atomic file writes: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _read_umask() -> int:
    # The only way to read the mask is to set it; done once, at import, because setting it
    # while threads start compilers (the check's object cache) would leak a mask of 0.
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def write_atomic(path: Path, data: str | bytes, *, encoding: str = "utf-8") -> None:
    """Write `data` to `path` through a temporary file in the same folder, then `os.replace`.

    The file gets the permissions a plain `open(path, "w")` would give it (0666 less the
    umask, read once at start-up), not `mkstemp`'s private 0600. Text is written as given
    (no newline translation).

    A symbolic link is written through (its target is replaced, not the link); a path that
    exists and is no regular file (`--json /dev/null`, a FIFO) is written to as it is: a
    rename over it would replace the device node itself when run as root.

    Raises:
        OSError: the folder does not exist or the file cannot be written; the temporary
            file is removed first. Callers turn it into a FatalError naming their option.
    """
    raw = data.encode(encoding) if isinstance(data, str) else data
    path = Path(os.path.realpath(path))
    if path.exists() and not path.is_file():
        with open(path, "wb") as f:
            f.write(raw)
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), 0o666 & ~_UMASK)
            f.write(raw)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
