"""`python -m generator build`: generate the library from an ExecuTorch ref."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table

from generator.examples import parse_example_pte
from generator.pipeline import BuildOptions, BuildResult, build_library
from generator.ui import ConsoleReporter


def options_from_args(args: argparse.Namespace) -> BuildOptions:
    """The build options of a parsed `build` or `sync` command line."""
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
    )


def summary_table(result: BuildResult) -> Table:
    """The end-of-run summary: what was built from what."""
    table = Table(title="ExecuTorch Arduino library", show_header=False)
    rows = [
        ("library", str(result.out)),
        ("ref", f"{result.ref} -> {result.sha}"),
        ("version", f"{result.library_version} (upstream {result.upstream_version})"),
        ("op set", f"{len(result.op_set)} operator{'s' if len(result.op_set) != 1 else ''}"),
        ("kernels registered", str(result.kernel_count)),
        ("op sources", f"{result.op_sources} of {result.op_sources_available} portable"),
        ("written", f"{result.files} files, {result.bytes:,} bytes"),
        ("time", f"{result.seconds:.1f} s"),
    ]
    for key, value in rows:
        table.add_row(key, value)
    return table


def build(args: argparse.Namespace) -> int:
    """Run the build for parsed arguments; returns the exit code (errors raise FatalError)."""
    console = Console(stderr=True, highlight=False)
    result = build_library(options_from_args(args), args.out, ConsoleReporter(console))
    console.print(summary_table(result))
    return 0
