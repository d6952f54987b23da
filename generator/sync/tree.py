"""Put a regenerated library tree into the library repo's work tree.

Every generated path (`generator.library.layout.GENERATED_PATHS`) is deleted first, so nothing stale
survives; only generated paths are copied from the build, so what the library repo owns
(README.md, CHANGELOG.md, .github/) is never touched.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from generator.library.layout import GENERATED_PATHS


def replace_generated(worktree: Path, built: Path) -> list[str]:
    """Delete every generated path under `worktree`, then copy those paths from `built`.

    Args:
        worktree: the library repo's checked-out work tree.
        built: a library folder written by `build_library`.
    Returns:
        Top-level names in `built` that are not generated paths and were therefore not copied
        (sorted), so the caller can mention them.
    """
    for name in GENERATED_PATHS:
        target = worktree / name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
    for name in GENERATED_PATHS:
        source = built / name
        if source.is_dir():
            shutil.copytree(source, worktree / name, symlinks=True)
        elif source.exists():
            shutil.copy2(source, worktree / name)
    return sorted(p.name for p in built.iterdir() if p.name not in GENERATED_PATHS)
