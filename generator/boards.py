"""Board budgets: the one table of what a target offers a sketch.

Source of the UNO Q figures: arduino-cli's size report for
`arduino:zephyr:unoq:link_mode=static` ("Sketch uses ... of 786432 bytes", "Global
variables use ... of 262144 bytes"); the MCU is an STM32U585 (Cortex-M33 with FPU).
The RAM ceiling depends on the core release (the core's `boards.txt` says
`upload.maximum_data_size` is generated into `boards.local.txt` when the core is built, so
no source file states it): 131,072 for 0.55.0 (`board details`/compile output in
weimingtom/wmt_arduino_uno_q_study README.md) and 0.55.2 (meta-pytorch/executorch-arduino
CHANGELOG [0.2.0]); 262,144 for 0.56.0 (arduino/ArduinoCore-zephyr issue #542, a compile
log) and 0.90.0 (the same CHANGELOG: "0.90.0 reports double that"). Flash is 786,432 in
0.55.0 and 0.56.0 (the same two outputs); for the other two it was not read.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Board:
    """A target board.

    Attributes:
        name: human name.
        fqbn: arduino-cli fully qualified board name, link mode included.
        flash_bytes: flash available to the sketch, bytes.
        ram_bytes: RAM available to the sketch's globals, bytes.
        cpu_flags: GCC flags selecting the CPU and FPU.
    """

    name: str
    fqbn: str
    flash_bytes: int
    ram_bytes: int
    cpu_flags: tuple[str, ...]


UNO_Q = Board(
    name="Arduino UNO Q",
    fqbn="arduino:zephyr:unoq:link_mode=static",
    flash_bytes=786_432,
    ram_bytes=262_144,
    cpu_flags=("-mcpu=cortex-m33", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16"),
)

BOARDS: dict[str, Board] = {"unoq": UNO_Q}
