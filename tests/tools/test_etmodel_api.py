"""ETModel's API (data/library_template/src/ETModel.h, issue 18 section 5): error names, what to
do about an error, input checks, shapes, dtypes, integer I/O, lastRunMicros(), and the
C linkage of a sketch's `et_arduino_log`.

Without ExecuTorch sources: the error-name table against error.h's enum (its names and codes at
ExecuTorch cff6f4dd32e630945b7188512c1f2b4f102b05ad, runtime/core/error.h, recorded in
tests/fixtures/executorch_error/error_codes.json), and the C++ linkage rule ExecuTorch.h relies on,
compiled with the host's g++. ETModel.h itself cannot be compiled without the runtime's headers, so
its behaviour is tested end to end (marked e2e): two sketches (tests/fixtures/etmodel_api/),
each with a model the test exports with the executorch wheel, run by `python -m generator
check` on a copy of the library built from real main, on the emulated Cortex-M33, as a
Dynamic upload file, and on the host under sanitizers; their expected.yaml lists the lines
each run must print, and the test checks the figures that differ between the 32-bit board
and the 64-bit host (arena bytes) and the time of a run.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from generator.pipeline.run import BuildResult

REPO_ROOT = Path(__file__).resolve().parents[2]
TEMPLATE_SRC = REPO_ROOT / "data" / "library_template" / "src"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ERROR_CODES = FIXTURES / "executorch_error" / "error_codes.json"
SKETCHES = FIXTURES / "etmodel_api"

_ENUMERATOR = re.compile(r"^\s*(\w+)\s*=\s*(0x[0-9a-fA-F]+|\d+)\s*,", re.MULTILINE)
_TABLE_ROW = re.compile(r'case (0x[0-9a-fA-F]+): return "(\w+)";')


def error_enum(error_h: str) -> dict[int, str]:
    """`enum class Error`'s enumerators of an ExecuTorch error.h: code -> name."""
    body = error_h.split("enum class Error", 1)[1].split("};", 1)[0]
    return {int(code, 0): name for name, code in _ENUMERATOR.findall(body)}


def etmodel_error_names(etmodel_h: str) -> dict[int, str]:
    """ETModel::errorName's table: code -> name."""
    body = etmodel_h.split("static const char* errorName(", 1)[1].split("default:", 1)[0]
    return {int(code, 0): name for code, name in _TABLE_ROW.findall(body)}


def pinned_error_codes() -> dict[int, str]:
    """error.h's enum at the pin, as recorded in tests/fixtures (code -> name)."""
    codes = json.loads(ERROR_CODES.read_text())["codes"]
    return {int(code, 0): name for code, name in codes.items()}


def test_error_names_are_error_h_enumerators() -> None:
    enum = pinned_error_codes()
    assert enum[0x21] == "MemoryAllocationFailed" and enum[0x14] == "OperatorMissing"
    assert len(enum) == 21
    assert etmodel_error_names((TEMPLATE_SRC / "ETModel.h").read_text()) == enum


def test_a_name_off_the_enum_is_caught() -> None:
    # The comparison the test above makes, on a table with one row wrong.
    source = (TEMPLATE_SRC / "ETModel.h").read_text()
    broken = source.replace('case 0x23: return "InvalidProgram";', 'case 0x23: return "Bad";')
    assert broken != source
    assert etmodel_error_names(broken) != pinned_error_codes()


def _log_declaration() -> str:
    source = (TEMPLATE_SRC / "ExecuTorch.h").read_text()
    found = re.search(r'^extern "C" void et_arduino_log\(const char\* \w+\);$', source, re.M)
    assert found, 'ExecuTorch.h declares no extern "C" et_arduino_log'
    return found.group(0)


def _defined_symbols(source: str, tmp_path: Path) -> set[str]:
    compiler, nm = shutil.which("g++"), shutil.which("nm")
    if compiler is None or nm is None:
        pytest.skip("needs the host's g++ and nm")
    unit = tmp_path / "sketch.cpp"
    unit.write_text(source)
    obj = tmp_path / "sketch.o"
    subprocess.run([compiler, "-c", str(unit), "-o", str(obj)], check=True)
    listing = subprocess.run(
        [nm, "--defined-only", str(obj)], check=True, capture_output=True, text=True
    ).stdout
    return {line.split()[-1] for line in listing.splitlines() if line.strip()}


def test_a_sketch_log_without_extern_c_gets_the_c_name(tmp_path: Path) -> None:
    # A definition after an extern "C" declaration has C linkage ([dcl.link]): the
    # unmangled name the platform layer calls and its weak default would otherwise keep.
    definition = "void et_arduino_log(const char* line) { (void)line; }\n"
    with_header = _defined_symbols(_log_declaration() + "\n" + definition, tmp_path)
    assert "et_arduino_log" in with_header
    alone = _defined_symbols(definition, tmp_path)
    assert "et_arduino_log" not in alone and "_Z14et_arduino_logPKc" in alone


# -- end to end: the sketches on a library built from real main ---------------------------


def _exporter_unavailable() -> str | None:
    for module in ("torch", "executorch.exir"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed: the test exports its models with it"
    return None


def export_models(out: Path) -> dict[str, tuple[Path, list[int]]]:
    """Export the three test models with the executorch wheel (no quantizer, no delegate).

    ApiFloat: x * y + y, x and y float [2, 3]. ApiInt8: (q + q, u + u), q int8 [4],
    u uint8 [4]. ApiDynamic: x * 2 + 1, x float [batch, 3] with a dynamic batch of 1 to 4
    (torch.export's Dim; its planned input is the largest, [4, 3]).
    Returns sketch name -> (.pte path, the method's memory plan: bytes of
    each planned buffer, the exporter's `non_const_buffer_sizes` without its reserved
    entry 0).
    """
    import torch
    from torch.export import Dim, export

    to_edge = importlib.import_module("executorch.exir").to_edge  # untyped: no stubs

    class Float(torch.nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return x * y + y

    class Int8(torch.nn.Module):
        def forward(self, q: torch.Tensor, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return q + q, u + u

    class Dynamic(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * 2.0 + 1.0

    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    y = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -2.0]])
    q = torch.tensor([1, -2, 30, -60], dtype=torch.int8)
    u = torch.tensor([3, 100, 7, 120], dtype=torch.uint8)
    # The values the sketches' expected.yaml holds.
    assert (Float()(x, y).flatten().tolist()) == [1.0, -3.0, 8.0, 7.5, 1.5, -14.0]
    assert Int8()(q, u)[0].tolist() == [2, -4, 60, -120]
    assert Int8()(q, u)[1].tolist() == [6, 200, 14, 240]
    models: dict[str, tuple[Path, list[int]]] = {}
    batch = {"x": {0: Dim("batch", min=1, max=4)}}
    exports = (
        ("ApiFloat", Float(), (x, y), None),
        ("ApiInt8", Int8(), (q, u), None),
        ("ApiDynamic", Dynamic(), (torch.ones(3, 3),), batch),
    )
    for name, module, args, dynamic_shapes in exports:
        program = to_edge(export(module, args, dynamic_shapes=dynamic_shapes)).to_executorch()
        pte = out / f"{name}.pte"
        pte.write_bytes(program.buffer)
        plan = program.executorch_program.execution_plan[0].non_const_buffer_sizes
        models[name] = (pte, [int(size) for size in plan[1:]])
    return models


def _runs(report: dict[str, Any], example: str) -> dict[str, list[str]]:
    (found,) = [e for e in report["examples"] if e["example"] == example]
    return {run["kind"]: run["last_lines"] for run in found["runs"]}


def _number(lines: list[str], pattern: str) -> int:
    (match,) = [m for line in lines if (m := re.fullmatch(pattern, line.strip()))]
    return int(match.group(1))


@pytest.mark.e2e
def test_etmodel_api_on_the_board_and_the_host(real_main: BuildResult, tmp_path: Path) -> None:
    reason = _exporter_unavailable()
    if reason:
        pytest.skip(reason)
    lib = tmp_path / "ExecuTorch"
    shutil.copytree(real_main.out, lib)
    # The library's own error.h, at the ref it was built from, has the table's enumerators.
    library_enum = error_enum((lib / "src/executorch/runtime/core/error.h").read_text())
    assert etmodel_error_names((lib / "src/ETModel.h").read_text()) == library_enum

    models = export_models(tmp_path)
    for name, (pte, _) in models.items():
        folder = lib / "examples" / name
        shutil.copytree(SKETCHES / name, folder)
        subprocess.run(
            [sys.executable, str(lib / "extras/tools/pte_to_header.py"), str(pte), "-o",
             str(folder / "model.h")],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
    report_file = tmp_path / "report.json"
    check = subprocess.run(
        [sys.executable, "-m", "generator", "check", str(lib), "--compiler", "gcc-arm",
         "--example", ",".join(models), "--json", str(report_file)],
        cwd=REPO_ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert check.returncode == 0, check.stdout[-6000:] + check.stderr[-2000:]
    report = json.loads(report_file.read_text())

    plan = models["ApiFloat"][1]
    assert plan, "the exporter planned no memory for ApiFloat"
    runs = _runs(report, "ApiFloat")
    assert set(runs) == {"emulated", "dynamic", "host"}, runs.keys()
    for kind, lines in runs.items():
        used = _number(lines, r"arena used (\d+)")
        # An arena 8 bytes short: load_method's first refused allocation names a need
        # above the arena and no more than what the model used (plus one alignment).
        short = _number(
            lines,
            rf"begin short: false; load_method: MemoryAllocationFailed \(0x21\): the "
            rf"{used - 8}-byte arena is too small, needs at least (\d+) B "
            r"\(model\.h: \*_arena_bytes\)",
        )
        assert used - 8 < short <= used + 16, (kind, used, short)
        # 16 bytes: the memory plan alone does not fit; it needs its buffers and their
        # table (a Span each: pointer and size, 8 bytes on the board, 16 on the host).
        tiny = _number(
            lines,
            r"begin tiny: false; begin: MemoryAllocationFailed \(0x21\): the 16-byte arena "
            r"is too small, needs at least (\d+) B \(model\.h: \*_arena_bytes\)",
        )
        span = 16 if kind == "host" else 8
        assert tiny == sum(plan) + span * len(plan), (kind, tiny, plan)
        assert _number(lines, r"Inference: (\d+) us") > 0, kind
    assert _runs(report, "ApiInt8")["emulated"][-1] == "=== DONE ==="
    dynamic = _runs(report, "ApiDynamic")
    assert set(dynamic) == {"emulated", "dynamic", "host"}, dynamic.keys()
    for kind, lines in dynamic.items():
        assert "output [1,3] = 3.0 5.0 7.0" in [line.strip() for line in lines], kind


def test_lastrunmicros_reads_the_platform_layers_ticks_as_microseconds() -> None:
    # ETModel::run() takes the difference of two et_pal_current_ticks() as microseconds:
    # true of the library's one platform layer, which counts micros() and says 1000 ns a tick.
    pal = (TEMPLATE_SRC / "executorch/runtime/platform/default/arduino_pal.cpp").read_text()
    ticks = pal.split("et_timestamp_t et_pal_current_ticks(void) {", 1)[1].split("\n}", 1)[0]
    assert "micros()" in ticks
    ratio = pal.split("et_tick_ratio_t et_pal_ticks_to_ns_multiplier(void) {", 1)[1]
    assert ratio.split("\n}", 1)[0].strip() == "return {1000, 1};"
    etmodel = (TEMPLATE_SRC / "ETModel.h").read_text()
    assert "last_run_us_ = static_cast<unsigned long>(end - start);" in etmodel


def test_etmodel_asks_the_fallback_flag_by_the_name_selection_defines() -> None:
    # The OperatorMissing message says that no model.h selects kernels when the library's
    # fallback ran: ETModel.h declares the function KernelSelection.cpp defines.
    from generator.pipeline.selection import FELL_BACK_SYMBOL

    etmodel = (TEMPLATE_SRC / "ETModel.h").read_text()
    assert f'extern "C" bool {FELL_BACK_SYMBOL}(void);' in etmodel
    assert f"{FELL_BACK_SYMBOL}()) {{" in etmodel
    assert "model.h selects no kernels" in etmodel


@pytest.mark.e2e
def test_executorch_h_alone_gives_the_whole_sketch_api(
    real_main: BuildResult, tmp_path: Path
) -> None:
    # The header library.properties names (and the IDE's Include Library inserts): a sketch
    # including only it got "'ETModel' does not name a type" (issue 31).
    compiler = shutil.which("g++")
    if compiler is None:
        pytest.skip("needs the host's g++")
    unit = tmp_path / "sketch.cpp"
    unit.write_text(
        "#include <ExecuTorch.h>\nETModel* model = nullptr;\n"
        "int main() { return model == nullptr ? 0 : 1; }\n"
    )
    argv = [compiler, "-std=gnu++17", "-fsyntax-only", f"-I{real_main.out / 'src'}", str(unit)]
    compiled = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert compiled.returncode == 0, compiled.stderr
    # ETModel.h on its own still works too.
    unit.write_text("#include <ETModel.h>\nETModel* model = nullptr;\nint main() { return 0; }\n")
    compiled = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert compiled.returncode == 0, compiled.stderr
