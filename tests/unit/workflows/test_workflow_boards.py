"""The CI matrix's boards come from the one board table (`generator.boards.budgets.BOARDS`,
rendered as
`@@BOARDS@@` by `generator.workflows.render`), and `check --board KEY` compiles for the board of
that
key."""

from __future__ import annotations

import argparse
import dataclasses
import difflib
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.boards import budgets as boards
from generator.boards.budgets import UNO_Q, board_keys, check_boards
from generator.check import backends as toolchains
from generator.check.backends import GCC_ARM, ArduinoCli, select_toolchain
from generator.cli.main import build_parser
from generator.workflows import render as wf

REPO = "https://github.com/example/executorch-arduino-generator.git"
SHA = "0123456789abcdef0123456789abcdef01234567"
#: A second board, as a maintainer would add it: one entry in the table.
NANO = dataclasses.replace(
    UNO_Q, name="Arduino Nano X", fqbn="arduino:zephyr:nanox:link_mode=static"
)
TEMPLATE = """\
# generator @@GENERATOR_REPO@@ at @@GENERATOR_REF@@
name: CI
on: push
jobs:
  example:
    runs-on: ubuntu-24.04
    strategy:
      matrix:
        board: @@BOARDS@@
        example: ["A", "B"]
    steps:
      - run: python -m generator check . --board "$BOARD"
        env:
          BOARD: ${{ matrix.board }}
"""


def _changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="")
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def test_the_matrix_is_the_board_table_and_a_second_board_changes_only_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ci.yml").write_text(TEMPLATE)
    monkeypatch.setattr(wf, "TEMPLATES_DIR", tmp_path)
    one = wf.render_workflows(REPO, SHA)["ci.yml"]
    assert yaml.safe_load(one)["jobs"]["example"]["strategy"]["matrix"]["board"] == ["unoq"]
    assert '        board: ["unoq"]\n' in one

    monkeypatch.setitem(boards.BOARDS, "nano-x", NANO)
    two = wf.render_workflows(REPO, SHA)["ci.yml"]
    matrix = yaml.safe_load(two)["jobs"]["example"]["strategy"]["matrix"]
    assert matrix == {"board": ["unoq", "nano-x"], "example": ["A", "B"]}
    assert _changed_lines(one, two) == [
        '-        board: ["unoq"]',
        '+        board: ["unoq", "nano-x"]',
    ]


def test_in_the_real_templates_a_second_board_changes_only_the_board_lists(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    one = wf.render_workflows(REPO, SHA)
    monkeypatch.setitem(boards.BOARDS, "nano-x", NANO)
    two = wf.render_workflows(REPO, SHA)
    users = {t.name for t in wf.TEMPLATES_DIR.glob("*.yml") if "@@BOARDS@@" in t.read_text()}
    assert {name for name in one if one[name] != two[name]} == users
    for name in users:
        changed = _changed_lines(one[name], two[name])
        assert changed, name
        removed = [line for line in changed if line.startswith("-")]
        added = [line for line in changed if line.startswith("+")]
        assert len(removed) == len(added), name
        for old, new in zip(removed, added, strict=True):
            expected = old[1:].replace('["unoq"]', '["unoq", "nano-x"]')
            if expected == old[1:]:  # the full list (`check_boards()`): BOARDS' keys last
                expected = old[1:].replace('"]', '", "nano-x"]')
            assert expected == new[1:], name


@pytest.mark.parametrize("key", ["UnoQ", "uno q", 'x"y', "-x", "", "a\nb", "ü", "a:b", "${{x}}"])
def test_a_board_key_that_is_not_plain_is_a_table_bug(
    key: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "ci.yml").write_text(TEMPLATE)
    monkeypatch.setattr(wf, "TEMPLATES_DIR", tmp_path)
    monkeypatch.setitem(boards.BOARDS, key, NANO)
    with pytest.raises(ValueError, match="board keys"):
        wf.render_workflows(REPO, SHA)


def test_an_empty_board_table_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        wf.board_matrix({})
    assert wf.board_matrix({"unoq": UNO_Q, "a_1-b": NANO}) == '["unoq", "a_1-b"]'


# --- check --board ---------------------------------------------------------------------------


def test_check_board_defaults_to_unoq_and_takes_only_table_keys(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = build_parser()
    # None is the UNO Q (`board_keys`); a list option since --board takes several boards.
    assert parser.parse_args(["check", "lib"]).board is None
    assert board_keys(None, check_boards()) == ["unoq"]
    assert parser.parse_args(["check", "lib", "--board", "unoq"]).board == ["unoq"]
    both = parser.parse_args(["check", "lib", "--board", "unoq,giga", "--board", "unoq"])
    assert both.board == ["unoq", "giga"]
    every = board_keys(parser.parse_args(["check", "lib", "--board", "all"]).board, check_boards())
    assert every == list(check_boards()) and "unor4wifi" in every
    with pytest.raises(SystemExit) as exit_info:
        parser.parse_args(["check", "lib", "--board", "nano-x"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'nano-x'" in capsys.readouterr().err


def test_the_default_board_selects_the_table_objects() -> None:
    assert select_toolchain("gcc-arm") is GCC_ARM
    assert select_toolchain("gcc-arm", UNO_Q) is GCC_ARM


def test_another_board_is_compiled_with_its_fqbn_and_cpu_flags(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ArduinoCli, "missing", lambda self: None)
    chosen = select_toolchain("arduino-cli", NANO)
    assert isinstance(chosen, ArduinoCli) and chosen.board.fqbn == NANO.fqbn
    assert select_toolchain("arduino-cli").board is UNO_Q  # type: ignore[attr-defined]
    auto = select_toolchain("auto", NANO)
    assert isinstance(auto, ArduinoCli) and auto.board is NANO
    m4 = dataclasses.replace(NANO, cpu_flags=("-mcpu=cortex-m4", "-mthumb"))
    gcc = select_toolchain("gcc-arm", m4)
    assert gcc is not GCC_ARM and isinstance(gcc, toolchains.GccToolchain)
    assert gcc.common[:2] == ("-mcpu=cortex-m4", "-mthumb")


def test_check_passes_the_board_of_its_key_to_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import generator.check.run as check_run
    from generator.cli import check as check_command

    seen: dict[str, Any] = {}

    class Stop(Exception):
        pass

    def fake_run_check(library: Path, **kwargs: Any) -> Any:
        seen.update(kwargs)
        raise Stop

    monkeypatch.setattr(check_run, "run_check", fake_run_check)
    monkeypatch.setattr(check_command, "lint_library", lambda library: None)
    monkeypatch.setitem(boards.BOARDS, "nano-x", NANO)
    args = build_parser().parse_args(["check", str(tmp_path), "--board", "nano-x"])
    with pytest.raises(Stop):
        check_command.run(args)
    assert seen["board"] is NANO
    args = argparse.Namespace(**{**vars(args), "board": ["unoq"]})
    with pytest.raises(Stop):
        check_command.run(args)
    assert seen["board"] is UNO_Q
