"""`python -m generator lint LIBRARY_DIR`: the Library Manager's rules, offline."""

from __future__ import annotations

import argparse
from pathlib import Path

from generator.library.layout import LIBRARY_NAME
from generator.lint.run import lint_library
from generator.lint.table import ARDUINO_LINT

#: The name the library is registered under in the Library Manager (`--name`'s default).
DEFAULT_NAME = LIBRARY_NAME


def add_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `lint` verb's options."""
    lint = verbs.add_parser(
        "lint",
        help=f"check a library against the rules of `{ARDUINO_LINT}` (offline) and whether "
        "Windows, macOS and Linux can install it",
    )
    lint.add_argument("library", type=Path, metavar="LIBRARY_DIR", help="the library's root")
    lint.add_argument(
        "--name",
        default=DEFAULT_NAME,
        metavar="NAME",
        help=f"the name the library is registered under in the Library Manager (default: "
        f"{DEFAULT_NAME}); library.properties name= must equal it",
    )


def run(args: argparse.Namespace) -> int:
    """Print one line per finding (`LP012 error library.properties: ...`), the longest
    installed and object paths on Windows, then a summary.

    Returns:
        0 when no rule is broken, else 1 (warnings count: the Library Manager runs
        arduino-lint in strict mode).

    Raises:
        FatalError: LIBRARY_DIR does not exist or is not a folder.
    """
    report = lint_library(args.library, name=args.name)
    for line in report.to_lines(args.library):
        print(line)
    return 0 if report.passed else 1
