"""Refuse a library version that was already used: the Library Manager silently drops a
release whose version it has seen, so a reused version never reaches users.

Source of the rule: the Library Manager indexer (arduino/libraries-repository-engine) takes the
version from library.properties, not from the tag name, and skips a tag whose version it has
already loaded ("Release <name>:<version> already loaded, skipping"; see that repository's
issue 294). Published sources are therefore never relabelled.
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.errors import FatalError


def next_patch(version: str) -> str:
    """`X.Y.Z` -> `X.Y.(Z+1)` (prerelease part dropped), for the suggestion in errors."""
    core = version.split("-", 1)[0].split("+", 1)[0]
    parts = core.split(".")
    if len(parts) == 3 and all(p.isdigit() for p in parts):
        return f"{parts[0]}.{parts[1]}.{int(parts[2]) + 1}"
    return "a new X.Y.Z"


def check_version_unused(
    version: str,
    pin: str,
    tags: Iterable[str],
    history: Iterable[tuple[str, str | None, str]],
    base: str,
) -> None:
    """Refuse `version` if it is already a tag `v<version>`, or a `version=` that the base
    branch's history published for a different ExecuTorch pin.

    Args:
        version: the library version about to be written (library.properties `version=`).
        pin: the full ExecuTorch SHA it is generated from.
        tags: tag names of the library repo.
        history: (version, pin or None, commit SHA) for each commit of the base branch that
            touched library.properties or the pin (see `git.versions_in_history`).
        base: the base branch name (for the message).
    Raises:
        FatalError: naming the tag or commit that already uses the version, and what to pass.
    """
    fix = f"pass --library-version {next_patch(version)} (or another unused X.Y.Z)"
    if f"v{version}" in set(tags):
        raise FatalError(
            f"library version {version} is already released as tag v{version}; the Library "
            f"Manager ignores a reused version, so these sources would never be published: {fix}"
        )
    for used, used_pin, commit in history:
        if used == version and used_pin != pin:
            was = f"ExecuTorch {used_pin[:12]}" if used_pin else "sources without a pin"
            raise FatalError(
                f"library version {version} was already used on {base} for {was} "
                f"(commit {commit[:12]}); a version names one set of sources, so it cannot be "
                f"reused for ExecuTorch {pin[:12]}: {fix}"
            )
