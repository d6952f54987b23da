"""`check --board` over the board table: each board's toolchain (its CPU flags, its emulator's
board half and linker script, its budgets), and its Dynamic verdict's loader heap."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from sketches import EMPTY_SKETCH

from generator.boards.budgets import UNO_Q, ZEPHYR_BOARDS, board_keys, check_boards
from generator.boards.cores import CORES
from generator.check import backends as toolchains
from generator.check import dynamic
from generator.check.backends import GCC_ARM, select_toolchain
from generator.check.link import LinkLine
from generator.check.report import CheckReport, ExampleReport, board_data
from generator.check.stages import StageResult, Status
from generator.toolchain.gcc import CORE_DIR
from generator.util.errors import FatalError


def test_check_boards_are_every_table_row_and_the_uno_q_is_the_table_object() -> None:
    boards = check_boards()
    assert boards["unoq"] is UNO_Q
    assert list(boards) == list(ZEPHYR_BOARDS) and len(boards) == 15
    m0 = boards["nano_connect"]  # Cortex-M0+: no emulator, compiled and sized only
    assert (m0.emulator, m0.cpu, m0.flash_bytes, m0.ram_bytes) == (
        None, "cortex-m0plus", 0x20000, 65_536
    )  # fmt: skip
    assert m0.fqbn == "arduino:zephyr:nano_connect:link_mode=static"
    r4 = boards["unor4wifi"]
    assert (r4.flash_bytes, r4.ram_bytes, r4.llext_heap_bytes) == (122_880, 16_384, 16_384)
    assert (r4.emulator, r4.cpu, r4.key) == ("mps2-an386", "cortex-m4", "unor4wifi")
    assert r4.fqbn == "arduino:zephyr:unor4wifi:link_mode=static"


def test_the_uno_q_link_line_is_unchanged_and_another_board_links_its_budgets() -> None:
    assert select_toolchain("gcc-arm", UNO_Q) is GCC_ARM
    assert f"-T{CORE_DIR / 'board' / 'mps2_an505.ld'}" in GCC_ARM.link
    assert not [a for a in GCC_ARM.link if "defsym" in a]
    gcc = select_toolchain("gcc-arm", check_boards()["unor4wifi"])
    assert isinstance(gcc, toolchains.GccToolchain)
    assert gcc.common[:4] == ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16")
    assert f"-T{CORE_DIR / 'board' / 'mps2_an386.ld'}" in gcc.link
    # The run link carries newlib (the board's firmware's on the board): only its RAM is
    # the board's; the flash budget is the sizes stage's, on the size link.
    assert not [a for a in gcc.link if "__board_flash_bytes" in a]
    assert "-Wl,--defsym=__board_ram_bytes=35320" in gcc.link  # 16 KiB + stack + newlib
    assert [p.name for p in gcc.variant_sources] == ["new.cpp", "mps2_an386.c", "printf_c99.c"]
    c33 = select_toolchain("gcc-arm", check_boards()["portentac33"])
    assert isinstance(c33, toolchains.GccToolchain)
    assert [p.name for p in c33.variant_sources][1] == "mps2_an505.c"
    assert "-Wl,--defsym=__board_ram_bytes=150008" in c33.link


def test_the_board_without_an_emulator_links_the_armv6m_board_half_with_m0plus_flags() -> None:
    gcc = select_toolchain("gcc-arm", check_boards()["nano_connect"])
    assert isinstance(gcc, toolchains.GccToolchain)
    assert gcc.common[:3] == ("-mcpu=cortex-m0plus", "-mthumb", "-mfloat-abi=soft")
    assert not [a for a in gcc.common if a.startswith("-mfpu")]
    assert f"-T{CORE_DIR / 'board' / 'armv6m.ld'}" in gcc.link
    assert [p.name for p in gcc.variant_sources] == ["new.cpp", "armv6m.c", "printf_c99.c"]
    assert "-Wl,--defsym=__board_ram_bytes=84472" in gcc.link  # 64 KiB + stack + newlib
    assert gcc.size_link
    assert toolchains.board_file(check_boards()["nano_connect"]) == "armv6m"
    assert "armv6m.c.o" in dynamic.FIRMWARE_OBJECTS  # not linked into the Dynamic sketch
    odd = dataclasses.replace(check_boards()["nano_connect"], cpu="cortex-m3")
    with pytest.raises(ValueError, match=r"\(cortex-m3\) has no emulator and no board half"):
        toolchains.board_file(odd)


def test_another_boards_dynamic_verdict_takes_the_pinned_loader_with_its_heap() -> None:
    cores = dynamic.board_cores(check_boards()["unor4wifi"])
    pinned = next(c for c in CORES if c.pinned)
    assert len(cores) == 1 and cores[0].pinned and cores[0].version == pinned.version
    assert cores[0].heap_bytes == 16_384 != pinned.heap_bytes


def test_an_unknown_heap_is_an_unknown_verdict_not_a_pass(tmp_path: Path) -> None:
    board = dataclasses.replace(check_boards()["portentac33"], llext_heap_bytes=None)
    line = LinkLine(object_files=[], core_archive=None, list_chars=0)
    stage, sizes = dynamic.dynamic_stage(line, board, tmp_path, "X")
    assert stage.status is Status.SKIP and sizes is None
    assert stage.summary == "verdict unknown: Arduino Portenta C33's LLEXT heap was not read"


def _report(board: str, passed: bool) -> CheckReport:
    report = CheckReport(Path("/lib"), "gcc-arm", board)
    example = ExampleReport("HelloExecuTorch")
    status = Status.PASS if passed else Status.FAIL
    example.stages.append(StageResult("compile", status, "x"))
    report.examples.append(example)
    report.seconds = 2.0
    return report


def test_the_json_has_an_entry_per_example_and_board_and_the_boards_checked() -> None:
    table = check_boards()
    one = board_data([("unoq", _report("Arduino UNO Q", True))], table)
    assert one["board"] == "Arduino UNO Q" and one["passed"] is True
    assert [e["board"] for e in one["examples"]] == ["unoq"]
    assert one["boards"] == [
        {"key": "unoq", "name": "Arduino UNO Q", "fqbn": UNO_Q.fqbn,
         "emulator": "mps2-an505", "cpu": "cortex-m33"}
    ]  # fmt: skip
    second = _report("Arduino UNO R4 WiFi", False)
    second.errors.append("boom")
    two = board_data([("unoq", _report("Arduino UNO Q", True)), ("unor4wifi", second)], table)
    assert [(e["example"], e["board"]) for e in two["examples"]] == [
        ("HelloExecuTorch", "unoq"),
        ("HelloExecuTorch", "unor4wifi"),
    ]
    assert two["board"] == "Arduino UNO Q, Arduino UNO R4 WiFi"
    assert (two["passed"], two["seconds"], two["errors"]) == (False, 4.0, ["unor4wifi: boom"])
    assert two["boards"][1]["emulator"] == "mps2-an386"


def test_board_keys_default_all_and_unknown() -> None:
    table = check_boards()
    assert board_keys(None, table) == ["unoq"]
    assert board_keys(["giga", "all"], table)[0] == "giga"
    assert sorted(board_keys(["all", "giga"], table)) == sorted(table)
    with pytest.raises(FatalError, match="no board 'nope'"):
        board_keys(["nope"], table)


def test_the_boards_macro_reaches_the_sketch_compile_only(tmp_path: Path) -> None:
    """Library and core objects stay shared by boards of one CPU (object cache); the sketch,
    whose fit `#error` tests the macro, is compiled with it; on a board of the compact runtime
    (the UNO R4 WiFi) the library's sources too, whose src/executorch_compact.h tests it."""
    from generator.check.plan import BuildPlan
    from generator.toolchain.objcache import CompileJob, CompileOutcome

    (tmp_path / "examples" / "X").mkdir(parents=True)
    (tmp_path / "examples" / "X" / "X.ino").write_text(EMPTY_SKETCH)
    plan = BuildPlan(
        library=tmp_path, example="X", sketch_dir=Path("examples/X"),
        library_sources=(Path("src/a.cpp"),), sketch_sources=(),
        ino_files=(Path("examples/X/X.ino"),),
    )  # fmt: skip

    def sources_with_macro(key: str, macro: str) -> tuple[set[str], set[str]]:
        seen: list[tuple[str, tuple[str, ...]]] = []

        class Cache:
            root = tmp_path / "cache"

            def compile_all(self, jobs: list[CompileJob]) -> list[CompileOutcome]:
                seen.extend((job.source, job.argv) for job in jobs)
                return [CompileOutcome(job, None, False, "stop") for job in jobs]

        gcc = select_toolchain("gcc-arm", check_boards()[key])
        assert isinstance(gcc, toolchains.GccToolchain)
        assert not gcc.build(plan, tmp_path / "out", Cache()).ok  # type: ignore[arg-type]
        assert "src/a.cpp" in {src for src, _ in seen} and len(seen) > 2
        return {src for src, argv in seen if macro in argv}, {src for src, _ in seen}

    sketch = "X.ino.cpp"
    giga, _ = sources_with_macro("giga", "-DARDUINO_GIGA")
    assert len(giga) == 1 and next(iter(giga)).endswith(sketch)
    r4, every = sources_with_macro("unor4wifi", "-DARDUINO_ARDUINO_UNO_R4_WIFI")
    assert r4 == {src for src in every if src.endswith(sketch) or src == "src/a.cpp"}
    assert r4 != every  # the check's core is compiled without it
