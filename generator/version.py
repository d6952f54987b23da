"""The library version: explicit X.Y.Z, or derived from the ref's `version.txt`.

The rule (documented in README.md, "Versions"):
- `--library-version X.Y.Z` is taken as is; it must be strict `X.Y.Z` (no `v`, no leading
  zeros, nothing after the patch number).
- Otherwise the ref's `version.txt` (a PEP 440 version; ExecuTorch writes e.g. `1.5.0` on main
  and `1.5.1` on release tags) is mapped to Semantic Versioning, which is what the Arduino
  Library Manager compares:
    `1.5.1` -> `1.5.1`;  `1.5` -> `1.5.0`;
    `1.5.0a0` -> `1.5.0-alpha.0`, `1.5.0b1` -> `1.5.0-beta.1`, `1.5.0rc2` -> `1.5.0-rc.2`,
    `1.5.0.dev3` -> `1.5.0-dev.3`, `1.5.0a0.dev1` -> `1.5.0-alpha.0.dev.1`;
    a local label (`1.5.1+cpu`) is dropped.
  Post releases and epochs have no faithful SemVer form and are refused: pass
  `--library-version`.
"""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

from generator.errors import FatalError

STRICT_VERSION = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)")
_PRE_NAMES = {"a": "alpha", "b": "beta", "rc": "rc"}


def check_explicit_version(version: str) -> str:
    """Validate an explicit `--library-version`.

    Returns:
        `version` unchanged.
    Raises:
        FatalError: if it is not strict `X.Y.Z`.
    """
    if not STRICT_VERSION.fullmatch(version):
        raise FatalError(
            f"--library-version {version!r} is not a version the Library Manager accepts here: "
            "give three numbers X.Y.Z without a 'v' prefix or leading zeros, e.g. 1.5.1"
        )
    return version


def semver_from_upstream(upstream: str) -> str:
    """Map ExecuTorch's `version.txt` content (PEP 440) to a SemVer library version.

    Args:
        upstream: the text of version.txt (surrounding whitespace ignored).
    Returns:
        e.g. "1.5.1" for "1.5.1", "1.5.0-alpha.0" for "1.5.0a0".
    Raises:
        FatalError: for text that is not a PEP 440 version, a post release or an epoch.
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
    return f"{core}-{'.'.join(pre)}" if pre else core


def library_version(upstream_version: str, explicit: str | None) -> str:
    """The version written to library.properties: `explicit` if given, else from version.txt.

    Raises:
        FatalError: see `check_explicit_version` and `semver_from_upstream`.
    """
    if explicit is not None:
        return check_explicit_version(explicit)
    return semver_from_upstream(upstream_version)
