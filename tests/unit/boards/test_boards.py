"""The board table (`generator.boards.budgets`): every arduino:zephyr board with its CPU flags,
budgets,
heap and emulator, and the emulated boards the table names (data/emulated_core/board/).

- the table: `BOARDS` (the CI matrix, `check --board`) stays the UNO Q; `ZEPHYR_BOARDS` rows
  are consistent (FQBN, emulator matching the CPU, UNO Q row equal to `UNO_Q`);
- each row's CPU flags compile with Debian's arm-none-eabi-gcc 12 and define the CPU features
  they claim (FPU, DSP, MVE);
- each emulated board boots a program built with each row's flags that names it: prints over
  its UART0, ends through semihosting with main's return value, faults (exit code 3) on a
  write through a null pointer, and refuses to link a program larger than a budget.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from generator.boards.budgets import (
    BOARDS,
    EMULATORS,
    LINK_MODES,
    UNO_Q,
    ZEPHYR_BOARDS,
    ZephyrBoard,
)
from generator.toolchain.gcc import CORE_DIR

BOARD_DIR = CORE_DIR / "board"
CC = "arm-none-eabi-gcc"
QEMU = "qemu-system-arm"

needs_arm = pytest.mark.skipif(
    shutil.which(CC) is None, reason="needs arm-none-eabi-gcc (Debian: gcc-arm-none-eabi)"
)
needs_qemu = pytest.mark.skipif(
    shutil.which(CC) is None or shutil.which(QEMU) is None,
    reason="needs arm-none-eabi-gcc with newlib (Debian: gcc-arm-none-eabi, "
    "libnewlib-arm-none-eabi) and qemu-system-arm",
)

#: The emulator the check runs each CPU on (issue 19: M33 on mps2-an505, M7 on mps2-an500,
#: M4 on mps2-an386, M55/M85 on mps3-an547, none for the M0+).
EMULATOR_FOR_CPU = {
    "cortex-m33": "mps2-an505",
    "cortex-m7": "mps2-an500",
    "cortex-m4": "mps2-an386",
    "cortex-m55": "mps3-an547",
    "cortex-m85": "mps3-an547",
    "cortex-m0plus": None,
}


# --- the table ---------------------------------------------------------------------------------


def test_the_check_and_ci_boards_stay_the_uno_q() -> None:
    assert list(BOARDS) == ["unoq"]
    assert BOARDS["unoq"] is UNO_Q


def test_the_table_has_every_board_of_the_core_boards_txt() -> None:
    assert list(ZEPHYR_BOARDS) == [
        "giga", "nano33ble", "ek_ra8d1", "frdm_mcxn947", "portentah7", "nicla_vision",
        "frdm_rw612", "nicla_sense", "portentac33", "unor4wifi", "opta", "nano_matter", "unoq",
        "nano_connect", "ventunoq",
    ]  # fmt: skip
    for key, board in ZEPHYR_BOARDS.items():
        assert board.key == key
        assert board.source, key
        assert board.cpu_note, key


def test_fqbn_names_the_board_and_link_mode() -> None:
    giga = ZEPHYR_BOARDS["giga"]
    assert giga.fqbn() == "arduino:zephyr:giga:link_mode=static"
    assert giga.fqbn("dynamic") == "arduino:zephyr:giga:link_mode=dynamic"
    assert LINK_MODES == ("static", "dynamic")
    with pytest.raises(ValueError, match="'flash' is not one of static, dynamic"):
        giga.fqbn("flash")


def test_the_uno_q_row_is_the_check_s_uno_q() -> None:
    row = ZEPHYR_BOARDS["unoq"]
    assert row.budget() == UNO_Q
    assert row.fqbn() == UNO_Q.fqbn


def test_each_board_has_the_compile_macro_of_its_boards_txt_build_board() -> None:
    # boards.txt@03c7e065 build.board, passed by platform.txt as -DARDUINO_{build.board}.
    assert {key: b.macro for key, b in ZEPHYR_BOARDS.items()} == {
        "giga": "ARDUINO_GIGA", "nano33ble": "ARDUINO_NANO33BLE",
        "ek_ra8d1": "ARDUINO_EK_RA8D1", "frdm_mcxn947": "ARDUINO_FRDM_MCXN947",
        "portentah7": "ARDUINO_PORTENTA_H7_M7", "nicla_vision": "ARDUINO_NICLA_VISION",
        "frdm_rw612": "ARDUINO_FRDM_RW612", "nicla_sense": "ARDUINO_NICLA_SENSE_ME",
        "portentac33": "ARDUINO_PORTENTA_C33", "unor4wifi": "ARDUINO_ARDUINO_UNO_R4_WIFI",
        "opta": "ARDUINO_OPTA", "nano_matter": "ARDUINO_ARDUINO_NANO_MATTER",
        "unoq": "ARDUINO_UNO_Q", "nano_connect": "ARDUINO_NANO_RP2040_CONNECT",
        "ventunoq": "ARDUINO_VENTUNO_Q",
    }  # fmt: skip
    r4 = ZEPHYR_BOARDS["unor4wifi"].budget()
    assert r4 is not None and r4.macro == "ARDUINO_ARDUINO_UNO_R4_WIFI"
    assert UNO_Q.macro == "ARDUINO_UNO_Q"


def test_budget_is_none_when_flash_or_ram_is_unknown() -> None:
    giga = ZEPHYR_BOARDS["giga"]
    assert replace(giga, ram_bytes=None).budget() is None
    assert replace(giga, flash_bytes=None).budget() is None
    budget = giga.budget()
    assert budget is not None
    assert (budget.flash_bytes, budget.ram_bytes) == (0x120000, 256 * 1024)
    assert budget.cpu_flags == giga.cpu_flags
    r4 = ZEPHYR_BOARDS["unor4wifi"].budget("dynamic")
    assert r4 is not None
    assert (r4.flash_bytes, r4.ram_bytes) == (122_880, 16_384)
    assert r4.fqbn == "arduino:zephyr:unor4wifi:link_mode=dynamic"
    assert ZEPHYR_BOARDS["unor4wifi"].llext_heap_bytes == 16 * 1024


def test_ram_is_the_llext_heap_unless_boards_txt_states_it() -> None:
    # extra/build.sh writes upload.maximum_data_size = CONFIG_LLEXT_HEAP_SIZE x 1024.
    for board in ZEPHYR_BOARDS.values():
        if board.key != "ventunoq":  # boards.txt states 523,624; its variant's heap is 256 KiB
            assert board.ram_bytes == board.llext_heap_bytes, board.key
    assert ZEPHYR_BOARDS["ventunoq"].ram_bytes == 523_624
    assert ZEPHYR_BOARDS["giga"].ram_bytes == 256 * 1024
    assert ZEPHYR_BOARDS["nicla_sense"].ram_bytes == 15 * 1024


def test_each_board_runs_on_the_emulator_of_its_cpu() -> None:
    for board in ZEPHYR_BOARDS.values():
        assert board.emulator == EMULATOR_FOR_CPU[board.cpu], board.key
        if board.emulator is not None:
            machine = EMULATORS[board.emulator]
            assert (BOARD_DIR / f"{machine.board_file}.c").is_file()
            assert (BOARD_DIR / f"{machine.board_file}.ld").is_file()


def test_the_cortex_m85_compiles_as_a_cortex_m55() -> None:
    # Debian's GCC 12 has no -mcpu=cortex-m85; the row says so.
    ra8 = ZEPHYR_BOARDS["ek_ra8d1"]
    assert ra8.cpu == "cortex-m85"
    assert ra8.cpu_flags[0].startswith("-mcpu=cortex-m55")
    assert "cortex-m55" in ra8.cpu_note


# --- the flags compile and mean what the row says ---------------------------------------------


def _macros(flags: tuple[str, ...]) -> dict[str, str]:
    out = subprocess.run(
        [CC, *flags, "-dM", "-E", "-x", "c", "-"], input="", capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    return dict(re.findall(r"#define (\S+) ?(.*)", out.stdout))


@needs_arm
@pytest.mark.parametrize("board", ZEPHYR_BOARDS.values(), ids=lambda b: b.key)
def test_cpu_flags_compile_and_select_what_the_row_says(board: ZephyrBoard) -> None:
    m = _macros(board.cpu_flags)
    hard = "-mfloat-abi=hard" in board.cpu_flags
    assert ("__ARM_PCS_VFP" in m) == hard, board.key
    if "-mfpu=fpv5-d16" in board.cpu_flags or board.cpu in ("cortex-m55", "cortex-m85"):
        assert m["__ARM_FP"] == "14", board.key  # half, single and double precision
    elif hard:
        assert m["__ARM_FP"] in ("4", "6"), board.key  # single precision only
    dsp = board.cpu in ("cortex-m4", "cortex-m7", "cortex-m85") or (
        board.cpu == "cortex-m33" and "+nodsp" not in board.cpu_flags[0]
    )
    assert ("__ARM_FEATURE_DSP" in m) == dsp, board.key
    assert "__ARM_FEATURE_MVE" not in m, board.key  # no board of the table has Helium on


# --- the emulated boards ------------------------------------------------------------------------

PROGRAM = textwrap.dedent(
    """\
    #include <stdio.h>
    unsigned long micros(void);
    void delay(unsigned long ms);
    int main(void) {
      volatile float f = 1.5f;
      volatile double d = 2.25;
      printf("hello from %s: %d %d\\r\\n", MACHINE, (int)(f * 4.0f), (int)(d * 4.0));
    #ifdef WRITE_NULL
      *(volatile int*)0 = 1;
    #endif
      unsigned long t0 = micros();
      delay(5);
      printf("delay(5): %s\\r\\n", micros() - t0 >= 4000 ? "ok" : "too short");
      return EXIT_CODE;
    }
    """
)


def _build(
    tmp_path: Path,
    board_file: str,
    flags: tuple[str, ...],
    *defines: str,
    link: tuple[str, ...] = (),
) -> tuple[subprocess.CompletedProcess[str], Path]:
    main_c = tmp_path / "main.c"
    main_c.write_text(PROGRAM)
    elf = tmp_path / f"{board_file}.elf"
    argv = [
        CC, *flags, "-O2", "-ffunction-sections", "-fdata-sections", *defines,
        str(main_c), str(BOARD_DIR / f"{board_file}.c"),
        "-nostartfiles", "--specs=nosys.specs", "-Wl,--gc-sections", "-Wl,--no-warn-rwx-segments",
        f"-T{BOARD_DIR / f'{board_file}.ld'}", *link,
        "-Wl,--start-group", "-lc", "-lm", "-lgcc", "-Wl,--end-group", "-o", str(elf),
    ]  # fmt: skip
    return subprocess.run(argv, capture_output=True, text=True), elf


def _boot(machine: str, elf: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [QEMU, "-M", machine, "-nographic", "-semihosting-config", "enable=on,target=native",
         "-kernel", str(elf)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


#: One case per distinct (emulator, CPU flags) of the table.
BOOT_CASES = sorted(
    {(b.emulator, b.cpu_flags) for b in ZEPHYR_BOARDS.values() if b.emulator is not None}
)


@needs_qemu
@pytest.mark.parametrize(
    ("machine", "flags"), BOOT_CASES, ids=[f"{m}:{f[0][6:]}:{f[2][12:]}" for m, f in BOOT_CASES]
)
def test_a_program_built_with_the_row_s_flags_boots_on_its_emulator(
    tmp_path: Path, machine: str, flags: tuple[str, ...]
) -> None:
    built, elf = _build(
        tmp_path, EMULATORS[machine].board_file, flags, f'-DMACHINE="{machine}"', "-DEXIT_CODE=5"
    )
    assert built.returncode == 0, built.stderr
    out = _boot(machine, elf)
    assert out.stdout.splitlines() == [f"hello from {machine}: 6 9", "delay(5): ok"], out
    assert out.returncode == 5, out.stderr


NEW_MACHINES = [m for m in EMULATORS if m != "mps2-an505"]


@needs_qemu
@pytest.mark.parametrize("machine", NEW_MACHINES)
def test_a_write_through_a_null_pointer_faults(tmp_path: Path, machine: str) -> None:
    flags = next(b.cpu_flags for b in ZEPHYR_BOARDS.values() if b.emulator == machine)
    built, elf = _build(
        tmp_path, EMULATORS[machine].board_file, flags, f'-DMACHINE="{machine}"',
        "-DEXIT_CODE=0", "-DWRITE_NULL",
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    out = _boot(machine, elf)
    lines = out.stdout.splitlines()
    assert lines[0] == f"hello from {machine}: 6 9"
    fault = next(line for line in lines if line.startswith("@@arduino-core@@ fault: "))
    # MemManage, data access violation (CFSR MMARVALID | DACCVIOL) at address 0.
    assert fault.startswith("@@arduino-core@@ fault: MemManage: PC=0x"), fault
    assert "CFSR=0x00000082" in fault and "MMFAR=0x00000000" in fault, fault
    assert out.returncode == 3


@needs_qemu
@pytest.mark.parametrize("machine", NEW_MACHINES)
def test_a_program_over_the_board_s_flash_budget_does_not_link(
    tmp_path: Path, machine: str
) -> None:
    flags = next(b.cpu_flags for b in ZEPHYR_BOARDS.values() if b.emulator == machine)
    common = (f'-DMACHINE="{machine}"', "-DEXIT_CODE=0")
    board_file = EMULATORS[machine].board_file
    fits, _ = _build(tmp_path, board_file, flags, *common)
    assert fits.returncode == 0, fits.stderr
    over, _ = _build(
        tmp_path, board_file, flags, *common, link=("-Wl,--defsym=__board_flash_bytes=4096",)
    )
    assert over.returncode != 0
    assert re.search(r"region `FLASH' overflowed by \d+ bytes", over.stderr), over.stderr


MVE_PROGRAM = textwrap.dedent(
    """\
    #include <arm_mve.h>
    #include <stdio.h>
    int main(void) {
      int8_t a[16], b[16], c[16];
      for (int i = 0; i < 16; i++) { a[i] = (int8_t)i; b[i] = (int8_t)(100 + i); }
      vst1q_s8(c, vqaddq_s8(vld1q_s8(a), vld1q_s8(b)));  /* saturating: 127 from i = 14 */
      printf("mve: %d %d %d\\r\\n", c[0], c[13], c[14]);
      return 0;
    }
    """
)


@needs_qemu
def test_the_m55_emulator_runs_helium(tmp_path: Path) -> None:
    # The stand-in for Helium: a board whose flags enable MVE runs its vector code here.
    main_c = tmp_path / "mve.c"
    main_c.write_text(MVE_PROGRAM)
    elf = tmp_path / "mve.elf"
    subprocess.run(
        [CC, "-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-O2", str(main_c),
         str(BOARD_DIR / "mps3_an547.c"), "-nostartfiles", "--specs=nosys.specs",
         "-Wl,--no-warn-rwx-segments", f"-T{BOARD_DIR / 'mps3_an547.ld'}", "-lc", "-lgcc",
         "-o", str(elf)],
        check=True,
    )  # fmt: skip
    out = _boot("mps3-an547", elf)
    dump = subprocess.run(
        ["arm-none-eabi-objdump", "-d", str(elf)], capture_output=True, text=True, check=True
    )
    assert re.search(r"\tvqadd\.s8\tq\d", dump.stdout), "no MVE instruction was compiled"
    assert out.stdout.splitlines() == ["mve: 100 126 127"], out
    assert out.returncode == 0
