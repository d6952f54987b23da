"""Stage 5: the method arena, as measured in the emulated (32-bit, like the board) run.

A sketch with `arena: true` in its expected.yaml prints, after running its method,
`Arena: used <N> of <M> bytes` (N: bytes its ETModel arena handed out, alignment
included; M: the arena's size). When the arena is smaller than the method needs, loading
fails with MemoryAllocationFailed (0x21) and the sketch prints an `ERROR:` line instead
(ETModel: "load_method failed (0x21): the 8192-byte arena is too small", or "arena too
small: <n> bytes for the <what>, <used> of <size> used").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from generator.check.expected import Expected
from generator.check.run import RunOutput
from generator.check.stages import StageResult, Status

_ARENA = re.compile(r"Arena: used (\d+) of (\d+) bytes")
_TOO_SMALL = re.compile(r"arena (is )?too small|\(0x21\)|MemoryAllocationFailed", re.IGNORECASE)
_SIZE_IN_ERROR = re.compile(r"the (\d+)-byte arena|of (\d+) used")


@dataclass(frozen=True)
class ArenaFigures:
    """The arena of one example, bytes: `size` provided by the sketch, `used` by the method."""

    used: int
    size: int

    @property
    def headroom(self) -> int:
        """Bytes left over (negative if the method needed more)."""
        return self.size - self.used

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"used_bytes": self.used, "size_bytes": self.size, "headroom_bytes": self.headroom}


def parse_arena(lines: list[str]) -> ArenaFigures | None:
    """The last `Arena: used N of M bytes` line of the output, or None."""
    found = None
    for line in lines:
        m = _ARENA.search(line)
        if m:
            found = ArenaFigures(int(m.group(1)), int(m.group(2)))
    return found


def arena_stage(
    out: RunOutput | None, expected: Expected
) -> tuple[StageResult, ArenaFigures | None]:
    """Stage 5's verdict and figures from the emulated run `out` (None: not run)."""
    if not expected.arena:
        return StageResult("arena", Status.SKIP, "this sketch does not report an arena"), None
    if out is None:
        return StageResult("arena", Status.SKIP, "not run"), None
    figures = parse_arena(out.lines)
    too_small = next((line for line in out.lines if _TOO_SMALL.search(line)), None)
    if too_small is not None:
        m = _SIZE_IN_ERROR.search(too_small)
        known = figures.size if figures else int(m.group(1) or m.group(2)) if m else None
        size = f" of {known:,} bytes" if known is not None else ""
        return (
            StageResult(
                "arena",
                Status.FAIL,
                f"the sketch's arena{size} is smaller than the method needs "
                "(MemoryAllocationFailed, 0x21): enlarge it",
                too_small,
            ),
            figures,
        )
    if figures is None:
        return (
            StageResult(
                "arena",
                Status.FAIL,
                "the sketch printed no 'Arena: used N of M bytes' line",
                "\n".join(out.lines[-10:]),
            ),
            None,
        )
    if figures.used > figures.size:
        return (
            StageResult(
                "arena",
                Status.FAIL,
                f"used {figures.used:,} bytes of an arena of {figures.size:,}",
            ),
            figures,
        )
    percent = figures.used * 100 // figures.size if figures.size else 0
    return (
        StageResult(
            "arena",
            Status.PASS,
            f"used {figures.used:,} of {figures.size:,} bytes ({percent}%), "
            f"headroom {figures.headroom:,} bytes",
        ),
        figures,
    )
