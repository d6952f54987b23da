"""How fast one inference is, measured without a board: instructions on the emulated Cortex-M33.

The emulated runs (`run.py`, kinds "emulated" and "dynamic") boot QEMU with `-icount shift=0`
(`run.QEMU_ICOUNT`): QEMU then advances its virtual clock by 2**0 = 1 ns per instruction it
executes, so the clock the emulated core's `micros()` reads counts instructions, whatever the
host's speed or load (QEMU's `qemu-options.hx`, `-icount`: "the virtual CPU will execute one
instruction every 2^N ns of virtual time"). The core's SysTick divides QEMU's 20 MHz system
clock (`SYSCLK_HZ` in data/emulated_core/board/mps2_an505.c, `sysclk_frq` of the mps2-an505 machine
in QEMU's hw/arm/mps2-tz.c), so `micros()` is exact microseconds of virtual time.

A sketch prints, after each `ETModel::run()`, the line `Inference: <N> us` (N =
`ETModel::lastRunMicros()`, the examples of `data/library_template/examples/`). Each microsecond is
1,000 instructions: the figure is N * 1,000, to within 1,000 instructions (`micros()` is read
truncated to whole microseconds at both ends of the run). Instructions, not cycles: a board's
time for them also depends on its clock, its flash wait states and how many cycles each
instruction takes; the count is what compares one library (or model) with another.

The figure of a run is its last such line (the steady state, if a sketch runs the model more
than once); the smallest and largest are kept too, so a first run that differs shows. A sketch
that prints no such line has no figure (None), not 0.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: The line a sketch prints after each inference (the examples' agreed form; nothing else on
#: the line, so an `ET| ...` log line or a sketch's own wording in milliseconds is not read).
INFERENCE_LINE = re.compile(r"^Inference: (\d+) us$")
#: Instructions per microsecond of virtual time under `-icount shift=0` (2**0 ns each).
INSTRUCTIONS_PER_MICROSECOND = 1000
#: How close the count is: `micros()` is whole microseconds.
RESOLUTION_INSTRUCTIONS = INSTRUCTIONS_PER_MICROSECOND


@dataclass(frozen=True)
class InferenceTiming:
    """The `Inference: N us` lines of one emulated run.

    Attributes:
        kind: the run it was read from ("emulated" or "dynamic", `run.EMULATED_KINDS`).
        micros: N of every such line, in the order printed (at least one).
    """

    kind: str
    micros: tuple[int, ...]

    @property
    def inference_us(self) -> int:
        """The run's figure: microseconds of virtual time of its last inference."""
        return self.micros[-1]

    @property
    def instructions(self) -> int:
        """Instructions of the last inference (to within `RESOLUTION_INSTRUCTIONS`)."""
        return self.inference_us * INSTRUCTIONS_PER_MICROSECOND

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the figure, the microseconds printed and how many lines there were."""
        return {
            "instructions_per_inference": self.instructions,
            "inference_us": self.inference_us,
            "inferences": len(self.micros),
            "inference_us_min": min(self.micros),
            "inference_us_max": max(self.micros),
            "resolution_instructions": RESOLUTION_INSTRUCTIONS,
        }


def parse_inferences(lines: Sequence[str], kind: str) -> InferenceTiming | None:
    """The `Inference: N us` lines of a run's output `lines` (trailing blanks ignored), or None
    when there is none (the sketch does not print it, or the run ended before it)."""
    found = tuple(int(m.group(1)) for line in lines if (m := INFERENCE_LINE.match(line.rstrip())))
    return InferenceTiming(kind, found) if found else None
