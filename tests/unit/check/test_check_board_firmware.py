"""The emulated firmware (and the Dynamic link's objects) of `check --board KEY` is compiled for
that board: its CPU flags and its emulator's board half, whichever `--compiler` built the
example (the UNO Q's toolchain was used for every board before; CI's nightly matrix checks
every board with arduino-cli)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import generator.check.run as check_command
from generator.boards.budgets import UNO_Q, check_boards
from generator.check.backends import GCC_ARM, ArduinoCli, GccToolchain, select_toolchain
from generator.check.compile import CompileResult
from generator.check.stages import StageResult, Status


class _Build:
    ok, binary, size_report, line, log, objects = True, None, None, None, "", ()


def _compiles(
    board_key: str, compiler: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> list[Any]:
    """The toolchains `_check_example` compiles the example with (no run, stubs for the
    compiles and the later stages)."""
    board = UNO_Q if board_key == "unoq" else check_boards()[board_key]
    seen: list[Any] = []

    def compile_example(
        toolchain: Any, plan: Any, out: Path, cache: Any, refusal: str | None = None
    ) -> CompileResult:
        seen.append(toolchain)
        return CompileResult(StageResult("compile", Status.PASS, ""), _Build(), {})  # type: ignore[arg-type]

    monkeypatch.setattr(check_command, "compile_example", compile_example)
    monkeypatch.setattr(
        check_command,
        "plan_build",
        lambda library, name: type(
            "P", (), {"sketch_dir": "x", "library": library, "example": name}
        )(),
    )
    monkeypatch.setattr(check_command, "read_expected", lambda folder: None)
    monkeypatch.setattr(ArduinoCli, "missing", lambda self: None)
    toolchain = select_toolchain(compiler, board)
    check_command._check_example(tmp_path, "AddModel", toolchain, board, False, None, tmp_path)  # type: ignore[arg-type]
    return seen


def test_another_boards_firmware_is_its_own_with_arduino_cli(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    example, firmware = _compiles("giga", "arduino-cli", monkeypatch, tmp_path)
    assert isinstance(example, ArduinoCli) and example.board.key == "giga"
    assert isinstance(firmware, GccToolchain) and firmware is not GCC_ARM
    assert firmware.common[0] == "-mcpu=cortex-m7"
    assert [s.name for s in firmware.variant_sources][1] == "mps2_an500.c"


def test_with_gcc_arm_the_boards_build_is_the_firmware(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (only,) = _compiles("nano33ble", "gcc-arm", monkeypatch, tmp_path)
    assert only.common[0] == "-mcpu=cortex-m4"
    assert [s.name for s in only.variant_sources][1] == "mps2_an386.c"


def test_the_uno_qs_firmware_is_gcc_arm_as_before(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    example, firmware = _compiles("unoq", "arduino-cli", monkeypatch, tmp_path)
    assert isinstance(example, ArduinoCli) and firmware is GCC_ARM
    assert _compiles("unoq", "gcc-arm", monkeypatch, tmp_path) == [GCC_ARM]
