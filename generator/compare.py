"""What changed between two generated libraries: the kernels they register, the sizes `check`
measured and its instructions per inference on the emulated Cortex-M33, and the upstream
commits between their pins. Sync compares the regenerated library
with the base branch's, release a tagged commit with the previous tag's; the kernels and pins
come from each library's facts (`generator.facts.LibraryFacts`), the sizes and instruction
counts from its check report.
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
    """One measured figure and its change against the base branch's library.

    Attributes:
        example: sketch name; metric: e.g. "flash" or "ram" (bytes), or `INSTRUCTIONS`
            (instructions per inference);
        value: this library's figure (B, or instructions); base: the base branch's, or None
            if unknown.
    """

    example: str
    metric: str
    value: int
    base: int | None

    @property
    def delta(self) -> int | None:
        """value - base (in the metric's unit), or None without a base."""
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


#: The metric of a check report's instructions per inference: `examples[].timing`'s
#: `instructions_per_inference` (generator/check/timing.py), counted on the emulated Cortex-M33.
INSTRUCTIONS = "instructions_per_inference"

#: What the instruction tables say under them: what the count is and how close.
INSTRUCTIONS_NOTE = (
    "Instructions of one inference on the emulated Cortex-M33 (QEMU mps2-an505 counting "
    "instructions, `-icount shift=0`), from each example's last `Inference: N us` line: "
    "N × 1,000, to within 1,000, the same on every run. A count, not the board's time (that "
    "also depends on its clock, flash wait states and cycles per instruction)."
)


def _instructions_in(report: Mapping[str, Any]) -> Iterator[tuple[str, int]]:
    """(example, instructions per inference) of each example whose `timing` has a count."""
    for example in report.get("examples") or []:
        if not isinstance(example, Mapping):
            continue
        timing = example.get("timing")
        value = timing.get(INSTRUCTIONS) if isinstance(timing, Mapping) else None
        if isinstance(value, int) and not isinstance(value, bool):
            yield str(example.get("example") or example.get("name") or "library"), value


def instruction_rows(report: Mapping[str, Any], base: Mapping[str, Any] | None) -> list[SizeRow]:
    """Instructions per inference of this check report's examples, with the base's.

    Args:
        report: `CheckReport.to_dict()` of the new library; an example without a count (its
            sketch prints no `Inference: N us` line, or it was not run) has no row.
        base: the same from the base branch's (or previous tag's) extras/check_report.json,
            or None; a base example without a count gives `base` None (no delta), never 0.
    Returns:
        Rows with metric `INSTRUCTIONS`, value and base in instructions, in report order.
    """
    before = dict(_instructions_in(base)) if base else {}
    rows: list[SizeRow] = []
    for example, value in _instructions_in(report):
        if all(row.example != example for row in rows):
            rows.append(SizeRow(example, INSTRUCTIONS, value, before.get(example)))
    return rows


def _change(row: SizeRow) -> str:
    """`+12,000 (+0.1%)`, `±0`, or `n/a` without a base; no percentage of a zero base."""
    if row.delta is None or row.base is None:
        return "n/a"
    if row.delta == 0 or row.base == 0:
        return signed(row.delta)
    return f"{signed(row.delta)} ({row.delta * 100 / row.base:+.1f}%)"


def instruction_table(rows: Sequence[SizeRow], this: str, base: str) -> list[str]:
    """The instruction counts as table lines: example, this library's, the base's, the change
    (with its percentage of the base's).

    Args:
        rows: `instruction_rows`; this, base: the titles of the two count columns.
    """
    return table(
        ["Example", f"{this}: instructions per inference", base, "Delta"],
        (
            [
                row.example,
                f"{row.value:,}",
                "n/a" if row.base is None else f"{row.base:,}",
                _change(row),
            ]
            for row in rows
        ),
        align="lrrr",
    )
