"""What the fuzz harnesses (benchmarks/fuzz_*.py) found, kept as cases.

Each case is an input that once escaped a reader with an error other than its own (a
TypeError out of FlatBuffers' runtime, a ValueError out of `int()`), or took seconds to
minutes (a regex retried at every start, a fixed point that was cubic); now it raises the
reader's own error (`PteError`, `RegistrationError`), or reads, within `FAST_S`. The inputs
are small patches of the fixture programs, or text made by a one-line expression.
"""

from __future__ import annotations

import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "data" / "extras" / "tools"))

import et_dtypes
import et_model_h
import et_pte
import et_registration
from et_fixture import ET_VIEW_CPP, FIXTURE_PTE
from reader_fixture import write_wheel_reader

from generator.pipeline.selection import split_registration
from generator.util.errors import FatalError

#: What each input must be answered within. Before the fixes the slow ones took 6 s to
#: 30 s and more (measured on the inputs below); now they take milliseconds, so the bound
#: has room for a loaded machine.
FAST_S = 3.0
ADD_MODEL = FIXTURE_PTE / "AddModel.pte"


def timed(call: Callable[[], Any]) -> tuple[Any, float]:
    """`call()`'s result (or the exception it raised) and the seconds it took."""
    start = time.perf_counter()
    try:
        result: Any = call()
    except Exception as e:
        result = e
    return result, time.perf_counter() - start


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> et_pte.ProgramReader:
    """The program reader of the wheel's schema (see tests/support/reader_fixture.py)."""
    return et_pte.load_reader(write_wheel_reader(tmp_path_factory.mktemp("r") / "pte_schema"))


# ---------------------------------------------------------------------------------------
# The .pte reader: an offset whose sum passes 2**32 (FlatBuffers' runtime raised TypeError
# "bad number ... for type uint32"). AddModel.pte with the uint32 at `offset` set to
# 0xFFFFFFF0 (the offset to the execution plan, an operator, a chain, an instruction and its
# KernelCall), and the table the message names: the one holding that offset.

OFFSET_PAST_4_GB = {
    152: "offset 60: Program points",
    252: "offset 180: execution plan 0 points",
    296: "offset 180: method 'forward' points",
    332: "offset 312: method 'forward' chain 0 points",
    340: "offset 336: method 'forward' chain 0 instruction 0 points",
}


def _patched(offset: int, value: int = 0xFFFFFFF0) -> bytes:
    data = bytearray(ADD_MODEL.read_bytes())
    struct.pack_into("<I", data, offset, value)
    return bytes(data)


@pytest.mark.parametrize("offset", sorted(OFFSET_PAST_4_GB))
def test_an_offset_past_4_gb_is_a_pte_error(reader: et_pte.ProgramReader, offset: int) -> None:
    data = _patched(offset)
    with pytest.raises(et_pte.PteError) as caught:
        et_pte.read_program(data, reader)
    message = str(caught.value)
    assert "points past the end of the 1156-byte buffer (bad number" in message
    assert OFFSET_PAST_4_GB[offset] in message
    with pytest.raises(et_pte.PteError):  # the dtype reader reads the program first
        et_dtypes.kernel_call_dtypes(data, reader)


def test_the_unpatched_fixture_still_reads(reader: et_pte.ProgramReader) -> None:
    program = et_pte.read_program(ADD_MODEL.read_bytes(), reader)
    assert program.called_operators == ["aten::add.out"]


class _RaisingProgram:
    """A schema's Program whose reading raises a TypeError of this tool's own making."""

    @staticmethod
    def ProgramBufferHasIdentifier(data: bytes, offset: int) -> bool:
        return True

    @staticmethod
    def GetRootAs(data: bytes, offset: int) -> Any:
        raise TypeError("unsupported operand type(s) for +: 'int' and 'NoneType'")


def test_a_type_error_of_the_tool_is_not_taken_for_a_bad_file(tmp_path: Path) -> None:
    schema = type("Schema", (), {"Program": _RaisingProgram})
    fake = et_pte.ProgramReader(tmp_path, schema, "ET12")
    with pytest.raises(TypeError, match="unsupported operand"):
        et_pte.read_program(ADD_MODEL.read_bytes(), fake)


# ---------------------------------------------------------------------------------------
# The model.h codec

#: The case names (the test ids: the inputs are too long to be ones).
MODEL_H_CASES = (
    "unclosed arrays",
    "unclosed comments",
    "size of 5,000 digits",
    "item of 5,000 digits",
    "no array",
)


@pytest.mark.parametrize(
    ("case", "text", "message"),
    [
        # Quadratic: each `a[]={` scanned to the end (21 s at 20,000; "no a byte array").
        ("unclosed arrays", "a[]={" * 20_000, "array a: no closing }; the header is truncated"),
        # Quadratic: each `/*` scanned to the end for its `*/` (1.3 s at 4,000).
        ("unclosed comments", "uint8_t a[] = {" + "/* " * 20_000 + "}", "comment is not closed"),
        # int() of 5,000 digits raised ValueError ("Exceeds the limit (4300 digits)").
        (
            "size of 5,000 digits",
            f"// model_pte: {'9' * 5000} bytes, sha256 {'0' * 64}\nuint8_t model_pte[] = {{1}};",
            f"array model_pte has 1 bytes, its comment says {'9' * 40}...: the header was",
        ),
        # The message quoted all 5,000 digits.
        ("item of 5,000 digits", "uint8_t a[] = {" + "1" * 5000 + "};", f"'{'1' * 40}...' is not"),
        # The typo: "no a byte array found".
        ("no array", "int x;", "no byte array found in the header; regenerate"),
    ],
    ids=MODEL_H_CASES,
)
def test_hostile_model_h_is_a_pte_error_at_once(case: str, text: str, message: str) -> None:
    result, seconds = timed(lambda: et_model_h.pte_from_model_h(text))
    assert isinstance(result, et_pte.PteError), (case, result)
    assert message in str(result)
    assert len(str(result)) < 300
    assert seconds < FAST_S, (case, seconds)


def test_model_h_forms_still_read() -> None:
    text = "const unsigned char model_pte[4] = {1, /* two */ 0x2, 3, // three\n 255};\n"
    assert et_model_h.pte_from_model_h(text) == bytes([1, 2, 3, 255])
    ours = et_model_h.model_h(b"\x0a\x0b", operators=["aten::add.out"])
    assert et_model_h.pte_from_model_h(ours) == b"\x0a\x0b"
    assert et_model_h.pte_from_model_h(ours.replace("2 bytes", "002 bytes")) == b"\x0a\x0b"
    with pytest.raises(et_pte.PteError, match="has 2 bytes, its comment says 3"):
        et_model_h.pte_from_model_h(ours.replace("2 bytes", "3 bytes"))


# ---------------------------------------------------------------------------------------
# The kernel-registration scraper

REGISTRATION_CASES = (
    "macro chain",
    "macros x kernels",
    "function heads",
    "codegen count",
    "prim op count",
    "macro count",
)
KERNEL = 'Kernel("aten::add.out", [](auto& context, auto stack) { stack.size() == 3; })\n'


def _library(root: Path, codegen: str = KERNEL, prim_ops: str | None = None) -> Path:
    source = root / et_registration.LIBRARY_CODEGEN_DIR / "RegisterKernelsByOperator.cpp"
    source.parent.mkdir(parents=True)
    source.write_text(codegen)
    if prim_ops is not None:
        prim = root / et_registration.LIBRARY_PRIM_OPS
        prim.parent.mkdir(parents=True)
        prim.write_text(prim_ops)
        (prim.parent / "et_view.cpp").write_text(ET_VIEW_CPP)
    return root


def _macro_chain(n: int) -> str:
    """M0 calls M1 ... calls Mn, which checks the size; a prim op calls M0 (cubic before:
    30 s for n = 300)."""
    chain = "".join(f"#define M{i}(x) M{i + 1}(x)\n" for i in range(n))
    return chain + f"#define M{n}(x) stack.size() == 4\n" + 'Kernel("p::a", [](){ M0(x); })\n'


def _many_macros(n: int) -> str:
    """n macros and n prim ops, each calling the last macro."""
    macros = "".join(f"#define M{i}(x) stack.size() == {i % 7 + 1}\n" for i in range(n))
    kernels = "".join(f'Kernel("p::a{i}", [](){{ M{n - 1}(x); }})\n' for i in range(n))
    return macros + kernels


@pytest.mark.parametrize(
    ("case", "codegen", "prim_ops", "expected"),
    [
        ("macro chain", KERNEL, _macro_chain(300), {"aten::add.out": 3, "p::a": 4}),
        ("macros x kernels", KERNEL, _many_macros(3000), 3001),
        # `f(f(f(...` with `Kernel("p::a", f)`: the definition search scanned each `f(` to the
        # end (6.5 s for 32 KB).
        ("function heads", KERNEL, 'Kernel("p::a", f)\n' + "f(" * 16_000, "prim op p::a has no"),
        # int() of 5,000 digits raised ValueError.
        ("codegen count", KERNEL.replace("3", "3" * 5000), None, "kernel aten::add.out: `stack"),
        ("prim op count", KERNEL, KERNEL.replace("3", "3" * 5000), "prim op aten::add.out: `s"),
        ("macro count", KERNEL, "#define M(x) stack.size() == " + "3" * 5000, "macro M: `stack"),
    ],
    ids=REGISTRATION_CASES,
)
def test_hostile_registration_is_read_or_refused_at_once(
    tmp_path: Path, case: str, codegen: str, prim_ops: str | None, expected: Any
) -> None:
    library = _library(tmp_path, codegen, prim_ops)
    result, seconds = timed(lambda: et_registration.library_kernels(library))
    assert seconds < FAST_S, (case, seconds)
    if isinstance(expected, str):
        assert isinstance(result, et_registration.RegistrationError), (case, result)
        assert expected in str(result)
        assert len(str(result)) < 400
    elif isinstance(expected, int):
        assert len(result) == expected
        assert result["p::a0"] == (3000 - 1) % 7 + 1
    else:
        assert result == expected


def test_a_prim_op_takes_the_first_macro_it_calls_that_checks(tmp_path: Path) -> None:
    prim_ops = (
        "#define A(x) stack.size() == 2\n"
        "#define B(x) stack.size() == 5\n"
        "#define C(x) B(x)\n"
        'Kernel("p::b_then_a", [](){ B(x); A(x); })\n'
        'Kernel("p::through_c", [](){ C(x); })\n'
        'Kernel("p::view", et_view)\n'
    )
    kernels = et_registration.library_kernels(_library(tmp_path, KERNEL, prim_ops))
    assert kernels == {"aten::add.out": 3, "p::b_then_a": 2, "p::through_c": 5, "p::view": 3}


# ---------------------------------------------------------------------------------------
# The kernel-selection step's split of the codegen's registration source

TABLE = "static Kernel kernels_to_register[] = {"
TABLE_CLOSED = (
    TABLE + "\n // Generated kernels\n};\n"
    "static auto success_with_kernel_reg = register_kernels(kernel_span);\n"
)


@pytest.mark.parametrize(
    ("case", "text", "message"),
    [
        # The table's end was searched from every blank of a run (6 s for 40,000 blanks).
        ("blanks", TABLE + " " * 40_000, "no longer has the layout"),
        # The span with its comments was matched from every comment line (7.5 s for 16,000).
        ("comment lines", TABLE_CLOSED + "//x\n" * 20_000, "has no `static KernelSpan"),
    ],
    ids=["blanks", "comment lines"],
)
def test_hostile_registration_source_is_refused_at_once(case: str, text: str, message: str) -> None:
    result, seconds = timed(lambda: split_registration(text))
    assert isinstance(result, FatalError), (case, result)
    assert message in str(result)
    assert seconds < FAST_S, (case, seconds)


def test_the_split_still_drops_the_span_and_the_comments_above_it() -> None:
    text = TABLE_CLOSED.replace(
        "static auto", "// one\n// two\nstatic KernelSpan kernel_span(\n    a, b);\nstatic auto"
    )
    head, entries, tail = split_registration(text.replace("\n // Generated", "),\n // Generated"))
    assert head == TABLE + "\n"
    assert entries == {}
    assert tail == "};\n"
