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


#: Characters a name shows as escapes: C0/C1 controls and DEL, the Unicode line and
#: paragraph separators (a line break inside a table row would end the row), and the
#: bidirectional controls that make a name read otherwise than it is (CVE-2021-42574,
#: "Trojan Source": U+061C, U+200E/F, U+202A to U+202E, U+2066 to U+2069).
_INVISIBLE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(text: str) -> str:
    """`text` with each character of `_INVISIBLE` written as an escape: "\\n", "\\r",
    "\\t", else "\\xNN" / "\\uNNNN" (as Python writes them)."""
    return _INVISIBLE.sub(lambda m: _ESCAPES.get(m[0]) or repr(m[0])[1:-1], text)


def inline_code(text: str) -> str:
    """`text` (a file or example name from ExecuTorch, or a pin from the base branch: any
    text) as inline code that survives a table cell, the one way every such name reaches
    the sync pull request's section on upstream changes (`generator.sync.upstream`): control
    characters and line breaks shown as escapes (`_visible`), a backtick run longer than any
    in it, spaces where it starts or ends with a backtick or space, and `|` escaped (GFM
    tables read `\\|` as `|` inside code too). Inside a code span, Markdown, HTML, links and
    @mentions are literal text (GFM spec, "Code spans",
    https://github.github.com/gfm/#code-spans; tables, https://github.github.com/gfm/#tables-extension-).
    """
    text = _visible(text)
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text[:1] in ("`", " ") or text[-1:] in ("`", " ") else ""
    return f"{ticks}{pad}{text.replace('|', chr(92) + '|')}{pad}{ticks}"
