"""Stage 3: sizes of the static link, like arduino-cli's report.

arduino-cli reports "Sketch uses <text+data> bytes (<p>%) of program storage space" and
"Global variables use <data+bss> bytes (<p>%) of dynamic memory", percent as an integer
(size * 100 // maximum). The UNO Q's maxima are in `generator.boards`.

The Dynamic link (`link_mode=dynamic`, a loadable extension) is its own stage:
`dynamic.py`; its figures are `DynamicSizes`, here so that the report needs no toolchain.
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
    """What a Dynamic link gives, bytes.

    Attributes:
        flash: the upload file (stripped ELF + header): what the board's flash holds and
            what arduino-cli reports as "Sketch uses".
        ram: the LLEXT heap the loaded extension takes (every allocated section).
        flash_max: the board's flash budget.
        text, rodata, data, bss: the extension's sections (init/fini arrays and the export
            table are in `ram` only).
    """

    flash: int
    ram: int
    flash_max: int = 0
    text: int = 0
    rodata: int = 0
    data: int = 0
    bss: int = 0

    @property
    def overflow(self) -> int:
        """Bytes over the flash budget (0 when it fits)."""
        return max(self.flash - self.flash_max, 0)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (bytes)."""
        return {
            "flash_bytes": self.flash,
            "ram_bytes": self.ram,
            "flash_max_bytes": self.flash_max,
            "text": self.text,
            "rodata": self.rodata,
            "data": self.data,
            "bss": self.bss,
        }


def _berkeley(path: Path) -> tuple[int, int, int]:
    proc = subprocess.run([SIZE_TOOL, str(path)], capture_output=True, text=True, check=False)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or len(lines) < 2:
        raise FatalError(f"{SIZE_TOOL} {path} failed: {proc.stderr.strip()}")
    text, data, bss = (int(x) for x in lines[1].split()[:3])
    return text, data, bss


def size_elf(binary: Path) -> Path:
    """Where a toolchain's size link of `binary` goes (`GccToolchain.size_link`):
    `<stem>_size.elf` beside it."""
    return binary.with_name(f"{binary.stem}_size.elf")


def measure_elf(elf: Path, board: Board) -> Sizes:
    """Sizes of a linked firmware ELF, bytes: of its size link (`size_elf(elf)`, the link
    that takes the C library functions from the board's firmware, as the board's static
    link does: `firmware_symbols.py`) when the build made one, else of `elf` itself.

    Raises:
        FatalError: arm-none-eabi-size is missing or cannot read the file.
    """
    sized = size_elf(elf)
    text, data, bss = _berkeley(sized if sized.is_file() else elf)
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
