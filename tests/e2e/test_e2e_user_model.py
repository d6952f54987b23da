"""End to end: a user's own model goes the whole way (issue 9).

PyTorch model -> int8 Cortex-M export with the executorch wheel by the shipped exporter's
functions (extras/tools/export_model.py `quantize_int8`, `lower_int8`: the recipe of the ref's
examples/arduino/export_model.py, CortexMQuantizer, prepare/convert_pt2e, to_edge with the
Cortex-M compile config, CortexMPassManager for the Cortex-M33) -> .pte -> model.h by the
library's own extras/tools/pte_to_header.py -> a sketch in a copy of the library generated
from real main -> `python -m generator check` (model check, UNO Q compile, emulated
Cortex-M33 run, host run under sanitizers) -> the printed outputs equal the float PyTorch
model's on the same input within the quantization tolerance.

Runs when the upstream URLs resolve and the exporter imports (scripts/install-deps installs
torchao and tosa-tools for it); skips with the reason otherwise.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from sketches import (
    check_examples,
    emulated_outputs,
    etmodel_expected,
    etmodel_sketch,
    write_model_h,
)

from generator.pipeline.run import BuildResult

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "data" / "extras" / "tools"))

import export_model  # the exporter the library ships: its int8 recipe is the one tested

pytestmark = pytest.mark.e2e

EXAMPLE = "MyModel"
#: The float input the sketch feeds the model (also the PyTorch reference's input).
INPUT = (0.75, -0.5, 0.25, 1.0, -0.875, 0.125, -0.25, 0.5)
#: Allowed distance of each board output from the float model's, in output quantization
#: steps: the input's rounding to int8 (half a step of its scale), the int8 weights, the
#: hidden layer's requantization and the output's own rounding each move this two-layer
#: model's output by at most about one step.
TOLERANCE_STEPS = 3.0
#: The board runs the same integer arithmetic as the quantized PyTorch model, up to one
#: rounding of the output (CMSIS-NN's requantization against the reference's).
QUANTIZED_TOLERANCE_STEPS = 1.0


@dataclass(frozen=True)
class Exported:
    """What the export gives the test.

    Attributes:
        pte: the program's bytes.
        reference: the float model's outputs on INPUT.
        quantized: the quantized (pt2e-converted) model's outputs on INPUT.
        output_scale: the scale of the int8 output the program dequantizes.
    """

    pte: bytes
    reference: list[float]
    quantized: list[float]
    output_scale: float


def _exporter_unavailable() -> str | None:
    for module in ("torchao", "tosa_serializer", "executorch.exir"):
        if importlib.util.find_spec(module) is None:
            return (
                f"{module} is not installed: the Cortex-M exporter needs the executorch wheel, "
                "torchao and tosa-tools (scripts/install-deps installs them)"
            )
    return None


def export_cortex_m(input_values: tuple[float, ...]) -> Exported:
    """Export a two-layer perceptron (8 -> 8, ReLU, -> 4) for the Cortex-M33, int8, with the
    shipped exporter's recipe (extras/tools/export_model.py `quantize_int8`, `lower_int8`)."""
    import torch

    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = torch.nn.Sequential(
            torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4)
        ).eval()
        calibration = [torch.rand(1, 8) * 2 - 1 for _ in range(64)]
    example = torch.tensor([input_values])
    with torch.no_grad():
        reference = model(example)[0].tolist()

    samples = [(sample,) for sample in [*calibration, example]]
    converted = export_model.quantize_int8(model, (example,), samples)
    with torch.no_grad():
        quantized = converted(example)[0].tolist()
    edge = export_model.lower_int8(converted, (example,), "cortex-m33")
    graph = edge.exported_program().graph_module.graph
    dequantize = [n for n in graph.nodes if "dequantize_per_tensor" in str(n.target)]
    assert len(dequantize) == 1, graph
    output_scale = float(dequantize[0].args[1])
    return Exported(bytes(edge.to_executorch().buffer), reference, quantized, output_scale)


def write_example(lib: Path, exported: Exported, tolerance: float) -> Path:
    """The sketch folder examples/EXAMPLE: sketch, expected.yaml, and model.h made by the
    library's own pte_to_header.py from the exported .pte (the way the README tells users)."""
    folder = lib / "examples" / EXAMPLE
    folder.mkdir()
    about = (
        f"{EXAMPLE}: a user's own model (an int8 two-layer perceptron exported with the\n"
        "Cortex-M quantizer by tests/e2e/test_e2e_user_model.py), run once on a fixed input."
    )
    sketch = etmodel_sketch(EXAMPLE, about, INPUT, heap_arena=False, timing=False)
    (folder / f"{EXAMPLE}.ino").write_text(sketch)
    pte = lib.parent / "model.pte"
    pte.write_bytes(exported.pte)
    write_model_h(lib, pte, folder)
    outputs = [(round(value, 6), tolerance) for value in exported.reference]
    (folder / "expected.yaml").write_text(etmodel_expected(EXAMPLE, outputs))
    return folder


def test_user_model_runs_on_the_emulated_board(real_main: BuildResult, tmp_path: Path) -> None:
    reason = _exporter_unavailable()
    if reason:
        pytest.skip(reason)
    started = time.monotonic()
    exported = export_cortex_m(INPUT)
    tolerance = TOLERANCE_STEPS * exported.output_scale
    lib = tmp_path / "ExecuTorch"
    shutil.copytree(real_main.out, lib)
    write_example(lib, exported, tolerance)
    exported_at = time.monotonic()

    report_file = tmp_path / "report.json"
    check = check_examples(lib, [EXAMPLE], report_file)
    assert check.returncode == 0, check.stdout + check.stderr
    report = json.loads(report_file.read_text())
    (example,) = report["examples"]
    board = emulated_outputs(example)
    assert len(board) == len(exported.reference) == 4, report

    error = max(abs(b - r) for b, r in zip(board, exported.reference, strict=True))
    vs_quantized = max(abs(b - q) for b, q in zip(board, exported.quantized, strict=True))
    print(
        f"\n{EXAMPLE}: board {board}\n  float reference {exported.reference}\n"
        f"  max abs error {error:.6f} (tolerance {tolerance:.6f} = {TOLERANCE_STEPS:g} steps "
        f"of the output scale {exported.output_scale:.6f}); against the quantized model "
        f"{vs_quantized:.6f}\n  export {exported_at - started:.1f} s, check "
        f"{time.monotonic() - exported_at:.1f} s"
    )
    assert error <= tolerance
    assert vs_quantized <= QUANTIZED_TOLERANCE_STEPS * exported.output_scale + 1e-6


def test_conversion_scripts_ship(real_main: BuildResult) -> None:
    tools = real_main.out / "extras" / "tools"
    # Ours, the general exporter, not the ref's KeywordSpotting recipe (not shipped).
    assert "MODULE:FACTORY" in (tools / "export_model.py").read_text()
    assert "def wav_to_mfcc" in (tools / "generate_test_input.py").read_text()
    provenance = (real_main.out / "extras" / "PROVENANCE.txt").read_text()
    assert "extras/tools/ from ExecuTorch examples/arduino/: generate_test_input.py\n" in provenance


def test_export_model_help_runs_from_the_library(real_main: BuildResult) -> None:
    # What users are told to run first; --help imports neither torch nor executorch.
    proc = subprocess.run(
        [sys.executable, str(real_main.out / "extras/tools/export_model.py"), "--help"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "--input-shape" in proc.stdout and "--quantize" in proc.stdout
