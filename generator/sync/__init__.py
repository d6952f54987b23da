"""The sync step: regenerate the library from an ExecuTorch ref and open (or update) a pull
request on the library repo, with the `check` report attached.

Data flows one way: ref -> build (`generator.pipeline.build_library`) -> library repo work tree
-> version refusal -> check (`generator.check.run_check`) -> commit -> push -> pull request.
Everything happens in a temporary clone; the library repo changes only by the final push of our
own `sync/` branch and the pull request, and a push is undone if the pull request then fails.

Modules: `inputs` (token, repo, API URL, base checked up front), `git` (thin GitPython
helpers, token handling), `tree` (replace generated paths), `version` (reuse and relabel
refusal), `report` (the check report as committed), `body` (pull request text), `github`
(PyGithub with retries).
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from git import Repo

from generator.errors import FatalError
from generator.layout import (
    CHECK_REPORT_FILE,
    CODEGEN_DIR,
    GENERATED_PATHS,
    PIN_FILE,
    PROVENANCE_FILE,
)
from generator.pipeline import BuildOptions, BuildResult
from generator.sync import git as g
from generator.sync.body import (
    PullRequestFacts,
    commit_message,
    emulated_runs,
    kernel_names,
    pr_title,
    render_body,
    size_rows,
)
from generator.sync.github import (
    DEFAULT_API_URL,
    SYNC_LABEL,
    GitHubRepo,
    PullRequestResult,
    redact,
)
from generator.sync.inputs import check_api_url, check_base, check_repo, clean_token
from generator.sync.report import committed_report
from generator.sync.tree import read_texts, replace_generated
from generator.sync.version import check_not_relabelled, check_version_unused

DEFAULT_BOT_NAME = "executorch-arduino-bot"
DEFAULT_BOT_EMAIL = "executorch-arduino-bot@users.noreply.github.com"
PROPERTIES_FILE = "library.properties"
#: Files whose change alone does not make a sync worth a pull request.
_VOLATILE = frozenset({PROVENANCE_FILE, CHECK_REPORT_FILE})
#: Every sync branch starts with this (other open sync branches are checked for versions).
SYNC_PREFIX = "sync/"
_SHA = re.compile(r"^[0-9a-f]{40}$")


class CheckReportLike(Protocol):
    """What sync needs of `generator.check.CheckReport`."""

    @property
    def passed(self) -> bool: ...

    def to_markdown(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...


#: build(options, out) -> BuildResult; writes the library to `out` (must not exist).
BuildFn = Callable[[BuildOptions, Path], BuildResult]
#: check(library, options) -> report.
CheckFn = Callable[[Path, "SyncOptions"], CheckReportLike]
#: connect(api_url, repo, token) -> GitHubRepo.
ConnectFn = Callable[[str, str, str], GitHubRepo]


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
        work_dir: where the clone and the build go and stay (for inspection); None: a
            temporary folder, removed at the end.
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
    work_dir: Path | None = None


@dataclass
class SyncResult:
    """What sync did.

    Attributes:
        status: "opened" / "updated" a pull request, "in-sync" (nothing to do), or "dry-run".
        branch: the sync branch; sha: the ExecuTorch SHA; version: the library version.
        commit: the library commit on the sync branch (None when nothing was committed).
        pull: the pull request (opened/updated only); body: its text (None when in sync).
        upstream_version: the ref's version.txt, verbatim.
    """

    status: Literal["opened", "updated", "in-sync", "dry-run"]
    branch: str
    sha: str
    version: str
    commit: str | None = None
    pull: PullRequestResult | None = None
    body: str | None = None
    upstream_version: str = ""


def sync_branch(sha: str) -> str:
    """`sync/executorch-<first 12 hex digits of the SHA>`."""
    return f"{SYNC_PREFIX}executorch-{sha[:12]}"


def _default_build(options: BuildOptions, out: Path) -> BuildResult:
    from generator.pipeline import build_library

    return build_library(options, out)


def _default_check(library: Path, options: SyncOptions) -> CheckReportLike:
    from generator.check import run_check

    report: CheckReportLike = run_check(
        library,
        examples=list(options.build.examples) if options.build.examples else None,
        compiler=options.compiler,
        run=options.run,
        cache_dir=options.build.cache_dir,
    )
    return report


def _default_connect(api_url: str, repo: str, token: str) -> GitHubRepo:
    return GitHubRepo(api_url, repo, token)


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _stdout(text: str) -> None:
    print(text, flush=True)


def run_sync(
    options: SyncOptions,
    token: str | None,
    *,
    build: BuildFn = _default_build,
    check: CheckFn = _default_check,
    connect: ConnectFn = _default_connect,
    say: Callable[[str], None] = _stderr,
    emit: Callable[[str], None] = _stdout,
) -> SyncResult:
    """Regenerate the library from `options.build.executorch_ref` and open or update its
    sync pull request.

    Args:
        options: see `SyncOptions`.
        token: GitHub token (from GITHUB_TOKEN; surrounding whitespace is dropped); needed
            unless `dry_run`. Never printed, never written to git config or to disk.
        build, check, connect: the build, check and GitHub back ends (tests inject their own).
        say: progress lines (stderr); emit: results for the user (stdout: the report, body).
    Returns:
        What was done (see `SyncResult`).
    Raises:
        FatalError: bad options (repo, API URL, base branch, a token with spaces, control or
            non-ASCII characters), missing token, an API URL that is not GitHub's, GitHub or
            git failures (401, 403, 404, 422, rate limits and 5xx after bounded retries,
            network down, protected branch, push rejected), unknown ref (from the build), a
            reused version or relabelled pin, a maintainer's commits on the sync branch, or a
            failing check. The library repo is left as it was (a push is undone when anything
            after it fails, even unexpectedly).
    """
    token = clean_token(token)
    check_repo(options.repo)
    check_api_url(options.api_url)
    check_base(options.base)
    if options.build.library_version is not None:
        from generator.version import check_explicit_version

        check_explicit_version(options.build.library_version)
    gh: GitHubRepo | None = None
    remote = options.remote
    if not options.dry_run:
        if not token:
            raise FatalError(
                "GITHUB_TOKEN is not set: export a token with contents: write and "
                "pull-requests: write on the library repo (or use --dry-run)"
            )
        gh = connect(options.api_url, options.repo, token)
        info = gh.preflight()
        remote = remote or info.clone_url
    remote = remote or f"https://github.com/{options.repo}.git"

    with _work_folder(options.work_dir) as work, g.git_env(token) as genv:
        try:
            return _sync_in(options, work, genv, gh, remote, build, check, say, emit)
        except g.GitFailure as e:
            raise g.describe_git_failure(e, genv, "work in the clone of the library repo") from None


def _sync_in(
    options: SyncOptions,
    work: Path,
    genv: g.GitEnv,
    gh: GitHubRepo | None,
    remote: str,
    build: BuildFn,
    check: CheckFn,
    say: Callable[[str], None],
    emit: Callable[[str], None],
) -> SyncResult:
    """The part of `run_sync` that works in the folder `work` (see there)."""
    say(f"cloning the library repo {genv.redact(remote)}")
    lib = g.clone(remote, work / "library", genv)
    base_rev = f"refs/remotes/origin/{options.base}"
    if g.remote_branch_sha(lib, options.base) is None:
        raise FatalError(
            f"the library repo has no branch {options.base!r}: push an initial commit "
            "(e.g. a README) to it, or pass --base"
        )

    say(f"building the library from ExecuTorch {options.build.executorch_ref}")
    built = build(options.build, work / "build" / "ExecuTorch")
    if not _SHA.match(built.sha):
        raise FatalError(f"the build reported pin {built.sha!r}, not a full SHA")
    branch = sync_branch(built.sha)
    if branch == options.base:
        raise FatalError(f"refusing to push to the base branch {options.base!r}")

    worktree = Path(lib.working_dir)
    g.checkout_branch(lib, branch, base_rev, genv)
    skipped = replace_generated(worktree, built.out)
    if skipped:
        say(f"not copied (not generated paths): {', '.join(skipped)}")
    g.stage(lib, GENERATED_PATHS, genv)
    changes = g.staged_changes(lib, base_rev, GENERATED_PATHS, genv)
    if not [path for _, path in changes if path not in _VOLATILE]:
        emit(
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

    old_remote = g.remote_branch_sha(lib, branch)
    if old_remote is not None:
        _refuse_foreign_commits(lib, old_remote, base_rev, branch, options.identity)
    _check_version(options, built, lib, base_rev, branch)

    say("checking the regenerated library")
    report = check(built.out, options)
    report_dict = report.to_dict()
    # The library's own report names it relative to itself and holds nothing that changes
    # from run to run (times, cache counts, this machine's paths), so re-syncing an unchanged
    # ref writes the same file.
    from generator.checkout import default_cache_dir

    roots = {
        built.out: ".",
        work: "<work>",
        options.build.cache_dir or default_cache_dir(): "<cache>",
    }
    report_dict = committed_report(report_dict, roots)
    for part in (report_dict, report_dict.get("model_check")):
        if isinstance(part, dict) and "library" in part:
            part["library"] = "."
    report_path = worktree / CHECK_REPORT_FILE
    report_path.parent.mkdir(parents=True, exist_ok=True)
    report_path.write_text(json.dumps(report_dict, indent=2, sort_keys=True) + "\n")
    if not report.passed:
        emit(report.to_markdown())
        raise FatalError(
            f"check failed for ExecuTorch {built.ref} ({built.sha[:12]}); no pull request "
            "was opened or updated (the report is printed above)"
        )
    g.stage(lib, GENERATED_PATHS, genv)
    changes = g.staged_changes(lib, base_rev, GENERATED_PATHS, genv)

    facts = _facts(options, built, lib, base_rev, branch, changes, report, report_dict)
    body = render_body(facts)
    title = pr_title(facts)
    if options.dry_run or gh is None:
        emit(f"dry run: would push {branch} and open or update a pull request:\n")
        emit(f"# {title}\n\n{body}")
        return SyncResult(
            "dry-run",
            branch,
            built.sha,
            built.library_version,
            body=body,
            upstream_version=built.upstream_version,
        )

    new_commit = g.commit(
        lib,
        commit_message(built.ref, built.sha, built.library_version, built.upstream_version),
        options.identity,
        genv,
    )
    pushed = False
    if old_remote is not None and lib.commit(old_remote).tree == lib.commit(new_commit).tree:
        say(f"{branch} already holds this tree; not pushing")
        new_commit = old_remote
    else:
        say(f"pushing {branch}")
        g.push_with_lease(
            lib, new_commit, branch, old_remote, genv, f"push {branch} to the library repo"
        )
        pushed = True
    try:
        pull = gh.open_or_update(branch, options.base, title, body, SYNC_LABEL)
    except BaseException as e:
        # Whatever went wrong (Ctrl-C included), the library repo must not keep a pushed
        # branch without its pull request.
        if pushed:
            _undo_push(lib, branch, old_remote, new_commit, genv, say)
        if isinstance(e, FatalError):
            raise e from None
        if isinstance(e, Exception):
            undone = f"; {branch} was put back as it was" if pushed else ""
            raise FatalError(
                f"could not open or update the pull request for {branch}: unexpected "
                f"{type(e).__name__}: {redact(str(e), genv.token)}{undone}; run sync again, "
                "and report this if it persists"
            ) from None
        raise
    if pull.label_warning:
        say(
            f"warning: pull request #{pull.number} is ready but has no {SYNC_LABEL!r} label: "
            f"{pull.label_warning}"
        )
    verb = "opened" if pull.created else "updated"
    emit(f"{verb} pull request #{pull.number}: {pull.url}")
    return SyncResult(
        "opened" if pull.created else "updated",
        branch,
        built.sha,
        built.library_version,
        commit=new_commit,
        pull=pull,
        body=body,
        upstream_version=built.upstream_version,
    )


def _refuse_foreign_commits(
    lib: Repo, tip: str, base_rev: str, branch: str, identity: g.Identity
) -> None:
    """Refuse to replace the remote sync branch `tip` when someone other than the bot
    committed on it (commits the base lacks): a force push would silently discard them."""
    foreign = g.foreign_commits(lib, tip, base_rev, identity)
    if foreign:
        shown = "\n".join(f"  {line}" for line in foreign[:10])
        raise FatalError(
            f"the sync branch {branch} on the library repo has commits by someone other than "
            f"the bot ({identity.name} <{identity.email}>):\n{shown}\nsync would replace "
            "them: merge the pull request or take the changes elsewhere, then delete the "
            "branch, and run sync again"
        )


def _check_version(
    options: SyncOptions, built: BuildResult, lib: Repo, base_rev: str, branch: str
) -> None:
    """Refuse a version the library repo already uses for another pin (base history, tags,
    other open sync branches), and a relabelling of the pin the base branch publishes."""
    base_pin = g.file_at(lib, base_rev, PIN_FILE)
    check_not_relabelled(
        built.library_version,
        built.sha,
        g.properties_version(g.file_at(lib, base_rev, PROPERTIES_FILE)),
        base_pin.strip() if base_pin else None,
        options.base,
    )
    others = [
        (f"refs/remotes/origin/{name}", f"on the open sync branch {name}")
        for name in g.remote_branches(lib, SYNC_PREFIX)
        if name != branch
    ]
    uses = [
        *g.versions_in_history(lib, base_rev, PROPERTIES_FILE, PIN_FILE, f"on {options.base}"),
        *g.versions_at(lib, [*g.tag_revs(lib), *others], PROPERTIES_FILE, PIN_FILE),
    ]
    check_version_unused(built.library_version, built.sha, g.tag_names(lib), uses)


@contextmanager
def _work_folder(keep: Path | None) -> Iterator[Path]:
    """`keep` (created, must be empty) or a temporary folder removed afterwards."""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        if any(keep.iterdir()):
            raise FatalError(f"work folder {keep} is not empty; give an empty or new folder")
        yield keep
        return
    with tempfile.TemporaryDirectory(prefix="executorch-sync-") as tmp:
        yield Path(tmp)


def _undo_push(
    lib: Repo,
    branch: str,
    old: str | None,
    pushed: str,
    genv: g.GitEnv,
    say: Callable[[str], None],
) -> None:
    """Put the remote sync branch back as it was (deleted, or at `old`) after a failed PR."""
    try:
        g.push_with_lease(lib, old or "", branch, pushed, genv, f"restore {branch}")
        say(f"restored {branch} on the library repo")
    except FatalError as e:
        say(f"could not restore {branch} on the library repo: {e}")


def _facts(
    options: SyncOptions,
    built: BuildResult,
    lib: Repo,
    base_rev: str,
    branch: str,
    changes: list[tuple[str, str]],
    report: CheckReportLike,
    report_dict: dict[str, Any],
) -> PullRequestFacts:
    """Gather what the body says, comparing the regenerated tree with the base branch."""
    base_pin_text = g.file_at(lib, base_rev, PIN_FILE)
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
        ref=built.ref,
        sha=built.sha,
        base_pin=base_pin_text.strip() if base_pin_text else None,
        upstream_version=built.upstream_version,
        library_version=built.library_version,
        base_version=g.properties_version(g.file_at(lib, base_rev, PROPERTIES_FILE)),
        op_set=list(built.op_set),
        kernels=kernel_names(read_texts(built.out / CODEGEN_DIR, built.out)),
        base_kernels=kernel_names(g.files_under(lib, base_rev, CODEGEN_DIR)),
        added=by_status["A"],
        removed=by_status["D"],
        changed=by_status["M"],
        check_markdown=report.to_markdown().strip(),
        check_passed=report.passed,
        sizes=size_rows(report_dict, base_report),
        runs=emulated_runs(report_dict),
        base_has_report=base_report is not None,
        branch=branch,
        base=options.base,
    )
