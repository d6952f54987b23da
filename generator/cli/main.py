"""Command line: parses arguments and dispatches to `generator.commands.<verb>`."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from generator.cli.lists import add_list_option
from generator.library.layout import LIBRARY_NAME
from generator.util.errors import error_handler
from generator.util.urls import DEFAULT_EXECUTORCH_REPO


def _path(text: str) -> Path:
    """A path option's value: not empty nor only spaces (else argparse's error).

    `Path("")` is `Path(".")`: an empty `--cache-dir ''` (an unset variable in a script)
    would silently mean the current folder.
    """
    if not text.strip():
        raise argparse.ArgumentTypeError(
            f"{text!r} is empty; give a path (the current folder is '.')"
        )
    return Path(text)


def _git_text(what: str) -> Callable[[str], str]:
    """The type of an option's value that reaches git or an HTTP request (`what`: "a git
    URL", "a branch, tag or SHA"): not empty nor only spaces (an empty --remote or --api-url
    would silently mean the default; an empty --executorch-repo reached git and made a cache
    entry), no leading or trailing space, not starting with '-' (git would read an option)."""

    def check(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"{text!r} is empty; give {what}")
        if text.startswith("-"):
            raise argparse.ArgumentTypeError(
                f"{text!r} starts with '-', which git would read as an option; give {what}"
            )
        if text != text.strip():
            raise argparse.ArgumentTypeError(
                f"{text!r} starts or ends with a space; give {what} without them"
            )
        return text

    return check


def add_build_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by `build` and `sync` (sync passes them on to the build)."""
    parser.add_argument(
        "--executorch-ref",
        default="main",
        type=_git_text("a branch, tag or SHA"),
        metavar="REF",
        help="ExecuTorch branch, tag or (short) SHA to generate from (default: main)",
    )
    parser.add_argument(
        "--executorch-repo",
        default=DEFAULT_EXECUTORCH_REPO,
        type=_git_text("a git URL or path"),
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
        type=_path,
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
        type=_path,
        default=Path("build") / LIBRARY_NAME,
        metavar="DIR",
        help=f"where the library is written (default: build/{LIBRARY_NAME}); replaced only "
        "when every step succeeded",
    )
    add_sync_parser(verbs)
    add_check_parser(verbs)
    from generator.cli.lint import add_lint_parser

    add_lint_parser(verbs)
    from generator.release.run import add_release_parser

    add_release_parser(verbs)
    from generator.workflows.install import add_workflows_parser

    add_workflows_parser(verbs)
    return parser


def _board_keys() -> list[str]:
    from generator.boards.budgets import check_boards

    return list(check_boards())


def _board_list(text: str) -> str:
    """`--board`'s value: comma-separated keys of `check_boards()` or `all`, checked here so a
    wrong one exits 2 as argparse's choices do (`ListAction` splits the value)."""
    keys = _board_keys()
    for part in (p.strip() for p in text.split(",")):
        if part and part != "all" and part not in keys:
            raise argparse.ArgumentTypeError(
                f"invalid choice: {part!r} (choose from {', '.join(keys)}, or all)"
            )
    return text


def _positive_seconds(text: str) -> float:
    """`--timeout`'s value: a finite number of seconds above 0 (else argparse's error)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of seconds above 0")
    return value


def add_check_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `check` verb's options (parsing imports none of its stages)."""
    check = verbs.add_parser(
        "check",
        help="model check, UNO Q compile with sizes, emulated and sanitizer runs, arena",
    )
    check.add_argument("library", type=_path, metavar="LIBRARY_DIR", help="the generated library")
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
        type=_positive_seconds,
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
        type=_board_list,
        help="boards to check, keys of the board table generator/boards/budgets.py, or all "
        "(default: "
        "unoq); every stage runs per board, the host run once per example",
    )
    check.add_argument(
        "--no-run", action="store_true", help="compile and measure only; run nothing"
    )
    check.add_argument(
        "--json", type=_path, metavar="FILE", help="also write the report as JSON to FILE"
    )
    check.add_argument(
        "--cache-dir",
        type=_path,
        metavar="DIR",
        help="cache root; objects go to DIR/objects (default: the user cache folder)",
    )
    check.add_argument(
        "--keep",
        type=_path,
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


def add_sync_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    sync.add_argument("--repo", required=True, metavar="OWNER/NAME", help="the library repo")
    sync.add_argument(
        "--remote",
        type=_git_text("a git URL"),
        metavar="GIT_URL",
        help="git URL to clone and push (default: the repo's clone URL on GitHub); https, "
        "or plain http only to this machine (the token goes along)",
    )
    sync.add_argument(
        "--base",
        default="main",
        type=_git_text("a branch name"),
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
        type=_git_text("a URL"),
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
        type=_board_list,
        help="boards `check` checks, as `check --board` takes them: keys of the board table "
        "generator/boards/budgets.py, or all (default: unoq); unoq must be among them "
        "(the link-modes "
        "section and the examples' header comments are the UNO Q's); the committed report, "
        "the sizes and the boards table hold every board",
    )
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
    sync.add_argument(
        "--app-id",
        metavar="ID",
        help="act as this GitHub App (its App ID or client ID), its private key read from the "
        "environment variable SYNC_APP_PRIVATE_KEY (never from the command line): sync mints "
        "the App's installation tokens itself, when needed and again before they expire "
        "(wins over GITHUB_TOKEN)",
    )


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
        if args.command == "build":
            from generator.pipeline.run import build

            return build(args)
        if args.command == "sync":
            from generator.sync.run import sync

            return sync(args)
        if args.command == "check":
            from generator.check.runner import check

            return check(args)
        if args.command == "lint":
            from generator.cli.lint import lint

            return lint(args)
        if args.command == "release":
            from generator.release.run import release

            return release(args)
        if args.command == "workflows":
            from generator.workflows.install import workflows

            return workflows(args)
    raise AssertionError(f"unhandled command {args.command}")
