"""`python -m generator check LIBRARY_DIR`: prove every example of a generated library works
(`generator.check`, its runner `generator.check.run.run_check`), once per board of `--board`;
print the Markdown report, write the JSON (`--json`), the step summary
(`$GITHUB_STEP_SUMMARY`) and, with `--update-docs`, the library's README sections and example
headers.

The check's stages are imported when the verb runs, not when the command line is parsed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from generator.boards.budgets import Board, board_keys, check_boards
from generator.cli.lists import add_list_option
from generator.cli.values import board_list, path, positive_seconds
from generator.lint.run import lint_library
from generator.util.atomic import write_atomic
from generator.util.errors import FatalError
from generator.util.userpaths import output_file

if TYPE_CHECKING:
    from generator.check.compile import CompileResult
    from generator.check.expected import Expected
    from generator.check.report import CheckReport
    from generator.check.run_sketch import RunOutput


def add_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `check` verb's options (parsing imports none of its stages)."""
    check = verbs.add_parser(
        "check",
        help="model check, UNO Q compile with sizes, emulated and sanitizer runs, arena",
    )
    check.add_argument("library", type=path, metavar="LIBRARY_DIR", help="the generated library")
    add_list_option(check, "--example", metavar="NAME", help="check only these examples")
    add_list_option(
        check,
        "--sketch",
        metavar="PATH",
        help="check your own sketches instead of the library's examples: a sketch's folder "
        "(holding <folder name>.ino) or that .ino file, anywhere; compiled, sized in both link "
        "modes, run on the emulated board and the host, its serial output printed. Judged by "
        "an expected.yaml beside it if there is one, else a run lasts until --timeout (or a "
        "'=== DONE ===' line, its exit, a fault) and passes when it printed something with "
        "no fault, no 'ERROR:' line and no sanitizer report. Not with --example",
    )
    add_list_option(
        check,
        "--expect",
        metavar="TEXT",
        help="with --sketch: some line of each run must contain TEXT (a TEXT cannot hold a comma)",
    )
    check.add_argument(
        "--timeout",
        type=positive_seconds,
        metavar="SECONDS",
        help="with --sketch: how long each run may last (default: the expected.yaml's "
        "timeout_seconds, else 10 s; without expected.yaml the timeout ends the run normally)",
    )
    check.add_argument(
        "--compiler",
        choices=("auto", "arduino-cli", "gcc-arm"),
        default="auto",
        help="compile back end (default: auto = arduino-cli when it and the arduino:zephyr "
        "core are installed, else gcc-arm)",
    )
    add_list_option(
        check,
        "--board",
        metavar="NAME",
        type=board_list,
        help="boards to check, keys of the board table generator/boards/budgets.py, or all "
        "(default: "
        "unoq); every stage runs per board, the host run once per example",
    )
    check.add_argument(
        "--no-run", action="store_true", help="compile and measure only; run nothing"
    )
    check.add_argument(
        "--json", type=path, metavar="FILE", help="also write the report as JSON to FILE"
    )
    check.add_argument(
        "--cache-dir",
        type=path,
        metavar="DIR",
        help="cache root; objects go to DIR/objects (default: the user cache folder)",
    )
    check.add_argument(
        "--keep",
        type=path,
        metavar="DIR",
        help="keep each example's build folder in DIR/<example> (objects, map files, the "
        "static ELF, the Dynamic upload file and its loader verdicts) for inspection",
    )
    check.add_argument(
        "--update-docs",
        action="store_true",
        help="write the boards checked (link mode, examples that fit and ran, flash and "
        "RAM) into the library's README.md (its boards section), and, from the UNO Q's "
        "check (so --board must include unoq), what each core's loader does with each "
        "example into its link-modes section and each example's header comment",
    )


def run(args: argparse.Namespace) -> int:
    """Run the check, print the Markdown report, write JSON / the step summary.

    SIGTERM ends it cleanly: the programs it runs (QEMU, the host build) run in their
    own sessions and are killed, and it exits with 143.

    Lint runs first (`generator.lint.run`, the Library Manager's rules): its findings are
    entries of the report's errors, so a library the Library Manager would refuse fails.

    With `--sketch`, the user's sketches are checked instead of the library's examples
    (`check/sketch.py`); each one's serial output is printed before the report, the
    report names the library (not the overlay it ran in), and each sketch's JSON entry
    carries `"sketch": <its folder>`.

    Returns:
        0 when lint passed and every selected example passed every stage, else 1.

    Raises:
        FatalError: bad library, unknown example, missing tool (see `run_check`); the
            JSON or step summary cannot be written; SIGTERM; refused sketch options
            (`_sketch_options`, exit code 2).
    """
    sketches = _sketch_options(args)
    update_docs = getattr(args, "update_docs", False)
    table = check_boards()
    keys = _boards_to_check(args, table)
    # Resolved before anything runs: compiles run in other folders.
    json_path = output_file(args.json, "--json") if args.json else None
    cache_dir = args.cache_dir.resolve() if args.cache_dir else None
    keep = _keep_dir(args.keep, args.library) if getattr(args, "keep", None) else None
    readme = args.library.resolve() / "README.md"
    if update_docs:
        from generator.boards.board_docs import check_both_sections

        check_both_sections(readme)  # before the check runs, not after
    lint = lint_library(args.library)
    reports = _check_boards(args, [(k, table[k]) for k in keys], sketches, cache_dir, keep)
    for _, report in reports:
        report.library = args.library.resolve()
    reports[0][1].errors[:0] = [f"lint: {finding}" for finding in lint.findings]
    markdown, data = _print_report(reports, table, sketches)
    if update_docs:
        _update_docs(args.library.resolve(), data)
    if json_path is not None:
        _write_json(json_path, data)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        _append_summary(summary, markdown)
    return 0 if all(report.passed for _, report in reports) else 1


def _sketch_options(args: argparse.Namespace) -> dict[str, tuple[Path, Expected]]:
    """`--sketch`, `--expect` and `--timeout`, checked before anything runs or is written.

    Returns:
        sketch name -> (its folder, what its runs must print); empty without `--sketch`.

    Raises:
        FatalError (exit code `sketch.BAD_INPUT_EXIT`): `--sketch` with `--example` or
            `--update-docs`; `--expect` or `--timeout` without `--sketch`; `--expect` with
            `--no-run`; a sketch path, name or expected.yaml that is refused
            (`sketch.resolve_sketch`, `sketch.sketch_expected`).
    """
    from generator.check.sketch import BAD_INPUT_EXIT, resolve_sketches, sketch_expected

    paths = [Path(p) for p in getattr(args, "sketch", None) or []]
    expect: list[str] = getattr(args, "expect", None) or []
    timeout: float | None = getattr(args, "timeout", None)
    if not paths:
        if expect or timeout is not None:
            raise FatalError(
                "--expect and --timeout judge the run of your own sketch: use them with "
                "--sketch PATH (an example's run is judged by its expected.yaml)",
                exit_code=BAD_INPUT_EXIT,
            )
        return {}
    if args.example or getattr(args, "update_docs", False):
        raise FatalError(
            "--sketch checks your own sketches against the library; it goes with neither "
            "--example nor --update-docs (check the library's examples in another run)",
            exit_code=BAD_INPUT_EXIT,
        )
    if expect and args.no_run:
        raise FatalError(
            "--expect asserts what a run prints, and --no-run runs nothing; drop one",
            exit_code=BAD_INPUT_EXIT,
        )
    return {
        folder.name: (folder, sketch_expected(folder, expect, timeout))
        for folder in resolve_sketches(paths)
    }


def _boards_to_check(args: argparse.Namespace, table: Mapping[str, Board]) -> list[str]:
    """`--board`'s keys of `table` (`board_keys`), refused with `--update-docs` when they
    lack the UNO Q: it writes every example's row, and the link modes from the UNO Q's check.

    Raises:
        FatalError: `--update-docs` with `--example`, or with a `--board` without unoq; a
            key `table` does not have.
    """
    update_docs = getattr(args, "update_docs", False)
    if args.example and update_docs:
        raise FatalError(
            "--update-docs writes every example's row: run it without --example (the "
            "README would otherwise describe only the examples checked)"
        )
    keys = board_keys(getattr(args, "board", None), table)
    if update_docs and "unoq" not in keys:
        raise FatalError(
            "--update-docs also writes the README's link-modes section and the examples' "
            "header comments, from the UNO Q's check: add unoq to --board (e.g. --board "
            f"unoq,{keys[0]}, or all)"
        )
    return keys


def _keep_dir(path: Path, library: Path) -> Path:
    """`--keep DIR`, resolved and created before anything runs.

    Raises:
        FatalError: DIR is a file, a folder that is not empty, inside the library, or it
            cannot be created.
    """
    path = path.resolve()
    if path.exists() and not path.is_dir():
        raise FatalError(f"--keep {path} is a file; pass a folder (it is created)")
    if path.is_relative_to(library.resolve()):
        raise FatalError(f"--keep {path} is inside the library {library}; pass a folder outside it")
    if path.is_dir() and any(path.iterdir()):
        raise FatalError(
            f"--keep {path} is not empty; pass a new or empty folder (the check writes a "
            "folder per example there)"
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise FatalError(f"--keep {path}: cannot create it ({e}); pass a writable folder") from None
    return path


def _stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    """SIGTERM: end like Ctrl-C does, through the error handler, killing what runs."""
    from generator.check.run_sketch import stop_children

    stop_children()
    raise FatalError("stopped by SIGTERM", exit_code=128 + signal.SIGTERM)


def _check_boards(
    args: argparse.Namespace,
    boards: list[tuple[str, Board]],
    sketches: Mapping[str, tuple[Path, Expected]],
    cache_dir: Path | None,
    keep: Path | None,
) -> list[tuple[str, CheckReport]]:
    """`run_check` once per board of `boards` (key, board), in order, each example's host
    build and run shared by all; with `--sketch`, on an overlay of the library holding the
    sketches. SIGTERM stops it (`_stop_on_sigterm`) while it runs in the main thread.

    Raises:
        FatalError: see `run_check`; with `--sketch`, the library is not a folder.
    """
    from generator.check.run import run_check
    from generator.check.sketch import name_real_folders, sketch_overlay

    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _stop_on_sigterm) if main_thread else None
    try:
        with contextlib.ExitStack() as stack:
            library, examples = args.library.resolve(), args.example
            overlay: Path | None = None
            if sketches:
                if not library.is_dir():
                    raise FatalError(
                        f"{library} is not a folder; pass the generated library's root"
                    )
                overlay = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="check-")))
                examples = sketch_overlay(
                    library, [folder for folder, _ in sketches.values()], overlay
                )
                library = overlay
            host_runs: dict[str, tuple[CompileResult, RunOutput | None]] = {}
            folders = {name: folder for name, (folder, _) in sketches.items()}
            reports = []
            for key, board in boards:
                report = run_check(
                    library,
                    examples=examples,
                    compiler=args.compiler,
                    run=not args.no_run,
                    cache_dir=cache_dir,
                    board=board,
                    keep=keep / key if keep is not None and len(boards) > 1 else keep,
                    expectations={name: exp for name, (_, exp) in sketches.items()},
                    host_runs=host_runs,
                )
                if overlay is not None:  # errors name the user's folders, not the overlay
                    name_real_folders(report, overlay, folders)
                reports.append((key, report))
            return reports
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)


def _print_report(
    reports: list[tuple[str, CheckReport]],
    table: Mapping[str, Board],
    sketches: Mapping[str, tuple[Path, Expected]],
) -> tuple[str, dict[str, Any]]:
    """Print each sketch's serial output (`--sketch`), then the Markdown report of every
    board.

    Returns:
        the Markdown printed, and the JSON (`board_data`; a sketch's entry names its folder).
    """
    from generator.check.report import board_data
    from generator.check.sketch import serial_output

    for _, report in reports if sketches else ():
        for example in report.examples:
            if example.name in sketches:
                print(serial_output(example), end="")
    markdown = "\n".join(report.to_markdown() for _, report in reports)
    print(markdown)
    data = board_data(reports, table)
    for entry in data["examples"]:
        if entry["example"] in sketches:
            entry["sketch"] = str(sketches[entry["example"]][0])
    return markdown, data


def _update_docs(library: Path, data: Mapping[str, Any]) -> None:
    """`--update-docs`: the README's boards and link-modes sections, and each example's
    header comment, from the check's JSON `data` (link modes: the UNO Q's part).

    Raises:
        FatalError: the README cannot be read or written, or lacks a section's markers.
    """
    from generator.boards.board_docs import update_both_sections
    from generator.boards.linkmode_docs import update_sketches
    from generator.check.report import board_part

    unoq = board_part(data, "unoq")
    update_both_sections(library / "README.md", data, unoq)
    update_sketches(library / "examples", unoq)


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
