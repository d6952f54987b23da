"""`python -m generator sync`: regenerate the library from a ref and open or update its pull
request (`generator.sync`)."""

from __future__ import annotations

import argparse

from generator.cli.build import add_build_options
from generator.cli.lists import add_list_option
from generator.cli.values import board_list, git_text


def add_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `sync` verb: the build options plus where the library repo lives.

    Defaults of --api-url and --bot-* are filled in by `generator.sync.run` (so that
    parsing does not import PyGithub).
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
    """`python -m generator sync`: both phases, or one (`--prepare`, `--publish`)."""
    from generator.sync.run import sync

    return sync(args)
