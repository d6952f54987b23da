"""Sizes per board with deltas (issue 19, part 2): `compare.size_rows` labels each row by board
and example when the check report carries a "board" per entry (`check --board ...,... --json`,
`generator.check.report.board_data`), the base's figure is the same board's, and the size
table of the sync pull request's body and of the release notes gets a Board column for more
than one board; one board's table stays as it was."""

from __future__ import annotations

from typing import Any

from facts_fixture import pull_facts, release_facts

from generator.library.compare import (
    INSTRUCTIONS,
    SizeRow,
    board_name,
    instruction_rows,
    report_board,
    size_rows,
    size_table,
)
from generator.release.step import render_notes
from generator.sync.body import render_body

BOARDS_LISTED = {
    "unoq": {"key": "unoq", "name": "Arduino UNO Q"},
    "giga": {"key": "giga", "name": "Arduino Giga R1"},
}


def _entry(example: str, flash: int, board: str | None = None, count: int | None = None) -> Any:
    entry: dict[str, Any] = {"example": example, "sizes": {"flash": flash, "ram": flash // 10}}
    entry["timing"] = {INSTRUCTIONS: count} if count is not None else None
    if board is not None:
        entry["board"] = board
    return entry


def _check_json(*entries: Any, boards: tuple[str, ...] = ("unoq",)) -> dict[str, Any]:
    """What `check --board ... --json` writes: entries with "board", the "boards" list."""
    return {
        "board": ", ".join(BOARDS_LISTED[b]["name"] for b in boards),
        "boards": [BOARDS_LISTED[b] for b in boards],
        "examples": list(entries),
    }


def _committed(*entries: Any) -> dict[str, Any]:
    """A `CheckReport.to_dict()` as sync commits it: one board, named at the top only."""
    return {"board": "Arduino UNO Q", "examples": list(entries)}


def test_the_report_names_its_one_board_by_key() -> None:
    assert report_board(_check_json(boards=("giga",))) == "giga"
    assert report_board(_committed()) == "unoq"  # the UNO Q's name, looked up
    assert report_board(_check_json(boards=("unoq", "giga"))) is None  # several
    assert report_board({"board": "Some Board"}) is None and report_board({}) is None
    assert board_name("giga") == "Arduino Giga R1" and board_name("nano_connect").endswith(
        "RP2040 Connect"
    )
    assert board_name("x-new") == "x-new" and board_name(None) == "unknown"


def test_rows_are_per_board_and_example_with_the_same_boards_base() -> None:
    new = _check_json(
        _entry("AddModel", 1000, "unoq"),
        _entry("Kws", 5000, "unoq"),
        _entry("AddModel", 1200, "giga"),
        boards=("unoq", "giga"),
    )
    base = _check_json(
        _entry("AddModel", 900, "unoq"),
        _entry("AddModel", 1250, "giga"),
        boards=("unoq", "giga"),
    )
    rows = size_rows(new, base)
    assert rows == [
        SizeRow("AddModel", "flash", 1000, 900, "unoq"),
        SizeRow("AddModel", "ram", 100, 90, "unoq"),
        SizeRow("Kws", "flash", 5000, None, "unoq"),
        SizeRow("Kws", "ram", 500, None, "unoq"),
        SizeRow("AddModel", "flash", 1200, 1250, "giga"),
        SizeRow("AddModel", "ram", 120, 125, "giga"),
    ]
    assert [row.delta for row in rows] == [100, 10, None, None, -50, -5]


def test_a_committed_uno_q_report_is_the_base_of_the_uno_q_rows_only() -> None:
    new = _check_json(
        _entry("AddModel", 1000, "unoq"), _entry("AddModel", 1200, "giga"), boards=("unoq", "giga")
    )
    rows = size_rows(new, _committed(_entry("AddModel", 900)))
    assert [(row.board, row.metric, row.base) for row in rows] == [
        ("unoq", "flash", 900),
        ("unoq", "ram", 90),
        ("giga", "flash", None),
        ("giga", "ram", None),
    ]


def test_several_boards_get_a_board_column() -> None:
    new = _check_json(
        _entry("AddModel", 1000, "unoq"), _entry("AddModel", 1200, "giga"), boards=("unoq", "giga")
    )
    lines = size_table(size_rows(new, _committed(_entry("AddModel", 900))), "This PR", "`main`")
    assert lines == [
        "| Board | Example | Size | This PR | `main` | Delta |",
        "|---|---|---|---:|---:|---:|",
        "| Arduino UNO Q | AddModel | flash (static) | 1,000 B | 900 B | +100 |",
        "| Arduino UNO Q | AddModel | RAM (static) | 100 B | 90 B | +10 |",
        "| Arduino Giga R1 | AddModel | flash (static) | 1,200 B | n/a | n/a |",
        "| Arduino Giga R1 | AddModel | RAM (static) | 120 B | n/a | n/a |",
    ]


def test_one_board_is_the_table_it_always_was() -> None:
    unlabelled = size_rows({"examples": [_entry("AddModel", 1000)]}, None)
    labelled = size_rows(_check_json(_entry("AddModel", 1000, "unoq")), None)
    committed = size_rows(_committed(_entry("AddModel", 1000)), None)
    assert [r.board for r in unlabelled + labelled + committed] == [None, None] + ["unoq"] * 4
    table = size_table(unlabelled, "This PR", "`main`")
    assert table[0] == "| Example | Size | This PR | `main` | Delta |"
    assert size_table(labelled, "This PR", "`main`") == table
    assert size_table(committed, "This PR", "`main`") == table
    # one board other than the UNO Q: its own table (CI's size job heads each board's)
    giga = size_rows(_check_json(_entry("AddModel", 1000, "giga"), boards=("giga",)), None)
    assert [r.board for r in giga] == ["giga", "giga"]
    assert size_table(giga, "This PR", "`main`") == table


def test_instructions_are_the_uno_qs_only() -> None:
    # INSTRUCTIONS_NOTE names the UNO Q's emulated Cortex-M33 (mps2-an505)
    new = _check_json(
        _entry("Kws", 1, "giga", count=9_000_000),
        _entry("Kws", 1, "unoq", count=10_000_000),
        boards=("giga", "unoq"),
    )
    rows = instruction_rows(new, _committed(_entry("Kws", 1, count=10_100_000)))
    assert rows == [SizeRow("Kws", INSTRUCTIONS, 10_000_000, 10_100_000)]
    only_giga = _check_json(_entry("Kws", 1, count=9_000_000), boards=("giga",))
    assert instruction_rows(only_giga, None) == []
    assert instruction_rows({"examples": [_entry("Kws", 1, count=5)]}, None)[0].value == 5


def _two_board_rows() -> list[SizeRow]:
    new = _check_json(
        _entry("AddModel", 1000, "unoq"), _entry("AddModel", 1200, "giga"), boards=("unoq", "giga")
    )
    return size_rows(new, _committed(_entry("AddModel", 900)))


def test_the_pull_request_body_shows_sizes_per_board() -> None:
    body = render_body(pull_facts(sizes=_two_board_rows(), base_has_report=True))
    assert "| Board | Example | Size | This PR | `main` | Delta |" in body
    assert "| Arduino UNO Q | AddModel | flash (static) | 1,000 B | 900 B | +100 |" in body
    assert "| Arduino Giga R1 | AddModel | flash (static) | 1,200 B | n/a | n/a |" in body


def test_the_release_notes_show_sizes_per_board() -> None:
    facts = release_facts(sizes=_two_board_rows(), has_report=True, previous_has_report=True)
    sizes = render_notes(facts).split("## Sizes\n\n")[1].split("\n\n")[0].splitlines()
    assert sizes == [
        "| Board | Example | Size | 1.5.1 | v1.5.0 | Delta |",
        "|---|---|---|---:|---:|---:|",
        "| Arduino UNO Q | AddModel | flash (static) | 1,000 B | 900 B | +100 |",
        "| Arduino UNO Q | AddModel | RAM (static) | 100 B | 90 B | +10 |",
        "| Arduino Giga R1 | AddModel | flash (static) | 1,200 B | n/a | n/a |",
        "| Arduino Giga R1 | AddModel | RAM (static) | 120 B | n/a | n/a |",
    ]
