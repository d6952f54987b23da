"""The check report as the library commits it (`extras/check_report.json`): the facts of the
check without what changes from run to run, so syncing an unchanged ref twice writes the same
file and pushes no new commit.

With several boards the report is `generator.check.report.board_data`'s: every example
entry carries its board's key (`"board"`), and `"boards"` lists the boards; `board_part` takes
one board's part of it.

Dropped: wall times (every `seconds` / `*_seconds` key) and the object cache counts (`cache`),
which depend on the machine and on what ran before. Absolute paths of the machine (the
temporary build folder, the work folder, the cache) are replaced by stable names: the library
becomes `.` (the report names the library it lies in), the others `<work>` and `<cache>`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: Keys dropped wherever they occur (see the module docstring).
VOLATILE_KEYS = frozenset({"seconds", "cache"})


def committed_report(report: Mapping[str, Any], roots: Mapping[Path, str]) -> dict[str, Any]:
    """`report` (the JSON form of a check report) without volatile fields.

    Args:
        report: `CheckReport.to_dict()` (see `generator.check.report` for the shape).
        roots: absolute folder -> the name written in its place (e.g. build folder -> ".").
            A value equal to a root becomes the name; a string holding `root/...` gets the
            root replaced. Longer roots are replaced first, so nested folders keep their name.
    Returns:
        A new dict; `report` is not changed.
    """
    pairs: list[tuple[str, str]] = []
    for root, name in roots.items():
        for form in {str(root), str(root.resolve()) if root.is_absolute() else str(root)}:
            if form and form != "/":
                pairs.append((form.rstrip("/"), name))
    pairs.sort(key=lambda pair: len(pair[0]), reverse=True)
    cleaned = _clean(report, pairs)
    assert isinstance(cleaned, dict)
    return cleaned


def _clean(value: Any, pairs: list[tuple[str, str]]) -> Any:
    if isinstance(value, Mapping):
        return {
            key: _clean(item, pairs)
            for key, item in value.items()
            if not (isinstance(key, str) and _volatile(key))
        }
    if isinstance(value, list | tuple):
        return [_clean(item, pairs) for item in value]
    if isinstance(value, str):
        for root, name in pairs:
            if root in value:
                value = value.replace(root, name)
        return value
    return value


def _volatile(key: str) -> bool:
    return key in VOLATILE_KEYS or key.endswith("_seconds")
