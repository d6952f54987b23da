"""The model zoo (tests/fixtures/zoo/, issue 18) against the default op set, offline.

What CI can check without ExecuTorch sources: the committed fixtures are the ones their
checksums name; every zoo model's operators are in the default op set as `opset.py` writes
it; the operators `zoo.json` lists are the ones its `.pte` calls (read with the library's own
reader, made from the wheel's schema); the wheel's programs pass the model check against the
registration of a library generated from ExecuTorch main (cff6f4dd, 1.5.0), and a program
whose operator's argument count differs from the library's is refused with the
argument-count message; the exporter gives the committed bytes again. The zoo on a real
library and the emulated board is tests/e2e/test_e2e_zoo.py.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "data" / "extras" / "tools"))

import et_checks
import et_pte
from reader_fixture import write_wheel_reader

from generator.pipeline.default_ops import DEFAULT_OP_EVIDENCE, DEFAULT_ROOT_OPS, PREVIOUS_ROOT_OPS

ZOO = Path(__file__).resolve().parents[1] / "fixtures" / "zoo"
MANIFEST: dict[str, Any] = json.loads((ZOO / "zoo.json").read_text(encoding="utf-8"))

#: What the default library generated from ExecuTorch main cff6f4dd (1.5.0) registers for the
#: operators the zoo calls: operator -> `stack.size() == N` of its generated kernel wrapper,
#: read from that library (`et_registration.library_kernels`, its src/executorch/codegen/)
#: with `python -m generator build` at the DEFAULT_ROOT_OPS of this commit.
KERNELS_AT_CFF6F4DD = {
    "aten::_native_batch_norm_legit_no_training.out": 11,
    "aten::_softmax.out": 5,
    "aten::add.out": 5,
    "aten::addmm.out": 7,
    "aten::any.out": 5,
    "aten::bmm.out": 4,
    "aten::cat.out": 4,
    "aten::convolution.out": 11,
    "aten::div.out": 4,
    "aten::eq.Scalar_out": 4,
    "aten::expand_copy.out": 5,
    "aten::full.out": 4,
    "aten::full_like.out": 5,
    "aten::gelu.out": 4,
    "aten::logical_not.out": 3,
    "aten::max_pool2d_with_indices.out": 9,
    "aten::mean.out": 6,
    "aten::mul.Scalar_out": 4,
    "aten::mul.out": 4,
    "aten::native_layer_norm.out": 9,
    "aten::permute_copy.out": 4,
    "aten::relu.out": 3,
    "aten::select_copy.int_out": 5,
    "aten::sigmoid.out": 3,
    "aten::slice_copy.Tensor_out": 7,
    "aten::split_with_sizes_copy.out": 5,
    "aten::squeeze_copy.dims_out": 4,
    "aten::sub.out": 5,
    "aten::tanh.out": 3,
    "aten::unsqueeze_copy.out": 4,
    "aten::view_copy.out": 4,
    "aten::where.self_out": 5,
    "cortex_m::dequantize_per_tensor.out": 8,
    "cortex_m::quantize_per_tensor.out": 8,
    "cortex_m::quantized_conv2d.out": 15,
    "cortex_m::quantized_depthwise_conv2d.out": 16,
    "cortex_m::quantized_linear.out": 13,
    "dim_order_ops::_clone_dim_order.out": 5,
}

#: The zoo the issue asks for (issue 18, section 1): each kind, by model.
KINDS = {
    "Mlp": "nn.Linear",
    "Cnn": "conv, pooling, softmax",
    "Gru": "GRU",
    "Lstm": "LSTM",
    "Norms": "LayerNorm/BatchNorm",
    "Activations": "GELU/SiLU/sigmoid/tanh",
    "Attention": "matmul, softmax, transpose",
    "Transformer": "nn.TransformerEncoderLayer (issue 31)",
    "Mha": "nn.MultiheadAttention with a mask (issue 31)",
    "Int8Mlp": "Cortex-M quantizer: linear",
    "Int8Conv": "Cortex-M quantizer: conv",
}


#: What folding the constants at export (extras/tools/export_model.py `fold_constants`, the
#: zoo's exporter) removed from a zoo model's program: the transpose of a Linear's weight,
#: now a constant. generator/pipeline/opset.py's evidence rows were read from the unfolded
#: exports, which is what a .pte exported with plain `to_edge` still calls; the op set keeps
#: the operator (Gru, Lstm and Attention still call it, on activations). Mha's boolean mask
#: becomes a float one through a scalar_tensor of -inf in plain `to_edge`; folded, a constant.
FOLDED = {
    "Mlp": {"aten::permute_copy.out"},
    "Cnn": {"aten::permute_copy.out"},
    "Mha": {"aten::scalar_tensor.out"},
}


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> et_pte.ProgramReader:
    """The program reader of the wheel's schema (tests/support/reader_fixture.py)."""
    return et_pte.load_reader(write_wheel_reader(tmp_path_factory.mktemp("r") / "pte_schema"))


def _program(name: str, reader: et_pte.ProgramReader) -> et_pte.Program:
    return et_pte.read_program((ZOO / f"{name}.pte").read_bytes(), reader)


def test_the_zoo_has_every_kind_the_issue_names() -> None:
    assert sorted(MANIFEST) == sorted(KINDS)
    assert sorted(p.stem for p in ZOO.glob("*.pte")) == sorted(KINDS)
    # Int8 models are the quantized ones; each has its output's int8 step recorded.
    for name, entry in MANIFEST.items():
        assert entry["quantized"] == name.startswith("Int8")
        assert ("output_scale" in entry) == entry["quantized"]
        assert len(entry["input"]) == _count(entry["input_shape"])
        assert len(entry["output"]) == _count(entry["output_shape"])


def _count(shape: list[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def test_fixture_checksums() -> None:
    lines = (ZOO / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    sums: dict[str, str] = {}
    for line in lines:
        digest, name = line.split("  ", 1)
        sums[name] = digest
    assert sorted(sums) == sorted([*(f"{n}.pte" for n in KINDS), "zoo.json"])
    for name, digest in sums.items():
        assert hashlib.sha256((ZOO / name).read_bytes()).hexdigest() == digest, name
    total = sum((ZOO / n).stat().st_size for n in sums)
    assert total < 200_000  # committed: kept small


def test_every_zoo_operator_is_in_the_default_op_set() -> None:
    portable = set(DEFAULT_ROOT_OPS)
    cortex_m = {op for op in KERNELS_AT_CFF6F4DD if op.startswith("cortex_m::")}
    for name, entry in MANIFEST.items():
        ops = set(entry["operators"])
        outside = sorted(ops - portable - cortex_m)
        assert not outside, f"{name} calls {outside}, not in DEFAULT_ROOT_OPS"
    # The float models are why the op set grew: the previous one refused all but Activations
    # and the int8 ones (the issue's first refusal: the MLP's aten::addmm.out).
    refused = sorted(
        n for n, e in MANIFEST.items() if set(e["operators"]) - set(PREVIOUS_ROOT_OPS) - cortex_m
    )
    assert refused == [
        "Activations",
        "Attention",
        "Cnn",
        "Gru",
        "Lstm",
        "Mha",
        "Mlp",
        "Norms",
        "Transformer",
    ]
    assert "aten::addmm.out" in MANIFEST["Mlp"]["operators"]


def test_default_root_ops_keep_the_previous_ones_and_name_no_op_twice() -> None:
    assert set(PREVIOUS_ROOT_OPS) <= set(DEFAULT_ROOT_OPS)
    assert len(set(DEFAULT_ROOT_OPS)) == len(DEFAULT_ROOT_OPS)


def test_every_default_root_op_has_its_evidence() -> None:
    evidenced = {op for ops in DEFAULT_OP_EVIDENCE.values() for op in ops}
    assert evidenced == set(DEFAULT_ROOT_OPS)
    # The zoo's rows are what its programs call (Lstm shares Gru's row: it calls no sub).
    rows = {key.split(":")[0].removeprefix("zoo "): ops for key, ops in DEFAULT_OP_EVIDENCE.items()}
    for name, entry in MANIFEST.items():
        portable = {op for op in entry["operators"] if not op.startswith("cortex_m::")}
        if name.startswith("Int8"):
            assert portable <= {"dim_order_ops::_clone_dim_order.out"}, name
        elif name == "Lstm":
            assert portable == set(rows["Gru"]) - {"aten::sub.out"}
        else:
            folded = FOLDED.get(name, set())
            assert not portable & folded, name
            assert portable | folded == set(rows[name]), name


def test_the_manifest_lists_the_operators_each_program_calls(
    reader: et_pte.ProgramReader,
) -> None:
    for name, entry in MANIFEST.items():
        program = _program(name, reader)
        called = sorted({c.operator for m in program.methods for c in m.kernel_calls})
        assert called == entry["operators"], name
        assert [m.name for m in program.methods] == ["forward"]
        assert not [d for m in program.methods for d in m.delegates], name


def test_wheel_exports_match_the_cff6f4dd_registration(reader: et_pte.ProgramReader) -> None:
    # The zoo is exported with the executorch 1.5.1 wheel, the library is generated from
    # main (cff6f4dd, 1.5.0): what makes that safe is that every kernel call supplies the
    # argument count the library's generated wrapper checks, which the model check compares.
    for name in MANIFEST:
        assert et_checks.check_model(_program(name, reader), KERNELS_AT_CFF6F4DD) == [], name


def test_an_argument_count_that_differs_is_refused(reader: et_pte.ProgramReader) -> None:
    # As if the library came from a commit whose aten::addmm.out takes one argument more.
    kernels = {**KERNELS_AT_CFF6F4DD, "aten::addmm.out": 8}
    problems = et_checks.check_model(_program("Mlp", reader), kernels)
    assert problems == [
        et_checks.Problem("forward", "aten::addmm.out", "InvalidProgram", 0x23, 7, 8, 2)
    ]
    message = problems[0].message
    assert message.startswith(
        "aten::addmm.out: model supplies 7 arguments, library expects 8: Method::execute "
        "fails with InvalidProgram (0x23) [2 calls in forward]"
    )
    assert "exported with a different ExecuTorch commit" in message


def test_a_missing_operator_names_what_a_user_can_do_first(reader: et_pte.ProgramReader) -> None:
    # The issue's refusal: the MLP on a library without aten::addmm.out.
    kernels = {k: v for k, v in KERNELS_AT_CFF6F4DD.items() if k != "aten::addmm.out"}
    (problem,) = et_checks.check_model(_program("Mlp", reader), kernels)
    message = problem.message
    assert message.startswith("aten::addmm.out is not registered in the library")
    user = message.index("Without regenerating the library")
    assert user < message.index("change the PyTorch construct") < message.index("--ops-from-pte")
    # addmm is what nn.Linear lowers to, and the Cortex-M quantizer replaces it.
    assert message.index("--ops-from-pte") < message.index("export it int8")
    assert message.count("export it int8") == 1
    assert "extras/PROVENANCE.txt, 'operators'" in message


def _exporter_unavailable() -> str | None:
    for module in ("torch", "torchao", "executorch.exir"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (scripts/install-deps installs the exporter)"
    from importlib.metadata import version

    installed = (version("executorch"), version("torch").split("+")[0])
    if installed != ("1.5.1", "2.13.0"):
        return f"the zoo was exported with executorch 1.5.1 and torch 2.13.0, not {installed}"
    return None


def test_the_exporter_gives_the_committed_bytes(tmp_path: Path) -> None:
    reason = _exporter_unavailable()
    if reason:
        pytest.skip(reason)
    sys.path.insert(0, str(ZOO))
    import export_zoo

    (mlp,) = [m for m in export_zoo.MODELS if m.name == "Mlp"]
    pte, entry = export_zoo.export_model(mlp, lambda data: MANIFEST["Mlp"]["operators"])
    assert pte == (ZOO / "Mlp.pte").read_bytes()
    assert entry == MANIFEST["Mlp"]


def test_the_transformer_calls_what_issue_31_found_missing() -> None:
    # The five operators nn.TransformerEncoderLayer's program called that the default op set
    # of issue 18 lacked: its attention's mask handling, even with no mask passed.
    missing_before = {
        "aten::mul.Scalar_out",
        "aten::eq.Scalar_out",
        "aten::logical_not.out",
        "aten::any.out",
        "aten::full_like.out",
    }
    assert missing_before <= set(MANIFEST["Transformer"]["operators"])
    assert missing_before <= set(DEFAULT_ROOT_OPS)
    # The masked MultiheadAttention turns its boolean mask into a float one.
    assert {"aten::full_like.out", "aten::where.self_out"} <= set(MANIFEST["Mha"]["operators"])
    assert MANIFEST["Transformer"]["input_shape"] == [4, 1, 16]  # tokens x batch x d_model
    assert MANIFEST["Mha"]["input_shape"] == [1, 4, 16]  # batch first
