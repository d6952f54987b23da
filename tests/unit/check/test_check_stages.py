"""`check` end to end (`run_check`): a tiny library passes every stage (compile, sizes, run,
sanitize, arena); which examples and sources are checked, and a library with nothing to
check or an unchecked model fails; the toolchain `auto` picks.

Every library and sketch here is written by the test into tmp_path (check_fixtures.py); no
ExecuTorch sources are needed. Objects are shared through one cache per test session (the
`cache_dir` fixture of conftest.py).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import textwrap
from pathlib import Path

import pytest
from check_fixtures import HELLO_EXPECTED, HELLO_SKETCH, needs_tools, write_library

from generator.boards.budgets import UNO_Q
from generator.check.backends import GCC_ARM, select_toolchain
from generator.check.compile import plan_build
from generator.check.run import run_check
from generator.check.stages import Status
from generator.util.errors import FatalError

pytestmark = needs_tools


def test_tiny_library_passes_every_stage(tmp_path: Path, cache_dir: Path) -> None:
    lib = write_library(tmp_path / "Tiny", {"Hello": (HELLO_SKETCH, HELLO_EXPECTED)})
    report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir)

    assert report.passed, report.to_markdown()
    assert report.toolchain == "gcc-arm"
    assert report.model_check is None  # no example carries a model.h
    (example,) = report.examples
    status = {s.stage: s.status for s in example.stages}
    assert status == {
        "compile": Status.PASS,
        "sizes": Status.PASS,
        "dynamic": Status.PASS,
        "run": Status.PASS,
        "dynamic-run": Status.PASS,
        "sanitize": Status.PASS,
        "arena": Status.SKIP,  # this sketch declares no arena
    }
    # Real sizes of a small sketch: no printf is linked, so a few KB of flash; RAM is
    # the library's 4096-byte pool and little else.
    assert example.sizes is not None
    assert 2_000 < example.sizes.flash < 20_000
    assert 4096 < example.sizes.ram < 5_000
    assert example.sizes.flash == example.sizes.text + example.sizes.data  # type: ignore[operator]
    assert example.sizes.flash_max == UNO_Q.flash_bytes == 786_432
    assert example.sizes.ram_max == UNO_Q.ram_bytes == 262_144
    assert example.sizes.flash_percent == example.sizes.flash * 100 // 786_432
    # The Dynamic link (a loadable extension) holds the sketch, the library and what they
    # call of the core; its upload file (the flash figure) also carries symbols and
    # relocations, which the board's loader reads in place, so it is larger than what the
    # loader takes from its heap; the pool of 4096 bytes is in its bss, which the heap holds.
    dyn = example.dynamic
    assert dyn is not None and dyn.pinned is not None and dyn.pinned.loaded
    assert dyn.pinned.peak_bytes is not None
    assert 4096 < dyn.ram == dyn.pinned.peak_bytes < dyn.flash < 40_000
    emulated, dynamic, host = example.runs
    assert (emulated.kind, dynamic.kind, host.kind) == ("emulated", "dynamic", "host")
    # 32-bit on the emulated Cortex-M33, 64-bit on the host; the Dynamic upload file, placed
    # by the loader model in the emulated Dynamic firmware, prints what the static one does.
    assert "bytes 4" in emulated.lines and "bytes 8" in host.lines
    assert dynamic.lines == emulated.lines
    assert emulated.done and dynamic.done and host.done

    data = report.to_dict()
    assert data["passed"] is True
    assert data["examples"][0]["sizes"]["flash"] == example.sizes.flash
    markdown = report.to_markdown()
    assert "## Library check: ✅ passed" in markdown
    assert f"{example.sizes.flash:,} B" in markdown


def test_a_library_without_examples_fails(tmp_path: Path, cache_dir: Path) -> None:
    lib = write_library(tmp_path / "Tiny", {})
    (lib / "examples").mkdir()
    with pytest.raises(FatalError, match="holds no example: nothing would be checked"):
        run_check(lib, compiler="gcc-arm", cache_dir=cache_dir)


def test_an_example_without_its_ino_fails(tmp_path: Path, cache_dir: Path) -> None:
    lib = write_library(tmp_path / "Tiny", {"Hello": (HELLO_SKETCH, HELLO_EXPECTED)})
    other = lib / "examples" / "AddModel"
    other.mkdir()
    (other / "Other.ino").write_text(HELLO_SKETCH)
    (other / "expected.yaml").write_text(HELLO_EXPECTED)
    report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir, run=False)
    assert not report.passed
    assert [e.name for e in report.examples] == ["Hello"]
    assert report.examples[0].passed
    assert report.errors[0].startswith("examples/AddModel has no AddModel.ino (it holds Other.ino)")
    assert "AddModel has no AddModel.ino" in report.to_markdown()
    # Asked for by name, it fails the same way.
    only = run_check(lib, examples=["AddModel"], compiler="gcc-arm", cache_dir=cache_dir)
    assert not only.passed and only.examples == []


def test_a_sketch_using_a_model_without_model_h_fails_the_model_check(
    tmp_path: Path, cache_dir: Path
) -> None:
    sketch = textwrap.dedent(
        """\
        #include "add_model.h"
        void setup() { Serial.println((int)sizeof(model_pte)); Serial.println("=== DONE ==="); }
        void loop() {}
        """
    )
    lib = write_library(tmp_path / "Tiny", {"Net": (sketch, 'must_print: ["4"]\n')})
    (lib / "examples/Net/add_model.h").write_text("const unsigned char model_pte[4] = {1};\n")
    report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir)
    assert report.examples[0].passed  # it builds and runs: only the model is unchecked
    assert not report.passed
    assert report.errors == [
        "model check: examples/Net has no model.h, so its model cannot be checked (the "
        "sketch uses `model_pte`, or it is a standard example); the generated header must "
        "be named model.h"
    ]


def test_hidden_and_vcs_folders_are_not_compiled(tmp_path: Path, cache_dir: Path) -> None:
    lib = write_library(tmp_path / "Tiny", {"Hello": (HELLO_SKETCH, HELLO_EXPECTED)})
    broken = "#error this file is not part of the build\n"
    for rel in (
        "src/.hidden.c",
        "src/.cache/x.cpp",
        "src/CVS/y.c",
        "src/.git/z.cpp",
        "src/util/.svn/w.c",
        "examples/Hello/.backup.cpp",
        "examples/Hello/.Hello.ino",
        "examples/Hello/src/.git/v.cpp",
    ):
        (lib / rel).parent.mkdir(parents=True, exist_ok=True)
        (lib / rel).write_text(broken)
    (lib / "examples/.git").mkdir()
    plan = plan_build(lib, "Hello")
    assert [p.as_posix() for p in plan.library_sources] == ["src/Tiny.cpp", "src/calc.c"]
    assert plan.sketch_sources == ()
    assert [p.as_posix() for p in plan.ino_files] == ["examples/Hello/Hello.ino"]
    report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir, run=False)
    assert report.passed, report.to_markdown()
    assert [e.name for e in report.examples] == ["Hello"]


@pytest.mark.skipif(shutil.which("arduino-cli") is not None, reason="arduino-cli is installed")
def test_auto_is_gcc_arm_without_arduino_cli() -> None:
    assert select_toolchain("auto") is GCC_ARM
    with pytest.raises(FatalError, match="arduino-cli is not installed"):
        select_toolchain("arduino-cli")
    with pytest.raises(FatalError, match="unknown compiler 'clang'"):
        select_toolchain("clang")


def test_arduino_cli_compiles_with_the_fqbn_and_default_warnings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The argv arduino-cli gets: the board's FQBN, the library, and `--warnings default` (the
    live executorch-arduino CI's; arduino-cli's own default shows none)."""
    from generator.check.backends import ArduinoCli
    from generator.check.plan import BuildPlan

    record = tmp_path / "argv"
    stub = tmp_path / "bin" / "arduino-cli"
    stub.parent.mkdir()
    stub.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{record}"\necho arduino:zephyr\n')
    stub.chmod(0o755)
    monkeypatch.setenv("PATH", f"{stub.parent}:{os.environ['PATH']}")
    monkeypatch.setattr(ArduinoCli, "missing", lambda self: None)
    plan = BuildPlan(tmp_path, "AddModel", Path("examples/AddModel"), (), (), ())
    built = ArduinoCli().build(plan, tmp_path / "out", None)  # type: ignore[arg-type]
    argv = record.read_text().splitlines()
    assert argv[:3] == ["compile", "--fqbn", "arduino:zephyr:unoq:link_mode=static"]
    assert argv[argv.index("--warnings") + 1] == "default"
    assert argv[-1] == str(tmp_path / "examples/AddModel")
    assert not built.ok  # the stub wrote no ELF


_VERBOSE = (
    "/opt/arm-zephyr-eabi-g++ -c -Os -DARDUINO=10607 -D{macro} -DARDUINO_ARCH_ZEPHYR "
    "-DARDUINO_ARCH_ZEPHYR x.cpp -o x.cpp.o\n"
    "Sketch uses 40420 bytes (70%) of program storage space. Maximum is 57344 bytes.\n"
)


@pytest.mark.parametrize(
    ("macro", "wrong"), [("ARDUINO_FRDM_MCXN947", False), ("ARDUINO_frdm_mcxn947", True)]
)
def test_arduino_cli_must_define_the_board_macro_the_table_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, macro: str, wrong: bool
) -> None:
    """A core whose boards.txt spells build.board otherwise would leave the compact runtime
    and the board-fit #error off without a word: the build fails naming both macros."""
    from generator.boards.budgets import UNO_Q, check_boards
    from generator.check.backends import ArduinoCli, board_macro_error
    from generator.check.plan import BuildPlan

    frdm = check_boards()["frdm_mcxn947"]
    stub = tmp_path / "bin" / "arduino-cli"
    stub.parent.mkdir()
    (tmp_path / "verbose.txt").write_text(_VERBOSE.format(macro=macro))
    stub.write_text(f'#!/bin/sh\ncat "{tmp_path / "verbose.txt"}"\n')
    stub.chmod(0o755)
    monkeypatch.setenv("PATH", f"{stub.parent}:{os.environ['PATH']}")
    monkeypatch.setattr(ArduinoCli, "missing", lambda self: None)
    plan = BuildPlan(tmp_path, "AddModel", Path("examples/AddModel"), (), (), ())
    built = ArduinoCli(frdm).build(plan, tmp_path / "out", None)  # type: ignore[arg-type]
    assert not built.ok  # the stub wrote no ELF
    assert "-DARDUINO_ARCH_ZEPHYR" not in built.log  # the compile lines are left out
    assert "Sketch uses 40420 bytes" in built.log
    message = (
        "arduino-cli compiled for the NXP FRDM MCXN947 with -DARDUINO_frdm_mcxn947, not "
        "-DARDUINO_FRDM_MCXN947, the macro generator/boards/budgets.py has for it"
    )
    assert built.log.startswith(message) == wrong
    # No compile line printed (nothing to read), or a board without a macro: nothing said.
    assert board_macro_error(frdm, "Sketch uses 1 bytes\n") is None
    assert board_macro_error(dataclasses.replace(frdm, macro=""), _VERBOSE) is None
    assert board_macro_error(UNO_Q, _VERBOSE.format(macro="ARDUINO_UNOQ")) is None
