"""The arena a program needs on a 32-bit board: what `ETModel::begin()` takes from it.

Python standard library only: this file ships in every generated Arduino library under
`extras/tools/` beside `et_pte.py` (which reads the program) and must run there with no pip
packages (Python 3.8 and newer). `et_model_h.py` writes its figure into model.h as
`<array>_arena_bytes`; the generator imports it through generator/pipeline/models.py.

`ETModel` (data/library_template/src/ETModel.h) hands one arena to the runtime as the method
allocator of its `MemoryManager`, with no temp allocator, after taking the memory plan's
buffers from the same arena. `method_arena` replays, in order, every allocation that makes on
the board, from the program alone:

1. ETModel::begin(): the planned-buffer table (`Span<uint8_t>[n]`) and each planned buffer
   (`MethodMeta::memory_planned_buffer_size(i)` = `non_const_buffer_sizes[i + 1]`, entry 0
   being reserved: runtime/executor/method_meta.cpp), default alignment.
2. Method::load (runtime/executor/method.cpp): with no temp allocator, a
   `PlatformMemoryAllocator` instance.
3. Method::parse_values: the `EValue[n_value]` table, `bool[n_input]` (when n_input > 0),
   `NamedData[n_external]` (when the plan has external constants), then per value:
   IntList: `EValue*[n]`, `int64_t[n]`, a `BoxedEvalueList<int64_t>`; BoolList, DoubleList,
   String: one `ArrayRef<T>`; Tensor (runtime/executor/tensor_parser_portable.cpp
   parseTensor): when not STATIC, `SizesType[dim]` and `DimOrderType[dim]`, then always
   `StridesType[dim]` and a `TensorImpl`; TensorList (tensor_parser_exec_aten.cpp
   parseTensorList): `Tensor[n]`, `EValue*[n]`, a `BoxedEvalueList<Tensor>`;
   OptionalTensorList (tensor_parser.h parseListOptionalType): `EValue*[n]`,
   `optional<Tensor>[n]`, a `BoxedEvalueList<optional<Tensor>>`.
4. Method::init, delegates: `BackendDelegate[n_delegate]` (allocated even when 0), then per
   delegate its `CompileSpec[n]` (BackendDelegate::PopulateCompileSpecs) and whatever the
   backend's init() takes from the method allocator: backend code, not read here, so a
   program with delegates has no complete figure (`ArenaPlan.unknown`).
5. Method::init, chains: `Chain[n_chain]`; per chain `OpFunction[n_instr]` and
   `InstructionArgs[n_instr]`; per KernelCall or DelegateCall `EValue*[n_args]`; per
   KernelCall (resolve_operator) `TensorMeta[n_args]` and, per tensor argument,
   `DimOrderType[dim]`, from the method allocator, because the `PlatformMemoryAllocator`
   standing in for the temp allocator has size 0 (runtime/executor/platform_memory_allocator.h).

Every allocation is `MemoryAllocator::allocate(size, alignment)` (runtime/core/memory_allocator.h):
the cursor moves to the next multiple of `alignment` and then by `size`, so padding depends on
the arena's address. `allocateList<T>(n)` and `allocateInstance<T>()` align to `alignof(T)`;
plain `allocate` to `alignof(void*)`. The figure is the larger of the replays from an arena
aligned to 8 and one 4 past it (the examples' malloc gives 8 on the board, ETModel.h's
`alignas(16) static uint8_t arena[...]` 16; every alignment used is 1, 4 or 8; a plain
`uint8_t` array without alignas is only 1-aligned, and its first allocation can need up to 3
bytes more), measured from the arena's start as `ETModel::arenaUsed()` measures it. On a
64-bit host (`TYPES_LP64`) only the 8-aligned replay is made (its malloc gives 16).

The sizes and alignments (`TYPES`) are those of arm-none-eabi-g++ 12 for the Cortex-M33 at the
UNO Q's flags against ExecuTorch cff6f4dd (v1.5.0 pin); an e2e test compiles them with
`static_assert`s against the real library (tests/tools/test_arena_size.py).

Not modelled: Program::load and the data loader allocate nothing from the arena (program.cpp);
execute() takes its temporaries from the platform allocator (`et_pal_allocate`), not the arena.
"""

from __future__ import annotations

import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import et_pte
except ImportError:  # imported by path from elsewhere: et_pte.py is beside this file
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import et_pte

__all__ = [
    "TYPES",
    "TYPES_LP64",
    "Allocation",
    "ArenaPlan",
    "for_model_h",
    "host_arena_bytes",
    "method_arena",
]

#: (sizeof, alignof) on the 32-bit board (arm-none-eabi-g++ 12, -mcpu=cortex-m33
#: -mfloat-abi=hard, -std=gnu++17) of each type the runtime allocates, ExecuTorch cff6f4dd.
#: `Chain` and `BackendDelegate` are private to method.cpp: their fields are
#: `const Chain*, Span<InstructionArgs>, OpFunction*` and `FreeableBuffer, const
#: BackendInterface*, DelegateHandle*`; the others are measured by their names.
TYPES: dict[str, tuple[int, int]] = {
    "void*": (4, 4),  # MemoryAllocator::kDefaultAlignment = alignof(void*)
    "Span<uint8_t>": (8, 4),  # ETModel's planned-buffer table
    "PlatformMemoryAllocator": (28, 4),
    "EValue": (16, 8),  # an 8-byte payload union (int64_t, double) and a tag
    "bool": (1, 1),
    "NamedData": (40, 8),  # const char* key, FreeableBuffer (32, align 8)
    "EValue*": (4, 4),
    "int64_t": (8, 8),
    "BoxedEvalueList": (12, 4),  # ArrayRef<EValue*> wrapped_vals_, T* unwrapped_vals_
    "ArrayRef": (8, 4),  # const T* data, size_t length
    "SizesType": (4, 4),  # int32_t
    "DimOrderType": (1, 1),  # uint8_t
    "StridesType": (4, 4),  # int32_t
    "TensorImpl": (32, 4),
    "Tensor": (4, 4),  # a TensorImpl* (portable mode)
    "optional<Tensor>": (8, 4),
    "BackendDelegate": (40, 8),
    "CompileSpec": (12, 4),
    "Chain": (16, 4),
    "OpFunction": (4, 4),
    "InstructionArgs": (8, 4),  # Span<EValue*>
    "TensorMeta": (12, 4),  # ScalarType dtype_, Span<DimOrderType> dim_order_
}

#: The same on a 64-bit (LP64) host: x86-64 g++ 12 -std=gnu++17, the check's host run
#: (generator/toolchain/gcc.py HOST_GCC). Pointers and size_t are 8 bytes, so every table of
#: them doubles and `alignof(void*)` is 8.
TYPES_LP64: dict[str, tuple[int, int]] = {
    "void*": (8, 8),
    "Span<uint8_t>": (16, 8),
    "PlatformMemoryAllocator": (48, 8),
    "EValue": (16, 8),
    "bool": (1, 1),
    "NamedData": (48, 8),
    "EValue*": (8, 8),
    "int64_t": (8, 8),
    "BoxedEvalueList": (24, 8),
    "ArrayRef": (16, 8),
    "SizesType": (4, 4),
    "DimOrderType": (1, 1),
    "StridesType": (4, 4),
    "TensorImpl": (64, 8),
    "Tensor": (8, 8),
    "optional<Tensor>": (16, 8),
    "BackendDelegate": (56, 8),
    "CompileSpec": (24, 8),
    "Chain": (32, 8),
    "OpFunction": (8, 8),
    "InstructionArgs": (16, 8),
    "TensorMeta": (24, 8),
}

#: schema/program.fbs TensorShapeDynamism.STATIC: sizes stay in the flatbuffer.
_STATIC = 0
#: schema/program.fbs TensorDataLocation.EXTERNAL: data in a .ptd, not the program.
_EXTERNAL = 1
#: The arena addresses replayed, modulo 8: aligned to 8 (malloc), and 4 past it.
_BASE_RESIDUES = (0, 4)


@dataclass(frozen=True)
class Allocation:
    """One allocation from the arena: `what` (the runtime's object), `size` and `align`."""

    part: str
    what: str
    size: int
    align: int


@dataclass(frozen=True)
class ArenaPlan:
    """What `ETModel::begin()` takes from its arena for one method, on the 32-bit board.

    Attributes:
        method: the method's name (ETModel loads the program's first).
        planned: the memory plan's buffer sizes, bytes, in id order.
        allocations: every allocation, in the order the runtime makes them.
        total: arena bytes needed (largest over the base alignments replayed), padding
            included, from the arena's start: `ETModel::arenaUsed()` after a load.
        unknown: what the figure leaves out because it was not read (a backend's own
            allocations, external data): non-empty means `total` is a lower bound.
    """

    method: str
    planned: tuple[int, ...]
    allocations: tuple[Allocation, ...]
    total: int
    unknown: tuple[str, ...]

    def part_bytes(self) -> dict[str, int]:
        """Bytes per part ("ETModel", "memory plan", "values", "delegates", "chains"),
        without padding (padding is the rest of `total`)."""
        out: dict[str, int] = {}
        for a in self.allocations:
            out[a.part] = out.get(a.part, 0) + a.size
        return out


def _replay(allocations: list[Allocation], base: int) -> int:
    """End offset from an arena starting at address `base` (MemoryAllocator::allocate)."""
    cur = base
    for a in allocations:
        cur = (cur + a.align - 1) & ~(a.align - 1)
        cur += a.size
    return cur - base


def _list(types: dict[str, tuple[int, int]], part: str, type_name: str, n: int) -> Allocation:
    """allocateList<T>(n): n * sizeof(T), aligned to alignof(T)."""
    size, align = types[type_name]
    return Allocation(part, f"{type_name}[{n}]", n * size, align)


def _instance(types: dict[str, tuple[int, int]], part: str, type_name: str) -> Allocation:
    """allocateInstance<T>(): sizeof(T), aligned to alignof(T)."""
    size, align = types[type_name]
    return Allocation(part, type_name, size, align)


def method_arena(
    pte_bytes: bytes,
    reader: et_pte.ProgramReader,
    method: int = 0,
    types: dict[str, tuple[int, int]] = TYPES,
) -> ArenaPlan:
    """The arena `ETModel` needs on the board for method number `method` of a program.

    Args:
        pte_bytes: the `.pte` file contents.
        reader: the program reader of the library's schema (`et_pte.load_reader`).
        method: the execution plan's index; ETModel loads the first (0).
        types: the (sizeof, alignof) table of the target: `TYPES` (the 32-bit board) or
            `TYPES_LP64` (a 64-bit host).

    Returns:
        ArenaPlan; `total` is the figure for `<array>_arena_bytes`.

    Raises:
        et_pte.PteError: the bytes are not a readable program, there is no such method, or
            a value, chain or argument index is out of range.
    """
    program = et_pte.read_program(pte_bytes, reader)  # validates the tables read below
    if not 0 <= method < len(program.methods):
        raise et_pte.PteError(f"the program has {len(program.methods)} methods, no method {method}")
    data = bytes(pte_bytes)
    schema = reader.schema
    root = schema.Program.GetRootAs(data, 0)
    plan = root.ExecutionPlan(method)
    meta = program.methods[method]
    guard = et_pte._Guard(data)  # the same bounds checks as read_program's
    try:
        return _method_arena(guard, schema, plan, meta, types)
    except (struct.error, IndexError, ValueError, OverflowError, TypeError) as e:
        raise et_pte.PteError(
            f"offset {guard.pos}: {guard.what} points past the end of the {len(data)}-byte "
            f"buffer ({e})"
        ) from None


def _method_arena(
    guard: Any, schema: Any, plan: Any, meta: et_pte.Method, types: dict[str, tuple[int, int]]
) -> ArenaPlan:
    guard.table(plan, f"method {meta.name!r}")
    where = f"method {meta.name!r}"
    allocs: list[Allocation] = []
    unknown: list[str] = []

    # 1. ETModel::begin(): the planned-buffer table, then each buffer (default alignment).
    sizes = [
        int(plan.NonConstBufferSizes(j))
        for j in guard.count(plan.NonConstBufferSizesLength(), f"{where} non_const_buffer_sizes")
    ]
    planned = tuple(sizes[1:])  # entry 0 is reserved (method_meta.cpp)
    allocs.append(_list(types, "ETModel", "Span<uint8_t>", len(planned)))
    for i, size in enumerate(planned):
        if size < 0:
            raise et_pte.PteError(f"{where}: planned buffer {i} has size {size}")
        allocs.append(Allocation("memory plan", f"planned buffer {i}", size, types["void*"][1]))

    # 2. Method::load: no temp allocator given, so a PlatformMemoryAllocator instance.
    allocs.append(_instance(types, "load_method", "PlatformMemoryAllocator"))

    # 3. Method::parse_values.
    n_value = guard.count(plan.ValuesLength(), f"{where} values")
    allocs.append(_list(types, "values", "EValue", len(n_value)))
    if meta.inputs:
        allocs.append(_list(types, "values", "bool", len(meta.inputs)))
    kinds = schema.KernelTypes
    values: list[tuple[int, Any]] = []  # (KernelTypes, the table of its val)
    for i in n_value:
        guard.at(plan, f"{where} value {i}")  # Values(i) reads its offset: name value i
        value = guard.table(plan.Values(i), f"{where} value {i}")
        kind = int(value.ValType())
        union = value.Val()
        table = None
        if kind != kinds.NONE and kind != kinds.Null:
            if union is None:
                raise et_pte.PteError(f"offset {guard.pos}: {where} value {i} has no value")
            cls = {
                kinds.Tensor: schema.Tensor,
                kinds.IntList: schema.IntList,
                kinds.BoolList: schema.BoolList,
                kinds.DoubleList: schema.DoubleList,
                kinds.TensorList: schema.TensorList,
                kinds.OptionalTensorList: schema.OptionalTensorList,
            }.get(kind)
            if cls is not None:
                table = cls()
                table.Init(union.Bytes, union.Pos)
                guard.table(table, f"{where} value {i}")
        values.append((kind, table))
    external = sum(
        1
        for kind, t in values
        if kind == kinds.Tensor
        and t.ExtraTensorInfo() is not None
        and int(t.ExtraTensorInfo().Location()) == _EXTERNAL
        and t.AllocationInfo() is None
    )
    if external:
        allocs.append(_list(types, "values", "NamedData", external))
        unknown.append(
            f"{external} external constant tensors (a .ptd): ETModel passes no external "
            "data, so loading fails"
        )
    dims: dict[int, int] = {}  # value index -> tensor rank
    for i, (kind, t) in enumerate(values):
        if kind == kinds.IntList:
            n = t.ItemsLength()
            allocs += [_list(types, "values", "EValue*", n), _list(types, "values", "int64_t", n)]
            allocs.append(_instance(types, "values", "BoxedEvalueList"))
        elif kind in (kinds.BoolList, kinds.DoubleList, kinds.String):
            allocs.append(_instance(types, "values", "ArrayRef"))
        elif kind == kinds.Tensor:
            dim = t.SizesLength()
            dims[i] = dim
            if int(t.ShapeDynamism()) != _STATIC:
                allocs += [
                    _list(types, "values", "SizesType", dim),
                    _list(types, "values", "DimOrderType", dim),
                ]
            allocs += [
                _list(types, "values", "StridesType", dim),
                _instance(types, "values", "TensorImpl"),
            ]
        elif kind == kinds.TensorList:
            n = t.ItemsLength()
            allocs += [_list(types, "values", "Tensor", n), _list(types, "values", "EValue*", n)]
            allocs.append(_instance(types, "values", "BoxedEvalueList"))
        elif kind == kinds.OptionalTensorList:
            n = t.ItemsLength()
            allocs += [
                _list(types, "values", "EValue*", n),
                _list(types, "values", "optional<Tensor>", n),
            ]
            allocs.append(_instance(types, "values", "BoxedEvalueList"))

    # 4. Method::init, delegates.
    guard.at(plan, where)
    n_delegate = plan.DelegatesLength()
    allocs.append(_list(types, "delegates", "BackendDelegate", n_delegate))
    for j in guard.count(n_delegate, f"{where} delegates"):
        delegate = guard.table(plan.Delegates(j), f"{where} delegate {j}")
        if delegate.CompileSpecsLength():
            allocs.append(_list(types, "delegates", "CompileSpec", delegate.CompileSpecsLength()))
        unknown.append(
            f"delegate {j} ({guard.text(delegate.Id()) or 'unnamed'}): what its backend's "
            "init() allocates"
        )

    # 5. Method::init, chains: the per-chain tables, then per instruction in order.
    guard.at(plan, where)
    n_chain = plan.ChainsLength()
    allocs.append(_list(types, "chains", "Chain", n_chain))
    calls = {(c.chain, c.instruction): c.args for c in meta.kernel_calls}
    delegate_calls = {(c.chain, c.instruction): c.args for c in meta.delegate_calls}
    for c in guard.count(n_chain, f"{where} chains"):
        chain = guard.table(plan.Chains(c), f"{where} chain {c}")
        n_instr = chain.InstructionsLength()
        allocs += [
            _list(types, "chains", "OpFunction", n_instr),
            _list(types, "chains", "InstructionArgs", n_instr),
        ]
        for k in range(n_instr):
            if (c, k) in calls:
                args = calls[(c, k)]
                allocs.append(_list(types, "chains", "EValue*", len(args)))
                # resolve_operator: TensorMeta per argument, a dim order per tensor one.
                allocs.append(_list(types, "chains", "TensorMeta", len(args)))
                allocs += [
                    _list(types, "chains", "DimOrderType", dims[a]) for a in args if a in dims
                ]
            elif (c, k) in delegate_calls:
                allocs.append(_list(types, "chains", "EValue*", len(delegate_calls[(c, k)])))

    # An arena 4 past an 8 boundary only exists where pointers are 4 bytes (malloc and the
    # examples' alignas(16) give 8 or more; a 64-bit allocator's pointer alignment is 8).
    residues = _BASE_RESIDUES if types["void*"][1] == 4 else (0,)
    total = max(_replay(allocs, 8 + residue) for residue in residues)
    return ArenaPlan(meta.name, planned, tuple(allocs), total, tuple(unknown))


def for_model_h(pte_bytes: bytes, reader: et_pte.ProgramReader) -> tuple[int | None, str]:
    """`(arena_bytes, arena_note)` for `et_model_h.model_h`: the first method's figure, or
    None and why there is none (the figure would leave out what `ArenaPlan.unknown` names).

    Raises:
        et_pte.PteError: see `method_arena`.
    """
    plan = method_arena(pte_bytes, reader)
    if plan.unknown:
        return None, "not derivable from the program alone: " + "; ".join(plan.unknown)
    return plan.total, ""


def host_arena_bytes(pte_bytes: bytes, reader: et_pte.ProgramReader) -> int | None:
    """The first method's figure on a 64-bit host (`TYPES_LP64`: the check's host run), or
    None when it is incomplete (see `for_model_h`).

    Raises:
        et_pte.PteError: see `method_arena`.
    """
    plan = method_arena(pte_bytes, reader, types=TYPES_LP64)
    return None if plan.unknown else plan.total
