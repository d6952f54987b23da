"""The program reader the unit tests read `.pte` files with, made offline.

A library ships `extras/tools/pte_schema/`: flatc's Python for its schema, by the pinned
flatc, with the pinned FlatBuffers' Python runtime (generator/pipeline/reader.py). Tests cannot
fetch, so they make the same package from what is installed: the `executorch` wheel's
schema (`executorch/exir/_serialize/program.fbs`) and flatc (`executorch/data/bin/flatc`,
FlatBuffers 24.3.25, the version ExecuTorch pins), and the runtime of the PyPI `flatbuffers`
package (requirements-dev: 25.12.19; its reading API is the one 24.3.25's generated code
calls).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from generator.pipeline.reader import write_program_reader


def _package(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def wheel_flatc() -> Path | None:
    """The executorch wheel's flatc, or None."""
    package = _package("executorch")
    flatc = package / "data" / "bin" / "flatc" if package else None
    return flatc if flatc is not None and flatc.is_file() else None


def wheel_schema() -> Path | None:
    """The executorch wheel's schema folder (program.fbs, scalar_type.fbs), or None."""
    package = _package("executorch")
    folder = package / "exir" / "_serialize" if package else None
    return folder if folder is not None and (folder / "program.fbs").is_file() else None


def pypi_runtime() -> Path | None:
    """The folder of the installed `flatbuffers` package (FlatBuffers' Python runtime)."""
    return _package("flatbuffers")


@functools.cache
def _generated() -> Path:
    flatc, schema, runtime = wheel_flatc(), wheel_schema(), pypi_runtime()
    if flatc is None or schema is None:
        pytest.skip("the executorch wheel (its flatc and exir/_serialize/program.fbs) is missing")
    if runtime is None:
        pytest.skip("the flatbuffers package (requirements-dev) is not installed")
    folder = tempfile.TemporaryDirectory(prefix="wheel-reader-")
    _KEEP.append(folder)  # removed when the session ends
    return write_program_reader(flatc, schema, runtime, Path(folder.name) / "pte_schema")


_KEEP: list[tempfile.TemporaryDirectory[str]] = []


def write_wheel_reader(dest: Path) -> Path:
    """Write the program reader of the wheel's schema to `dest` (generated once a session;
    pytest.skip without the wheel or the flatbuffers package)."""
    shutil.copytree(_generated(), dest)
    return dest


def flatc_json(pte: Path, out_dir: Path) -> dict[str, Any]:
    """`pte` as JSON by the wheel's flatc (`--json --strict-json --raw-binary
    --defaults-json`): the reference the reader is compared with."""
    flatc, schema = wheel_flatc(), wheel_schema()
    if flatc is None or schema is None:
        pytest.skip("the executorch wheel (its flatc and exir/_serialize/program.fbs) is missing")
    options = ["--json", "--strict-json", "--raw-binary", "--defaults-json"]
    out_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [str(flatc), *options, "-o", str(out_dir), str(schema / "program.fbs"), "--", str(pte)],
        check=True,
        capture_output=True,
    )
    doc: dict[str, Any] = json.loads((out_dir / f"{pte.stem}.json").read_text())
    return doc


def flatc_binary(doc: dict[str, Any], out_dir: Path) -> bytes:
    """The flatbuffer the wheel's flatc writes for the JSON `doc` (no extended header), in a
    folder `out_dir` of its own."""
    flatc, schema = wheel_flatc(), wheel_schema()
    if flatc is None or schema is None:
        pytest.skip("the executorch wheel (its flatc and exir/_serialize/program.fbs) is missing")
    out_dir.mkdir(parents=True, exist_ok=True)
    source = out_dir / "program.json"
    source.write_text(json.dumps(doc))
    subprocess.run(
        [str(flatc), "--binary", "-o", str(out_dir), str(schema / "program.fbs"), str(source)],
        check=True,
        capture_output=True,
    )
    # Named with the schema's file_extension ("pte").
    (binary,) = (p for p in out_dir.glob("program.*") if p != source)
    return binary.read_bytes()
