"""The generator installs as a Python package: a wheel, installed into a fresh venv, builds from
outside the checkout the same library tree as `python -m generator` in the checkout.

The wheel is built from a copy of the checkout (a build writes `build/` and an `.egg-info` beside
its sources). The venv sees the system site-packages (torch, jinja2, ...), but its own
site-packages come first, so its `generator` is ours even where a PyPI package also ships a
top-level `generator` (tosa-tools does).
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from et_fixture import Upstream

from generator import DATA_FOLDERS

REPO_ROOT = Path(__file__).resolve().parents[2]
_NOT_SOURCES = shutil.ignore_patterns(
    ".git", "node_modules", "*.egg-info", "__pycache__", "*.pyc", ".*_cache"
)
#: Of the root only: the build's output folder and the tests.
_NOT_SOURCES_AT_ROOT = frozenset({"build", "tests"})


def not_sources(folder: str, names: list[str]) -> set[str]:
    """What `shutil.copytree` leaves out of the copy the wheel is built from: not sources of
    the package."""
    ignored = set(_NOT_SOURCES(folder, names))
    if Path(folder) == REPO_ROOT:
        ignored |= _NOT_SOURCES_AT_ROOT & set(names)
    return ignored


def run(argv: list[str | Path], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"{argv} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def files_under(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the generator's wheel installed (no dependencies: those are the
    system's)."""
    tmp = tmp_path_factory.mktemp("install")
    source = tmp / "source"
    shutil.copytree(REPO_ROOT, source, ignore=not_sources)
    wheels = tmp / "wheels"
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            wheels,
            ".",
        ],
        cwd=source,
    )
    (wheel,) = wheels.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    modules = {
        p.relative_to(REPO_ROOT).as_posix()
        for p in (REPO_ROOT / "generator").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert sorted(modules - set(names)) == [], "modules missing from the wheel (pyproject.toml)"
    for data in DATA_FOLDERS:
        shipped = {n.split("/", 3)[3] for n in names if n.startswith(f"generator/_data/{data}/")}
        sources = {f for f in files_under(REPO_ROOT / "data" / data) if "__pycache__" not in f}
        assert shipped == sources, data
    prefix = tmp / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", prefix], tmp)
    python = prefix / "bin" / "python"
    # The system's pip, run by the venv's python, installs into the venv.
    run([python, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", wheel], tmp)
    return prefix


def test_installed_cli_builds_the_same_library(
    tmp_path: Path, upstream: Upstream, venv: Path
) -> None:
    outside = tmp_path / "elsewhere"  # not the checkout: the repo must not be on sys.path
    outside.mkdir()
    env = {**os.environ, "PYTHONSAFEPATH": "1"}
    env.pop("PYTHONPATH", None)
    where = run(
        [venv / "bin/python", "-c", "import generator; print(generator.__file__)"], outside, env
    )
    assert Path(where.strip()).is_relative_to(venv), where

    cache: list[str | Path] = ["--cache-dir", tmp_path / "cache"]
    run(
        [venv / "bin/executorch-arduino", "build", "--out", tmp_path / "installed", *cache],
        outside,
        env,
    )
    run(
        [sys.executable, "-m", "generator", "build", "--out", tmp_path / "checkout", *cache],
        REPO_ROOT,
    )
    installed, checkout = tmp_path / "installed", tmp_path / "checkout"
    assert "library.properties" in files_under(installed)
    assert files_under(installed) == files_under(checkout)
    _, mismatch, errors = filecmp.cmpfiles(
        installed, checkout, files_under(installed), shallow=False
    )
    assert mismatch == [] and errors == []


def test_installed_check_finds_its_core(tmp_path: Path, venv: Path) -> None:
    # The check's core: ArduinoCore-API (data/vendored/arduinocore-api/, package data of
    # generator._data.vendored) and our board half (data/emulated_core/).
    env = {**os.environ, "PYTHONSAFEPATH": "1"}
    env.pop("PYTHONPATH", None)
    code = (
        "import json; from generator.toolchain import gcc; "
        "print(json.dumps([str(p) for p in (*gcc.CORE_INCLUDES, *gcc.CORE_SOURCES)]))"
    )
    paths = [Path(p) for p in json.loads(run([venv / "bin/python", "-c", code], tmp_path, env))]
    api = next(p for p in paths if p.name == "arduinocore-api")
    assert api.relative_to(venv).parts[-4:] == ("generator", "_data", "vendored", api.name)
    assert all(p.is_relative_to(venv) and p.exists() for p in paths), paths
    assert (api / "api" / "ArduinoAPI.h").is_file() and (api / "LICENSE").is_file()
