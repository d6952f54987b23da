"""`python -m generator release`: tag `v<version>` on the library repo (`generator.release`)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

#: Shown in --help; `generator.vcs.git.DEFAULT_BOT_*` are the values (not imported at parse time,
#: which would load GitPython and PyGithub for every verb).
_BOT_NAME_HELP = "executorch-arduino-bot"
_BOT_EMAIL_HELP = "executorch-arduino-bot@users.noreply.github.com"


def add_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `release` verb's options."""
    release = verbs.add_parser(
        "release",
        help="tag v<version> on the library repo's main and print the release notes "
        "(token from GITHUB_TOKEN)",
    )
    release.add_argument("--repo", required=True, metavar="OWNER/NAME", help="the library repo")
    release.add_argument(
        "--remote",
        metavar="GIT_URL",
        help="git URL to clone and push (default: https://github.com/OWNER/NAME.git); "
        "without credentials in it; https, or plain http only to this machine",
    )
    release.add_argument(
        "--ref",
        default="main",
        metavar="REF",
        help="branch, tag or SHA of the library repo to release; must be on main (default: main)",
    )
    release.add_argument(
        "--retag",
        action="store_true",
        help="move an existing v<version> from another commit to this one (pushed with a "
        "lease on the old tag)",
    )
    release.add_argument(
        "--notes", type=Path, metavar="FILE", help="also write the release notes to FILE"
    )
    release.add_argument(
        "--bot-name", metavar="NAME", help=f"tagger name (default: {_BOT_NAME_HELP})"
    )
    release.add_argument(
        "--bot-email", metavar="EMAIL", help=f"tagger email (default: {_BOT_EMAIL_HELP})"
    )


def run(args: argparse.Namespace) -> int:
    """`python -m generator release`: `generator.release.run.run_release` with the parsed
    options; the token comes from GITHUB_TOKEN, which is taken out of this process's
    environment first (git gets it only through the askpass environment of
    `generator.vcs.git.git_env`).

    Returns:
        0 when the tag was pushed, moved, or already on the commit; refusals and failures
        raise FatalError (exit 1).
    """
    from generator.release.run import run_release
    from generator.release.step import ReleaseOptions
    from generator.vcs.git import DEFAULT_BOT_EMAIL, DEFAULT_BOT_NAME, Identity

    token = os.environ.pop("GITHUB_TOKEN", None)
    options = ReleaseOptions(
        repo=args.repo,
        remote=args.remote,
        ref=args.ref,
        retag=args.retag,
        identity=Identity(args.bot_name or DEFAULT_BOT_NAME, args.bot_email or DEFAULT_BOT_EMAIL),
        notes=args.notes,
    )
    run_release(options, token)
    return 0
