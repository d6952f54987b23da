"""`python -m generator check LIBRARY_DIR`: prove every example of a generated library works
(`generator.check`)."""

from __future__ import annotations

import argparse

from generator.cli.lists import add_list_option
from generator.cli.values import board_list, path, positive_seconds


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
    """`python -m generator check`: every stage of every example, then the report."""
    from generator.check.run import check

    return check(args)
