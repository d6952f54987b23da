"""Refuse a library version that was already used: the Library Manager silently drops a
release whose version it has seen, so a reused version never reaches users.

Source of the rule: the Library Manager indexer (arduino/libraries-repository-engine) takes the
version from library.properties, not from the tag name, and skips a tag whose version it has
already loaded ("Release <name>:<version> already loaded, skipping"; see that repository's
issue 294). Published sources are therefore never relabelled.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from generator.errors import FatalError


def next_patch(version: str) -> str:
    """`X.Y.Z` -> `X.Y.(Z+1)` (prerelease part dropped), for the suggestion in errors."""
    core = version.split("-", 1)[0].split("+", 1)[0]
    parts = core.split(".")
    if len(parts) == 3 and all(p.isdigit() for p in parts):
        return f"{parts[0]}.{parts[1]}.{int(parts[2]) + 1}"
    return "a new X.Y.Z"


@dataclass(frozen=True)
class VersionUse:
    """One place of the library repo where a version is already used.

    Attributes:
        version: the `version=` of library.properties there.
        pin: the ExecuTorch SHA of executorch_pin.txt there (None: no pin file).
        where: where, for messages: "on main", "at tag 0.2.0", "on the open sync branch X".
        commit: the commit SHA holding it.
    """

    version: str
    pin: str | None
    where: str
    commit: str


def check_version_unused(
    version: str,
    pin: str,
    tags: Iterable[str],
    uses: Iterable[VersionUse],
) -> None:
    """Refuse `version` if it is already a tag (`v<version>` or `<version>`), or a `version=`
    that the library repo uses anywhere else for a different ExecuTorch pin.

    Args:
        version: the library version about to be written (library.properties `version=`).
        pin: the full ExecuTorch SHA it is generated from.
        tags: tag names of the library repo.
        uses: every version the repo already carries: each commit of the base branch that
            touched library.properties or the pin, every tag, every other open sync branch
            (see `git.versions_in_history` and `git.versions_at`).
    Raises:
        FatalError: naming the tag, branch or commit that already uses the version, and what
            to pass.
    """
    fix = f"pass --library-version {next_patch(version)} (or another unused X.Y.Z)"
    names = set(tags)
    for tag in (f"v{version}", version):
        if tag in names:
            raise FatalError(
                f"library version {version} is already released as tag {tag}; the Library "
                "Manager ignores a reused version, so these sources would never be published: "
                f"{fix}"
            )
    for use in uses:
        if use.version == version and use.pin != pin:
            was = f"ExecuTorch {use.pin[:12]}" if use.pin else "sources without a pin"
            raise FatalError(
                f"library version {version} was already used {use.where} for {was} "
                f"(commit {use.commit[:12]}); a version names one set of sources, so it cannot "
                f"be reused for ExecuTorch {pin[:12]}: {fix}"
            )


def check_not_relabelled(
    version: str, pin: str, base_version: str | None, base_pin: str | None, base: str
) -> None:
    """Refuse to give the sources the base branch already publishes another version.

    Args:
        version: the version this sync would write; pin: its ExecuTorch SHA.
        base_version, base_pin: library.properties `version=` and executorch_pin.txt on the
            base branch (None: absent).
        base: the base branch name (for the message).
    Raises:
        FatalError: the base branch has `pin` under a different version.
    """
    if base_pin == pin and base_version is not None and base_version != version:
        raise FatalError(
            f"ExecuTorch {pin[:12]} is already published on {base} as library version "
            f"{base_version}; published sources are never relabelled, so it cannot become "
            f"{version}: pass --library-version {base_version} to regenerate it, or sync "
            "another ref"
        )
