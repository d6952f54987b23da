"""Command line: one parser with a verb per module of `generator.cli`, each module's `add_parser`
and `run` (its handler), and the one place errors become output (`error_handler`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from generator.cli import build, check, lint, release, sync, workflows
from generator.util.errors import error_handler

#: The verbs in the order `--help` lists them.
VERBS = {
    "build": build,
    "sync": sync,
    "check": check,
    "lint": lint,
    "release": release,
    "workflows": workflows,
}


def build_parser() -> argparse.ArgumentParser:
    """The parser of `python -m generator`: one subparser per verb of `VERBS`."""
    parser = argparse.ArgumentParser(
        prog="python -m generator",
        description="Generate, check and sync the ExecuTorch Arduino library.",
    )
    verbs = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in VERBS.values():
        module.add_parser(verbs)
    return parser


def safe_output_streams() -> None:
    """Let stdout and stderr print any text in any locale.

    Under an ASCII or Latin-1 locale (`LC_ALL=C` with `PYTHONCOERCECLOCALE=0`, a minimal
    container) the report's check marks and a non-ASCII file name (decoded with
    surrogateescape, PEP 383) cannot be encoded, and `print` raised UnicodeEncodeError
    mid-report. What cannot be encoded is shown as a backslash escape instead.
    """
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `python -m generator`; returns the process exit code."""
    safe_output_streams()
    given = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(given)
    args.argv = given  # sync re-runs its unprivileged phase with it (generator.sync.stage)
    with error_handler():
        code: int = VERBS[args.command].run(args)
        return code
    raise AssertionError(f"unhandled command {args.command}")  # error_handler exits
