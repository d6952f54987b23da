"""End to end: generate the library from real ExecuTorch and hold it to the issue's claims.

Runs when the upstream URLs resolve (GitHub, or mirrors through insteadOf); skips otherwise.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from et_fixture import FIXTURE_PTE
from upstream import PUBLISHED_PIN, real_library

from generator.check.backends import GCC_ARM
from generator.check.compile import plan_build
from generator.library.layout import CODEGEN_DIR, PLATFORM_DIR
from generator.pipeline.codegen import count_kernels
from generator.pipeline.default_ops import DEFAULT_ROOT_OPS
from generator.pipeline.run import BuildResult
from generator.toolchain.gcc import CORE_INCLUDES
from generator.toolchain.objcache import CompileJob, ObjectCache
from generator.util.cache import objects_dir
from generator.util.errors import FatalError
from generator.util.urls import DEFAULT_EXECUTORCH_REPO
from generator.vcs.checkout import checkout

pytestmark = pytest.mark.e2e

#: The issue's compile flags (the check's gcc-arm flags add -ffunction-sections/-fdata-sections).
ISSUE_FLAGS = ("-mcpu=cortex-m33", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16", "-Os")


def _files(lib: Path) -> list[str]:
    return sorted(p.relative_to(lib).as_posix() for p in lib.rglob("*") if p.is_file())


def _assert_library(result: BuildResult) -> None:
    lib = result.out
    files = _files(lib)
    platform = [f for f in files if f.startswith(PLATFORM_DIR + "/") and f.endswith((".c", ".cpp"))]
    assert platform == [f"{PLATFORM_DIR}/arduino_pal.cpp"]
    kernels = count_kernels(lib / CODEGEN_DIR)
    assert sorted(kernels) == sorted(result.op_set) and len(kernels) == result.kernel_count
    assert set(DEFAULT_ROOT_OPS) <= set(kernels)
    assert any(k.startswith("cortex_m::") for k in kernels)
    # Every op_*.cpp shipped is registered: its kernel function is named in the registration.
    registration = "".join(
        p.read_text() for p in sorted((lib / CODEGEN_DIR).glob("RegisterKernelsByOperator.cpp"))
    )
    shipped = [f for f in files if re.search(r"/(cpu_)?op_[^/]+\.cpp$", f)]  # cpu_: renamed
    assert len(shipped) == result.op_sources + sum("cortex_m" in f for f in shipped)
    for op_file in shipped:
        text = (lib / op_file).read_text()
        # Kernel functions end in _out, or _values (topk's `topk_values`, functions.yaml).
        defined = set(re.findall(r"(?:[&>]|\bvoid)\s*(\w+_(?:out|values))\s*\(", text))
        defined |= set(re.findall(r"\(\s*(\w+_(?:out|values))\s*,", text))
        assert any(f"{name}(" in registration for name in defined), op_file
    assert not [f for f in files if f.endswith("_aten.cpp") and not f.endswith("_exec_aten.cpp")]
    assert not [f for f in files if re.search(r"(^|/)(test|tests|testing|testing_util)/", f)]
    assert not [f for f in files if re.search(r"(^|/)(test_[^/]*|[^/]*_test)\.(c|cpp)$", f)]
    assert not [f for f in files if f.endswith((".pte", ".pth"))]
    for license_file in (
        "LICENSE",
        "extras/THIRD_PARTY_LICENSES/CMSIS-NN-LICENSE.txt",
        "extras/THIRD_PARTY_LICENSES/FlatBuffers-LICENSE.txt",
        "extras/THIRD_PARTY_LICENSES/flatcc-LICENSE.txt",
        "extras/THIRD_PARTY_LICENSES/README.md",
    ):
        assert (lib / license_file).stat().st_size > 200, license_file
    assert (lib / "executorch_pin.txt").read_text() == result.sha + "\n"
    assert re.fullmatch(r"[0-9a-f]{40}", result.sha)


def _compile_everything(lib: Path) -> list[str]:
    """Compile every .c/.cpp under src/ for the Cortex-M33 with only src/ and the core's headers."""
    cache = ObjectCache(objects_dir(None))
    jobs = []
    for source in sorted(p for p in (lib / "src").rglob("*") if p.suffix in (".c", ".cpp")):
        rel = source.relative_to(lib).as_posix()
        argv = GCC_ARM.compile_argv(rel, ("src", *(str(p) for p in CORE_INCLUDES)))
        assert all(flag in argv for flag in ISSUE_FLAGS)
        jobs.append(CompileJob(argv, rel, lib))
    assert (
        len(jobs) > 90
    )  # what the shipped code links (generator/pipeline/prune.py prunes the rest)
    return [f"{o.job.source}:\n{o.log}" for o in cache.compile_all(jobs) if o.object is None]


def test_main_library(real_main: BuildResult) -> None:
    _assert_library(real_main)
    assert real_main.ref == "main"
    assert (real_main.out / "examples/KeywordSpotting/mfcc_yes.h").is_file()


def test_published_commit_library(real_published: BuildResult) -> None:
    _assert_library(real_published)
    assert real_published.sha.startswith(PUBLISHED_PIN)
    assert real_published.library_version == "1.5.0"


def test_main_compiles_for_cortex_m33(real_main: BuildResult) -> None:
    assert _compile_everything(real_main.out) == []


def test_published_commit_compiles_for_cortex_m33(real_published: BuildResult) -> None:
    assert _compile_everything(real_published.out) == []


def test_v1_4_1_needs_models(e2e_root: Path) -> None:
    with pytest.raises(FatalError) as info:
        real_library(e2e_root, "v1.4.1")
    message = str(info.value)
    assert "HelloExecuTorch, AddModel, KeywordSpotting" in message
    assert "--example-pte NAME=FILE" in message
    pte = FIXTURE_PTE / "AddModel.pte"
    result = real_library(
        e2e_root,
        "v1.4.1",
        examples=("HelloExecuTorch", "AddModel"),
        example_pte=(("AddModel", pte), ("HelloExecuTorch", pte)),
    )
    assert result.library_version == "1.4.1"
    assert sorted(p.name for p in (result.out / "examples").iterdir()) == [
        "AddModel",
        "HelloExecuTorch",
    ]
    _assert_library(result)


def test_published_sketches_compile_unchanged(real_main: BuildResult, tmp_path: Path) -> None:
    """Sketches written for the published 0.2.0 library compile against ours, unchanged."""
    published = checkout(
        DEFAULT_EXECUTORCH_REPO, PUBLISHED_PIN, ["examples/arduino/examples"], tmp_path / "c"
    )
    lib = tmp_path / "ExecuTorch"
    shutil.copytree(real_main.out, lib)
    cache = ObjectCache(objects_dir(None))
    for name in ("HelloExecuTorch", "AddModel", "KeywordSpotting"):
        sketch = published.path / "examples/arduino/examples" / name / f"{name}.ino"
        shutil.copyfile(sketch, lib / "examples" / name / f"{name}.ino")
        build = GCC_ARM.build(plan_build(lib, name), tmp_path / "out" / name, cache)
        assert build.ok, f"{name}:\n{build.log[-3000:]}"
