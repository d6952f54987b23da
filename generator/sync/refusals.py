"""What sync refuses before it commits: someone else's commits on the sync branch (a force push
would discard them), and a relabelled pin, a reused version or one not above every published
one (`generator.sync.version_gate`, from the library repo's history, tags and branches)."""

from __future__ import annotations

from collections.abc import Collection

from generator.library.layout import PIN_FILE, PROPERTIES_FILE
from generator.library.properties import properties_version
from generator.pipeline.run import BuildResult
from generator.sync.context import Clone, Run
from generator.sync.github import SyncPull
from generator.sync.version_gate import (
    check_not_relabelled,
    check_version_greater,
    check_version_unused,
)
from generator.util.errors import FatalError
from generator.vcs import git as g
from generator.vcs import versions as v
from generator.vcs.git import SYNC_PREFIX


def refuse_foreign_commits(run: Run, clone: Clone, branch: str) -> str | None:
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


def refuse_versions(
    run: Run,
    clone: Clone,
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
        *v.versions_in_history(lib, base_rev, PROPERTIES_FILE, PIN_FILE, f"on {base}"),
        *v.versions_at(lib, [*v.tag_revs(lib), *others], PROPERTIES_FILE, PIN_FILE),
    ]
    tags = v.tag_names(lib)
    check_version_unused(built.library_version, built.sha, tags, uses)
    published = v.published_versions(lib, PROPERTIES_FILE)
    check_version_greater(built.library_version, built.sha, published, base_version, base_pin, base)
