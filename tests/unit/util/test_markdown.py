"""generator.util.markdown: the pieces the check report, the sync body and the release notes
share."""

from __future__ import annotations

from generator.library.compare import SizeRow, size_table
from generator.util.markdown import code_fence, code_list, signed, table


def test_signed_changes() -> None:
    assert [signed(n) for n in (1234, -8, 0, None)] == ["+1,234", "-8", "±0", "n/a"]


def test_code_fence_outgrows_the_backticks_inside() -> None:
    assert code_fence("plain") == "```"
    assert code_fence("a ```` b") == "`````"


def test_code_list() -> None:
    assert code_list(["aten::add.out", "x"]) == "`aten::add.out`, `x`"
    assert code_list([]) == ""


def test_table_lines_with_alignment_and_empty_titles() -> None:
    assert table(["a", "b"], [["1", "2"]], align="lr") == ["| a | b |", "|---|---:|", "| 1 | 2 |"]
    assert table(["", ""], [["Pin", "`x`"]]) == ["| | |", "|---|---|", "| Pin | `x` |"]


def test_size_table() -> None:
    rows = [SizeRow("AddModel", "flash", 2048, 1024), SizeRow("AddModel", "ram", 8, None)]
    assert size_table(rows, "This PR", "`main`") == [
        "| Example | Size | This PR | `main` | Delta |",
        "|---|---|---:|---:|---:|",
        "| AddModel | flash (static) | 2,048 B | 1,024 B | +1,024 |",
        "| AddModel | RAM (static) | 8 B | n/a | n/a |",
    ]
