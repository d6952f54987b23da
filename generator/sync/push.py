"""Commit the regenerated tree, push the sync branch and open or update its pull request; a
push whose pull request then fails is undone (unless the pull request stands)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from git import Repo

from generator.library.layout import CHECK_REPORT_FILE, GENERATED_PATHS
from generator.pipeline.run import BuildResult
from generator.sync.body import commit_message
from generator.sync.context import Clone, Run
from generator.sync.github import SYNC_LABEL, GitHubRepo, PullRequestResult
from generator.util.errors import FatalError
from generator.vcs import git as g


def commit_sync(run: Run, clone: Clone, built: BuildResult) -> str:
    """Commit the staged tree as the bot; returns the commit's SHA, once the commit is seen to
    hold the built tree (`check_committed`).

    Raises:
        FatalError: see `check_committed`.
    """
    commit = g.commit(
        clone.lib,
        commit_message(built.ref, built.sha, built.library_version, built.upstream_version),
        run.options.identity,
        run.genv,
    )
    check_committed(run, clone, built.out, commit)
    return commit


#: Files of the built tree that sync itself rewrites before it commits (the check report as
#: committed, and the examples' sketches, whose header comment gets the loader verdicts):
#: their path and mode are compared, not their bytes.
_REWRITTEN = (CHECK_REPORT_FILE,)


def check_committed(run: Run, clone: Clone, library: Path, commit: str) -> None:
    """Refuse a commit that is not the built tree: every file of `library` below the
    generated paths must be in `commit` with its executable bit and (but for the files sync
    rewrites) its bytes, so no ignore or attribute rule of any git config left a file out
    or converted it.

    Raises:
        FatalError: naming the first file that differs; nothing was pushed.
    """
    listing = run.genv.run(["ls-tree", "-r", "-z", "--full-tree", commit], cwd=clone.worktree)
    committed: dict[str, tuple[str, str]] = {}
    for entry in filter(None, listing.split("\0")):
        meta, name = entry.split("\t", 1)
        mode, _, blob = meta.split(" ")
        committed[name] = (mode, blob)
    for path in sorted(library.rglob("*")):
        rel = path.relative_to(library).as_posix()
        if not path.is_file() or rel.split("/")[0] not in GENERATED_PATHS:
            continue
        mode = "100755" if path.stat().st_mode & 0o111 else "100644"
        data = path.read_bytes()
        blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git's object id
        got = committed.get(rel)
        rewritten = rel in _REWRITTEN or (rel.startswith("examples/") and rel.endswith(".ino"))
        if got is None or got[0] != mode or (got[1] != blob and not rewritten):
            raise FatalError(
                f"the sync commit does not hold the built {rel!r} as built ("
                f"{'missing' if got is None else 'another mode or other bytes'}): a git "
                "ignore or attribute rule changed it; nothing was pushed"
            )


def push_and_open(
    gh: GitHubRepo,
    run: Run,
    clone: Clone,
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
    run: Run,
    clone: Clone,
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
    gh: GitHubRepo, run: Run, branch: str
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
