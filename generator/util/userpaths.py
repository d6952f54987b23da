"""Paths the user names on the command line, checked before any work starts.

Each check names the option and the path, says what is wrong with it and what to give
instead, so a typo fails in a second rather than after a build or a check has run.
"""

from __future__ import annotations

import os
from pathlib import Path

from generator.util.errors import FatalError


def input_file(path: Path, option: str, what: str = "file") -> Path:
    """`path` as an existing regular file to read; returns it absolute.

    Args:
        path: the value of `option`, as given.
        option: the option's spelling for the message, e.g. `"--ops-from-pte"` or
            `"--example-pte AddModel="`.
        what: what the file should be, e.g. `"a .pte file"`.

    Raises:
        FatalError: `path` does not exist, is a folder, or is not a regular file.
    """
    shown = f"{option} {path}" if not option.endswith("=") else f"{option}{path}"
    path = path.expanduser()
    if path.is_dir():
        raise FatalError(f"{shown} is a folder; name {what} inside it")
    if not path.exists():
        raise FatalError(f"{shown}: no such file; check the path")
    if not path.is_file():
        raise FatalError(f"{shown} is not a regular file; name {what}")
    if not os.access(path, os.R_OK):
        raise FatalError(f"{shown}: you may not read it; check its permissions")
    return path.resolve()


def output_file(path: Path, option: str) -> Path:
    """`path` as a file that can be written later; returns it absolute. Checked up front
    so that a long run does not end with nowhere to write its result.

    Raises:
        FatalError: `path` is a folder, its folder does not exist or is not writable.
    """
    path = path.expanduser().resolve()
    if path.is_dir():
        raise FatalError(f"{option} {path} is a folder; pass a file name")
    if not path.parent.is_dir():
        raise FatalError(f"{option} {path}: folder {path.parent} does not exist; create it first")
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise FatalError(f"{option} {path}: you may not write in {path.parent}")
    if path.exists() and not path.is_file():
        raise FatalError(f"{option} {path} is not a regular file; pass a file name")
    return path
