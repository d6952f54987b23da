"""`python -m generator check LIBRARY_DIR`: prove every example of a generated library."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from generator.cli_lists import add_list_option
from generator.errors import FatalError


def add_check_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `check` verb's options."""
    check = verbs.add_parser(
        "check",
        help="model check, UNO Q compile with sizes, emulated and sanitizer runs, arena",
    )
    check.add_argument("library", type=Path, metavar="LIBRARY_DIR", help="the generated library")
    add_list_option(check, "--example", metavar="NAME", help="check only these examples")
    check.add_argument(
        "--compiler",
        choices=("auto", "arduino-cli", "gcc-arm"),
        default="auto",
        help="compile back end (default: auto = arduino-cli when it and the arduino:zephyr "
        "core are installed, else gcc-arm)",
    )
    check.add_argument(
        "--no-run", action="store_true", help="compile and measure only; run nothing"
    )
    check.add_argument(
        "--json", type=Path, metavar="FILE", help="also write the report as JSON to FILE"
    )
    check.add_argument(
        "--cache-dir",
        type=Path,
        metavar="DIR",
        help="cache root; objects go to DIR/objects (default: the user cache folder)",
    )


def _write_json(path: Path, data: object) -> None:
    path = path.resolve()
    if not path.parent.is_dir():
        raise FatalError(f"--json {path}: folder {path.parent} does not exist; create it first")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def check(args: argparse.Namespace) -> int:
    """Run the check, print the Markdown report, write JSON / the step summary.

    Returns:
        0 when every selected example passed every stage, else 1.

    Raises:
        FatalError: bad library, unknown example, missing tool (see `run_check`).
    """
    from generator.check import run_check  # heavy; only when the verb runs

    report = run_check(
        args.library,
        examples=args.example,
        compiler=args.compiler,
        run=not args.no_run,
        cache_dir=args.cache_dir,
    )
    markdown = report.to_markdown()
    print(markdown)
    if args.json:
        _write_json(args.json, report.to_dict())
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as f:
            f.write(markdown + "\n")
    return 0 if report.passed else 1
