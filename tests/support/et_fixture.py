"""Small ExecuTorch-shaped git repositories for tests, served under the canonical upstream URLs.

`make_upstream(tmp)` builds an ExecuTorch repo (with FlatBuffers and flatcc submodules as
gitlinks, a CMSIS-NN pin in backends/cortex_m/CMakeLists.txt, portable and Cortex-M ops, a
small codegen with the real one's command line, and example models) plus the three component
repos, and writes a git config that maps the GitHub URLs to them with `url.<base>.insteadOf`,
exactly as a mirror would. Tests point GIT_CONFIG_GLOBAL at it.

The codegen stand-in writes registration sources in the format of ExecuTorch's codegen
(`Kernel("op", ... stack.size() == N ...)`), and imports itself as `executorch.codegen` so a
test can tell that the checkout's codegen ran rather than an installed wheel's.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

#: The example models ExecuTorch ships (see tests/fixtures/pte/executorch-cff6f4dd/README.md).
FIXTURE_PTE = Path(__file__).resolve().parents[1] / "fixtures" / "pte" / "executorch-cff6f4dd"
#: Our models exported with the executorch 1.5.1 wheel (see that folder's README.md): x + 1
#: through ExecuTorch's prim ops, and x + 1 lowered to the XNNPACK delegate.
EXPORTED_PTE = FIXTURE_PTE.parent / "executorch-1.5.1"
DYNAMIC_ADD = EXPORTED_PTE / "DynamicAdd.pte"
XNNPACK_ADD = EXPORTED_PTE / "XnnpackAdd.pte"

IDENTITY = ["-c", "user.name=Fixture Bot", "-c", "user.email=fixture@example.invalid"]


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run git in `cwd` with a fixed identity and dates (deterministic SHAs)."""
    full_env = dict(os.environ)
    full_env.update(
        GIT_AUTHOR_DATE="2026-01-01T00:00:00Z",
        GIT_COMMITTER_DATE="2026-01-01T00:00:00Z",
        GIT_CONFIG_GLOBAL=os.devnull,
    )
    full_env.update(env or {})
    return subprocess.run(
        ["git", *IDENTITY, *args],
        cwd=cwd,
        env=full_env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def write_tree(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def init_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "uploadpack.allowFilter", "true")
    git(path, "config", "uploadpack.allowAnySHA1InWant", "true")
    return path


def wheel_schema_dir() -> Path | None:
    """program.fbs/scalar_type.fbs from the installed executorch wheel (not imported)."""
    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "exir" / "_serialize"
        if (candidate / "program.fbs").is_file():
            return candidate
    return None


# --- the codegen stand-in (same command lines as ExecuTorch's codegen) ----------------------

_GEN_OPLIST = """\
import argparse
ap = argparse.ArgumentParser()
ap.add_argument("--output_path")
ap.add_argument("--root_ops", default="")
ap.add_argument("--ops_schema_yaml_path")
ap.add_argument("--include_all_operators", action="store_true")
a = ap.parse_args()
ops = [o for o in a.root_ops.split(",") if o]
with open(a.output_path, "w") as f:
    f.write("include_all_operators: %s\\n" % ("true" if a.include_all_operators else "false"))
    f.write("operators:\\n")
    for o in ops:
        f.write("  %s: {}\\n" % o)
"""

_GEN = """\
import argparse, os, re, yaml
from executorch.codegen.marker import WHO  # resolves to the checkout through the shim
ap = argparse.ArgumentParser()
for name in ["--source-path", "--install-dir", "--tags-path", "--aten-yaml-path",
             "--op-selection-yaml-path", "--functions-yaml-path", "--custom-ops-yaml-path"]:
    ap.add_argument(name)
a = ap.parse_args()
sel = yaml.safe_load(open(a.op_selection_yaml_path))
# What the real codegen's wrappers take, as DynamicAdd.pte calls them; other ops take 5, as
# add.out does (AddModel.pte).
ARGS = {"cat.out": 4, "slice_copy.Tensor_out": 7}
def names(path):
    out = []
    for e in yaml.safe_load(open(path)):
        if "op" in e:
            out.append(("aten::" + e["op"], ARGS.get(e["op"], 5)))
        else:
            m = re.match(r"([\\w:]+(?:\\.\\w+)?)\\((.*)\\)", e["func"])
            n = m.group(1) if "::" in m.group(1) else "aten::" + m.group(1)
            out.append((n, m.group(2).count(",") + 1))
    return out
ops = names(a.functions_yaml_path) + names(a.custom_ops_yaml_path)
wanted = set((sel.get("operators") or {}).keys())
if not sel.get("include_all_operators"):
    ops = [o for o in ops if o[0] in wanted]
# The layout of ExecuTorch's RegisterCodegenUnboxedKernels.cpp template.
body = "\\n".join(
    '    Kernel(\\n        "%s",\\n        [](KernelRuntimeContext& context, Span<EValue*> stack) {\\n'
    '            ET_KERNEL_CHECK_MSG(context, stack.size() == %d, InvalidProgram, /*void*/, "x");\\n'
    '        }\\n    ),' % o for o in ops)
src = ("#include <executorch/runtime/kernel/operator_registry.h>\\n"
       '#include "NativeFunctions.h" // Generated Function import headers\\n'
       "// @generated by gen.py from RegisterCodegenUnboxedKernels.cpp\\n// codegen: %s\\n"
       "namespace torch {\\nnamespace executor {\\nnamespace function {\\nnamespace {\\n\\n"
       "static Kernel kernels_to_register[] = {\\n%s // Generated kernels\\n};\\n\\n"
       "static KernelSpan kernel_span(\\n    kernels_to_register,\\n"
       "    kernels_to_register + sizeof(kernels_to_register) / sizeof(Kernel));\\n\\n"
       "static auto success_with_kernel_reg = register_kernels(kernel_span);\\n"
       "} // namespace\\n} // namespace function\\n} // namespace executor\\n"
       "} // namespace torch\\n" % (WHO, body))
for name in ["RegisterCodegenUnboxedKernelsEverything.cpp", "RegisterCodegenUnboxedKernels_0.cpp"]:
    open(os.path.join(a.install_dir, name), "w").write(src)
open(os.path.join(a.install_dir, "NativeFunctions.h"), "w").write(
    "#pragma once\\n#include <executorch/runtime/kernel/kernel_runtime_context.h>\\n")
open(os.path.join(a.install_dir, "RegisterCPUCustomOps.cpp"), "w").write(
    "#include <torch/library.h>\\n")
open(os.path.join(a.install_dir, "CustomOpsNativeFunctions.h"), "w").write(
    "#include <ATen/ATen.h>\\n")
"""

_GEN_MAX = """\
import argparse, yaml
ap = argparse.ArgumentParser()
ap.add_argument("--oplist-yaml"); ap.add_argument("--prim-ops-source"); ap.add_argument("--output-path")
a = ap.parse_args()
n = len((yaml.safe_load(open(a.oplist_yaml)).get("operators") or {})) + 2
open(a.output_path, "w").write("#pragma once\\n#define EXECUTORCH_SELECTED_MAX_KERNEL_NUM %d\\n" % n)
"""

# --- the trees ------------------------------------------------------------------------------

PORTABLE_YAML = """\
- op: add.out
  kernels:
    - arg_meta: null
      kernel_name: torch::executor::add_out
- op: mul.out
  kernels:
    - arg_meta: null
      kernel_name: torch::executor::mul_out
- op: relu.out
  kernels:
    - arg_meta: null
      kernel_name: torch::executor::relu_out
- op: acos.out
  kernels:
    - arg_meta: null
      kernel_name: torch::executor::acos_out
- func: dim_order_ops::_clone_dim_order.out(Tensor self, *, bool non_blocking=False, int[]? dim_order=None, Tensor(a!) out) -> Tensor(a!)
  kernels:
    - arg_meta: null
      kernel_name: torch::executor::_clone_dim_order_out
"""

CORTEX_M_YAML = """\
- func: cortex_m::quantize_per_tensor.out(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, Tensor(a!) out) -> Tensor(a!)
  variants: function
  kernels:
    - arg_meta: null
      kernel_name: cortex_m::quantize_per_tensor_out
- func: cortex_m::quantized_add.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  variants: function
  kernels:
    - arg_meta: null
      kernel_name: cortex_m::quantized_add_out
"""

#: Default root ops the fixture implements with trivial sources (op name, kernel, file stem).
_PLAIN_OPS = [
    ("sub.out", "sub_out", "sub"),
    ("div.out", "div_out", "div"),
    ("view_copy.out", "view_copy_out", "view_copy"),
    ("permute_copy.out", "permute_copy_out", "permute_copy"),
    ("clone.out", "clone_out", "clone"),
    ("cat.out", "cat_out", "cat"),
    ("slice_copy.Tensor_out", "slice_copy_Tensor_out", "slice_copy"),
    ("_softmax.out", "softmax_out", "softmax"),
    ("mean.out", "mean_dim_out", "mean"),
    # the default root ops issue 18 added (generator/pipeline/default_ops.py DEFAULT_ROOT_OPS)
    ("addmm.out", "addmm_out", "addmm"),
    ("bmm.out", "bmm_out", "bmm"),
    ("convolution.out", "convolution_out", "convolution"),
    ("max_pool2d_with_indices.out", "max_pool2d_with_indices_out", "max_pool2d_with_indices"),
    (
        "_native_batch_norm_legit_no_training.out",
        "_native_batch_norm_legit_no_training_out",
        "native_batch_norm",
    ),
    ("native_layer_norm.out", "native_layer_norm_out", "native_layer_norm"),
    ("gelu.out", "gelu_out", "gelu"),
    ("sigmoid.out", "sigmoid_out", "sigmoid"),
    ("tanh.out", "tanh_out", "tanh"),
    ("full.out", "full_out", "full"),
    ("expand_copy.out", "expand_copy_out", "expand_copy"),
    ("select_copy.int_out", "select_copy_int_out", "select_copy"),
    ("split_with_sizes_copy.out", "split_with_sizes_copy_out", "split_with_sizes_copy"),
    ("squeeze_copy.dims_out", "squeeze_copy_dims_out", "squeeze_copy"),
    ("unsqueeze_copy.out", "unsqueeze_copy_out", "unsqueeze_copy"),
    ("mm.out", "mm_out", "mm"),
    ("avg_pool2d.out", "avg_pool2d_out", "avg_pool2d"),
    ("_adaptive_avg_pool2d.out", "_adaptive_avg_pool2d_out", "adaptive_avg_pool2d"),
    ("hardtanh.out", "hardtanh_out", "hardtanh"),
    ("leaky_relu.out", "leaky_relu_out", "leaky_relu"),
    ("elu.out", "elu_out", "elu"),
    ("clamp.out", "clamp_out", "clamp"),
    ("_log_softmax.out", "log_softmax_out", "log_softmax"),
    ("native_group_norm.out", "native_group_norm_out", "native_group_norm"),
    ("upsample_nearest2d.vec_out", "upsample_nearest2d_vec_out", "upsample_nearest2d"),
    ("constant_pad_nd.out", "constant_pad_nd_out", "constant_pad_nd"),
    ("exp.out", "exp_out", "exp"),
    ("log1p.out", "log1p_out", "log1p"),
    ("gt.Scalar_out", "gt_scalar_out", "gt"),
    ("where.self_out", "where_out", "where"),
    ("sum.IntList_out", "sum_dim_out", "sum"),
    ("sqrt.out", "sqrt_out", "sqrt"),
    ("abs.out", "abs_out", "abs"),
    ("embedding.out", "embedding_out", "embedding"),
    ("argmax.out", "argmax_out", "argmax"),
    ("max.dim_max", "max_out", "max"),
    ("topk.values", "topk_values", "topk"),
    ("upsample_bilinear2d.vec_out", "upsample_bilinear2d_vec_out", "upsample_bilinear2d"),
    # issue 31's: nn.TransformerEncoderLayer's and nn.MultiheadAttention's mask handling
    ("any.out", "any_out", "any"),
    ("eq.Scalar_out", "eq_scalar_out", "eq"),
    ("full_like.out", "full_like_out", "full_like"),
    ("logical_not.out", "logical_not_out", "logical_not"),
    ("logical_and.out", "logical_and_out", "logical_and"),
    ("scalar_tensor.out", "scalar_tensor_out", "scalar_tensor"),
    ("arange.start_out", "arange_start_out", "arange"),
    ("le.Scalar_out", "le_scalar_out", "le"),
]
#: Default root ops whose kernel is in another root op's source, as upstream's is (op name,
#: kernel, the file stem it shares).
_SHARED_OPS = [("mul.Scalar_out", "mul_scalar_out", "mul")]
PORTABLE_YAML += "".join(
    f"- op: {op}\n  kernels:\n    - arg_meta: null\n      kernel_name: torch::executor::{k}\n"
    for op, k, _ in [*_PLAIN_OPS, *_SHARED_OPS]
) + (
    "- func: dim_order_ops::_to_dim_order_copy.out(Tensor self, *, bool non_blocking=False, "
    "int[]? dim_order=None, Tensor(a!) out) -> Tensor(a!)\n  kernels:\n    - arg_meta: null\n"
    "      kernel_name: torch::executor::_to_dim_order_copy_out\n"
)
#: Portable op sources the fixture has in all (op_*.cpp).
FIXTURE_OP_SOURCES = 5 + len(_PLAIN_OPS) + 1
#: Root ops whose kernel shares another root op's source (so ship no op source of their own).
FIXTURE_SHARED_OPS = tuple(f"aten::{op}" for op, _, _ in _SHARED_OPS)
#: Portable operators the fixture's functions.yaml has in all.
FIXTURE_PORTABLE_OPS = FIXTURE_OP_SOURCES + len(FIXTURE_SHARED_OPS)
#: The fixture's default op set: every Cortex-M op + the default root ops.
FIXTURE_CORTEX_M_OPS = {"cortex_m::quantize_per_tensor.out", "cortex_m::quantized_add.out"}


#: The ref's model-conversion scripts (examples/arduino/), and its own pte_to_header.py, which
#: the library replaces by ours.
REF_TOOLS: dict[str, str | bytes] = {
    # Like the ref's: it imports to_header from the pte_to_header.py beside it.
    "examples/arduino/export_model.py": (
        "# fixture: the ref's export_model.py\n"
        "import sys\n"
        "from pte_to_header import to_header\n"
        "with open(sys.argv[1], 'rb') as f:\n"
        "    sys.stdout.write(to_header(f.read(), source='the exported model'))\n"
    ),
    "examples/arduino/generate_test_input.py": "# fixture: the ref's generate_test_input.py\n",
    "examples/arduino/pte_to_header.py": "# fixture: the ref's pte_to_header.py\n",
}


#: ExecuTorch's prim ops registration in upstream's shapes: a lambda checking its own
#: `stack.size()`, lambdas checking it through macros, and a function defined in et_view.cpp.
PRIM_OPS_CPP = """\
#include <executorch/kernels/prim_ops/et_view.h>
#include <executorch/runtime/kernel/operator_registry.h>

#define __ET_PRIM_OP_NUM_ARGS_CHECK_IMPL(stack, context) \\
  ET_KERNEL_CHECK_MSG(                                   \\
      context, stack.size() == 3, InvalidProgram, /* void */, "Expected 3");

#define ALGEBRA_ET_PRIM_OP(operator, stack, context) \\
  __ET_PRIM_OP_NUM_ARGS_CHECK_IMPL(stack, context)   \\
  out = EValue(a.toInt() operator b.toInt());

static Kernel prim_ops[] = {
    // aten::sym_size.int(Tensor self, int dim) -> SymInt
    Kernel(
        "aten::sym_size.int",
        [](KernelRuntimeContext& context, Span<EValue*> stack) {
          ET_KERNEL_CHECK_MSG(context, stack.size() == 3, InvalidProgram, /* void */, "3");
        }),
    Kernel(
        "executorch_prim::mul.Scalar",
        [](KernelRuntimeContext& context, Span<EValue*> stack) {
          ALGEBRA_ET_PRIM_OP(*, stack, context);
        }),
    Kernel("executorch_prim::et_view.default", et_view),
};
auto success_with_kernel_reg = register_kernels(kernel_span);
"""
ET_VIEW_CPP = """\
#include <executorch/kernels/prim_ops/et_view.h>

void et_view(KernelRuntimeContext& context, Span<EValue*> stack) {
  ET_KERNEL_CHECK_MSG(context, stack.size() == 3, InvalidProgram, /* void */, "3");
}
"""
#: What PRIM_OPS_CPP registers: operator -> argument count.
FIXTURE_PRIM_OPS = {
    "aten::sym_size.int": 3,
    "executorch_prim::mul.Scalar": 3,
    "executorch_prim::et_view.default": 3,
}


def _op(name: str, includes: list[str]) -> str:
    inc = "".join(f"#include <{i}>\n" for i in includes)
    return (
        f"{inc}namespace torch {{ namespace executor {{ namespace native {{\n"
        f"Tensor& {name}(KernelRuntimeContext& ctx, const Tensor& in, Tensor& out) {{ return out; }}\n"
        "}}}}\n"
    )


def executorch_files(
    *,
    cmsis_sha: str,
    version: str = "1.5.0",
    cortex_m: bool = True,
    models: bool = True,
    examples: bool = True,
) -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {
        "LICENSE": "BSD License\n\nFixture ExecuTorch license text.\n",
        "version.txt": version + "\n",
        "runtime/core/error.h": "#pragma once\n#include <variant>\n",
        "runtime/core/evalue.cpp": "#include <executorch/runtime/core/error.h>\n",
        "runtime/core/exec_aten/util/tensor_util_portable.cpp": "// portable\n",
        "runtime/core/exec_aten/util/tensor_util_aten.cpp": "#include <ATen/Tensor.h>\n",
        "runtime/core/exec_aten/testing_util/tensor_util.cpp": "#include <gtest/gtest.h>\n",
        "runtime/core/portable_type/c10/c10/util/irange.h": "#pragma once\n",
        "runtime/core/portable_type/c10/torch/headeronly/macros/Macros.h": "#pragma once\n#include <torch/headeronly/macros/cmake_macros.h>\n",
        "runtime/executor/method.cpp": "#include <executorch/runtime/core/error.h>\n",
        "runtime/executor/tensor_parser_exec_aten.cpp": "// portable despite the name\n",
        "runtime/executor/test/method_test.cpp": "#include <gtest/gtest.h>\n",
        "runtime/kernel/operator_registry.cpp": (
            "// registry\nnamespace executorch {\nnamespace ET_RUNTIME_NAMESPACE {\n"
            "Span<const Kernel> get_registered_kernels() {\n  return {};\n}\n}\n}\n"
        ),
        "runtime/kernel/kernel_runtime_context.h": "#pragma once\n",
        "runtime/kernel/operator_registry.h": "#pragma once\n",
        "runtime/platform/platform.h": "#pragma once\nvoid et_pal_init(void);\n",
        "runtime/platform/compiler.h": "// compiler macros\n#pragma once\n#define ET_INLINE inline\n",
        "runtime/platform/default/posix.cpp": "void et_pal_init(void) {}\n",
        "runtime/platform/default/minimal.cpp": "void et_pal_init(void) {}\n",
        "runtime/backend/interface.cpp": "// backends\n",
        "extension/data_loader/buffer_data_loader.h": "#pragma once\n",
        "extension/runner_util/inputs.h": "#pragma once\n",
        "schema/extended_header.cpp": "// header\n",
        "kernels/portable/functions.yaml": PORTABLE_YAML,
        "kernels/portable/cpu/op_add.cpp": _op(
            "add_out",
            [
                "executorch/kernels/portable/cpu/util/broadcast_util.h",
                "executorch/runtime/kernel/kernel_runtime_context.h",
                "ATen/cpu/vec/vec.h",
            ],
        ),
        "kernels/portable/cpu/op_mul.cpp": _op(
            "mul_out",
            [
                "executorch/kernels/portable/cpu/scalar_utils.h",
                "executorch/kernels/portable/cpu/util/broadcast_util.h",
            ],
        )
        + _op("mul_scalar_out", []),
        "kernels/portable/cpu/op_relu.cpp": _op(
            "relu_out", ["executorch/kernels/portable/cpu/pattern/pattern.h"]
        ),
        "kernels/portable/cpu/scalar_utils.h": "#pragma once\n",
        "kernels/portable/cpu/op_acos.cpp": "#include <executorch/kernels/portable/cpu/util/unused_util.h>\n"
        "#include <executorch/kernels/portable/cpu/scalar_utils.h>\n"
        "DEFINE_UNARY(acos_out, std::acos)\n",
        "kernels/portable/cpu/op_clone_dim_order.cpp": _op("_clone_dim_order_out", []),
        "kernels/portable/cpu/op_add_aten.cpp": "#include <ATen/Tensor.h>\n",
        "kernels/portable/cpu/op_to_dim_order_copy.cpp": _op("_to_dim_order_copy_out", []),
        **{f"kernels/portable/cpu/op_{stem}.cpp": _op(k, []) for _, k, stem in _PLAIN_OPS},
        "kernels/portable/cpu/util/broadcast_util.h": '#pragma once\n#include "dtype_util.h"\n',
        "kernels/portable/cpu/util/broadcast_util.cpp": "#include <executorch/kernels/portable/cpu/util/broadcast_util.h>\n",
        "kernels/portable/cpu/util/dtype_util.h": "#pragma once\n",
        "kernels/portable/cpu/util/unused_util.h": "#pragma once\n",
        "kernels/portable/cpu/util/unused_util.cpp": "#include <executorch/kernels/portable/cpu/util/unused_util.h>\n"
        "#include <executorch/kernels/portable/cpu/util/broadcast_util.h>\n",
        "kernels/portable/cpu/pattern/pattern.h": "#pragma once\n",
        "kernels/portable/cpu/pattern/unary_ufunc_relu.cpp": "#include <executorch/kernels/portable/cpu/pattern/pattern.h>\n",
        "kernels/prim_ops/register_prim_ops.cpp": PRIM_OPS_CPP,
        "kernels/prim_ops/et_view.h": "#pragma once\nvoid et_view(KernelRuntimeContext& context, Span<EValue*> stack);\n",
        "kernels/prim_ops/et_view.cpp": ET_VIEW_CPP,
        "kernels/prim_ops/test/prim_ops_test.cpp": "#include <gtest/gtest.h>\n",
        "codegen/__init__.py": "",
        "codegen/marker.py": 'WHO = "fixture checkout codegen"\n',
        "codegen/gen.py": _GEN,
        "codegen/tools/__init__.py": "",
        "codegen/tools/gen_oplist.py": _GEN_OPLIST,
        "codegen/tools/gen_max_kernel_num.py": _GEN_MAX,
        "codegen/macros.h": "#pragma once\n",
    }
    if cortex_m:
        files.update(
            {
                "backends/cortex_m/CMakeLists.txt": f'set(CMSIS_NN_VERSION\n    "{cmsis_sha}"\n    CACHE STRING "CMSIS-NN version to download"\n)\n',
                "backends/cortex_m/ops/operators.yaml": CORTEX_M_YAML,
                "backends/cortex_m/ops/cortex_m_ops_common.h": '#pragma once\n#include "arm_nnfunctions.h"\n',
                "backends/cortex_m/ops/op_quantize_per_tensor.cpp": "#include <executorch/backends/cortex_m/ops/cortex_m_ops_common.h>\n"
                "Tensor& quantize_per_tensor_out(KernelRuntimeContext& c, Tensor& out) { return out; }\n",
                "backends/cortex_m/ops/op_quantized_add.cpp": "#include <executorch/backends/cortex_m/ops/cortex_m_ops_common.h>\n"
                "Tensor& quantized_add_out(KernelRuntimeContext& c, Tensor& out) { return out; }\n",
            }
        )
    schema = wheel_schema_dir()
    if schema is not None:
        files["schema/program.fbs"] = (schema / "program.fbs").read_text()
        files["schema/scalar_type.fbs"] = (schema / "scalar_type.fbs").read_text()
    else:
        files["schema/program.fbs"] = "// no schema available\n"
        files["schema/scalar_type.fbs"] = "// no schema available\n"
    if examples:
        for name in ("HelloExecuTorch", "AddModel", "KeywordSpotting"):
            files[f"examples/arduino/examples/{name}/{name}.ino"] = "// upstream sketch\n"
            if models:
                files[f"examples/arduino/examples/{name}/model.pte"] = (
                    FIXTURE_PTE / "AddModel.pte"
                ).read_bytes()
        files["examples/arduino/examples/KeywordSpotting/mfcc_yes.h"] = (
            'static const char* test_label = "yes";\nstatic const float test_input[490] = {0};\n'
        )
        files["examples/arduino/examples/KeywordSpotting/model.pth"] = b"not shipped"
        files.update(REF_TOOLS)
    return files


@dataclass
class Upstream:
    """The fixture's repositories and the git config that serves them under GitHub URLs."""

    root: Path
    gitconfig: Path
    executorch: Path
    flatbuffers: Path
    flatcc: Path
    cmsis: Path
    flatc: Path
    shas: dict[str, str] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        return {"GIT_CONFIG_GLOBAL": str(self.gitconfig), "FLATC": str(self.flatc)}

    def commit_executorch(
        self, files: dict[str, str | bytes], message: str, *, remove: tuple[str, ...] = ()
    ) -> str:
        """Add a commit on the ExecuTorch fixture's main (files written over the tree)."""
        for rel in remove:
            target = self.executorch / rel
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
        write_tree(self.executorch, files)
        # The submodules are gitlinks with no work tree: `add -A` must not stage them as deleted.
        git(self.executorch, "add", "-A", "--", ".", ":(exclude)third-party")
        git(self.executorch, "commit", "-q", "--allow-empty", "-m", message)
        return git(self.executorch, "rev-parse", "HEAD")


#: The fixture CMSIS-NN's s8 add: the lines of Source/BasicMathFunctions/arm_elementwise_add_s8.c
#: (CMSIS-NN dbf45dbf, 138-209) that the patch cmsis-nn-add-shift rewrites, in a function
#: that compiles.
ADD_S8 = """\
#include <stdint.h>
int32_t add_s8(const int8_t *input_1_vect, const int8_t *input_2_vect, int32_t input_1_offset,
               int32_t input_2_offset, int32_t a_1, int32_t b_1, int32_t a_2, int32_t b_2,
               int32_t left_shift)
{
    int32_t input_1, input_2, sum = 0;
        input_1 = (b_1 & 0x0FFFF) << left_shift;
        input_2 = (b_2 & 0x0FFFF) << left_shift;
    sum += input_1 + input_2;
        input_1 = ((b_1 >> 16) & 0x0FFFF) << left_shift;
        input_2 = ((b_2 >> 16) & 0x0FFFF) << left_shift;
    sum += input_1 + input_2;
        input_1 = (a_1 & 0x0FFFF) << left_shift;
        input_2 = (a_2 & 0x0FFFF) << left_shift;
    sum += input_1 + input_2;
        input_1 = ((a_1 >> 16) & 0x0FFFF) << left_shift;
        input_2 = ((a_2 >> 16) & 0x0FFFF) << left_shift;
    sum += input_1 + input_2;
        input_1 = (*input_1_vect++ + input_1_offset) << left_shift;
        input_2 = (*input_2_vect++ + input_2_offset) << left_shift;
    return sum + input_1 + input_2;
}
"""


FLATC_SCRIPT = """#!/bin/sh
# A stand-in flatc of one version: writes the two schema headers it is asked for, and leaves
# Python (the program reader) to the executorch wheel's real flatc.
if [ "$1" = "--version" ]; then echo "flatc version {version}"; exit 0; fi
if [ "$1" = "--python" ]; then exec "{real}" "$@"; fi
out=""
while [ $# -gt 0 ]; do
  case "$1" in -o) out="$2"; shift 2;; *.fbs) b=$(basename "$1" .fbs); mkdir -p "$out";
    printf '// generated by flatc {version}\\n#pragma once\\n' > "$out/${{b}}_generated.h"; shift;;
    *) shift;; esac
done
"""


def wheel_flatc() -> Path | None:
    """The executorch wheel's flatc (not imported), or None."""
    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "data" / "bin" / "flatc"
        if candidate.is_file():
            return candidate
    return None


def flatbuffers_runtime() -> dict[str, str | bytes]:
    """FlatBuffers' Python runtime as the FlatBuffers repo holds it (python/flatbuffers/),
    taken from the installed flatbuffers package; empty when it is not installed."""
    spec = importlib.util.find_spec("flatbuffers")
    if spec is None or not spec.submodule_search_locations:
        return {}
    folder = Path(next(iter(spec.submodule_search_locations)))
    return {f"python/flatbuffers/{p.name}": p.read_bytes() for p in sorted(folder.glob("*.py"))}


def make_flatc(path: Path, version: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(FLATC_SCRIPT.format(version=version, real=wheel_flatc() or "false"))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def make_upstream(tmp: Path, *, fb_version: str = "24.3.25") -> Upstream:
    """Build the four repositories and the insteadOf config (see the module docstring)."""
    root = tmp / "upstream"
    fb = init_repo(root / "flatbuffers")
    write_tree(
        fb,
        {
            "LICENSE": "Apache License 2.0 (FlatBuffers fixture)\n",
            "include/flatbuffers/base.h": "#define FLATBUFFERS_VERSION_MAJOR {}\n#define FLATBUFFERS_VERSION_MINOR {}\n"
            "#define FLATBUFFERS_VERSION_REVISION {}\n".format(*fb_version.split(".")),
            "include/flatbuffers/flatbuffers.h": '#pragma once\n#include "flatbuffers/base.h"\n',
            "src/idl_parser.cpp": "// not vendored\n",
            **flatbuffers_runtime(),
        },
    )
    fb_sha = commit_all(fb, "flatbuffers")
    fcc = init_repo(root / "flatcc")
    write_tree(
        fcc,
        {
            "LICENSE": "Apache License 2.0 (flatcc fixture)\n",
            "include/flatcc/flatcc_builder.h": "#pragma once\n",
            "include/flatcc/portable/pendian.h": "#pragma once\n",
            "src/runtime/builder.c": "int flatcc_builder;\n",
            "src/compiler/parser.c": "// not vendored\n",
        },
    )
    fcc_sha = commit_all(fcc, "flatcc")
    cmsis = init_repo(root / "cmsis")
    write_tree(
        cmsis,
        {
            "LICENSE": "Apache License 2.0 (CMSIS-NN fixture)\n",
            "Include/arm_nnfunctions.h": "#pragma once\n",
            "Include/Internal/arm_nn_compiler.h": "#pragma once\n",
            "Source/ConvolutionFunctions/arm_convolve_s8.c": "int conv;\n",
            # What the patch cmsis-nn-add-shift rewrites (generator/pipeline/cmsis_nn_patches.py).
            "Source/BasicMathFunctions/arm_elementwise_add_s8.c": ADD_S8,
            "Source/ConvolutionFunctions/arm_convolve_f32.c": "float only;\n",
            "Source/ConvolutionFunctions/CMakeLists.txt": "# cmake\n",
            "Source/Bindings/arm_py_module.cpp": "// pybind11\n",
        },
    )
    cmsis_sha = commit_all(cmsis, "cmsis")
    et = init_repo(root / "executorch")
    write_tree(et, executorch_files(cmsis_sha=cmsis_sha))
    write_tree(
        et,
        {
            ".gitmodules": (
                '[submodule "third-party/flatbuffers"]\n\tpath = third-party/flatbuffers\n'
                "\turl = https://github.com/google/flatbuffers.git\n"
                '[submodule "third-party/flatcc"]\n\tpath = third-party/flatcc\n'
                "\turl = https://github.com/dvidelabs/flatcc.git\n"
            )
        },
    )
    git(et, "add", "-A")
    for path, sha in (("third-party/flatbuffers", fb_sha), ("third-party/flatcc", fcc_sha)):
        git(et, "update-index", "--add", "--cacheinfo", f"160000,{sha},{path}")
    git(et, "commit", "-q", "-m", "executorch fixture")
    et_sha = git(et, "rev-parse", "HEAD")
    git(et, "tag", "v1.5.0")
    gitconfig = root / "gitconfig"
    for name, repo in (
        ("pytorch/executorch", et),
        ("google/flatbuffers", fb),
        ("dvidelabs/flatcc", fcc),
        ("ARM-software/CMSIS-NN", cmsis),
    ):
        for url in (f"https://github.com/{name}.git", f"https://github.com/{name}"):
            subprocess.run(
                ["git", "config", "--file", str(gitconfig), "--add", f"url.{repo}.insteadOf", url],
                check=True,
            )
    for key, value in (
        ("protocol.file.allow", "always"),
        ("uploadpack.allowFilter", "true"),
        ("uploadpack.allowAnySHA1InWant", "true"),
    ):
        subprocess.run(["git", "config", "--file", str(gitconfig), key, value], check=True)
    flatc = make_flatc(root / "bin" / "flatc", fb_version)
    return Upstream(
        root=root,
        gitconfig=gitconfig,
        executorch=et,
        flatbuffers=fb,
        flatcc=fcc,
        cmsis=cmsis,
        flatc=flatc,
        shas={"executorch": et_sha, "flatbuffers": fb_sha, "flatcc": fcc_sha, "cmsis": cmsis_sha},
    )
