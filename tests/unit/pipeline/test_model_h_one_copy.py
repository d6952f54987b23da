"""model.h included from several files of a sketch defines one copy of the program.

A namespace-scope `const` array has internal linkage in C++, so the header before this change
(`alignas(16) const uint8_t model_pte[] = {...}`) gave every file that included it a copy of
its own (three files with KeywordSpotting: 162,604 B of flash instead of 54,220 B;
benchmarks/bench_model_h_copies.py). The header's variables are C++17
`inline` now (the board core compiles with -std=gnu++17) and its kernel selection functions
weak: the linker keeps one of each. Compiled with arm-none-eabi-g++ at the UNO Q's flags
(generator/toolchain/gcc.py), linked statically (--gc-sections, as the Static link mode) and
relocatably (`-r`, as a Dynamic upload file is linked), then read with nm.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import et_model_h
import pytest
from et_fixture import FIXTURE_PTE

from generator.boards.budgets import UNO_Q
from generator.toolchain.gcc import arm_gcc

COMPILER = arm_gcc(UNO_Q.cpu_flags)
pytestmark = pytest.mark.skipif(
    shutil.which(COMPILER.cxx) is None, reason=f"needs {COMPILER.cxx} (gcc-arm-none-eabi)"
)

PTE = (FIXTURE_PTE / "AddModel.pte").read_bytes()
#: The sketch's files besides main.cpp: each takes the array's address and reads the constants.
USERS = ("a", "b")


def _sketch(folder: Path, header: str) -> list[Path]:
    """Three .cpp files including `header` (as model.h); returns them."""
    folder.mkdir()
    (folder / "model.h").write_text(header)
    files = []
    for user in USERS:
        f = folder / f"{user}.cpp"
        f.write_text(
            '#include "model.h"\n'
            f'extern "C" const uint8_t* {user}_model(size_t* n, size_t* arena) {{\n'
            "  *n = model_pte_size;\n"
            "  *arena = model_pte_arena_bytes;\n"
            "  return model_pte;\n"
            "}\n"
        )
        files.append(f)
    main = folder / "main.cpp"
    main.write_text(
        '#include "model.h"\n'
        'extern "C" void et_arduino_register_aten_add_out(void) {}\n'
        'extern "C" void et_arduino_select_aten_add_out(void);\n'
        'extern "C" void et_arduino_kernels_fallback(void);\n'
        + "".join(
            f'extern "C" const uint8_t* {u}_model(size_t* n, size_t* arena);\n' for u in USERS
        )
        + 'extern "C" int main(void) {\n'
        "  size_t n = 0, arena = 0;\n"
        "  et_arduino_select_aten_add_out();\n"
        "  et_arduino_kernels_fallback();\n"
        "  return (a_model(&n, &arena) == model_pte) + (b_model(&n, &arena) == model_pte)\n"
        "      + static_cast<int>(n + arena);\n"
        "}\n"
    )
    return [*files, main]


def _link(folder: Path, sources: list[Path], relocatable: bool) -> Path:
    objects = []
    for source in sources:
        obj = source.with_suffix(".o")
        argv = [*COMPILER.compile_argv(str(source), ()), "-c", str(source), "-o", str(obj)]
        subprocess.run(argv, check=True, capture_output=True, text=True)
        objects.append(str(obj))
    out = folder / ("sketch-r.o" if relocatable else "sketch.elf")
    link = [COMPILER.cxx, *COMPILER.common, "-nostdlib", "-nostartfiles"]
    link += ["-r"] if relocatable else ["-Wl,--gc-sections", "-Wl,-e,main"]
    subprocess.run([*link, *objects, "-o", str(out)], check=True, capture_output=True, text=True)
    return out


def _definitions(elf: Path) -> dict[str, list[int]]:
    """Defined symbols of `elf` by name: the size of each definition (nm -S, demangled: a
    file-local copy is _ZL9model_pte)."""
    text = subprocess.run(
        ["arm-none-eabi-nm", "-S", "-C", str(elf)], check=True, capture_output=True, text=True
    ).stdout
    out: dict[str, list[int]] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4:  # address size type name
            out.setdefault(parts[3], []).append(int(parts[1], 16))
    return out


@pytest.mark.parametrize("relocatable", [False, True], ids=["static", "relocatable"])
def test_three_files_link_one_copy_of_the_model(tmp_path: Path, relocatable: bool) -> None:
    header = et_model_h.model_h(
        PTE, source="AddModel.pte", operators=["aten::add.out"], arena_bytes=359
    )
    elf = _link(tmp_path, _sketch(tmp_path / "sketch", header), relocatable)
    symbols = _definitions(elf)
    assert symbols["model_pte"] == [len(PTE)]  # one definition, 1,156 bytes
    assert symbols["et_arduino_select_aten_add_out"] != []
    assert len(symbols["et_arduino_select_aten_add_out"]) == 1
    assert len(symbols["et_arduino_kernels_fallback"]) == 1
    # The header still reads back to the same program.
    assert et_model_h.pte_from_model_h(header) == PTE


def test_the_const_header_gave_each_file_its_copy(tmp_path: Path) -> None:
    """The measurement tells the two apart: the earlier `const` array, one copy per file."""
    header = et_model_h.model_h(
        PTE, source="AddModel.pte", operators=["aten::add.out"], arena_bytes=359
    )
    old = header.replace("inline constexpr", "const")
    assert old != header
    elf = _link(tmp_path, _sketch(tmp_path / "sketch", old), relocatable=False)
    assert _definitions(elf)["model_pte"] == [len(PTE)] * 3
