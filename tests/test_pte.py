"""et_pte: the .fbs parser, the .pte reader (against real ExecuTorch models) and model.h."""

from __future__ import annotations

import importlib
import importlib.util
import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "extras" / "tools"))

import et_pte
from et_fixture import FIXTURE_PTE

PTE_DIR = FIXTURE_PTE
ADD_MODEL = PTE_DIR / "AddModel.pte"
KEYWORD_SPOTTING = PTE_DIR / "KeywordSpotting.pte"

#: KeywordSpotting's operator table, in order, decoded from the fixture (cross-checked
#: with flatc in `test_decoding_agrees_with_executorch_tooling`).
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


def executorch_package() -> Path | None:
    """The installed executorch package folder, found without importing it."""
    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@pytest.fixture(scope="module")
def schema_dir() -> Path:
    package = executorch_package()
    folder = package / "exir" / "_serialize" if package else None
    if folder is None or not (folder / "program.fbs").is_file():
        pytest.skip("the executorch wheel (exir/_serialize/program.fbs) is not installed")
    return folder


@pytest.fixture(scope="module")
def schema(schema_dir: Path) -> et_pte.Schema:
    return et_pte.load_schema(schema_dir)


# --- schema -----------------------------------------------------------------------------


def test_executorch_schema_header_facts(schema: et_pte.Schema) -> None:
    assert schema.root_type == "Program"
    assert schema.file_identifier == "ET12"
    assert schema.file_extension == "pte"
    assert schema.namespace == "executorch_flatbuffer"
    assert [p.name for p in schema.files] == ["program.fbs", "scalar_type.fbs"]
    assert schema.enums["ScalarType"].values["FLOAT"] == 6
    assert schema.enums["ScalarType"].values["BOOL"] == 11
    assert schema.enums["ScalarType"].underlying == "byte"


def test_executorch_schema_slots_and_union_indices(schema: et_pte.Schema) -> None:
    instruction = schema.table("Instruction")
    assert [(f.name, f.slot, f.type.kind) for f in instruction.fields] == [
        ("instr_args", 1, "union")
    ]
    assert instruction.slot_count == 2
    plan = schema.table("ExecutionPlan")
    assert [f.name for f in plan.fields][:7] == [
        "name",
        "container_meta_type",
        "values",
        "inputs",
        "outputs",
        "chains",
        "operators",
    ]
    assert [f.slot for f in plan.fields] == list(range(len(plan.fields)))
    assert schema.table("EValue").field("val").slot == 1
    args = schema.unions["InstructionArguments"].members
    assert args == {
        0: ("NONE", ""),
        1: ("KernelCall", "KernelCall"),
        2: ("DelegateCall", "DelegateCall"),
        3: ("MoveCall", "MoveCall"),
        4: ("JumpFalseCall", "JumpFalseCall"),
        5: ("FreeCall", "FreeCall"),
    }
    kernel_types = schema.unions["KernelTypes"]
    assert kernel_types.index_of("Null") == 1
    assert kernel_types.index_of("OptionalTensorList") == 11
    device = schema.table("NonConstBufferDevice").field("device_type")
    assert (device.type.kind, device.default) == ("enum", "CPU")
    storage = schema.table("Buffer").field("storage")
    assert storage.attributes == {"force_align": "16"}
    assert storage.type.element == et_pte.TypeRef("scalar", "ubyte")


def _camel(snake: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in snake.split("_"))


def test_slots_match_flatc_generated_python(schema: et_pte.Schema) -> None:
    """Every table field's slot equals the one flatc gave it in the wheel's generated code."""
    package = executorch_package()
    generated = package / "exir/_serialize/generated/executorch_flatbuffer" if package else None
    if generated is None or not generated.is_dir():
        pytest.skip("the executorch wheel's flatc-generated Python is not installed")
    compared = 0
    for table in schema.tables.values():
        text = (generated / f"{table.name}.py").read_text()
        starts = re.search(
            rf"def {table.name}Start\(builder.*?\n\s+builder\.StartObject\((\d+)\)", text
        )
        assert starts is not None, table.name
        assert int(starts.group(1)) == table.slot_count, table.name
        for f in table.fields:
            adder = rf"def {table.name}Add{_camel(f.name)}\(builder"
            m = re.search(adder + r".*?\n\s+builder\.Prepend\w*Slot\((\d+)", text)
            assert m is not None, f"{table.name}.{f.name}"
            assert int(m.group(1)) == f.slot, f"{table.name}.{f.name}"
            compared += 1
    assert compared > 80


def test_parser_handles_ids_deprecated_structs_and_comments() -> None:
    text = """
    // line comment
    /* block
       comment */
    namespace demo.inner;
    attribute "priority";
    enum Color : ubyte (bit_flags) { Red, Green, Blue = 3 }
    enum Level : short { Low = -1, Mid, High = 0x10 }
    struct Pair { a: byte; b: int; }
    struct Vec3 (force_align: 16) { x: float; y: float; z: float; }
    table Leaf { v: int = 7; }
    union Choice { Leaf, Other: Leaf = 5, Third: Leaf }
    table WithIds {
      c: string (id: 3);
      u: Choice (id: 1);
      old: int (id: 2, deprecated);
      p: Pair (id: 4);
    }
    table Plain { a: int; gone: long (deprecated); pick: Choice; tail: [Vec3]; arr: [ubyte]; }
    root_type WithIds;
    """
    schema = et_pte.parse_schema(text, source="demo.fbs")
    assert schema.namespace == "demo.inner"
    assert schema.attributes == ["priority"]
    assert schema.enums["Color"].values == {"Red": 1, "Green": 2, "Blue": 8}
    assert schema.enums["Level"].values == {"Low": -1, "Mid": 0, "High": 16}
    pair = schema.table("Pair")
    assert [(f.name, f.slot) for f in pair.fields] == [("a", 0), ("b", 4)]
    assert (pair.size, pair.align) == (8, 4)
    vec3 = schema.table("Vec3")
    assert (vec3.size, vec3.align) == (16, 16)
    assert schema.unions["Choice"].members == {
        0: ("NONE", ""),
        1: ("Leaf", "Leaf"),
        5: ("Other", "Leaf"),
        6: ("Third", "Leaf"),
    }
    with_ids = schema.table("WithIds")
    assert [(f.name, f.slot) for f in with_ids.fields] == [("c", 3), ("u", 1), ("old", 2), ("p", 4)]
    assert with_ids.field("old").deprecated
    assert with_ids.slot_count == 5
    plain = schema.table("Plain")
    assert [(f.name, f.slot) for f in plain.fields] == [
        ("a", 0),
        ("gone", 1),
        ("pick", 3),
        ("tail", 4),
        ("arr", 5),
    ]
    assert plain.slot_count == 6
    assert schema.table("Leaf").field("v").default == "7"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("table T { a: Missing; }", "unknown type 'Missing'"),
        ("table T { a: int }", "expected ';'"),
        ("rpc_service S { }", "unsupported declaration 'rpc_service'"),
        ("table T { a: int (id: 0); b: int; }", "every field has an id or none"),
        ("table T { a: int (id: 0); b: int (id: 0); }", "clashes"),
        ('file_identifier "ET1";', "4 characters"),
        ("enum E : float { A }", "integer type"),
        ("table T { a: int; }\ntable T { b: int; }", "declared twice"),
        ("table T { a: int; } $", "unexpected character '$'"),
    ],
)
def test_parser_rejects_what_it_does_not_know(text: str, message: str) -> None:
    with pytest.raises(et_pte.SchemaError, match=re.escape(message)):
        et_pte.parse_schema(text, source="bad.fbs")


def test_parser_error_names_file_and_line() -> None:
    with pytest.raises(et_pte.SchemaError, match=r"^bad\.fbs:3: "):
        et_pte.parse_schema("namespace a;\n\ntable T { a int; }", source="bad.fbs")


def test_load_schema_reports_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(et_pte.SchemaError, match=r"cannot read schema file .*program\.fbs"):
        et_pte.load_schema(tmp_path)


def test_load_schema_reports_missing_include(tmp_path: Path) -> None:
    (tmp_path / "program.fbs").write_text('include "gone.fbs";\ntable P {}\nroot_type P;\n')
    with pytest.raises(et_pte.SchemaError, match=r"gone\.fbs"):
        et_pte.load_schema(tmp_path)


# --- reading real programs --------------------------------------------------------------


def test_add_model_decodes_to_its_one_add(schema: et_pte.Schema) -> None:
    program = et_pte.read_program(ADD_MODEL.read_bytes(), schema)
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


def test_keyword_spotting_decodes_to_cortex_m_ops(schema: et_pte.Schema) -> None:
    program = et_pte.read_program(KEYWORD_SPOTTING.read_bytes(), schema)
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


def _calls_from_reference(pte: Path, tmp_path: Path) -> list[list[tuple[str, list[int]]]] | None:
    """Per method, (operator, args) of each kernel call, by ExecuTorch's own tooling."""
    deserialize_pte_binary: Any = None
    try:
        module = importlib.import_module("executorch.exir._serialize._program")
        deserialize_pte_binary = module.deserialize_pte_binary
    except Exception:  # ImportError, or a failure in its torch-side imports
        pass
    if deserialize_pte_binary is not None:
        parsed: Any = deserialize_pte_binary(pte.read_bytes())
        prog = getattr(parsed, "program", parsed)
        out = []
        for plan in prog.execution_plan:
            calls = []
            for chain in plan.chains:
                for ins in chain.instructions:
                    if hasattr(ins.instr_args, "op_index"):
                        op = plan.operators[ins.instr_args.op_index]
                        name = f"{op.name}.{op.overload}" if op.overload else op.name
                        calls.append((name, list(ins.instr_args.args)))
            out.append(calls)
        return out
    package = executorch_package()
    flatc = package / "data" / "bin" / "flatc" if package else None
    if flatc is None or not flatc.is_file():
        return None
    schema_file = flatc.parents[2] / "exir" / "_serialize" / "program.fbs"
    options = ["--json", "--raw-binary", "--strict-json", "--defaults-json"]
    subprocess.run(
        [str(flatc), *options, "-o", str(tmp_path), str(schema_file), "--", str(pte)],
        check=True,
        capture_output=True,
    )
    doc = json.loads((tmp_path / f"{pte.stem}.json").read_text())
    out = []
    for plan in doc["execution_plan"]:
        calls = []
        for chain in plan["chains"]:
            for ins in chain["instructions"]:
                if ins["instr_args_type"] == "KernelCall":
                    op = plan["operators"][ins["instr_args"]["op_index"]]
                    name = f"{op['name']}.{op['overload']}" if op["overload"] else op["name"]
                    calls.append((name, ins["instr_args"]["args"]))
        out.append(calls)
    return out


@pytest.mark.parametrize("pte", [ADD_MODEL, KEYWORD_SPOTTING], ids=lambda p: p.stem)
def test_decoding_agrees_with_executorch_tooling(
    pte: Path, schema: et_pte.Schema, tmp_path: Path
) -> None:
    reference = _calls_from_reference(pte, tmp_path)
    if reference is None:
        pytest.skip("neither executorch's deserialize_pte_binary nor its flatc is available")
    program = et_pte.read_program(pte.read_bytes(), schema)
    ours = [[(c.operator, list(c.args)) for c in m.kernel_calls] for m in program.methods]
    assert ours == reference
    assert sum(len(m) for m in ours) == (1 if pte == ADD_MODEL else 16)


# --- malformed input --------------------------------------------------------------------


def test_bad_identifier_is_named_at_offset_4(schema: et_pte.Schema) -> None:
    data = bytearray(ADD_MODEL.read_bytes())
    data[4:8] = b"PK\x03\x04"
    with pytest.raises(et_pte.PteError, match=r"offset 4: .*not an ExecuTorch program"):
        et_pte.read_program(bytes(data), schema)


def test_other_schema_version_is_named(schema: et_pte.Schema) -> None:
    data = bytearray(ADD_MODEL.read_bytes())
    data[4:8] = b"ET11"
    with pytest.raises(et_pte.PteError, match=r"'ET11', the schema expects 'ET12'"):
        et_pte.read_program(bytes(data), schema)


@pytest.mark.parametrize("size", [0, 3, 7])
def test_too_short_buffer(schema: et_pte.Schema, size: int) -> None:
    with pytest.raises(et_pte.PteError, match="too short"):
        et_pte.read_program(ADD_MODEL.read_bytes()[:size], schema)


def test_truncation_is_caught_by_the_extended_header(schema: et_pte.Schema) -> None:
    with pytest.raises(et_pte.PteError, match=r"segments end at 1156, the file has 1100"):
        et_pte.read_program(ADD_MODEL.read_bytes()[:1100], schema)


def test_truncation_without_header_names_a_position(schema: et_pte.Schema) -> None:
    data = bytearray(ADD_MODEL.read_bytes()[:600])
    data[8:12] = b"\0\0\0\0"  # no extended header: the flatbuffer reader must catch it
    with pytest.raises(et_pte.PteError, match=r"^offset \d+: "):
        et_pte.read_program(bytes(data), schema)


def test_root_offset_out_of_range(schema: et_pte.Schema) -> None:
    data = bytearray(ADD_MODEL.read_bytes())
    data[0:4] = (0xFFFFFFF0).to_bytes(4, "little")
    with pytest.raises(et_pte.PteError, match=r"^offset 0: root table points to 4294967280"):
        et_pte.read_program(bytes(data), schema)


@pytest.mark.parametrize("pte", [ADD_MODEL, KEYWORD_SPOTTING], ids=lambda p: p.stem)
def test_random_corruption_only_ever_raises_pte_error(pte: Path, schema: et_pte.Schema) -> None:
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
            program = et_pte.read_program(bytes(data), schema)
        except et_pte.PteError as e:
            assert str(e)
            errors += 1
        else:
            assert isinstance(program, et_pte.Program)
            decoded += 1
    assert errors >= 100  # every truncation at least
    assert errors + decoded == 300


def test_operator_index_out_of_range(schema: et_pte.Schema) -> None:
    data = bytearray(ADD_MODEL.read_bytes())
    plan = et_pte.read_root(bytes(data), schema)["execution_plan"][0]
    # Empty the operator table (vector length 0): the add call's op_index 0 dangles.
    pos = plan.offset_of("operators")
    vector = pos + int.from_bytes(data[pos : pos + 4], "little")
    data[vector : vector + 4] = bytes(4)
    with pytest.raises(et_pte.PteError, match="calls operator 0, the operator table has 0"):
        et_pte.read_program(bytes(data), schema)


def _shared_tree(depth: int, fanout: int) -> bytes:
    """A `Node { kids: [Node] }` buffer where every kid of a level is the same next node."""
    data = bytearray(b"\x10\0\0\0NODE")  # root node at 16
    data += (6).to_bytes(2, "little") + (8).to_bytes(2, "little") + (4).to_bytes(2, "little")
    data += bytes(2)  # the one vtable, at 8: 6 bytes, tables of 8 bytes, kids at +4
    for level in range(depth + 1):
        node = len(data)
        kids = fanout if level < depth else 0
        data += (node - 8).to_bytes(4, "little", signed=True) + (4).to_bytes(4, "little")
        data += kids.to_bytes(4, "little")
        child = node + 12 + 4 * kids
        for j in range(kids):
            data += (child - (node + 12 + 4 * j)).to_bytes(4, "little")
    return bytes(data)


def test_shared_offsets_cannot_make_reading_explode() -> None:
    """Vectors whose elements all point at one node: 40**6 visits without the work budget."""
    schema = et_pte.parse_schema(
        'file_identifier "NODE"; table Node { kids: [Node]; } root_type Node;'
    )

    def walk(node: et_pte.TableView) -> int:
        return 1 + sum(walk(kid) for kid in node["kids"])

    assert walk(et_pte.read_root(_shared_tree(2, 3), schema)) == 1 + 3 + 9
    root = et_pte.read_root(_shared_tree(6, 40), schema)
    with pytest.raises(et_pte.PteError, match=r"more elements than a \d+-byte buffer can hold"):
        walk(root)


# --- model.h ----------------------------------------------------------------------------


def test_model_h_declares_an_aligned_const_array_and_its_size() -> None:
    data = ADD_MODEL.read_bytes()
    text = et_pte.model_h(data, source="AddModel.pte")
    assert "alignas(16) const uint8_t model_pte[] = {" in text
    assert "const size_t model_pte_size = sizeof(model_pte);" in text
    assert "section" not in text and "__attribute__" not in text and "PROGMEM" not in text
    assert "// Generated from AddModel.pte" in text
    assert (
        "// model_pte: 1156 bytes, sha256 "
        "538f335dc151a14ee758e69d9bb2113eda66e1bd3346e20db603258cf8a05832"
    ) in text
    assert "0x3c, 0x00, 0x00, 0x00, 0x45, 0x54, 0x31, 0x32," in text  # root offset, "ET12"
    assert text == et_pte.model_h(data, source="AddModel.pte")  # deterministic


@pytest.mark.parametrize("pte", [ADD_MODEL, KEYWORD_SPOTTING], ids=lambda p: p.stem)
def test_model_h_round_trips_to_the_exact_bytes(pte: Path) -> None:
    data = pte.read_bytes()
    assert et_pte.pte_from_model_h(et_pte.model_h(data)) == data
    text = et_pte.model_h(data, name="kws_model")
    assert "const size_t kws_model_size = sizeof(kws_model);" in text
    assert et_pte.pte_from_model_h(text) == data
    assert et_pte.pte_from_model_h(text, name="kws_model") == data


@pytest.mark.parametrize("name", ["", "1model", "my-model", "model pte", "int", "sizeof", "é"])
def test_model_h_rejects_names_that_are_not_c_identifiers(name: str) -> None:
    with pytest.raises(ValueError, match="not a C identifier"):
        et_pte.model_h(b"\0" * 8, name=name)


def test_model_h_rejects_multiline_source_and_empty_input() -> None:
    with pytest.raises(ValueError, match="one line"):
        et_pte.model_h(b"\0" * 8, source="a.pte\n#include <evil>")
    with pytest.raises(ValueError, match=r"^x\.pte is empty"):
        et_pte.model_h(b"", source="x.pte")


def test_pte_from_model_h_detects_an_edited_header() -> None:
    text = et_pte.model_h(ADD_MODEL.read_bytes())
    edited = text.replace("0x45, 0x54, 0x31, 0x32", "0x45, 0x54, 0x31, 0x33", 1)
    with pytest.raises(et_pte.PteError, match="SHA-256 differs"):
        et_pte.pte_from_model_h(edited)
    lines = text.splitlines()
    shortened = "\n".join(line for i, line in enumerate(lines) if i != 20)
    with pytest.raises(et_pte.PteError, match="has 1140 bytes, its comment says 1156"):
        et_pte.pte_from_model_h(shortened)


def test_pte_from_model_h_reads_headers_without_a_digest() -> None:
    text = "alignas(16) static const uint8_t model_pte[] = {\n    0x01,0x02, 255, // end\n};\n"
    assert et_pte.pte_from_model_h(text) == b"\x01\x02\xff"
    with pytest.raises(et_pte.PteError, match="no array 'other' found"):
        et_pte.pte_from_model_h(text, name="other")
    with pytest.raises(et_pte.PteError, match="'256' is not a byte"):
        et_pte.pte_from_model_h("const uint8_t a[] = {256};")


def test_model_h_compiles_to_16_byte_aligned_rodata(tmp_path: Path) -> None:
    gxx = shutil.which("arm-none-eabi-g++")
    if gxx is None:
        pytest.skip("arm-none-eabi-g++ is not installed")
    (tmp_path / "model.h").write_text(et_pte.model_h(ADD_MODEL.read_bytes()))
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
    rodata = re.search(r"\.rodata\s+([0-9a-f]+)\s+\S+\s+\S+\s+\S+\s+2\*\*(\d+)", headers)
    assert rodata is not None, headers
    assert int(rodata.group(1), 16) == 1156
    assert int(rodata.group(2)) >= 4  # 2**4 = 16-byte alignment
