"""The compact runtime (generator/pipeline/compact.py): on the arduino:zephyr boards with at most
128 KiB of flash for a sketch the runtime compiles without its log (and the code of a program
verification the library never runs), told by the board macros its core defines on every
compile; the check compiles the library with those macros on those boards only."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest
from et_fixture import Upstream
from sketches import EMPTY_SKETCH

from generator.boards.budgets import (
    UNO_Q,
    ZEPHYR_BOARDS,
    Board,
    check_boards,
    compact_boards,
    is_compact,
)
from generator.check.backends import select_toolchain
from generator.check.plan import BuildPlan
from generator.library.layout import COMPACT_HEADER
from generator.pipeline import patches
from generator.pipeline.compact import COMPACT_DEFINES, compact_header, write_compact_header
from generator.pipeline.run import BuildOptions, build_library
from generator.toolchain.objcache import CompileJob, CompileOutcome, ObjectCache
from generator.util.errors import FatalError

COMPACT = ["ek_ra8d1", "frdm_mcxn947", "nicla_sense", "unor4wifi", "nano_connect"]
_PROBE = "ET_LOG_ENABLED ET_ENABLE_PROGRAM_VERIFICATION EXECUTORCH_ARDUINO_COMPACT\n"


def _switches(header: Path, *defines: str) -> list[str]:
    """The three macros' values after `header`, preprocessed by the host's C preprocessor."""
    out = subprocess.run(
        ["gcc", "-E", "-P", *defines, "-include", str(header), "-x", "c", "-"],
        input=_PROBE,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.split()


def test_the_compact_boards_are_the_five_with_at_most_128_kib_for_a_sketch() -> None:
    assert [row.key for row in compact_boards()] == COMPACT
    assert [d.name for d in COMPACT_DEFINES] == ["ET_LOG_ENABLED", "ET_ENABLE_PROGRAM_VERIFICATION"]


@pytest.mark.parametrize("key", sorted(ZEPHYR_BOARDS))
def test_the_header_switches_on_the_compact_boards_only(tmp_path: Path, key: str) -> None:
    header = write_compact_header(_library(tmp_path))
    macro = f"-D{ZEPHYR_BOARDS[key].macro}"
    on = ["0", "0", "1"]
    off = _PROBE.split()
    assert _switches(header, macro, "-DARDUINO_ARCH_ZEPHYR") == (on if key in COMPACT else off)
    # The same board macro from another core (the Nano RP2040 Connect's on arduino:mbed_nano).
    assert _switches(header, macro) == off


def test_a_value_defined_before_the_header_is_kept(tmp_path: Path) -> None:
    header = write_compact_header(_library(tmp_path))
    board = ("-DARDUINO_ARCH_ZEPHYR", "-DARDUINO_FRDM_MCXN947")
    assert _switches(header, *board, "-DET_LOG_ENABLED=1") == ["1", "0", "1"]


def test_the_header_names_each_board_and_switch() -> None:
    text = compact_header()
    assert "// - NXP FRDM MCXN947 (57,344 B for a sketch): ARDUINO_FRDM_MCXN947\n" in text
    assert "// - the runtime's log (its ET_LOG messages): ET_LOG_ENABLED=0\n" in text
    assert compact_header() == text  # the same table gives the same bytes


def _library(root: Path) -> Path:
    (root / "src").mkdir(parents=True, exist_ok=True)
    return root


def test_the_patch_includes_the_header_from_compiler_h(tmp_path: Path) -> None:
    compiler = tmp_path / patches.COMPILER_HEADER
    compiler.parent.mkdir(parents=True)
    compiler.write_text("// Copyright\n#pragma once\n#define ET_INLINE inline\n")
    assert patches._compact_runtime(tmp_path) == [patches.COMPILER_HEADER]
    assert compiler.read_text() == (
        "// Copyright\n#pragma once\n#include <executorch_compact.h>  // the compact runtime "
        "(generator/pipeline/compact.py)\n#define ET_INLINE inline\n"
    )
    assert COMPACT_HEADER == "src/executorch_compact.h"


def test_the_patch_without_compiler_h_names_itself(tmp_path: Path) -> None:
    with pytest.raises(FatalError, match="compact-runtime no longer applies: .*compiler.h"):
        patches._compact_runtime(tmp_path)


def test_is_compact_follows_the_macro_not_the_cpu() -> None:
    boards = check_boards()
    assert [k for k, b in boards.items() if is_compact(b)] == COMPACT
    assert not is_compact(UNO_Q)
    # A stand-in with a compact board's CPU and no macro (benchmarks/bench_tiers.py's MVE tier).
    assert not is_compact(dataclasses.replace(boards["ek_ra8d1"], macro=""))


class _Jobs(ObjectCache):
    """An object cache that records the jobs and compiles nothing (every job fails)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.jobs: list[CompileJob] = []

    def compile_all(self, jobs: object) -> list[CompileOutcome]:
        self.jobs = list(jobs)  # type: ignore[call-overload]
        return [CompileOutcome(job, None, False, "not compiled") for job in self.jobs]


def _library_argv(board: Board, tmp_path: Path) -> tuple[str, ...]:
    library = _library(tmp_path / board.key)
    (library / "src/lib.cpp").write_text("int x;\n")
    sketch = library / "examples/S"
    sketch.mkdir(parents=True)
    (sketch / "S.ino").write_text(EMPTY_SKETCH)
    plan = BuildPlan(
        library, "S", Path("examples/S"), (Path("src/lib.cpp"),), (), (Path("examples/S/S.ino"),)
    )
    cache = _Jobs(tmp_path / f"cache-{board.key}")
    toolchain = select_toolchain("gcc-arm", board)
    assert not toolchain.build(plan, tmp_path / "out", cache).ok
    (job,) = [j for j in cache.jobs if j.source == "src/lib.cpp"]
    sketch_job = next(j for j in cache.jobs if j.source.endswith("S.ino.cpp"))
    assert f"-D{board.macro}" in sketch_job.argv or board is UNO_Q
    return job.argv


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="no arm-none-eabi-gcc")
def test_the_check_compiles_the_library_with_the_macros_on_compact_boards_only(
    tmp_path: Path,
) -> None:
    boards = check_boards()
    frdm = _library_argv(boards["frdm_mcxn947"], tmp_path)
    assert "-DARDUINO_FRDM_MCXN947" in frdm and "-DARDUINO_ARCH_ZEPHYR" in frdm
    giga = _library_argv(boards["giga"], tmp_path)
    assert not [a for a in giga if a.startswith("-DARDUINO_") and a != "-DARDUINO=10607"]
    unoq = _library_argv(UNO_Q, tmp_path)
    assert not [a for a in unoq if a.startswith("-DARDUINO_")]


def test_a_built_library_carries_the_header_and_says_which_boards(
    tmp_path: Path, upstream: Upstream
) -> None:
    build_library(BuildOptions(cache_dir=tmp_path / "cache"), tmp_path / "out")
    library = tmp_path / "out"
    assert (library / COMPACT_HEADER).read_text() == compact_header()
    compiler = (library / patches.COMPILER_HEADER).read_text()
    assert compiler.startswith("// compiler macros\n#pragma once\n#include <executorch_compact.h>")
    readme = " ".join((library / "README.md").read_text().split())
    assert (
        "On the boards that give a sketch at most 128 KiB of flash (Renesas RA8D1 EK, NXP FRDM "
        "MCXN947, Arduino Nicla Sense ME, Arduino UNO R4 WiFi, Arduino Nano RP2040 Connect), the "
        "library compiles ExecuTorch's runtime compact" in readme
    )
    provenance = (library / "extras/PROVENANCE.txt").read_text()
    assert (
        "  compact-runtime: ExecuTorch's compiler.h includes src/executorch_compact.h" in provenance
    )
