"""Refuse a library version the Library Manager would not publish: one already used (it
silently drops a release whose version it has seen, so a reused version never reaches users),
and one not greater than every published version (it offers the highest version, so users
would never get a lower one, and merging it would take the library back).

Source of the rule: the Library Manager indexer (arduino/libraries-repository-engine) takes the
version from library.properties, not from the tag name, and skips a tag whose version it has
already loaded ("Release <name>:<version> already loaded, skipping"; see that repository's
issue 294). Published sources are therefore never relabelled. Versions are compared by SemVer
2.0 precedence (`generator.library.version`), as arduino-cli does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from generator.library.version import highest, is_greater, suggest_next, tag_versions
from generator.util.errors import FatalError
from generator.vcs.versions import VersionUse


def check_version_unused(
    version: str,
    pin: str,
    tags: Iterable[str],
    uses: Iterable[VersionUse],
) -> None:
    """Refuse `version` if it is already a tag (`v<version>` or `<version>`), or a `version=`
    that the library repo uses anywhere else for a different ExecuTorch pin. The suggestion is
    above every version seen (`generator.library.version.suggest_next`).

    Args:
        version: the library version about to be written (library.properties `version=`).
        pin: the full ExecuTorch SHA it is generated from.
        tags: tag names of the library repo.
        uses: every version the repo already carries: each commit of the base branch that
            touched library.properties or the pin, every tag, every other sync branch that
            is not about to be superseded (see `versions.versions_in_history` and
            `versions.versions_at`).
    Raises:
        FatalError: naming the tag, branch or commit that already uses the version, and what
            to pass.
    """
    names = set(tags)
    uses = list(uses)
    known = [*tag_versions(names).values(), *(use.version for use in uses)]
    fix = f"pass --library-version {suggest_next(version, *known)} (or another unused version)"
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


def check_version_greater(
    version: str,
    pin: str,
    published: Mapping[str, str],
    base_version: str | None,
    base_pin: str | None,
    base: str,
) -> None:
    """Refuse `version` unless it is greater (SemVer precedence) than every published one:
    what each tag publishes (`versions.published_versions`: library.properties' `version=` at the
    tag, else the tag's name) and the base branch's `version=`. The base branch's
    version does not count when the base already holds `pin` (regenerating the pin it
    publishes under the same, not yet released, version stays allowed; `check_not_relabelled`
    keeps the version the same).

    Args:
        version: the version this sync would write (SemVer 2.0); pin: its ExecuTorch SHA.
        published: tag name -> the version it publishes.
        base_version, base_pin: library.properties `version=` and executorch_pin.txt on the
            base branch (None: absent); base: the base branch name (for the message).
    Raises:
        FatalError: naming the highest published version, where it is, and the next version
            to pass.
    """
    where_of: dict[str, list[str]] = {}
    for tag, tagged in sorted(published.items()):
        where_of.setdefault(tagged, []).append(f"tag {tag}")
    if base_version is not None and base_pin != pin:
        where_of.setdefault(base_version, []).append(f"version= on {base}")
    top = highest(where_of)
    if top is None or is_greater(version, top):
        return
    where = ", ".join(where_of[top])
    raise FatalError(
        f"library version {version} is not greater than {top}, already published ({where}); "
        "the Library Manager always offers the highest version, so users would never get "
        f"these sources, and merging them would take {base} back: pass --library-version "
        f"{suggest_next(version, *where_of)}"
    )
