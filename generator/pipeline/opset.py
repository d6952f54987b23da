"""Step 4: the op set, i.e. which operators the library registers.

Registering every portable operator costs about 1.58 MB of text, twice the UNO Q's flash, so
the op set is chosen at generation time and recorded in extras/PROVENANCE.txt.

The default op set is every Cortex-M backend operator (each entry of the ref's
`backends/cortex_m/ops/operators.yaml`) plus the portable root ops that the models people
bring first lower to (`DEFAULT_ROOT_OPS`: the model zoo of tests/fixtures/zoo/ and the common
torch.nn layers; the evidence is `DEFAULT_OP_EVIDENCE`). `--ops` replaces the root ops,
`--all-ops` takes every portable op, and `--ops-from-pte` takes exactly the operators the
given `.pte` files call.

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

#: The portable root ops of the default op set: what the model zoo (tests/fixtures/zoo/, issue
#: 18) and the common torch.nn layers lower to, read from their programs with
#: extras/tools/et_pte.py (torch 2.13.0, executorch 1.5.1 wheel, plain `exir.to_edge`; int8
#: models with the Cortex-M quantizer and passes). Kernel selection (issue 8) links only the
#: kernels a sketch's model.h selects, so an op here costs a sketch's flash nothing unless its
#: model calls it; what it costs is compile time and download size (benchmarks/bench_opset.py).
#:
#: The evidence, row by row, is `DEFAULT_OP_EVIDENCE` below.
#:
#: nn.TransformerEncoderLayer and nn.MultiheadAttention (issue 31) are taken whole: what their
#: mask handling calls (any, eq.Scalar_out, full_like, logical_not, mul.Scalar_out; with a
#: boolean mask, in a plain `to_edge` export, scalar_tensor; with is_causal=True, full and
#: logical_and, and in a plain `to_edge` export arange.start_out, le.Scalar_out) is in the
#: set, for both layers' options (batch_first, norm_first, activation relu or gelu) and
#: masks (none, a key padding mask, a boolean or float attention mask, both). Not probed:
#: nn.TransformerDecoderLayer and nn.Transformer. What the 9 operators cost (2026-12-03,
#: `build` at cff6f4dd, the default library before and after): 52 -> 60 op sources
#: (mul.Scalar_out is op_mul.cpp's), 152 -> 161 sources compiled, 457 -> 468 files and
#: 4,573,089 -> 4,618,104 B on disk (+1.0%). The cold first compile was not measured
#: (benchmarks/bench_opset.py was not run: the machine was shared by several builds).
#:
#: Not taken: every portable op (`--all-ops`, 172 op sources against this set's 60) is not the
#: default: its first compile was not measured (benchmarks/bench_opset.py measures this set
#: against the previous one), and with 2.9 times this set's op sources it could not stay
#: within issue 18's target of twice the previous first compile unless op sources were nearly
#: free, which they are not (see the benchmark).
#: The layer probe that made the rows of the layers is
#: `python tests/fixtures/zoo/export_zoo.py --layers`.
#:
#: dim_order_ops are not optional: the Cortex-M lowering emits _clone_dim_order in place of
#: aten::clone for channels-last models.
DEFAULT_ROOT_OPS: tuple[str, ...] = (
    # today's (0.2.0's) set: the int8 Cortex-M CNN's portable ops
    "aten::add.out",
    "aten::mul.out",
    "aten::sub.out",
    "aten::div.out",
    "aten::view_copy.out",
    "aten::permute_copy.out",
    "aten::clone.out",
    "aten::cat.out",
    "aten::slice_copy.Tensor_out",
    "aten::_softmax.out",
    "aten::mean.out",
    "aten::relu.out",
    "dim_order_ops::_clone_dim_order.out",
    "dim_order_ops::_to_dim_order_copy.out",
    # the zoo's float models
    "aten::addmm.out",
    "aten::bmm.out",
    "aten::convolution.out",
    "aten::max_pool2d_with_indices.out",
    "aten::_native_batch_norm_legit_no_training.out",
    "aten::native_layer_norm.out",
    "aten::gelu.out",
    "aten::sigmoid.out",
    "aten::tanh.out",
    "aten::full.out",
    "aten::expand_copy.out",
    "aten::select_copy.int_out",
    "aten::split_with_sizes_copy.out",
    "aten::squeeze_copy.dims_out",
    "aten::unsqueeze_copy.out",
    # the common torch.nn layers' (table above)
    "aten::mm.out",
    "aten::avg_pool2d.out",
    "aten::_adaptive_avg_pool2d.out",
    "aten::hardtanh.out",
    "aten::leaky_relu.out",
    "aten::elu.out",
    "aten::clamp.out",
    "aten::_log_softmax.out",
    "aten::native_group_norm.out",
    "aten::upsample_nearest2d.vec_out",
    "aten::constant_pad_nd.out",
    "aten::exp.out",
    "aten::log1p.out",
    "aten::gt.Scalar_out",
    "aten::where.self_out",
    "aten::sum.IntList_out",
    "aten::sqrt.out",
    "aten::abs.out",
    "aten::embedding.out",
    "aten::argmax.out",
    "aten::max.dim_max",
    "aten::topk.values",
    "aten::upsample_bilinear2d.vec_out",
    # nn.TransformerEncoderLayer and nn.MultiheadAttention (issue 31): their mask handling
    "aten::any.out",
    "aten::eq.Scalar_out",
    "aten::full_like.out",
    "aten::logical_not.out",
    "aten::mul.Scalar_out",
    "aten::logical_and.out",
    "aten::scalar_tensor.out",
    "aten::arange.start_out",
    "aten::le.Scalar_out",
)

#: The portable root ops of the default op set before issue 18 (0.2.0 and earlier): the
#: baseline benchmarks/bench_opset.py compares with (`build --ops` takes them).
PREVIOUS_ROOT_OPS: tuple[str, ...] = (
    "aten::add.out",
    "aten::mul.out",
    "aten::sub.out",
    "aten::div.out",
    "aten::view_copy.out",
    "aten::permute_copy.out",
    "aten::clone.out",
    "aten::cat.out",
    "aten::slice_copy.Tensor_out",
    "aten::_softmax.out",
    "aten::mean.out",
    "aten::relu.out",
    "dim_order_ops::_clone_dim_order.out",
    "dim_order_ops::_to_dim_order_copy.out",
)


#: Why each root op of `DEFAULT_ROOT_OPS` is there: a model of the zoo or a torch.nn layer ->
#: the portable operators its program calls (read with extras/tools/et_pte.py from its
#: export with torch 2.13.0 and the executorch 1.5.1 wheel; the layers by
#: `python tests/fixtures/zoo/export_zoo.py --layers`). The int8 models of the zoo (Int8Mlp,
#: Int8Conv) call Cortex-M ops, which every default library registers, and
#: dim_order_ops::_clone_dim_order.
DEFAULT_OP_EVIDENCE: dict[str, tuple[str, ...]] = {
    "the previous default (0.2.0): an int8 Cortex-M CNN's portable ops": PREVIOUS_ROOT_OPS,
    "zoo Mlp: nn.Linear, ReLU": ("aten::addmm.out", "aten::permute_copy.out", "aten::relu.out"),
    "zoo Cnn: conv2d, ReLU, max pool, linear, softmax": (
        "aten::convolution.out",
        "aten::max_pool2d_with_indices.out",
        "aten::addmm.out",
        "aten::permute_copy.out",
        "aten::relu.out",
        "aten::_softmax.out",
    ),
    "zoo Gru: nn.GRU, linear (zoo Lstm: the same without sub)": (
        "aten::addmm.out",
        "aten::add.out",
        "aten::sub.out",
        "aten::mul.out",
        "aten::sigmoid.out",
        "aten::tanh.out",
        "aten::cat.out",
        "aten::full.out",
        "aten::permute_copy.out",
        "aten::select_copy.int_out",
        "aten::slice_copy.Tensor_out",
        "aten::split_with_sizes_copy.out",
        "aten::squeeze_copy.dims_out",
        "aten::unsqueeze_copy.out",
    ),
    "zoo Norms: conv2d, BatchNorm2d/1d (eval), mean, LayerNorm": (
        "aten::convolution.out",
        "aten::_native_batch_norm_legit_no_training.out",
        "aten::mean.out",
        "aten::native_layer_norm.out",
    ),
    "zoo Activations: GELU, SiLU (x * sigmoid), sigmoid, tanh": (
        "aten::gelu.out",
        "aten::mul.out",
        "aten::sigmoid.out",
        "aten::tanh.out",
        "aten::cat.out",
    ),
    "zoo Attention: linear, matmul, transpose, softmax": (
        "aten::addmm.out",
        "aten::bmm.out",
        "aten::div.out",
        "aten::expand_copy.out",
        "aten::permute_copy.out",
        "aten::view_copy.out",
        "aten::_softmax.out",
    ),
    "nn.Linear(bias=False), 2-D torch.matmul": ("aten::mm.out", "aten::permute_copy.out"),
    "nn.Linear on a 3-D input": (
        "aten::addmm.out",
        "aten::permute_copy.out",
        "aten::view_copy.out",
    ),
    "nn.Conv1d, nn.ConvTranspose2d": ("aten::convolution.out",),
    "nn.MaxPool1d": (
        "aten::max_pool2d_with_indices.out",
        "aten::squeeze_copy.dims_out",
        "aten::unsqueeze_copy.out",
    ),
    "nn.AvgPool2d": ("aten::avg_pool2d.out",),
    "nn.AdaptiveAvgPool2d(1) (a mean), nn.AdaptiveAvgPool2d(2)": (
        "aten::mean.out",
        "aten::_adaptive_avg_pool2d.out",
    ),
    "nn.ReLU6": ("aten::hardtanh.out",),
    "nn.LeakyReLU": ("aten::leaky_relu.out",),
    "nn.ELU": ("aten::elu.out",),
    "nn.Hardswish, nn.Hardsigmoid": (
        "aten::add.out",
        "aten::clamp.out",
        "aten::div.out",
        "aten::mul.out",
        "dim_order_ops::_to_dim_order_copy.out",
    ),
    "nn.Softplus, nn.Mish": (
        "aten::div.out",
        "aten::exp.out",
        "aten::gt.Scalar_out",
        "aten::log1p.out",
        "aten::mul.out",
        "aten::tanh.out",
        "aten::where.self_out",
    ),
    "nn.LogSoftmax": ("aten::_log_softmax.out",),
    "nn.GroupNorm": ("aten::native_group_norm.out",),
    "nn.Upsample (nearest)": ("aten::upsample_nearest2d.vec_out",),
    "nn.Dropout (eval), nn.Flatten": ("aten::view_copy.out", "dim_order_ops::_clone_dim_order.out"),
    "torch.clamp": ("aten::clamp.out",),
    "F.pad (constant)": ("aten::constant_pad_nd.out",),
    "torch.exp(x).sum(-1)": ("aten::exp.out", "aten::sum.IntList_out"),
    "torch.sqrt(abs(x))": ("aten::abs.out", "aten::sqrt.out"),
    "nn.Embedding": ("aten::embedding.out",),
    "torch.argmax": ("aten::argmax.out",),
    "torch.max(x, dim)": ("aten::max.dim_max",),
    "torch.topk": ("aten::topk.values",),
    "nn.Upsample (bilinear)": ("aten::upsample_bilinear2d.vec_out",),
    "zoo Transformer: nn.TransformerEncoderLayer(16, 2, 32), default arguments (batch_first, "
    "norm_first: the same; activation gelu: gelu.out for relu.out; need_weights=False "
    "nn.MultiheadAttention: the mask ops)": (
        "aten::_softmax.out",
        "aten::add.out",
        "aten::addmm.out",
        "aten::any.out",
        "aten::bmm.out",
        "aten::eq.Scalar_out",
        "aten::expand_copy.out",
        "aten::full_like.out",
        "aten::logical_not.out",
        "aten::mul.Scalar_out",
        "aten::native_layer_norm.out",
        "aten::permute_copy.out",
        "aten::relu.out",
        "aten::select_copy.int_out",
        "aten::squeeze_copy.dims_out",
        "aten::unsqueeze_copy.out",
        "aten::where.self_out",
        "dim_order_ops::_clone_dim_order.out",
    ),
    "zoo Mha: nn.MultiheadAttention(16, 2), a boolean causal attn_mask, need_weights=True": (
        "aten::_softmax.out",
        "aten::add.out",
        "aten::addmm.out",
        "aten::bmm.out",
        "aten::full_like.out",
        "aten::mul.out",
        "aten::permute_copy.out",
        "aten::scalar_tensor.out",
        "aten::select_copy.int_out",
        "aten::squeeze_copy.dims_out",
        "aten::unsqueeze_copy.out",
        "aten::where.self_out",
        "dim_order_ops::_clone_dim_order.out",
    ),
    "nn.TransformerEncoderLayer, nn.MultiheadAttention: a boolean key padding or attention "
    "mask (src_key_padding_mask, src_mask, key_padding_mask, attn_mask; plain to_edge)": (
        "aten::scalar_tensor.out",
        "aten::where.self_out",
    ),
    "nn.TransformerEncoderLayer(is_causal=True) with a causal src_mask (plain to_edge: "
    "arange, le, scalar_tensor, sub too)": (
        "aten::full.out",
        "aten::logical_and.out",
        "aten::arange.start_out",
        "aten::le.Scalar_out",
        "aten::scalar_tensor.out",
        "aten::sub.out",
    ),
}


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


def _full_name(raw: str) -> str:
    return raw if "::" in raw else f"aten::{raw}"


def read_op_yaml(root: Path, relpath: str) -> list[OpEntry]:
    """Parse a kernel yaml (`op: add.out` or `func: ns::name.overload(...)` entries).

    Raises:
        FatalError: when the file is missing or malformed.
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
        FatalError: the source registers nothing readable (its format changed).
    """
    return frozenset(registered_prim_ops(root / PRIM_OPS_SOURCE))


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
        "code": code_version("pipeline.opset", "pipeline.models", "util.cache"),
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
