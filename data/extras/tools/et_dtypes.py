"""The dtypes of a model's kernel calls, and a library's dtype-selective build.

Python standard library only, apart from the tools and the program reader beside it: this
file ships in every generated Arduino library under `extras/tools/` (check_models.py uses it)
and must run there with no pip packages (it is written to run on Python 3.8 and newer). The
generator imports it too (generator/pipeline/dtypes.py).

What it does:

* `kernel_call_dtypes(pte_bytes, reader)` lists, for every kernel call of a `.pte`, the dtypes
  of the tensors it passes, by the rule ExecuTorch's own model-based selective build uses.
* `library_dtypes(library_dir)` reads which dtypes a library keeps for each portable kernel
  (None: every dtype, the default).
* `dtype_problems` / `add_dtype_problems` name each kernel call whose tensors use a dtype the
  library left out, so such a model is refused before it reaches a board.

Facts used, with their sources (ExecuTorch sources):

* ScalarType values and names: runtime/core/portable_type/scalar_type.h
  (ET_FORALL_SCALAR_TYPES); the torch names are torch's dtype names for the same types.
* The dtypes a kernel call uses (codegen/tools/selective_build.cpp,
  `get_kernel_tensor_metadatas_from_execution_plan`): each argument that is a Tensor gives
  its scalar_type; a TensorList gives its first element's (an empty list gives none); an
  OptionalTensorList gives its first element that is a tensor (index -1 and Null are None).
* The dtype-selective build: kernels/portable/cpu/selective_build.h includes
  `selected_op_variants.h` when EXECUTORCH_SELECTIVE_BUILD_DTYPE is defined, and
  ET_INTERNAL_CHECK_SELECTIVE_BUILD (used by every ET_SWITCH case,
  runtime/core/exec_aten/util/scalar_type_util.h) then logs
  "dtype '%d' not selected for operator %s" and calls runtime_abort() for a dtype that
  `should_include_kernel_dtype(operator, dtype)` rejects. codegen/tools/
  gen_selected_op_variants.py writes that function: one clause per operator, its registry
  name without "aten::", ORed, each `compare("<name>") == 0) && (<checks>)` where the checks
  are `scalar_type == executorch::aten::ScalarType::<Name>` ORed, or `true` (every dtype).
* How a generated library switches it on (generator/pipeline/dtypes.py): `SELECTION_CONFIG` defines
  EXECUTORCH_SELECTIVE_BUILD_DTYPE and is included first by every portable op source, so the
  kernels (and only they, as ExecuTorch's CMake does with selected_portable_kernels) are
  compiled with the selection; `SELECTED_OP_VARIANTS` is ExecuTorch's generated header.
"""

from __future__ import annotations

import re
import struct
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

try:
    import et_checks
except ImportError:  # imported by path from elsewhere: et_checks.py is beside this file
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import et_checks
import et_model_h  # et_checks imported these three: importable now
import et_pte
import et_registration

__all__ = [
    "DTYPES",
    "SELECTED_OP_VARIANTS",
    "SELECTION_CONFIG",
    "SELECTION_DEFINE",
    "DtypeProblem",
    "KernelCallDtypes",
    "add_dtype_problems",
    "dtype_label",
    "dtype_problems",
    "kernel_call_dtypes",
    "library_dtypes",
    "operator_dtypes",
    "parse_selected_op_variants",
    "switch_name",
]

#: ScalarType value -> (ExecuTorch's name, torch's name), runtime/core/portable_type/
#: scalar_type.h. The ExecuTorch name is what C++ spells (ScalarType::Float) and what
#: ExecuTorch logs; the torch name is what `--dtypes` takes and what reports print.
DTYPES: dict[int, tuple[str, str]] = {
    0: ("Byte", "uint8"),
    1: ("Char", "int8"),
    2: ("Short", "int16"),
    3: ("Int", "int32"),
    4: ("Long", "int64"),
    5: ("Half", "float16"),
    6: ("Float", "float32"),
    7: ("Double", "float64"),
    8: ("ComplexHalf", "complex32"),
    9: ("ComplexFloat", "complex64"),
    10: ("ComplexDouble", "complex128"),
    11: ("Bool", "bool"),
    12: ("QInt8", "qint8"),
    13: ("QUInt8", "quint8"),
    14: ("QInt32", "qint32"),
    15: ("BFloat16", "bfloat16"),
    16: ("QUInt4x2", "quint4x2"),
    17: ("QUInt2x4", "quint2x4"),
    18: ("Bits1x8", "bits1x8"),
    19: ("Bits2x4", "bits2x4"),
    20: ("Bits4x2", "bits4x2"),
    21: ("Bits8", "bits8"),
    22: ("Bits16", "bits16"),
    23: ("Float8_e5m2", "float8_e5m2"),
    24: ("Float8_e4m3fn", "float8_e4m3fn"),
    25: ("Float8_e5m2fnuz", "float8_e5m2fnuz"),
    26: ("Float8_e4m3fnuz", "float8_e4m3fnuz"),
    27: ("UInt16", "uint16"),
    28: ("UInt32", "uint32"),
    29: ("UInt64", "uint64"),
}

#: The library's folder of portable kernels (ExecuTorch's kernels/portable/cpu/).
PORTABLE_DIR = "src/executorch/kernels/portable/cpu"
#: ExecuTorch's generated header, where selective_build.h's `#include "selected_op_variants.h"`
#: finds it (beside it).
SELECTED_OP_VARIANTS = f"{PORTABLE_DIR}/selected_op_variants.h"
#: The generator's header that switches the selection on; every portable op source includes
#: it first. Absent: the library keeps every dtype.
SELECTION_CONFIG = f"{PORTABLE_DIR}/arduino_selective_build_dtype.h"
#: The macro ExecuTorch's selective_build.h tests.
SELECTION_DEFINE = "EXECUTORCH_SELECTIVE_BUILD_DTYPE"

_CLAUSE = re.compile(r'compare\("(?P<op>[^"]+)"\)\s*==\s*0\)\s*&&\s*\((?P<checks>[^()]*)\)\)', re.S)
_CHECK = re.compile(r"scalar_type\s*==\s*executorch::aten::ScalarType::(?P<name>\w+)")
_BODY = re.compile(
    r"should_include_kernel_dtype\s*\([^)]*\)\s*\{\s*return\s+(?P<body>.*?);\s*\}", re.S
)
_BY_NAME = {name: value for value, (name, _) in DTYPES.items()}

#: Reading a value table through FlatBuffers' Python runtime past its end raises these.
_CORRUPT = (struct.error, IndexError, ValueError, TypeError, AttributeError)


def dtype_label(value: int) -> str:
    """`value` (a ScalarType) as reports print it: "float32 (Float)", or "dtype 42"."""
    names = DTYPES.get(value)
    return f"{names[1]} ({names[0]})" if names else f"dtype {value}"


def switch_name(operator: str) -> str:
    """The name a portable kernel passes to ET_SWITCH (and `should_include_kernel_dtype`
    receives) for the registry name `operator`: ExecuTorch's generator drops "aten::" only
    ("aten::add.out" -> "add.out", "dim_order_ops::_clone_dim_order.out" unchanged)."""
    return operator[len("aten::") :] if operator.startswith("aten::") else operator


# ---------------------------------------------------------------------------------------
# The model's side


@dataclass(frozen=True)
class KernelCallDtypes:
    """The dtypes of the tensors one kernel call passes.

    Attributes:
        method: the method ("forward"); operator: the registry name ("aten::add.out");
        dtypes: ScalarType values, sorted (empty: the call passes no tensor).
    """

    method: str
    operator: str
    dtypes: tuple[int, ...]


def _tensor_dtype(schema: Any, value: Any) -> int:
    tensor = schema.Tensor()
    tensor.Init(value.Bytes, value.Pos)
    return int(tensor.ScalarType())


def _value_dtype(schema: Any, plan: Any, index: int, where: str) -> int | None:
    """The dtype value `index` of `plan` gives an argument (ExecuTorch's rule, see
    `kernel_call_dtypes`), None when it gives none."""
    kinds = schema.KernelTypes
    count = plan.ValuesLength()

    def evalue(at: int) -> Any:
        if not 0 <= at < count:
            raise et_pte.PteError(f"{where} names value {at}, the method has {count}")
        return plan.Values(at)

    value = evalue(index)
    kind = value.ValType()
    if kind == kinds.Tensor:
        return _tensor_dtype(schema, value.Val())
    if kind in (kinds.TensorList, kinds.OptionalTensorList):
        items = schema.TensorList() if kind == kinds.TensorList else schema.OptionalTensorList()
        table = value.Val()
        items.Init(table.Bytes, table.Pos)
        for j in range(items.ItemsLength()):
            item_index = int(items.Items(j))
            if item_index == -1:
                continue
            item = evalue(item_index)
            if item.ValType() == kinds.Tensor:
                return _tensor_dtype(schema, item.Val())
            if kind == kinds.TensorList:
                break  # ExecuTorch reads the first element only
    return None


def _call_dtypes(
    schema: Any, plan: Any, args: tuple[int, ...], where: str, seen: dict[int, int | None]
) -> set[int]:
    """The dtypes the arguments `args` (value indices) of one call give; `seen` holds each
    value's dtype once read (per plan): the calls of a method may all pass one list of a
    million entries, which read again for each call made a small file take hours."""
    found: set[int] = set()
    for arg in args:
        if arg not in seen:
            seen[arg] = _value_dtype(schema, plan, arg, where)
        dtype = seen[arg]
        if dtype is not None:
            found.add(dtype)
    return found


def kernel_call_dtypes(pte_bytes: bytes, reader: et_pte.ProgramReader) -> list[KernelCallDtypes]:
    """The dtypes of the tensors each kernel call of a `.pte` passes, in call order.

    The rule is ExecuTorch's (codegen/tools/selective_build.cpp): a Tensor argument gives its
    scalar_type, a TensorList its first element's, an OptionalTensorList its first element
    that is a tensor; other arguments (ints, scalars, lists of ints) give none.

    Args:
        pte_bytes: the whole `.pte`; reader: from `et_pte.load_reader`.

    Raises:
        PteError: the file is not a readable program, or a call names a value past the
            method's value table (the message names which).
        SchemaError: see `et_pte.read_program`.
    """
    program = et_pte.read_program(pte_bytes, reader)  # checks the structure first
    schema = reader.schema
    root = schema.Program.GetRootAs(bytes(pte_bytes), 0)
    calls: list[KernelCallDtypes] = []
    try:
        for index, method in enumerate(program.methods):
            plan = root.ExecutionPlan(index)
            seen: dict[int, int | None] = {}
            for call in method.kernel_calls:
                where = (
                    f"method {method.name!r} chain {call.chain} instruction {call.instruction} "
                    f"({call.operator})"
                )
                found = _call_dtypes(schema, plan, call.args, where, seen)
                calls.append(KernelCallDtypes(method.name, call.operator, tuple(sorted(found))))
    except _CORRUPT as e:
        raise et_pte.PteError(
            f"a value a kernel call passes points past the end of the buffer ({e})"
        ) from None
    return calls


def operator_dtypes(calls: list[KernelCallDtypes]) -> dict[str, set[int]]:
    """Operator -> every dtype its calls pass (the union over `calls`)."""
    found: dict[str, set[int]] = {}
    for call in calls:
        found.setdefault(call.operator, set()).update(call.dtypes)
    return found


# ---------------------------------------------------------------------------------------
# The library's side


def parse_selected_op_variants(text: str) -> dict[str, frozenset[int] | None]:
    """What a `selected_op_variants.h` (ExecuTorch's gen_selected_op_variants.py) keeps.

    Returns:
        switch name ("add.out", see `switch_name`) -> the ScalarType values its kernel keeps,
        or None for every dtype (the clause's check is `true`). Empty when the function
        returns `true` outright (no operator named: every dtype of every kernel).

    Raises:
        RegistrationError: the text is not in the generator's format, or names a ScalarType
            ExecuTorch does not have (the message quotes it).
    """
    body = _BODY.search(text)
    if body is None:
        raise et_registration.RegistrationError(
            "no `should_include_kernel_dtype(...) { return ...; }` in it: not the output of "
            "ExecuTorch's gen_selected_op_variants.py; regenerate the library"
        )
    if body.group("body").strip() == "true":
        return {}
    kept: dict[str, frozenset[int] | None] = {}
    clauses = list(_CLAUSE.finditer(body.group("body")))
    if not clauses:
        raise et_registration.RegistrationError(
            f"cannot read its operator clauses ({body.group('body')[:80]!r}): "
            "ExecuTorch's gen_selected_op_variants.py changed its format"
        )
    for clause in clauses:
        checks = clause.group("checks").strip()
        if checks == "true":
            kept[clause.group("op")] = None
            continue
        values = set()
        for name in _CHECK.findall(checks):
            if name not in _BY_NAME:
                raise et_registration.RegistrationError(
                    f"it names ScalarType::{name} for {clause.group('op')}, which ExecuTorch "
                    "does not have (runtime/core/portable_type/scalar_type.h)"
                )
            values.add(_BY_NAME[name])
        kept[clause.group("op")] = frozenset(values)
    return kept


def library_dtypes(library_dir: str | Path) -> dict[str, frozenset[int] | None] | None:
    """The dtypes each portable kernel of a library keeps.

    Returns:
        None when the library keeps every dtype (no `SELECTION_CONFIG`: the default build);
        else `parse_selected_op_variants` of its `SELECTED_OP_VARIANTS`.

    Raises:
        RegistrationError: the selection is switched on but its header is missing or
            unreadable.
    """
    root = Path(library_dir)
    if not (root / SELECTION_CONFIG).is_file():
        return None
    path = root / SELECTED_OP_VARIANTS
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise et_registration.RegistrationError(
            f"{SELECTION_CONFIG} switches the dtype-selective build on, but {path} cannot be "
            f"read ({e}); regenerate the library"
        ) from None
    try:
        return parse_selected_op_variants(text)
    except et_registration.RegistrationError as e:
        raise et_registration.RegistrationError(f"{path}: {e}") from None


#: Why a kernel call's dtype is missing, and what to do.
DTYPE_CAUSE = (
    "the library was built with a dtype-selective build (--dtypes or --dtypes-from-pte) that "
    "leaves this dtype out of this kernel; regenerate it with the dtype added (--dtypes "
    "naming it too), or with --dtypes-from-pte naming this model and every other model the "
    "library must run"
)


@dataclass(frozen=True)
class DtypeProblem(et_checks.Problem):
    """A kernel call whose tensors use a dtype the library's kernel was built without.

    ExecuTorch's ET_SWITCH then logs "dtype '<value>' not selected for operator <name>" and
    calls runtime_abort(): no Error is returned, the board halts (et_pal_abort). `error` is
    "DtypeNotSelected" and `code` 0 for that reason; `model_args` and `library_args` are the
    call's argument count (the count matches: only the dtype does not).

    Attributes:
        dtype: the ScalarType value left out; kept: the values the kernel keeps, sorted.
    """

    dtype: int = -1
    kept: tuple[int, ...] = ()

    @property
    def message(self) -> str:
        """One line naming the operator, the dtype, what the kernel keeps and the cause."""
        kept = ", ".join(dtype_label(v) for v in self.kept) or "no dtype"
        times = f" [{self.calls} calls in {self.method}]" if self.calls > 1 else f" [{self.method}]"
        return (
            f"{self.operator} is called with {dtype_label(self.dtype)} tensors, a dtype the "
            f"library's kernel was built without (it keeps {kept}): Method::execute logs "
            f"\"dtype '{self.dtype}' not selected for operator {switch_name(self.operator)}\" "
            f"and aborts{times}; likely cause: {self.cause}"
        )

    @property
    def cause(self) -> str:
        """DTYPE_CAUSE."""
        return DTYPE_CAUSE

    def to_dict(self) -> dict[str, Any]:
        """`Problem.to_dict` plus `dtype` (torch name), `dtype_value` and `kept` (torch names)."""
        doc = super().to_dict()
        doc.update(
            dtype=DTYPES.get(self.dtype, ("", f"dtype {self.dtype}"))[1],
            dtype_value=self.dtype,
            kept=[DTYPES.get(v, ("", f"dtype {v}"))[1] for v in self.kept],
        )
        return doc


def dtype_problems(
    calls: list[KernelCallDtypes],
    kept: dict[str, frozenset[int] | None],
    arg_counts: dict[tuple[str, str], int] | None = None,
) -> list[DtypeProblem]:
    """The kernel calls of `calls` that pass a dtype `kept` (from `library_dtypes`) leaves out.

    An operator `kept` does not name keeps every dtype (the library lists every portable
    kernel it restricts; other kernels are compiled without the selection).

    Returns:
        One problem per (method, operator, dtype), in call order, with how many calls share
        it; `arg_counts` ((method, operator) -> argument count) fills in the counts.
    """
    found: dict[tuple[str, str, int], DtypeProblem] = {}
    for call in calls:
        allowed = kept.get(switch_name(call.operator))
        if allowed is None:
            continue
        for dtype in call.dtypes:
            if dtype in allowed:
                continue
            key = (call.method, call.operator, dtype)
            if key in found:
                found[key] = replace(found[key], calls=found[key].calls + 1)
                continue
            args = (arg_counts or {}).get((call.method, call.operator), 0)
            found[key] = DtypeProblem(
                method=call.method,
                operator=call.operator,
                error="DtypeNotSelected",
                code=0,
                model_args=args,
                library_args=args,
                dtype=dtype,
                kept=tuple(sorted(allowed)),
            )
    return list(found.values())


def _model_bytes(library: Path, result: et_checks.ModelResult) -> bytes:
    """The `.pte` a ModelResult was read from: an example's model.h (its `source` relative
    to the library) or the `.pte` file itself."""
    source = Path(result.source)
    if source.suffix == ".h":
        path = source if source.is_absolute() else library / source
        return et_model_h.pte_from_model_h(et_pte.read_model_h(path))
    return et_pte.read_pte(source)


def add_dtype_problems(
    library_dir: str | Path, results: list[et_checks.ModelResult]
) -> list[et_checks.ModelResult]:
    """`results` (from `et_checks.check_library` on the same library) with each model's dtype
    problems added after its other problems; unchanged when the library keeps every dtype.

    Raises:
        RegistrationError: see `library_dtypes`.
        SchemaError: the library's program reader does not import.
    """
    root = Path(library_dir)
    kept = library_dtypes(root)
    if not kept:
        return results
    reader = et_pte.load_reader(root / et_pte.LIBRARY_READER_DIR)
    out: list[et_checks.ModelResult] = []
    for result in results:
        if result.error:
            out.append(result)
            continue
        try:
            data = _model_bytes(root, result)
            calls = kernel_call_dtypes(data, reader)
            program = et_pte.read_program(data, reader)
        except (OSError, UnicodeDecodeError, et_pte.PteError) as e:
            out.append(replace(result, error=f"cannot read its dtypes: {e}"))
            continue
        counts = {
            (m.name, c.operator): c.arg_count for m in program.methods for c in m.kernel_calls
        }
        problems = dtype_problems(calls, kept, counts)
        out.append(replace(result, problems=(*result.problems, *problems)) if problems else result)
    return out
