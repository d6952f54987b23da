"""Where a build writes: `--out` checked before any work, a staging folder beside it, and the
move into place once every step succeeded (a failed run leaves the previous `--out` as it was).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from generator.library.layout import GENERATED_PATHS, PIN_FILE, PROVENANCE_FILE
from generator.util.errors import FatalError, describe_disk_full, is_disk_full

#: What a build writes at the library root: the generated paths and the generated README.
BUILT_ROOT = frozenset({*GENERATED_PATHS, "README.md"})


def foreign_entries(folder: Path) -> list[str]:
    """Names at the root of `folder` that a build does not write (`.git`, `.github`,
    `CHANGELOG.md`, ...): a build replaces the whole folder, so they would be lost."""
    return sorted(p.name for p in folder.iterdir() if p.name not in BUILT_ROOT)


def is_generated_library(folder: Path) -> bool:
    """True when `folder` holds a library this tool built and nothing else: pin and
    provenance present, and only what a build writes at its root. A checkout of the library
    repo (with `.git`, `.github`, a changelog) is not one: sync updates that, not build."""
    return (
        (folder / PIN_FILE).is_file()
        and (folder / PROVENANCE_FILE).is_file()
        and not foreign_entries(folder)
    )


def check_destination(out: Path, cache: Path) -> Path:
    """Validate `--out` before any work; returns it absolute.

    Raises:
        FatalError: `out` is a file, the file system root, a mount point, a non-empty folder
            that is not a library this tool generated (it would be replaced), or overlaps the
            cache.
    """
    out = out.expanduser().resolve()
    if out == out.parent:
        raise FatalError(f"--out {out} is the file system root; name a folder for the library")
    if out.exists() and not out.is_dir():
        raise FatalError(f"--out {out} is a file; name a folder for the library")
    if out.is_dir() and os.path.ismount(out):
        # The build swaps the folder by renaming it, and a mount point cannot be renamed
        # (EBUSY, after the whole build ran).
        raise FatalError(
            f"--out {out} is a mount point, which the build cannot replace; name a folder "
            f"inside it, e.g. --out {out / 'ExecuTorch'}"
        )
    if out.is_dir() and any(out.iterdir()) and not is_generated_library(out):
        foreign = foreign_entries(out)
        shown = (
            f" ({', '.join(foreign[:5])}{', ...' if len(foreign) > 5 else ''})" if foreign else ""
        )
        raise FatalError(
            f"--out {out} is a folder with other content{shown}; it would be replaced by the "
            "library. Name a new or empty folder, or the folder of a library this tool built; "
            "to update a checkout of the library repo, use `python -m generator sync`"
        )
    if out == cache or out in cache.parents or cache in out.parents:
        raise FatalError(
            f"--out {out} and the cache {cache} overlap; replacing one would destroy the "
            "other. Choose another --out or --cache-dir"
        )
    return out


@contextmanager
def staged(out: Path) -> Iterator[Path]:
    """An empty folder named like `out` inside a fresh staging folder beside `out` (so the
    final move is a rename on one file system); the staging folder is removed afterwards.

    Raises:
        FatalError: the folder beside `out` cannot be written, or its disk filled up while
            the build wrote into it (named as the disk of `out`).
    """
    staging = _staging_dir(out)
    try:
        library = staging / out.name
        library.mkdir()
        yield library
    except OSError as e:
        # A write's own error often names no file: the disk that filled is the one under
        # --out unless the error names a file elsewhere (the cache's disk).
        named = [Path(os.fsdecode(f)) for f in (e.filename2, e.filename) if f is not None]
        if is_disk_full(e) and (not named or staging in named[0].parents):
            raise FatalError(describe_disk_full(e, out)) from None
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def move_into_place(staged: Path, out: Path) -> None:
    """Replace `out` by `staged`; the previous `out` survives until the new one is in place.

    Raises:
        FatalError: the move failed (the previous `out` is put back).
    """
    old: Path | None = None
    if out.exists():
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(out, old)
    try:
        os.replace(staged, out)
    except OSError as e:
        if old is not None:
            os.replace(old, out)
        raise FatalError(f"cannot move the library into {out}: {e.strerror or e}") from None
    if old is not None:
        shutil.rmtree(old)


def tree_stats(folder: Path) -> tuple[int, int]:
    """(files, bytes) below `folder`."""
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale(out: Path) -> None:
    """Remove staging and old folders that a killed run left beside `out`."""
    pattern = re.compile(rf"^\.{re.escape(out.name)}\.(?:staging|old)-(\d+)(?:-.*)?$")
    for sibling in out.parent.glob(f".{out.name}.*"):
        match = pattern.match(sibling.name)
        if match and sibling.is_dir() and not _pid_alive(int(match.group(1))):
            shutil.rmtree(sibling, ignore_errors=True)


def _staging_dir(out: Path) -> Path:
    """A fresh folder beside `out`, so the final move is a rename on one file system."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale(out)
        return Path(tempfile.mkdtemp(prefix=f".{out.name}.staging-{os.getpid()}-", dir=out.parent))
    except OSError as e:
        raise FatalError(
            f"cannot write next to --out {out}: {e.strerror or e}. Choose an --out in a "
            "folder you can write to"
        ) from None
