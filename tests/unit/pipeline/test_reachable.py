"""Ship only what is reachable (generator/pipeline/prune.py): the symbol rules on hand-made object
summaries, nm/objdump parsing, and pruning small source trees compiled for the Cortex-M33.
The real library is held to it by the e2e tests at the end.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from generator.pipeline import prune as prune_module
from generator.pipeline.prune import (
    UNO_Q_TARGET,
    ObjectSymbols,
    Pruning,
    parse_nm,
    parse_sections,
    prune_unreachable,
    reachable,
    translation_units,
)
from generator.pipeline.run import BuildResult
from generator.util.cache import StepCache

needs_arm_gcc = pytest.mark.skipif(
    bool(UNO_Q_TARGET.missing()),
    reason=f"{', '.join(UNO_Q_TARGET.missing())} not installed (scripts/install-deps)",
)


def sym(
    strong: tuple[str, ...] = (),
    weak: tuple[str, ...] = (),
    undefined: tuple[str, ...] = (),
    sections: tuple[str, ...] = (),
    constructors: bool = False,
) -> ObjectSymbols:
    return ObjectSymbols(
        frozenset(strong), frozenset(weak), frozenset(undefined), frozenset(sections), constructors
    )


# --- parsing ----------------------------------------------------------------------------------

# `arm-none-eabi-nm -P` of a C object and a C++ one (GCC 12.2.1): a weak definition (W), a weak
# reference (w), a static (b), and a template instantiation (W) with a mangled name.
NM_C = """f T e 2e
g U
h W 0 e
w w
x B 0 4
y b 4 4
"""
NM_CXX = """_GLOBAL__sub_I__Z3usev t 3c 10
_Z2tfIiET_S0_ W 0 14
_Z3usev T 0 10
_ZN1SC1Ev U
s B 0 1
tbl V 0 8
ext v
"""


def test_parse_nm_keeps_global_symbols_by_strength() -> None:
    assert parse_nm(NM_C) == (frozenset({"f", "x"}), frozenset({"h"}), frozenset({"g", "w"}))
    strong, weak, undefined = parse_nm(NM_CXX)
    assert strong == {"_Z3usev", "s"}
    assert weak == {"_Z2tfIiET_S0_", "tbl"}
    assert undefined == {"_ZN1SC1Ev", "ext"}


OBJDUMP = """
b.o:     file format elf32-littlearm

Sections:
Idx Name                          Size      VMA       LMA       File off  Algn  Flags
  0 .group                        00000014  00000000  00000000  00000034  2**2  CONTENTS, GROUP
  1 .text                         0000004c  00000000  00000000  00000048  2**2  CONTENTS, CODE
  3 .bss                          00000001  00000000  00000000  00000094  2**2  ALLOC
  9 .init_array                   00000004  00000000  00000000  000000c8  2**2  CONTENTS, DATA
"""


def test_parse_sections_reads_names_and_sizes() -> None:
    assert parse_sections(OBJDUMP) == {".group": 0x14, ".text": 0x4C, ".bss": 1, ".init_array": 4}


# --- the fixed point --------------------------------------------------------------------------


def test_reachable_follows_references_to_a_fixed_point() -> None:
    roots = {"main.o": sym(strong=("main",), undefined=("a", "printf"))}
    candidates = {
        "a.o": sym(strong=("a",), undefined=("b",)),
        "b.o": sym(strong=("b",), undefined=("c",)),
        "c.o": sym(strong=("c",)),
        "unused.o": sym(strong=("unused",), undefined=("a",)),
    }
    assert reachable(roots, candidates) == {
        "a.o": "defines a",
        "b.o": "defines b",
        "c.o": "defines c",
    }


def test_a_symbol_the_roots_define_does_not_pull_a_candidate() -> None:
    roots = {"r.o": sym(strong=("x",), weak=("inl",), undefined=("x", "inl"))}
    candidates = {"dup.o": sym(weak=("inl",)), "x.o": sym(strong=("y",))}
    assert reachable(roots, candidates) == {}


def test_strong_definers_are_preferred_and_weak_only_keeps_every_weak_definer() -> None:
    roots = {"r.o": sym(undefined=("s", "t"))}
    candidates = {
        "s_strong.o": sym(strong=("s",)),
        "s_weak.o": sym(weak=("s",)),
        "t_weak1.o": sym(weak=("t",)),
        "t_weak2.o": sym(weak=("t",)),
    }
    assert reachable(roots, candidates) == {
        "s_strong.o": "defines s",
        "t_weak1.o": "defines t (weak)",
        "t_weak2.o": "defines t (weak)",
    }


def test_a_strong_definition_of_a_kept_weak_symbol_is_kept() -> None:
    # Arduino links library objects directly: the strong hook would replace the weak default.
    roots = {"pal.o": sym(weak=("et_pal_init",))}
    candidates = {"board.o": sym(strong=("et_pal_init",)), "other.o": sym(strong=("x",))}
    assert reachable(roots, candidates) == {"board.o": "overrides the weak et_pal_init"}


def test_static_constructors_and_linker_section_bounds_keep_a_candidate() -> None:
    roots = {"r.o": sym(undefined=("__start_et_tables", "__stop_et_tables"))}
    candidates = {
        "ctor.o": sym(constructors=True),
        "table.o": sym(sections=(".text", "et_tables")),
        "plain.o": sym(sections=(".text",)),
    }
    assert reachable(roots, candidates) == {
        "ctor.o": "has static constructors",
        "table.o": "adds to section et_tables",
    }


def test_pruning_summary_and_folders() -> None:
    pruning = Pruning(
        compiler="gcc 12",
        roots=3,
        candidates=4,
        pruned=("src/a/x.c", "src/a/y.c", "src/b/z.cpp"),
    )
    assert pruning.pruned_by_folder == (("src/a", ("x.c", "y.c")), ("src/b", ("z.cpp",)))
    assert pruning.summary.startswith("3 of 4 third-party and helper sources pruned")
    assert "gcc 12" in pruning.summary and "from the 3 other sources" in pruning.summary
    fallback = Pruning(fallback="no-nm not found")
    assert fallback.summary == "none pruned, every source ships: no-nm not found"


# --- pruning small trees ----------------------------------------------------------------------

TREE: dict[str, str] = {
    # Roots: they always ship.
    "src/main.cpp": (
        '#include "lib.h"\n'
        '#include "tables/table.c"\n'
        'extern "C" int chain_a(int);\n'
        "namespace ns { int helper(int); }\n"
        'extern "C" __attribute__((weak)) int hook(void) { return 0; }\n'
        "int entry(int v) { return chain_a(v) + ns::helper(v) + hook() + table[0]; }\n"
    ),
    "src/lib.h": "#pragma once\nint entry(int v);\n",
    # Candidates.
    "src/third/chain_a.c": "int chain_b(int);\nint chain_a(int v) { return chain_b(v) + 1; }\n",
    "src/third/chain_b.c": "int chain_b(int v) { return v * 2; }\n",
    "src/third/unused.c": "int unused(int v) { return v - 1; }\n",
    "src/third/unused.h": "#pragma once\nint unused(int v);\n",
    "src/lonely/only.c": "int only(void) { return 7; }\n",
    "src/util/helper.cpp": "namespace ns { int helper(int v) { return v + 3; } }\n",
    "src/util/ctor.cpp": "struct Boot { Boot(); };\nBoot::Boot() {}\nBoot boot;\n",
    "src/util/hook.c": "int hook(void) { return 42; }\n",
    "src/tables/table.c": "static const int table[] = {1, 2};\n",
}
CANDIDATES = (
    "src/third/chain_a.c",
    "src/third/chain_b.c",
    "src/third/unused.c",
    "src/lonely/only.c",
    "src/util/helper.cpp",
    "src/util/ctor.cpp",
    "src/util/hook.c",
    "src/tables/table.c",
)


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_translation_units_are_what_arduino_compiles(tmp_path: Path) -> None:
    write(tmp_path, {**TREE, "src/.hidden/x.c": "", "src/x.cc": "", "src/y.S": ""})
    units = translation_units(tmp_path)
    assert units == sorted([*(r for r in TREE if r.endswith((".c", ".cpp"))), "src/y.S"])


@needs_arm_gcc
def test_prune_keeps_what_the_roots_link_and_deletes_the_rest(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    write(lib, TREE)
    result = prune_unreachable(lib, [lib / c for c in CANDIDATES], tmp_path / "objects")
    assert result.fallback == ""
    assert result.compiler.startswith("arm-none-eabi-gcc")
    assert (result.roots, result.candidates) == (1, 8)
    assert result.pruned == ("src/lonely/only.c", "src/third/unused.c")
    assert dict(result.kept) == {
        "src/third/chain_a.c": "defines chain_a",
        "src/third/chain_b.c": "defines chain_b",
        "src/util/helper.cpp": "defines _ZN2ns6helperEi",
        "src/util/ctor.cpp": "has static constructors",
        "src/util/hook.c": "overrides the weak hook",
        "src/tables/table.c": "included by src/main.cpp",
    }
    assert not (lib / "src/third/unused.c").exists()
    assert (lib / "src/third/unused.h").is_file()  # headers always ship
    assert not (lib / "src/lonely").exists()  # a folder left empty goes too
    assert translation_units(lib) == sorted(
        ["src/main.cpp", *(c for c in CANDIDATES if c not in result.pruned)]
    )


TIERED: dict[str, str] = {
    "src/main.cpp": 'extern "C" int kernel(int);\nint entry(int v) { return kernel(v); }\n',
    # CMSIS-NN's pattern: the kernel calls its helper only on a CPU with MVE.
    "src/cmsis-nn/kernel.c": (
        "int mve_helper(int);\n"
        "int kernel(int v) {\n"
        "#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)\n"
        "  return mve_helper(v);\n"
        "#else\n"
        "  return v;\n"
        "#endif\n"
        "}\n"
    ),
    "src/cmsis-nn/mve_helper.c": "int mve_helper(int v) { return v + 1; }\n",
    "src/cmsis-nn/unused.c": "int unused(int v) { return v; }\n",
}


@needs_arm_gcc
def test_a_helper_only_the_mve_tier_calls_ships(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    write(lib, TIERED)
    candidates = [lib / c for c in TIERED if c.startswith("src/cmsis-nn/")]
    result = prune_unreachable(lib, candidates, tmp_path / "objects")
    assert result.pruned == ("src/cmsis-nn/unused.c",)
    assert dict(result.kept) == {
        "src/cmsis-nn/kernel.c": "defines kernel",
        "src/cmsis-nn/mve_helper.c": "defines mve_helper (the MVE (cortex-m55) tier)",
    }
    # The UNO Q alone (another target has no tiers) would have dropped it: the Helium
    # build's link failure this rule fixes.
    alone = tmp_path / "alone"
    write(alone, TIERED)
    only_m33 = dataclasses.replace(UNO_Q_TARGET, defines=(*UNO_Q_TARGET.defines, "-DX=1"))
    pruned = prune_unreachable(
        alone, [alone / c for c in TIERED if c.startswith("src/cmsis-nn/")], tmp_path / "o2",
        only_m33,
    )  # fmt: skip
    assert pruned.pruned == ("src/cmsis-nn/mve_helper.c", "src/cmsis-nn/unused.c")


@needs_arm_gcc
def test_a_pruning_is_cached_by_the_content_it_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    steps = StepCache(tmp_path / "cache")
    first, second, changed = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for lib in (first, second, changed):
        write(lib, TREE)
    # A header a root includes is content the analysis reads: changing it is a miss.
    (changed / "src/third/unused.h").write_text("int unused(void); int chain_b(void);\n")
    cold = prune_unreachable(first, [first / c for c in CANDIDATES], tmp_path / "o", steps=steps)
    assert (steps.hits, steps.misses) == (0, 1)

    analysed: list[Path] = []
    real = prune_module._analyse

    def recording(lib: Path, *rest: Any) -> Pruning:
        analysed.append(lib)
        return real(lib, *rest)

    monkeypatch.setattr(prune_module, "_analyse", recording)
    warm = prune_unreachable(second, [second / c for c in CANDIDATES], tmp_path / "o", steps=steps)
    assert warm == cold and analysed == [] and steps.hits == 1  # nothing compiled or read
    assert translation_units(second) == translation_units(first)  # the same files deleted
    assert not (second / "src/lonely").exists()

    prune_unreachable(changed, [changed / c for c in CANDIDATES], tmp_path / "o", steps=steps)
    assert analysed == [changed] and steps.misses == 2


@needs_arm_gcc
def test_a_candidate_that_does_not_compile_is_kept(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    write(lib, {**TREE, "src/third/broken.c": "int broken(void) { return missing; }\n"})
    candidates = [lib / c for c in (*CANDIDATES, "src/third/broken.c")]
    result = prune_unreachable(lib, candidates, tmp_path / "objects")
    why = dict(result.kept)["src/third/broken.c"]
    assert why.startswith("does not compile for Arduino UNO Q:") and "missing" in why
    assert (lib / "src/third/broken.c").is_file()
    assert result.pruned == ("src/lonely/only.c", "src/third/unused.c")


@needs_arm_gcc
def test_a_root_that_does_not_compile_ships_everything(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    write(lib, {**TREE, "src/main.cpp": "#include <no_such_header.h>\n"})
    result = prune_unreachable(lib, [lib / c for c in CANDIDATES], tmp_path / "objects")
    assert result.pruned == ()
    assert result.fallback.startswith("src/main.cpp does not compile for Arduino UNO Q: ")
    assert "no_such_header.h" in result.fallback
    assert all((lib / c).is_file() for c in CANDIDATES)


def test_a_missing_tool_ships_everything(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    write(lib, TREE)
    target = dataclasses.replace(UNO_Q_TARGET, nm="no-such-nm-for-this-test")
    result = prune_unreachable(lib, [lib / c for c in CANDIDATES], tmp_path / "objects", target)
    assert (
        result.fallback == "no-such-nm-for-this-test not found (scripts/install-deps installs it)"
    )
    assert (result.roots, result.candidates, result.pruned) == (1, 8, ())
    assert all((lib / c).is_file() for c in CANDIDATES)
    assert not (tmp_path / "objects").exists()  # nothing was compiled


def test_no_candidate_compiles_nothing(tmp_path: Path) -> None:
    write(tmp_path, TREE)
    result = prune_unreachable(tmp_path, [tmp_path / "src/lib.h"], tmp_path / "objects")
    assert result == Pruning(roots=9, fallback="no candidate source")
    assert not (tmp_path / "objects").exists()


# --- the real library -------------------------------------------------------------------------


@pytest.mark.e2e
def test_real_library_ships_only_linked_sources(real_main: BuildResult) -> None:
    lib = real_main.out
    units = translation_units(lib)
    provenance = (lib / "extras/PROVENANCE.txt").read_text()
    line = next(x for x in provenance.splitlines() if x.startswith("pruning:"))
    assert " third-party and helper sources pruned: nothing shipped links them" in line
    # flatcc: the runtime is linked by nothing; its headers and license still ship.
    assert not [u for u in units if u.startswith("src/flatcc/")]
    assert (lib / "src/flatcc/flatcc_builder.h").is_file()
    assert (lib / "extras/THIRD_PARTY_LICENSES/flatcc-LICENSE.txt").is_file()
    # CMSIS-NN: what the Cortex-M ops call ships, the s4/s16 and LSTM kernels do not.
    cmsis = {u.rpartition("/")[2] for u in units if u.startswith("src/cmsis-nn/")}
    assert {"arm_convolve_s8.c", "arm_fully_connected_s8.c", "arm_softmax_s8.c"} <= cmsis
    assert not [u for u in cmsis if "_s4" in u or "lstm" in u]
    assert not (lib / "src/cmsis-nn/Source/LSTMFunctions").exists()  # left empty, removed
    assert (lib / "src/arm_nnfunctions.h").is_file()
    # Our own sources (data/library_template/src) are roots: they always ship.
    assert {
        "src/executorch_aeabi.c",
        "src/executorch/runtime/platform/default/arduino_pal.cpp",
    } <= set(units)
    # The portable utils the operators call ship.
    assert "src/executorch/kernels/portable/cpu/util/broadcast_util.cpp" in units
