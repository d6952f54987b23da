"""Stage 3: sizes of the static link, like arduino-cli's report.

arduino-cli reports "Sketch uses <text+data> bytes (<p>%) of program storage space" and
"Global variables use <data+bss> bytes (<p>%) of dynamic memory", percent as an integer
(size * 100 // maximum). The UNO Q's maxima are in `generator.boards.budgets`.

The Dynamic link (`link_mode=dynamic`, a loadable extension) is its own stage:
`dynamic.py`; its figures are `DynamicSizes`, here so that the report needs no toolchain.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.boards.budgets import Board
from generator.check.stages import StageResult, Status, misfit_status
from generator.util.errors import FatalError

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
class CoreVerdict:
    """What one core's loader does with an example's Dynamic upload file.

    Attributes:
        core: the core version (`cores.CoreFacts.version`); pinned: the core the check
            judges (`cores.PINNED_CORE`).
        loaded: True when the loader accepts it; heap_bytes: that core's LLEXT heap;
        peak_bytes: heap bytes the load takes at its peak (None when it fails before the
        heap is the question); errno: the error (positive; 0 when loaded); log: the
        loader's log lines on the board's UART; short_branches: short-branch relocations
        to symbols outside the extension (the firmware's).
    """

    core: str
    pinned: bool
    loaded: bool
    heap_bytes: int
    peak_bytes: int | None
    errno: int = 0
    log: tuple[str, ...] = ()
    short_branches: int = 0

    @property
    def free_percent(self) -> int | None:
        """Heap left at the peak, integer percent (None when unknown)."""
        if self.peak_bytes is None:
            return None
        return (self.heap_bytes - self.peak_bytes) * 100 // self.heap_bytes

    def summary(self) -> str:
        """One line: `core 0.55.1: loads, 80,000 B of the 128 KiB heap (38% free)`."""
        heap = f"{self.heap_bytes // 1024} KiB heap"
        need = f"{self.peak_bytes:,} B of the {heap}" if self.peak_bytes is not None else heap
        if self.loaded:
            return f"core {self.core}: loads, {need} ({self.free_percent}% free)"
        if self.errno == 0:
            return f"core {self.core}: {self.log[0] if self.log else 'not linked'}"
        first = next(
            (line for line in self.log if "Failed to" not in line and "Could not" not in line),
            self.log[-1] if self.log else "",
        )
        over = ""
        if self.errno == 12 and self.peak_bytes is not None:
            over = f", {self.peak_bytes - self.heap_bytes:,} B over"
        return f"core {self.core}: refused, rc -{self.errno} ({first}); needs {need}{over}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "core": self.core,
            "pinned": self.pinned,
            "loaded": self.loaded,
            "heap_bytes": self.heap_bytes,
            "peak_bytes": self.peak_bytes,
            "errno": self.errno,
            "log": list(self.log),
            "short_branches": self.short_branches,
        }


@dataclass(frozen=True)
class DynamicSizes:
    """What a Dynamic link gives, bytes.

    Attributes:
        flash: the upload file (the stripped ELF, zephyr-sketch-tool's header inside its
            `e_ident`): what the board's flash holds and
            what arduino-cli reports as "Sketch uses".
        ram: the LLEXT heap the pinned core's loader takes at its peak (`llext.py`'s
            measure: every region it copies, metadata, chunk headers and alignment).
        flash_max: the board's flash budget.
        verdicts: one per core of `cores.py`, oldest first.
    """

    flash: int
    ram: int
    flash_max: int = 0
    verdicts: tuple[CoreVerdict, ...] = ()

    @property
    def overflow(self) -> int:
        """Bytes over the flash budget (0 when it fits)."""
        return max(self.flash - self.flash_max, 0)

    @property
    def pinned(self) -> CoreVerdict | None:
        """The pinned core's verdict."""
        return next((v for v in self.verdicts if v.pinned), None)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (bytes)."""
        return {
            "flash_bytes": self.flash,
            "ram_bytes": self.ram,
            "flash_max_bytes": self.flash_max,
            "verdicts": [v.to_dict() for v in self.verdicts],
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
    """Stage 3's verdict: "does not fit" (`stages.misfit_status`: a failure on the UNO Q)
    when the firmware's flash or RAM is over the board's budgets (`overflow`: the linker's
    region -> bytes over, when the link itself overflowed and `sizes` is None)."""
    if sizes is None:
        if overflow:
            what = ", ".join(f"{r} by {n:,} bytes" for r, n in overflow.items())
            return StageResult("sizes", misfit_status(board), f"does not fit {board.name}: {what}")
        return StageResult("sizes", Status.SKIP, "no firmware to measure")
    summary = (
        f"flash {sizes.flash:,} B ({sizes.flash_percent}% of {sizes.flash_max:,}), "
        f"RAM {sizes.ram:,} B ({sizes.ram_percent}% of {sizes.ram_max:,})"
    )
    if sizes.flash > sizes.flash_max or sizes.ram > sizes.ram_max:
        return StageResult("sizes", misfit_status(board), f"does not fit {board.name}: {summary}")
    return StageResult("sizes", Status.PASS, summary)
