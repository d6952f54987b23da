"""The size links take the C library functions the UNO Q's firmware exports from the
firmware (`generator/boards/firmware_symbols.py`); the run links keep newlib's.

A tiny C program calling snprintf is linked here as the check links a sketch: statically
with newlib (the run link), the same with the firmware's functions provided (the static
size link), and as a loadable extension (`dynamic_argv`), without and with them.
"""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest
from check_fixtures import needs_tools

from generator.boards.budgets import UNO_Q
from generator.boards.firmware_symbols import (
    FIRMWARE_FUNCTIONS,
    PROVIDED_BASE,
    defined_symbols,
    defsym_flags,
    provided_functions,
)
from generator.check.backends import GCC_ARM
from generator.check.dynamic import dynamic_argv
from generator.check.link import LinkLine
from generator.check.sizes import measure_elf, size_elf

pytestmark = needs_tools

PROGRAM = textwrap.dedent(
    """\
    #include <stdio.h>
    char out[32];
    int main(void) { return snprintf(out, sizeof out, "%d", 42); }
    """
)
#: A program that brings its own malloc: the firmware's must not replace it.
OWN_MALLOC = "void *malloc(unsigned n) { static char pool[64]; (void)n; return pool; }\n"
#: The check's core defines this (board/abi.cpp) for the Dynamic link's `-u`; so does the
#: program of the Dynamic test, which links without the core.
ABI_STUB = "void *__cxa_allocate_exception(unsigned n) { (void)n; return 0; }\n"
#: newlib's archive members that snprintf pulls in (libc.a, Debian's newlib).
NEWLIB_PRINTF = ("lib_a-snprintf.o", "lib_a-svfprintf.o", "lib_a-dtoa.o", "lib_a-mprec.o")


def _compile(tmp_path: Path, name: str, source: str) -> Path:
    src = tmp_path / f"{name}.c"
    src.write_text(source)
    obj = tmp_path / f"{name}.o"
    subprocess.run(
        [GCC_ARM.cc, *GCC_ARM.common, *GCC_ARM.c, "-c", str(src), "-o", str(obj)], check=True
    )
    return obj


def _static_link(obj: Path, out: Path, extra: list[str]) -> str:
    """A static link of `obj` with newlib (as the run link has it, without the check's
    core and its start-up), plus `extra`; returns the map."""
    subprocess.run(
        [
            GCC_ARM.cxx,
            *GCC_ARM.common,
            "-nostartfiles",
            "--specs=nosys.specs",
            "-Wl,--gc-sections",
            "-Wl,-e,main",
            f"-Wl,-Map={out.with_suffix('.map')}",
            str(obj),
            *extra,
            "-o",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    return out.with_suffix(".map").read_text()


def _symbols(elf: Path) -> dict[str, tuple[str, int]]:
    proc = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True)
    out: dict[str, tuple[str, int]] = {}
    for line in proc.stdout.splitlines():
        fields = line.split()
        if len(fields) == 2:  # undefined: no value
            fields.insert(0, "0")
        value, kind, name = fields
        out[name] = (kind, int(value, 16))
    return out


def test_the_list_is_the_firmware_exports() -> None:
    # Spot checks against loader/llext_exports.c of ArduinoCore-zephyr 0.55.1.
    for name in ("snprintf", "vsnprintf", "printf", "malloc", "free", "realloc", "memcpy",
                 "strlen", "exp", "sqrtf", "__aeabi_ddiv",
                 "__aeabi_uldivmod", "__assert_func"):  # fmt: skip
        assert name in FIRMWARE_FUNCTIONS
    # Not exported: the firmware does not give these; the sketch links them.
    for name in ("expf", "ceil", "roundf", "_svfprintf_r", "__aeabi_f2lz", "vfprintf"):
        assert name not in FIRMWARE_FUNCTIONS
    assert len(FIRMWARE_FUNCTIONS) == len(set(FIRMWARE_FUNCTIONS)) == 112


def test_the_static_size_link_takes_snprintf_from_the_firmware(tmp_path: Path) -> None:
    obj = _compile(tmp_path, "prog", PROGRAM)
    provided = provided_functions([obj])
    assert provided == FIRMWARE_FUNCTIONS  # the program defines none of them

    run_map = _static_link(obj, tmp_path / "run.elf", [])
    size_map = _static_link(obj, tmp_path / "size.elf", defsym_flags(provided))

    for member in NEWLIB_PRINTF:
        assert member in run_map
        assert member not in size_map
    # snprintf is at its slot outside the sketch (an absolute Thumb address).
    slot = PROVIDED_BASE + 16 * FIRMWARE_FUNCTIONS.index("snprintf") + 1
    assert _symbols(tmp_path / "size.elf")["snprintf"] == ("A", slot)
    assert _symbols(tmp_path / "run.elf")["snprintf"][0] == "T"
    # newlib's printf is some 20 KB of flash; the size link has a few hundred bytes.
    run = measure_elf(tmp_path / "run.elf", UNO_Q)
    size = measure_elf(tmp_path / "size.elf", UNO_Q)
    assert run.flash > 15_000
    assert size.flash < 1_000


def test_the_link_own_definitions_win(tmp_path: Path) -> None:
    obj = _compile(tmp_path, "prog", PROGRAM + OWN_MALLOC)
    assert "malloc" in defined_symbols([obj])
    provided = provided_functions([obj, "-Wl,--whole-archive"])  # flags are skipped
    assert "malloc" not in provided
    assert "snprintf" in provided
    assert len(provided) == len(FIRMWARE_FUNCTIONS) - 1


def test_measure_elf_measures_the_size_link_beside_the_firmware(tmp_path: Path) -> None:
    obj = _compile(tmp_path, "prog", PROGRAM)
    firmware = tmp_path / "Prog.elf"
    _static_link(obj, firmware, [])
    alone = measure_elf(firmware, UNO_Q)
    assert size_elf(firmware) == tmp_path / "Prog_size.elf"
    _static_link(obj, size_elf(firmware), defsym_flags(provided_functions([obj])))
    beside = measure_elf(firmware, UNO_Q)
    assert beside.flash < 1_000 < 15_000 < alone.flash


def test_the_dynamic_link_leaves_snprintf_to_the_firmware(tmp_path: Path) -> None:
    obj = _compile(tmp_path, "prog", PROGRAM + ABI_STUB)
    line = LinkLine(object_files=[str(obj)], core_archive=None, list_chars=0)
    out = tmp_path / "dyn.elf"
    subprocess.run(dynamic_argv(line, UNO_Q, out, GCC_ARM), check=True, capture_output=True)
    # The board's Dynamic link has no -lc and no -lgcc: newlib's snprintf is not linked,
    # the call stays an undefined symbol for the loader to resolve against the firmware.
    symbols = _symbols(out)
    assert "_svfprintf_r" not in symbols
    assert symbols["snprintf"][0] == "U"
    relocs = subprocess.run(
        ["arm-none-eabi-readelf", "-r", str(out)], capture_output=True, text=True
    ).stdout
    assert "snprintf" in relocs


@pytest.mark.parametrize("name", ["malloc", "snprintf"])
def test_defsym_flags_give_each_name_its_slot(name: str) -> None:
    flags = defsym_flags(FIRMWARE_FUNCTIONS)
    i = FIRMWARE_FUNCTIONS.index(name)
    assert flags[i] == f"-Wl,--defsym={name}={PROVIDED_BASE + 16 * i + 1:#x}"
