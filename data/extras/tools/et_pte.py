"""Read ExecuTorch `.pte` programs: their methods, operators, kernel calls and delegates.

Python standard library only, apart from the program reader generated beside it: this file
ships in every generated Arduino library under `extras/tools/` and must run there with no
pip packages (it is written to run on Python 3.8 and newer). The generator imports it too.
The other tools beside it build on it: `et_registration.py` (what a library registers),
`et_model_h.py` (the `model.h` codec), `et_checks.py` (the model check), `et_dtypes.py`.

What it does:

* `load_reader(folder)` imports a library's program reader, `extras/tools/pte_schema/`:
  the Python flatc generated from the library's schema (`program_generated.py`), with
  FlatBuffers' own Python runtime beside it (`flatbuffers/`); generator/pipeline/reader.py writes
  it at build time. The FlatBuffers decoding is theirs, not ours.
* `read_program(pte_bytes, reader)` reads a `.pte` through it and returns its methods,
  operators, kernel calls and delegate calls. FlatBuffers' Python runtime follows offsets
  without bounds checks, so a thin guard checks each table it opens and caps the work; every
  malformed input raises `PteError` naming the file position.

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
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "LIBRARY_READER_DIR",
    "MAX_MODEL_H_BYTES",
    "MAX_PTE_BYTES",
    "DelegateCall",
    "EtPteError",
    "ExtendedHeader",
    "KernelCall",
    "Method",
    "Operator",
    "Program",
    "ProgramReader",
    "PteError",
    "SchemaError",
    "load_reader",
    "read_bounded",
    "read_model_h",
    "read_program",
    "read_pte",
]


class EtPteError(Exception):
    """Base of every error the tools raise: this module's, `et_registration.RegistrationError`
    and the model check's (catch this one to catch them all)."""


class SchemaError(EtPteError):
    """The program reader generated from the schema is missing, or not ExecuTorch's."""


class PteError(EtPteError):
    """A `.pte` (or the bytes recovered from a `model.h`) is not a readable program.

    The message names the byte position where reading failed.
    """


# ---------------------------------------------------------------------------------------
# Bounded reads: a .pte or model.h is sized before it is read

#: The largest `.pte` any tool (or the generator) reads: 8 MiB (8,388,608 bytes).
#:
#: Why this value: the largest flash of any board the generator knows (generator/boards/budgets.py)
#: is the FRDM RW612's, 3,133,440 bytes (~3 MiB), and a model must fit in flash beside the
#: runtime, so 8 MiB is more than twice anything a board can hold. It also keeps the
#: model.h a library ships under GitHub's 100 MiB push limit: `et_model_h.model_h` writes
#: each byte as "0x.., " (6 characters) plus ~5 per 16-byte line, ~6.3 characters a byte,
#: so 8 MiB gives ~53 MiB of header; 16 MiB would give ~101 MiB, over the limit. Checked
#: with os.stat before reading, so a file of several GiB costs nothing (no MemoryError).
MAX_PTE_BYTES = 8 * 2**20

#: The largest `model.h` read back (`pte_from_model_h`): 8 characters per byte of
#: MAX_PTE_BYTES (the header spends ~6.3, see above) plus 1 MiB of comments and kernel
#: selection: 65 MiB.
MAX_MODEL_H_BYTES = 8 * MAX_PTE_BYTES + 2**20


def read_bounded(path: str | Path, limit: int, what: str) -> bytes:
    """The bytes of `path`, refused before reading when it holds more than `limit` bytes.

    The size comes from os.stat; the read itself stops at `limit` + 1 bytes, so a file that
    grows meanwhile, or one with no size (a FIFO, /dev/zero), is refused too.

    Raises:
        PteError: the file is larger than `limit`; the one-line message names the file, its
            size and the limit.
        OSError: the file cannot be read (not found, a folder, no permission).
    """
    path = Path(path)
    size = os.stat(path).st_size
    if size > limit:
        raise PteError(_too_large(path, what, size, limit))
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise PteError(_too_large(path, what, None, limit))
    return data


def _too_large(path: Path, what: str, size: int | None, limit: int) -> str:
    has = f"{size:,} bytes" if size is not None else "more bytes"
    return (
        f"{path} is {has}, over the {limit:,}-byte limit for a {what} ({limit // 2**20} MiB; "
        "the largest board's flash is ~3 MiB): is it the right file?"
    )


def read_pte(path: str | Path) -> bytes:
    """The bytes of the `.pte` at `path`, at most MAX_PTE_BYTES (see `read_bounded`).

    Raises:
        PteError: the file is larger than MAX_PTE_BYTES.
        OSError: the file cannot be read.
    """
    return read_bounded(path, MAX_PTE_BYTES, ".pte")


def read_model_h(path: str | Path) -> str:
    """The text of the `model.h` at `path`, at most MAX_MODEL_H_BYTES (see `read_bounded`).

    Raises:
        PteError: the file is larger than MAX_MODEL_H_BYTES.
        OSError: the file cannot be read.
        UnicodeDecodeError: it is not UTF-8.
    """
    return read_bounded(path, MAX_MODEL_H_BYTES, "model.h").decode("utf-8")


# ---------------------------------------------------------------------------------------
# The program reader: flatc's Python for the library's program.fbs

#: Where a generated library keeps its program reader, generated from its extras/schema/
#: (generator/pipeline/reader.py); must match generator/library/layout.py (a test checks).
LIBRARY_READER_DIR = "extras/tools/pte_schema"
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
