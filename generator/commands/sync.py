"""`python -m generator sync`: regenerate the library from a ref and open or update its PR."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from generator.errors import FatalError
from generator.pipeline import BuildOptions
from generator.sync import DEFAULT_BOT_EMAIL, DEFAULT_BOT_NAME, SyncOptions, run_sync
from generator.sync.git import Identity
from generator.sync.github import DEFAULT_API_URL


def build_options(args: argparse.Namespace) -> BuildOptions:
    """The build options of a parsed command line (`generator.main.add_build_options`).

    Raises:
        FatalError: an `--example-pte` item that is not NAME=FILE.
    """
    example_pte: list[tuple[str, Path]] = []
    for item in args.example_pte or []:
        name, sep, file = item.partition("=")
        if not sep or not name or not file:
            raise FatalError(f"--example-pte {item!r} is not NAME=FILE, e.g. AddModel=add.pte")
        example_pte.append((name, Path(file)))
    return BuildOptions(
        executorch_ref=args.executorch_ref,
        executorch_repo=args.executorch_repo,
        library_version=args.library_version,
        ops=tuple(args.ops) if args.ops else None,
        all_ops=bool(args.all_ops),
        ops_from_pte=tuple(Path(p) for p in args.ops_from_pte or ()),
        examples=tuple(args.examples) if args.examples else None,
        example_pte=tuple(example_pte),
        cache_dir=args.cache_dir,
    )


def sync(args: argparse.Namespace) -> int:
    """Run sync with the parsed options; the token comes from GITHUB_TOKEN.

    Returns:
        0 when a pull request was opened or updated, the repo is already in sync, or a dry run
        finished; failures raise FatalError (exit 1).
    """
    options = SyncOptions(
        build=build_options(args),
        repo=args.repo,
        remote=args.remote,
        base=args.base,
        dry_run=args.dry_run,
        api_url=args.api_url or DEFAULT_API_URL,
        identity=Identity(args.bot_name or DEFAULT_BOT_NAME, args.bot_email or DEFAULT_BOT_EMAIL),
        compiler=args.compiler,
        run=not args.no_run,
    )
    run_sync(options, os.environ.get("GITHUB_TOKEN") or None)
    return 0
