"""The build's facts as the untrusted prepare phase staged them (`manifest.json`'s `build`),
checked field by field before the publish phase uses any (issue 29): every field of
`BuildResult` but `out`, of its type and within bounds, and the version strings plain
one-line versions, so that no staged value reaches a commit message, an error or the pull
request body as more lines or as a type the code does not expect."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from generator.pipeline.run import BuildResult
from generator.util.errors import FatalError

#: The staged facts that are text, and those that are counts (non-negative integers).
_TEXT = ("ref", "sha", "upstream_version", "library_version", "dtypes")
_COUNTS = ("kernel_count", "op_sources", "op_sources_available", "files", "bytes")
#: The longest text fact, the most operators and compile times, the longest operator name.
#: (The build of cff6f4dd32e6 selects 27 operators; the portable library has about 400.)
MAX_TEXT = 4096
MAX_ITEMS = 10_000
MAX_NAME = 256
#: What a staged version (the ref's version.txt, the library version) may be: one word of
#: letters, digits and `.+_-` (ExecuTorch's version.txt is e.g. "1.5.0a0"; the library's
#: is SemVer), so it cannot add lines or Markdown where it is written.
VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}")


def _refuse(where: Path, name: str, what: str) -> FatalError:
    return FatalError(
        f"{where} has a build fact {name!r} that is not {what}: it is not a manifest "
        "`sync --prepare` wrote; refusing to publish it"
    )


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63


def _seconds(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1e9


def staged_build(facts: dict[str, Any], library: Path, where: Path) -> BuildResult:
    """The `BuildResult` of the staged `facts` (its `out`: `library`).

    Raises:
        FatalError: naming the field: a field missing or unknown, text that is not a string
            or over `MAX_TEXT` characters, `op_set` not a list of at most `MAX_ITEMS`
            strings of at most `MAX_NAME` characters, a count that is not a non-negative
            integer, `seconds` or `prune_compiles` not (a list of) non-negative numbers.
    """
    known = {*_TEXT, *_COUNTS, "op_set", "seconds", "prune_compiles"}
    unknown = sorted(set(facts) - known)
    if unknown:
        raise _refuse(where, unknown[0][:80], "one a build reports")
    for name in ("ref", "sha", "upstream_version", "library_version"):
        if name not in facts:
            raise _refuse(where, name, "missing")
    for name in _TEXT:
        if name in facts and not (isinstance(facts[name], str) and len(facts[name]) <= MAX_TEXT):
            raise _refuse(where, name, f"a string of at most {MAX_TEXT} characters")
    for name in _COUNTS:
        if name in facts and not _count(facts[name]):
            raise _refuse(where, name, "a count (a non-negative integer)")
    op_set = facts.get("op_set", [])
    if not (
        isinstance(op_set, list)
        and len(op_set) <= MAX_ITEMS
        and all(isinstance(op, str) and len(op) <= MAX_NAME for op in op_set)
    ):
        raise _refuse(where, "op_set", f"a list of at most {MAX_ITEMS} operator names")
    if "seconds" in facts and not _seconds(facts["seconds"]):
        raise _refuse(where, "seconds", "a number of seconds")
    times = facts.get("prune_compiles", [])
    if not (isinstance(times, list) and len(times) <= MAX_ITEMS and all(map(_seconds, times))):
        raise _refuse(where, "prune_compiles", "a list of numbers of seconds")
    return BuildResult(out=library, **{**facts, "prune_compiles": tuple(times)})


def check_versions(built: BuildResult, where: Path) -> None:
    """Refuse a staged version that is not one plain word (`VERSION`).

    Raises:
        FatalError: naming the field and its value (repr: one line).
    """
    for name in ("upstream_version", "library_version"):
        value = getattr(built, name)
        if not VERSION.fullmatch(value):
            raise FatalError(
                f"{where} says {name} {value[:100]!r}, which is no version (letters, digits "
                "and `.+_-`, at most 64): refusing to publish it"
            )
