"""Step 4: the op set, i.e. which operators the library registers.

Registering every portable operator costs about 1.58 MB of text, twice the UNO Q's flash, so
the op set is chosen at generation time and recorded in extras/PROVENANCE.txt.

The default op set is every Cortex-M backend operator (each entry of the ref's
`backends/cortex_m/ops/operators.yaml`) plus the portable root ops that the models people
bring first lower to (`DEFAULT_ROOT_OPS`: the model zoo of tests/fixtures/zoo/ and the common
torch.nn layers; the evidence is `DEFAULT_OP_EVIDENCE`; both in default_ops.py). `--ops`
replaces the root ops, `--all-ops` takes every portable op, and `--ops-from-pte` takes
exactly the operators the given `.pte` files call.

ExecuTorch's prim ops (`aten::sym_size.int`, `executorch_prim::*`) are no part of any op set:
every library ships the ref's `kernels/prim_ops/register_prim_ops.cpp`, so `--ops-from-pte`
leaves them out of the codegen's selection. Kernel selection (step 10, `selection.py`)
registers that file's table as one, before the runtime's first registry lookup, when a
sketch's model.h selects a prim op; a model.h without a selection registers them with every
kernel, through the fallback.

Reading the kernel yamls and finding each kernel's source takes about a second; the choice is a
function of the tree and the options, so `op_set_choice` keeps it in the step cache.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from generator.pipeline.default_ops import DEFAULT_ROOT_OPS
from generator.pipeline.models import registered_prim_ops
from generator.util.cache import StepCache, code_version
from generator.util.confine import confined_file, confined_path
from generator.util.errors import FatalError

PORTABLE_YAML = "kernels/portable/functions.yaml"
CORTEX_M_YAML = "backends/cortex_m/ops/operators.yaml"
PORTABLE_OPS_DIR = "kernels/portable/cpu"
CORTEX_M_OPS_DIR = "backends/cortex_m/ops"
#: The prim ops registration every library ships (see the module docstring).
PRIM_OPS_SOURCE = "kernels/prim_ops/register_prim_ops.cpp"


@dataclass(frozen=True)
class OpEntry:
    """One operator of a kernel yaml.

    Attributes:
        name: full operator name, namespace included, e.g. "aten::add.out".
        kernel: the C++ function implementing it, without namespace, e.g. "add_out".
        source: the yaml it came from, relative to the ExecuTorch root.
    """

    name: str
    kernel: str
    source: str


@dataclass(frozen=True)
class OpSet:
    """The operators a library registers.

    Attributes:
        ops: every selected operator (portable and Cortex-M), sorted.
        mode: "default", "ops", "all-ops" or "ops-from-pte".
        root_ops: the portable root ops asked for (empty for all-ops).
    """

    ops: tuple[str, ...]
    mode: str
    root_ops: tuple[str, ...]

    def describe(self) -> str:
        """One line for PROVENANCE and the summary."""
        if self.mode == "all-ops":
            return "every portable op and every Cortex-M op"
        if self.mode == "ops-from-pte":
            return "exactly the operators the given .pte files call"
        what = "default root ops" if self.mode == "default" else "root ops from --ops"
        return f"every Cortex-M op + {what}"


_FUNC = re.compile(r"^\s*([\w:]+(?:\.\w+)?)\s*\(")
#: A full operator name, `namespace::name` or `namespace::name.overload`, and a kernel's C++
#: name: what every entry of ExecuTorch's kernel yamls is (all 246 of functions.yaml,
#: operators.yaml and quantized.yaml at cff6f4dd). A ref is untrusted: its names reach
#: generated C++, PROVENANCE.txt and the sync pull request, so anything else is refused.
_OP_NAME = re.compile(r"[A-Za-z_]\w*::[A-Za-z_]\w*(?:\.\w+)?")
_KERNEL_NAME = re.compile(r"[A-Za-z_]\w*")


def _full_name(raw: str) -> str:
    return raw if "::" in raw else f"aten::{raw}"


def read_op_yaml(root: Path, relpath: str) -> list[OpEntry]:
    """Parse a kernel yaml (`op: add.out` or `func: ns::name.overload(...)` entries).

    Raises:
        FatalError: when the file is missing or malformed, or names an operator or kernel
            that is not a C++-style name (`_OP_NAME`, `_KERNEL_NAME`).
    """
    path = confined_path(root, relpath, "ExecuTorch")
    if path.is_dir():
        raise FatalError(f"the ExecuTorch tree's {relpath} is a folder, not a kernel yaml")
    try:
        # libyaml's loader when PyYAML has it: the portable yaml takes ~0.2 s in pure Python.
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        entries = yaml.load(path.read_text(encoding="utf-8"), Loader=loader) or []
    except FileNotFoundError:
        raise FatalError(
            f"the ExecuTorch tree has no {relpath}; this ref is too old for the Arduino "
            "library (the Cortex-M backend is needed), pick a newer ref"
        ) from None
    except yaml.YAMLError as e:
        raise FatalError(f"{relpath} is not valid YAML: {e}") from None
    ops: list[OpEntry] = []
    for entry in entries:
        if "op" in entry:
            name = _full_name(str(entry["op"]))
        else:
            match = _FUNC.match(str(entry.get("func", "")))
            if not match:
                raise FatalError(f"{relpath}: cannot read operator entry {entry!r}")
            name = _full_name(match.group(1))
        kernels = entry.get("kernels") or [{}]
        kernel = str(kernels[0].get("kernel_name", "")).split("::")[-1]
        if not _OP_NAME.fullmatch(name) or not _KERNEL_NAME.fullmatch(kernel):
            raise FatalError(
                f"{relpath} names operator {name!r} (kernel {kernel!r}), which is not an "
                "operator name of the form namespace::name.overload and a C++ name: refusing "
                "this ref"
            )
        ops.append(OpEntry(name=name, kernel=kernel, source=relpath))
    return ops


def _unknown(names: Iterable[str], known: Sequence[str], what: str) -> FatalError:
    lines = []
    for name in names:
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        lines.append(f"  {name}{hint}")
    return FatalError(
        f"unknown operator(s) in {what}:\n"
        + "\n".join(lines)
        + "\nOperator names are full schema names such as aten::add.out; the known ones are in "
        f"{PORTABLE_YAML} and {CORTEX_M_YAML} of the ref (and its prim ops, which every "
        f"library registers, in {PRIM_OPS_SOURCE})"
    )


def prim_ops(root: Path) -> frozenset[str]:
    """The prim ops the ref's `PRIM_OPS_SOURCE` registers (read from it, as the model check
    reads the library's copy).

    Raises:
        FatalError: the source registers nothing readable (its format changed); it is a
            symbolic link out of the checkout or a special file (`confined_path`).
    """
    return frozenset(registered_prim_ops(confined_path(root, PRIM_OPS_SOURCE, "ExecuTorch")))


def select_op_set(
    root: Path,
    *,
    ops: Sequence[str] | None = None,
    all_ops: bool = False,
    pte_ops: Sequence[str] | None = None,
) -> OpSet:
    """Choose the op set for the ExecuTorch tree at `root`.

    Args:
        root: ExecuTorch checkout.
        ops: `--ops` root ops replacing the default ones.
        all_ops: `--all-ops`.
        pte_ops: operators called by the `--ops-from-pte` files (already decoded); the ref's
        prim ops among them are left out (shipped in every library, see `prim_ops`).
    Raises:
        FatalError: an unknown operator name (with close matches listed), a prim op in
            `ops`, or no op at all.
    """
    portable = read_op_yaml(root, PORTABLE_YAML)
    cortex_m = read_op_yaml(root, CORTEX_M_YAML)
    known = sorted({o.name for o in portable} | {o.name for o in cortex_m})
    cortex_names = tuple(sorted(o.name for o in cortex_m))
    if all_ops:
        return OpSet(tuple(known), "all-ops", ())
    always = prim_ops(root)
    if pte_ops is not None:
        called = set(pte_ops) - always
        unknown = sorted(called - set(known))
        if unknown:
            raise _unknown(unknown, known, "the --ops-from-pte models (no kernel for them)")
        if not pte_ops:
            raise FatalError(
                "the --ops-from-pte models call no operator; check the files (a model lowered "
                "whole to a delegate backend calls none, and runs only where that backend is "
                "registered)"
            )
        if not called:
            raise FatalError(
                "the --ops-from-pte models call only ExecuTorch prim ops "
                f"({', '.join(sorted(pte_ops))}), which every library registers; build "
                "without --ops-from-pte (the default op set)"
            )
        portable_names = {o.name for o in portable}
        roots = tuple(sorted(called & portable_names))
        return OpSet(tuple(sorted(called)), "ops-from-pte", roots)
    if ops is not None and not ops:
        raise FatalError("--ops names no operator; give at least one, e.g. --ops aten::add.out")
    roots = tuple(ops) if ops is not None else DEFAULT_ROOT_OPS
    prim = sorted(set(roots) & always)
    if prim:
        raise FatalError(
            f"--ops names {', '.join(prim)}: ExecuTorch prim ops, which every library "
            f"registers ({PRIM_OPS_SOURCE}); leave them out of --ops"
        )
    unknown = [o for o in roots if o not in known]
    if unknown:
        raise _unknown(unknown, known, "--ops" if ops is not None else "the default root ops")
    return OpSet(
        tuple(sorted(set(roots) | set(cortex_names))),
        "ops" if ops is not None else "default",
        tuple(roots),
    )


def _definition(kernel: str) -> re.Pattern[str]:
    # `Tensor& add_out(`, `std::tuple<...> max_out(`, `void split_copy_Tensor_out(`, or a
    # pattern macro `DEFINE_UNARY_UFUNC_...(acos_out, std::acos)`.
    k = re.escape(kernel)
    return re.compile(rf"(?:(?:[&>]|\bvoid)\s*{k}\s*\(|\(\s*{k}\s*,)")


def kernel_sources(root: Path, op_set: OpSet) -> dict[str, str]:
    """Map each selected operator to the `op_*.cpp` that defines its kernel.

    Portable kernels are looked up in kernels/portable/cpu, Cortex-M ones in
    backends/cortex_m/ops, by the kernel function the yaml names.

    Returns:
        operator name -> source path relative to `root`.
    Raises:
        FatalError: when no source, or more than one, defines a selected kernel.
    """
    result: dict[str, str] = {}
    selected = set(op_set.ops)
    for yaml_path, folder in ((PORTABLE_YAML, PORTABLE_OPS_DIR), (CORTEX_M_YAML, CORTEX_M_OPS_DIR)):
        sources = {
            p: confined_file(root, p.relative_to(root), "ExecuTorch").read_text(
                encoding="utf-8", errors="replace"
            )
            for p in sorted((confined_path(root, folder, "ExecuTorch")).glob("op_*.cpp"))
        }
        for entry in read_op_yaml(root, yaml_path):
            if entry.name not in selected:
                continue
            pattern = _definition(entry.kernel)
            hits = [p for p, text in sources.items() if pattern.search(text)]
            if len(hits) != 1:
                found = ", ".join(str(h.relative_to(root)) for h in hits) or "none"
                raise FatalError(
                    f"cannot tell which source implements {entry.name} (kernel {entry.kernel}) "
                    f"in {folder}: found {found}. The tree's layout changed; this is a bug in "
                    "the generator's op source lookup"
                )
            result[entry.name] = str(hits[0].relative_to(root))
    return result


def available_op_sources(root: Path) -> int:
    """How many portable `op_*.cpp` sources the tree has (for the summary and benchmark)."""
    return len(
        [p for p in (root / PORTABLE_OPS_DIR).glob("op_*.cpp") if not p.name.endswith("_aten.cpp")]
    )


@dataclass(frozen=True)
class OpSetChoice:
    """What the op set step chose: the operators, and the op sources implementing them.

    Attributes:
        op_set: the operators registered; sources: operator -> its `op_*.cpp`, relative
            to the ExecuTorch root (portable under kernels/, Cortex-M under backends/).
    """

    op_set: OpSet
    sources: Mapping[str, str]

    @property
    def op_files(self) -> list[str]:
        """The op sources that ship, sorted (one source may implement several operators)."""
        return sorted(set(self.sources.values()))

    @property
    def portable_sources(self) -> int:
        """How many of `op_files` are portable op sources."""
        return sum(1 for s in self.op_files if s.startswith("kernels/"))

    @property
    def cortex_m_sources(self) -> int:
        """How many of `op_files` are Cortex-M op sources."""
        return len(self.op_files) - self.portable_sources


def choose_op_set(
    root: Path,
    *,
    ops: Sequence[str] | None,
    all_ops: bool,
    pte_ops: Sequence[str] | None,
) -> OpSetChoice:
    """The op set for the ExecuTorch tree at `root` (see `select_op_set` for the arguments)
    and the op source of each operator (`kernel_sources`).

    Raises:
        FatalError: see `select_op_set` and `kernel_sources`.
    """
    op_set = select_op_set(root, ops=ops, all_ops=all_ops, pte_ops=pte_ops)
    return OpSetChoice(op_set, kernel_sources(root, op_set))


def op_set_choice(
    tree: Mapping[str, Any],
    root: Path,
    *,
    ops: Sequence[str] | None,
    all_ops: bool,
    pte_ops: Sequence[str] | None,
    steps: StepCache,
) -> OpSetChoice:
    """`choose_op_set`, or its result from the step cache.

    Args:
        tree: what identifies the tree at `root` (the ref's full SHA, the paths checked out);
            the rest as for `choose_op_set`.
    Raises:
        FatalError: see `choose_op_set` (errors are never cached).
    """
    key = {
        "tree": dict(tree),
        "ops": None if ops is None else list(ops),
        "all_ops": all_ops,
        "pte_ops": None if pte_ops is None else sorted(pte_ops),
        "code": code_version(
            "pipeline.opset", "pipeline.default_ops", "pipeline.models", "util.cache"
        ),
    }
    restored = steps.get("opset", key, _choice_from)
    if restored is not None:
        return restored
    chosen = choose_op_set(root, ops=ops, all_ops=all_ops, pte_ops=pte_ops)
    op_set = chosen.op_set
    steps.put(
        "opset",
        key,
        {
            "ops": list(op_set.ops),
            "mode": op_set.mode,
            "root_ops": list(op_set.root_ops),
            # Pairs, not an object: the entry is written with sorted keys, this keeps the order.
            "sources": [[op, src] for op, src in chosen.sources.items()],
        },
    )
    return chosen


def _choice_from(stored: Any) -> OpSetChoice | None:
    """The `OpSetChoice` a stored entry holds, or None when it holds none (every operator
    of an op set has its source: `kernel_sources` raises otherwise)."""
    if not isinstance(stored, dict):
        return None
    ops, mode, roots, sources = (stored.get(k) for k in ("ops", "mode", "root_ops", "sources"))
    if not (isinstance(ops, list) and isinstance(roots, list) and isinstance(sources, list)):
        return None
    pairs = [p for p in sources if isinstance(p, list) and len(p) == 2]
    names = ops + roots + [name for pair in pairs for name in pair]
    if len(pairs) != len(sources) or not all(isinstance(o, str) for o in names):
        return None
    found = dict(pairs)
    if mode not in ("default", "ops", "all-ops", "ops-from-pte") or set(found) != set(ops):
        return None
    return OpSetChoice(OpSet(tuple(ops), str(mode), tuple(roots)), found)
