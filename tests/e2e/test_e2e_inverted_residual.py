"""End to end: an int8 MobileNetV2 inverted residual block passes `check --sketch`, sanitizer
included (issue 31, point 2).

The block (1x1 conv expand, ReLU6, 3x3 depthwise conv, ReLU6, 1x1 project, residual add) made
channels-last by hand, model and input, is quantized by the shipped exporter's functions
(extras/tools/export_model.py `quantize_int8`, `lower_int8`, as tests/fixtures/zoo/export_zoo.py
calls them), so its convolutions lower to cortex_m::quantized_conv2d and
quantized_depthwise_conv2d and the add to cortex_m::quantized_add, CMSIS-NN's
arm_elementwise_add_s8. Before the patch cmsis-nn-add-shift
(generator/pipeline/cmsis_nn_patches.py) the host run stopped at its line 208, a left shift of
a negative value; now every stage passes in both link modes (the Static firmware, the Dynamic
upload file placed by the loader model, the host under AddressSanitizer + UBSan), and the
board prints the quantized PyTorch model's outputs within one int8 step (the tolerance of
tests/e2e/test_e2e_zoo.py).

Runs when the upstream URLs resolve and the exporter imports; skips with the reason otherwise.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.pipeline.run import BuildResult

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "data" / "extras" / "tools"))

import export_model  # the exporter the library ships

pytestmark = pytest.mark.e2e

REPO_ROOT = Path(__file__).resolve().parents[2]
SKETCH_NAME = "InvertedResidual"
#: (batch, channels, height, width) of the block's input; its expansion factor.
SHAPE = (1, 4, 4, 4)
EXPANSION = 4
#: Allowed distance from the quantized PyTorch model, in output steps (test_e2e_zoo.py).
INT8_STEPS = 1.0
#: Every stage of `check --sketch`: both link modes and the host run.
STAGES = ("compile", "sizes", "dynamic", "run", "dynamic-run", "sanitize", "arena")
OUTPUT_LINE = re.compile(r"^out\[(\d+)\]=(-?[0-9]+\.[0-9]+)$")
#: The Cortex-M operators the block must lower to (else it is not the case of the issue).
CORTEX_M_OPS = (
    "cortex_m::quantized_conv2d",
    "cortex_m::quantized_depthwise_conv2d",
    "cortex_m::quantized_add",
)

SKETCH = """\
// {name}: an int8 MobileNetV2 inverted residual block (tests/e2e/test_e2e_inverted_residual.py),
// run once; the input is channels-last (NHWC), the order the program reads it.

#include <ETModel.h>

#include <cstdlib>

#include "model.h"

static uint8_t* const arena = static_cast<uint8_t*>(malloc(model_pte_arena_bytes));
static ETModel model(model_pte, sizeof(model_pte), arena, arena ? model_pte_arena_bytes : 0);

static const float kInput[] = {{{inputs}}};

void setup() {{
  Serial.begin(115200);
  Serial.println("=== {name} ===");
  if (!model.begin() || !model.setInput(0, kInput, sizeof(kInput) / sizeof(kInput[0])) ||
      !model.run() || model.output() == nullptr) {{
    Serial.print("ERROR: ");
    Serial.println(model.error());
  }} else {{
    for (size_t i = 0; i < model.outputCount(); i++) {{
      Serial.print("out[");
      Serial.print(static_cast<unsigned long>(i));
      Serial.print("]=");
      Serial.println(model.output()[i], 6);
    }}
    Serial.print("Arena: used ");
    Serial.print(static_cast<unsigned long>(model.arenaUsed()));
    Serial.print(" of ");
    Serial.print(static_cast<unsigned long>(model.arenaSize()));
    Serial.println(" bytes");
  }}
  Serial.println("=== DONE ===");
}}

void loop() {{
  delay(1000);
}}
"""


def _exporter_unavailable() -> str | None:
    for module in ("torchao", "tosa_serializer", "executorch.exir"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed: the Cortex-M exporter needs it"
    return None


def export_block() -> tuple[bytes, list[float], list[float], float]:
    """The block's .pte, its input and the quantized model's output (both in NHWC memory
    order, as the program reads and writes them) and the output's int8 step."""
    import torch
    from torch import nn

    class InvertedResidual(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            channels, hidden = SHAPE[1], SHAPE[1] * EXPANSION
            self.expand = nn.Conv2d(channels, hidden, 1)
            self.depthwise = nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden)
            self.project = nn.Conv2d(hidden, channels, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = nn.functional.relu6(self.expand(x))
            y = nn.functional.relu6(self.depthwise(y))
            out: torch.Tensor = x + self.project(y)
            return out

    last = torch.channels_last
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = InvertedResidual().eval()
        # The quantizer annotates convolutions of channels-last tensors only.
        model = model.to(memory_format=last)  # type: ignore[call-overload]
        calibration = [(torch.rand(SHAPE) * 2 - 1).to(memory_format=last) for _ in range(32)]
        # Multiples of 1/64 in [-1, 1): exact as float literals, and half of them negative,
        # below the add's zero point.
        example = (torch.round((torch.rand(SHAPE) * 2 - 1) * 64) / 64).to(memory_format=last)
    converted = export_model.quantize_int8(model, (example,), [(c,) for c in calibration])
    with torch.no_grad():
        quantized = converted(example)
    edge = export_model.lower_int8(converted, (example,), "cortex-m33")
    graph = edge.exported_program().graph_module.graph
    targets = {str(n.target) for n in graph.nodes}
    for op in CORTEX_M_OPS:
        assert any(op.replace("::", ".") in t for t in targets), (op, targets)
    (output,) = [n for n in graph.nodes if n.op == "output"]
    (result,) = output.args[0]
    assert "dequantize_per_tensor" in str(result.target), result
    nhwc = (0, 2, 3, 1)
    return (
        bytes(edge.to_executorch().buffer),
        example.permute(nhwc).flatten().tolist(),
        quantized.permute(nhwc).flatten().tolist(),
        float(result.args[1]),
    )


def _outputs(example: dict[str, Any], kind: str) -> list[float]:
    (run,) = [r for r in example["runs"] if r["kind"] == kind]
    found = {}
    for line in run["last_lines"]:
        match = OUTPUT_LINE.match(line.strip())
        if match:
            found[int(match.group(1))] = float(match.group(2))
    return [found[i] for i in sorted(found)]


def test_an_int8_inverted_residual_block_passes_the_check_with_the_sanitizer(
    real_main: BuildResult, tmp_path: Path
) -> None:
    reason = _exporter_unavailable()
    if reason:
        pytest.skip(reason)
    provenance = (real_main.out / "extras/PROVENANCE.txt").read_text()
    assert "  cmsis-nn-add-shift: " in provenance
    pte, inputs, want, step = export_block()
    sketch = tmp_path / SKETCH_NAME
    sketch.mkdir()
    literals = ", ".join(f"{v!r}f" for v in inputs)
    (sketch / f"{SKETCH_NAME}.ino").write_text(SKETCH.format(name=SKETCH_NAME, inputs=literals))
    (tmp_path / "block.pte").write_bytes(pte)
    subprocess.run(
        [
            sys.executable,
            str(real_main.out / "extras/tools/pte_to_header.py"),
            str(tmp_path / "block.pte"),
            "-o",
            str(sketch / "model.h"),
        ],
        check=True,
        capture_output=True,
    )
    spec = {
        "must_print": [f"=== {SKETCH_NAME} ===", "=== DONE ==="],
        "must_not_print": ["ERROR:"],
        "arena": True,
        "timeout_seconds": 120,
        "values": [
            {
                "line_regex": rf"^out\[{i}\]=(-?[0-9]+\.[0-9]+)$",
                "equals": value,
                "tolerance": INT8_STEPS * step + 1e-6,
            }
            for i, value in enumerate(want)
        ],
    }
    (sketch / "expected.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    lib = tmp_path / "ExecuTorch"
    shutil.copytree(real_main.out, lib)
    report_file = tmp_path / "report.json"
    check = subprocess.run(
        [
            sys.executable,
            "-m",
            "generator",
            "check",
            str(lib),
            "--sketch",
            str(sketch),
            "--compiler",
            "gcc-arm",
            "--json",
            str(report_file),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(report_file.read_text()) if report_file.is_file() else {}
    assert report.get("examples"), check.stdout[-6000:] + check.stderr[-3000:]
    (example,) = report["examples"]
    status = {s["stage"]: s["status"] for s in example["stages"]}
    print(f"\n{SKETCH_NAME}: {status}; sizes {example['sizes']}; timing {example.get('timing')}")
    assert {status[s] for s in STAGES} == {"pass"}, (status, check.stdout[-6000:])
    for kind in ("emulated", "dynamic", "host"):
        got = _outputs(example, kind)
        assert len(got) == len(want) == SHAPE[1] * SHAPE[2] * SHAPE[3], (kind, got)
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert abs(g - w) <= INT8_STEPS * step + 1e-6, (kind, i, g, w, step)
    assert check.returncode == 0, check.stdout[-6000:] + check.stderr[-3000:]
