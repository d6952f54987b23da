"""Stage 5: the method arena, as measured in the emulated (32-bit, like the board) run.

A sketch with `arena: true` in its expected.yaml prints, after running its method,
`Arena: used <N> of <M> bytes` (N: bytes its ETModel arena handed out, alignment
included; M: the arena's size). When the arena is smaller than the method needs, loading
fails with MemoryAllocationFailed (0x21) and the sketch prints an `ERROR:` line instead
(ETModel: "load_method failed (0x21): the 8192-byte arena is too small", or "arena too
small: <n> bytes for the <what>, <used> of <size> used").

The host run (64-bit, under sanitizers) needs more arena than the board for the same
program: the planned buffers are the same bytes on both, but what `load_method` allocates
besides them (the runtime's tensor impls, pointer tables, ...) holds 8-byte pointers and
`size_t`s on the host, 4-byte ones on the board (a model using 5,470 B on the emulated M33
needed 8,166 B on the host, issue 18). A sketch's arena is its own array, which the check
cannot resize, so when only the host run falls short, `host_arena_limit` reports it as the
host's limitation (the "sanitize" stage skips, saying so), not as the sketch's error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from generator.check.expected import Expected
from generator.check.run_sketch import RunOutput, _crash
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


#: Start of the "sanitize" stage's summary when the host run fell short of arena only.
HOST_LIMIT = "host limitation"


def host_arena_limit(
    host: RunOutput,
    judged: StageResult,
    emulated: RunOutput | None,
    emulated_stage: StageResult | None,
) -> StageResult:
    """The "sanitize" stage, `judged` unless the host run failed only for want of arena.

    That is: `judged` failed; the host run printed an arena shortfall (`load_method failed
    (0x21)`, `arena too small`, `MemoryAllocationFailed`), with no crash, no sanitizer
    report and no overflow; and the emulated run (`emulated`, judged `emulated_stage`)
    passed without a shortfall. Then the sketch fits the board, and the result is a
    skipped stage whose summary starts with `HOST_LIMIT`, naming the host's line and the
    board's use (when the sketch printed `Arena: used N of M bytes`).

    Returns:
        `judged`, or the host-limitation stage (status SKIP, the host's last lines in its
        details).
    """
    if judged.passed or emulated is None or emulated_stage is None or not emulated_stage.passed:
        return judged
    if host.overflowed or _crash(host) is not None:
        return judged
    shortfall = next((line for line in host.lines if _TOO_SMALL.search(line)), None)
    if shortfall is None or any(_TOO_SMALL.search(line) for line in emulated.lines):
        return judged
    board = parse_arena(emulated.lines)
    used = f" (it used {board.used:,} of {board.size:,} B there)" if board else ""
    return StageResult(
        judged.stage,
        Status.SKIP,
        f"{HOST_LIMIT}: the 64-bit host needs more arena than the board for this program "
        f"({shortfall.strip()}); the emulated 32-bit run passed{used}, so the sketch fits "
        "the board, but the sanitizers did not see its method run",
        judged.details,
    )
