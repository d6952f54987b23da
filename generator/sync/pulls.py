"""The pull-request decisions of a sync: the sync branch's pull request closed without merging
(stop), the older open sync pull requests (and those opened meanwhile by a sync running side
by side) to supersede, and superseding them: close, comment, delete the branch."""

from __future__ import annotations

import contextlib

from git import GitCommandError

from generator.pipeline.run import BuildResult
from generator.sync.context import Clone, Run
from generator.sync.github import ClosedPull, GitHubRepo, PullRequestResult, SyncPull
from generator.util.errors import FatalError
from generator.vcs import git as g
from generator.vcs.git import SYNC_PREFIX


def closed_pull(run: Run, branch: str) -> ClosedPull | None:
    """The sync branch's last pull request when it was closed without merging (unless
    --recreate; None in a dry run, which asks no API)."""
    if run.gh is None or run.options.recreate:
        return None
    return run.gh.closed_pull(branch, run.options.base)


def older_pulls(run: Run, branch: str) -> list[SyncPull] | None:
    """The open sync pull requests this one supersedes ([] with --keep-older; None: unknown,
    a dry run asks no API)."""
    if run.options.keep_older:
        return []
    if run.gh is None:
        return None
    pulls = run.gh.open_sync_pulls(run.options.base, SYNC_PREFIX)
    return [p for p in pulls if p.branch != branch]


def opened_meanwhile(
    run: Run, clone: Clone, branch: str, known: list[SyncPull], pull: PullRequestResult
) -> list[SyncPull]:
    """Sync pull requests another sync opened while this one built and checked (two refs
    synced at once run side by side), with their branches fetched so they can be deleted.

    Only those numbered below `pull` are returned: of two syncs that finish together, the
    later pull request stands and closes the earlier, never both each other.
    """
    seen = {p.number for p in known}
    late = [
        p for p in older_pulls(run, branch) or [] if p.number not in seen and p.number < pull.number
    ]
    for p in late:
        _fetch_branch(run, clone, p.branch)
    return late


def _fetch_branch(run: Run, clone: Clone, branch: str) -> str | None:
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


def closed_message(closed: ClosedPull, branch: str, built: BuildResult) -> str:
    """What sync says when the sync branch's last pull request was closed without merging."""
    who = f" by {closed.closed_by}" if closed.closed_by else ""
    when = f" on {closed.closed_at:%Y-%m-%d %H:%M} UTC" if closed.closed_at else ""
    return (
        f"pull request #{closed.number} ({closed.url}) for {branch} (ExecuTorch "
        f"{built.sha[:12]}, library {built.library_version}) was closed without merging{who}"
        f"{when}; not recreating it. Pass --recreate to open a new one anyway."
    )


def supersede(
    gh: GitHubRepo,
    run: Run,
    clone: Clone,
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
