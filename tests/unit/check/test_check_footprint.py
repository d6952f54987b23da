"""`check`'s flash breakdown and RAM figure (`generator/check/footprint.py`): tiny libraries
and sketches written here, linked with gcc-arm; the rows are asserted against sizes the
sources fix (a 1,000-byte program array, a 256-byte kernel table) and against
arm-none-eabi-size's flash figure, which they must sum to.
"""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path, PurePosixPath

from check_fixtures import needs_tools, write_library

from generator.check.footprint import (
    CORE,
    LINKER,
    MODEL,
    RUNTIME,
    SKETCH,
    Footprint,
    RamFigure,
    build_path_of,
    footprint_markdown,
    library_component,
    map_contributions,
)
from generator.check.run import run_check

# A model.h as et_model_h.model_h writes it: a 1,000-byte program array and its arena.
MODEL_H = (
    "#pragma once\n#include <stddef.h>\n#include <stdint.h>\n"
    "alignas(16) inline constexpr uint8_t model_pte[] = {\n"
    + "".join(
        f"    {', '.join(f'0x{(i * 16 + j) % 251:02x}' for j in range(10))},\n" for i in range(100)
    )
    + "};\ninline constexpr size_t model_pte_size = sizeof(model_pte);\n"
    "inline constexpr size_t model_pte_arena_bytes = 5000;\n"
)
MODEL_SKETCH = textwrap.dedent(
    """\
    #include <Tiny.h>
    #include <stdlib.h>
    #include "model.h"
    static uint8_t* const arena = static_cast<uint8_t*>(malloc(model_pte_arena_bytes));
    volatile size_t pick = 7;
    void setup() {
      Serial.println(model_pte[pick] + (arena != nullptr));
      Serial.println(twice(neg(kernel_twice(3))));
    }
    void loop() {}
    """
)
# Kernels and CMSIS-NN where a generated library has them (data/vendored/*.yaml), with
# tables of fixed size; the library archived (dot_a_linkage=true), as the real one is.
KERNEL_SOURCES = {
    "src/executorch/kernels/portable/cpu/op_twice.cpp": (
        "#include <stdint.h>\nextern const uint32_t twice_table[64] = {"
        + ", ".join(str(i * 2 + 1) for i in range(64))
        + '};\nextern "C" int kernel_twice(int x) { return (int)twice_table[x & 63]; }\n'
    ),
    "src/executorch/backends/cortex_m/ops/op_neg.cpp": 'extern "C" int neg(int x) { return -x; }\n',
    "src/cmsis-nn/Source/arm_unused.c": "int arm_unused(int x) { return x * 3; }\n",
}
KERNEL_HEADER = 'extern "C" int kernel_twice(int x);\nextern "C" int neg(int x);\n'


def _library(tmp_path: Path, sketch: str, model_h: str | None) -> Path:
    lib = write_library(tmp_path / "Tiny", {"Model": (sketch, 'must_print: ["1"]\n')})
    for rel, text in KERNEL_SOURCES.items():
        (lib / rel).parent.mkdir(parents=True, exist_ok=True)
        (lib / rel).write_text(text)
    with (lib / "src" / "Tiny.h").open("a") as f:
        f.write(KERNEL_HEADER)
    with (lib / "library.properties").open("a") as f:
        f.write("dot_a_linkage=true\n")
    if model_h is not None:
        (lib / "examples" / "Model" / "model.h").write_text(model_h)
    return lib


def _size_tool(elf: Path) -> int:
    """text + data of `elf` as arm-none-eabi-size prints them."""
    out = subprocess.run(["arm-none-eabi-size", str(elf)], capture_output=True, text=True)
    text, data = out.stdout.splitlines()[1].split()[:2]
    return int(text) + int(data)


@needs_tools
def test_breakdown_sums_to_flash_and_names_model_kernels_and_cmsis(
    tmp_path: Path, cache_dir: Path
) -> None:
    lib = _library(tmp_path, MODEL_SKETCH, MODEL_H)
    keep = tmp_path / "keep"
    report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir, run=False, keep=keep)
    example = report.examples[0]
    assert example.sizes is not None and example.footprint is not None
    flash = example.footprint.flash
    assert flash is not None, example.footprint.note
    assert flash.map_file == "Model_size.map"
    # The rows sum to the flash figure, which is arm-none-eabi-size's of the size link.
    assert sum(c.size for c in flash.components) == flash.flash == example.sizes.flash
    assert flash.flash == _size_tool(keep / "Model" / "gcc-arm" / "Model_size.elf")
    # The program array is exactly its 1,000 bytes; the kernel's table is 256 of its bytes.
    assert flash.size_of(MODEL) == 1000
    assert flash.size_of("op_twice (portable)") >= 64 * 4
    assert flash.size_of("op_neg (Cortex-M)") > 0
    # Garbage collection dropped CMSIS-NN's unused function: no row.
    assert flash.size_of("CMSIS-NN") == 0
    assert flash.size_of(SKETCH) > 0 and flash.size_of(CORE) > 0
    assert flash.size_of(RUNTIME) > 0  # Tiny.cpp, calc.c: the rest of the library
    assert flash.components == tuple(sorted(flash.components, key=lambda c: -c.size))
    # RAM: the globals and the 5,000-byte arena the sketch mallocs.
    ram = example.footprint.ram
    assert ram == RamFigure(example.sizes.ram, 262_144, 5000)
    assert ram.line() == (
        f"RAM: globals {example.sizes.ram:,} B + arena 5,000 B (heap) = "
        f"{example.sizes.ram + 5000:,} B of 262,144"
    )
    data = report.to_dict()["examples"][0]["footprint"]
    assert data["ram"]["total_bytes"] == example.sizes.ram + 5000
    assert sum(c["bytes"] for c in data["flash"]["components"]) == example.sizes.flash
    assert {"name": MODEL, "kind": "model", "bytes": 1000} in data["flash"]["components"]


@needs_tools
def test_markdown_rows_sum_to_flash_and_an_unknown_arena_says_why(
    tmp_path: Path, cache_dir: Path
) -> None:
    sketch = MODEL_SKETCH.replace('#include "model.h"\n', "").replace("model_pte_arena_bytes", "64")
    sketch = sketch.replace("model_pte[pick]", "pick")
    lib = _library(tmp_path, sketch, None)
    report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir, run=False)
    example = report.examples[0]
    assert example.footprint is not None and example.footprint.flash is not None
    assert example.footprint.flash.size_of(MODEL) == 0
    markdown = report.to_markdown()
    ram = example.footprint.ram
    assert ram is not None and ram.total is None
    assert f"- RAM: globals {ram.globals:,} B + arena unknown (no model.h) of 262,144" in markdown
    cells = re.findall(r"^\| ([^|]+) \| \**([\d,]+) B\** \| [\d.]+% \|$", markdown, re.MULTILINE)
    rows = {name.strip(): int(size.replace(",", "")) for name, size in cells}
    total = rows.pop("**flash**")
    assert total == example.footprint.flash.flash
    assert sum(rows.values()) == total
    assert any(name.startswith("the rest: Arduino core ") for name in rows)


def test_model_h_without_the_constant_in_the_sketch_is_unknown(tmp_path: Path) -> None:
    from generator.check.footprint import ram_figure

    (tmp_path / "model.h").write_text(MODEL_H)
    ino = tmp_path / "Hello.ino"
    ino.write_text("void setup() {}\n")
    figure = ram_figure(2_560, 262_144, tmp_path, [ino])
    assert figure.arena is None
    assert figure.note == "the sketch does not use model_pte_arena_bytes"
    ino.write_text("void* a = malloc(model_pte_arena_bytes);\n")
    assert ram_figure(2_560, 262_144, tmp_path, [ino]).total == 7_560
    (tmp_path / "model.h").write_text(MODEL_H.replace("model_pte_arena_bytes = 5000;", ""))
    assert ram_figure(2_560, 262_144, tmp_path, [ino]).note == "model.h declares no arena"


# A map's memory map as GNU ld 2.40 writes it: a wrapped input-section name, `*fill*`,
# merged strings that overlap, a symbol line, an output section with a load address.
MAP = """\
Linker script and memory map

LOAD /o/build/sketch/A.ino.cpp.o
                0x00004000                        STACK_SIZE = 0x4000

.text           0x10000000       0x40
 *(.text .text.*)
 .text.setup    0x10000000       0x10 /o/build/sketch/A.ino.cpp.o
                0x10000000                setup
 .text._ZN5torch8executor6native7add_outEv
                0x10000010       0x18 /o/build/libraries/ExecuTorch/ExecuTorch.a(op_add.cpp.o)
 *fill*         0x10000028        0x2
 .rodata.a.str1.1
                0x1000002a        0x6 /o/build/core/core.a(Print.cpp.o)
                                  0x8 (size before relaxing)
 .rodata.b.str1.1
                0x1000002a        0x4 /o/build/core/core.a(wiring.cpp.o)
 .text          0x10000030        0x8 /usr/lib/arm-none-eabi/lib/libc.a(lib_a-init.o)

.data           0x38000000        0x4 load address 0x10000040
 .data.x        0x38000000        0x4 /o/build/sketch/A.ino.cpp.o
"""


def test_map_contributions_read_wrapped_names_and_skip_fill() -> None:
    found = map_contributions(MAP)
    assert [(c.output, c.section, c.address, c.size) for c in found] == [
        (".text", ".text.setup", 0x10000000, 0x10),
        (".text", ".text._ZN5torch8executor6native7add_outEv", 0x10000010, 0x18),
        (".text", ".rodata.a.str1.1", 0x1000002A, 6),
        (".text", ".rodata.b.str1.1", 0x1000002A, 4),
        (".text", ".text", 0x10000030, 8),
        (".data", ".data.x", 0x38000000, 4),
    ]
    assert found[1].source == "/o/build/libraries/ExecuTorch/ExecuTorch.a(op_add.cpp.o)"


def test_attribution_gives_overlapping_bytes_once_and_the_gaps_to_the_linker() -> None:
    from generator.check.footprint import C_LIBRARIES, attribute

    names = {
        "op_add.cpp.o": [
            PurePosixPath("libraries/ExecuTorch/executorch/kernels/portable/cpu/op_add.cpp.o")
        ]
    }
    totals = attribute(map_contributions(MAP), {".text": 0x40, ".data": 4}, names, None)
    assert totals == {
        (SKETCH, "sketch"): 0x10 + 4,
        ("op_add (portable)", "kernel"): 0x18,
        (CORE, "rest"): 6,  # the merged strings' 4 bytes lie inside the first's 6
        (C_LIBRARIES, "rest"): 8,
        (LINKER, "rest"): 0x40 - 0x10 - 0x18 - 6 - 8,
    }
    assert sum(totals.values()) == 0x40 + 4


def test_components_by_source_path() -> None:
    names = {"op_add.cpp.o": [PurePosixPath("libraries/ExecuTorch/executorch/x/op_add.cpp.o")]}
    member = "/b/build/libraries/ExecuTorch/ExecuTorch.a(op_add.cpp.o)"
    assert build_path_of(member, names) == names["op_add.cpp.o"][0]
    assert build_path_of("/usr/lib/libc.a(lib_a-memcpy.o)", names) is None
    assert build_path_of("linker stubs", names) is None
    cases = {
        "executorch/kernels/portable/cpu/op_mean.cpp.o": ("op_mean (portable)", "kernel"),
        "executorch/backends/cortex_m/ops/op_quantized_add.cpp.o": (
            "op_quantized_add (Cortex-M)",
            "kernel",
        ),
        "executorch/kernels/portable/cpu/util/reduce_util.cpp.o": (
            "portable kernel utilities",
            "runtime",
        ),
        "cmsis-nn/Source/ConvolutionFunctions/arm_convolve_s8.c.o": ("CMSIS-NN", "cmsis-nn"),
        "executorch/codegen/RegisterKernelsByOperator.cpp.o": ("kernel registration", "runtime"),
        "executorch/kernels/prim_ops/register_prim_ops.cpp.o": ("prim ops", "runtime"),
        "executorch/runtime/executor/method.cpp.o": (RUNTIME, "runtime"),
        "executorch_aeabi.c.o": (RUNTIME, "runtime"),
    }
    for rel, expected in cases.items():
        assert library_component(PurePosixPath(rel)) == expected, rel


def test_markdown_of_an_unknown_breakdown_says_why() -> None:
    footprint = Footprint(None, RamFigure(100, 1000, 50), "the build made no map")
    assert footprint_markdown(footprint) == [
        "- RAM: globals 100 B + arena 50 B (heap) = 150 B of 1,000",
        "- flash by component: unknown (the build made no map)",
        "",
    ]
    assert footprint_markdown(None) == []


def test_a_map_of_another_link_is_refused() -> None:
    import pytest

    from generator.check.footprint import attribute

    with pytest.raises(ValueError, match=r"the map's \.text holds 54 B, its ELF section 32 B"):
        attribute(map_contributions(MAP), {".text": 32}, {}, None)
    with pytest.raises(ValueError, match="not a GNU ld map file"):
        map_contributions("Memory Configuration\n")
