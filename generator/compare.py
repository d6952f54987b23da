"""What changed between two generated libraries: the kernels they register, the sizes `check`
measured, and the upstream commits between their pins. Sync compares the regenerated library
with the base branch's, release a tagged commit with the previous tag's; the kernels and pins
come from each library's facts (`generator.facts.LibraryFacts`), the sizes from its check
report.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator.markdown import signed, table

# Re-exported: sync's pull request body and release's notes link upstream through them.
from generator.urls import UPSTREAM_COMMIT as UPSTREAM_COMMIT
from generator.urls import UPSTREAM_COMPARE as UPSTREAM_COMPARE


@dataclass(frozen=True)
class SizeRow:
    """One measured size and its change against the base branch's library.

    Attributes:
        example: sketch name; metric: e.g. "flash" or "ram" (bytes);
        value: this library's size (B); base: the base branch's (B), or None if unknown.
    """

    example: str
    metric: str
    value: int
    base: int | None

    @property
    def delta(self) -> int | None:
        """value - base (B), or None without a base."""
        return None if self.base is None else self.value - self.base


def kernels_only_in(kernels: Sequence[str], other: Sequence[str]) -> list[str]:
    """The kernel names of `kernels` that `other` lacks, sorted (added: new vs old; removed:
    old vs new); each a `LibraryFacts.kernels`."""
    return sorted(set(kernels) - set(other))


def _sizes_in(node: Any, label: str | None = None) -> Iterator[tuple[str, str, int]]:
    """(example, metric, bytes) for each `sizes` mapping in a check report (any depth)."""
    if isinstance(node, dict):
        name = node.get("example") or node.get("name") or label
        sizes = node.get("sizes")
        if isinstance(sizes, dict):
            for metric, value in sizes.items():
                if isinstance(value, int) and not isinstance(value, bool):
                    yield str(name or "library"), str(metric), value
                elif isinstance(value, dict) and isinstance(value.get("bytes"), int):
                    yield str(name or "library"), str(metric), int(value["bytes"])
        for key, value in node.items():
            if key != "sizes":
                yield from _sizes_in(value, str(name) if name else None)
    elif isinstance(node, list):
        for item in node:
            yield from _sizes_in(item, label)


def size_rows(report: Mapping[str, Any], base: Mapping[str, Any] | None) -> list[SizeRow]:
    """Sizes of this check report with deltas against the base library's report.

    Args:
        report: `CheckReport.to_dict()` of the regenerated library; every mapping named
            `sizes` (metric -> bytes, or metric -> {"bytes": n}) is a row, labelled with the
            nearest enclosing `example`/`name`.
        base: the same from the base branch's extras/check_report.json, or None.
    """
    base_sizes = {(e, m): v for e, m, v in _sizes_in(dict(base))} if base else {}
    rows: list[SizeRow] = []
    seen: set[tuple[str, str]] = set()
    for example, metric, value in _sizes_in(dict(report)):
        if (example, metric) in seen:
            continue
        seen.add((example, metric))
        rows.append(SizeRow(example, metric, value, base_sizes.get((example, metric))))
    return rows


#: How the size table names the check report's metrics: static = `link_mode=static`, Dynamic =
#: the board's default `link_mode=dynamic` (generator/check/report.py).
METRIC_LABELS = {
    "flash": "flash (static)",
    "ram": "RAM (static)",
    "dynamic_flash": "flash (Dynamic)",
    "dynamic_ram": "RAM (Dynamic)",
    "arena_used": "arena used",
    "arena_size": "arena size",
}


def size_table(rows: Sequence[SizeRow], this: str, base: str) -> list[str]:
    """The sizes as table lines: example, metric, this library's bytes, the base's, the change.

    Args:
        this, base: the titles of the two size columns (e.g. "This PR" and "`main`").
    """
    return table(
        ["Example", "Size", this, base, "Delta"],
        (
            [
                row.example,
                METRIC_LABELS.get(row.metric, row.metric),
                f"{row.value:,} B",
                "n/a" if row.base is None else f"{row.base:,} B",
                signed(row.delta),
            ]
            for row in rows
        ),
        align="llrrr",
    )
