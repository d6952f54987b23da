"""Command line: parses arguments and dispatches to `generator.commands.<verb>`."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from generator.cli_lists import add_list_option
from generator.errors import error_handler

DEFAULT_EXECUTORCH_REPO = "https://github.com/pytorch/executorch.git"


def add_build_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by `build` and `sync` (sync passes them on to the build)."""
    parser.add_argument(
        "--executorch-ref",
        default="main",
        metavar="REF",
        help="ExecuTorch branch, tag or (short) SHA to generate from (default: main)",
    )
    parser.add_argument(
        "--executorch-repo",
        default=DEFAULT_EXECUTORCH_REPO,
        metavar="URL",
        help=f"ExecuTorch git URL (default: {DEFAULT_EXECUTORCH_REPO}); "
        "git's url.<base>.insteadOf applies, which is how local mirrors are used",
    )
    parser.add_argument(
        "--library-version",
        metavar="X.Y.Z",
        help="library version (strict X.Y.Z); default: derived from the ref's version.txt",
    )
    ops = parser.add_mutually_exclusive_group()
    add_list_option(
        ops,
        "--ops",
        metavar="OP",
        help="portable root ops to register instead of the default set, e.g. aten::add.out",
    )
    ops.add_argument(
        "--all-ops",
        action="store_true",
        help="register every portable op (about twice the UNO Q's flash)",
    )
    add_list_option(
        ops,
        "--ops-from-pte",
        metavar="FILE",
        help="register exactly the operators these .pte files call (selective build)",
    )
    add_list_option(
        parser,
        "--examples",
        metavar="NAME",
        help="ship only these examples (default: all of HelloExecuTorch, AddModel, "
        "KeywordSpotting)",
    )
    add_list_option(
        parser,
        "--example-pte",
        metavar="NAME=FILE",
        help="use FILE as the model of example NAME instead of the .pte the ref ships",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        metavar="DIR",
        help="where checkouts and built tools are cached (default: the user cache folder)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m generator",
        description="Generate, check and sync the ExecuTorch Arduino library.",
    )
    verbs = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    build = verbs.add_parser("build", help="generate the library from an ExecuTorch ref")
    add_build_options(build)
    build.add_argument(
        "--out",
        type=Path,
        default=Path("build/ExecuTorch"),
        metavar="DIR",
        help="where the library is written (default: build/ExecuTorch); replaced only "
        "when every step succeeded",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `python -m generator`; returns the process exit code."""
    args = build_parser().parse_args(argv)
    with error_handler():
        if args.command == "build":
            from generator.commands.build import build

            return build(args)
    raise AssertionError(f"unhandled command {args.command}")
