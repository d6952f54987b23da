"""Benchmark: KeywordSpotting's instructions per inference in each CMSIS-NN capability tier
(not a test; issue 19, point 4).

    python benchmarks/bench_tiers.py --library DIR [--tier NAME,...] [--cache-dir DIR]

CMSIS-NN picks its kernels from the CPU flags: the vendored `src/arm_nn_math_types.h`
(ARM-software/CMSIS-NN @ dbf45dbf, the library's extras/PROVENANCE.txt) defines
`ARM_MATH_DSP` when `__ARM_FEATURE_DSP == 1` and `ARM_MATH_MVEI` when `__ARM_FEATURE_MVE & 1`.
Debian's arm-none-eabi-gcc 12 (`-dM -E`) sets `__ARM_FEATURE_DSP 1` for cortex-m4, -m7, -m33
and -m55+nomve, `__ARM_FEATURE_MVE 3` for cortex-m55, and neither for cortex-m33+nodsp or
cortex-m0plus. Each tier below is a `generator.boards.budgets` row's CPU flags on its emulator, run
by the check (`run_check`, gcc-arm, QEMU -icount shift=0: generator/check/timing.py), with
the UNO Q's flash and RAM (the M55 machines' 512 KiB of flash) so that KeywordSpotting's
arena fits every tier, not the board's budget (which `check --board` judges).

Not measured: the Cortex-M0+ (Nano RP2040 Connect), QEMU 7.2 has no M0+ machine (the check
compiles and sizes it only); the scalar tier runs as cortex-m33+nodsp
(the FRDM RW612's flags, a real board of the table) instead. No board of the table has MVE
(the EK-RA8D1's RA8D1 Kconfig selects no MVE: `-mcpu=cortex-m55+nomve`); the MVE tier is
cortex-m55 on mps3-an547 as the stand-in for a Helium Cortex-M85.

Prints one row per tier: tier, flags, machine, instructions per inference (N us printed =
N * 1,000 instructions, to within 1,000), the class printed, the check's verdict and the
first error line of the emulated run (a program is exported with each CMSIS-NN kernel's
scratch buffer sized for one tier's kernels; the MVE depthwise convolution needs more than
the DSP path's, which the library's Cortex-M ops refuse with a message). Exits 1
when a tier printed no count or a class different from the UNO Q's.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generator.boards.budgets import UNO_Q, Board, check_boards, helium_stand_in  # noqa: E402
from generator.check.run import run_check  # noqa: E402

EXAMPLE = "KeywordSpotting"
_M55_FLASH = 512 * 1024  # mps3_an547.ld's FLASH (QEMU mps3-an547's ITCM-less flash window)


def tiers() -> dict[str, Board]:
    """Tier name -> the board the check builds and runs it as (see the module docstring)."""
    table = check_boards()

    def budget(board: Board) -> Board:
        return dataclasses.replace(board, flash_bytes=UNO_Q.flash_bytes, ram_bytes=UNO_Q.ram_bytes)

    return {
        "dsp-m33 (UNO Q)": UNO_Q,
        "dsp-m4f (Nano 33 BLE)": budget(table["nano33ble"]),
        "dsp-m7 (GIGA R1)": budget(table["giga"]),
        "dsp-m55+nomve (EK-RA8D1)": dataclasses.replace(
            table["ek_ra8d1"], flash_bytes=_M55_FLASH, ram_bytes=UNO_Q.ram_bytes
        ),
        "scalar-m33+nodsp (FRDM RW612)": budget(table["frdm_rw612"]),
        "mve-m55 (stand-in for M85 Helium)": helium_stand_in(),
    }


def _class(lines: list[str]) -> str | None:
    """The last class KeywordSpotting printed (its `Detected: <label>` line), or None."""
    hits = [line for line in lines if re.match(r"Detected: ", line)]
    return hits[-1] if hits else None


def _first_error(lines: list[str]) -> str:
    """The first line saying why a run failed (the runtime's error log, the sketch's ERROR,
    a fault), or "" (e.g. the MVE tier: the scratch-size check of the patch
    cortex-m-scratch-checks, `generator/pipeline/patches.py`)."""
    hits = [line for line in lines if re.match(r"ET\| E |ERROR:|.*fault", line)]
    return hits[0].replace("|", "\\|") if hits else ""


def main() -> int:
    """Run the tiers, print the table; 1 when a tier has no count or another class."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--library", type=Path, required=True, help="a generated library")
    parser.add_argument("--tier", default="", help="comma-separated tier names (default: all)")
    parser.add_argument("--cache-dir", type=Path, default=None, help="check's object cache")
    args = parser.parse_args()
    chosen = {k: v for k, v in tiers().items() if not args.tier or k in args.tier.split(",")}
    print("| tier | CPU flags | machine | instructions / inference | class | check | first error |")
    print("|---|---|---|---:|---|---|---|")
    failed = False
    reference: str | None = None
    for name, board in chosen.items():
        report = run_check(
            args.library,
            examples=[EXAMPLE],
            compiler="gcc-arm",
            cache_dir=args.cache_dir,
            board=board,
        )
        example = report.examples[0]
        timing = example.timing
        emulated = next((r for r in example.runs if r.kind == "emulated"), None)
        label = _class(emulated.lines) if emulated else None
        if board is UNO_Q:
            reference = label
        count = f"{timing.instructions:,}" if timing else "none"
        failed |= timing is None or (reference is not None and label != reference)
        print(
            f"| {name} | `{' '.join(board.cpu_flags)}` | {board.emulator} | {count} | "
            f"{label} | {'pass' if example.passed else 'fail'} | "
            f"{_first_error(emulated.lines) if emulated else ''} |",
            flush=True,
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
