"""export_model.py: a user's torch.nn.Module to the .pte and model.h in one step.

Runs the exporter as a user runs it from a library (a small library tree holding this repo's
extras/tools, the wheel's program reader and a kernel registration; see
tests/unit/pipeline/test_model_check.py's make_library), with the torch and executorch wheel the
tests
install (requirements.txt, scripts/install-deps). The exported float program is run on the
host by the wheel's own ExecuTorch runtime and compared with PyTorch's output.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "data" / "extras" / "tools"))

import et_arena
import et_model_h
import et_pte

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "data" / "extras" / "tools"


def _missing() -> str | None:
    for module in ("torch", "executorch.exir", "torchao"):
        if importlib.util.find_spec(module) is None:
            return (
                f"{module} is not installed: the exporter needs torch, the executorch wheel "
                "and torchao (requirements.txt and scripts/install-deps install them)"
            )
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=str(_missing()))

#: The argument counts the test library registers, as a library generated from cff6f4dd
#: does: float nn.Linear calls aten::addmm.out (7) and, exported without constant folding,
#: aten::permute_copy.out (4) (read from
#: the RegisterKernelsByOperator.cpp of `generator build --ops-from-pte` given such a
#: program, and what the executorch 1.5.1 wheel's export passes); the int8 ones from
#: tests/unit/pipeline/test_model_check.py KERNELS_AT_CFF6F4DD.
FLOAT_KERNELS = {"aten::addmm.out": 7, "aten::permute_copy.out": 4}
INT8_KERNELS = {
    "cortex_m::quantize_per_tensor.out": 8,
    "cortex_m::quantized_linear.out": 13,
    "cortex_m::dequantize_per_tensor.out": 8,
}

MODELS_PY = """\
import torch


def tiny_linear():
    torch.manual_seed(0)
    return torch.nn.Linear(8, 4)


def mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))


class Branchy(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # data-dependent control flow: torch.export refuses it
            return x + 1
        return x - 1


def needs_an_argument(width):
    return torch.nn.Linear(width, width)


def not_a_model():
    return [1, 2, 3]


def broken():
    raise RuntimeError("the weights file is missing")


NOT_CALLABLE = 3
"""


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A library tree registering the kernels of FLOAT_KERNELS and INT8_KERNELS."""
    from library_fixture import make_library

    root = make_library(
        tmp_path_factory.mktemp("lib") / "ExecuTorch", {**FLOAT_KERNELS, **INT8_KERNELS}
    )
    shutil.copytree(
        TOOLS,
        root / "extras" / "tools",
        ignore=shutil.ignore_patterns("__pycache__"),
        dirs_exist_ok=True,
    )
    return root


@pytest.fixture
def models(tmp_path: Path) -> Path:
    """A folder with the user's models.py (and nothing else)."""
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "user_models.py").write_text(MODELS_PY)
    return folder


def export(library: Path, *args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the library's export_model.py as a user does."""
    return subprocess.run(
        [sys.executable, str(library / "extras/tools/export_model.py"), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env={**os.environ, "PYTHONPATH": ""},
    )


def run_on_host(pte: bytes, inputs: tuple[Any, ...]) -> list[Any]:
    """Run the program with the wheel's ExecuTorch runtime (portable kernels, host CPU)."""
    runtime = importlib.import_module("executorch.runtime").Runtime

    method = runtime.get().load_program(pte).load_method("forward")
    assert method is not None
    return list(method.execute(inputs))


def operators(library: Path, pte: bytes) -> list[str]:
    reader = et_pte.load_reader(library / et_pte.LIBRARY_READER_DIR)
    return et_pte.read_program(pte, reader).called_operators


def test_float_linear_end_to_end(library: Path, models: Path) -> None:
    import torch

    result = export(
        library, "user_models.py:tiny_linear", "--input-shape", "1x8", "-o", "out", cwd=models
    )
    assert result.returncode == 0, result.stderr
    pte = (models / "out" / "model.pte").read_bytes()
    header = (models / "out" / "model.h").read_text()
    assert et_model_h.pte_from_model_h(header) == pte
    # The weight's transpose is folded at export (a constant), so no permute_copy runs.
    assert operators(library, pte) == ["aten::addmm.out"]
    assert "et_arduino_select_aten_addmm_out" in header
    assert "inline constexpr size_t model_pte_arena_bytes = " in header
    lines = result.stdout.splitlines()
    assert lines[0] == (
        f"out/model.pte: {len(pte)} bytes, float, portable kernels, exported from "
        "user_models.py:tiny_linear"
    )
    assert lines[1].startswith(
        f"out/model.h: model_pte[{len(pte)}] from model.pte; methods forward"
    )
    assert lines[1].endswith(f"selects the kernels of 1 operators; checked against {library}")
    # The program computes what the PyTorch model computes.
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4).eval()
    x = torch.tensor([[0.75, -0.5, 0.25, 1.0, -0.875, 0.125, -0.25, 0.5]])
    (out,) = run_on_host(pte, (x,))
    with torch.no_grad():
        expected = model(x)
    assert out.shape == (1, 4)
    assert torch.allclose(out, expected, atol=1e-6), (out, expected)


def test_a_float_linears_weights_stay_in_flash(library: Path, models: Path) -> None:
    """A 256x256 nn.Linear: without constant folding its program computed permute_copy of the
    weight into the memory plan (264,192 B planned, 264,865 B of arena, measured with the
    same wheel); folded, the plan holds only the input and output (2 x 256 floats)."""
    import torch

    (models / "wide.py").write_text(
        "import torch\n\n\ndef make():\n    torch.manual_seed(0)\n"
        "    return torch.nn.Linear(256, 256)\n"
    )
    result = export(library, "wide.py:make", "--input-shape", "1x256", "-o", "out", cwd=models)
    assert result.returncode == 0, result.stderr
    pte = (models / "out" / "model.pte").read_bytes()
    reader = et_pte.load_reader(library / et_pte.LIBRARY_READER_DIR)
    plan = et_arena.method_arena(pte, reader)
    assert plan.planned == (2 * 256 * 4,)
    assert plan.total == 2493
    header = (models / "out" / "model.h").read_text()
    assert "inline constexpr size_t model_pte_arena_bytes = 2493;" in header
    # The folded weight is in the program: 256 x 256 floats and the bias, in flash.
    assert len(pte) > 256 * 257 * 4
    torch.manual_seed(0)
    model = torch.nn.Linear(256, 256).eval()
    x = torch.rand(1, 256, generator=torch.Generator().manual_seed(1)) * 2 - 1
    (out,) = run_on_host(pte, (x,))
    with torch.no_grad():
        assert torch.allclose(out, model(x), atol=1e-5), (out - model(x)).abs().max()


def test_int8_linear_uses_the_cortex_m_kernels(library: Path, models: Path) -> None:
    result = export(
        library,
        "user_models:mlp",
        "--input",
        "1x8",
        "--quantize",
        "int8",
        "--pte",
        "mlp.pte",
        "--header",
        "mlp.h",
        "--name",
        "mlp",
        cwd=models,
    )
    assert result.returncode == 0, result.stderr
    pte = (models / "mlp.pte").read_bytes()
    assert sorted(operators(library, pte)) == sorted(INT8_KERNELS)
    header = (models / "mlp.h").read_text()
    assert et_model_h.pte_from_model_h(header) == pte
    assert "alignas(16) inline constexpr uint8_t mlp[] = {" in header
    assert "mlp.pte: " in result.stdout and "int8 for the cortex-m33" in result.stdout


def test_a_saved_exported_program_and_example_inputs_file(library: Path, models: Path) -> None:
    import torch

    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4).eval()
    x = torch.rand(1, 8)
    torch.export.save(torch.export.export(model, (x,)), str(models / "linear.pt2"))
    saved = export(library, "--exported", "linear.pt2", "-o", "saved", cwd=models)
    assert saved.returncode == 0, saved.stderr
    pte = (models / "saved" / "model.pte").read_bytes()
    (out,) = run_on_host(pte, (x,))
    with torch.no_grad():
        assert torch.allclose(out, model(x), atol=1e-6)
    torch.save((x,), str(models / "inputs.pt"))
    from_file = export(
        library,
        "user_models:tiny_linear",
        "--example-inputs",
        "inputs.pt",
        "-o",
        "file",
        cwd=models,
    )
    assert from_file.returncode == 0, from_file.stderr
    assert (models / "file" / "model.pte").read_bytes() == pte


def test_a_model_the_library_cannot_run_is_refused_and_nothing_written(
    tmp_path: Path, models: Path
) -> None:
    from library_fixture import make_library

    lib = make_library(tmp_path / "NoAddmm", {"aten::permute_copy.out": 4})
    shutil.copytree(
        TOOLS,
        lib / "extras" / "tools",
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (models / "out").mkdir()
    (models / "out" / "model.h").write_text("// the user's previous header\n")
    refused = export(lib, "user_models:tiny_linear", "--input", "1x8", "-o", "out", cwd=models)
    assert refused.returncode == 1
    assert f"error: model.pte would not run on the library {lib}; nothing written:\n" in (
        refused.stderr
    )
    assert "  aten::addmm.out is not registered in the library" in refused.stderr
    # The exporter names the PyTorch construct the operator came from (et_origins).
    assert "(from nn.Linear (" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    assert sorted(p.name for p in (models / "out").iterdir()) == ["model.h"]
    assert (models / "out" / "model.h").read_text() == "// the user's previous header\n"
    forced = export(
        lib, "user_models:tiny_linear", "--input", "1x8", "-o", "out", "--no-check", cwd=models
    )
    assert forced.returncode == 0, forced.stderr
    assert sorted(p.name for p in (models / "out").iterdir()) == ["model.h", "model.pte"]


def test_bad_input_is_one_line_and_exit_2(library: Path, models: Path) -> None:
    result = export(library, "no_such_module:make", "--input", "1x8", cwd=models)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        "error: no module no_such_module: run from the folder holding no_such_module.py, or "
        "give the file's path (path/to/no_such_module.py:make)"
    )
    assert "Traceback" not in result.stderr
    assert list(models.iterdir()) == [models / "user_models.py"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["user_models"], "'user_models' is not MODULE:FACTORY, e.g. mymodels:make_mlp"),
        (["user_models:nope", "--input", "1x8"], "user_models has no nope (it defines Branchy,"),
        (
            ["user_models:NOT_CALLABLE", "--input", "1x8"],
            "user_models:NOT_CALLABLE is a int, not callable: name a class or function",
        ),
        (
            ["user_models:needs_an_argument", "--input", "1x8"],
            "user_models:needs_an_argument() failed: TypeError: needs_an_argument() missing 1 "
            "required positional argument: 'width': FACTORY is called with no arguments",
        ),
        (
            ["user_models:broken", "--input", "1x8"],
            "user_models:broken() failed: RuntimeError: the weights file is missing",
        ),
        (
            ["user_models:not_a_model", "--input", "1x8"],
            "user_models:not_a_model() returned a list, not a torch.nn.Module",
        ),
        (["nothing.py:make", "--input", "1x8"], "no file nothing.py: MODULE:FACTORY names"),
        (["user_models:mlp", "--input", "1xa"], "--input-shape '1xa': a shape is positive"),
        (
            ["user_models:mlp", "--input", "1x8:float64"],
            "--input-shape '1x8:float64': dtype 'float64' is not one of float32",
        ),
        (["user_models:mlp"], "give the example inputs: --input-shape 1x8"),
        ([], "give the model: MODULE:FACTORY or --exported FILE.pt2"),
        (["user_models:mlp", "--input", "1x8", "--calibration", "c.pt"], "--calibration is for"),
        (["--exported", "none.pt2"], "no file none.pt2: --exported takes a file"),
        (
            ["user_models:mlp", "--example-inputs", "user_models.py"],
            "--example-inputs user_models.py: not a torch.save file of tensors",
        ),
        (
            ["user_models:Branchy", "--input", "1x8"],
            "exporting user_models:Branchy failed: ",
        ),
    ],
)
def test_refusals(
    args: list[str],
    message: str,
    library: Path,
    models: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import export_model

    monkeypatch.chdir(models)
    monkeypatch.setattr(sys, "path", list(sys.path))
    reader = library / et_pte.LIBRARY_READER_DIR
    assert export_model.main([*args, "--reader", str(reader), "-o", "out"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: " + message), err
    assert err.count("\n") == 1, err  # one line
    assert sorted(p.name for p in models.iterdir()) == ["user_models.py"]


def test_writes_go_through_links_and_into_a_fifo_as_it_is(tmp_path: Path) -> None:
    import stat
    import threading

    import export_model

    (tmp_path / "real.pte").write_bytes(b"old")
    (tmp_path / "link.pte").symlink_to("real.pte")
    fifo = tmp_path / "model.h"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    export_model._write_together([(tmp_path / "link.pte", b"PTE"), (fifo, b"HEADER")])
    reader.join(timeout=60)
    assert (tmp_path / "link.pte").is_symlink() and (tmp_path / "real.pte").read_bytes() == b"PTE"
    assert got == [b"HEADER"] and stat.S_ISFIFO(fifo.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.pte", "model.h", "real.pte"]


def test_int8_of_a_dynamic_program_is_refused(
    library: Path, models: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The int8 recipe exports again at the example inputs' shapes: a saved program with a
    # dynamic batch would come out static, and its sketch's setInput with a shape refused.
    import export_model
    import torch
    from torch.export import Dim, export, save

    class Double(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * 2.0

    batch = {"x": {0: Dim("batch", min=1, max=8)}}
    save(export(Double(), (torch.ones(3, 4),), dynamic_shapes=batch), str(models / "dyn.pt2"))
    monkeypatch.chdir(models)
    reader = library / et_pte.LIBRARY_READER_DIR
    args = ["--exported", "dyn.pt2", "--quantize", "int8", "--reader", str(reader), "-o", "out"]
    assert export_model.main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --quantize int8 makes a program of static shapes, and dyn"), err
    assert "in [1, 8]" in err and err.count("\n") == 1, err
    assert sorted(p.name for p in models.iterdir()) == ["dyn.pt2", "user_models.py"]


def test_a_file_where_the_output_folder_should_be_is_refused_before_the_export(
    library: Path, models: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import export_model

    (models / "out").write_text("x")
    monkeypatch.chdir(models)
    reader = library / et_pte.LIBRARY_READER_DIR
    args = ["user_models:mlp", "--input-shape", "1x8", "--reader", str(reader), "-o", "out"]
    assert export_model.main(args) == 2
    err = capsys.readouterr().err
    assert err == "error: cannot write out/model.pte: out is a file, not a folder\n", err
    assert (models / "out").read_text() == "x"
