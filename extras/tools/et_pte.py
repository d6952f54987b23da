"""Read ExecuTorch `.pte` programs and check them against a library's kernel registration.

Python standard library only: this file ships in every generated Arduino library under
`extras/tools/` and must run there with no pip packages (it is written to run on
Python 3.8 and newer). The generator imports it too.

What it does:

* `load_schema(dir)` parses ExecuTorch's FlatBuffers schema (`program.fbs`, which includes
  `scalar_type.fbs`) with a small parser for the subset of the FlatBuffers schema language
  those files use (include, namespace, attribute, enum, union, table, struct, defaults,
  attributes in parentheses, deprecated fields, comments).
* `read_program(pte_bytes, schema)` decodes a `.pte` against that schema with a generic,
  bounds-checked FlatBuffers reader and returns its methods, operators, kernel calls and
  delegate calls. Every malformed input raises `PteError` naming the file position.
* `model_h` / `pte_from_model_h` turn a `.pte` into the `model.h` a sketch includes, and back.
* `library_kernels` / `check_model` compare the operators a `.pte` calls, and how many
  arguments each call passes, with what the library registers (its generated kernel
  registration and ExecuTorch's prim ops), so a mismatch is found before flashing a board;
  `registered_backends` / `check_backends` do the same for the backends of its delegates.

Facts used, with their sources (ExecuTorch and FlatBuffers sources):

* FlatBuffers binary format (flatbuffers docs, "FlatBuffers internals"): little-endian;
  the root table's uoffset at byte 0, the 4-byte file identifier at byte 4; a table starts
  with an int32 soffset to its vtable (vtable = table - soffset); a vtable holds uint16
  vtable size, uint16 table size, then one uint16 field offset per slot (0 = absent);
  vectors and strings are a uint32 length then the data; offsets to tables, vectors and
  strings are uint32, relative to where they are stored; a union field is two slots, the
  uint8 member type then the offset to the member table; union member NONE is 0.
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
import re
import struct
from dataclasses import dataclass, field
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
    "PteError",
    "RegistrationError",
    "Schema",
    "SchemaError",
    "TableView",
    "check_backends",
    "check_library",
    "check_model",
    "check_program_bytes",
    "example_names",
    "library_kernels",
    "load_schema",
    "model_h",
    "parse_schema",
    "pte_from_model_h",
    "read_program",
    "read_root",
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
    """A `.fbs` file could not be read or uses schema language this parser does not know."""


class PteError(EtPteError):
    """A `.pte` (or the bytes recovered from a `model.h`) is not a readable program.

    The message names the byte position where reading failed.
    """


class RegistrationError(EtPteError):
    """The library's generated kernel registration sources could not be read."""


# ---------------------------------------------------------------------------------------
# Schema model


#: Scalar type name -> (struct format, size in bytes). Aliases included (FlatBuffers docs).
_SCALARS: dict[str, tuple[str, int]] = {
    "bool": ("?", 1),
    "byte": ("b", 1),
    "ubyte": ("B", 1),
    "int8": ("b", 1),
    "uint8": ("B", 1),
    "short": ("h", 2),
    "ushort": ("H", 2),
    "int16": ("h", 2),
    "uint16": ("H", 2),
    "int": ("i", 4),
    "uint": ("I", 4),
    "int32": ("i", 4),
    "uint32": ("I", 4),
    "float": ("f", 4),
    "float32": ("f", 4),
    "long": ("q", 8),
    "ulong": ("Q", 8),
    "int64": ("q", 8),
    "uint64": ("Q", 8),
    "double": ("d", 8),
    "float64": ("d", 8),
}


@dataclass(frozen=True)
class TypeRef:
    """A field's type.

    Attributes:
        kind: "scalar", "string", "vector", "array" (fixed-size, structs only), "enum",
            "union", "table" or "struct".
        name: the scalar or declared type name ("" for string and vector).
        element: the element type of a vector or array.
        length: the element count of a fixed-size array.
    """

    kind: str
    name: str = ""
    element: TypeRef | None = None
    length: int = 0


@dataclass
class FieldDef:
    """One field of a table or struct.

    Attributes:
        name: as declared.
        type: resolved type.
        slot: vtable slot of the value (tables; for a union, the `<name>_type` slot is
            `slot - 1`); for structs, the byte offset inside the struct.
        default: the declared default ("" when none), as written in the schema.
        attributes: attribute name -> value ("" when the attribute has no value).
    """

    name: str
    type: TypeRef
    slot: int = 0
    default: str = ""
    attributes: dict[str, str] = field(default_factory=dict)

    @property
    def deprecated(self) -> bool:
        """Whether the field is marked `(deprecated)`; it still occupies its slot."""
        return "deprecated" in self.attributes


@dataclass
class TableDef:
    """A table or struct.

    Attributes:
        name: declared name; namespace: the namespace it was declared in.
        fields: in declaration order.
        is_struct: a struct (stored inline, fixed layout) rather than a table.
        size, align: byte size and alignment of a struct (0 for tables).
        slot_count: number of vtable slots a table uses.
    """

    name: str
    namespace: str
    fields: list[FieldDef] = field(default_factory=list)
    is_struct: bool = False
    attributes: dict[str, str] = field(default_factory=dict)
    size: int = 0
    align: int = 1
    slot_count: int = 0

    def field(self, name: str) -> FieldDef:
        """The field called `name`. Raises SchemaError when there is none."""
        for f in self.fields:
            if f.name == name:
                return f
        raise SchemaError(f"{self.name} has no field {name!r}")


@dataclass
class EnumDef:
    """An enum: `values` maps member name to integer value; `underlying` is its scalar."""

    name: str
    namespace: str
    underlying: str
    values: dict[str, int] = field(default_factory=dict)

    def name_of(self, value: int) -> str:
        """The member name for `value`, or the number as text when none matches."""
        for k, v in self.values.items():
            if v == value:
                return k
        return str(value)


@dataclass
class UnionDef:
    """A union: `members` maps member type index (NONE = 0) to (member name, table name)."""

    name: str
    namespace: str
    members: dict[int, tuple[str, str]] = field(default_factory=dict)

    def index_of(self, member: str) -> int:
        """The type index of member `member`. Raises SchemaError when there is none."""
        for i, (name, _table) in self.members.items():
            if name == member:
                return i
        raise SchemaError(f"union {self.name} has no member {member!r}")


@dataclass
class Schema:
    """A parsed FlatBuffers schema (the files read, with their includes).

    Attributes:
        tables: tables and structs by name; enums, unions: by name.
        root_type: the declared `root_type`.
        file_identifier: the declared 4-character `file_identifier` ("" when none).
        files: the schema files read, in the order read.
    """

    tables: dict[str, TableDef] = field(default_factory=dict)
    enums: dict[str, EnumDef] = field(default_factory=dict)
    unions: dict[str, UnionDef] = field(default_factory=dict)
    root_type: str = ""
    file_identifier: str = ""
    file_extension: str = ""
    namespace: str = ""
    attributes: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)

    def table(self, name: str) -> TableDef:
        """The table or struct called `name`. Raises SchemaError when there is none."""
        try:
            return self.tables[name]
        except KeyError:
            raise SchemaError(f"the schema declares no table {name!r}") from None


# ---------------------------------------------------------------------------------------
# Schema parser

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<number>[-+]?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
  | (?P<punct>[{}()\[\]:;,=])
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass
class _Token:
    kind: str
    text: str
    line: int


def _tokenize(text: str, source: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos, line = 0, 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise SchemaError(f"{source}:{line}: unexpected character {text[pos]!r}")
        kind = m.lastgroup or ""
        if kind not in ("space", "comment"):
            tokens.append(_Token(kind, m.group(), line))
        line += m.group().count("\n")
        pos = m.end()
    return tokens


class _Parser:
    """Recursive-descent parser over one file's tokens, adding declarations to a Schema."""

    def __init__(self, tokens: list[_Token], source: str, schema: Schema) -> None:
        self.tokens = tokens
        self.i = 0
        self.source = source
        self.schema = schema
        self.namespace = ""
        self.includes: list[str] = []

    # -- token helpers
    def _peek(self) -> _Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def _error(self, message: str) -> SchemaError:
        tok = self._peek()
        where = f"{self.source}:{tok.line}" if tok else f"{self.source}:end"
        return SchemaError(f"{where}: {message}")

    def _next(self) -> _Token:
        tok = self._peek()
        if tok is None:
            raise self._error("unexpected end of file")
        self.i += 1
        return tok

    def _expect(self, text: str) -> None:
        tok = self._next()
        if tok.text != text:
            self.i -= 1
            raise self._error(f"expected {text!r}, found {tok.text!r}")

    def _accept(self, text: str) -> bool:
        tok = self._peek()
        if tok is not None and tok.text == text and tok.kind in ("punct", "ident"):
            self.i += 1
            return True
        return False

    def _ident(self) -> str:
        tok = self._next()
        if tok.kind != "ident":
            self.i -= 1
            raise self._error(f"expected a name, found {tok.text!r}")
        return tok.text

    def _string(self) -> str:
        tok = self._next()
        if tok.kind != "string":
            self.i -= 1
            raise self._error(f"expected a string, found {tok.text!r}")
        return tok.text[1:-1]

    def _scalar_literal(self) -> str:
        tok = self._next()
        if tok.kind not in ("number", "ident", "string"):
            self.i -= 1
            raise self._error(f"expected a value, found {tok.text!r}")
        return tok.text

    def _attributes(self) -> dict[str, str]:
        attrs: dict[str, str] = {}
        if not self._accept("("):
            return attrs
        while not self._accept(")"):
            name = self._ident()
            attrs[name] = self._scalar_literal() if self._accept(":") else ""
            if not self._accept(","):
                self._expect(")")
                break
        return attrs

    # -- declarations
    def parse(self) -> None:
        while self._peek() is not None:
            keyword = self._ident()
            if keyword == "include":
                self.includes.append(self._string())
                self._expect(";")
            elif keyword == "native_include":
                self._string()
                self._expect(";")
            elif keyword == "namespace":
                self.namespace = self._ident()
                self.schema.namespace = self.namespace
                self._expect(";")
            elif keyword == "attribute":
                tok = self._next()
                self.schema.attributes.append(tok.text.strip('"'))
                self._expect(";")
            elif keyword == "file_identifier":
                ident = self._string()
                if len(ident.encode()) != 4:
                    raise self._error(f"file_identifier must be 4 characters, got {ident!r}")
                self.schema.file_identifier = ident
                self._expect(";")
            elif keyword == "file_extension":
                self.schema.file_extension = self._string()
                self._expect(";")
            elif keyword == "root_type":
                self.schema.root_type = self._ident().rsplit(".", 1)[-1]
                self._expect(";")
            elif keyword == "enum":
                self._enum()
            elif keyword == "union":
                self._union()
            elif keyword in ("table", "struct"):
                self._table(is_struct=keyword == "struct")
            else:
                self.i -= 1
                raise self._error(f"unsupported declaration {keyword!r}")

    def _declare(self, name: str) -> None:
        s = self.schema
        if name in s.tables or name in s.enums or name in s.unions:
            raise self._error(f"{name} is declared twice")

    def _enum(self) -> None:
        name = self._ident()
        self._declare(name)
        self._expect(":")
        underlying = self._ident()
        if underlying not in _SCALARS or underlying in ("float", "double", "float32", "float64"):
            raise self._error(f"enum {name} needs an integer type, got {underlying!r}")
        attrs = self._attributes()
        enum = EnumDef(name, self.namespace, underlying)
        self._expect("{")
        value = 0
        while not self._accept("}"):
            member = self._ident()
            if self._accept("="):
                value = _int_literal(self._scalar_literal(), self)
            enum.values[member] = (1 << value) if "bit_flags" in attrs else value
            value += 1
            if not self._accept(","):
                self._expect("}")
                break
        self.schema.enums[name] = enum

    def _union(self) -> None:
        name = self._ident()
        self._declare(name)
        self._attributes()
        union = UnionDef(name, self.namespace, {0: ("NONE", "")})
        self._expect("{")
        index = 1
        while not self._accept("}"):
            member = self._ident()
            table = member
            if self._accept(":"):
                table = self._ident()
            if self._accept("="):
                index = _int_literal(self._scalar_literal(), self)
            union.members[index] = (member.rsplit(".", 1)[-1], table.rsplit(".", 1)[-1])
            index += 1
            if not self._accept(","):
                self._expect("}")
                break
        self.schema.unions[name] = union

    def _type(self) -> TypeRef:
        if self._accept("["):
            element = self._type()
            length = 0
            if self._accept(":"):
                length = _int_literal(self._scalar_literal(), self)
            self._expect("]")
            if length:
                return TypeRef("array", "", element, length)
            return TypeRef("vector", "", element)
        name = self._ident()
        if name in _SCALARS:
            return TypeRef("scalar", name)
        if name == "string":
            return TypeRef("string")
        # Declared type; resolved once every file is read.
        return TypeRef("named", name.rsplit(".", 1)[-1])

    def _table(self, is_struct: bool) -> None:
        name = self._ident()
        self._declare(name)
        table = TableDef(name, self.namespace, is_struct=is_struct)
        table.attributes = self._attributes()
        self._expect("{")
        while not self._accept("}"):
            fname = self._ident()
            self._expect(":")
            ftype = self._type()
            default = ""
            if self._accept("="):
                default = self._scalar_literal()
            attrs = self._attributes()
            self._expect(";")
            table.fields.append(FieldDef(fname, ftype, 0, default, attrs))
        self.schema.tables[name] = table


def _int_literal(text: str, parser: _Parser | None = None) -> int:
    try:
        return int(text, 0)
    except ValueError:
        message = f"expected an integer, found {text!r}"
        raise (parser._error(message) if parser else SchemaError(message)) from None


def _resolve(schema: Schema, t: TypeRef, where: str) -> TypeRef:
    if t.kind in ("vector", "array"):
        assert t.element is not None
        return TypeRef(t.kind, t.name, _resolve(schema, t.element, where), t.length)
    if t.kind != "named":
        return t
    if t.name in schema.enums:
        return TypeRef("enum", t.name)
    if t.name in schema.unions:
        return TypeRef("union", t.name)
    if t.name in schema.tables:
        return TypeRef("struct" if schema.tables[t.name].is_struct else "table", t.name)
    raise SchemaError(f"{where}: unknown type {t.name!r}")


def _assign_slots(table: TableDef) -> None:
    """Number a table's vtable slots: declaration order, a union taking two, or `id:`."""
    with_id = [f for f in table.fields if "id" in f.attributes]
    if with_id and len(with_id) != len(table.fields):
        raise SchemaError(f"table {table.name}: either every field has an id or none does")
    if with_id:
        used: dict[int, str] = {}
        for f in table.fields:
            f.slot = _int_literal(f.attributes["id"])
            slots = [f.slot - 1, f.slot] if f.type.kind == "union" else [f.slot]
            for s in slots:
                if s < 0 or s in used:
                    raise SchemaError(f"table {table.name}: field {f.name} id {f.slot} clashes")
                used[s] = f.name
        table.slot_count = max(used) + 1 if used else 0
        return
    slot = 0
    for f in table.fields:
        if f.type.kind == "union":
            slot += 1  # the `<name>_type` slot comes first
        f.slot = slot
        slot += 1
    table.slot_count = slot


def _layout_struct(schema: Schema, struct_def: TableDef, seen: tuple[str, ...] = ()) -> None:
    """Compute a struct's field offsets, size and alignment (C-like, FlatBuffers rules)."""
    if struct_def.size or struct_def.name in seen:
        if struct_def.name in seen:
            raise SchemaError(f"struct {struct_def.name} contains itself")
        return
    offset, align = 0, 1
    for f in struct_def.fields:
        size, falign = _inline_size(schema, f.type, (*seen, struct_def.name))
        offset = (offset + falign - 1) // falign * falign
        f.slot = offset
        offset += size
        align = max(align, falign)
    if "force_align" in struct_def.attributes:
        align = max(align, _int_literal(struct_def.attributes["force_align"]))
    struct_def.align = align
    struct_def.size = max(1, (offset + align - 1) // align * align)


def _inline_size(schema: Schema, t: TypeRef, seen: tuple[str, ...]) -> tuple[int, int]:
    if t.kind == "scalar":
        size = _SCALARS[t.name][1]
        return size, size
    if t.kind == "enum":
        size = _SCALARS[schema.enums[t.name].underlying][1]
        return size, size
    if t.kind == "struct":
        inner = schema.tables[t.name]
        _layout_struct(schema, inner, seen)
        return inner.size, inner.align
    if t.kind == "array" and t.element is not None:
        size, align = _inline_size(schema, t.element, seen)
        return size * t.length, align
    raise SchemaError(f"a struct cannot hold a {t.kind} ({'/'.join(seen)})")


def parse_schema(text: str, *, source: str = "<schema>", schema: Schema | None = None) -> Schema:
    """Parse one `.fbs` text into `schema` (a new Schema when None); includes are ignored.

    Call `load_schema` to read files with their includes. The result is resolved (types
    looked up, vtable slots and struct layouts computed) only when every type it names is
    declared in `text` or already in `schema`.

    Raises:
        SchemaError: syntax this parser does not know, an unknown type, clashing ids.
    """
    schema = schema if schema is not None else Schema()
    parser = _Parser(_tokenize(text, source), source, schema)
    parser.parse()
    _finish(schema)
    return schema


def _finish(schema: Schema) -> None:
    for table in schema.tables.values():
        for f in table.fields:
            f.type = _resolve(schema, f.type, f"{table.name}.{f.name}")
    for table in schema.tables.values():
        if table.is_struct:
            _layout_struct(schema, table)
        else:
            _assign_slots(table)
    for union in schema.unions.values():
        for _i, (member, tname) in union.members.items():
            if tname and (tname not in schema.tables or schema.tables[tname].is_struct):
                raise SchemaError(f"union {union.name}: member {member} is not a table")


def load_schema(schema_dir: str | Path, root_file: str = "program.fbs") -> Schema:
    """Read `schema_dir/root_file` (ExecuTorch's `program.fbs`) and the files it includes.

    Args:
        schema_dir: folder holding program.fbs and scalar_type.fbs (in a generated
            library: `extras/schema/`; in ExecuTorch: `schema/`; in the executorch
            wheel: `executorch/exir/_serialize/`).
        root_file: the schema file to start from.

    Returns:
        The resolved Schema (ExecuTorch's: root_type "Program", file_identifier "ET12").

    Raises:
        SchemaError: a file is missing or unreadable, or uses unsupported syntax.
    """
    folder = Path(schema_dir)
    schema = Schema()
    pending = [root_file]
    read: list[str] = []
    while pending:
        name = pending.pop(0)
        if name in read:
            continue
        read.append(name)
        path = folder / name
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise SchemaError(f"cannot read schema file {path}: {e}") from None
        parser = _Parser(_tokenize(text, str(path)), str(path), schema)
        parser.parse()
        schema.files.append(path)
        pending.extend(parser.includes)
    _finish(schema)
    if not schema.root_type:
        raise SchemaError(f"{folder / root_file} declares no root_type")
    return schema


# ---------------------------------------------------------------------------------------
# FlatBuffers binary reader


class _Buffer:
    """Bounds-checked little-endian reads; every failure is a PteError naming the offset."""

    def __init__(self, data: bytes, schema: Schema) -> None:
        self.data = data
        self.schema = schema
        # Work budget: an honest buffer holds at most one element per 4 bytes, and the
        # program is read once. Offsets only point forward, so nothing loops, but a corrupt
        # file whose vectors share their elements would make the reading time exponential.
        self.budget = 4 * len(data) + 4096

    def spend(self, n: int, pos: int) -> None:
        self.budget -= n
        if self.budget < 0:
            raise PteError(
                f"offset {pos}: more elements than a {len(self.data)}-byte buffer can hold "
                "(offsets are shared or corrupt)"
            )

    def unpack(self, fmt: str, pos: int, what: str) -> Any:
        size = struct.calcsize("<" + fmt)
        if pos < 0 or pos + size > len(self.data):
            raise PteError(
                f"offset {pos}: {what} ({size} bytes) is outside the {len(self.data)}-byte buffer"
            )
        return struct.unpack_from("<" + fmt, self.data, pos)[0]

    def u32(self, pos: int, what: str) -> int:
        value: int = self.unpack("I", pos, what)
        return value

    def deref(self, pos: int, what: str) -> int:
        """Follow the uoffset stored at `pos`; returns the absolute target position."""
        target = pos + self.u32(pos, f"offset to {what}")
        if target >= len(self.data):
            raise PteError(
                f"offset {pos}: {what} points to {target}, past the end of the "
                f"{len(self.data)}-byte buffer"
            )
        return target


class TableView:
    """A table in the buffer, read lazily field by field against its schema definition.

    `view[name]` (or `get(name)`) decodes a field: scalars and enums as int/float/bool
    (the schema default when absent), strings as str (None when absent), vectors as
    lists (a `[ubyte]` as bytes), tables as TableView, structs as dict, unions as
    TableView of the member table (None for NONE), with `union_type(name)` giving the
    member name.
    """

    def __init__(self, buf: _Buffer, pos: int, table: TableDef) -> None:
        self._buf = buf
        self.pos = pos
        self.table = table
        buf.spend(1, pos)
        soffset: int = buf.unpack("i", pos, f"{table.name} vtable offset")
        self._vtable = pos - soffset
        vt_size: int = buf.unpack("H", self._vtable, f"{table.name} vtable size")
        self._tsize: int = buf.unpack("H", self._vtable + 2, f"{table.name} table size")
        if vt_size < 4 or vt_size % 2:
            raise PteError(f"offset {self._vtable}: {table.name} vtable size {vt_size} is invalid")
        if self._vtable + vt_size > len(buf.data):
            raise PteError(f"offset {self._vtable}: {table.name} vtable runs past the buffer")
        if self._tsize < 4 or pos + self._tsize > len(buf.data):
            raise PteError(
                f"offset {pos}: {table.name} table size {self._tsize} runs past the buffer"
            )
        self._slots = (vt_size - 4) // 2

    def _field_pos(self, slot: int) -> int:
        """Absolute position of the field in `slot`, or 0 when it is absent."""
        if slot >= self._slots:
            return 0
        off: int = self._buf.unpack("H", self._vtable + 4 + 2 * slot, "vtable entry")
        if off == 0:
            return 0
        if off < 4 or off >= self._tsize:
            raise PteError(
                f"offset {self._vtable + 4 + 2 * slot}: {self.table.name} field offset {off} "
                f"is outside its {self._tsize}-byte table"
            )
        return self.pos + off

    def offset_of(self, name: str) -> int:
        """Absolute byte position of field `name`'s stored value, or 0 when absent."""
        return self._field_pos(self.table.field(name).slot)

    def has(self, name: str) -> bool:
        """Whether field `name` is present in the buffer (not defaulted)."""
        return self._field_pos(self.table.field(name).slot) != 0

    def union_type(self, name: str) -> str:
        """The member name stored in union field `name` ("NONE" when empty)."""
        f = self.table.field(name)
        union = self._buf.schema.unions[f.type.name]
        pos = self._field_pos(f.slot - 1)
        index = self._buf.unpack("B", pos, f"{name}_type") if pos else 0
        if index not in union.members:
            raise PteError(f"offset {pos}: {union.name} member type {index} is not in the schema")
        return union.members[index][0]

    def __getitem__(self, name: str) -> Any:
        return self.get(name)

    def get(self, name: str) -> Any:
        """Decode field `name` (see the class docstring). Raises PteError, SchemaError."""
        f = self.table.field(name)
        t = f.type
        if t.kind == "union":
            member = self.union_type(name)
            if member == "NONE":
                return None
            union = self._buf.schema.unions[t.name]
            table_name = union.members[union.index_of(member)][1]
            pos = self._field_pos(f.slot)
            if not pos:
                raise PteError(f"offset {self.pos}: union {name} has a type but no value")
            target = self._buf.deref(pos, f"{name} ({member})")
            return TableView(self._buf, target, self._buf.schema.tables[table_name])
        pos = self._field_pos(f.slot)
        if not pos:
            return self._default(f)
        return _read_value(self._buf, pos, t, f"{self.table.name}.{name}")

    def _default(self, f: FieldDef) -> Any:
        t = f.type
        if t.kind == "scalar":
            return _scalar_default(t.name, f.default)
        if t.kind == "enum":
            enum = self._buf.schema.enums[t.name]
            if f.default in enum.values:
                return enum.values[f.default]
            return _int_literal(f.default) if f.default else 0
        return None


def _scalar_default(type_name: str, default: str) -> Any:
    code = _SCALARS[type_name][0]
    if code == "?":
        return default == "true" or (default not in ("", "false") and float(default) != 0)
    if code in "fd":
        return float(default) if default else 0.0
    return _int_literal(default) if default else 0


def _read_value(buf: _Buffer, pos: int, t: TypeRef, what: str) -> Any:
    """Decode the value of type `t` stored at `pos` (inline scalar/struct, else offset)."""
    if t.kind == "scalar":
        return buf.unpack(_SCALARS[t.name][0], pos, what)
    if t.kind == "enum":
        return buf.unpack(_SCALARS[buf.schema.enums[t.name].underlying][0], pos, what)
    if t.kind == "struct":
        return _read_struct(buf, pos, buf.schema.tables[t.name], what)
    target = buf.deref(pos, what)
    if t.kind == "string":
        return _read_string(buf, target, what)
    if t.kind == "table":
        return TableView(buf, target, buf.schema.tables[t.name])
    if t.kind == "vector" and t.element is not None:
        return _read_vector(buf, target, t.element, what)
    raise PteError(f"offset {pos}: cannot read {what} of kind {t.kind}")


def _read_string(buf: _Buffer, pos: int, what: str) -> str:
    length = buf.u32(pos, f"{what} length")
    end = pos + 4 + length
    if end >= len(buf.data):  # FlatBuffers strings are followed by a 0 byte
        raise PteError(f"offset {pos}: {what} ({length} bytes) runs past the buffer")
    try:
        return buf.data[pos + 4 : end].decode("utf-8")
    except UnicodeDecodeError:
        raise PteError(f"offset {pos}: {what} is not UTF-8") from None


def _read_vector(buf: _Buffer, pos: int, element: TypeRef, what: str) -> Any:
    length = buf.u32(pos, f"{what} length")
    start = pos + 4
    if element.kind == "struct":
        stride = buf.schema.tables[element.name].size
    elif element.kind in ("scalar", "enum"):
        name = (
            element.name if element.kind == "scalar" else buf.schema.enums[element.name].underlying
        )
        stride = _SCALARS[name][1]
    else:
        stride = 4
    if start + length * stride > len(buf.data):
        raise PteError(
            f"offset {pos}: {what} has {length} elements of {stride} bytes, "
            "more than the buffer holds"
        )
    if element.kind == "scalar" and element.name in ("ubyte", "uint8"):
        return bytes(buf.data[start : start + length])
    buf.spend(length, pos)
    if element.kind in ("scalar", "enum"):
        code = _SCALARS[name][0]
        return list(struct.unpack_from(f"<{length}{code}", buf.data, start))
    if element.kind == "union":
        raise PteError(f"offset {pos}: {what} is a vector of unions, which this reader lacks")
    return [_read_value(buf, start + i * stride, element, f"{what}[{i}]") for i in range(length)]


def _read_struct(buf: _Buffer, pos: int, struct_def: TableDef, what: str) -> dict[str, Any]:
    if pos + struct_def.size > len(buf.data):
        raise PteError(f"offset {pos}: {what} ({struct_def.size} bytes) runs past the buffer")
    out: dict[str, Any] = {}
    for f in struct_def.fields:
        if f.type.kind == "array" and f.type.element is not None:
            size, _align = _inline_size(buf.schema, f.type.element, ())
            out[f.name] = [
                _read_value(buf, pos + f.slot + i * size, f.type.element, f"{what}.{f.name}")
                for i in range(f.type.length)
            ]
        else:
            out[f.name] = _read_value(buf, pos + f.slot, f.type, f"{what}.{f.name}")
    return out


def read_root(data: bytes, schema: Schema) -> TableView:
    """The root table of a FlatBuffers buffer, checked against the schema's identifier.

    Raises:
        PteError: the buffer is too short, its identifier differs from the schema's
            `file_identifier`, or the root offset is out of range.
    """
    if len(data) < 8:
        raise PteError(f"offset 0: {len(data)} bytes is too short for a FlatBuffers buffer")
    ident = bytes(data[4:8])
    if schema.file_identifier and ident != schema.file_identifier.encode():
        shown = ident.decode("latin-1")
        if ident[:2] == b"ET":
            raise PteError(
                f"offset 4: file identifier {shown!r}, the schema expects "
                f"{schema.file_identifier!r}: the .pte was written for another schema "
                "version (the runtime refuses it with InvalidProgram); re-export it with "
                "the ExecuTorch that built the library"
            )
        raise PteError(
            f"offset 4: file identifier {shown!r} is not {schema.file_identifier!r}: "
            "not an ExecuTorch program"
        )
    buf = _Buffer(bytes(data), schema)
    root = buf.deref(0, "root table")
    return TableView(buf, root, schema.table(schema.root_type))


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


def _int_tuple(value: Any) -> tuple[int, ...]:
    return tuple(value) if value is not None else ()


def read_program(pte_bytes: bytes, schema: Schema) -> Program:
    """Decode an ExecuTorch `.pte` against `schema` (from `load_schema`).

    Args:
        pte_bytes: the whole file. A flatbuffer whose root offset is at byte 0; the
            extended header, when present, starts at byte 8.

    Returns:
        Program with every method's operators, kernel calls (operator full name and
        argument indices), delegate calls and instruction count.

    Raises:
        PteError: bad identifier, truncated buffer, offsets out of range, an operator
            index outside the operator table, or more structure than the bytes can hold.
    """
    data = bytes(pte_bytes)
    header = _extended_header(data)
    root = read_root(data, schema)
    if root.table.name != "Program":
        raise SchemaError(f"the schema's root_type is {root.table.name}, not Program")
    methods: list[Method] = []
    for plan in root["execution_plan"] or []:
        methods.append(_read_method(plan))
    return Program(
        file_identifier=data[4:8].decode("latin-1"),
        version=int(root["version"]),
        extended_header=header,
        methods=tuple(methods),
        segment_count=len(root["segments"] or []),
    )


def _read_method(plan: TableView) -> Method:
    name = plan["name"] or ""
    operators = tuple(
        Operator(op["name"] or "", op["overload"] or "") for op in plan["operators"] or []
    )
    delegates = tuple(d["id"] or "" for d in plan["delegates"] or [])
    kernel_calls: list[KernelCall] = []
    delegate_calls: list[DelegateCall] = []
    count = 0
    for c, chain in enumerate(plan["chains"] or []):
        for i, instruction in enumerate(chain["instructions"] or []):
            count += 1
            kind = instruction.union_type("instr_args")
            args = instruction["instr_args"]
            if kind == "KernelCall":
                index = int(args["op_index"])
                if not 0 <= index < len(operators):
                    raise PteError(
                        f"offset {args.pos}: method {name!r} chain {c} instruction {i} calls "
                        f"operator {index}, the operator table has {len(operators)}"
                    )
                call = KernelCall(c, i, index, operators[index].full_name, _int_tuple(args["args"]))
                kernel_calls.append(call)
            elif kind == "DelegateCall":
                index = int(args["delegate_index"])
                if not 0 <= index < len(delegates):
                    raise PteError(
                        f"offset {args.pos}: method {name!r} chain {c} instruction {i} calls "
                        f"delegate {index}, the method has {len(delegates)}"
                    )
                delegate_calls.append(
                    DelegateCall(c, i, index, delegates[index], _int_tuple(args["args"]))
                )
    values = plan["values"]
    return Method(
        name=name,
        operators=operators,
        kernel_calls=tuple(kernel_calls),
        delegate_calls=tuple(delegate_calls),
        instruction_count=count,
        delegates=delegates,
        value_count=len(values) if values is not None else 0,
        inputs=_int_tuple(plan["inputs"]),
        outputs=_int_tuple(plan["outputs"]),
    )


# ---------------------------------------------------------------------------------------
# model.h

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


def model_h(pte_bytes: bytes, *, name: str = "model_pte", source: str = "model.pte") -> str:
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

    Raises:
        ValueError: `name` is not a C identifier, `source` spans lines, or `pte_bytes` is
            empty (a zero-length array does not compile).
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
        + (f" --name {name}" if name != "model_pte" else ""),
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
    return "\n".join(lines) + "\n"


_ARRAY = re.compile(r"\b(?P<name>[A-Za-z_]\w*)\s*\[\s*\d*\s*\]\s*=\s*\{(?P<body>[^}]*)\}", re.S)
_DIGEST = re.compile(r"//\s*(?P<name>\w+):\s*(?P<size>\d+) bytes, sha256 (?P<sha>[0-9a-f]{64})")


def pte_from_model_h(text: str, *, name: str | None = None) -> bytes:
    """Recover the `.pte` bytes from a `model.h` (ours, or any `uint8_t NAME[] = {0x..}`).

    Args:
        text: the header text.
        name: the array to read; None: the one named in our size/sha256 comment, else
            the first byte array in the file.

    Returns:
        The bytes, verified against the recorded size and SHA-256 when the header has them.

    Raises:
        PteError: no such array, a value that is not a byte, or a size/hash mismatch.
    """
    recorded = {m.group("name"): m for m in _DIGEST.finditer(text)}
    if name is None and recorded:
        name = next(iter(recorded))
    for m in _ARRAY.finditer(text):
        if name is not None and m.group("name") != name:
            continue
        body = re.sub(r"//[^\n]*|/\*.*?\*/", " ", m.group("body"), flags=re.S)
        items = [t.strip() for t in body.split(",") if t.strip()]
        out = bytearray()
        for item in items:
            try:
                value = int(item, 0)
            except ValueError:
                raise PteError(f"array {m.group('name')}: {item!r} is not a number") from None
            if not 0 <= value <= 255:
                raise PteError(f"array {m.group('name')}: {item!r} is not a byte")
            out.append(value)
        data = bytes(out)
        check = recorded.get(m.group("name"))
        if check is not None:
            if len(data) != int(check.group("size")):
                raise PteError(
                    f"array {m.group('name')} has {len(data)} bytes, its comment says "
                    f"{check.group('size')}: the header was edited or truncated"
                )
            if hashlib.sha256(data).hexdigest() != check.group("sha"):
                raise PteError(
                    f"array {m.group('name')}: SHA-256 differs from the one recorded: "
                    "the header was edited"
                )
        return data
    wanted = f"array {name!r}" if name else "a byte array"
    raise PteError(
        f"no {wanted} found in the header; regenerate the model.h from the .pte with "
        "extras/tools/pte_to_header.py"
    )


# ---------------------------------------------------------------------------------------
# Model check

_KERNEL_START = re.compile(r'\bKernel\s*\(\s*"(?P<name>[^"]+)"')
_STACK_SIZE = re.compile(r"stack\.size\(\)\s*==\s*(?P<n>\d+)")
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
        starts = list(_KERNEL_START.finditer(text))
        for k, m in enumerate(starts):
            end = starts[k + 1].start() if k + 1 < len(starts) else len(text)
            size = _STACK_SIZE.search(text, m.end(), end)
            op = m.group("name")
            if size is None:
                raise RegistrationError(
                    f"{path}: kernel {op} has no `stack.size() == N` check; the ExecuTorch "
                    "codegen format changed and et_pte.py needs updating (a bug in this "
                    "tool, not a passing check)"
                )
            n = int(size.group("n"))
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


def _macro_stack_sizes(text: str) -> dict[str, int]:
    """Macros whose expansion checks `stack.size() == N`, directly or through another macro."""
    bodies = {m.group("name"): m.group("body") for m in _DEFINE.finditer(text)}
    sizes: dict[str, int] = {}
    changed = True
    while changed:
        changed = False
        for name, body in bodies.items():
            if name in sizes:
                continue
            direct = _STACK_SIZE.search(body)
            if direct is not None:
                sizes[name] = int(direct.group("n"))
                changed = True
                continue
            for other, n in list(sizes.items()):
                if re.search(rf"\b{re.escape(other)}\s*\(", body):
                    sizes[name] = n
                    changed = True
                    break
    return sizes


def _function_stack_size(folder: Path, function: str) -> int | None:
    """The `stack.size() == N` of `void function(...) {...}` defined in a source of `folder`."""
    definition = re.compile(rf"\b{re.escape(function)}\s*\([^;{{)]*\)\s*\{{")
    for path in sorted(folder.glob("*.cpp")):
        text = path.read_text(encoding="utf-8", errors="replace")
        m = definition.search(text)
        if m is None:
            continue
        end = text.find("\n}", m.end())
        size = _STACK_SIZE.search(text, m.end(), end if end >= 0 else len(text))
        if size is not None:
            return int(size.group("n"))
    return None


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
    macros = _macro_stack_sizes(text)
    # Macro bodies are not kernels: blank them (keeping line count) before reading kernels.
    text = _DEFINE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    starts = list(_KERNEL_START.finditer(text))
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
            n = _function_stack_size(path.parent, function.group("fn"))
        else:
            size = _STACK_SIZE.search(text, m.end(), end)
            if size is not None:
                n = int(size.group("n"))
            else:
                region = text[m.end() : end]
                n = next(
                    (v for name, v in macros.items() if re.search(rf"\b{name}\s*\(", region)),
                    None,
                )
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
LIBRARY_SCHEMA_DIR = "extras/schema"
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
    schema: Schema,
    kernels: dict[str, int],
    backends: tuple[str, ...] = (),
) -> ModelResult:
    """Decode `data` (a `.pte`) and check it against `kernels` and `backends` (the delegate
    backends the library registers); never raises PteError.

    Returns:
        ModelResult; an unreadable program gives `error` set and `passed` False.
    """
    try:
        program = read_program(data, schema)
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

    Decodes each `examples/<Name>/model.h` (or each of `ptes`) against
    `extras/schema/program.fbs` and compares its kernel calls with the registration in
    `src/executorch/codegen/` and the prim ops of `LIBRARY_PRIM_OPS` (see `library_kernels`),
    and the backend of each of its delegates with those the library registers (see
    `registered_backends`).

    Args:
        library_dir: the library root (holds library.properties).
        examples: example names to check; None: every example (see `example_names`).
            Ignored when `ptes` is given.
        ptes: `.pte` files to check instead of the examples' models.

    Returns:
        One ModelResult per example or `.pte`, in the order asked (examples sorted).

    Raises:
        SchemaError: the library's schema is missing or unreadable.
        RegistrationError: its kernel registration, prim ops or backend registrations
            are missing or unreadable.
        EtPteError: an example asked for does not exist, or the library has none.
    """
    root = Path(library_dir)
    schema = load_schema(root / LIBRARY_SCHEMA_DIR)
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
                check_program_bytes(path.name, str(path), data, schema, kernels, backends)
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
        results.append(check_program_bytes(name, rel, data, schema, kernels, backends))
    return results
