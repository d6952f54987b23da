"""Benchmark: flash of a sketch whose files each include model.h, inline header vs `const`.

    python benchmarks/bench_model_h_copies.py [--files N] [PTE ...]

For each .pte (default: the committed AddModel and KeywordSpotting), writes model.h with
extras/tools/et_model_h.py, compiles N .cpp files that each include it and take the array's
address (arm-none-eabi-g++ at the UNO Q's flags, generator/toolchain/gcc.py), links them
statically with --gc-sections, and prints the flash (.text + .rodata + .data, bytes) with the
header as written (C++17 inline variables: one copy) and with the earlier `const` array (one copy
per file). Not a test: tests/unit/pipeline/test_model_h_one_copy.py asserts the one definition.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "data" / "extras" / "tools")]

import et_model_h  # noqa: E402

from generator.boards.budgets import UNO_Q  # noqa: E402
from generator.toolchain.gcc import arm_gcc  # noqa: E402

COMPILER = arm_gcc(UNO_Q.cpu_flags)
FIXTURES = ROOT / "tests" / "fixtures" / "pte" / "executorch-cff6f4dd"
FLASH_SECTIONS = (".text", ".rodata", ".data")


def flash_bytes(header: str, files: int, work: Path) -> int:
    """Flash of `files` translation units each including `header`, linked statically."""
    work.mkdir()
    (work / "model.h").write_text(header)
    objects = []
    for i in range(files):
        source = work / f"f{i}.cpp"
        entry = 'extern "C" int main(void) { return 0; }\n' if i == 0 else ""
        source.write_text(
            f'#include "model.h"\nextern "C" const uint8_t* f{i}() {{ return model_pte; }}\n'
            + entry
        )
        obj = work / f"f{i}.o"
        argv = [*COMPILER.compile_argv(str(source), ()), "-c", str(source), "-o", str(obj)]
        subprocess.run(argv, check=True)
        objects.append(str(obj))
    elf = work / "sketch.elf"
    keep = [f"-Wl,--undefined=f{i}" for i in range(files)]
    subprocess.run(
        [
            COMPILER.cxx,
            *COMPILER.common,
            "-nostdlib",
            "-nostartfiles",
            "-Wl,--gc-sections",
            "-Wl,-e,main",
            *keep,
            *objects,
            "-o",
            str(elf),
        ],
        check=True,
    )
    sizes = subprocess.run(
        ["arm-none-eabi-size", "-A", str(elf)], check=True, capture_output=True, text=True
    ).stdout
    total = 0
    for line in sizes.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith(FLASH_SECTIONS):
            total += int(parts[1])
    return total


def main() -> int:
    """Print one row per program: its size, and the flash with each header."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=3, help="files including model.h (3)")
    parser.add_argument("pte", nargs="*", type=Path)
    args = parser.parse_args()
    ptes = args.pte or [FIXTURES / "AddModel.pte", FIXTURES / "KeywordSpotting.pte"]
    print(f"| program | .pte bytes | flash, {args.files} files, inline | flash, const (before) |")
    print("|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for pte in ptes:
            data = pte.read_bytes()
            header = et_model_h.model_h(data, source=pte.name)
            old = header.replace("inline constexpr", "const")
            now = flash_bytes(header, args.files, Path(tmp) / f"{pte.stem}-inline")
            then = flash_bytes(old, args.files, Path(tmp) / f"{pte.stem}-const")
            print(f"| {pte.stem} | {len(data):,} | {now:,} | {then:,} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
