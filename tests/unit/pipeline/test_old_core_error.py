"""The old cores' `#error` (src/executorch_board_check.h, `generator.pipeline.board_check`): on a
GCC older than 9 it names the board's arduino:zephyr board when it has one, the plain message
otherwise; a newer GCC passes.

The header is preprocessed by the host's g++ with the macros an old core's compile defines
(`-DARDUINO_ARCH_<ARCHITECTURE> -DARDUINO_<build.board>`, see `generator.boards.old_cores`) and
`-U__GNUC__ -D__GNUC__=7` standing in for the cores' GCC 7. The expected texts are written
out here, not derived from the table, so a wrong row fails.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from et_fixture import Upstream

from generator import data_dir
from generator.boards.old_cores import OLD_CORES, OldBoard, OldCore
from generator.pipeline import board_check
from generator.pipeline.board_check import (
    BOARD_CHECK,
    GENERIC_MESSAGE,
    board_check_header,
    board_guards,
)
from generator.pipeline.run import BuildOptions, build_library

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="needs the host's g++")

HEAD = "ExecuTorch needs GCC 9 or newer; this board's {core} core ships GCC 7; "


def advice(core: str, name: str, fqbn: str) -> str:
    return (
        HEAD.format(core=core)
        + f"install the arduino:zephyr core and select '{name}' ({fqbn}) instead."
    )


#: (the core's arch macro, the board's macro) -> the one message the compile must stop with.
MAPPED = {
    ("ARDUINO_ARCH_MBED_NANO", "ARDUINO_ARDUINO_NANO33BLE"): advice(
        "arduino:mbed_nano", "Arduino Nano 33 BLE", "arduino:zephyr:nano33ble"
    ),
    ("ARDUINO_ARCH_MBED_NANO", "ARDUINO_NANO_RP2040_CONNECT"): advice(
        "arduino:mbed_nano", "Arduino Nano RP2040 Connect", "arduino:zephyr:nano_connect"
    ),
    ("ARDUINO_ARCH_MBED_PORTENTA", "ARDUINO_PORTENTA_H7_M7"): advice(
        "arduino:mbed_portenta", "Arduino Portenta H7", "arduino:zephyr:portentah7"
    ),
    ("ARDUINO_ARCH_MBED_GIGA", "ARDUINO_GIGA"): advice(
        "arduino:mbed_giga", "Arduino Giga R1", "arduino:zephyr:giga"
    ),
    ("ARDUINO_ARCH_MBED_NICLA", "ARDUINO_NICLA_VISION"): advice(
        "arduino:mbed_nicla", "Arduino Nicla Vision", "arduino:zephyr:nicla_vision"
    ),
    ("ARDUINO_ARCH_MBED_NICLA", "ARDUINO_NICLA"): HEAD.format(core="arduino:mbed_nicla")
    + "on the Arduino Nicla Sense ME, install the arduino:zephyr core and select "
    "'Arduino Nicla Sense ME' (arduino:zephyr:nicla_sense) instead. The Arduino Nicla Voice, "
    "built with the same board macro, has no arduino:zephyr variant.",
    ("ARDUINO_ARCH_MBED_OPTA", "ARDUINO_OPTA"): advice(
        "arduino:mbed_opta", "Arduino Opta", "arduino:zephyr:opta"
    ),
    ("ARDUINO_ARCH_RENESAS_UNO", "ARDUINO_UNOWIFIR4"): advice(
        "arduino:renesas_uno", "Arduino UNO R4 WiFi", "arduino:zephyr:unor4wifi"
    ),
    ("ARDUINO_ARCH_RENESAS_PORTENTA", "ARDUINO_PORTENTA_C33"): advice(
        "arduino:renesas_portenta", "Arduino Portenta C33", "arduino:zephyr:portentac33"
    ),
}

PLAIN = (
    "ExecuTorch needs GCC 9 or newer; this board core's arm-none-eabi-gcc is older. "
    "Use a board whose core ships a newer toolchain."
)

#: Compiles of old cores whose board has no arduino:zephyr board: the plain message.
UNMAPPED = [
    ("ARDUINO_ARCH_SAMD", "ARDUINO_SAMD_NANO_33_IOT"),
    ("ARDUINO_ARCH_SAMD", "ARDUINO_SAMD_MKRWIFI1010"),
    ("ARDUINO_ARCH_SAMD", "ARDUINO_SAMD_ZERO"),
    ("ARDUINO_ARCH_RENESAS_UNO", "ARDUINO_MINIMA"),
    ("ARDUINO_ARCH_RENESAS_UNO", "ARDUINO_nanor4"),
    # the Portenta H7's M4 co-processor (target_core=cm4): arduino:zephyr builds its M7
    ("ARDUINO_ARCH_MBED_PORTENTA", "ARDUINO_GENERIC_STM32H747_M4"),
    ("ARDUINO_ARCH_MBED_PORTENTA", "ARDUINO_PORTENTA_X8"),
    ("ARDUINO_ARCH_MBED_RP2040", "ARDUINO_RASPBERRY_PI_PICO"),
    ("ARDUINO_ARCH_MBED_EDGE", "ARDUINO_EDGE_CONTROL"),
    # a board macro under another core's arch macro is not that board
    ("ARDUINO_ARCH_MBED_NANO", "ARDUINO_UNOWIFIR4"),
]


def preprocess(header: Path, *flags: str) -> tuple[int, list[str]]:
    """g++ -E of `header` with `flags`: its exit code and the text of every `#error`."""
    run = subprocess.run(
        ["g++", "-E", "-x", "c++", *flags, str(header), "-o", "/dev/null"],
        capture_output=True,
        text=True,
        check=False,
    )
    return run.returncode, re.findall(r'error: #error "([^"\n]*)"', run.stderr)


GCC7 = ("-U__GNUC__", "-D__GNUC__=7")


@pytest.fixture(scope="module")
def header(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("board-check") / "executorch_board_check.h"
    path.write_text(board_check_header(), encoding="utf-8")
    return path


@needs_gxx
@pytest.mark.parametrize(("arch", "board"), sorted(MAPPED))
def test_gcc7_names_the_boards_zephyr_variant(header: Path, arch: str, board: str) -> None:
    code, errors = preprocess(header, *GCC7, f"-D{arch}", f"-D{board}")
    assert code != 0
    assert errors == [MAPPED[arch, board]]


@needs_gxx
@pytest.mark.parametrize(("arch", "board"), UNMAPPED)
def test_gcc7_without_a_zephyr_variant_gets_the_plain_message(
    header: Path, arch: str, board: str
) -> None:
    code, errors = preprocess(header, *GCC7, f"-D{arch}", f"-D{board}")
    assert code != 0
    assert errors == [PLAIN]


@needs_gxx
def test_gcc7_without_board_macros_gets_the_plain_message(header: Path) -> None:
    assert preprocess(header, *GCC7) == (1, [PLAIN])
    assert preprocess(header, "-U__GNUC__", "-D__GNUC__=8") == (1, [PLAIN])


@needs_gxx
@pytest.mark.parametrize(
    "gcc",
    [
        (),  # the host's own GCC (12 on the CI image)
        ("-U__GNUC__", "-D__GNUC__=12"),
        ("-U__GNUC__", "-D__GNUC__=9"),
        # clang sets __GNUC__ to 4 and compiles the runtime
        ("-U__GNUC__", "-D__GNUC__=4", "-D__clang__=1"),
    ],
)
def test_gcc9_and_newer_pass(header: Path, gcc: tuple[str, ...]) -> None:
    for arch, board in [*MAPPED, *UNMAPPED]:
        assert preprocess(header, *gcc, f"-D{arch}", f"-D{board}") == (0, [])


@needs_gxx
def test_executorch_h_includes_the_check(header: Path) -> None:
    # ExecuTorch.h as the template has it, beside the rendered header; the runtime's headers
    # are absent, so the compile stops at the first of them, after the #error.
    src = data_dir("library_template") / "src"
    code, errors = preprocess(
        src / "ExecuTorch.h",
        f"-iquote{header.parent}",
        *GCC7,
        "-DARDUINO_ARCH_MBED_NANO",
        "-DARDUINO_ARDUINO_NANO33BLE",
    )
    assert code != 0
    assert errors == [MAPPED["ARDUINO_ARCH_MBED_NANO", "ARDUINO_ARDUINO_NANO33BLE"]]


def test_one_guard_per_mapped_board_macro() -> None:
    assert {(g.arch_macro, g.board_macro) for g in board_guards()} == set(MAPPED)
    assert GENERIC_MESSAGE == PLAIN
    nicla = next(g for g in board_guards() if g.board_macro == "ARDUINO_NICLA")
    assert nicla.fqbns == ("arduino:mbed_nicla:nicla_sense", "arduino:mbed_nicla:nicla_voice")
    portenta = next(g for g in board_guards() if g.board_macro == "ARDUINO_PORTENTA_H7_M7")
    assert portenta.fqbns == ("arduino:mbed_portenta:envie_m7:target_core=cm7",)


def test_header_has_one_error_line_per_guard_and_the_plain_one() -> None:
    text = board_check_header()
    errors = [line for line in text.splitlines() if line.startswith("#error ")]
    assert len(errors) == len(MAPPED) + 1
    assert errors[-1] == f'#error "{PLAIN}"'


def test_an_unknown_zephyr_key_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    bad = OldCore("arduino", "mbed_nano", "7-2017q4",
                  (OldBoard("nano33ble", "Arduino Nano 33 BLE", "ARDUINO_NANO33BLE", "nano33"),),
                  "test")  # fmt: skip
    monkeypatch.setattr(board_check, "OLD_CORES", (bad,))
    with pytest.raises(
        ValueError, match="'nano33', which generator/boards/budgets.py ZEPHYR_BOARDS"
    ):
        board_guards()


def test_a_build_board_that_is_no_macro_name_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    row = OLD_CORES[1].boards[1]
    assert row.board_id == "nano33ble"
    bad = replace(OLD_CORES[1], boards=(replace(row, build_board="NANO-33"),))
    monkeypatch.setattr(board_check, "OLD_CORES", (bad,))
    with pytest.raises(ValueError, match="'ARDUINO_NANO-33' is not a C macro name"):
        board_guards()


def test_the_build_writes_the_header(tmp_path: Path, upstream: Upstream) -> None:
    build_library(BuildOptions(cache_dir=tmp_path / "cache"), tmp_path / "ExecuTorch")
    written = (tmp_path / "ExecuTorch" / BOARD_CHECK).read_text(encoding="utf-8")
    assert written == board_check_header()
    executorch_h = (tmp_path / "ExecuTorch/src/ExecuTorch.h").read_text(encoding="utf-8")
    assert '#include "executorch_board_check.h"\n' in executorch_h
