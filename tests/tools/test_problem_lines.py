"""A refusal says each problem once and each cause once, with advice that fits the operator
(et_checks.problem_lines, missing_cause), and names the PyTorch construct each operator came
from when the exporter knows it (et_origins, read from the exported graph's node meta)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "data" / "extras" / "tools"))

import et_checks
import et_origins

#: The five operators nn.MultiheadAttention's mask handling lowers to that the op set of
#: main@cff6f4dd lacked (issue 31).
MASK_OPS = (
    "aten::mul.Scalar_out",
    "aten::eq.Scalar_out",
    "aten::logical_not.out",
    "aten::any.out",
    "aten::full_like.out",
)


def missing(operator: str, calls: int = 1) -> et_checks.Problem:
    return et_checks.Problem("forward", operator, "OperatorMissing", 0x14, 3, None, calls)


def test_five_missing_operators_get_the_advice_once() -> None:
    lines = et_checks.problem_lines([missing(op) for op in MASK_OPS])
    assert lines[:5] == [
        f"{op} is not registered in the library: Method::load fails with OperatorMissing "
        "(0x14) [forward]"
        for op in MASK_OPS
    ]
    assert lines[5] == f"likely cause of {', '.join(MASK_OPS)}: {et_checks.MISSING_CAUSE}"
    assert len(lines) == 6
    assert sum(line.count("op set does not include") for line in lines) == 1


def test_one_problem_reads_as_its_message() -> None:
    problem = missing("aten::any.out", calls=2)
    assert et_checks.problem_lines([problem]) == [problem.message]
    assert problem.message.endswith(f"[2 calls in forward]; likely cause: {problem.cause}")


def test_int8_is_offered_only_for_an_operator_the_cortex_m_passes_replace() -> None:
    assert "--quantize int8" not in missing("aten::any.out").cause
    assert "nn.ReLU" not in missing("aten::any.out").cause
    add = missing("aten::add.out").cause
    assert add == et_checks.MISSING_CAUSE + et_checks.QUANTIZE_ADVICE
    lines = et_checks.problem_lines([missing("aten::any.out"), missing("aten::add.out")])
    assert lines[2:] == [
        f"likely cause of aten::any.out: {et_checks.MISSING_CAUSE}",
        f"likely cause of aten::add.out: {add}",
    ]


def test_different_causes_are_each_said_once_for_their_problems() -> None:
    count = et_checks.Problem("forward", "aten::add.out", "InvalidProgram", 0x23, 5, 4)
    backend = et_checks.MissingBackend("forward", "XnnpackBackend")
    lines = et_checks.problem_lines([missing("aten::any.out"), count, backend])
    assert lines[1].startswith("aten::add.out: model supplies 5 arguments, library expects 4")
    assert lines[2].startswith("delegates to backend XnnpackBackend")
    assert lines[3:] == [
        f"likely cause of aten::any.out: {et_checks.MISSING_CAUSE}",
        f"likely cause of aten::add.out: {et_checks.LIKELY_CAUSE}",
        f"likely cause of XnnpackBackend: {et_checks.BACKEND_CAUSE}",
    ]


def test_origins_name_the_construct_of_each_operator() -> None:
    origins = {"aten::any.out": "nn.MultiheadAttention 'self_attn' (F.mha(...))"}
    lines = et_checks.problem_lines([missing("aten::any.out")], origins)
    assert lines == [
        "aten::any.out is not registered in the library: Method::load fails with "
        "OperatorMissing (0x14) [forward] (from nn.MultiheadAttention 'self_attn' "
        f"(F.mha(...))); likely cause: {et_checks.MISSING_CAUSE}"
    ]


def _node(op: str, name: str | None, meta: dict[str, Any]) -> SimpleNamespace:
    schema = None
    if name is not None:
        base, _, overload = name.partition(".")
        schema = SimpleNamespace(name=base, overload_name=overload)
    return SimpleNamespace(op=op, target=SimpleNamespace(_schema=schema), meta=meta)


def test_operator_origins_reads_the_module_stack_and_the_stack_trace() -> None:
    attention = {
        "nn_module_stack": {
            "L__self__": ("", "torch.nn.modules.transformer.TransformerEncoderLayer"),
            "L__self___self_attn": ("self_attn", "torch.nn.modules.activation.MultiheadAttention"),
        },
        "stack_trace": 'File "x.py", line 1\n    out = F.multi_head_attention_forward(\n',
    }
    mine = {"nn_module_stack": {"a": ("", "my_models.Net")}, "stack_trace": "  y = x * 2"}
    graph = SimpleNamespace(
        nodes=[
            _node("placeholder", None, {}),
            _node("call_function", "aten::any.out", attention),
            _node("call_function", "aten::any.out", attention),  # the same construct again
            _node("call_function", "aten::any.out", mine),
            _node("call_function", "aten::mul.Scalar_out", mine),
            _node("call_function", "aten::relu.out", {}),  # no meta: left out
            _node("call_function", None, attention),  # a getitem: no operator
        ]
    )
    assert et_origins.operator_origins(SimpleNamespace(graph=graph)) == {
        "aten::any.out": "nn.MultiheadAttention 'self_attn' "
        "(out = F.multi_head_attention_forward(); my_models.Net (y = x * 2)",
        "aten::mul.Scalar_out": "my_models.Net (y = x * 2)",
    }
