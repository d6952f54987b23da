"""What changed between two generated libraries: the kernels they register, the sizes `check`
measured and its instructions per inference on the emulated Cortex-M33, and the upstream
commits between their pins. Sync compares the regenerated library
with the base branch's, release a tagged commit with the previous tag's; the kernels and pins
come from each library's facts (`generator.library.facts.LibraryFacts`), the sizes and instruction
counts from its check report.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator.boards.budgets import BOARDS, ZEPHYR_BOARDS
from generator.util.markdown import signed, table

# Re-exported: sync's pull request body and release's notes link upstream through them.
from generator.util.urls import UPSTREAM_COMMIT as UPSTREAM_COMMIT
from generator.util.urls import UPSTREAM_COMPARE as UPSTREAM_COMPARE


@dataclass(frozen=True)
class SizeRow:
    """One measured figure and its change against the base branch's library.

    Attributes:
        example: sketch name; metric: e.g. "flash" or "ram" (bytes), or `INSTRUCTIONS`
            (instructions per inference);
        value: this library's figure (B, or instructions); base: the base branch's, or None
            if unknown.
        board: the key of the board it was measured for (`generator.boards.budgets.ZEPHYR_BOARDS`,
            `check --board`), or None when the report does not say (`report_board`).
    """

    example: str
    metric: str
    value: int
    base: int | None
    board: str | None = None

    @property
    def delta(self) -> int | None:
        """value - base (in the metric's unit), or None without a base."""
        return None if self.base is None else self.value - self.base


def kernels_only_in(kernels: Sequence[str], other: Sequence[str]) -> list[str]:
    """The kernel names of `kernels` that `other` lacks, sorted (added: new vs old; removed:
    old vs new); each a `LibraryFacts.kernels`."""
    return sorted(set(kernels) - set(other))


#: A board's key by its name (`CheckReport.board`, the report's top-level "board").
_KEY_BY_NAME = {
    **{row.name: key for key, row in ZEPHYR_BOARDS.items()},
    **{board.name: key for key, board in BOARDS.items()},
}


def report_board(report: Mapping[str, Any]) -> str | None:
    """The key of the one board a check report was made for, which its example entries
    without a "board" of their own were measured on: the key of its one `boards` entry
    (`check --json`, `generator.check.report.board_data`), else its top-level `board`
    name looked up in `generator.boards.budgets` (a `CheckReport.to_dict()`, as sync commits it:
    "Arduino UNO Q" -> "unoq"); None when it names none, several or an unknown one."""
    listed = report.get("boards")
    if isinstance(listed, list) and len(listed) == 1 and isinstance(listed[0], Mapping):
        key = listed[0].get("key")
        return key if isinstance(key, str) else None
    name = report.get("board")
    return _KEY_BY_NAME.get(name) if isinstance(name, str) else None


def board_name(key: str | None) -> str:
    """The board's name in `generator.boards.budgets` (`unoq` -> "Arduino UNO Q"), the key itself
    for
    a board the table lacks, "unknown" for None."""
    if key is None:
        return "unknown"
    row = ZEPHYR_BOARDS.get(key) or BOARDS.get(key)
    return row.name if row else key


def _sizes_in(
    node: Any, label: str | None = None, board: str | None = None
) -> Iterator[tuple[str | None, str, str, int]]:
    """(board, example, metric, bytes) for each `sizes` mapping in a check report (any depth);
    board: the enclosing example entry's "board" (a key), else `board`."""
    if isinstance(node, dict):
        name = node.get("example") or node.get("name") or label
        own = node.get("board") if "example" in node else None
        board = own if isinstance(own, str) else board
        sizes = node.get("sizes")
        if isinstance(sizes, dict):
            for metric, value in sizes.items():
                if isinstance(value, int) and not isinstance(value, bool):
                    yield board, str(name or "library"), str(metric), value
                elif isinstance(value, dict) and isinstance(value.get("bytes"), int):
                    yield board, str(name or "library"), str(metric), int(value["bytes"])
        for key, value in node.items():
            if key != "sizes":
                yield from _sizes_in(value, str(name) if name else None, board)
    elif isinstance(node, list):
        for item in node:
            yield from _sizes_in(item, label, board)


def size_rows(report: Mapping[str, Any], base: Mapping[str, Any] | None) -> list[SizeRow]:
    """Sizes of this check report with deltas against the base library's report, per board
    and example.

    Args:
        report: `CheckReport.to_dict()` of the regenerated library, or `check --json`'s
            report over several boards; every mapping named `sizes` (metric -> bytes, or
            metric -> {"bytes": n}) is a row, labelled with the nearest enclosing
            `example`/`name` and its example entry's `board` (else `report_board`).
        base: the same from the base branch's extras/check_report.json, or None; a row's
            base is the base's figure for the same board, example and metric.
    Returns:
        One row per (board, example, metric), in report order.
    """
    base_sizes = (
        {(b, e, m): v for b, e, m, v in _sizes_in(dict(base), board=report_board(base))}
        if base
        else {}
    )
    rows: list[SizeRow] = []
    seen: set[tuple[str | None, str, str]] = set()
    for board, example, metric, value in _sizes_in(dict(report), board=report_board(report)):
        if (board, example, metric) in seen:
            continue
        seen.add((board, example, metric))
        before = base_sizes.get((board, example, metric))
        rows.append(SizeRow(example, metric, value, before, board))
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
    """The sizes as table lines: example, metric, this library's bytes, the base's, the change;
    with a first column "Board" (`board_name`) when the rows are of more than one board (one
    board's table is the same as before boards were named).

    Args:
        rows: `size_rows`, in the order they are shown.
        this, base: the titles of the two size columns (e.g. "This PR" and "`main`").
    """
    boards = len({row.board for row in rows}) > 1
    return table(
        [*(["Board"] if boards else []), "Example", "Size", this, base, "Delta"],
        (
            [
                *([board_name(row.board)] if boards else []),
                row.example,
                METRIC_LABELS.get(row.metric, row.metric),
                f"{row.value:,} B",
                "n/a" if row.base is None else f"{row.base:,} B",
                signed(row.delta),
            ]
            for row in rows
        ),
        align="lllrrr" if boards else "llrrr",
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
    """(example, instructions per inference) of each example whose `timing` has a count, of
    the UNO Q's entries only (`INSTRUCTIONS_NOTE` names its machine; an entry without a
    "board" counts as the report's `report_board`, and a report naming no board as the UNO
    Q's, as every report before `check --board` was)."""
    default = report_board(report)
    for example in report.get("examples") or []:
        if not isinstance(example, Mapping):
            continue
        board = example.get("board") if isinstance(example.get("board"), str) else default
        if board not in (None, "unoq"):
            continue
        timing = example.get("timing")
        value = timing.get(INSTRUCTIONS) if isinstance(timing, Mapping) else None
        if isinstance(value, int) and not isinstance(value, bool):
            yield str(example.get("example") or example.get("name") or "library"), value


def instruction_rows(report: Mapping[str, Any], base: Mapping[str, Any] | None) -> list[SizeRow]:
    """Instructions per inference of this check report's examples, with the base's.

    Args:
        report: `CheckReport.to_dict()` of the new library; an example without a count (its
            sketch prints no `Inference: N us` line, or it was not run) has no row, nor one
            of another board than the UNO Q (see `_instructions_in`).
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
