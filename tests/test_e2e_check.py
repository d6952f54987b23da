"""End to end: `check` on libraries generated from real ExecuTorch (issue 3).

Every example of the library generated from main and from d756e7d8c2 passes every stage with
the gcc-arm back end: model check, UNO Q compile and sizes, emulated Cortex-M33 run, host
sanitizer run, arena. And the faults the check exists for are found on real libraries.
Runs when the upstream URLs resolve; skips otherwise.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from upstream import real_library

from generator.check import run_check
from generator.models import check_library_models
from generator.pipeline import BuildResult

pytestmark = pytest.mark.e2e


def _stage(example: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in example["stages"] if s["stage"] == name)


def _emulated_output(example: dict[str, Any]) -> str:
    return "\n".join(
        "\n".join(run["last_lines"]) for run in example["runs"] if run["kind"] == "emulated"
    )


def _assert_all_examples_pass(result: BuildResult) -> dict[str, Any]:
    report = run_check(result.out, compiler="gcc-arm")
    data = report.to_dict()
    assert report.passed, report.to_markdown()
    examples = {e["example"]: e for e in data["examples"]}
    assert sorted(examples) == ["AddModel", "HelloExecuTorch", "KeywordSpotting"]
    for example in examples.values():
        assert [s["stage"] for s in example["stages"]][:2] == ["compile", "sizes"]
        assert example["sizes"]["flash"] < 786_432 and example["sizes"]["ram"] < 262_144
    assert "[1,2,3] + 1 = [2.00, 3.00, 4.00]" in _emulated_output(examples["AddModel"])
    kws = _emulated_output(examples["KeywordSpotting"])
    assert re.search(r"\[yes\]=8\.9[45]", kws) and "Detected: yes" in kws
    assert "Methods: 1" in _emulated_output(examples["HelloExecuTorch"])
    assert examples["KeywordSpotting"]["sizes"]["arena_used"] <= 40 * 1024
    return data


def test_main_examples_pass_every_stage(real_main: BuildResult) -> None:
    _assert_all_examples_pass(real_main)


def test_published_commit_examples_pass_every_stage(real_published: BuildResult) -> None:
    _assert_all_examples_pass(real_published)


def test_missing_operator_is_named(e2e_root: Path, real_main: BuildResult, tmp_path: Path) -> None:
    # The build refuses examples its kernels cannot run, so build the --ops aten::mul.out
    # library with KeywordSpotting only, then give it AddModel as a user would.
    built = real_library(
        e2e_root,
        "main",
        ops=("aten::mul.out", "dim_order_ops::_clone_dim_order.out"),
        examples=("KeywordSpotting",),
    )
    lib = tmp_path / "ExecuTorch"
    shutil.copytree(built.out, lib)
    shutil.copytree(real_main.out / "examples/AddModel", lib / "examples/AddModel")
    report = check_library_models(lib, ["AddModel"])
    assert not report.passed
    text = report.to_markdown()
    assert "aten::add.out" in text and "OperatorMissing" in text


def test_argument_count_mismatch_names_both_counts(real_main: BuildResult, tmp_path: Path) -> None:
    # A library whose add.out wrapper expects another argument count stands in for a model
    # exported by another ExecuTorch commit.
    lib = tmp_path / "ExecuTorch"
    shutil.copytree(real_main.out, lib)
    registration = lib / "src/executorch/codegen/RegisterCodegenUnboxedKernelsEverything.cpp"
    text = registration.read_text()
    start = text.index('"aten::add.out"')
    changed = text[:start] + text[start:].replace("stack.size() == 5", "stack.size() == 6", 1)
    registration.write_text(changed)
    report = check_library_models(lib, ["AddModel"])
    assert not report.passed
    text = report.to_markdown()
    assert "InvalidProgram" in text and "5" in text and "6" in text


def test_arena_cut_below_need_fails(real_main: BuildResult, tmp_path: Path) -> None:
    lib = tmp_path / "ExecuTorch"
    shutil.copytree(real_main.out, lib)
    sketch = lib / "examples/AddModel/AddModel.ino"
    source = sketch.read_text()
    assert "arena[8 * 1024]" in source
    sketch.write_text(source.replace("arena[8 * 1024]", "arena[256]"))
    report = run_check(lib, examples=["AddModel"], compiler="gcc-arm")
    assert not report.passed
    example = report.to_dict()["examples"][0]
    assert _stage(example, "arena")["status"] == "fail"
