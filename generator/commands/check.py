"""`python -m generator check LIBRARY_DIR`: prove every example of a generated library."""

from __future__ import annotations

import argparse
import json
import os
import signal
import threading
from pathlib import Path
from types import FrameType

from generator.atomic import write_atomic
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
    """Write `data` as JSON to `path` through a temporary file in the same folder.

    Raises:
        FatalError: `path` is a folder, its folder does not exist, or it cannot be
            written (no temporary file is left behind).
    """
    path = path.resolve()
    if path.is_dir():
        raise FatalError(f"--json {path} is a folder; pass a file name")
    if not path.parent.is_dir():
        raise FatalError(f"--json {path}: folder {path.parent} does not exist; create it first")
    try:
        write_atomic(path, json.dumps(data, indent=2) + "\n")
    except OSError as e:
        raise FatalError(f"--json {path}: cannot write it ({e})") from None


def _append_summary(path: str, markdown: str) -> None:
    """Append the report to the GitHub step summary file `path`.

    Raises:
        FatalError: it cannot be written (a folder, no permission, ...).
    """
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(markdown + "\n")
    except OSError as e:
        raise FatalError(
            f"GITHUB_STEP_SUMMARY={path}: cannot append the report ({e}); point it at a file"
        ) from None


def _stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    """SIGTERM: end like Ctrl-C does, through the error handler, killing what runs."""
    from generator.check.run import stop_children

    stop_children()
    raise FatalError("stopped by SIGTERM", exit_code=128 + signal.SIGTERM)


def check(args: argparse.Namespace) -> int:
    """Run the check, print the Markdown report, write JSON / the step summary.

    SIGTERM ends it cleanly: the programs it runs (QEMU, the host build) run in their
    own sessions and are killed, and it exits with 143.

    Lint runs first (`generator.lint`, the Library Manager's rules): its findings are
    entries of the report's errors, so a library the Library Manager would refuse fails.

    Returns:
        0 when lint passed and every selected example passed every stage, else 1.

    Raises:
        FatalError: bad library, unknown example, missing tool (see `run_check`); the
            JSON or step summary cannot be written; SIGTERM.
    """
    from generator.check import run_check  # heavy; only when the verb runs
    from generator.lint import lint_library

    # Resolved before anything runs: compiles run in other folders.
    json_path = args.json.resolve() if args.json else None
    if json_path is not None and json_path.is_dir():
        raise FatalError(f"--json {json_path} is a folder; pass a file name")
    cache_dir = args.cache_dir.resolve() if args.cache_dir else None
    lint = lint_library(args.library)
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _stop_on_sigterm) if main_thread else None
    try:
        report = run_check(
            args.library.resolve(),
            examples=args.example,
            compiler=args.compiler,
            run=not args.no_run,
            cache_dir=cache_dir,
        )
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
    report.errors[:0] = [f"lint: {finding}" for finding in lint.findings]
    markdown = report.to_markdown()
    print(markdown)
    if json_path is not None:
        _write_json(json_path, report.to_dict())
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        _append_summary(summary, markdown)
    return 0 if report.passed else 1
