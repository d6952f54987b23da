"""Markdown pieces the reports share: the check report, the sync pull request body and the
release notes (GitHub-flavoured Markdown)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence


def code_fence(text: str) -> str:
    """A backtick fence longer than any run of backticks in `text` (at least 3).

    Program output shown in a fenced block cannot close it early (CommonMark: a fence
    is closed only by one at least as long).
    """
    longest = max((len(m.group(0)) for m in re.finditer(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def signed(n: int | None) -> str:
    """A change with its sign and thousands separators: "+1,024", "-8", "±0"; "n/a" for None."""
    if n is None:
        return "n/a"
    return f"+{n:,}" if n > 0 else f"{n:,}" if n < 0 else "±0"


def code_list(names: Iterable[str]) -> str:
    """Names as inline code, comma-separated: "`a`, `b`"."""
    return ", ".join(f"`{n}`" for n in names)


def table(header: Sequence[str], rows: Iterable[Sequence[str]], align: str = "") -> list[str]:
    """The lines of a table: header, delimiter row, rows.

    Args:
        header: the column titles (an empty title gives an empty cell, `| |`).
        rows: the cells of each row, as many as `header`.
        align: one letter per column, "l" (left, the default for missing letters) or "r".
    """
    rule = "|" + "".join("---:|" if a == "r" else "---|" for a in align.ljust(len(header), "l"))
    return [_row(header), rule, *(_row(cells) for cells in rows)]


def _row(cells: Sequence[str]) -> str:
    return "|" + "".join(f" {cell} |" if cell else " |" for cell in cells)
