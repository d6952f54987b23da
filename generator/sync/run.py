"""`python -m generator sync`: regenerate the library from a ref and open (or update) its pull
request on the library repo, with the `check` report attached.

Data flows one way, one named step each: clone the library repo -> build the library
(`generator.pipeline.run`) -> replace the generated paths on the sync branch -> refuse a
closed pull request, someone else's commits and a reused or lower version -> lint -> check
(`generator.check.run`) -> commit and push -> pull request -> older sync pull requests
closed as superseded. Everything happens in a temporary clone; the library repo changes only
by the push of our own `sync/` branch and the pull request, and a push is undone if the pull
request then fails. Only once the pull request stands are the other open sync pull requests
closed and their branches deleted (a failure there is a warning: the new pull request stays).

The steps' modules, in `generator.sync`: `inputs` (API URL and base checked up front), `tree`
(replace generated paths), `version` (reused, relabelled or not greater versions refused),
`report` (the check report as committed), `body` (pull request text), `github` (PyGithub with
retries: the sync pull request, closed and superseded ones), `app` (with `--app-id`: the GitHub
App's installation tokens, minted by sync when needed and again before they expire, for the API
and for git). Shared with release:
`generator.vcs.repo_inputs` (token and repo checked up front), `generator.vcs.git` (thin GitPython
helpers,
token handling), `generator.util.tempdirs`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from git import GitCommandError, Repo

from generator.boards.board_docs import boards_markdown
from generator.boards.budgets import UNO_Q, board_keys, check_boards
from generator.boards.linkmode_docs import link_modes_markdown, update_sketches
from generator.check.compile import CompileResult
from generator.check.report import CheckReport, board_data, board_part
from generator.check.run import run_check
from generator.check.run_sketch import RunOutput
from generator.library.compare import instruction_rows, size_rows
from generator.library.facts import facts_in_folder
from generator.library.layout import (
    CHECK_REPORT_FILE,
    GENERATED_PATHS,
    LIBRARY_FACTS_FILE,
    LIBRARY_NAME,
    PIN_FILE,
    PROPERTIES_FILE,
    PROVENANCE_FILE,
)
from generator.library.properties import properties_version
from generator.library.version import check_explicit_version
from generator.lint.run import lint_library
from generator.pipeline.run import BuildOptions, BuildResult, build_library, options_from_args
from generator.sync import stage
from generator.sync.app import APP_KEY_ENV, AppCredentials
from generator.sync.body import (
    PullRequestFacts,
    commit_message,
    emulated_runs,
    fitting_body,
    pr_title,
    workflow_token_note,
)
from generator.sync.committed_report import committed_report
from generator.sync.github import (
    DEFAULT_API_URL,
    SYNC_LABEL,
    ClosedPull,
    GitHubRepo,
    PullRequestResult,
    SyncPull,
    redact,
)
from generator.sync.tree import replace_generated
from generator.sync.upstream import arduino_changes
from generator.sync.version_gate import (
    check_not_relabelled,
    check_version_greater,
    check_version_unused,
)
from generator.util.cache import default_cache_dir
from generator.util.errors import FatalError
from generator.util.tempdirs import exit_cleanly_on_signals, remove_stale, work_folder
from generator.util.urls import display_url, refuse_credentials
from generator.vcs import git as g
from generator.vcs.git import DEFAULT_BOT_EMAIL, DEFAULT_BOT_NAME, SYNC_PREFIX
from generator.vcs.git_config import snapshot_global_config
from generator.vcs.remote_inputs import check_api_url, check_base
from generator.vcs.repo_inputs import check_app_id, check_repo, clean_private_key, clean_token
from generator.workflows.render import installed_drift

#: Files whose change alone does not make a sync worth a pull request.
_VOLATILE = frozenset({PROVENANCE_FILE, LIBRARY_FACTS_FILE, CHECK_REPORT_FILE})
_SHA = re.compile(r"^[0-9a-f]{40}$")


class CheckReportLike(Protocol):
    """What sync needs of `generator.check.report.CheckReport`."""

    @property
    def passed(self) -> bool: ...

    def to_markdown(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...


#: build(options, out) -> BuildResult; writes the library to `out` (must not exist).
BuildFn = Callable[[BuildOptions, Path], BuildResult]
#: check(library, options) -> report.
CheckFn = Callable[[Path, "SyncOptions"], CheckReportLike]
#: connect(api_url, repo, credentials) -> GitHubRepo; credentials: a token, or a GitHub App.
ConnectFn = Callable[[str, str, str | AppCredentials], GitHubRepo]


@dataclass(frozen=True)
class SyncOptions:
    """What `python -m generator sync` was asked to do.

    Attributes:
        build: the build options, passed on to `build_library` (ref, version, op set, examples).
        repo: the library repo on GitHub, OWNER/NAME.
        remote: git URL to clone and push (None: the repo's clone URL from the API).
        base: branch the pull request targets; never pushed to.
        dry_run: build, check and render, but push nothing and call no GitHub API.
        api_url: GitHub REST API root (GitHub Enterprise: https://HOST/api/v3).
        identity: author and committer of the sync commit.
        compiler, run: passed on to `check` (toolchain back end; whether to run emulated).
        boards: the boards `check` checks, as `check --board` takes them (keys of
            `generator.boards.budgets.check_boards`, or `all`; `sync_board_keys`); `unoq` must be
            among them: the link-modes section and the examples' header comments are the UNO
            Q's loader verdicts. More than one: the report is `board_data`'s merged one.
        work_dir: where the clone and the build go and stay (for inspection); None: a
            temporary folder, removed at the end.
        keep_older: leave the other open sync pull requests open (default: close them as
            superseded and delete their branches); their versions then count as used.
        recreate: open a pull request for the sync branch even though the last one from it
            was closed without merging (default: say so and stop, exit 0).
        workflow_token: the token is the Actions GITHUB_TOKEN, whose pushes start no workflow:
            the body (and the step summary) say that CI did not run and how to fix it.
        step_summary: the job summary (`$GITHUB_STEP_SUMMARY`): a passing check's report and
            (with `workflow_token`) the CI note are appended to it; a failing check's report
            goes to stdout, which the workflow copies there; a failing sync's error (redacted)
            is appended. None: no summary.
        app_id: act as this GitHub App (App ID or client ID; its private key comes from
            SYNC_APP_PRIVATE_KEY): sync mints the App's installation tokens itself, when
            needed and again near their end. It wins over GITHUB_TOKEN. None: use the token.
    """

    build: BuildOptions
    repo: str
    remote: str | None = None
    base: str = "main"
    dry_run: bool = False
    api_url: str = DEFAULT_API_URL
    identity: g.Identity = field(
        default_factory=lambda: g.Identity(DEFAULT_BOT_NAME, DEFAULT_BOT_EMAIL)
    )
    compiler: str = "auto"
    run: bool = True
    boards: tuple[str, ...] = (UNO_Q.key,)
    work_dir: Path | None = None
    keep_older: bool = False
    recreate: bool = False
    workflow_token: bool = False
    step_summary: Path | None = None
    app_id: str | None = None


@dataclass
class SyncResult:
    """What sync did.

    Attributes:
        status: "opened" / "updated" a pull request, "in-sync" (nothing to do), "closed" (the
            sync branch's pull request was closed without merging; nothing done), or
            "dry-run".
        branch: the sync branch; sha: the ExecuTorch SHA; version: the library version.
        commit: the library commit on the sync branch (None when nothing was committed).
        pull: the pull request (opened/updated only); body: its text (None when in sync).
        upstream_version: the ref's version.txt, verbatim.
        closed: the closed pull request ("closed" only).
        superseded: numbers of the older sync pull requests this sync closed.
    """

    status: Literal["opened", "updated", "in-sync", "closed", "dry-run"]
    branch: str
    sha: str
    version: str
    commit: str | None = None
    pull: PullRequestResult | None = None
    body: str | None = None
    upstream_version: str = ""
    closed: ClosedPull | None = None
    superseded: list[int] = field(default_factory=list)


def sync_branch(sha: str) -> str:
    """`sync/executorch-<first 12 hex digits of the SHA>`."""
    return f"{SYNC_PREFIX}executorch-{sha[:12]}"


def sync(args: argparse.Namespace) -> int:
    """Run sync with the parsed options; the token comes from GITHUB_TOKEN, or with `--app-id`
    the GitHub App's private key from SYNC_APP_PRIVATE_KEY.

    Sync runs in two phases (`generator.sync.stage`, issue 29): the ExecuTorch ref is
    untrusted, and building and checking it runs its code. Without `--prepare`/`--publish`
    both run here: this process makes itself non-dumpable, then runs the build and the check
    in a child (`sync --prepare` into a temporary staging folder) whose environment lacks
    GITHUB_TOKEN, SYNC_APP_PRIVATE_KEY and SYNC_TOKEN (and any variable holding their
    values), kills the child's process group, checks the staged tree's digest and only then
    publishes it (clone, compare, lint, body, push, GitHub API), executing nothing of it.
    `--prepare DIR` is the first phase alone (refused when a secret is set); `--publish DIR`
    the second, from such a folder (with `--digest`: the digest the first one printed).

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
    prepare_dir: str | None = getattr(args, "prepare", None)
    publish_dir: str | None = getattr(args, "publish", None)
    if prepare_dir is not None and publish_dir is not None:
        raise FatalError("give --prepare or --publish, not both")
    if prepare_dir is not None:
        return prepare(args, Path(prepare_dir))
    token = os.environ.pop("GITHUB_TOKEN", None)
    app_key = os.environ.pop(APP_KEY_ENV, None)
    os.environ.pop("SYNC_TOKEN", None)
    options = _options_from_args(args)
    if options.app_id is None and app_key:
        _stderr(f"{APP_KEY_ENV} is set but --app-id is not given: the key is not used")
        app_key = None
    secrets = [s for s in (token, app_key) if s]
    if publish_dir is not None:
        staged = Path(publish_dir)
        expected = getattr(args, "digest", None)
        _harden(secrets)
        _publish(options, token, app_key, staged, expected)
        return 0
    child = _ChildPhase(_argv(args), secrets)
    run_sync(
        options,
        token,
        app_key=app_key,
        build=child.build,
        check=child.check,
        git_config=child.git_config,
    )
    return 0


def _harden(secrets: list[str]) -> None:
    """Make this process non-dumpable and scrub `secrets` from its initial environment
    (`generator.sync.stage`), warning where that cannot be done."""
    if not stage.make_nondumpable():
        _stderr(
            "warning: could not make sync non-dumpable (not Linux?): the build and check "
            "run in a child without the token, but the same user may read this process's "
            "environment"
        )
    if secrets and not stage.scrub_initial_environ(secrets):
        _stderr(
            "warning: could not scrub the token from this process's initial environment "
            "(/proc/self/environ)"
        )


@dataclass
class _ChildPhase:
    """The build and check back ends of the CLI's sync: `build` runs `sync --prepare` in a
    child process without the secrets (`generator.sync.stage`) into a staging folder beside
    the build folder `run_sync` names, and returns the staged build once its digest checks
    out; `check` returns the report the child staged.

    Attributes:
        argv: the command line sync was given (the child's is it plus `--prepare DIR`).
        secrets: the token and the App key (variables holding them are not passed on).
    """

    argv: list[str]
    secrets: list[str]
    report: stage.StagedReport | None = None
    global_config: str | None = None

    def build(self, options: BuildOptions, out: Path) -> BuildResult:
        """Run the prepare phase; the staging folder is `out`'s sibling `stage`. The global
        git config is read first (`git_config`): the child may write the user's.

        Raises:
            FatalError: the child failed, or what it staged is not intact (`read_stage`).
        """
        _harden(self.secrets)
        self.global_config = snapshot_global_config()
        staged = out.parent / "stage"
        env = stage.child_env(os.environ, self.secrets)
        _stderr("building and checking in an unprivileged child process (no token)")
        stage.run_prepare_child([*self.argv, "--prepare", str(staged)], env, _stderr)
        built, self.report = stage.read_stage(staged)
        if built.ref != options.executorch_ref:
            raise FatalError(f"the child built {built.ref!r}, not {options.executorch_ref!r}")
        return built

    def check(self, library: Path, options: SyncOptions) -> CheckReportLike:
        """The report the prepare phase staged."""
        if self.report is None:
            raise FatalError("internal: the check was asked for before the build")
        return self.report

    def git_config(self) -> str | None:
        """The global git config as it was before the child started (None: not started)."""
        return self.global_config


def _argv(args: argparse.Namespace) -> list[str]:
    """The command line `args` were parsed from (`generator.cli.main.main` keeps it)."""
    argv = getattr(args, "argv", None)
    if argv is None:
        raise FatalError("internal: sync was not started by generator.cli.main.main")
    return list(argv)


def _options_from_args(args: argparse.Namespace) -> SyncOptions:
    """The `SyncOptions` of the parsed command line."""
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    return SyncOptions(
        build=options_from_args(args),
        repo=args.repo,
        remote=args.remote,
        base=args.base,
        dry_run=args.dry_run,
        api_url=_api_url(args.api_url),
        identity=g.Identity(args.bot_name or DEFAULT_BOT_NAME, args.bot_email or DEFAULT_BOT_EMAIL),
        compiler=args.compiler,
        run=not args.no_run,
        boards=tuple(args.board or (UNO_Q.key,)),
        keep_older=args.keep_older,
        recreate=args.recreate,
        workflow_token=args.workflow_token,
        step_summary=Path(summary) if summary else None,
        app_id=args.app_id,
    )


def prepare(
    args: argparse.Namespace,
    staged: Path,
    build: BuildFn | None = None,
    check: CheckFn | None = None,
) -> int:
    """`sync --prepare DIR`: the unprivileged phase. Build the library into `DIR/library`,
    check it, and write the report and the manifest (`generator.sync.stage.write_stage`);
    prints the tree's digest (`sha256:<hex>`) as the last line of stdout, and, when
    `$GITHUB_OUTPUT` is set, appends `digest=<it>` there. A failing check is staged too: the
    publish phase refuses it.

    Raises:
        FatalError: a secret (GITHUB_TOKEN, SYNC_APP_PRIVATE_KEY, SYNC_TOKEN) is set: this
            phase runs upstream code and must not see it; `DIR` exists and is not empty;
            bad options; the build failed.
    """
    found = stage.secrets_in_env(os.environ)
    if found:
        raise FatalError(
            f"sync --prepare builds and runs code of the ExecuTorch ref, which must not see "
            f"the library repo's credentials: unset {', '.join(found)} for this step (give "
            "them only to `sync --publish`)"
        )
    options = _options_from_args(args)
    sync_board_keys(options.boards)
    refuse_credentials(options.build.executorch_repo, "--executorch-repo")
    if options.build.library_version is not None:
        check_explicit_version(options.build.library_version)
    if staged.exists() and (not staged.is_dir() or any(staged.iterdir())):
        raise FatalError(f"--prepare {staged}: the folder exists and is not empty")
    staged.mkdir(parents=True, exist_ok=True)
    staged = staged.resolve()
    built = (build or _default_build)(options.build, staged / stage.LIBRARY_DIR)
    if not _SHA.match(built.sha):
        raise FatalError(f"the build reported pin {built.sha!r}, not a full SHA")
    _stderr("checking the built library")
    report = (check or _default_check)(built.out, options)
    roots = {
        built.out: ".",
        staged: "<work>",
        options.build.cache_dir or default_cache_dir(): "<cache>",
    }
    data = committed_report(report.to_dict(), roots)
    digest = stage.write_stage(staged, built, report.passed, report.to_markdown(), data)
    output = os.environ.get("GITHUB_OUTPUT")
    if output:
        with open(output, "a", encoding="utf-8") as f:
            f.write(f"digest={digest}\n")
    _stdout(digest)
    return 0


def _publish(
    options: SyncOptions,
    token: str | None,
    app_key: str | None,
    staged: Path,
    expected: str | None,
    connect: ConnectFn | None = None,
) -> SyncResult:
    """The publish phase: `run_sync` with the staged build and check report as its back ends
    (the digest checked first: `generator.sync.stage.read_stage`).

    Raises:
        FatalError: the staged folder is not one `--prepare` wrote, its digest is wrong, it
            was built from another ref or version than the options ask, or `run_sync`'s.
    """
    built, report = stage.read_stage(staged, expected)
    wanted = options.build
    if built.ref != wanted.executorch_ref:
        raise FatalError(
            f"the staged library was built from ExecuTorch {built.ref!r}, not "
            f"{wanted.executorch_ref!r}: prepare and publish with the same options"
        )
    if wanted.library_version is not None and built.library_version != wanted.library_version:
        raise FatalError(
            f"the staged library is version {built.library_version}, not "
            f"{wanted.library_version}: prepare and publish with the same options"
        )

    def staged_build(_options: BuildOptions, _out: Path) -> BuildResult:
        return built

    def staged_check(_library: Path, _options: SyncOptions) -> CheckReportLike:
        return report

    return run_sync(
        options,
        token,
        app_key=app_key,
        build=staged_build,
        check=staged_check,
        connect=connect or _default_connect,
    )


def _api_url(given: str | None) -> str:
    """`--api-url`, else `$GITHUB_API_URL` (what an Actions runner sets: GitHub Enterprise's
    API on its hosts; checked here so a refusal names the variable), else api.github.com."""
    if given:
        return given
    runner = os.environ.get("GITHUB_API_URL")
    if runner:
        check_api_url(runner, "$GITHUB_API_URL (pass --api-url to override it)")
        return runner
    return DEFAULT_API_URL


def _default_build(options: BuildOptions, out: Path) -> BuildResult:
    return build_library(options, out)


def sync_board_keys(values: Collection[str]) -> list[str]:
    """The keys of the boards sync checks, in order: `values` as `check --board` takes them
    (`generator.boards.budgets.board_keys`: keys of `check_boards()`, `all` for every one).

    Raises:
        FatalError: a key the board table lacks, or no `unoq` among them (the pull request's
            link-modes section and the examples' header comments are the UNO Q's).
    """
    keys = board_keys(list(values), check_boards())
    if UNO_Q.key not in keys:
        raise FatalError(
            "sync writes the link-modes section and the examples' header comments from the "
            f"UNO Q's check: add {UNO_Q.key} to --board (e.g. --board {UNO_Q.key},{keys[0]}, "
            "or all)"
        )
    return keys


@dataclass(frozen=True)
class BoardsReport:
    """The check of several boards as one report (`CheckReportLike`): each board's
    `CheckReport` by key, in the order checked; its JSON is `board_data`'s."""

    reports: list[tuple[str, CheckReport]]

    @property
    def passed(self) -> bool:
        return all(report.passed for _, report in self.reports)

    def to_markdown(self) -> str:
        return "\n".join(report.to_markdown() for _, report in self.reports)

    def to_dict(self) -> dict[str, Any]:
        return board_data(self.reports, check_boards())


def _default_check(library: Path, options: SyncOptions) -> CheckReportLike:
    keys = sync_board_keys(options.boards)
    examples = list(options.build.examples) if options.build.examples else None
    if keys == [UNO_Q.key]:
        # The one report as sync always committed it (no "boards", no per-entry "board").
        return run_check(
            library,
            examples=examples,
            compiler=options.compiler,
            run=options.run,
            cache_dir=options.build.cache_dir,
        )
    table = check_boards()
    host_runs: dict[str, tuple[CompileResult, RunOutput | None]] = {}
    return BoardsReport(
        [
            (
                key,
                run_check(
                    library,
                    examples=examples,
                    compiler=options.compiler,
                    run=options.run,
                    cache_dir=options.build.cache_dir,
                    board=table[key],
                    host_runs=host_runs,
                ),
            )
            for key in keys
        ]
    )


def _default_connect(api_url: str, repo: str, credentials: str | AppCredentials) -> GitHubRepo:
    return GitHubRepo(api_url, repo, credentials, say=_stderr)


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _stdout(text: str) -> None:
    print(text, flush=True)


def run_sync(
    options: SyncOptions,
    token: str | None,
    *,
    app_key: str | None = None,
    build: BuildFn = _default_build,
    check: CheckFn = _default_check,
    connect: ConnectFn = _default_connect,
    say: Callable[[str], None] = _stderr,
    emit: Callable[[str], None] = _stdout,
    git_config: Callable[[], str | None] | None = None,
) -> SyncResult:
    """Regenerate the library from `options.build.executorch_ref` and open or update its
    sync pull request.

    Args:
        options: see `SyncOptions`.
        token: GitHub token (from GITHUB_TOKEN; surrounding whitespace is dropped); needed
            unless `dry_run` or `options.app_id`. Never printed, never written to git config or
            to disk.
        app_key: with `options.app_id`: the App's private key, PEM (from SYNC_APP_PRIVATE_KEY;
            `generator.vcs.repo_inputs.clean_private_key`). Never printed or written.
        build, check, connect: the build, check and GitHub back ends (tests inject their own).
        say: progress lines (stderr); emit: results for the user (stdout: the report, body).
        git_config: asked once the build is done: the global git config text every git of
            the run then reads instead of the user's files (`generator.vcs.git.git_env`); the
            CLI's child phase gives the one read before the untrusted child ran. None, or
            None returned: the user's.
    Returns:
        What was done (see `SyncResult`).
    Raises:
        FatalError: bad options (repo, API URL, base branch, a token with spaces, control or
            non-ASCII characters, an --app-id that is no App ID or client ID, a private key
            missing or not PEM), missing token, an API URL that is not GitHub's, GitHub or git
            failures (401, 403, 404, 422, rate limits and 5xx after bounded retries, network
            down, protected branch, push rejected; the 403 of a workflow token that may not
            open pull requests names the setting), unknown ref (from the build), a reused
            version, a version not above every published one, a relabelled pin, a
            maintainer's commits on the sync branch, or a failing check. The library repo is
            left as it was (a push is undone when anything after it fails, even unexpectedly).
            Failing to close a superseded pull request, delete its branch or write the step
            summary is a warning (on `say`), not an error. Also: a bot name or email git would
            store changed (`generator.vcs.git.check_identity`); a URL the token may not go
            to (`generator.util.urls.token_url_problem`: --remote, the API's clone_url, git's
            rewriting of either, a redirect), refused before the token is sent. With
            `options.step_summary`, the error's text (every secret redacted) is appended to
            the step summary before it is raised.

    The build runs first, before the library repo is cloned and before the askpass folder
    exists, so an untrusted build (the CLI's child phase) finds neither to change.

    Temporary folders (the work folder, the askpass folder) are removed however the run ends
    (SIGTERM and SIGHUP included); those of earlier runs that were killed are removed first,
    and named on `say` (`generator.util.tempdirs`).
    """
    secrets: list[Callable[[], Collection[str]]] = [lambda: (token or "", app_key or "")]
    try:
        backends = _Backends(build, check, connect, git_config)
        return _run_sync(options, token, app_key, backends, say, emit, secrets)
    except FatalError as e:
        if options.step_summary is not None:
            text = str(e)
            for secret in sorted({s for get in secrets for s in get()}, key=len, reverse=True):
                text = redact(text, secret)
            _append_failure(options.step_summary, text, say)
        raise


@dataclass(frozen=True)
class _Backends:
    """`run_sync`'s back ends: build, check, GitHub, and the global git config source."""

    build: BuildFn
    check: CheckFn
    connect: ConnectFn
    git_config: Callable[[], str | None] | None


def _run_sync(
    options: SyncOptions,
    token: str | None,
    app_key: str | None,
    backends: _Backends,
    say: Callable[[str], None],
    emit: Callable[[str], None],
    secrets: list[Callable[[], Collection[str]]],
) -> SyncResult:
    """`run_sync`; the secrets it comes to hold are added to `secrets` (for the summary)."""
    token = clean_token(token)
    app: AppCredentials | None = None
    if options.app_id is not None:
        app = AppCredentials(check_app_id(options.app_id), clean_private_key(app_key, APP_KEY_ENV))
    check_repo(options.repo)
    check_api_url(options.api_url)
    if options.remote is not None:
        refuse_credentials(options.remote, "--remote")
    refuse_credentials(options.build.executorch_repo, "--executorch-repo")
    check_base(options.base)
    sync_board_keys(options.boards)
    g.check_identity(options.identity)
    if options.build.library_version is not None:
        check_explicit_version(options.build.library_version)
    if app is not None and token:
        say(
            f"--app-id {app.app_id} is given and GITHUB_TOKEN is set: sync uses the GitHub "
            "App's installation tokens, not GITHUB_TOKEN"
        )
    with exit_cleanly_on_signals(say):
        remove_stale(say)
        gh: GitHubRepo | None = None
        remote, source = options.remote, "--remote"
        git_token: str | g.TokenSource | None = token
        if options.dry_run and app is not None:
            say(
                "dry run: no GitHub App token is minted (that takes the GitHub API); the "
                "library repo is cloned without a token"
            )
            git_token = None
        if not options.dry_run:
            if app is None and not token:
                raise FatalError(
                    "GITHUB_TOKEN is not set: export a token with contents: write and "
                    "pull-requests: write on the library repo, or give a GitHub App with "
                    f"--app-id and {APP_KEY_ENV} (or use --dry-run)"
                )
            credentials: str | AppCredentials = app if app is not None else token or ""
            gh = backends.connect(options.api_url, options.repo, credentials)
            secrets.append(gh.secrets)
            git_token = gh.tokens
            info = gh.preflight()
            if remote is None and info.clone_url:
                remote = info.clone_url
                source = f"the clone_url of {options.repo} in the answer of {options.api_url}"
        if remote is None:
            remote, source = f"https://github.com/{options.repo}.git", "the default remote"
        # refused before the build, which now runs before the clone
        g.check_fetch_url(remote, g.GitEnv({}, git_token), source, Path(tempfile.gettempdir()))
        with work_folder(options.work_dir, "sync") as work:
            built, branch = _build(options, work, backends.build, say)
            config = backends.git_config() if backends.git_config is not None else None
            with g.git_env(git_token, config) as genv:
                run = _Run(options, work, genv, gh, backends.build, backends.check, say, emit)
                try:
                    return _sync_in(run, remote, source, built, branch)
                except g.GitFailure as e:
                    raise g.describe_git_failure(
                        e, genv, "work in the clone of the library repo"
                    ) from None


@dataclass(frozen=True)
class _Run:
    """What every step of one sync shares: the options, the work folder, git's environment
    (the token), GitHub (None: a dry run), the back ends and the two output streams."""

    options: SyncOptions
    work: Path
    genv: g.GitEnv
    gh: GitHubRepo | None
    build: BuildFn
    check: CheckFn
    say: Callable[[str], None]
    emit: Callable[[str], None]


@dataclass(frozen=True)
class _Clone:
    """The clone of the library repo: `lib`, and the base branch as it was cloned."""

    lib: Repo
    base_rev: str

    @property
    def worktree(self) -> Path:
        return Path(self.lib.working_dir)


def _sync_in(run: _Run, remote: str, source: str, built: BuildResult, branch: str) -> SyncResult:
    """The steps of `run_sync` after the build (`built`, for `branch`), in the work folder
    (see there); `source` says where `remote` came from."""
    options = run.options
    clone = _clone(run, remote, source)
    if not _replace(run, clone, built, branch):
        run.emit(
            f"already in sync: {options.base} has ExecuTorch {built.sha[:12]} as library "
            f"{built.library_version}; no pull request needed"
        )
        return SyncResult(
            "in-sync",
            branch,
            built.sha,
            built.library_version,
            upstream_version=built.upstream_version,
        )
    closed = _closed_pull(run, branch)
    if closed is not None:
        run.emit(_closed_message(closed, branch, built))
        return SyncResult(
            "closed",
            branch,
            built.sha,
            built.library_version,
            upstream_version=built.upstream_version,
            closed=closed,
        )
    older = _older_pulls(run, branch)
    old_remote = _refuse_foreign_commits(run, clone, branch)
    _refuse_versions(run, clone, built, branch, older)
    _lint(run, clone, built)
    report, report_dict = _check(run, clone, built)
    changes = g.staged_changes(clone.lib, clone.base_rev, GENERATED_PATHS, run.genv)

    facts = _facts(run, clone, built, branch, changes, report, report_dict)
    body, left_out = fitting_body(facts, UNO_Q.name)
    if left_out:
        run.say(f"the pull request body leaves out {' and '.join(left_out)} to fit GitHub's limit")
    title = pr_title(facts)
    if options.dry_run or run.gh is None:
        also = "" if options.keep_older else ", and close the other open sync pull requests"
        run.emit(f"dry run: would push {branch} and open or update a pull request{also}:\n")
        run.emit(no_workflow_commands(f"# {title}\n\n{body}"))
        return SyncResult(
            "dry-run",
            branch,
            built.sha,
            built.library_version,
            body=body,
            upstream_version=built.upstream_version,
        )

    new_commit = _commit(run, clone, built)
    pull = _push_and_open(run.gh, run, clone, branch, title, body, old_remote, new_commit)
    if older is not None and not options.keep_older:
        older = [*older, *_opened_meanwhile(run, clone, branch, older, pull)]
    superseded = [
        old.number for old in older or [] if _supersede(run.gh, run, clone, old, pull, built)
    ]
    if options.step_summary is not None:
        _append_step_summary(
            options.step_summary, pull, report.to_markdown(), options.workflow_token, run.say
        )
    return SyncResult(
        "opened" if pull.created else "updated",
        branch,
        built.sha,
        built.library_version,
        commit=new_commit,
        pull=pull,
        body=body,
        upstream_version=built.upstream_version,
        superseded=superseded,
    )


def _clone(run: _Run, remote: str, source: str) -> _Clone:
    """Clone the library repo into the work folder.

    Raises:
        FatalError: the repo has no base branch; a URL git would use takes the token where
            it may not go (`generator.vcs.git.clone`).
    """
    run.say(f"cloning the library repo {run.genv.redact(display_url(remote))}")
    dest = run.work / "library"
    if dest.exists() or dest.is_symlink():
        # only the build ran before: it must not choose what the clone is
        raise FatalError(f"{dest} exists before the library repo was cloned: refusing to use it")
    lib = g.clone(remote, dest, run.genv, source)
    base = run.options.base
    if g.remote_branch_sha(lib, base) is None:
        raise FatalError(
            f"the library repo has no branch {base!r}: push an initial commit "
            "(e.g. a README) to it, or pass --base"
        )
    return _Clone(lib, f"refs/remotes/origin/{base}")


def _build(
    options: SyncOptions, work: Path, build: BuildFn, say: Callable[[str], None]
) -> tuple[BuildResult, str]:
    """Build the library into the work folder `work`; returns it and its sync branch.

    Raises:
        FatalError: the build failed, reported no full SHA, or its branch is the base.
    """
    say(f"building the library from ExecuTorch {options.build.executorch_ref}")
    built = build(options.build, work / "build" / LIBRARY_NAME)
    if not _SHA.match(built.sha):
        raise FatalError(f"the build reported pin {built.sha!r}, not a full SHA")
    branch = sync_branch(built.sha)
    if branch == options.base:
        raise FatalError(f"refusing to push to the base branch {options.base!r}")
    return built, branch


def _replace(run: _Run, clone: _Clone, built: BuildResult, branch: str) -> bool:
    """Branch `branch` from the base and replace the generated paths with the build's.

    Returns:
        Whether anything but the volatile files (provenance, check report) changed.
    """
    g.checkout_branch(clone.lib, branch, clone.base_rev, run.genv)
    skipped = replace_generated(clone.worktree, built.out)
    if skipped:
        run.say(f"not copied (not generated paths): {', '.join(skipped)}")
    g.stage(clone.lib, GENERATED_PATHS, run.genv)
    changes = g.staged_changes(clone.lib, clone.base_rev, GENERATED_PATHS, run.genv)
    return any(path not in _VOLATILE for _, path in changes)


def _closed_pull(run: _Run, branch: str) -> ClosedPull | None:
    """The sync branch's last pull request when it was closed without merging (unless
    --recreate; None in a dry run, which asks no API)."""
    if run.gh is None or run.options.recreate:
        return None
    return run.gh.closed_pull(branch, run.options.base)


def _older_pulls(run: _Run, branch: str) -> list[SyncPull] | None:
    """The open sync pull requests this one supersedes ([] with --keep-older; None: unknown,
    a dry run asks no API)."""
    if run.options.keep_older:
        return []
    if run.gh is None:
        return None
    pulls = run.gh.open_sync_pulls(run.options.base, SYNC_PREFIX)
    return [p for p in pulls if p.branch != branch]


def _opened_meanwhile(
    run: _Run, clone: _Clone, branch: str, known: list[SyncPull], pull: PullRequestResult
) -> list[SyncPull]:
    """Sync pull requests another sync opened while this one built and checked (two refs
    synced at once run side by side), with their branches fetched so they can be deleted.

    Only those numbered below `pull` are returned: of two syncs that finish together, the
    later pull request stands and closes the earlier, never both each other.
    """
    seen = {p.number for p in known}
    late = [
        p
        for p in _older_pulls(run, branch) or []
        if p.number not in seen and p.number < pull.number
    ]
    for p in late:
        _fetch_branch(run, clone, p.branch)
    return late


def _fetch_branch(run: _Run, clone: _Clone, branch: str) -> str | None:
    """The remote tip of `branch`, fetched into the clone when the clone lacks it (another
    sync pushed it after this one cloned); None when the remote has no such branch."""
    tip = g.remote_branch_sha(clone.lib, branch)
    if tip is not None:
        return tip
    # A branch gone already is fine: closing the pull request is what matters.
    with contextlib.suppress(g.GitFailure):
        refspec = f"+refs/heads/{branch}:refs/remotes/origin/{branch}"
        run.genv.run(["fetch", "-q", "origin", refspec], cwd=clone.worktree)
    return g.remote_branch_sha(clone.lib, branch)


def _refuse_foreign_commits(run: _Run, clone: _Clone, branch: str) -> str | None:
    """Refuse to replace the remote sync branch when someone other than the bot committed on
    it (commits the base lacks): a force push would silently discard them.

    Returns:
        The remote sync branch's tip (None: it does not exist yet).
    """
    tip = g.remote_branch_sha(clone.lib, branch)
    if tip is None:
        return None
    identity = run.options.identity
    foreign = g.foreign_commits(clone.lib, tip, clone.base_rev, identity)
    if foreign:
        shown = "\n".join(f"  {line}" for line in foreign[:10])
        raise FatalError(
            f"the sync branch {branch} on the library repo has commits by someone other than "
            f"the bot ({identity.name} <{identity.email}>):\n{shown}\nsync would replace "
            "them: merge the pull request or take the changes elsewhere, then delete the "
            "branch, and run sync again"
        )
    return tip


def _refuse_versions(
    run: _Run,
    clone: _Clone,
    built: BuildResult,
    branch: str,
    older: list[SyncPull] | None,
) -> None:
    """Refuse a relabelling of the pin the base branch publishes, a version the library repo
    already uses for another pin (base history, tags, other sync branches but those about to
    be superseded: `older`, or every other one in a dry run), and a version not greater than
    every published one (tags, the base branch's)."""
    lib, base_rev, base = clone.lib, clone.base_rev, run.options.base
    not_counted: Collection[str]
    if older is None:
        # a dry run cannot ask which are open: it assumes every other one would be superseded
        not_counted = g.remote_branches(lib, SYNC_PREFIX)
    else:
        not_counted = {p.branch for p in older}
    base_pin_text = g.file_at(lib, base_rev, PIN_FILE)
    base_pin = base_pin_text.strip() if base_pin_text else None
    base_version = properties_version(g.file_at(lib, base_rev, PROPERTIES_FILE))
    check_not_relabelled(built.library_version, built.sha, base_version, base_pin, base)
    others = [
        (f"refs/remotes/origin/{name}", f"on the sync branch {name}")
        for name in g.remote_branches(lib, SYNC_PREFIX)
        if name != branch and name not in not_counted
    ]
    uses = [
        *g.versions_in_history(lib, base_rev, PROPERTIES_FILE, PIN_FILE, f"on {base}"),
        *g.versions_at(lib, [*g.tag_revs(lib), *others], PROPERTIES_FILE, PIN_FILE),
    ]
    tags = g.tag_names(lib)
    check_version_unused(built.library_version, built.sha, tags, uses)
    published = g.published_versions(lib, PROPERTIES_FILE)
    check_version_greater(built.library_version, built.sha, published, base_version, base_pin, base)


def _lint(run: _Run, clone: _Clone, built: BuildResult) -> None:
    """Lint the library repo's work tree as the Library Manager will.

    Raises:
        FatalError: a finding (the findings are emitted first).
    """
    run.say("linting the library repo as the Library Manager will")
    linted = lint_library(clone.worktree)
    if not linted.passed:
        run.emit(no_workflow_commands(linted.to_markdown()))
        raise FatalError(
            f"the library repo with ExecuTorch {built.sha[:12]} fails {linted.counts()} of the "
            "Library Manager's rules (printed above; `python -m generator lint` names each "
            "rule), so the Library Manager would not publish it; no pull request was opened "
            "or updated"
        )


def no_workflow_commands(text: str) -> str:
    """`text` with a backslash before each line that would start with `::` (leading blanks
    aside), which the Actions runner would take for a workflow command (`::error`,
    `::add-mask::`, `::stop-commands::`) in the job that holds the token: the report and the
    body come from the untrusted check. Markdown shows `\\:` as `:`."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        rest = line.lstrip(" \t")
        if rest.startswith("::"):
            lines[i] = line[: len(line) - len(rest)] + "\\" + rest
    return "".join(lines)


def _check(run: _Run, clone: _Clone, built: BuildResult) -> tuple[CheckReportLike, dict[str, Any]]:
    """Check the built library, write its report as committed into the work tree and stage
    it; returns the report and that committed form.

    Raises:
        FatalError: the check failed (the report is emitted first).
    """
    run.say("checking the regenerated library")
    report = run.check(built.out, run.options)
    # The library's own report names it relative to itself and holds nothing that changes
    # from run to run (times, cache counts, this machine's paths), so re-syncing an unchanged
    # ref writes the same file.
    roots = {
        built.out: ".",
        run.work: "<work>",
        run.options.build.cache_dir or default_cache_dir(): "<cache>",
    }
    report_dict = committed_report(report.to_dict(), roots)
    for part in (report_dict, report_dict.get("model_check")):
        if isinstance(part, dict) and "library" in part:
            part["library"] = "."
    report_path = clone.worktree / CHECK_REPORT_FILE
    report_path.parent.mkdir(parents=True, exist_ok=True)
    report_path.write_text(json.dumps(report_dict, indent=2, sort_keys=True) + "\n")
    # What each core's loader does with each example goes into its header comment: the UNO
    # Q's verdicts (the comment names no board).
    update_sketches(clone.worktree / "examples", board_part(report_dict, UNO_Q.key))
    if not report.passed:
        run.emit(no_workflow_commands(report.to_markdown()))
        raise FatalError(
            f"check failed for ExecuTorch {built.ref} ({built.sha[:12]}); no pull request "
            "was opened or updated (the report is printed above)"
        )
    g.stage(clone.lib, GENERATED_PATHS, run.genv)
    return report, report_dict


def _facts(
    run: _Run,
    clone: _Clone,
    built: BuildResult,
    branch: str,
    changes: list[tuple[str, str]],
    report: CheckReportLike,
    report_dict: dict[str, Any],
) -> PullRequestFacts:
    """Gather what the body says, comparing the regenerated tree with the base branch."""
    lib, base_rev, build = clone.lib, clone.base_rev, run.options.build
    base_facts = g.facts_at(lib, base_rev)
    base_report_text = g.file_at(lib, base_rev, CHECK_REPORT_FILE)
    base_report: dict[str, Any] | None = None
    if base_report_text:
        try:
            loaded = json.loads(base_report_text)
            base_report = loaded if isinstance(loaded, dict) else None
        except json.JSONDecodeError:
            base_report = None
    by_status: dict[str, list[str]] = {"A": [], "D": [], "M": []}
    for status, path in changes:
        by_status.setdefault(status, []).append(path)
    return PullRequestFacts(
        link_modes=link_modes_markdown(board_part(report_dict, UNO_Q.key)),
        boards=boards_markdown(report_dict),
        ref=built.ref,
        sha=built.sha,
        base_pin=base_facts.pin,
        upstream_version=built.upstream_version,
        library_version=built.library_version,
        base_version=properties_version(g.file_at(lib, base_rev, PROPERTIES_FILE)),
        op_set=list(built.op_set),
        kernels=list(facts_in_folder(built.out).kernels),
        base_kernels=list(base_facts.kernels),
        added=by_status["A"],
        removed=by_status["D"],
        changed=by_status["M"],
        check_markdown=report.to_markdown().strip(),
        check_passed=report.passed,
        sizes=size_rows(report_dict, base_report),
        instructions=instruction_rows(report_dict, base_report),
        runs=emulated_runs(report_dict),
        base_has_report=base_report is not None,
        branch=branch,
        base=run.options.base,
        ci_note=workflow_token_note() if run.options.workflow_token else None,
        workflow_drift=installed_drift(clone.worktree),
        upstream=arduino_changes(
            build.executorch_repo,
            base_facts.pin,
            built.sha,
            build.cache_dir,
        ),
    )


def _commit(run: _Run, clone: _Clone, built: BuildResult) -> str:
    """Commit the staged tree as the bot; returns the commit's SHA."""
    return g.commit(
        clone.lib,
        commit_message(built.ref, built.sha, built.library_version, built.upstream_version),
        run.options.identity,
        run.genv,
    )


def _push_and_open(
    gh: GitHubRepo,
    run: _Run,
    clone: _Clone,
    branch: str,
    title: str,
    body: str,
    old_remote: str | None,
    new_commit: str,
) -> PullRequestResult:
    """Push `new_commit` to the sync branch with a lease on `old_remote` (not when the branch
    already holds this tree), then open or update its pull request.

    Whatever goes wrong before the pull request reflects the push (Ctrl-C and SIGTERM during
    the push included), a push made now is undone first, with a lease on what was pushed, so
    the library repo never keeps a pushed branch without its pull request. Once the pull
    request exists it is never undone: on github.com deleting a pull request's head branch
    closes it, and the next sync would then take it for one a maintainer closed. An
    interruption while the pull request was being opened (its fate unknown) asks GitHub; when
    that cannot tell, the branch is kept (a later sync reuses it).

    Raises:
        FatalError: the push or GitHub refused or failed (unexpected errors are named as such).
    """
    lib = clone.lib
    pushing = old_remote is None or lib.commit(old_remote).tree != lib.commit(new_commit).tree
    if not pushing:
        run.say(f"{branch} already holds this tree; not pushing")
        new_commit = old_remote or new_commit
    opened: list[PullRequestResult | None] = []  # [None]: being created; [.., result]: stands
    push_done = False
    try:
        if pushing:
            run.say(f"pushing {branch}")
            try:
                g.push_with_lease(
                    lib,
                    new_commit,
                    branch,
                    old_remote,
                    run.genv,
                    f"push {branch} to the library repo",
                )
            except FatalError:
                # Refused, or the answer was lost after the remote took the push (a dropped
                # connection): only the remote knows. Ours there is undone like any push.
                push_done = _landed(lib, branch, new_commit, run.genv)
                pushing = push_done
                raise
            push_done = True
        pull = gh.open_or_update(
            branch, run.options.base, title, body, SYNC_LABEL, on_open=opened.append
        )
    except BaseException as e:
        said = _after_failed_pull(
            gh, run, clone, branch, old_remote, new_commit, pushing, push_done, opened, e
        )
        if isinstance(e, FatalError):
            raise FatalError(f"{e}\n{said}" if said else str(e), e.exit_code) from None
        if isinstance(e, Exception):
            raise FatalError(
                f"could not open or update the pull request for {branch}: unexpected "
                f"{type(e).__name__}: {run.genv.redact(str(e))}"
                f"{f'; {said}' if said else ''}; run sync again, and report this if it persists"
            ) from None
        raise
    if pull.label_warning:
        run.say(
            f"warning: pull request #{pull.number} is ready but has no {SYNC_LABEL!r} label: "
            f"{pull.label_warning}"
        )
    verb = "opened" if pull.created else "updated"
    run.emit(f"{verb} pull request #{pull.number}: {pull.url}")
    return pull


def _after_failed_pull(
    gh: GitHubRepo,
    run: _Run,
    clone: _Clone,
    branch: str,
    old_remote: str | None,
    new_commit: str,
    pushing: bool,
    push_done: bool,
    opened: list[PullRequestResult | None],
    error: BaseException,
) -> str:
    """Undo this run's push after `error` unless its pull request stands; returns what the
    error message adds about the branch ("" when nothing was pushed). Said on `run.say` too
    when `error` is an interruption (its message is Python's, not ours)."""
    said = ""
    result = opened[-1] if opened else None
    if result is not None:
        said = _stands(result, branch)
    elif pushing:
        standing: PullRequestResult | bool | None = None
        if opened:
            # Being created when it failed: GitHub may have opened it and lost the answer (a
            # 5xx, a dropped connection, a 422 "already exists" on the retry); deleting its
            # branch would close it. Ask, whatever the error.
            standing = _pull_opened_meanwhile(gh, run, branch)
        if standing is False:
            said = (
                f"could not tell whether the pull request for {branch} was opened; kept the "
                "pushed branch (run sync again: it reuses the branch)"
            )
        elif isinstance(standing, PullRequestResult):
            said = _stands(standing, branch)
        else:
            restored = _undo_push(
                clone.lib, branch, old_remote, new_commit, push_done, run.genv, run.say
            )
            said = _undone(branch, old_remote, restored)
    if said and not isinstance(error, Exception):
        run.say(said)
    return said


def _landed(lib: Repo, branch: str, pushed: str, genv: g.GitEnv) -> bool:
    """Whether the remote's `branch` is at `pushed` after a push git reported as failed (False
    when the remote cannot be asked either: a refused push is the common case)."""
    return _remote_tip(lib, branch, genv) == pushed


def _remote_tip(lib: Repo, branch: str, genv: g.GitEnv) -> str | None:
    """The library repo's `branch` now (git ls-remote): its commit, "" when it has no such
    branch, None when the remote cannot be asked."""
    try:
        out = genv.run(["ls-remote", "origin", f"refs/heads/{branch}"], cwd=Path(lib.working_dir))
    except (FatalError, g.GitFailure):
        return None
    return out.split()[0] if out else ""


def _stands(pull: PullRequestResult, branch: str) -> str:
    """What a failed run says about a pull request that exists with this run's push."""
    return (
        f"pull request #{pull.number} ({pull.url}) stands with the pushed branch {branch}; "
        "run sync again to finish it (its label, the older sync pull requests)"
    )


def _pull_opened_meanwhile(
    gh: GitHubRepo, run: _Run, branch: str
) -> PullRequestResult | bool | None:
    """After an interruption while the pull request was being opened: the open pull request
    from `branch` GitHub now lists, None when it lists none, False when it could not be asked.
    """
    try:
        found = gh.find_open_pull(branch, run.options.base)
    except Exception:  # any failure means "cannot tell": keep the branch
        return False
    if found is None:
        return None
    return PullRequestResult(found.number, found.html_url, True)


def _closed_message(closed: ClosedPull, branch: str, built: BuildResult) -> str:
    """What sync says when the sync branch's last pull request was closed without merging."""
    who = f" by {closed.closed_by}" if closed.closed_by else ""
    when = f" on {closed.closed_at:%Y-%m-%d %H:%M} UTC" if closed.closed_at else ""
    return (
        f"pull request #{closed.number} ({closed.url}) for {branch} (ExecuTorch "
        f"{built.sha[:12]}, library {built.library_version}) was closed without merging{who}"
        f"{when}; not recreating it. Pass --recreate to open a new one anyway."
    )


def _supersede(
    gh: GitHubRepo,
    run: _Run,
    clone: _Clone,
    old: SyncPull,
    pull: PullRequestResult,
    built: BuildResult,
) -> bool:
    """Close the older sync pull request `old`, comment naming `pull`, and delete its branch
    (force-with-lease on the tip sync cloned, so a push since then keeps it; a branch with
    commits by anyone but the bot is kept). Closing comes first: a run that fails half-way
    and is repeated then no longer finds it open, so it is never commented twice. Failures are
    warnings.

    Returns:
        Whether `old` was closed.
    """
    say, lib = run.say, clone.lib
    comment = (
        f"Superseded by #{pull.number} (ExecuTorch {built.sha[:12]}, "
        f"library {built.library_version})"
    )
    try:
        gh.close_pull(old.number)
    except FatalError as e:
        say(f"warning: could not close the superseded pull request #{old.number}: {e}")
        return False
    try:
        gh.comment(old.number, comment)
    except FatalError as e:
        say(f"warning: closed superseded pull request #{old.number} without a comment: {e}")
    tip = _fetch_branch(run, clone, old.branch)
    if tip is None:
        run.emit(f"closed superseded pull request #{old.number} (its branch is gone already)")
        return True
    try:
        foreign = g.foreign_commits(lib, tip, clone.base_rev, run.options.identity)
        if foreign:
            say(
                f"warning: closed superseded pull request #{old.number} but kept its branch "
                f"{old.branch}: it has commits by someone other than the bot"
            )
            return True
        g.push_with_lease(lib, "", old.branch, tip, run.genv, f"delete the branch {old.branch}")
    except (FatalError, g.GitFailure, GitCommandError) as e:
        said = str(e) if isinstance(e, FatalError) else type(e).__name__
        say(
            f"warning: closed superseded pull request #{old.number} but could not delete "
            f"its branch: {run.genv.redact(said)}"
        )
        return True
    run.emit(f"closed superseded pull request #{old.number} and deleted its branch {old.branch}")
    return True


def _append_step_summary(
    path: Path,
    pull: PullRequestResult,
    check_report: str,
    ci_note: bool,
    say: Callable[[str], None],
) -> None:
    """Append the pull request, (with `ci_note`) why CI did not run on it, and the check
    report to the step summary file (append mode: other steps' parts stay). A failure is a
    warning: the pull request stands."""
    note = f"{workflow_token_note()}\n\n" if ci_note else ""
    text = f"### Sync pull request [#{pull.number}]({pull.url})\n\n{note}{check_report.strip()}\n"
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        say(f"warning: could not append to the step summary {path}: {e}")


#: How undoing a push ended (`_undo_push`).
_Undo = Literal["restored", "not-landed", "failed"]


def _undo_push(
    lib: Repo,
    branch: str,
    old: str | None,
    pushed: str,
    push_done: bool,
    genv: g.GitEnv,
    say: Callable[[str], None],
) -> _Undo:
    """Put the remote sync branch back as it was (deleted, or at `old`) after a failed PR, with
    a lease on `pushed` (a failure is said on `say`). `push_done` False: the push was
    interrupted, its result unknown, so the remote is asked first (git ls-remote) and left
    alone when the push did not land.

    Returns:
        "restored", "not-landed" (the interrupted push left the branch as it was), or
        "failed" (the branch could not be put back, or moved meanwhile).
    """
    if not push_done:
        now = _remote_tip(lib, branch, genv)
        if now is not None and now != pushed:
            if now == (old or ""):
                say(f"the interrupted push of {branch} did not land")
                return "not-landed"
            say(f"{branch} on the library repo moved meanwhile (to {now[:12]}); not touching it")
            return "failed"
    try:
        g.push_with_lease(lib, old or "", branch, pushed, genv, f"restore {branch}")
        say(f"restored {branch} on the library repo")
        return "restored"
    except FatalError as e:
        say(f"could not restore {branch} on the library repo: {e}")
        return "failed"


def _undone(branch: str, old: str | None, restored: _Undo) -> str:
    """What a failed pull request's message says about the branch pushed for it (`restored`:
    what `_undo_push` returned)."""
    if restored == "not-landed":
        return f"the push of {branch} did not land; the library repo is as it was"
    if restored == "failed":
        return (
            f"the branch {branch} pushed for it could not be put back (see above): delete it "
            "on the library repo, or run sync again"
        )
    if old is None:
        return f"the branch {branch} pushed for it was deleted again; the library repo is as it was"
    return (
        f"the branch {branch} pushed for it was put back at its previous commit {old[:12]}; "
        "the library repo is as it was"
    )


def _append_failure(path: Path, text: str, say: Callable[[str], None]) -> None:
    """Append a failed sync's error (already redacted) to the step summary, in a code block
    (fenced longer than any backtick run in it, so nothing in it is read as Markdown). A
    failure to write is a warning: the error is what matters."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    block = f"### Sync failed\n\n{fence}text\n{text.strip()}\n{fence}\n"
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(block)
    except OSError as e:
        say(f"warning: could not append to the step summary {path}: {e}")
