"""The library version: an explicit SemVer, or derived from the ref's `version.txt`.

The rule (documented in README.md, "Versions"):
- `--library-version` is taken as is; it must be a Semantic Versioning 2.0 version
  (`X.Y.Z`, optionally `-prerelease`; no `v`, no leading zeros, no `+build`, whose precedence
  SemVer ignores, each number at most 9 digits: `check_explicit_version`). That is what the
  Arduino Library Manager compares (arduino-cli and the indexer use go.bug.st/relaxed-semver,
  SemVer 2.0 precedence).
- Otherwise the ref's `version.txt` (a PEP 440 version; ExecuTorch writes e.g. `1.5.0` on main
  and `1.5.1` on release tags) is mapped to SemVer:
    `1.5.1` -> `1.5.1`;  `1.5` -> `1.5.0`;
    `1.5.0a0` -> `1.5.0-alpha.0`, `1.5.0b1` -> `1.5.0-beta.1`, `1.5.0rc2` -> `1.5.0-rc.2`,
    `1.5.0.dev3` -> `1.5.0-dev.3`, `1.5.0a0.dev1` -> `1.5.0-alpha.0.dev.1`;
    a local label (`1.5.1+cpu`) is dropped.
  A release-candidate tag (`v1.6.0-rc1`, `v1.6.0-rc.1`) whose version.txt has no suffix (
  ExecuTorch tags its candidates on the release branch, where version.txt already says the
  final `1.6.0`) maps to `1.6.0-rc.1`, so the candidate never outranks the release.
  Post releases and epochs have no faithful SemVer form and are refused: pass
  `--library-version`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import semver
from packaging.version import InvalidVersion, Version

from generator.util.errors import FatalError

_PRE_NAMES = {"a": "alpha", "b": "beta", "rc": "rc"}
#: ExecuTorch's release-candidate tags: v1.0.0-rc1, v1.6.0-rc.2 (optionally without the v).
_RC_TAG = re.compile(r"(?:refs/tags/)?v?(\d+)\.(\d+)\.(\d+)-?rc\.?(\d+)")


def parse(version: str) -> semver.Version:
    """Parse a SemVer 2.0 version.

    Raises:
        ValueError: `version` is not SemVer 2.0 (e.g. `v1.2.3`, `1.2`, `01.2.3`).
    """
    return semver.Version.parse(version)


#: The most digits a numeric part of `--library-version` may have: 9 (999,999,999).
#:
#: SemVer 2.0 sets no bound, but the tools that read the version do: any 9-digit number
#: fits a signed 32-bit integer (2,147,483,647), the narrowest integer a reader of
#: library.properties or the Library Manager index may parse a part into, so every tool
#: orders such versions alike; a 10-digit or longer part (a pasted timestamp or hash) is a
#: typo, not a version anyone means.
MAX_VERSION_DIGITS = 9


def check_explicit_version(version: str) -> str:
    """Validate an explicit `--library-version`.

    Returns:
        `version` unchanged.
    Raises:
        FatalError: if it is not a SemVer 2.0 version; if it has `+build` metadata (SemVer
            2.0, item 10: "Build metadata MUST be ignored when determining version
            precedence", so the Library Manager, comparing by SemVer precedence, takes
            1.2.3+meta for 1.2.3: not a new release); or a numeric part (major, minor, patch
            or a numeric prerelease identifier) of more than MAX_VERSION_DIGITS digits.
    """
    try:
        parsed = parse(version)
    except ValueError:
        raise FatalError(
            f"--library-version {version!r} is not a version the Library Manager accepts: "
            "give a Semantic Version X.Y.Z (optionally -prerelease, e.g. 1.6.0-rc.1) without "
            "a 'v' prefix or leading zeros, e.g. 1.5.1"
        ) from None
    if parsed.build is not None:
        plain = version.partition("+")[0]
        raise FatalError(
            f"--library-version {version!r} has build metadata (+{parsed.build}), which "
            "Semantic Versioning ignores when it orders versions: the Library Manager would "
            f"take it for {plain} (the same release); give {plain}, or a higher version"
        )
    numbers = version.partition("-")[0].split(".")
    if parsed.prerelease is not None:
        numbers += [p for p in parsed.prerelease.split(".") if p.isdigit()]
    long = [n for n in numbers if len(n) > MAX_VERSION_DIGITS]
    if long:
        raise FatalError(
            f"--library-version {version!r} has a number of {len(long[0])} digits "
            f"({long[0][:12]}...); each number of a version has at most {MAX_VERSION_DIGITS} "
            "digits (one a 32-bit integer holds, so every tool orders it alike)"
        )
    return version


def semver_from_upstream(upstream: str, ref: str | None = None) -> str:
    """Map ExecuTorch's `version.txt` content (PEP 440) to a SemVer library version.

    Args:
        upstream: the text of version.txt (surrounding whitespace ignored).
        ref: the ExecuTorch ref it was read at; a release-candidate tag (`v1.6.0-rc1`) adds
            `-rc.N` when version.txt itself has no pre-release or dev suffix.
    Returns:
        e.g. "1.5.1" for "1.5.1", "1.5.0-alpha.0" for "1.5.0a0", "1.6.0-rc.1" for "1.6.0" at
        the tag v1.6.0-rc1.
    Raises:
        FatalError: for text that is not a PEP 440 version, a post release or an epoch, or an
            rc tag whose X.Y.Z differs from version.txt's.
    """
    text = upstream.strip()
    try:
        parsed = Version(text)
    except InvalidVersion:
        raise FatalError(
            f"version.txt says {text!r}, which is not a version; pass --library-version X.Y.Z"
        ) from None
    if parsed.epoch or parsed.post is not None:
        raise FatalError(
            f"version.txt says {text!r}; an epoch or post release has no Library Manager "
            "(SemVer) form that sorts correctly; pass --library-version X.Y.Z"
        )
    release = [*parsed.release, 0, 0, 0][:3]
    if len(parsed.release) > 3:
        raise FatalError(
            f"version.txt says {text!r}, which has more than three release numbers; "
            "pass --library-version X.Y.Z"
        )
    core = ".".join(str(n) for n in release)
    pre: list[str] = []
    if parsed.pre is not None:
        pre += [_PRE_NAMES[parsed.pre[0]], str(parsed.pre[1])]
    if parsed.dev is not None:
        pre += ["dev", str(parsed.dev)]
    rc = _RC_TAG.fullmatch(ref or "")
    if rc and not pre:
        tag_core = ".".join(str(int(n)) for n in rc.groups()[:3])
        if tag_core != core:
            raise FatalError(
                f"{ref} is a release-candidate tag of {tag_core}, but its version.txt says "
                f"{text!r}; pass --library-version (e.g. {tag_core}-rc.{int(rc[4])})"
            )
        pre = ["rc", str(int(rc[4]))]
    return f"{core}-{'.'.join(pre)}" if pre else core


def library_version(upstream_version: str, explicit: str | None, ref: str | None = None) -> str:
    """The version written to library.properties: `explicit` if given, else from version.txt
    (and, for a release-candidate tag, the `ref`).

    Raises:
        FatalError: see `check_explicit_version` and `semver_from_upstream`.
    """
    if explicit is not None:
        return check_explicit_version(explicit)
    return semver_from_upstream(upstream_version, ref)


def suggest_next(version: str, *published: str) -> str:
    """The smallest sensible version above `version` and every `published` one, for the hint
    in a refusal: a pre-release moves within its pre-release (`1.6.0-alpha.0` ->
    `1.6.0-alpha.1`, `1.6.0-rc` -> `1.6.0-rc.1`), so the suggestion never ranks above the next
    real release; a release moves its patch number (`1.5.1` -> `1.5.2`).

    Args:
        version: the version that was refused; published: versions already out (any that is
            not SemVer is ignored).
    Returns:
        A SemVer 2.0 string greater than every valid argument; "a greater X.Y.Z" when none is
        valid.
    """
    candidates = []
    for text in (version, *published):
        try:
            candidates.append(parse(text).replace(build=None))
        except ValueError:
            continue
    if not candidates:
        return "a greater X.Y.Z"
    top = max(candidates)
    if top.prerelease:
        parts = top.prerelease.split(".")
        if parts[-1].isdigit():
            parts[-1] = str(int(parts[-1]) + 1)
        else:
            parts.append("1")
        return str(top.replace(prerelease=".".join(parts)))
    return str(top.bump_patch())


def highest(versions: Iterable[str]) -> str | None:
    """The greatest of `versions` by SemVer precedence (build metadata ignored); texts that are
    not SemVer are skipped. None when there is none."""
    best: tuple[semver.Version, str] | None = None
    for text in versions:
        try:
            parsed = parse(text)
        except ValueError:
            continue
        if best is None or parsed.compare(best[0]) > 0:
            best = (parsed, text)
    return best[1] if best else None


def is_greater(version: str, than: str) -> bool:
    """SemVer 2.0 precedence: `version` > `than` (build metadata ignored).

    Raises:
        ValueError: either is not SemVer 2.0.
    """
    return parse(version).compare(than) > 0


def tag_versions(tags: Iterable[str]) -> dict[str, str]:
    """The SemVer versions that tags name: `v<semver>` (and a bare `<semver>`) -> version,
    keyed by tag name; other tags (`release-2024`, `v1.5`) are left out."""
    found: dict[str, str] = {}
    for tag in tags:
        text = tag[1:] if tag.startswith("v") else tag
        try:
            parse(text)
        except ValueError:
            continue
        found[tag] = text
    return found
