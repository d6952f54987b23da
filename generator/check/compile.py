"""Stage 2: compile an example for the UNO Q with a toolchain (`toolchains.py`), following the
Arduino build rules (`plan.py`); a linker region overflow fails the stage, with the overflow
in bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from generator.check.plan import BuildPlan, plan_build
from generator.check.stages import StageResult, Status
from generator.check.toolchains import Build, Toolchain
from generator.toolchain.objcache import ObjectCache

#: `plan_build` is also imported from here (it was defined here).
__all__ = ["CompileResult", "compile_example", "overflows", "plan_build"]

_OVERFLOW = re.compile(r"region [`'](\w+)' overflowed by (\d+) bytes")


def overflows(log: str) -> dict[str, int]:
    """Linker region overflows in `log`: region name (e.g. "FLASH", "RAM") -> bytes."""
    return {m.group(1): int(m.group(2)) for m in _OVERFLOW.finditer(log)}


@dataclass
class CompileResult:
    """Stage 2's outcome for one example and toolchain.

    Attributes:
        stage: the stage result; build: what the toolchain produced;
        overflow: linker region -> bytes it overflowed by (empty when it fit).
    """

    stage: StageResult
    build: Build
    overflow: dict[str, int]


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def compile_example(
    toolchain: Toolchain, plan: BuildPlan, out_dir: Path, cache: ObjectCache
) -> CompileResult:
    """Build `plan` with `toolchain` into `out_dir` (stage 2).

    Returns:
        the result; a failed compile or link is a failed stage, not an exception.

    Raises:
        FatalError: the toolchain is not installed.
    """
    build = toolchain.build(plan, out_dir, cache)
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
