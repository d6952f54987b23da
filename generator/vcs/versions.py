"""The library versions a clone of the library repo already uses: what each tag publishes
(`published_versions`), every version the history of a branch has published
(`versions_in_history`), and the version and pin at given tips (`versions_at`), as
`VersionUse`s that `generator.sync.version_gate` judges; `generator.release` reads the first.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

from git import GitCommandError, Repo
from git.exc import BadName

from generator.library.properties import properties_version
from generator.library.version import highest, parse, tag_versions
from generator.vcs.git import file_at


@dataclass(frozen=True)
class VersionUse:
    """One place of the library repo where a version is already used (what
    `versions_in_history` and `versions_at` read, and `generator.sync.version_gate` judges).

    Attributes:
        version: the `version=` of library.properties there.
        pin: the ExecuTorch SHA of executorch_pin.txt there (None: no pin file).
        where: where, for messages: "on main", "at tag 0.2.0", "on the sync branch X".
        commit: the commit SHA holding it.
    """

    version: str
    pin: str | None
    where: str
    commit: str


#: arduino-cli's properties reader trims each line before splitting at `=`, so an indented
#: `version=` counts too (go-properties-orderedmap, `Load`).
def published_versions(repo: Repo, properties: str) -> dict[str, str]:
    """What each tag of the clone publishes: tag name -> version.

    The Library Manager's indexer reads `version=` from `properties` at the tag, not the
    tag's name (see `generator.sync.version_gate`); a tag whose name is a version too (`v1.2.3`,
    `1.2.3`) counts with the higher of the two, so a mislabelled tag never lets a lower
    version through. A tag with neither is left out.
    """
    named = tag_versions(t.name for t in repo.tags)
    found: dict[str, str] = {}
    for tag in repo.tags:
        candidates = [named[tag.name]] if tag.name in named else []
        version = properties_version(file_at(repo, f"refs/tags/{tag.name}", properties))
        if version is not None:
            with contextlib.suppress(ValueError):
                parse(version)
                candidates.append(version)
        top = highest(candidates)
        if top is not None:
            found[tag.name] = top
    return found


def versions_in_history(
    repo: Repo, rev: str, properties: str, pin_file: str, where: str
) -> list[VersionUse]:
    """Every version the history of `rev` has published, with its pin.

    Walks the commits that touched `properties` or `pin_file` (first parent and merges alike)
    and reads both files at each.

    Args:
        where: how messages name `rev`, e.g. "on main".
    Returns:
        One `VersionUse` per such commit with a `version=`, newest first.
    """
    seen: list[VersionUse] = []
    for commit in repo.iter_commits(rev, paths=[properties, pin_file]):
        use = _version_use(repo, str(commit.hexsha), properties, pin_file, where)
        if use is not None:
            seen.append(use)
    return seen


def versions_at(
    repo: Repo, revs: Sequence[tuple[str, str]], properties: str, pin_file: str
) -> list[VersionUse]:
    """The version and pin at the tip of each `(rev, where)` that has a `version=`."""
    found: list[VersionUse] = []
    for rev, where in revs:
        try:
            sha = str(repo.commit(rev).hexsha)
        except (ValueError, GitCommandError, BadName):
            continue  # e.g. a tag of a tree or blob: no library.properties to read
        use = _version_use(repo, sha, properties, pin_file, where)
        if use is not None:
            found.append(use)
    return found


def _version_use(
    repo: Repo, sha: str, properties: str, pin_file: str, where: str
) -> VersionUse | None:
    version = properties_version(file_at(repo, sha, properties))
    if version is None:
        return None
    pin_text = file_at(repo, sha, pin_file)
    return VersionUse(version, pin_text.strip() if pin_text else None, where, sha)


def tag_revs(repo: Repo) -> list[tuple[str, str]]:
    """`(refs/tags/<name>, "at tag <name>")` for every tag of the clone."""
    return [(f"refs/tags/{t.name}", f"at tag {t.name}") for t in repo.tags]


def tag_names(repo: Repo) -> set[str]:
    """Names of the tags the clone has (the remote's tags at clone time)."""
    return {t.name for t in repo.tags}
