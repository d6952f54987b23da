"""Read ExecuTorch `.pte` programs and check them against a library's kernel registration.

Python standard library only, apart from the program reader generated beside it: this file
ships in every generated Arduino library under `extras/tools/` and must run there with no
pip packages (it is written to run on Python 3.8 and newer). The generator imports it too.

What it does:

* `load_reader(folder)` imports a library's program reader, `extras/tools/pte_schema/`:
  the Python flatc generated from the library's schema (`program_generated.py`), with
  FlatBuffers' own Python runtime beside it (`flatbuffers/`); generator/build/reader.py writes
  it at build time. The FlatBuffers decoding is theirs, not ours.
* `read_program(pte_bytes, reader)` reads a `.pte` through it and returns its methods,
  operators, kernel calls and delegate calls. FlatBuffers' Python runtime follows offsets
  without bounds checks, so a thin guard checks each table it opens and caps the work; every
  malformed input raises `PteError` naming the file position.
* `model_h` / `pte_from_model_h` turn a `.pte` into the `model.h` a sketch includes, and back.
* `library_kernels` / `check_model` compare the operators a `.pte` calls, and how many
  arguments each call passes, with what the library registers (its generated kernel
  registration and ExecuTorch's prim ops), so a mismatch is found before flashing a board;
  `registered_backends` / `check_backends` do the same for the backends of its delegates.

Facts used, with their sources (ExecuTorch and FlatBuffers sources):

* FlatBuffers binary format (flatbuffers docs, "FlatBuffers internals"): little-endian; the
  root table's uoffset at byte 0, the 4-byte file identifier at byte 4; a table starts with
  an int32 soffset to its vtable (vtable = table - soffset); a vtable holds uint16 vtable
  size, uint16 table size, then one uint16 field offset per field.
* ExecuTorch's schema (`schema/program.fbs`): root table `Program`; its `execution_plan`
  lists the methods, each with `operators`, `delegates`, `chains` of `instructions` whose
  `instr_args` union holds a `KernelCall` (op_index, args) or a `DelegateCall`
  (delegate_index, args), among others.
* ExecuTorch extended header (`schema/extended_header.h`): optional, at byte 8, magic
  "eh00", uint32 header length, then uint64 program_size, segment_base_offset and
  (if the length allows) segment_data_size.
* Runtime errors (`runtime/core/error.h`): `OperatorMissing` = 0x14, returned by
  `Method::load` when a kernel is not registered; `InvalidProgram` = 0x23, returned by
  `Method::execute` when a generated kernel wrapper's `stack.size() == N` check fails;
  `NotFound` = 0x20, returned by `Method::load` for a delegate whose backend is not
  registered (runtime/executor/method.cpp, "Backend %s is not registered.").
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import struct
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "ERROR_INVALID_PROGRAM",
    "ERROR_NOT_FOUND",
    "ERROR_OPERATOR_MISSING",
    "DelegateCall",
    "EtPteError",
    "ExtendedHeader",
    "KernelCall",
    "Method",
    "MissingBackend",
    "ModelResult",
    "Operator",
    "Problem",
    "Program",
    "ProgramReader",
    "PteError",
    "RegistrationError",
    "SchemaError",
    "all_kernels_h",
    "check_backends",
    "check_library",
    "check_model",
    "check_program_bytes",
    "example_names",
    "kernel_selection_h",
    "kernel_symbol",
    "library_kernels",
    "load_reader",
    "model_h",
    "pte_from_model_h",
    "read_program",
    "registered_backends",
    "registered_kernels",
    "registered_prim_ops",
]

#: ExecuTorch `Error::OperatorMissing` (runtime/core/error.h).
ERROR_OPERATOR_MISSING = 0x14
#: ExecuTorch `Error::InvalidProgram` (runtime/core/error.h).
ERROR_INVALID_PROGRAM = 0x23
#: ExecuTorch `Error::NotFound` (runtime/core/error.h), returned by `Method::load` for a
#: delegate whose backend is not registered (runtime/executor/method.cpp).
ERROR_NOT_FOUND = 0x20


class EtPteError(Exception):
    """Base of every error this module raises."""


class SchemaError(EtPteError):
    """The program reader generated from the schema is missing, or not ExecuTorch's."""


class PteError(EtPteError):
    """A `.pte` (or the bytes recovered from a `model.h`) is not a readable program.

    The message names the byte position where reading failed.
    """


class RegistrationError(EtPteError):
    """The library's generated kernel registration sources could not be read."""


# ---------------------------------------------------------------------------------------
# The program reader: flatc's Python for the library's program.fbs

#: The module flatc generates for program.fbs (--gen-onefile: every table in one module).
READER_MODULE = "program_generated"


@dataclass(frozen=True)
class ProgramReader:
    """A program reader package, imported.

    Attributes:
        folder: the package folder (`extras/tools/pte_schema/` of a library).
        schema: its `program_generated` module: flatc's classes for each table (`Program`,
            `ExecutionPlan`, `KernelCall`...), an accessor per field, and each union as a
            class of member constants (`InstructionArguments.KernelCall`).
        file_identifier: the schema's file identifier ("ET12").
    """

    folder: Path
    schema: Any
    file_identifier: str


#: Reader modules imported, by the name given from their files' hash: (schema, identifier).
_IMPORTED: dict[str, tuple[Any, str]] = {}


def load_reader(folder: str | Path) -> ProgramReader:
    """Import the program reader package at `folder` (see ProgramReader).

    The package is imported by path under a name of its own (from a hash of its files), so
    readers of different schemas live side by side in one process and no `sys.path` entry
    or top-level `flatbuffers` module is involved. The same files are imported once.

    Raises:
        SchemaError: `folder` holds no reader, or one that does not import or is not of
            ExecuTorch's program schema (no table Program).
    """
    path = Path(folder)
    files = [path / "__init__.py", path / f"{READER_MODULE}.py"]
    if not all(f.is_file() for f in files):
        raise SchemaError(
            f"no program reader in {path} (its __init__.py and {READER_MODULE}.py, "
            "generated from the library's schema when the library is built); regenerate "
            "the library"
        )
    digest = hashlib.sha256()
    try:
        for f in [*files, *sorted(path.glob("flatbuffers/*.py"))]:
            digest.update(f"{f.relative_to(path).as_posix()}\0".encode() + f.read_bytes())
    except OSError as e:
        raise SchemaError(f"cannot read the program reader in {path}: {e}") from None
    name = "_et_pte_reader_" + digest.hexdigest()[:16]
    if name in _IMPORTED:
        return ProgramReader(path, *_IMPORTED[name])
    spec = importlib.util.spec_from_file_location(
        name, files[0], submodule_search_locations=[str(path)]
    )
    if spec is None or spec.loader is None:
        raise SchemaError(f"cannot import the program reader in {path}")
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    # No __pycache__ in the library: it is a published tree (the generator checks the one it
    # is building), and may be read-only once installed.
    write_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        spec.loader.exec_module(package)
        schema = importlib.import_module(f"{name}.{READER_MODULE}")
        identifier = str(package.FILE_IDENTIFIER)
        # The root table ExecuTorch's schema declares, and its file identifier check.
        schema.Program.GetRootAs  # noqa: B018
        schema.Program.ProgramBufferHasIdentifier  # noqa: B018
    except Exception as e:  # a damaged or foreign package: SyntaxError, ImportError...
        for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[module]
        raise SchemaError(
            f"the program reader in {path} does not import ({type(e).__name__}: {e}); "
            "regenerate the library"
        ) from None
    finally:
        sys.dont_write_bytecode = write_bytecode
    _IMPORTED[name] = (schema, identifier)
    return ProgramReader(path, schema, identifier)


# ---------------------------------------------------------------------------------------
# ExecuTorch program


@dataclass(frozen=True)
class ExtendedHeader:
    """ExecuTorch's extended header (schema/extended_header.h); sizes and offsets in bytes."""

    program_size: int
    segment_base_offset: int
    segment_data_size: int


@dataclass(frozen=True)
class Operator:
    """An operator a method calls: `name` ("aten::add") and `overload` ("out", maybe "")."""

    name: str
    overload: str

    @property
    def full_name(self) -> str:
        """`name.overload`, or `name` when there is no overload: the registry key."""
        return f"{self.name}.{self.overload}" if self.overload else self.name


@dataclass(frozen=True)
class KernelCall:
    """One KernelCall instruction.

    Attributes:
        instruction: its index in the chain; chain: the chain's index.
        op_index: index into the method's operators; operator: its full name.
        args: the value indices passed (the kernel's stack, inputs and outputs).
    """

    chain: int
    instruction: int
    op_index: int
    operator: str
    args: tuple[int, ...]

    @property
    def arg_count(self) -> int:
        """How many values the call puts on the kernel's stack."""
        return len(self.args)


@dataclass(frozen=True)
class DelegateCall:
    """One DelegateCall instruction: `delegate_id` is the backend id ("" if unknown)."""

    chain: int
    instruction: int
    delegate_index: int
    delegate_id: str
    args: tuple[int, ...]


@dataclass(frozen=True)
class Method:
    """One execution plan.

    Attributes:
        name: the method name ("forward").
        operators: the operator table, in order.
        kernel_calls, delegate_calls: those instructions, in execution order.
        instruction_count: every instruction in every chain (moves, jumps, frees too).
        delegates: backend ids of the method's delegates.
        value_count: entries of the values table; inputs, outputs: value indices.
    """

    name: str
    operators: tuple[Operator, ...]
    kernel_calls: tuple[KernelCall, ...]
    delegate_calls: tuple[DelegateCall, ...]
    instruction_count: int
    delegates: tuple[str, ...]
    value_count: int
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


@dataclass(frozen=True)
class Program:
    """A decoded `.pte`: file identifier, schema version, header, methods, segments."""

    file_identifier: str
    version: int
    extended_header: ExtendedHeader | None
    methods: tuple[Method, ...]
    segment_count: int

    def method(self, name: str) -> Method:
        """The method called `name`. Raises KeyError when there is none."""
        for m in self.methods:
            if m.name == name:
                return m
        raise KeyError(name)

    @property
    def operators(self) -> list[str]:
        """Full names of every operator any method lists, sorted, without duplicates."""
        return sorted({op.full_name for m in self.methods for op in m.operators})

    @property
    def called_operators(self) -> list[str]:
        """Registry names of the operators its kernel calls use ("aten::add.out"), sorted,
        without duplicates: what a model.h selects (delegate calls need no kernel)."""
        return sorted({c.operator for m in self.methods for c in m.kernel_calls})


def _extended_header(data: bytes) -> ExtendedHeader | None:
    if len(data) < 16 or data[8:12] != b"eh00":
        return None
    length = struct.unpack_from("<I", data, 12)[0]
    if length < 24 or 8 + length > len(data):
        raise PteError(f"offset 12: extended header length {length} is invalid")
    program_size, segment_base = struct.unpack_from("<QQ", data, 16)
    segment_size = struct.unpack_from("<Q", data, 32)[0] if length >= 32 else 0
    if program_size > len(data):
        raise PteError(
            f"offset 16: the extended header says the program is {program_size} bytes, "
            f"the file has {len(data)} (truncated?)"
        )
    if segment_base and segment_base + segment_size > len(data):
        raise PteError(
            f"offset 24: segments end at {segment_base + segment_size}, "
            f"the file has {len(data)} bytes (truncated?)"
        )
    return ExtendedHeader(program_size, segment_base, segment_size)


def _check_identifier(data: bytes, reader: ProgramReader) -> None:
    if len(data) < 8:
        raise PteError(f"offset 0: {len(data)} bytes is too short for a FlatBuffers buffer")
    if reader.schema.Program.ProgramBufferHasIdentifier(data, 0):
        return
    ident = data[4:8]
    shown = ident.decode("latin-1")
    if ident[:2] == b"ET":
        raise PteError(
            f"offset 4: file identifier {shown!r}, the schema expects "
            f"{reader.file_identifier!r}: the .pte was written for another schema "
            "version (the runtime refuses it with InvalidProgram); re-export it with "
            "the ExecuTorch that built the library"
        )
    raise PteError(
        f"offset 4: file identifier {shown!r} is not {reader.file_identifier!r}: "
        "not an ExecuTorch program"
    )


#: What FlatBuffers' Python runtime raises on an offset past the end of the buffer.
_CORRUPT = (struct.error, IndexError, ValueError, OverflowError)
#: And on an offset sum past 2**32 (flatbuffers/number_types.py `enforce_number` raises
#: TypeError "bad number ..."); any other TypeError is a bug of this tool, not a bad file.
_OUT_OF_RANGE = "bad number "


class _Guard:
    """The checks FlatBuffers' Python runtime leaves out, on what `read_program` reads.

    The runtime reads wherever offsets point: past the end it fails (struct.error, turned
    into a PteError at the last position checked), but a vtable before byte 0 reads from the
    end (struct reads negative offsets from the end), and vectors whose elements all point at
    one table make a walk exponential. So each table is checked before its fields are read
    (the verifier's table check), and the elements visited are capped: an honest buffer
    holds at most one per 4 bytes, and the program is read once.
    """

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.budget = 4 * len(data) + 4096
        self.pos = 0
        self.what = "the root table"

    def spend(self, n: int) -> None:
        self.budget -= n
        if self.budget < 0:
            raise PteError(
                f"offset {self.pos}: more elements than a {len(self.data)}-byte buffer can "
                "hold (offsets are shared or corrupt)"
            )

    def table(self, table: Any, what: str) -> Any:
        """`table` (a generated table object), once its header is inside the buffer."""
        size = len(self.data)
        pos: int = table._tab.Pos
        self.pos, self.what = pos, what
        self.spend(1)
        if pos < 0 or pos + 4 > size:
            raise PteError(f"offset {pos}: {what} lies outside the {size}-byte buffer")
        vtable = pos - struct.unpack_from("<i", self.data, pos)[0]
        if vtable < 0 or vtable + 4 > size:
            raise PteError(f"offset {pos}: {what} has its vtable at {vtable}, outside the buffer")
        vt_size, t_size = struct.unpack_from("<HH", self.data, vtable)
        if vt_size < 4 or vt_size % 2 or vtable + vt_size > size:
            raise PteError(f"offset {vtable}: {what} vtable size {vt_size} is invalid")
        if t_size < 4 or pos + t_size > size:
            raise PteError(f"offset {pos}: {what} table size {t_size} runs past the buffer")
        return table

    def count(self, n: int, what: str) -> range:
        """range(n) for a vector of `n` elements (each at least 1 byte), within the budget."""
        if n > len(self.data):
            raise PteError(
                f"offset {self.pos}: {what} has {n} elements, more than the "
                f"{len(self.data)}-byte buffer holds"
            )
        self.spend(n)
        return range(n)

    def at(self, table: Any, what: str) -> None:
        """Name `table` (already checked) as the position of what is read next."""
        self.pos, self.what = table._tab.Pos, what

    def text(self, value: bytes | None) -> str:
        """A string field's bytes as text ("" when absent)."""
        return value.decode("utf-8") if value is not None else ""


def read_program(pte_bytes: bytes, reader: ProgramReader) -> Program:
    """Read an ExecuTorch `.pte` through `reader` (from `load_reader`).

    Args:
        pte_bytes: the whole file. A flatbuffer whose root offset is at byte 0; the
            extended header, when present, starts at byte 8.

    Returns:
        Program with every method's operators, kernel calls (operator full name and
        argument indices), delegate calls and instruction count.

    Raises:
        PteError: bad identifier, truncated buffer, offsets out of range, an operator
            index outside the operator table, or more structure than the bytes can hold.
        SchemaError: the reader lacks a table or field this module reads (a schema
            ExecuTorch changed in a way this tool does not know).
    """
    data = bytes(pte_bytes)
    header = _extended_header(data)
    _check_identifier(data, reader)
    root = struct.unpack_from("<I", data, 0)[0]
    if root >= len(data):
        raise PteError(
            f"offset 0: root table points to {root}, past the end of the {len(data)}-byte buffer"
        )
    guard = _Guard(data)
    try:
        program = guard.table(reader.schema.Program.GetRootAs(data, 0), "Program")
        plans = guard.count(program.ExecutionPlanLength(), "Program.execution_plan")
        methods = [_read_method(guard, reader.schema, program.ExecutionPlan(i), i) for i in plans]
        guard.at(program, "Program")
        version = int(program.Version())
        segments = program.SegmentsLength()
    except UnicodeDecodeError:
        raise PteError(
            f"offset {guard.pos}: {guard.what} holds a string that is not UTF-8"
        ) from None
    except (*_CORRUPT, TypeError) as e:
        if isinstance(e, TypeError) and not str(e).startswith(_OUT_OF_RANGE):
            raise
        raise PteError(
            f"offset {guard.pos}: {guard.what} points past the end of the {len(data)}-byte "
            f"buffer ({e})"
        ) from None
    except AttributeError as e:
        raise SchemaError(
            f"the program reader in {reader.folder} lacks {getattr(e, 'name', None) or e}: "
            "ExecuTorch's "
            "schema changed in a way et_pte.py does not know (a bug in this tool)"
        ) from None
    return Program(
        file_identifier=data[4:8].decode("latin-1"),
        version=version,
        extended_header=header,
        methods=tuple(methods),
        segment_count=segments,
    )


def _ints(guard: _Guard, n: int, get: Any, what: str) -> tuple[int, ...]:
    return tuple(int(get(j)) for j in guard.count(n, what))


def _read_method(guard: _Guard, schema: Any, plan: Any, index: int) -> Method:
    guard.table(plan, f"execution plan {index}")
    name = guard.text(plan.Name())
    where = f"method {name!r}"
    ops: list[Operator] = []
    for j in guard.count(plan.OperatorsLength(), f"{where} operators"):
        op = guard.table(plan.Operators(j), f"{where} operator {j}")
        ops.append(Operator(guard.text(op.Name()), guard.text(op.Overload())))
    operators = tuple(ops)
    guard.at(plan, where)
    delegates = tuple(
        guard.text(guard.table(plan.Delegates(j), f"{where} delegate {j}").Id())
        for j in guard.count(plan.DelegatesLength(), f"{where} delegates")
    )
    guard.at(plan, where)
    values = plan.ValuesLength()
    inputs = _ints(guard, plan.InputsLength(), plan.Inputs, f"{where} inputs")
    outputs = _ints(guard, plan.OutputsLength(), plan.Outputs, f"{where} outputs")
    members = schema.InstructionArguments
    kernel_calls: list[KernelCall] = []
    delegate_calls: list[DelegateCall] = []
    count = 0
    for c in guard.count(plan.ChainsLength(), f"{where} chains"):
        chain = guard.table(plan.Chains(c), f"{where} chain {c}")
        for i in guard.count(chain.InstructionsLength(), f"{where} chain {c} instructions"):
            at = f"{where} chain {c} instruction {i}"
            instruction = guard.table(chain.Instructions(i), at)
            count += 1
            kind = instruction.InstrArgsType()
            if kind not in (members.KernelCall, members.DelegateCall):
                continue
            value = instruction.InstrArgs()
            if value is None:
                raise PteError(f"offset {guard.pos}: {at} has a type but no value")
            if kind == members.KernelCall:
                call = schema.KernelCall()
                call.Init(value.Bytes, value.Pos)
                guard.table(call, f"{at} (KernelCall)")
                index = int(call.OpIndex())
                if not 0 <= index < len(operators):
                    raise PteError(
                        f"offset {guard.pos}: {at} calls operator {index}, the operator "
                        f"table has {len(operators)}"
                    )
                args = _ints(guard, call.ArgsLength(), call.Args, f"{at} args")
                kernel_calls.append(KernelCall(c, i, index, operators[index].full_name, args))
            else:
                delegate = schema.DelegateCall()
                delegate.Init(value.Bytes, value.Pos)
                guard.table(delegate, f"{at} (DelegateCall)")
                index = int(delegate.DelegateIndex())
                if not 0 <= index < len(delegates):
                    raise PteError(
                        f"offset {guard.pos}: {at} calls delegate {index}, the method has "
                        f"{len(delegates)}"
                    )
                args = _ints(guard, delegate.ArgsLength(), delegate.Args, f"{at} args")
                delegate_calls.append(DelegateCall(c, i, index, delegates[index], args))
    return Method(
        name=name,
        operators=operators,
        kernel_calls=tuple(kernel_calls),
        delegate_calls=tuple(delegate_calls),
        instruction_count=count,
        delegates=delegates,
        value_count=values,
        inputs=inputs,
        outputs=outputs,
    )


# ---------------------------------------------------------------------------------------
# model.h

#: The C array a model.h declares unless told otherwise (every example sketch uses it);
#: must match generator/layout.py MODEL_ARRAY (a test checks).
MODEL_ARRAY = "model_pte"

_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_C_KEYWORDS = frozenset(
    (
        "alignas",
        "alignof",
        "and",
        "asm",
        "auto",
        "bool",
        "break",
        "case",
        "catch",
        "char",
        "class",
        "const",
        "constexpr",
        "continue",
        "decltype",
        "default",
        "delete",
        "do",
        "double",
        "else",
        "enum",
        "explicit",
        "export",
        "extern",
        "false",
        "float",
        "for",
        "friend",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "mutable",
        "namespace",
        "new",
        "noexcept",
        "not",
        "nullptr",
        "operator",
        "or",
        "private",
        "protected",
        "public",
        "register",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "struct",
        "switch",
        "template",
        "this",
        "throw",
        "true",
        "try",
        "typedef",
        "typeid",
        "typename",
        "union",
        "unsigned",
        "using",
        "virtual",
        "void",
        "volatile",
        "while",
    )
)


def is_c_identifier(name: str) -> bool:
    """Whether `name` can be used verbatim as a C++ variable name."""
    return bool(_C_IDENTIFIER.match(name)) and name not in _C_KEYWORDS


#: Kernel selection symbols (C linkage), shared by model.h and the library's generated
#: sources in src/executorch/codegen/ (generator/build/selection.py writes those):
#: `et_arduino_register_<op>` registers one operator's kernels (library, one archive member
#: per operator); `et_arduino_select_<op>` is what the runtime's registry hook calls for each
#: operator: a model.h defines it (weak) to call the register function, else the library's
#: default member defines it empty; `et_arduino_kernels_fallback` is defined (weak, empty) by
#: every selecting model.h, else the library's member registers every kernel (a model.h from
#: before kernel selection, or pte_to_header.py --all-kernels).
REGISTER_PREFIX = "et_arduino_register_"
SELECT_PREFIX = "et_arduino_select_"
FALLBACK_SYMBOL = "et_arduino_kernels_fallback"
#: `et_arduino_select_all_kernels`: what a model.h that cannot or must not select (written with
#: --all-kernels, or without reading the program) defines (weak), calling the library's
#: `et_arduino_register_all_kernels` (in the fallback's member): every kernel registers even
#: beside model.h files that select theirs.
SELECT_ALL_SYMBOL = "et_arduino_select_all_kernels"
REGISTER_ALL_SYMBOL = "et_arduino_register_all_kernels"


def all_kernels_h() -> list[str]:
    """The lines of a model.h that registers every kernel of the library (see
    `SELECT_ALL_SYMBOL`), for a program whose operators are not known (not read, or a sketch
    that also loads programs from elsewhere)."""
    return [
        "// Kernel selection: every kernel of the library (this header does not name its",
        "// program's operators; see \"Kernel selection\" in the library's README).",
        "#ifndef ET_ARDUINO_SELECT_ALL_KERNELS",
        "#define ET_ARDUINO_SELECT_ALL_KERNELS",
        f'extern "C" void {REGISTER_ALL_SYMBOL}(void);',
        f'extern "C" __attribute__((weak)) void {SELECT_ALL_SYMBOL}(void) {{',
        f"  {REGISTER_ALL_SYMBOL}();",
        "}",
        "#endif",
    ]


def kernel_symbol(operator: str) -> str:
    """The C identifier part naming `operator` in the kernel selection symbols.

    "aten::add.out" -> "aten_add_out", "cortex_m::quantized_add.out" ->
    "cortex_m_quantized_add_out": "::" and every character that cannot be in a C identifier
    become "_". The generator refuses a library whose operators collide under this mapping.

    Raises:
        ValueError: `operator` is empty or has no identifier character.
    """
    symbol = re.sub(r"[^A-Za-z0-9_]", "_", operator.replace("::", "_"))
    if not operator or not symbol.strip("_"):
        raise ValueError(f"operator name {operator!r} cannot be a kernel selection symbol")
    return symbol


def kernel_selection_h(operators: Iterable[str]) -> list[str]:
    """The lines of model.h that select the kernels of `operators` (registry names).

    Each operator gets a weak `et_arduino_select_<op>` calling the library's
    `et_arduino_register_<op>`, inside an include guard of its own, so several model.h files
    in one sketch (one translation unit or several) register the union of their operators;
    and the weak, empty `et_arduino_kernels_fallback` says "this sketch selects its kernels"
    (without it the library registers every kernel). Nothing here runs before the runtime's
    first registry lookup (Program::load_method): a sketch that never loads a method links no
    kernel. Empty `operators` (a program of delegate calls only) selects no kernel.
    """
    lines = [
        "// Kernel selection: register and link only the kernels this program calls (see",
        '// "Kernel selection" in the library\'s README). Several model.h files in one sketch',
        "// register the union of their operators.",
        "#ifndef ET_ARDUINO_KERNEL_SELECTION",
        "#define ET_ARDUINO_KERNEL_SELECTION",
        f'extern "C" __attribute__((weak)) void {FALLBACK_SYMBOL}(void) {{}}',
        "#endif",
    ]
    for op in sorted(set(operators)):
        sym = kernel_symbol(op)
        guard = f"ET_ARDUINO_SELECT_{sym}"
        lines += [
            f"// {op}",
            f"#ifndef {guard}",
            f"#define {guard}",
            f'extern "C" void {REGISTER_PREFIX}{sym}(void);',
            f'extern "C" __attribute__((weak)) void {SELECT_PREFIX}{sym}(void) {{',
            f"  {REGISTER_PREFIX}{sym}();",
            "}",
            "#endif",
        ]
    return lines


def model_h(
    pte_bytes: bytes,
    *,
    name: str = MODEL_ARRAY,
    source: str = "model.pte",
    operators: Iterable[str] | None = None,
    all_kernels: bool = False,
) -> str:
    """The C++ header text a sketch includes to get the program bytes.

    Declares `alignas(16) const uint8_t <name>[]` (plain read-only data: no section
    attribute, so every Arduino core's linker script places it in flash) and
    `const size_t <name>_size = sizeof(<name>)`. A comment records the byte count and
    SHA-256 so `pte_from_model_h` can recover and verify the exact bytes. Deterministic:
    the same input gives the same text.

    Args:
        pte_bytes: the `.pte` file contents.
        name: the array name; must be a C identifier.
        source: the file name recorded in the banner (one line of text).
        operators: the operators the program's kernel calls use (registry names); the
            header then selects exactly their kernels (`kernel_selection_h`). None: no
            selection, the library registers every kernel unless another model.h of the
            sketch selects its own (the header of library 0.2.0).
        all_kernels: instead, register every kernel whatever the other model.h files select
            (`all_kernels_h`).

    Raises:
        ValueError: `name` is not a C identifier, `source` spans lines, `pte_bytes` is
            empty (a zero-length array does not compile), or an operator name has no
            identifier character.
    """
    if not is_c_identifier(name):
        raise ValueError(
            f"array name {name!r} is not a C identifier: it is emitted verbatim, so "
            "anything else fails to compile; use letters, digits and _"
        )
    if "\n" in source or "\r" in source:
        raise ValueError(f"source {source!r} must be one line")
    data = bytes(pte_bytes)
    if not data:
        raise ValueError(f"{source} is empty; export the model again")
    digest = hashlib.sha256(data).hexdigest()
    lines = [
        f"// Generated from {source} by et_pte.py (extras/tools). Do not edit.",
        "// Regenerate: python3 extras/tools/pte_to_header.py MODEL.pte -o model.h"
        + (f" --name {name}" if name != MODEL_ARRAY else ""),
        f"// {name}: {len(data)} bytes, sha256 {digest}",
        "#pragma once",
        "",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        "// 16-byte aligned: ExecuTorch reads tensors and the flatbuffer in place.",
        f"alignas(16) const uint8_t {name}[] = {{",
    ]
    for i in range(0, len(data), 16):
        lines.append("    " + ", ".join(f"0x{b:02x}" for b in data[i : i + 16]) + ",")
    lines.append("};")
    lines.append(f"const size_t {name}_size = sizeof({name});")
    if all_kernels:
        lines += ["", *all_kernels_h()]
    elif operators is not None:
        lines += ["", *kernel_selection_h(operators)]
    return "\n".join(lines) + "\n"


#: `NAME[] = {` or `NAME[N] = {`, then the body up to `}`, or to the end of the text when
#: nothing closes it (matched once, not retried at every later array: linear time).
_ARRAY = re.compile(
    r"\b(?P<name>[A-Za-z_]\w*)\s*\[\s*\d*\s*\]\s*=\s*\{(?P<body>[^}]*)(?P<close>\}?)"
)
_DIGEST = re.compile(r"//\s*(?P<name>\w+):\s*(?P<size>\d+) bytes, sha256 (?P<sha>[0-9a-f]{64})")
#: A comment in an array body; an unclosed block comment runs to the end (linear time).
_COMMENT = re.compile(r"//[^\n]*|/\*(?:.*?\*/|.*\Z)", re.S)


def _shown(item: str) -> str:
    """`item` for a message: quoted, at most 40 characters of it."""
    return repr(item if len(item) <= 40 else item[:40] + "...")


def pte_from_model_h(text: str, *, name: str | None = None) -> bytes:
    """Recover the `.pte` bytes from a `model.h` (ours, or any `uint8_t NAME[] = {0x..}`).

    Args:
        text: the header text.
        name: the array to read; None: the one named in our size/sha256 comment, else
            the first byte array in the file.

    Returns:
        The bytes, verified against the recorded size and SHA-256 when the header has them.

    Raises:
        PteError: no such array, an array or comment not closed, a value that is not a
            byte, or a size/hash mismatch.
    """
    recorded = {m.group("name"): m for m in _DIGEST.finditer(text)}
    if name is None and recorded:
        name = next(iter(recorded))
    for m in _ARRAY.finditer(text):
        array = m.group("name")
        if name is not None and array != name:
            continue
        if not m.group("close"):
            raise PteError(f"array {array}: no closing }}; the header is truncated")
        out = bytearray()
        body = m.group("body")
        for comment in _COMMENT.finditer(body):
            if comment.group().startswith("/*") and not comment.group().endswith("*/"):
                raise PteError(f"array {array}: a /* comment is not closed")
        for item in _COMMENT.sub(" ", body).split(","):
            item = item.strip()
            if not item:
                continue
            try:
                value = int(item, 0)
            except ValueError:
                raise PteError(f"array {array}: {_shown(item)} is not a number") from None
            if not 0 <= value <= 255:
                raise PteError(f"array {array}: {_shown(item)} is not a byte")
            out.append(value)
        data = bytes(out)
        check = recorded.get(array)
        if check is not None:
            size = check.group("size")
            if str(len(data)) != (size.lstrip("0") or "0"):  # no int(): 5,000 digits fail
                raise PteError(
                    f"array {array} has {len(data)} bytes, its comment says "
                    f"{_shown(size)[1:-1]}: the header was edited or truncated"
                )
            if hashlib.sha256(data).hexdigest() != check.group("sha"):
                raise PteError(
                    f"array {array}: SHA-256 differs from the one recorded: the header was edited"
                )
        return data
    wanted = f"array {name!r}" if name else "byte array"
    raise PteError(
        f"no {wanted} found in the header; regenerate the model.h from the .pte with "
        "extras/tools/pte_to_header.py"
    )


# ---------------------------------------------------------------------------------------
# Model check

#: `Kernel("op", ...`: must match generator/layout.py KERNEL_REGISTRATION (a test checks).
KERNEL_REGISTRATION = re.compile(r'\bKernel\s*\(\s*"(?P<name>[^"]+)"')
_STACK_SIZE = re.compile(r"stack\.size\(\)\s*==\s*(?P<n>\d+)")
#: Must match generator/layout.py REGISTRATION_GLOB (a test checks).
REGISTRATION_GLOB = "Register*Kernels*.cpp"


def registered_kernels(codegen_dir: str | Path) -> dict[str, int]:
    """Operators the library registers and the argument count each kernel wrapper demands.

    Reads ExecuTorch's generated registration sources (`Register*Kernels*.cpp` under
    `codegen_dir`), where every kernel is written as (codegen/templates via
    `codegen/gen.py`):

        Kernel(
            "aten::add.out",
            [](torch::executor::KernelRuntimeContext & context, Span<EValue*> stack) {
                ET_KERNEL_CHECK_MSG(context, stack.size() == 5, InvalidProgram, ...

    Returns:
        operator full name ("aten::add.out") -> stack size the wrapper accepts.

    Raises:
        RegistrationError: no registration sources; sources present but no kernel or no
            `stack.size() == N` found (the codegen format changed: a bug in this tool,
            not a passing check); one operator registered with two different counts.
    """
    folder = Path(codegen_dir)
    sources = sorted(folder.glob(REGISTRATION_GLOB))
    if not sources:
        raise RegistrationError(
            f"no kernel registration sources ({REGISTRATION_GLOB}) under {folder}; "
            "is this a generated library?"
        )
    kernels: dict[str, int] = {}
    for path in sources:
        text = path.read_text(encoding="utf-8", errors="replace")
        starts = list(KERNEL_REGISTRATION.finditer(text))
        for k, m in enumerate(starts):
            end = starts[k + 1].start() if k + 1 < len(starts) else len(text)
            op = m.group("name")
            n = _stack_size(text, f"{path}: kernel {op}", m.end(), end)
            if n is None:
                raise RegistrationError(
                    f"{path}: kernel {op} has no `stack.size() == N` check; the ExecuTorch "
                    "codegen format changed and et_pte.py needs updating (a bug in this "
                    "tool, not a passing check)"
                )
            if kernels.get(op, n) != n:
                raise RegistrationError(
                    f"{path}: {op} is registered with {kernels[op]} and {n} arguments; "
                    "the library is inconsistent"
                )
            kernels[op] = n
    if not kernels:
        names = ", ".join(p.name for p in sources)
        raise RegistrationError(
            f'found no `Kernel("op", ... stack.size() == N` registrations in {names}; '
            "the ExecuTorch codegen format changed and et_pte.py needs updating (a bug in "
            "this tool, not a passing check)"
        )
    return kernels


#: A `#define NAME(...) body` with its continuation lines.
_DEFINE = re.compile(
    r"^[ \t]*#[ \t]*define[ \t]+(?P<name>\w+)(?P<body>(?:[^\n]*\\\n)*[^\n]*)", re.M
)
#: `Kernel("op", function)`: a kernel whose wrapper is a named function, not a lambda.
_KERNEL_FUNCTION = re.compile(r'\bKernel\s*\(\s*"[^"]+"\s*,\s*(?P<fn>[A-Za-z_]\w*)\s*\)')
#: `name(`: a call of a macro or function (or a definition's head).
_CALL = re.compile(r"\b(?P<name>[A-Za-z_]\w*)\s*\(")
#: `name(parameters) {`: a function definition's head. No parenthesis in the parameters:
#: with one, each `name(` of a long run of them would scan to the end (quadratic time).
_FUNCTION_HEAD = re.compile(r"\b(?P<name>[A-Za-z_]\w*)\s*\([^;{}()]*\)\s*\{")


def _stack_size(text: str, where: str, start: int = 0, end: int | None = None) -> int | None:
    """N of the first `stack.size() == N` in text[start:end], or None.

    Raises:
        RegistrationError: N is not a count (thousands of digits); the message starts with
            `where` (the file and the kernel, macro or function).
    """
    m = _STACK_SIZE.search(text, start, len(text) if end is None else end)
    if m is None:
        return None
    digits = m.group("n")
    if len(digits) > 9:  # int() refuses 4,300 digits and more; no stack holds 10**9 values
        raise RegistrationError(
            f"{where}: `stack.size() == {digits[:12]}...` is not an argument count; the "
            "source is damaged: regenerate the library"
        )
    return int(digits)


def _macro_stack_sizes(text: str, path: Path) -> dict[str, int]:
    """Macros whose expansion checks `stack.size() == N`, directly or through another macro
    (a macro calling several takes the size of the nearest one that checks)."""
    bodies = {m.group("name"): m.group("body") for m in _DEFINE.finditer(text)}
    sizes: dict[str, int] = {}
    callers: dict[str, list[str]] = {}
    for name, body in bodies.items():
        n = _stack_size(body, f"{path}: macro {name}")
        if n is not None:
            sizes[name] = n
            continue
        for called in dict.fromkeys(c.group("name") for c in _CALL.finditer(body)):
            if called in bodies and called != name:
                callers.setdefault(called, []).append(name)
    # Breadth first from the macros that check: linear in the calls, however deep the chain.
    queue = list(sizes)
    for name in queue:
        for caller in callers.get(name, ()):
            if caller not in sizes:
                sizes[caller] = sizes[name]
                queue.append(caller)
    return sizes


def _function_stack_sizes(folder: Path) -> dict[str, int | None]:
    """The `stack.size() == N` of each `name(...) {...}` defined in a source of `folder`
    (the first definition of a name, in file name order; None: it checks none)."""
    sizes: dict[str, int | None] = {}
    for path in sorted(folder.glob("*.cpp")):
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in _FUNCTION_HEAD.finditer(text):
            name = m.group("name")
            if sizes.get(name) is None:
                end = text.find("\n}", m.end())
                where = f"{path}: function {name}"
                sizes[name] = _stack_size(text, where, m.end(), end if end >= 0 else None)
    return sizes


def registered_prim_ops(source: str | Path) -> dict[str, int]:
    """ExecuTorch's prim ops a library registers, and the argument count each demands.

    `source` is the library's copy of ExecuTorch's `kernels/prim_ops/register_prim_ops.cpp`,
    which registers them at start-up (not the codegen): `aten::sym_size.int`,
    `executorch_prim::mul.Scalar`, `executorch_prim::et_view.default`... Each entry is
    `Kernel("name", lambda)` whose lambda checks `stack.size() == N` itself or through a
    macro (`ALGEBRA_ET_PRIM_OP`), or `Kernel("name", function)` with the function defined in
    a source beside it (`et_view.cpp`).

    Returns:
        operator full name -> stack size; empty when `source` does not exist (a library
        generated before prim ops shipped registers none).

    Raises:
        RegistrationError: the file registers nothing, or a prim op's argument count cannot
            be found (the format changed: a bug in this tool, not a passing check).
    """
    path = Path(source)
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8", errors="replace")
    macros = _macro_stack_sizes(text, path)
    names = list(macros)
    order = {name: i for i, name in enumerate(names)}
    functions: dict[str, int | None] | None = None  # read when a kernel names a function
    # Macro bodies are not kernels: blank them (keeping line count) before reading kernels.
    text = _DEFINE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    starts = list(KERNEL_REGISTRATION.finditer(text))
    if not starts:
        raise RegistrationError(
            f'{path}: no `Kernel("op", ...)` registration found; the ExecuTorch prim ops '
            "format changed and et_pte.py needs updating (a bug in this tool, not a passing "
            "check)"
        )
    ops: dict[str, int] = {}
    for k, m in enumerate(starts):
        op = m.group("name")
        end = starts[k + 1].start() if k + 1 < len(starts) else len(text)
        function = _KERNEL_FUNCTION.match(text, m.start())
        n: int | None = None
        if function is not None:
            if functions is None:
                functions = _function_stack_sizes(path.parent)
            n = functions.get(function.group("fn"))
        else:
            n = _stack_size(text, f"{path}: prim op {op}", m.end(), end)
            if n is None:
                # The first macro (in definition order) that the region calls.
                calls = (c.group("name") for c in _CALL.finditer(text, m.end(), end))
                called = [order[c] for c in calls if c in order]
                n = macros[names[min(called)]] if called else None
        if n is None:
            raise RegistrationError(
                f"{path}: prim op {op} has no `stack.size() == N` check (in its lambda, a "
                f"macro or a function of {path.parent.name}/); the ExecuTorch prim ops format "
                "changed and et_pte.py needs updating (a bug in this tool, not a passing check)"
            )
        ops[op] = n
    return ops


def library_kernels(library_dir: str | Path) -> dict[str, int]:
    """Every operator a generated library registers: its codegen kernels and its prim ops.

    Returns:
        operator full name -> the argument count its kernel accepts.

    Raises:
        RegistrationError: see `registered_kernels` and `registered_prim_ops`; or one
            operator registered by both (the runtime refuses the second registration with
            RegistrationAlreadyRegistered at start-up).
    """
    root = Path(library_dir)
    kernels = registered_kernels(root / LIBRARY_CODEGEN_DIR)
    prim = registered_prim_ops(root / LIBRARY_PRIM_OPS)
    both = sorted(kernels.keys() & prim.keys())
    if both:
        raise RegistrationError(
            f"{', '.join(both)} registered by both the codegen ({LIBRARY_CODEGEN_DIR}) and "
            f"the prim ops ({LIBRARY_PRIM_OPS}); the runtime refuses the second registration "
            "(RegistrationAlreadyRegistered): regenerate the library"
        )
    return {**kernels, **prim}


#: Why a model's kernel calls and a library's registration disagree (argument counts).
LIKELY_CAUSE = (
    "the model was exported with a different ExecuTorch commit than the one the library "
    "was built from (see the pin in extras/PROVENANCE.txt); re-export the model with that "
    "commit, or regenerate the library from the exporter's commit"
)
#: Why an operator a model calls is not registered. (`--ops` is not offered: it replaces
#: the root ops, so the operators the other models need would go.)
MISSING_CAUSE = (
    "the library's op set does not include it: regenerate the library with --ops-from-pte "
    "naming this model and every other model the library must run (the build names any "
    "operator the pinned ExecuTorch has no kernel for), or the model was exported with a "
    "different ExecuTorch commit than the library's pin (extras/PROVENANCE.txt)"
)
#: The namespace of ExecuTorch's prim ops (symbolic-size arithmetic, et_view, et_copy_index).
PRIM_NAMESPACE = "executorch_prim::"
#: Why a prim op is not registered: no op set holds prim ops, the library's copy of
#: register_prim_ops.cpp registers them all.
MISSING_PRIM_CAUSE = (
    "it is one of ExecuTorch's prim ops, which a library registers from its copy of "
    "kernels/prim_ops/register_prim_ops.cpp, not from its op set; this library's copy does "
    "not register it: the library predates shipping prim ops (regenerate it), or the model "
    "was exported with a newer ExecuTorch than the library's pin (extras/PROVENANCE.txt): "
    "regenerate the library from the exporter's commit, or re-export the model with the pin"
)


@dataclass(frozen=True)
class Problem:
    """One reason a model would fail on the library.

    Attributes:
        method: the method ("forward"); operator: its full name.
        error: the ExecuTorch error the runtime would return: "OperatorMissing" (at
            `Method::load`) or "InvalidProgram" (at `Method::execute`).
        code: that error's value (0x14 or 0x23).
        model_args: arguments the model's call supplies.
        library_args: arguments the registered kernel expects (None when not registered).
        calls: how many kernel calls in the method hit this problem.
    """

    method: str
    operator: str
    error: str
    code: int
    model_args: int
    library_args: int | None
    calls: int = 1

    @property
    def message(self) -> str:
        """One line naming the operator, the numbers, the runtime error and the cause."""
        if self.library_args is None:
            what = (
                f"{self.operator} is not registered in the library: Method::load fails "
                f"with {self.error} (0x{self.code:02x})"
            )
        else:
            what = (
                f"{self.operator}: model supplies {self.model_args} arguments, library "
                f"expects {self.library_args}: Method::execute fails with {self.error} "
                f"(0x{self.code:02x})"
            )
        times = f" [{self.calls} calls in {self.method}]" if self.calls > 1 else f" [{self.method}]"
        return f"{what}{times}; likely cause: {self.cause}"

    @property
    def cause(self) -> str:
        """The likely cause and what to do (MISSING_CAUSE, MISSING_PRIM_CAUSE, LIKELY_CAUSE)."""
        if self.library_args is not None:
            return LIKELY_CAUSE
        return MISSING_PRIM_CAUSE if self.operator.startswith(PRIM_NAMESPACE) else MISSING_CAUSE

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields plus `message`."""
        return {
            "method": self.method,
            "operator": self.operator,
            "error": self.error,
            "code": self.code,
            "model_args": self.model_args,
            "library_args": self.library_args,
            "calls": self.calls,
            "cause": self.cause,
            "message": self.message,
        }


def check_model(program: Program, kernels: dict[str, int]) -> list[Problem]:
    """Compare every kernel call of `program` with the library's `kernels`.

    Args:
        program: from `read_program`.
        kernels: from `library_kernels` (operator -> expected argument count).

    Returns:
        Problems in call order, one per (method, operator, supplied count), with how many
        calls share it; empty when the model's kernel calls all match. Delegate calls
        are not checked (the library registers no delegate backends by codegen).
    """
    found: dict[tuple[str, str, int], Problem] = {}
    for method in program.methods:
        for call in method.kernel_calls:
            key = (method.name, call.operator, call.arg_count)
            expected = kernels.get(call.operator)
            if expected == call.arg_count:
                continue
            if key in found:
                p = found[key]
                found[key] = Problem(
                    p.method,
                    p.operator,
                    p.error,
                    p.code,
                    p.model_args,
                    p.library_args,
                    p.calls + 1,
                )
                continue
            if expected is None:
                found[key] = Problem(
                    method.name,
                    call.operator,
                    "OperatorMissing",
                    ERROR_OPERATOR_MISSING,
                    call.arg_count,
                    None,
                )
            else:
                found[key] = Problem(
                    method.name,
                    call.operator,
                    "InvalidProgram",
                    ERROR_INVALID_PROGRAM,
                    call.arg_count,
                    expected,
                )
    return list(found.values())


#: Why a model delegates to a backend the library does not register.
BACKEND_CAUSE = (
    "the model was lowered to that backend (with its partitioner, e.g. XnnpackPartitioner); "
    "export it without the partitioner (to_edge(...).to_executorch()) so that it runs on the "
    "library's kernels, and regenerate the library with --ops-from-pte naming it and every "
    "other model the library must run"
)


@dataclass(frozen=True)
class MissingBackend:
    """A delegate of a method whose backend the library does not register.

    `Method::load` initializes every delegate of the method and fails for this one with
    NotFound (0x20), logging "Backend <id> is not registered."

    Attributes:
        method: the method ("forward"); backend: the delegate's backend id.
        registered: the backends the library registers (see `registered_backends`).
        delegates: how many delegates of the method use this backend.
    """

    method: str
    backend: str
    registered: tuple[str, ...] = ()
    delegates: int = 1
    error: str = "NotFound"
    code: int = ERROR_NOT_FOUND

    @property
    def message(self) -> str:
        """One line naming the backend, what the library registers, the error and the cause."""
        have = (
            f"it registers {', '.join(self.registered)}"
            if self.registered
            else "it registers no backend"
        )
        times = (
            f" [{self.delegates} delegates in {self.method}]"
            if self.delegates > 1
            else f" [{self.method}]"
        )
        return (
            f"delegates to backend {self.backend or '(no id)'}, which the library does not "
            f"register ({have}): Method::load fails with {self.error} (0x{self.code:02x}), "
            f'"Backend {self.backend} is not registered."{times}; likely cause: {self.cause}'
        )

    @property
    def cause(self) -> str:
        """The likely cause and what to do (BACKEND_CAUSE)."""
        return BACKEND_CAUSE

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields plus `message`."""
        return {
            "method": self.method,
            "backend": self.backend,
            "registered": list(self.registered),
            "delegates": self.delegates,
            "error": self.error,
            "code": self.code,
            "cause": self.cause,
            "message": self.message,
        }


def check_backends(program: Program, backends: tuple[str, ...]) -> list[MissingBackend]:
    """Every delegate of `program` (Program.execution_plan[].delegates[].id) whose backend
    is not among `backends`, one per (method, backend), in the order the delegates appear."""
    found: dict[tuple[str, str], MissingBackend] = {}
    for method in program.methods:
        for backend in method.delegates:
            if backend in backends:
                continue
            key = (method.name, backend)
            previous = found.get(key)
            found[key] = MissingBackend(
                method.name, backend, backends, previous.delegates + 1 if previous else 1
            )
    return list(found.values())


#: A backend registration: `Backend name{ID, &instance}` or `register_backend({ID, ...})`.
_BACKEND_DECLARATION = re.compile(
    r'\bBackend\s+\w+\s*[{(]\s*(?P<id>"[^"]*"|[A-Za-z_][\w:]*)'
    r'|\bregister_backend\s*\(\s*(?:[\w:]*Backend\s*)?\{\s*(?P<inline>"[^"]*"|[A-Za-z_][\w:]*)'
)
_REGISTER_BACKEND = re.compile(r"\bregister_backend\s*\(")
_SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp")


def registered_backends(library_dir: str | Path) -> tuple[str, ...]:
    """The delegate backends a library registers: the ids its sources pass to
    `register_backend` (runtime/backend/interface.h), read from `src/`.

    A source calls `register_backend(backend)` with a `Backend backend{"Id", &instance}`, or
    `register_backend({"Id", &instance})`; the id may be a string or a constant defined as a
    string in the library (`xnnpack_backend_key`). The runtime's own declaration and
    definition (`Error register_backend(...)`) are not calls.

    Returns:
        Backend ids, sorted; empty when nothing registers one (a library with portable and
        Cortex-M kernels only: the Cortex-M backend is operators, not a delegate).

    Raises:
        RegistrationError: a source calls register_backend with an id this tool cannot read
            (a bug in this tool, not a passing check).
    """
    src = Path(library_dir) / "src"
    sources = sorted(p for p in src.rglob("*") if p.suffix in _SOURCE_SUFFIXES and p.is_file())
    backends: set[str] = set()
    for path in sources:
        data = path.read_bytes()
        if b"register_backend" not in data:
            continue
        text = data.decode("utf-8", errors="replace")
        calls = [
            m
            for m in _REGISTER_BACKEND.finditer(text)
            if not re.search(r"\bError\s*$", text[max(0, m.start() - 40) : m.start()])
        ]
        if not calls:
            continue
        ids = [m.group("id") or m.group("inline") for m in _BACKEND_DECLARATION.finditer(text)]
        names = [_backend_id(i, sources) for i in ids]
        if not ids or None in names:
            raise RegistrationError(
                f"{path} registers a backend (register_backend) whose id et_pte.py cannot "
                "read; a bug in this tool, not a passing check"
            )
        backends.update(n for n in names if n is not None)
    return tuple(sorted(backends))


def _backend_id(expression: str, sources: list[Path]) -> str | None:
    """A backend id expression: a string literal, or a constant defined as one in `sources`."""
    if expression.startswith('"'):
        return expression[1:-1]
    name = expression.rsplit("::", 1)[-1]
    definition = re.compile(rf'\b{re.escape(name)}\s*(?:\[\s*\])?\s*=\s*"(?P<id>[^"]*)"')
    for path in sources:
        data = path.read_bytes()
        if name.encode() in data:
            m = definition.search(data.decode("utf-8", errors="replace"))
            if m is not None:
                return m.group("id")
    return None


# ---------------------------------------------------------------------------------------
# A generated library's examples

#: Where things are in a generated library; must match generator/layout.py (a test checks).
#: The program reader, generated from the library's extras/schema/ (generator/build/reader.py).
LIBRARY_READER_DIR = "extras/tools/pte_schema"
LIBRARY_CODEGEN_DIR = "src/executorch/codegen"
#: ExecuTorch's prim ops registration (registered at start-up, not by the codegen).
LIBRARY_PRIM_OPS = "src/executorch/kernels/prim_ops/register_prim_ops.cpp"
LIBRARY_EXAMPLES_DIR = "examples"
MODEL_HEADER = "model.h"


@dataclass(frozen=True)
class ModelResult:
    """The check of one model against a library.

    Attributes:
        name: the example name, or the `.pte` file name for `--pte` models.
        source: the file read (`examples/<Name>/model.h` or the `.pte`).
        methods: method names; operators: operators its kernel calls use, sorted.
        kernel_calls: number of kernel calls over all methods.
        problems: what would fail on the board (empty when it matches): kernel calls the
            library cannot serve, then delegates to backends it does not register.
        error: why the model could not be read at all ("" when it could).
        delegates: the backend ids of its delegates, sorted (empty: it runs on kernels only).
    """

    name: str
    source: str
    methods: tuple[str, ...] = ()
    operators: tuple[str, ...] = ()
    kernel_calls: int = 0
    problems: tuple[Problem | MissingBackend, ...] = ()
    error: str = ""
    delegates: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        """Readable and without problems."""
        return not self.error and not self.problems

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields plus `passed`."""
        return {
            "name": self.name,
            "source": self.source,
            "passed": self.passed,
            "methods": list(self.methods),
            "operators": list(self.operators),
            "kernel_calls": self.kernel_calls,
            "delegates": list(self.delegates),
            "problems": [p.to_dict() for p in self.problems],
            "error": self.error,
        }


def example_names(library_dir: str | Path) -> list[str]:
    """The examples of a library: folders `examples/<Name>/` holding `<Name>.ino`, sorted."""
    folder = Path(library_dir) / LIBRARY_EXAMPLES_DIR
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if (p / f"{p.name}.ino").is_file())


def check_program_bytes(
    name: str,
    source: str,
    data: bytes,
    reader: ProgramReader,
    kernels: dict[str, int],
    backends: tuple[str, ...] = (),
) -> ModelResult:
    """Read `data` (a `.pte`) through `reader` and check it against `kernels` and `backends`
    (the delegate backends the library registers); never raises PteError.

    Returns:
        ModelResult; an unreadable program gives `error` set and `passed` False.
    """
    try:
        program = read_program(data, reader)
    except PteError as e:
        return ModelResult(name, source, error=f"not a readable .pte: {e}")
    calls = [c for m in program.methods for c in m.kernel_calls]
    problems: list[Problem | MissingBackend] = [*check_model(program, kernels)]
    problems += check_backends(program, backends)
    return ModelResult(
        name,
        source,
        methods=tuple(m.name for m in program.methods),
        operators=tuple(sorted({c.operator for c in calls})),
        kernel_calls=len(calls),
        problems=tuple(problems),
        delegates=tuple(sorted({d for m in program.methods for d in m.delegates})),
    )


def check_library(
    library_dir: str | Path,
    examples: list[str] | None = None,
    ptes: list[str | Path] | None = None,
) -> list[ModelResult]:
    """Check a generated library's example models (or given `.pte` files) against it.

    Reads each `examples/<Name>/model.h` (or each of `ptes`) through the library's program
    reader (`LIBRARY_READER_DIR`, generated from its `extras/schema/`), and compares its
    kernel calls with the registration in `src/executorch/codegen/` and the prim ops of
    `LIBRARY_PRIM_OPS` (see `library_kernels`), and the backend of each of its delegates
    with those the library registers (see `registered_backends`).

    Args:
        library_dir: the library root (holds library.properties).
        examples: example names to check; None: every example (see `example_names`).
            Ignored when `ptes` is given.
        ptes: `.pte` files to check instead of the examples' models.

    Returns:
        One ModelResult per example or `.pte`, in the order asked (examples sorted).

    Raises:
        SchemaError: the library's program reader is missing or does not import.
        RegistrationError: its kernel registration, prim ops or backend registrations
            are missing or unreadable.
        EtPteError: an example asked for does not exist, or the library has none.
    """
    root = Path(library_dir)
    reader = load_reader(root / LIBRARY_READER_DIR)
    kernels = library_kernels(root)
    backends = registered_backends(root)
    results: list[ModelResult] = []
    if ptes:
        for pte in ptes:
            path = Path(pte)
            try:
                data = path.read_bytes()
            except OSError as e:
                results.append(ModelResult(path.name, str(path), error=f"cannot read: {e}"))
                continue
            results.append(
                check_program_bytes(path.name, str(path), data, reader, kernels, backends)
            )
        return results
    known = example_names(root)
    if not known:
        raise EtPteError(f"{root / LIBRARY_EXAMPLES_DIR} holds no examples (<Name>/<Name>.ino)")
    wanted = list(examples) if examples else known
    unknown = [e for e in wanted if e not in known]
    if unknown:
        raise EtPteError(
            f"no example {', '.join(unknown)} in {root}; its examples are {', '.join(known)}"
        )
    for name in wanted:
        header = root / LIBRARY_EXAMPLES_DIR / name / MODEL_HEADER
        rel = f"{LIBRARY_EXAMPLES_DIR}/{name}/{MODEL_HEADER}"
        try:
            text = header.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            results.append(ModelResult(name, rel, error=f"cannot read {rel}: {e}"))
            continue
        try:
            data = pte_from_model_h(text)
        except PteError as e:
            results.append(ModelResult(name, rel, error=f"{rel}: {e}"))
            continue
        results.append(check_program_bytes(name, rel, data, reader, kernels, backends))
    return results
