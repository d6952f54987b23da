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

`run_sync` is the flow, in order; its steps' modules, in `generator.sync`: `options` (what
sync was asked, the back ends' shapes), `backends` (the real build, check and GitHub),
`context` (what every step shares), `tree` (replace generated paths), `pulls` (a closed pull
request, the older ones and superseding them), `refusals` (someone else's commits; versions,
judged by `version_gate` from `generator.vcs.versions`), `verify` (lint, check, the report as
committed), `facts` and `body` (pull request text), `push` (commit, push, pull request, undo),
`summary` (the job summary), `github` (PyGithub with retries), `app` (with `--app-id`: the
GitHub App's installation tokens). The two phases around it are `phases`; the command line is
`generator.cli.sync`. Shared with release: `generator.vcs.repo_inputs` (token and repo checked
up front), `generator.vcs.git` (thin GitPython helpers, token handling),
`generator.util.tempdirs`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from generator.boards.budgets import UNO_Q
from generator.library.layout import (
    CHECK_REPORT_FILE,
    GENERATED_PATHS,
    LIBRARY_FACTS_FILE,
    LIBRARY_NAME,
    PROVENANCE_FILE,
)
from generator.library.version import check_explicit_version
from generator.pipeline.run import BuildResult
from generator.sync.app import APP_KEY_ENV, AppCredentials
from generator.sync.body import fitting_body, pr_title
from generator.sync.context import FULL_SHA, Clone, Run
from generator.sync.defaults import (
    default_build,
    default_check,
    default_connect,
    sync_board_keys,
    to_stderr,
    to_stdout,
)
from generator.sync.github import ClosedPull, GitHubRepo, PullRequestResult, redact
from generator.sync.options import BuildFn, CheckFn, ConnectFn, SyncOptions
from generator.sync.pull_facts import pull_request_facts
from generator.sync.pulls import (
    closed_message,
    closed_pull,
    older_pulls,
    opened_meanwhile,
    supersede,
)
from generator.sync.push import commit_sync, push_and_open
from generator.sync.refusals import refuse_foreign_commits, refuse_versions
from generator.sync.summary import append_failure, append_step_summary
from generator.sync.tree import replace_generated
from generator.sync.verify import check_built, lint_clone, shown
from generator.util.errors import FatalError
from generator.util.tempdirs import exit_cleanly_on_signals, remove_stale, work_folder
from generator.util.urls import display_url, refuse_credentials
from generator.vcs import git as g
from generator.vcs.git import SYNC_PREFIX
from generator.vcs.remote_inputs import check_api_url, check_base
from generator.vcs.repo_inputs import check_app_id, check_repo, clean_private_key, clean_token

__all__ = ["SyncOptions", "SyncResult", "run_sync", "sync_branch"]

#: Files whose change alone does not make a sync worth a pull request.
_VOLATILE = frozenset({PROVENANCE_FILE, LIBRARY_FACTS_FILE, CHECK_REPORT_FILE})


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


def run_sync(
    options: SyncOptions,
    token: str | None,
    *,
    app_key: str | None = None,
    build: BuildFn = default_build,
    check: CheckFn = default_check,
    connect: ConnectFn = default_connect,
    say: Callable[[str], None] = to_stderr,
    emit: Callable[[str], None] = to_stdout,
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
            append_failure(options.step_summary, text, say)
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
                run = Run(options, work, genv, gh, backends.build, backends.check, say, emit)
                try:
                    return _sync_in(run, remote, source, built, branch)
                except g.GitFailure as e:
                    raise g.describe_git_failure(
                        e, genv, "work in the clone of the library repo"
                    ) from None


def _sync_in(run: Run, remote: str, source: str, built: BuildResult, branch: str) -> SyncResult:
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
    closed = closed_pull(run, branch)
    if closed is not None:
        run.emit(closed_message(closed, branch, built))
        return SyncResult(
            "closed",
            branch,
            built.sha,
            built.library_version,
            upstream_version=built.upstream_version,
            closed=closed,
        )
    older = older_pulls(run, branch)
    old_remote = refuse_foreign_commits(run, clone, branch)
    refuse_versions(run, clone, built, branch, older)
    lint_clone(run, clone, built)
    report, report_dict = check_built(run, clone, built)
    changes = g.staged_changes(clone.lib, clone.base_rev, GENERATED_PATHS, run.genv)

    facts = pull_request_facts(run, clone, built, branch, changes, report, report_dict)
    body, left_out = fitting_body(facts, UNO_Q.name)
    if left_out:
        run.say(f"the pull request body leaves out {' and '.join(left_out)} to fit GitHub's limit")
    title = pr_title(facts)
    if options.dry_run or run.gh is None:
        also = "" if options.keep_older else ", and close the other open sync pull requests"
        run.emit(f"dry run: would push {branch} and open or update a pull request{also}:\n")
        run.emit(shown(f"# {title}\n\n{body}"))
        return SyncResult(
            "dry-run",
            branch,
            built.sha,
            built.library_version,
            body=body,
            upstream_version=built.upstream_version,
        )

    new_commit = commit_sync(run, clone, built)
    pull = push_and_open(run.gh, run, clone, branch, title, body, old_remote, new_commit)
    if older is not None and not options.keep_older:
        older = [*older, *opened_meanwhile(run, clone, branch, older, pull)]
    superseded = [
        old.number for old in older or [] if supersede(run.gh, run, clone, old, pull, built)
    ]
    if options.step_summary is not None:
        append_step_summary(
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


def _clone(run: Run, remote: str, source: str) -> Clone:
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
    return Clone(lib, f"refs/remotes/origin/{base}")


def _build(
    options: SyncOptions, work: Path, build: BuildFn, say: Callable[[str], None]
) -> tuple[BuildResult, str]:
    """Build the library into the work folder `work`; returns it and its sync branch.

    Raises:
        FatalError: the build failed, reported no full SHA, or its branch is the base.
    """
    say(f"building the library from ExecuTorch {options.build.executorch_ref}")
    built = build(options.build, work / "build" / LIBRARY_NAME)
    if not FULL_SHA.match(built.sha):
        raise FatalError(f"the build reported pin {built.sha!r}, not a full SHA")
    branch = sync_branch(built.sha)
    if branch == options.base:
        raise FatalError(f"refusing to push to the base branch {options.base!r}")
    return built, branch


def _replace(run: Run, clone: Clone, built: BuildResult, branch: str) -> bool:
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
