"""The board without an emulator (the Nano RP2040 Connect's Cortex-M0+): its ARMv6-M board half
(`data/emulated_core/board/armv6m.c`, `.ld`) really compiles and links for the M0+, and
`check --board nano_connect` compiles, sizes and links it Dynamic but skips every stage that
would boot it, saying why (issue 19: "compiled and sized, and says that it was not run")."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import generator.check.run as check_command
from generator.boards.budgets import check_boards, cpu_name, no_emulator_reason
from generator.check.backends import select_toolchain
from generator.check.compile import CompileResult
from generator.check.expected import Expected
from generator.check.plan import BuildPlan
from generator.check.stages import StageResult, Status
from generator.toolchain.gcc import CORE_DIR

BOARD_DIR = CORE_DIR / "board"
CC = "arm-none-eabi-gcc"
M0 = ("-mcpu=cortex-m0plus", "-mthumb", "-mfloat-abi=soft")
REASON = (
    "not run: Arduino Nano RP2040 Connect (Cortex-M0+) has no emulator (QEMU 7.2 has none for "
    "the Cortex-M0+): compiled and sized only"
)
needs_gcc = pytest.mark.skipif(
    shutil.which(CC) is None or shutil.which("arm-none-eabi-objdump") is None,
    reason=f"{CC} (gcc-arm-none-eabi) and binutils-arm-none-eabi are not installed",
)


def test_the_reason_names_the_board_its_cpu_and_why_there_is_no_emulator() -> None:
    assert no_emulator_reason(check_boards()["nano_connect"]) == REASON
    assert (cpu_name("cortex-m0plus"), cpu_name("cortex-m33")) == ("Cortex-M0+", "Cortex-M33")


@needs_gcc
def test_the_armv6m_board_half_compiles_and_links_for_the_cortex_m0plus(tmp_path: Path) -> None:
    main_c = tmp_path / "main.c"
    main_c.write_text("unsigned long millis(void);\nint main(void) { return (int)millis(); }\n")
    elf = tmp_path / "armv6m.elf"
    argv = [
        CC, *M0, "-Os", "-ffunction-sections", "-fdata-sections", "-mlong-calls", "-Wall",
        "-Wextra", "-Werror", str(main_c), str(BOARD_DIR / "armv6m.c"),
        "-nostartfiles", "--specs=nosys.specs", "-Wl,--gc-sections",
        "-Wl,--no-warn-rwx-segments", f"-T{BOARD_DIR / 'armv6m.ld'}",
        "-Wl,--defsym=__board_ram_bytes=65536",
        "-Wl,--start-group", "-lc", "-lm", "-lgcc", "-Wl,--end-group", "-o", str(elf),
    ]  # fmt: skip
    built = subprocess.run(argv, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    dump = subprocess.run(
        ["arm-none-eabi-objdump", "-d", "-j", ".text", str(elf)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    fault = dump[dump.index("<HardFault_Handler>:") :].split("\n\n")[0]
    # The Thumb-1 sequence (no `tst lr, #4`, no IT block).
    ops = [line.split("\t")[2].strip() for line in fault.splitlines()[1:] if "\t" in line]
    assert ops[:4] == ["movs", "mov", "tst", "bne.n"], fault
    assert "ite" not in ops
    symbols = subprocess.run(
        ["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    # The vector table at the RP2040's flash (XIP) base, the stack at the top of 64 KiB of RAM.
    assert "10000000 T arduino_core_vectors" in symbols
    assert "20010000 B __stack_top__" in symbols


@needs_gcc
def test_the_armv6m_board_half_refuses_another_architecture(tmp_path: Path) -> None:
    argv = [CC, "-mcpu=cortex-m4", "-mthumb", "-c", str(BOARD_DIR / "armv6m.c"), "-o",
            str(tmp_path / "x.o")]  # fmt: skip
    built = subprocess.run(argv, capture_output=True, text=True)
    assert built.returncode != 0
    assert "armv6m.c is the ARMv6-M board half" in built.stderr


class _Build:
    ok, binary, size_report, line, log, objects = True, None, "", None, "", ()


def test_the_run_stages_are_skipped_with_the_reason_and_never_pass(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    board = check_boards()["nano_connect"]
    compiled: list[Any] = []

    def compile_example(toolchain: Any, plan: Any, out: Path, *rest: Any) -> CompileResult:
        compiled.append(toolchain)
        return CompileResult(StageResult("compile", Status.PASS, "built"), _Build(), {})  # type: ignore[arg-type]

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a board without an emulator was booted")

    monkeypatch.setattr(check_command, "compile_example", compile_example)
    monkeypatch.setattr(
        check_command,
        "plan_build",
        lambda library, name: BuildPlan(library, name, Path("x"), (), (), ()),
    )
    monkeypatch.setattr(
        check_command, "dynamic_stage",
        lambda line, b, out, name: (StageResult("dynamic", Status.PASS, "linked"), None),
    )  # fmt: skip
    monkeypatch.setattr(check_command, "run_emulated", never)
    # The sketch's board-fit refusal (another step) is not this test's: none is expected.
    monkeypatch.setattr(check_command, "expected_refusal", lambda *args: None, raising=False)
    monkeypatch.setattr(check_command, "dynamic_run_stage", never)
    expected = Expected(must_print=("=== DONE ===",), arena=True)
    toolchain = select_toolchain("gcc-arm", board)
    report = check_command._check_example(
        tmp_path,
        "AddModel",
        toolchain,
        board,
        True,
        None,  # type: ignore[arg-type]
        tmp_path,
        expected,
    )
    stages = {s.stage: s for s in report.stages}
    for name in ("run", "dynamic-run", "arena"):
        assert (stages[name].status, stages[name].summary) == (Status.SKIP, REASON), name
    assert stages["compile"].status is Status.PASS and stages["dynamic"].status is Status.PASS
    assert report.runs == []
    # The example's own compile is the firmware (one gcc-arm build, M0+ flags), then the host's.
    assert [t.name for t in compiled] == ["gcc-arm", "host"]
    assert compiled[0].common[0] == "-mcpu=cortex-m0plus"


@needs_gcc
def test_the_dynamic_trampolines_are_the_boards_own_code(tmp_path: Path) -> None:
    """The Dynamic link's long-call trampolines are assembled for the board's CPU: Thumb-1
    (no movw/movt, which ARMv6-M lacks) and soft float on the M0+, as before on the UNO Q."""
    from generator.boards.budgets import UNO_Q
    from generator.check.backends import GCC_ARM
    from generator.check.dynamic import _wrappers_archive

    m0 = check_boards()["nano_connect"]
    names = ("malloc", "memcpy")
    dumps = {}
    for board in (m0, UNO_Q):
        archive = _wrappers_archive(names, tmp_path / board.key, GCC_ARM, board)
        assert archive is not None and archive.is_file()
        dumps[board.key] = subprocess.run(
            ["arm-none-eabi-objdump", "-d", str(archive)], capture_output=True, text=True,
            check=True,
        ).stdout  # fmt: skip
        attributes = subprocess.run(
            ["arm-none-eabi-readelf", "-A", str(archive)], capture_output=True, text=True,
            check=True,
        ).stdout  # fmt: skip
        arch = "v6S-M" if board is m0 else "v8-M.mainline"
        assert f"Tag_CPU_arch: {arch}" in attributes
    assert "movw" not in dumps["nano_connect"] and "movt" not in dumps["nano_connect"]
    assert "push\t{r0, r1}" in dumps["nano_connect"] and "pop\t{r0, pc}" in dumps["nano_connect"]
    assert dumps["unoq"].count("movw") == 2 and dumps["unoq"].count("bx\tip") == 2
