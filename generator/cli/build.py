"""`python -m generator build`: generate the library from an ExecuTorch ref
(`generator.pipeline`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from generator.cli.lists import add_list_option
from generator.cli.values import git_text, path
from generator.library.layout import LIBRARY_NAME
from generator.util.urls import DEFAULT_EXECUTORCH_REPO

if TYPE_CHECKING:
    from rich.table import Table

    from generator.pipeline.run import BuildOptions, BuildResult


def add_build_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by `build` and `sync` (sync passes them on to the build)."""
    parser.add_argument(
        "--executorch-ref",
        default="main",
        type=git_text("a branch, tag or SHA"),
        metavar="REF",
        help="ExecuTorch branch, tag or (short) SHA to generate from (default: main)",
    )
    parser.add_argument(
        "--executorch-repo",
        default=DEFAULT_EXECUTORCH_REPO,
        type=git_text("a git URL or path"),
        metavar="URL",
        help=f"ExecuTorch git URL (default: {DEFAULT_EXECUTORCH_REPO}); "
        "git's url.<base>.insteadOf applies, which is how local mirrors are used",
    )
    parser.add_argument(
        "--library-version",
        metavar="X.Y.Z",
        help="library version, a Semantic Version (X.Y.Z, optionally -prerelease such as "
        "1.6.0-rc.1); default: derived from the ref's version.txt",
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
        help="register every portable op (each sketch still links only its model's kernels; "
        "a model.h without kernel selection links them all: about twice the UNO Q's flash)",
    )
    add_list_option(
        ops,
        "--ops-from-pte",
        metavar="FILE",
        help="register exactly the operators these .pte files call (selective build)",
    )
    dtypes = parser.add_mutually_exclusive_group()
    add_list_option(
        dtypes,
        "--dtypes",
        metavar="DTYPE",
        help="compile every portable kernel for only these dtypes (torch names: float32, "
        "int8, uint8, int32, int64, bool, ...; dtype-selective build); default: all dtypes",
    )
    add_list_option(
        dtypes,
        "--dtypes-from-pte",
        metavar="FILE",
        help="compile each portable kernel for only the dtypes these .pte files pass it "
        "(dtype-selective build); default: all dtypes",
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
        type=path,
        metavar="DIR",
        help="where checkouts and built tools are cached (default: the user cache folder)",
    )


def add_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `build` verb: the build options and where the library is written."""
    build = verbs.add_parser("build", help="generate the library from an ExecuTorch ref")
    add_build_options(build)
    build.add_argument(
        "--out",
        type=path,
        default=Path("build") / LIBRARY_NAME,
        metavar="DIR",
        help=f"where the library is written (default: build/{LIBRARY_NAME}); replaced only "
        "when every step succeeded",
    )


def options_from_args(args: argparse.Namespace) -> BuildOptions:
    """The build options of a parsed `build` or `sync` command line (`add_build_options`).

    Raises:
        FatalError: an --example-pte item that is not NAME=FILE, names an unknown example or
            a missing file (`generator.pipeline.examples.parse_example_pte`).
    """
    from generator.pipeline.examples import parse_example_pte
    from generator.pipeline.run import BuildOptions

    return BuildOptions(
        executorch_ref=args.executorch_ref,
        executorch_repo=args.executorch_repo,
        library_version=args.library_version,
        ops=tuple(args.ops) if args.ops is not None else None,
        all_ops=args.all_ops,
        ops_from_pte=tuple(Path(p) for p in args.ops_from_pte or ()),
        examples=tuple(args.examples) if args.examples is not None else None,
        example_pte=tuple(parse_example_pte(args.example_pte or ()).items()),
        cache_dir=args.cache_dir,
        dtypes=tuple(args.dtypes) if args.dtypes is not None else None,
        dtypes_from_pte=tuple(Path(p) for p in args.dtypes_from_pte or ()),
    )


def summary_table(result: BuildResult) -> Table:
    """The end-of-run summary: what was built from what."""
    from rich.table import Table

    table = Table(title="ExecuTorch Arduino library", show_header=False)
    rows = [
        ("library", str(result.out)),
        ("ref", f"{result.ref} -> {result.sha}"),
        ("version", f"{result.library_version} (upstream {result.upstream_version})"),
        ("op set", f"{len(result.op_set)} operator{'s' if len(result.op_set) != 1 else ''}"),
        ("kernels registered", str(result.kernel_count)),
        ("op sources", f"{result.op_sources} of {result.op_sources_available} portable"),
        ("dtypes", result.dtypes),
        ("written", f"{result.files} files, {result.bytes:,} bytes"),
        ("time", f"{result.seconds:.1f} s"),
    ]
    for key, value in rows:
        table.add_row(key, value)
    return table


def run(args: argparse.Namespace) -> int:
    """`python -m generator build`: the main job, with a summary of what it wrote; returns
    the exit code (errors raise FatalError)."""
    from rich.console import Console

    from generator.pipeline.run import build_library
    from generator.util.ui import ConsoleReporter

    console = Console(stderr=True, highlight=False)
    result = build_library(options_from_args(args), args.out, ConsoleReporter(console))
    console.print(summary_table(result))
    return 0
