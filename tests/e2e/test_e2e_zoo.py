"""End to end: the model zoo (tests/fixtures/zoo/) on the default library (issue 18).

The default library generated from real ExecuTorch main (cff6f4dd, 1.5.0; the zoo was
exported with the executorch 1.5.1 wheel) runs every zoo model: its `check_models.py` passes
each `.pte`, and each model, in a sketch added to a copy of the library the way
tests/e2e/test_e2e_user_model.py adds one (model.h by the library's own pte_to_header.py), goes
through `python -m generator check` (model check, UNO Q compile, emulated Cortex-M33 run, host
run under sanitizers) and prints outputs equal to PyTorch's within the tolerance below.

Tolerances (absolute, per output value):

- float models: `FLOAT_RELATIVE` * |PyTorch's value| + `FLOAT_ABSOLUTE`. The portable kernels
  compute in float32 as PyTorch does, but in another order (sums, the matrix products) and with
  the C library's expf/tanhf/erff, so values differ in their last bits; the sketch prints 6
  decimals (rounding by at most 5e-7), hence the absolute part.
- int8 models: `INT8_STEPS` steps of the output's quantization scale from the pt2e-converted
  (quantized) PyTorch model, which does the same integer arithmetic up to one rounding
  (CMSIS-NN's requantization against the reference's), and printing.

Runs when the upstream URLs resolve (tests/support/upstream.py); skips with the reason otherwise.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sketches import (
    check_examples,
    emulated_outputs,
    etmodel_expected,
    etmodel_sketch,
    write_model_h,
)

from generator.boards.linkmode_docs import reason
from generator.pipeline.run import BuildResult

pytestmark = pytest.mark.e2e

REPO_ROOT = Path(__file__).resolve().parents[2]
ZOO = REPO_ROOT / "tests" / "fixtures" / "zoo"
MANIFEST: dict[str, Any] = json.loads((ZOO / "zoo.json").read_text(encoding="utf-8"))
#: Float models: relative part of the tolerance (of PyTorch's value).
FLOAT_RELATIVE = 1e-4
#: Float models: absolute part of the tolerance (the 6 printed decimals, and values near 0).
FLOAT_ABSOLUTE = 1e-5
#: Int8 models: allowed distance from the quantized PyTorch model, in output steps.
INT8_STEPS = 1.0
#: The stages of the Static link mode (and the host run): each passes for every model.
STATIC_STAGES = ("compile", "sizes", "run", "sanitize", "arena")


def example_name(model: str) -> str:
    """The example a zoo model is checked as."""
    return f"Zoo{model}"


def tolerance(entry: dict[str, Any], index: int) -> float:
    """The allowed absolute difference of output `index` from `expected(entry)[index]`."""
    if entry["quantized"]:
        return INT8_STEPS * float(entry["output_scale"]) + 1e-6
    return FLOAT_RELATIVE * abs(float(entry["output"][index])) + FLOAT_ABSOLUTE


def expected(entry: dict[str, Any]) -> list[float]:
    """What the board must print: the float model's output, or the quantized model's."""
    return [float(v) for v in entry["quantized_output" if entry["quantized"] else "output"]]


def write_example(lib: Path, model: str, entry: dict[str, Any]) -> None:
    """examples/Zoo<model>/: the sketch, model.h from the library's pte_to_header.py, and an
    expected.yaml holding every output value with its tolerance."""
    name = example_name(model)
    folder = lib / "examples" / name
    folder.mkdir()
    about = (
        f"{name}: the zoo model {model} (tests/fixtures/zoo/), run once on the input of zoo.json."
    )
    (folder / f"{name}.ino").write_text(etmodel_sketch(name, about, entry["input"]))
    write_model_h(lib, ZOO / f"{model}.pte", folder)
    outputs = [(value, tolerance(entry, i)) for i, value in enumerate(expected(entry))]
    (folder / "expected.yaml").write_text(etmodel_expected(name, outputs))


def dynamic_cell(example: dict[str, Any]) -> str:
    """The pinned core's Dynamic verdict, for the table: `loads, N of M B` or the refusal."""
    dynamic = example.get("dynamic") or {}
    pinned = next((v for v in dynamic.get("verdicts") or [] if v["pinned"]), None)
    if pinned is None:
        return "-"
    if pinned["loaded"]:
        return f"{pinned['core']}: loads, {pinned['peak_bytes']} of {pinned['heap_bytes']} B"
    return (
        f"{pinned['core']}: rc -{pinned['errno']} ({reason(pinned)}), needs "
        f"{pinned['peak_bytes']} B, {pinned['short_branches']} short branches out"
    )


def test_check_models_passes_every_zoo_model(real_main: BuildResult) -> None:
    ptes = ",".join(str(ZOO / f"{m}.pte") for m in MANIFEST)
    proc = subprocess.run(
        [
            sys.executable,
            str(real_main.out / "extras/tools/check_models.py"),
            str(real_main.out),
            "--pte",
            ptes,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{len(MANIFEST)} models match" in proc.stdout
    for model in MANIFEST:
        assert f"ok   {model}.pte:" in proc.stdout


def test_every_zoo_model_runs_on_the_emulated_board(real_main: BuildResult, tmp_path: Path) -> None:
    lib = tmp_path / "ExecuTorch"
    shutil.copytree(real_main.out, lib)
    for model, entry in MANIFEST.items():
        write_example(lib, model, entry)
    report_file = tmp_path / "report.json"
    check = check_examples(lib, [example_name(m) for m in MANIFEST], report_file)
    report = json.loads(report_file.read_text()) if report_file.is_file() else {}
    examples = {e["example"]: e for e in report.get("examples", [])}
    rows = []
    for model, entry in MANIFEST.items():
        example = examples.get(example_name(model))
        if example is None:
            continue
        board = emulated_outputs(example)
        want = expected(entry)
        errors = [abs(b - w) for b, w in zip(board, want, strict=False)]
        vs_float = max(abs(b - f) for b, f in zip(board, entry["output"], strict=False))
        timing = example.get("timing") or {}
        rows.append(
            f"| {model} | {example['sizes'].get('flash')} | {example['sizes'].get('ram')} | "
            f"{dynamic_cell(example)} | {timing.get('instructions_per_inference')} | "
            f"{timing.get('dynamic_instructions_per_inference')} | "
            f"{max(errors) if errors else '-'} | {vs_float} | {len(board)}/{len(want)} |"
        )
    print(
        "\n| model | flash B | RAM B | Dynamic (pinned core) | instructions per inference "
        "| Dynamic run's | max error vs expected | vs float | outputs |"
    )
    print("\n".join(rows))
    assert examples, check.stdout[-6000:] + check.stderr[-3000:]
    for model, entry in MANIFEST.items():
        example = examples[example_name(model)]
        status = {s["stage"]: s["status"] for s in example["stages"]}
        # Static: every stage passes, every output within the tolerance.
        assert {status[s] for s in STATIC_STAGES} == {"pass"}, (model, status)
        board = emulated_outputs(example)
        want = expected(entry)
        assert len(board) == len(want), (model, board)
        for i, (b, w) in enumerate(zip(board, want, strict=True)):
            assert abs(b - w) <= tolerance(entry, i), (model, i, b, w)
        (pinned,) = [v for v in example["dynamic"]["verdicts"] if v["pinned"]]
        assert pinned["core"] == "main@177dcef6" and pinned["heap_bytes"] == 262_144
        # Every zoo model fits the pinned core's 256 KiB heap (Gru, the largest, ~189 KB) and
        # loads: no call needs a short branch to the firmware (the AEABI helpers are wrapped
        # on that core), and libm's __errno (expf, tanhf, erff, tanh's error paths) is the
        # library's own (arduino_pal.cpp), since no core exports it. The Dynamic run prints
        # what PyTorch does too.
        assert pinned["peak_bytes"] <= pinned["heap_bytes"], (model, pinned)
        assert pinned["loaded"], (model, reason(pinned), pinned)
        assert pinned["short_branches"] == 0, (model, pinned)
        assert example["passed"] and status["dynamic-run"] == "pass", (model, status)
        dynamic = emulated_outputs(example, "dynamic")
        assert len(dynamic) == len(want), (model, dynamic)
        for i, (d, w) in enumerate(zip(dynamic, want, strict=True)):
            assert abs(d - w) <= tolerance(entry, i), (model, "dynamic", i, d, w)
    assert check.returncode == 0, check.stdout[-6000:] + check.stderr[-3000:]
