"""`python -m generator sync`: regenerate the library from a ref and open or update its PR."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from generator.commands.build import options_from_args
from generator.sync import DEFAULT_BOT_EMAIL, DEFAULT_BOT_NAME, SyncOptions, run_sync
from generator.sync.git import Identity
from generator.sync.github import DEFAULT_API_URL


def sync(args: argparse.Namespace) -> int:
    """Run sync with the parsed options; the token comes from GITHUB_TOKEN.

    GITHUB_TOKEN is taken out of this process's environment first, so nothing sync starts
    (the build, compilers, QEMU, the example binaries) inherits it; git gets it only through
    the askpass environment `generator.sync.git.git_env` passes to each git command.

    With `--workflow-token`, the note that CI did not run is appended to
    `$GITHUB_STEP_SUMMARY` when that is set.

    Returns:
        0 when a pull request was opened or updated, the repo is already in sync, the sync
        branch's pull request was closed without merging (and `--recreate` not given), or a
        dry run finished; failures raise FatalError (exit 1).
    """
    token = os.environ.pop("GITHUB_TOKEN", None)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    options = SyncOptions(
        build=options_from_args(args),
        repo=args.repo,
        remote=args.remote,
        base=args.base,
        dry_run=args.dry_run,
        api_url=args.api_url or DEFAULT_API_URL,
        identity=Identity(args.bot_name or DEFAULT_BOT_NAME, args.bot_email or DEFAULT_BOT_EMAIL),
        compiler=args.compiler,
        run=not args.no_run,
        keep_older=args.keep_older,
        recreate=args.recreate,
        workflow_token=args.workflow_token,
        step_summary=Path(summary) if summary else None,
    )
    run_sync(options, token)
    return 0
