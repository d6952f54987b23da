"""Stage 3: sizes, like arduino-cli's report, plus what a Dynamic link would keep.

arduino-cli reports "Sketch uses <text+data> bytes (<p>%) of program storage space" and
"Global variables use <data+bss> bytes (<p>%) of dynamic memory", percent as an integer
(size * 100 // maximum). The UNO Q's maxima are in `generator.boards`.

In `link_mode=dynamic` the sketch is a relocatable object loaded at run time: nothing is
garbage-collected, so its size is that of `ld -r` over the sketch and library objects
(not the core, which the board's firmware provides).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.boards import Board
from generator.check.stages import StageResult, Status
from generator.errors import FatalError

SIZE_TOOL = "arm-none-eabi-size"
LD_TOOL = "arm-none-eabi-ld"


@dataclass(frozen=True)
class Sizes:
    """A firmware's sizes, bytes.

    Attributes:
        flash: text + data (what the board's flash must hold).
        ram: data + bss (the globals).
        flash_max, ram_max: the board's budgets.
        text, data, bss: the sections (None when only totals are known, e.g. arduino-cli).
    """

    flash: int
    ram: int
    flash_max: int
    ram_max: int
    text: int | None = None
    data: int | None = None
    bss: int | None = None

    @property
    def flash_percent(self) -> int:
        """Flash used, integer percent of the budget (as arduino-cli prints it)."""
        return self.flash * 100 // self.flash_max

    @property
    def ram_percent(self) -> int:
        """RAM used by globals, integer percent of the budget."""
        return self.ram * 100 // self.ram_max

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (bytes and percents)."""
        return {
            "flash_bytes": self.flash,
            "flash_max_bytes": self.flash_max,
            "flash_percent": self.flash_percent,
            "ram_bytes": self.ram,
            "ram_max_bytes": self.ram_max,
            "ram_percent": self.ram_percent,
            "text": self.text,
            "data": self.data,
            "bss": self.bss,
        }


@dataclass(frozen=True)
class DynamicSizes:
    """What a Dynamic (relocatable, `-r`) link keeps, bytes.

    Attributes:
        flash: text + data; ram: data + bss.
    """

    flash: int
    ram: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"flash_bytes": self.flash, "ram_bytes": self.ram}


def _berkeley(path: Path) -> tuple[int, int, int]:
    proc = subprocess.run([SIZE_TOOL, str(path)], capture_output=True, text=True, check=False)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or len(lines) < 2:
        raise FatalError(f"{SIZE_TOOL} {path} failed: {proc.stderr.strip()}")
    text, data, bss = (int(x) for x in lines[1].split()[:3])
    return text, data, bss


def measure_elf(elf: Path, board: Board) -> Sizes:
    """Sizes of a linked firmware ELF.

    Raises:
        FatalError: arm-none-eabi-size is missing or cannot read the file.
    """
    text, data, bss = _berkeley(elf)
    return Sizes(text + data, data + bss, board.flash_bytes, board.ram_bytes, text, data, bss)


_SKETCH_USES = re.compile(r"Sketch uses (\d+) bytes")
_GLOBALS_USE = re.compile(r"Global variables use (\d+) bytes")


def parse_arduino_cli(report: str, board: Board) -> Sizes | None:
    """Sizes from arduino-cli's compile output, or None when it printed none."""
    flash = _SKETCH_USES.search(report)
    ram = _GLOBALS_USE.search(report)
    if not flash or not ram:
        return None
    return Sizes(int(flash.group(1)), int(ram.group(1)), board.flash_bytes, board.ram_bytes)


def dynamic_link(objects: list[Path], out: Path) -> DynamicSizes:
    """Link `objects` relocatably (`ld -r`, nothing stripped) into `out` and measure it.

    Raises:
        FatalError: the link fails (e.g. arm-none-eabi-ld missing).
    """
    proc = subprocess.run(
        [LD_TOOL, "-r", "-o", str(out), *(str(o) for o in objects)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise FatalError(f"relocatable link failed: {proc.stderr.strip()[-2000:]}")
    text, data, bss = _berkeley(out)
    return DynamicSizes(text + data, data + bss)


def sizes_stage(sizes: Sizes | None, overflow: dict[str, int], board: Board) -> StageResult:
    """Stage 3's verdict: fail when the firmware does not fit the board's budgets."""
    if sizes is None:
        if overflow:
            what = ", ".join(f"{r} by {n:,} bytes" for r, n in overflow.items())
            return StageResult("sizes", Status.FAIL, f"does not fit {board.name}: {what}")
        return StageResult("sizes", Status.SKIP, "no firmware to measure")
    summary = (
        f"flash {sizes.flash:,} B ({sizes.flash_percent}% of {sizes.flash_max:,}), "
        f"RAM {sizes.ram:,} B ({sizes.ram_percent}% of {sizes.ram_max:,})"
    )
    if sizes.flash > sizes.flash_max or sizes.ram > sizes.ram_max:
        return StageResult("sizes", Status.FAIL, "too big: " + summary)
    return StageResult("sizes", Status.PASS, summary)
