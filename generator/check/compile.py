"""Stage 2: compile an example for the UNO Q with a toolchain (`backends.py`), following the
Arduino build rules (`plan.py`); a linker region overflow, or arduino-cli's size check over
the board's budgets, fails the stage, with the overflow in bytes (`check` makes it "does not
fit" on a board other than the UNO Q: `generator/check/run.py`).

A sketch that does not fit the board (`generator.pipeline.fit`: its model's arena is larger than the
board's RAM for a sketch) must stop at compile time with its own `#error`, naming the board
(`expected_refusal`). Its compile stage then passes with the verdict `REFUSED` (the rest of
its stages do not run: `after_refusal`); a compile that succeeds instead, or fails without
that message, fails the stage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from generator.boards.budgets import Board
from generator.check.backends import Build, Toolchain, board_defines
from generator.check.plan import BuildPlan, plan_build
from generator.check.stages import REFUSED, StageResult, Status
from generator.pipeline import fit
from generator.toolchain.objcache import ObjectCache

#: `plan_build` is also imported from here (it was defined here).
__all__ = [
    "REFUSED",
    "CompileResult",
    "after_refusal",
    "compile_example",
    "expected_refusal",
    "judge_refusal",
    "overflows",
    "plan_build",
]

#: The compile stage's verdict for a sketch that refused the board as it should.
#: The stages after "compile" (`report.STAGES`), skipped once the sketch refused the board;
#: without a run, only the first two run at all.
_LATER = ("sizes", "dynamic", "run", "dynamic-run", "sanitize", "arena")

_OVERFLOW = re.compile(r"region [`'](\w+)' overflowed by (\d+) bytes")
#: arduino-cli's size check (internal/arduino/builder/sizer.go `checkSize`, arduino-cli at
#: 30dd6b20): the sizes against the board's `upload.maximum_size` and
#: `upload.maximum_data_size`, then this error when one is over, which fails the compile.
_SIZER = {
    "FLASH": (
        "text section exceeds available space in board",
        re.compile(r"Sketch uses (\d+) bytes \(\d+%\) of program storage space\. "
                   r"Maximum is (\d+) bytes"),
    ),
    "RAM": (
        "data section exceeds available space in board",
        re.compile(r"Global variables use (\d+) bytes \(\d+%\) of dynamic memory, leaving "
                   r"-?\d+ bytes for local variables\. Maximum is (\d+) bytes"),
    ),
}  # fmt: skip


def overflows(log: str) -> dict[str, int]:
    """Region overflows in `log`: region name (e.g. "FLASH", "RAM") -> bytes over, from the
    linker's `region ... overflowed by N bytes`, else from arduino-cli's size check (a link
    that fit the linker's regions but not the board's budgets)."""
    found = {m.group(1): int(m.group(2)) for m in _OVERFLOW.finditer(log)}
    for region, (error, sizes) in _SIZER.items():
        m = sizes.search(log)
        if region not in found and error in log and m and int(m.group(1)) > int(m.group(2)):
            found[region] = int(m.group(1)) - int(m.group(2))
    return found


@dataclass
class CompileResult:
    """Stage 2's outcome for one example and toolchain.

    Attributes:
        stage: the stage result; build: what the toolchain produced;
        overflow: linker region -> bytes it overflowed by (empty when it fit);
        refused: the sketch stopped with its own board-fit `#error`, as expected (the
            stage passed with `REFUSED`; nothing was built).
    """

    stage: StageResult
    build: Build
    overflow: dict[str, int]
    refused: bool = False


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def expected_refusal(toolchain: Toolchain, plan: BuildPlan, board: Board) -> str | None:
    """The `#error` message `plan`'s sketch must stop with on `board` (`fit.expected_refusal`:
    it has the board-fit block and its model.h's arena exceeds `board.ram_bytes`), or None.

    None too when `toolchain` does not define the board's macro: gcc-arm on the UNO Q
    (`toolchains.board_defines`), and the host build. arduino-cli always does (the core's
    platform.txt). A model.h whose arena lines `fit.arena_bytes` refuses gives None: the
    model check judges model.h.
    """
    if toolchain.name != "arduino-cli" and not board_defines(board):
        return None
    try:
        return fit.expected_refusal(
            plan.library / plan.sketch_dir, plan.example, board.name, board.ram_bytes
        )
    except ValueError:
        return None


def judge_refusal(toolchain: str, build: Build, message: str) -> CompileResult:
    """The compile stage of a sketch that must refuse the board with `#error "<message>"`:
    a pass with `REFUSED` when the build failed with `message` in its log; else a failure,
    saying whether it compiled (its #error is missing or tests another macro) or failed
    for another reason."""
    if build.ok:
        stage = StageResult(
            "compile",
            Status.FAIL,
            f"{toolchain}: compiled, but the sketch does not fit this board and should stop "
            "with its board-fit #error (missing, or testing another macro than the board's: "
            "regenerate the library)",
            f'expected: #error "{message}"',
        )
        return CompileResult(stage, build, overflows(build.log))
    if message in build.log:
        line = next((x for x in build.log.splitlines() if message in x), message)
        return CompileResult(
            StageResult("compile", Status.PASS, REFUSED, line.strip()), build, {}, True
        )
    stage = StageResult(
        "compile",
        Status.FAIL,
        f"{toolchain}: build failed, but not with the sketch's board-fit #error, which should "
        "refuse this board",
        f'expected: #error "{message}"\n{_tail(build.log, 60)}',
    )
    return CompileResult(stage, build, overflows(build.log))


def after_refusal(board: str, run: bool) -> list[StageResult]:
    """The stages after "compile" of an example that refused `board` (by name), each
    skipped; with `run` False, only those a check without runs has ("sizes", "dynamic")."""
    later = _LATER if run else _LATER[:2]
    why = f"not built: the sketch does not fit the {board} (see compile)"
    return [StageResult(stage, Status.SKIP, why) for stage in later]


def compile_example(
    toolchain: Toolchain,
    plan: BuildPlan,
    out_dir: Path,
    cache: ObjectCache,
    refusal: str | None = None,
) -> CompileResult:
    """Build `plan` with `toolchain` into `out_dir` (stage 2).

    Args:
        refusal: the `#error` message the sketch must stop with (`expected_refusal`); the
            stage is then `judge_refusal`'s. None: it must build.

    Returns:
        the result; a failed compile or link is a failed stage, not an exception.

    Raises:
        FatalError: the toolchain is not installed.
    """
    build = toolchain.build(plan, out_dir, cache)
    if refusal is not None:
        return judge_refusal(toolchain.name, build, refusal)
    over = overflows(build.log)
    if build.ok:
        stage = StageResult(
            "compile",
            Status.PASS,
            f"{toolchain.name}: {build.compiled} compiled, {build.reused} reused from the cache",
        )
    elif over:
        what = ", ".join(f"{region} overflowed by {n:,} bytes" for region, n in over.items())
        stage = StageResult(
            "compile",
            Status.FAIL,
            f"{toolchain.name}: does not fit the board: {what}",
            _tail(build.log),
        )
    else:
        stage = StageResult(
            "compile", Status.FAIL, f"{toolchain.name}: build failed", _tail(build.log, 60)
        )
    return CompileResult(stage, build, over)
