"""`python -m generator sync`: regenerate the library from a ref and open or update its pull
request (`generator.sync`)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from generator.cli.build import add_build_options, options_from_args
from generator.cli.lists import add_list_option
from generator.cli.values import board_list, git_text
from generator.util.errors import FatalError

if TYPE_CHECKING:
    from generator.sync.options import SyncOptions


def add_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `sync` verb: the build options plus where the library repo lives.

    Defaults of --api-url and --bot-* are filled in by `run` (so that parsing does not
    import PyGithub).
    """
    sync = verbs.add_parser(
        "sync",
        help="regenerate the library from a ref and open or update its pull request "
        "(token from GITHUB_TOKEN, or a GitHub App: --app-id)",
    )
    add_build_options(sync)
    _add_repo_options(sync)
    _add_check_options(sync)
    _add_pull_request_options(sync)
    _add_phase_options(sync)
    sync.add_argument(
        "--app-id",
        metavar="ID",
        help="act as this GitHub App (its App ID or client ID), its private key read from the "
        "environment variable SYNC_APP_PRIVATE_KEY (never from the command line): sync mints "
        "the App's installation tokens itself, when needed and again before they expire "
        "(wins over GITHUB_TOKEN)",
    )


def _add_repo_options(sync: argparse.ArgumentParser) -> None:
    """Where the library repo lives (--repo, --remote, --base, --api-url), whether to touch it
    (--dry-run), and who commits to it (--bot-name, --bot-email)."""
    sync.add_argument("--repo", required=True, metavar="OWNER/NAME", help="the library repo")
    sync.add_argument(
        "--remote",
        type=git_text("a git URL"),
        metavar="GIT_URL",
        help="git URL to clone and push (default: the repo's clone URL on GitHub); https, "
        "or plain http only to this machine (the token goes along)",
    )
    sync.add_argument(
        "--base",
        default="main",
        type=git_text("a branch name"),
        metavar="BRANCH",
        help="branch the PR targets (default: main)",
    )
    sync.add_argument(
        "--dry-run",
        action="store_true",
        help="build, check and print the PR body; push nothing, call no GitHub API",
    )
    sync.add_argument(
        "--api-url",
        type=git_text("a URL"),
        metavar="URL",
        help="GitHub REST API root (default: $GITHUB_API_URL, which Actions runners set, else "
        "https://api.github.com; GitHub Enterprise: https://HOST/api/v3)",
    )
    sync.add_argument(
        "--bot-name",
        metavar="NAME",
        help="author and committer name of the sync commit, as git stores it (no leading or "
        "trailing space or . , : ; < > \" \\ ', no < > or newline; "
        "default: executorch-arduino-bot)",
    )
    sync.add_argument(
        "--bot-email",
        metavar="EMAIL",
        help="author and committer email "
        "(default: executorch-arduino-bot@users.noreply.github.com)",
    )


def _add_check_options(sync: argparse.ArgumentParser) -> None:
    """How `check` checks the library before it is pushed: --compiler, --no-run, --board."""
    sync.add_argument(
        "--compiler",
        default="auto",
        metavar="BACKEND",
        help="toolchain back end `check` compiles with (default: auto)",
    )
    sync.add_argument("--no-run", action="store_true", help="let `check` skip the emulated run")
    add_list_option(
        sync,
        "--board",
        metavar="NAME",
        type=board_list,
        help="boards `check` checks, as `check --board` takes them: keys of the board table "
        "generator/boards/budgets.py, or all (default: unoq); unoq must be among them "
        "(the link-modes "
        "section and the examples' header comments are the UNO Q's); the committed report, "
        "the sizes and the boards table hold every board",
    )


def _add_pull_request_options(sync: argparse.ArgumentParser) -> None:
    """What becomes of the other sync pull requests (--keep-older, --recreate) and what the
    pull request says of CI (--workflow-token)."""
    sync.add_argument(
        "--keep-older",
        action="store_true",
        help="leave the other open sync pull requests open (default: close them as superseded "
        "and delete their branches); their versions then count as used",
    )
    sync.add_argument(
        "--recreate",
        action="store_true",
        help="open the pull request again when the last one from this sync branch was closed "
        "without merging (default: say so and exit 0)",
    )
    sync.add_argument(
        "--workflow-token",
        action="store_true",
        help="the token is the Actions GITHUB_TOKEN, whose pushes start no workflow: the pull "
        "request and $GITHUB_STEP_SUMMARY say CI did not run and how to fix that",
    )


def _add_phase_options(sync: argparse.ArgumentParser) -> None:
    """One phase of the two (--prepare, or --publish with its --digest)."""
    phases = sync.add_mutually_exclusive_group()
    phases.add_argument(
        "--prepare",
        metavar="DIR",
        help="only the unprivileged phase: build and check the library into DIR (new or "
        "empty), print its digest; refused when GITHUB_TOKEN, SYNC_APP_PRIVATE_KEY or "
        "SYNC_TOKEN is set (the ExecuTorch ref's code runs in it)",
    )
    phases.add_argument(
        "--publish",
        metavar="DIR",
        help="only the publish phase: open or update the pull request from a DIR that "
        "`sync --prepare` wrote (its digest checked); runs nothing of the ExecuTorch ref",
    )
    sync.add_argument(
        "--digest",
        metavar="SHA256",
        help="with --publish: the digest `sync --prepare` printed; another tree is refused",
    )


def run(args: argparse.Namespace) -> int:
    """`python -m generator sync`: both phases, or one (`--prepare`, `--publish`); the token
    comes from GITHUB_TOKEN, or with `--app-id` the GitHub App's private key from
    SYNC_APP_PRIVATE_KEY.

    Sync runs in two phases (`generator.sync.stage`, issue 29): the ExecuTorch ref is
    untrusted, and building and checking it runs its code. Without `--prepare`/`--publish`
    both run here: this process makes itself non-dumpable, then runs the build and the check
    in a child (`sync --prepare` into a temporary staging folder) whose environment lacks
    GITHUB_TOKEN, SYNC_APP_PRIVATE_KEY and SYNC_TOKEN (and any variable holding their
    values), kills the child's process group, checks the staged tree's digest and only then
    publishes it (clone, compare, lint, body, push, GitHub API), executing nothing of it.
    `--prepare DIR` is the first phase alone (refused when a secret is set); `--publish DIR`
    the second, from such a folder (with `--digest`: the digest the first one printed). The
    phases are `generator.sync.phases`; the runner `generator.sync.run.run_sync`.

    The secrets are taken out of `os.environ` first (`unsetenv`), so no other child process
    gets them either; git gets a token only through the askpass environment
    `generator.vcs.git.git_env` passes to each git command that talks to the remote.

    With `--workflow-token`, the note that CI did not run is appended to
    `$GITHUB_STEP_SUMMARY` when that is set.

    Returns:
        0 when a pull request was opened or updated, the repo is already in sync, the sync
        branch's pull request was closed without merging (and `--recreate` not given), a dry
        run finished, or (`--prepare`) the library was staged; failures raise FatalError
        (exit 1).
    """
    from generator.sync import phases
    from generator.sync import run as runner
    from generator.sync.app import APP_KEY_ENV
    from generator.sync.defaults import to_stderr

    prepare_dir: str | None = getattr(args, "prepare", None)
    publish_dir: str | None = getattr(args, "publish", None)
    if prepare_dir is not None and publish_dir is not None:
        raise FatalError("give --prepare or --publish, not both")
    if prepare_dir is not None:
        phases.refuse_secrets()
        return phases.prepare(_options_from_args(args), Path(prepare_dir))
    token = os.environ.pop("GITHUB_TOKEN", None)
    app_key = os.environ.pop(APP_KEY_ENV, None)
    os.environ.pop("SYNC_TOKEN", None)
    options = _options_from_args(args)
    if options.app_id is None and app_key:
        to_stderr(f"{APP_KEY_ENV} is set but --app-id is not given: the key is not used")
        app_key = None
    secrets = [s for s in (token, app_key) if s]
    if publish_dir is not None:
        staged = Path(publish_dir)
        expected = getattr(args, "digest", None)
        phases.harden(secrets)
        phases.publish(options, token, app_key, staged, expected)
        return 0
    child = phases.ChildPhase(_argv(args), secrets)
    runner.run_sync(
        options,
        token,
        app_key=app_key,
        build=child.build,
        check=child.check,
        git_config=child.git_config,
    )
    return 0


def _argv(args: argparse.Namespace) -> list[str]:
    """The command line `args` were parsed from (`generator.cli.main.main` keeps it)."""
    argv = getattr(args, "argv", None)
    if argv is None:
        raise FatalError("internal: sync was not started by generator.cli.main.main")
    return list(argv)


def _options_from_args(args: argparse.Namespace) -> SyncOptions:
    """The `SyncOptions` of the parsed command line (the step summary: $GITHUB_STEP_SUMMARY)."""
    from generator.boards.budgets import UNO_Q
    from generator.sync.options import SyncOptions
    from generator.vcs.git import DEFAULT_BOT_EMAIL, DEFAULT_BOT_NAME, Identity

    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    return SyncOptions(
        build=options_from_args(args),
        repo=args.repo,
        remote=args.remote,
        base=args.base,
        dry_run=args.dry_run,
        api_url=_api_url(args.api_url),
        identity=Identity(args.bot_name or DEFAULT_BOT_NAME, args.bot_email or DEFAULT_BOT_EMAIL),
        compiler=args.compiler,
        run=not args.no_run,
        boards=tuple(args.board or (UNO_Q.key,)),
        keep_older=args.keep_older,
        recreate=args.recreate,
        workflow_token=args.workflow_token,
        step_summary=Path(summary) if summary else None,
        app_id=args.app_id,
    )


def _api_url(given: str | None) -> str:
    """`--api-url`, else `$GITHUB_API_URL` (what an Actions runner sets: GitHub Enterprise's
    API on its hosts; checked here so a refusal names the variable), else api.github.com."""
    from generator.sync.github import DEFAULT_API_URL
    from generator.vcs.remote_inputs import check_api_url

    if given:
        return given
    runner = os.environ.get("GITHUB_API_URL")
    if runner:
        check_api_url(runner, "$GITHUB_API_URL (pass --api-url to override it)")
        return runner
    return DEFAULT_API_URL
