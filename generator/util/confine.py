"""Keep every read inside its upstream checkout and every write inside the output (issue 29).

An ExecuTorch ref (and each component it pins) is untrusted input: a commit can add a symbolic
link such as `runtime/core/env.h -> /proc/self/environ`, a FIFO, or an include such as
`#include <executorch/../../x.h>`. Every path the build reads from a checkout goes through
`confined_file` (or `confined_path` for folders): it is resolved, symbolic links and all, and
must stay inside that checkout and be a regular file (or folder); a special file (device, FIFO,
socket) is refused. Every path written from an upstream-derived relative path goes through
`confined_dest`, which must stay below the destination folder.

A symbolic link whose target is inside the checkout is followed: what ships is a regular file
with the target's content (the Library Manager refuses symbolic links in a library, and the
callers copy the resolved path, never the link).
"""

from __future__ import annotations

import os
import posixpath
import stat
from pathlib import Path

from generator.util.errors import FatalError


def _refuse(what: str, rel: str | Path, why: str) -> FatalError:
    return FatalError(
        f"{what}: {Path(rel).as_posix()} {why}; an upstream tree is untrusted input, so the "
        "build refuses it (remove it upstream or build another ref)"
    )


def confined_path(root: Path, rel: str | Path, what: str) -> Path:
    """`root / rel` resolved, checked to stay inside `root` (the checkout).

    A path that does not exist is returned resolved (the caller decides whether that is an
    error); one that exists must be a regular file or a folder.

    Args:
        root: the checkout.
        rel: the path inside it (relative; `..` and symbolic links are resolved).
        what: the component and ref, for the message (e.g. "ExecuTorch at 0123abcd").
    Raises:
        FatalError: when `rel` is absolute or climbs out with `..`, when it (or a symbolic
            link on the way) resolves outside `root`, when it is a special file, or when it
            cannot be looked up for another reason than being missing (a name too long).
    """
    text = Path(rel).as_posix()
    norm = posixpath.normpath(text)
    if posixpath.isabs(norm) or norm == ".." or norm.startswith("../"):
        raise _refuse(what, rel, f"climbs out of the checkout at {root}")
    base = root.resolve()
    try:
        resolved = (base / norm).resolve()
    except (RuntimeError, OSError) as e:  # a loop of links: RuntimeError before 3.13
        raise _refuse(what, rel, f"is a symbolic link that cannot be resolved ({e})") from None
    if resolved != base and not resolved.is_relative_to(base):
        raise _refuse(
            what, rel, f"is a symbolic link to {resolved}, outside the checkout at {root}"
        )
    try:
        mode = os.stat(resolved).st_mode
    except (FileNotFoundError, NotADirectoryError):  # `a.h/b.h` below a file: missing too
        return resolved
    except OSError as e:  # e.g. a name over NAME_MAX (ENAMETOOLONG)
        raise _refuse(what, rel, f"cannot be read ({e.strerror})") from None
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise _refuse(what, rel, "is a special file (device, FIFO or socket), not a regular file")
    return resolved


def confined_file(root: Path, rel: str | Path, what: str) -> Path:
    """`confined_path`, which must moreover be a regular file (what to read or copy).

    Raises:
        FatalError: as `confined_path`; and when the path is missing or a folder.
    """
    path = confined_path(root, rel, what)
    if not path.is_file():
        raise _refuse(what, rel, f"is not a regular file in the checkout at {root}")
    return path


def confined_dest(dest_root: Path, rel: str | Path, what: str) -> Path:
    """`dest_root / rel`, checked (lexically) to stay below `dest_root`: where to write.

    Raises:
        FatalError: when `rel` is absolute or climbs out of `dest_root` with `..`.
    """
    norm = posixpath.normpath(Path(rel).as_posix())
    if posixpath.isabs(norm) or norm == ".." or norm.startswith("../"):
        raise _refuse(what, rel, f"would be written outside {dest_root}")
    return dest_root / norm


def is_inside(root: Path, path: Path) -> bool:
    """True when `path` (resolved) is `root` (resolved) or below it."""
    base, resolved = root.resolve(), path.resolve()
    return resolved == base or resolved.is_relative_to(base)
