"""et_pte: the program reader (flatc's Python, against real ExecuTorch models) and model.h.

The reader is the one a library ships in extras/tools/pte_schema/, made here from the
executorch wheel's schema and flatc (see tests/support/reader_fixture.py);
tests/unit/pipeline/test_pte_reader.py
compares what it reads with flatc's own JSON for every fixture.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "data" / "extras" / "tools"))

import et_model_h
import et_pte
from et_fixture import FIXTURE_PTE, XNNPACK_ADD
from reader_fixture import flatc_binary, flatc_json, write_wheel_reader

PTE_DIR = FIXTURE_PTE
ADD_MODEL = PTE_DIR / "AddModel.pte"
KEYWORD_SPOTTING = PTE_DIR / "KeywordSpotting.pte"

#: KeywordSpotting's operator table, in order, decoded from the fixture (cross-checked
#: with flatc in tests/unit/pipeline/test_pte_reader.py).
KWS_OPERATORS = [
    "cortex_m::quantize_per_tensor.out",
    "cortex_m::quantized_depthwise_conv2d.out",
    "dim_order_ops::_clone_dim_order.out",
    "cortex_m::quantized_conv2d.out",
    "cortex_m::pad.out",
    "cortex_m::quantized_avg_pool2d.out",
    "cortex_m::quantized_linear.out",
    "cortex_m::dequantize_per_tensor.out",
]
DW, CONV = "cortex_m::quantized_depthwise_conv2d.out", "cortex_m::quantized_conv2d.out"
#: Every kernel call of KeywordSpotting's forward, in execution order: (operator, args).
KWS_CALLS = [
    ("cortex_m::quantize_per_tensor.out", 8),
    (DW, 16),
    ("dim_order_ops::_clone_dim_order.out", 5),
    (DW, 16),
    (CONV, 15),
    (DW, 16),
    (CONV, 15),
    (DW, 16),
    (CONV, 15),
    (DW, 16),
    (CONV, 15),
    ("dim_order_ops::_clone_dim_order.out", 5),
    ("cortex_m::pad.out", 6),
    ("cortex_m::quantized_avg_pool2d.out", 11),
    ("cortex_m::quantized_linear.out", 13),
    ("cortex_m::dequantize_per_tensor.out", 8),
]


@pytest.fixture(scope="module")
def reader_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_wheel_reader(tmp_path_factory.mktemp("reader") / "pte_schema")


@pytest.fixture(scope="module")
def reader(reader_dir: Path) -> et_pte.ProgramReader:
    return et_pte.load_reader(reader_dir)


# --- the reader -------------------------------------------------------------------------


def test_reader_of_executorchs_schema(reader: et_pte.ProgramReader, reader_dir: Path) -> None:
    assert reader.file_identifier == "ET12"
    assert reader.folder == reader_dir
    assert reader.schema.InstructionArguments.KernelCall == 1
    assert reader.schema.InstructionArguments.DelegateCall == 2
    assert reader.schema.ScalarType.FLOAT == 6  # scalar_type.fbs, included: --gen-all


def test_reader_is_imported_by_path_alone(reader_dir: Path, tmp_path: Path) -> None:
    # A copy of its own (files imported once per process: an earlier test's copy of the same
    # files may live in a build's staging folder that is gone by now).
    reader_dir = shutil.copytree(reader_dir, tmp_path / "own" / "pte_schema")
    init = reader_dir / "__init__.py"
    init.write_text(init.read_text() + "# imported by this test alone\n")
    path_before = list(sys.path)
    flatbuffers_before = sys.modules.get("flatbuffers")
    reader = et_pte.load_reader(reader_dir)
    assert sys.path == path_before
    assert sys.modules.get("flatbuffers") is flatbuffers_before
    # The generated code uses the runtime of its own package, under the package's name.
    runtime = reader.schema.flatbuffers
    assert runtime.__name__.startswith("_et_pte_reader_") and runtime.__name__.endswith(
        ".flatbuffers"
    )
    package = Path(runtime.__file__).parent.parent
    assert (package / "program_generated.py").read_bytes() == (
        reader_dir / "program_generated.py"
    ).read_bytes()
    # The same files elsewhere are the same modules, named with their own folder.
    copy = shutil.copytree(reader_dir, tmp_path / "pte_schema")
    again = et_pte.load_reader(copy)
    assert again.schema is reader.schema and again.folder == copy


def test_reading_a_reader_leaves_no_bytecode_beside_it(
    reader_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A library's tree is published (and byte-identical from build to build): the build's
    # model check must not add __pycache__ to it.
    copy = shutil.copytree(reader_dir, tmp_path / "pte_schema")
    (copy / "__init__.py").write_text((copy / "__init__.py").read_text() + "# another build\n")
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    reader = et_pte.load_reader(copy)
    assert et_pte.read_program(ADD_MODEL.read_bytes(), reader).methods
    assert not list(copy.rglob("__pycache__"))
    assert sys.dont_write_bytecode is False  # as it was


def test_a_missing_reader_is_named(tmp_path: Path) -> None:
    with pytest.raises(et_pte.SchemaError, match=r"^no program reader in .*regenerate"):
        et_pte.load_reader(tmp_path / "pte_schema")


def test_a_damaged_reader_is_named(reader_dir: Path, tmp_path: Path) -> None:
    damaged = shutil.copytree(reader_dir, tmp_path / "pte_schema")
    module = damaged / "program_generated.py"
    module.write_text(module.read_text().replace("class Program(object)", "class Prog(object)"))
    with pytest.raises(et_pte.SchemaError, match=r"does not import \(AttributeError: "):
        et_pte.load_reader(damaged)
    (damaged / "program_generated.py").write_text("def broken(:\n")
    with pytest.raises(et_pte.SchemaError, match=r"does not import \(SyntaxError: "):
        et_pte.load_reader(damaged)
    assert not [m for m in sys.modules if m.startswith("_et_pte_reader_") and "broken" in m]


# --- reading real programs --------------------------------------------------------------


def test_add_model_decodes_to_its_one_add(reader: et_pte.ProgramReader) -> None:
    program = et_pte.read_program(ADD_MODEL.read_bytes(), reader)
    assert program.file_identifier == "ET12"
    assert program.version == 0
    assert program.extended_header == et_pte.ExtendedHeader(
        program_size=1040, segment_base_offset=1152, segment_data_size=4
    )
    assert program.segment_count == 1
    assert [m.name for m in program.methods] == ["forward"]
    forward = program.method("forward")
    assert forward.operators == (et_pte.Operator("aten::add", "out"),)
    assert forward.instruction_count == 1
    assert forward.kernel_calls == (et_pte.KernelCall(0, 0, 0, "aten::add.out", (1, 0, 3, 2, 2)),)
    assert forward.kernel_calls[0].arg_count == 5
    assert forward.delegate_calls == ()
    assert forward.delegates == ()
    assert (forward.value_count, forward.inputs, forward.outputs) == (4, (1,), (2,))
    assert program.operators == ["aten::add.out"]


def test_keyword_spotting_decodes_to_cortex_m_ops(reader: et_pte.ProgramReader) -> None:
    program = et_pte.read_program(KEYWORD_SPOTTING.read_bytes(), reader)
    assert program.extended_header == et_pte.ExtendedHeader(14904, 14976, 39216)
    assert [m.name for m in program.methods] == ["forward"]
    forward = program.methods[0]
    assert [op.full_name for op in forward.operators] == KWS_OPERATORS
    assert forward.instruction_count == 16
    assert [(c.operator, c.arg_count) for c in forward.kernel_calls] == KWS_CALLS
    assert forward.kernel_calls[0].args == (83, 85, 86, 87, 88, 89, 84, 84)
    assert (forward.value_count, forward.inputs, forward.outputs) == (289, (83,), (283,))
    assert forward.delegate_calls == ()
    assert program.operators == sorted(KWS_OPERATORS)


def test_a_delegated_model_decodes_to_its_delegate_call(reader: et_pte.ProgramReader) -> None:
    forward = et_pte.read_program(XNNPACK_ADD.read_bytes(), reader).methods[0]
    assert forward.delegates == ("XnnpackBackend",)
    assert forward.delegate_calls == (et_pte.DelegateCall(0, 1, 0, "XnnpackBackend", (1, 2, 5)),)
    assert forward.instruction_count == 2


# --- malformed input --------------------------------------------------------------------


def test_bad_identifier_is_named_at_offset_4(reader: et_pte.ProgramReader) -> None:
    data = bytearray(ADD_MODEL.read_bytes())
    data[4:8] = b"PK\x03\x04"
    with pytest.raises(et_pte.PteError, match=r"offset 4: .*not an ExecuTorch program"):
        et_pte.read_program(bytes(data), reader)


def test_other_schema_version_is_named(reader: et_pte.ProgramReader) -> None:
    data = bytearray(ADD_MODEL.read_bytes())
    data[4:8] = b"ET11"
    with pytest.raises(et_pte.PteError, match=r"'ET11', the schema expects 'ET12'"):
        et_pte.read_program(bytes(data), reader)


@pytest.mark.parametrize("size", [0, 3, 7])
def test_too_short_buffer(reader: et_pte.ProgramReader, size: int) -> None:
    with pytest.raises(et_pte.PteError, match="too short"):
        et_pte.read_program(ADD_MODEL.read_bytes()[:size], reader)


def test_truncation_is_caught_by_the_extended_header(reader: et_pte.ProgramReader) -> None:
    with pytest.raises(et_pte.PteError, match=r"segments end at 1156, the file has 1100"):
        et_pte.read_program(ADD_MODEL.read_bytes()[:1100], reader)


def test_truncation_without_header_names_a_position(reader: et_pte.ProgramReader) -> None:
    data = bytearray(ADD_MODEL.read_bytes()[:600])
    data[8:12] = b"\0\0\0\0"  # no extended header: the flatbuffer reader must catch it
    with pytest.raises(et_pte.PteError, match=r"^offset \d+: "):
        et_pte.read_program(bytes(data), reader)


def test_root_offset_out_of_range(reader: et_pte.ProgramReader) -> None:
    data = bytearray(ADD_MODEL.read_bytes())
    data[0:4] = (0xFFFFFFF0).to_bytes(4, "little")
    with pytest.raises(et_pte.PteError, match=r"^offset 0: root table points to 4294967280"):
        et_pte.read_program(bytes(data), reader)


def test_a_vtable_before_the_buffer_is_caught(reader: et_pte.ProgramReader) -> None:
    # FlatBuffers' runtime would read it from the end of the buffer (a negative offset).
    data = bytearray(ADD_MODEL.read_bytes())
    root = int.from_bytes(data[0:4], "little")
    data[root : root + 4] = (root + 100).to_bytes(4, "little", signed=True)
    with pytest.raises(
        et_pte.PteError, match=rf"^offset {root}: Program has its vtable at -100, outside"
    ):
        et_pte.read_program(bytes(data), reader)


@pytest.mark.parametrize("pte", [ADD_MODEL, KEYWORD_SPOTTING], ids=lambda p: p.stem)
def test_random_corruption_only_ever_raises_pte_error(
    pte: Path, reader: et_pte.ProgramReader
) -> None:
    """Hundreds of truncations and bit flips: a Program or a PteError, nothing else."""
    original = pte.read_bytes()
    rng = random.Random(20260130)
    errors = decoded = 0
    for i in range(300):
        data = bytearray(original)
        if i % 3 == 0:
            data = data[: rng.randrange(len(original))]
        else:
            # Flip bits in the flatbuffer part (the segment data is not interpreted).
            limit = min(len(data), 16384)
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(limit)] ^= 1 << rng.randrange(8)
        try:
            program = et_pte.read_program(bytes(data), reader)
        except et_pte.PteError as e:
            assert str(e)
            errors += 1
        else:
            assert isinstance(program, et_pte.Program)
            decoded += 1
    assert errors >= 100  # every truncation at least
    assert errors + decoded == 300


def test_operator_index_out_of_range(reader: et_pte.ProgramReader, tmp_path: Path) -> None:
    # AddModel with its operator table emptied, written by flatc: the add call's op_index 0
    # dangles.
    doc = flatc_json(ADD_MODEL, tmp_path)
    doc["execution_plan"][0]["operators"] = []
    data = flatc_binary(doc, tmp_path)
    with pytest.raises(et_pte.PteError, match="calls operator 0, the operator table has 0"):
        et_pte.read_program(data, reader)


def test_a_delegate_index_out_of_range(reader: et_pte.ProgramReader, tmp_path: Path) -> None:
    doc = flatc_json(XNNPACK_ADD, tmp_path)
    doc["execution_plan"][0]["delegates"] = []
    with pytest.raises(et_pte.PteError, match="calls delegate 0, the method has 0"):
        et_pte.read_program(flatc_binary(doc, tmp_path), reader)


def shared_program(reader: et_pte.ProgramReader, fanout: int) -> bytes:
    """A Program, built with the generated builder functions, whose plans, chains,
    instructions and kernel call arguments are `fanout` offsets to one and the same table
    (or value): a walk visits fanout**3 kernel calls of `fanout` arguments."""
    s = reader.schema
    b = s.flatbuffers.Builder(0)

    def shared(start: Any, offset: int) -> int:
        start(b, fanout)
        for _ in range(fanout):
            b.PrependUOffsetTRelative(offset)
        return int(b.EndVector())

    s.KernelCallStartArgsVector(b, fanout)
    for _ in range(fanout):
        b.PrependInt32(0)
    args = b.EndVector()
    s.KernelCallStart(b)
    s.KernelCallAddOpIndex(b, 0)
    s.KernelCallAddArgs(b, args)
    call = s.KernelCallEnd(b)
    s.InstructionStart(b)
    s.InstructionAddInstrArgsType(b, s.InstructionArguments.KernelCall)
    s.InstructionAddInstrArgs(b, call)
    instructions = shared(s.ChainStartInstructionsVector, s.InstructionEnd(b))
    s.ChainStart(b)
    s.ChainAddInstructions(b, instructions)
    chains = shared(s.ExecutionPlanStartChainsVector, s.ChainEnd(b))
    name, overload, method = (b.CreateString(t) for t in ("aten::add", "out", "forward"))
    s.OperatorStart(b)
    s.OperatorAddName(b, name)
    s.OperatorAddOverload(b, overload)
    operator = s.OperatorEnd(b)
    s.ExecutionPlanStartOperatorsVector(b, 1)
    b.PrependUOffsetTRelative(operator)
    operators = b.EndVector()
    s.ExecutionPlanStart(b)
    s.ExecutionPlanAddName(b, method)
    s.ExecutionPlanAddOperators(b, operators)
    s.ExecutionPlanAddChains(b, chains)
    plans = shared(s.ProgramStartExecutionPlanVector, s.ExecutionPlanEnd(b))
    s.ProgramStart(b)
    s.ProgramAddExecutionPlan(b, plans)
    b.Finish(s.ProgramEnd(b), file_identifier=reader.file_identifier.encode())
    return bytes(b.Output())


def test_shared_offsets_cannot_make_reading_explode(reader: et_pte.ProgramReader) -> None:
    """Vectors whose elements all point at one table: 40**3 kernel calls of 40 arguments in
    a buffer of about a kilobyte, refused by the work budget."""
    program = et_pte.read_program(shared_program(reader, 3), reader)
    assert len(program.methods) == 3
    assert [len(m.kernel_calls) for m in program.methods] == [9, 9, 9]
    assert program.methods[2].kernel_calls[8] == et_pte.KernelCall(
        2, 2, 0, "aten::add.out", (0, 0, 0)
    )
    data = shared_program(reader, 40)
    assert len(data) < 2048
    with pytest.raises(et_pte.PteError, match=r"more elements than a \d+-byte buffer can hold"):
        et_pte.read_program(data, reader)


# --- model.h ----------------------------------------------------------------------------


def test_model_h_declares_an_aligned_const_array_and_its_size() -> None:
    data = ADD_MODEL.read_bytes()
    text = et_model_h.model_h(data, source="AddModel.pte")
    # inline: one definition across the sketch's files
    # (tests/unit/pipeline/test_model_h_one_copy.py)
    assert "alignas(16) inline constexpr uint8_t model_pte[] = {" in text
    assert "inline constexpr size_t model_pte_size = sizeof(model_pte);" in text
    assert "section" not in text and "__attribute__" not in text and "PROGMEM" not in text
    assert "// Generated from AddModel.pte" in text
    assert (
        "// model_pte: 1156 bytes, sha256 "
        "538f335dc151a14ee758e69d9bb2113eda66e1bd3346e20db603258cf8a05832"
    ) in text
    assert "0x3c, 0x00, 0x00, 0x00, 0x45, 0x54, 0x31, 0x32," in text  # root offset, "ET12"
    assert text == et_model_h.model_h(data, source="AddModel.pte")  # deterministic


@pytest.mark.parametrize("pte", [ADD_MODEL, KEYWORD_SPOTTING], ids=lambda p: p.stem)
def test_model_h_round_trips_to_the_exact_bytes(pte: Path) -> None:
    data = pte.read_bytes()
    assert et_model_h.pte_from_model_h(et_model_h.model_h(data)) == data
    text = et_model_h.model_h(data, name="kws_model")
    assert "inline constexpr size_t kws_model_size = sizeof(kws_model);" in text
    assert et_model_h.pte_from_model_h(text) == data
    assert et_model_h.pte_from_model_h(text, name="kws_model") == data


@pytest.mark.parametrize("name", ["", "1model", "my-model", "model pte", "int", "sizeof", "é"])
def test_model_h_rejects_names_that_are_not_c_identifiers(name: str) -> None:
    with pytest.raises(ValueError, match="not a C identifier"):
        et_model_h.model_h(b"\0" * 8, name=name)


def test_model_h_rejects_multiline_source_and_empty_input() -> None:
    with pytest.raises(ValueError, match="one line"):
        et_model_h.model_h(b"\0" * 8, source="a.pte\n#include <evil>")
    with pytest.raises(ValueError, match=r"^x\.pte is empty"):
        et_model_h.model_h(b"", source="x.pte")


def test_pte_from_model_h_detects_an_edited_header() -> None:
    text = et_model_h.model_h(ADD_MODEL.read_bytes())
    edited = text.replace("0x45, 0x54, 0x31, 0x32", "0x45, 0x54, 0x31, 0x33", 1)
    with pytest.raises(et_pte.PteError, match="SHA-256 differs"):
        et_model_h.pte_from_model_h(edited)
    lines = text.splitlines()
    shortened = "\n".join(line for i, line in enumerate(lines) if i != 20)
    with pytest.raises(et_pte.PteError, match="has 1140 bytes, its comment says 1156"):
        et_model_h.pte_from_model_h(shortened)


def test_pte_from_model_h_reads_headers_without_a_digest() -> None:
    text = "alignas(16) static const uint8_t model_pte[] = {\n    0x01,0x02, 255, // end\n};\n"
    assert et_model_h.pte_from_model_h(text) == b"\x01\x02\xff"
    with pytest.raises(et_pte.PteError, match="no array 'other' found"):
        et_model_h.pte_from_model_h(text, name="other")
    with pytest.raises(et_pte.PteError, match="'256' is not a byte"):
        et_model_h.pte_from_model_h("const uint8_t a[] = {256};")


def test_model_h_compiles_to_16_byte_aligned_rodata(tmp_path: Path) -> None:
    gxx = shutil.which("arm-none-eabi-g++")
    if gxx is None:
        pytest.skip("arm-none-eabi-g++ is not installed")
    (tmp_path / "model.h").write_text(et_model_h.model_h(ADD_MODEL.read_bytes()))
    (tmp_path / "use.cpp").write_text(
        '#include "model.h"\n'
        "const uint8_t* data() { return model_pte; }\n"
        "size_t size() { return model_pte_size; }\n"
        'static_assert(sizeof(model_pte) == 1156, "size");\n'
    )
    subprocess.run(
        [gxx, "-std=gnu++17", "-mcpu=cortex-m33", "-mthumb", "-Os", "-c", "use.cpp"],
        cwd=tmp_path,
        check=True,
    )
    objdump = shutil.which("arm-none-eabi-objdump")
    assert objdump is not None
    headers = subprocess.run(
        [objdump, "-h", "use.o"], cwd=tmp_path, check=True, capture_output=True, text=True
    ).stdout
    # An inline variable gets a section of its own (a COMDAT group, one kept at link).
    rodata = re.search(
        r"\.rodata(?:\.model_pte)?\s+([0-9a-f]+)\s+\S+\s+\S+\s+\S+\s+2\*\*(\d+)", headers
    )
    assert rodata is not None, headers
    assert int(rodata.group(1), 16) == 1156
    assert int(rodata.group(2)) >= 4  # 2**4 = 16-byte alignment
