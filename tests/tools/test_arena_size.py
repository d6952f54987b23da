"""The arena a program needs on the board (extras/tools/et_arena.py) and model.h's constant.

The committed programs' figures are those the emulated Cortex-M33 printed for them
(`Arena: used N of M bytes`, ETModel::arenaUsed() after begin(), library from ExecuTorch
cff6f4dd, `python -m generator check`, 2026-12-01): AddModel 359, KeywordSpotting 30,150.
The e2e test at the end compares with a fresh emulated run.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import et_arena
import et_model_h
import et_pte
import pytest
from et_fixture import DYNAMIC_ADD, FIXTURE_PTE, XNNPACK_ADD
from reader_fixture import flatc_binary, flatc_json, write_wheel_reader
from sketches import check_examples, etmodel_expected, etmodel_sketch

from generator.pipeline.models import write_model_header
from generator.util.errors import FatalError

REPO_ROOT = Path(__file__).resolve().parents[2]
ADD_MODEL = FIXTURE_PTE / "AddModel.pte"
KEYWORD_SPOTTING = FIXTURE_PTE / "KeywordSpotting.pte"


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> et_pte.ProgramReader:
    return et_pte.load_reader(write_wheel_reader(tmp_path_factory.mktemp("r") / "pte_schema"))


def test_add_model_needs_what_the_emulated_board_used(reader: et_pte.ProgramReader) -> None:
    plan = et_arena.method_arena(ADD_MODEL.read_bytes(), reader)
    assert plan.method == "forward"
    assert plan.planned == (32,)
    assert plan.unknown == ()
    assert plan.total == 359
    assert plan.part_bytes() == {
        "ETModel": 8,  # one Span<uint8_t>
        "memory plan": 32,
        "load_method": 28,  # the PlatformMemoryAllocator
        "values": 169,
        "delegates": 0,
        "chains": 111,
    }


def test_keyword_spotting_needs_what_the_emulated_board_used(
    reader: et_pte.ProgramReader,
) -> None:
    plan = et_arena.method_arena(KEYWORD_SPOTTING.read_bytes(), reader)
    assert plan.planned == (16000,)
    assert plan.total == 30150  # the sketch's comment: 28 KB fails load_method


@pytest.mark.parametrize(
    ("pte", "host"), [(ADD_MODEL, 595), (KEYWORD_SPOTTING, 38062)], ids=["AddModel", "KWS"]
)
def test_the_64_bit_host_figure_is_what_the_host_run_used(
    reader: et_pte.ProgramReader, pte: Path, host: int
) -> None:
    """The check's host run (x86-64, ASan) printed `Arena: used 595` and `38062` for the
    examples with an 8 KiB and 40 KiB arena (2026-12-01, library from cff6f4dd)."""
    assert et_arena.host_arena_bytes(pte.read_bytes(), reader) == host
    assert et_arena.host_arena_bytes(XNNPACK_ADD.read_bytes(), reader) is None


@pytest.mark.parametrize(
    ("compiler", "expected"), [("arm-none-eabi-g++", 359), ("g++", 595)], ids=["board", "host"]
)
def test_each_compiler_sees_its_figure(tmp_path: Path, compiler: str, expected: int) -> None:
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} is not installed")
    header = et_model_h.model_h(ADD_MODEL.read_bytes(), arena_bytes=359, host_arena_bytes=595)
    (tmp_path / "model.h").write_text(header)
    use = tmp_path / "use.cpp"
    use.write_text(
        '#include "model.h"\n'
        f'static_assert(model_pte_arena_bytes == {expected}, "figure");\n'
        "static unsigned char arena[model_pte_arena_bytes];\n"
        "unsigned char* get() { return arena; }\n"
    )
    flags = ["-mcpu=cortex-m33", "-mthumb"] if compiler.startswith("arm") else []
    result = subprocess.run(
        [compiler, "-std=gnu++17", *flags, "-c", str(use), "-o", str(tmp_path / "use.o")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_the_figure_covers_an_arena_4_past_an_8_boundary(reader: et_pte.ProgramReader) -> None:
    plan = et_arena.method_arena(ADD_MODEL.read_bytes(), reader)
    ends = [et_arena._replay(list(plan.allocations), base) for base in range(8, 16, 4)]
    assert plan.total == max(ends)
    assert ends == [359, 355]  # EValue and int64_t lists align to 8: padding moves


def test_one_more_int_list_value_costs_its_boxed_list(
    reader: et_pte.ProgramReader, tmp_path: Path
) -> None:
    """An IntList of 3 adds an EValue (16 B), EValue*[3] (12), int64_t[3] (24) and a
    BoxedEvalueList (12): 64 bytes plus at most 8 of alignment padding."""
    doc = flatc_json(ADD_MODEL, tmp_path)
    doc["execution_plan"][0]["values"].append({"val_type": "IntList", "val": {"items": [0, 1, 2]}})
    grown = flatc_binary(doc, tmp_path)
    before = et_arena.method_arena(ADD_MODEL.read_bytes(), reader)
    after = et_arena.method_arena(grown, reader)
    assert 64 <= after.total - before.total <= 72
    assert [a.what for a in after.allocations if a.what.endswith("[3]")][-2:] == [
        "EValue*[3]",
        "int64_t[3]",
    ]


def test_a_dynamic_shape_tensor_copies_its_sizes(reader: et_pte.ProgramReader) -> None:
    plan = et_arena.method_arena(DYNAMIC_ADD.read_bytes(), reader)
    whats = [a.what for a in plan.allocations]
    assert any(w.startswith("SizesType[") for w in whats)
    static = et_arena.method_arena(ADD_MODEL.read_bytes(), reader)
    assert not any(a.what.startswith("SizesType[") for a in static.allocations)


def test_a_delegate_leaves_the_figure_unknown(reader: et_pte.ProgramReader) -> None:
    data = XNNPACK_ADD.read_bytes()
    plan = et_arena.method_arena(data, reader)
    assert plan.unknown == ("delegate 0 (XnnpackBackend): what its backend's init() allocates",)
    assert plan.part_bytes()["delegates"] == 40  # one BackendDelegate, known
    arena, note = et_arena.for_model_h(data, reader)
    assert arena is None
    assert "XnnpackBackend" in note
    header = et_model_h.model_h(data, arena_bytes=arena, arena_note=note)
    assert "model_pte_arena_bytes =" not in header
    assert "// No model_pte_arena_bytes: not derivable from the program alone" in header


def test_bad_programs_are_refused(reader: et_pte.ProgramReader) -> None:
    data = ADD_MODEL.read_bytes()
    with pytest.raises(et_pte.PteError, match="no method 1"):
        et_arena.method_arena(data, reader, method=1)
    with pytest.raises(et_pte.PteError):
        et_arena.method_arena(data[: len(data) // 2], reader)


def test_model_h_defines_the_arena_constant() -> None:
    data = ADD_MODEL.read_bytes()
    header = et_model_h.model_h(data, arena_bytes=359)
    assert "\ninline constexpr size_t model_pte_arena_bytes = 359;\n" in header
    assert "\nalignas(16) inline constexpr uint8_t model_pte[] = {\n" in header
    assert "\ninline constexpr size_t model_pte_size = sizeof(model_pte);\n" in header
    named = et_model_h.model_h(data, name="kws", arena_bytes=7)
    assert "inline constexpr size_t kws_arena_bytes = 7;" in named
    assert et_model_h.pte_from_model_h(named) == data
    unread = et_model_h.model_h(data)
    assert "_arena_bytes =" not in unread
    assert "// No model_pte_arena_bytes: the program was not read." in unread
    with pytest.raises(ValueError, match="negative"):
        et_model_h.model_h(data, arena_bytes=-1)


def test_the_build_writes_the_figure_into_model_h(
    reader: et_pte.ProgramReader, tmp_path: Path
) -> None:
    out = tmp_path / "model.h"
    write_model_header(KEYWORD_SPOTTING, out, reader=reader.folder)
    text = out.read_text()
    assert (
        "#if defined(__SIZEOF_POINTER__) && __SIZEOF_POINTER__ == 8\n"
        "inline constexpr size_t model_pte_arena_bytes = 38062;\n"
        "#else\n"
        "inline constexpr size_t model_pte_arena_bytes = 30150;\n"
        "#endif\n"
    ) in text
    write_model_header(KEYWORD_SPOTTING, out)
    assert "// No model_pte_arena_bytes: the program was not read." in out.read_text()
    junk = tmp_path / "junk.pte"
    junk.write_bytes(b"\0" * 64)
    with pytest.raises(FatalError, match="cannot derive the arena of .*junk.pte"):
        write_model_header(junk, tmp_path / "junk.h", reader=reader.folder)
    assert not (tmp_path / "junk.h").exists()


# -- e2e: the real library from the mirror ---------------------------------------------------

_ARENA = re.compile(r"Arena: used (\d+) of (\d+) bytes")
_CONSTANT = re.compile(r"inline constexpr size_t model_pte_arena_bytes = (\d+);")


def _figures(header: str) -> tuple[int, int]:
    """(board, host) figures of a model.h: with a host figure, it comes first (#if)."""
    found = [int(m.group(1)) for m in _CONSTANT.finditer(header)]
    assert len(found) == 2, header[-800:]
    return found[1], found[0]


#: The largest amount the figure may exceed the emulated run's use: the run's arena comes
#: from malloc (8-aligned), where the figure is exact; 4 past an 8 boundary needs up to 4
#: bytes less per 8-aligned list (see test_the_figure_covers_an_arena_4_past_an_8_boundary).
MARGIN = 8


def _zoo_models() -> list[Path]:
    return sorted((REPO_ROOT / "tests" / "fixtures" / "zoo").glob("*.pte"))


def _run_arena(report: dict[str, Any], example: str, kind: str) -> tuple[int, int]:
    for entry in report["examples"]:
        if entry["example"] == example:
            for run in entry["runs"]:
                if run["kind"] == kind:
                    found = [m for line in run["last_lines"] if (m := _ARENA.search(line))]
                    assert found, run["last_lines"]
                    return int(found[-1].group(1)), int(found[-1].group(2))
    raise AssertionError(f"no {kind} run of {example}: {report['examples']}")


@pytest.mark.e2e
def test_the_figure_matches_the_emulated_board(real_main: Any, tmp_path: Path) -> None:
    """The examples' and the zoo's figures against what ETModel took on the emulated M33."""
    lib = tmp_path / "ExecuTorch"
    shutil.copytree(real_main.out, lib)
    reader = lib / et_pte.LIBRARY_READER_DIR
    examples = {"AddModel": None, "KeywordSpotting": None}
    for pte in _zoo_models():
        name = f"Arena{pte.stem}"
        folder = lib / "examples" / name
        folder.mkdir()
        # No input: the sketch only loads the program (loading is where the arena is spent;
        # run() takes nothing) into an arena of exactly its figure, and prints what it took.
        about = f"{name}: loads {pte.name}'s program into an arena of its model.h figure."
        (folder / f"{name}.ino").write_text(etmodel_sketch(name, about, None))
        (folder / "expected.yaml").write_text(etmodel_expected(name))
        program = et_pte.read_program(pte.read_bytes(), et_pte.load_reader(reader))
        write_model_header(
            pte, folder / "model.h", operators=program.called_operators, reader=reader
        )
        examples[name] = None
    report_file = tmp_path / "report.json"
    check = check_examples(lib, examples, report_file)
    report = json.loads(report_file.read_text())
    rows = []
    for example in examples:
        header = (lib / "examples" / example / "model.h").read_text()
        board, host = _figures(header)
        for kind, derived in (("emulated", board), ("host", host)):
            used, size = _run_arena(report, example, kind)
            rows.append(f"{example} {kind}: derived {derived}, used {used} of {size}")
            assert size == derived, rows[-1]  # the sketch sized its arena from model.h
            assert derived - MARGIN <= used <= derived, rows[-1]
    print("\n" + "\n".join(rows))
    assert check.returncode == 0, check.stdout + check.stderr


#: The C++ type behind each name of et_arena.TYPES (ExecuTorch's headers; the two private to
#: method.cpp, Chain and BackendDelegate, as structs of their fields).
_CXX_TYPES = {
    "void*": "void*",
    "Span<uint8_t>": "Span<uint8_t>",
    "PlatformMemoryAllocator": "internal::PlatformMemoryAllocator",
    "EValue": "EValue",
    "bool": "bool",
    "NamedData": "deserialization::NamedData",
    "EValue*": "EValue*",
    "int64_t": "int64_t",
    "BoxedEvalueList": "BoxedEvalueList<int64_t>",
    "ArrayRef": "ea::ArrayRef<double>",
    "SizesType": "ea::SizesType",
    "DimOrderType": "ea::DimOrderType",
    "StridesType": "ea::StridesType",
    "TensorImpl": "ea::TensorImpl",
    "Tensor": "ea::Tensor",
    "optional<Tensor>": "std::optional<ea::Tensor>",
    "BackendDelegate": "BackendDelegateFields",
    "CompileSpec": "CompileSpec",
    "Chain": "ChainFields",
    "OpFunction": "OpFunction",
    "InstructionArgs": "Span<EValue*>",
    "TensorMeta": "TensorMeta",
}

_PROBE_HEAD = """\
#include <ExecuTorch.h>
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/executor/platform_memory_allocator.h>
#include <executorch/runtime/executor/tensor_parser.h>
#include <executorch/runtime/kernel/operator_registry.h>
#include <optional>
using namespace executorch::runtime;
namespace ea = executorch::aten;
// runtime/executor/method.cpp's private classes, field for field.
struct ChainFields {
  const void* s_chain_; Span<Span<EValue*>> argument_lists_; OpFunction* kernels_;
};
struct BackendDelegateFields { FreeableBuffer segment_; const void* backend_; void* handle_; };
"""


def test_boxed_lists_share_one_size() -> None:
    """et_arena counts every BoxedEvalueList<T> and ArrayRef<T> as one size: the e2e probe
    checks the int64_t and double ones; the others hold the same two or three pointers."""
    assert et_arena.TYPES["BoxedEvalueList"] == (12, 4)
    assert et_arena.TYPES["ArrayRef"] == (8, 4)
    assert set(_CXX_TYPES) == set(et_arena.TYPES)


@pytest.mark.e2e
def test_the_sizes_are_the_boards(real_main: Any, tmp_path: Path) -> None:
    """Every (sizeof, alignof) of et_arena.TYPES, by arm-none-eabi-g++ at the UNO Q's flags
    against the real library's headers."""
    from generator.boards.budgets import UNO_Q
    from generator.toolchain.gcc import CORE_INCLUDES, arm_gcc

    compiler = arm_gcc(UNO_Q.cpu_flags)
    if compiler.missing():
        pytest.skip(compiler.missing() or "")
    lines = [_PROBE_HEAD]
    extra = [
        "BoxedEvalueList<ea::Tensor>",
        "BoxedEvalueList<std::optional<ea::Tensor>>",
        "ea::ArrayRef<bool>",
        "ea::ArrayRef<char>",
    ]
    checks = [(cxx, et_arena.TYPES[name]) for name, cxx in _CXX_TYPES.items()]
    checks += [
        (cxx, et_arena.TYPES["BoxedEvalueList" if "Boxed" in cxx else "ArrayRef"]) for cxx in extra
    ]
    for cxx, (size, align) in checks:
        lines.append(f'static_assert(sizeof({cxx}) == {size}, "sizeof {cxx}");')
        lines.append(f'static_assert(alignof({cxx}) == {align}, "alignof {cxx}");')
    probe = tmp_path / "probe.cpp"
    probe.write_text("\n".join(lines) + "\n")
    includes = (*(str(i) for i in CORE_INCLUDES), str(real_main.out / "src"))
    argv = [
        *compiler.compile_argv(str(probe), includes),
        "-c",
        str(probe),
        "-o",
        str(tmp_path / "probe.o"),
    ]
    result = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
