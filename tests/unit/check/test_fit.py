"""Examples that cannot fit a board say so and stop at compile time there (issue 19;
generator/pipeline/fit.py).

- the build writes each sketch's board-fit block from the model.h it ships: KeywordSpotting
  (the committed program of ExecuTorch cff6f4dd: a 30,150 B arena on a 32-bit board) gets an
  #error for each board with less RAM for a sketch (the Nicla Sense ME's 15,360 B, the UNO R4
  WiFi's 16,384 B), none for the UNO Q; AddModel (359 B) fits every board;
- the block, compiled by the host's g++, stops with its message under the board's macro and
  passes without it;
- the check compiles for a board with its macro (gcc-arm: `-DARDUINO_<build.board>`, not for
  the UNO Q, whose compile line stays as it was) and judges that refusal a pass of the
  compile stage with its verdict, the other stages skipped; a sketch that compiles where it
  should refuse, or fails for another reason, fails it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import et_model_h
import pytest
from et_fixture import FIXTURE_PTE
from reader_fixture import write_wheel_reader

from generator.boards.budgets import UNO_Q, ZEPHYR_BOARDS
from generator.check.backends import GCC_ARM, Build, select_toolchain
from generator.check.compile import (
    REFUSED,
    after_refusal,
    compile_example,
    expected_refusal,
    judge_refusal,
)
from generator.check.plan import BuildPlan, plan_build
from generator.check.run import _check_example
from generator.check.stages import Status
from generator.pipeline import fit
from generator.pipeline.examples import TEMPLATE_EXAMPLES, ExamplePlan, write_examples
from generator.toolchain.gcc import ARDUINO_DEFINES
from generator.toolchain.objcache import ObjectCache

KWS = "KeywordSpotting"
R4_MESSAGE = (
    "KeywordSpotting does not fit the Arduino UNO R4 WiFi: its model plans a 30,150 B arena "
    "and the board has 16,384 B of RAM for a sketch; pick a board with more RAM (see README, "
    "Boards)"
)
NICLA_MESSAGE = (
    "KeywordSpotting does not fit the Arduino Nicla Sense ME: its model plans a 30,150 B arena "
    "and the board has 15,360 B of RAM for a sketch; pick a board with more RAM (see README, "
    "Boards)"
)


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A library folder with the three examples as the build writes them, from the
    committed programs (HelloExecuTorch and AddModel share AddModel.pte, as at cff6f4dd)."""
    root = tmp_path_factory.mktemp("fit")
    reader = write_wheel_reader(root / "pte_schema")
    lib = root / "ExecuTorch"
    (lib / "src").mkdir(parents=True)
    ref = root / "ref"  # no MFCC files: not needed to write the sketches
    ref.mkdir()
    plans = [
        ExamplePlan("HelloExecuTorch", FIXTURE_PTE / "AddModel.pte", "fixture"),
        ExamplePlan("AddModel", FIXTURE_PTE / "AddModel.pte", "fixture"),
        ExamplePlan(KWS, FIXTURE_PTE / "KeywordSpotting.pte", "fixture"),
    ]
    write_examples(ref, lib, plans, reader)
    return lib


def _sketch(library: Path, name: str) -> str:
    return (library / "examples" / name / f"{name}.ino").read_text(encoding="utf-8")


def _block(sketch: str) -> str:
    start = sketch.index(fit.BEGIN)
    return sketch[start : sketch.index(fit.END, start) + len(fit.END)] + "\n"


def test_keyword_spotting_refuses_each_board_its_arena_exceeds(library: Path) -> None:
    header = (library / "examples" / KWS / "model.h").read_text()
    assert fit.arena_bytes(header) == 30_150
    sketch = _sketch(library, KWS)
    small = [key for key, b in ZEPHYR_BOARDS.items() if (b.ram_bytes or 0) < 30_150]
    assert small == ["nicla_sense", "unor4wifi"]
    assert re.findall(r"^#(?:el)?if defined\((\w+)\)$", sketch, re.MULTILINE) == [
        "ARDUINO_NICLA_SENSE_ME",
        "ARDUINO_ARDUINO_UNO_R4_WIFI",
    ]
    assert f'#if defined(ARDUINO_NICLA_SENSE_ME)\n#error "{NICLA_MESSAGE}"\n' in sketch
    assert f'#elif defined(ARDUINO_ARDUINO_UNO_R4_WIFI)\n#error "{R4_MESSAGE}"\n#endif\n' in sketch
    assert "UNO_Q" not in sketch and "Arduino UNO Q" not in sketch
    assert (
        "// Does not fit: the Arduino Nicla Sense ME (15,360 B of RAM for a sketch)\n"
        "// and the Arduino UNO R4 WiFi (16,384 B of RAM for a sketch). Its model\n"
        "// plans a 30,150 B arena (model_pte_arena_bytes in model.h, on a 32-bit\n"
    ) in sketch
    # The block sits in the header, before the sketch includes anything.
    assert sketch.index(fit.END) < sketch.index("#include <ETModel.h>")


def test_add_model_fits_every_board_and_hello_has_no_block(library: Path) -> None:
    block = _block(_sketch(library, "AddModel"))
    assert "#error" not in block
    assert "its model plans a 359 B arena" in block
    assert "(15,360 B, the Arduino Nicla Sense ME)" in block
    hello = _sketch(library, "HelloExecuTorch")
    assert hello == (TEMPLATE_EXAMPLES / "HelloExecuTorch" / "HelloExecuTorch.ino").read_text()
    assert fit.BEGIN not in hello


def test_the_block_is_written_the_same_way_every_time(library: Path) -> None:
    sketch = _sketch(library, KWS)
    template = (TEMPLATE_EXAMPLES / KWS / f"{KWS}.ino").read_text()
    assert fit.render_fit(template, KWS, 30_150) == sketch
    assert fit.render_fit(sketch, KWS, 30_150) == sketch  # rewriting a written block
    # Outside the block the sketch is the template's.
    assert sketch.replace(_block(sketch), "") == template.replace(_block(template), "")


needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")


@needs_gxx
def test_the_block_stops_the_compile_on_the_board_and_only_there(
    library: Path, tmp_path: Path
) -> None:
    source = tmp_path / "block.cpp"
    source.write_text(_block(_sketch(library, KWS)))

    def syntax(*flags: str) -> subprocess.CompletedProcess[str]:
        argv = ["g++", "-fsyntax-only", *flags, str(source)]
        return subprocess.run(argv, capture_output=True, text=True, check=False)

    r4 = syntax("-DARDUINO_ARDUINO_UNO_R4_WIFI")
    assert r4.returncode != 0
    assert f'#error "{R4_MESSAGE}"' in r4.stderr
    assert NICLA_MESSAGE not in r4.stderr
    nicla = syntax("-DARDUINO_NICLA_SENSE_ME")
    assert nicla.returncode != 0 and NICLA_MESSAGE in nicla.stderr
    for flags in ((), ("-DARDUINO_UNO_Q",), ("-DARDUINO_EK_RA8D1",)):
        ok = syntax(*flags)
        assert ok.returncode == 0, (flags, ok.stderr)
    # The check judges that very compiler output a refusal, as intended.
    judged = judge_refusal("gcc-arm", Build(False, None, r4.stderr), R4_MESSAGE)
    assert judged.refused and judged.stage.status is Status.PASS
    assert judged.stage.summary == REFUSED
    assert R4_MESSAGE in judged.stage.details


def test_gcc_arm_defines_the_board_macro_but_not_on_the_uno_q() -> None:
    r4 = ZEPHYR_BOARDS["unor4wifi"].budget()
    assert r4 is not None
    argv = select_toolchain("gcc-arm", r4).compile_argv("x.cpp", ())  # type: ignore[attr-defined]
    assert argv[argv.index(ARDUINO_DEFINES[-1]) + 1] == "-DARDUINO_ARDUINO_UNO_R4_WIFI"
    assert GCC_ARM.defines == ()
    uno_q = GCC_ARM.compile_argv("x.cpp", ())
    assert not [a for a in uno_q if a.startswith("-DARDUINO_") or a == "-DARDUINO_UNO_Q"]
    assert [a for a in uno_q if a.startswith("-D")] == list(ARDUINO_DEFINES)


def test_the_check_expects_the_refusal_where_the_board_macro_is_defined(library: Path) -> None:
    plan = plan_build(library, KWS)
    r4 = ZEPHYR_BOARDS["unor4wifi"].budget()
    ek = ZEPHYR_BOARDS["ek_ra8d1"].budget()  # 32,768 B: the arena fits
    assert r4 is not None and ek is not None
    assert expected_refusal(select_toolchain("gcc-arm", r4), plan, r4) == R4_MESSAGE
    assert expected_refusal(select_toolchain("gcc-arm", ek), plan, ek) is None
    assert expected_refusal(GCC_ARM, plan, UNO_Q) is None
    assert expected_refusal(GCC_ARM, plan_build(library, "AddModel"), UNO_Q) is None


class _Refusing:
    """A toolchain whose build fails with `log` (what the compiler printed)."""

    name = "arduino-cli"

    def __init__(self, log: str, ok: bool = False) -> None:
        self.log, self.ok = log, ok

    def missing(self) -> str | None:
        return None

    def build(self, plan: BuildPlan, out_dir: Path, cache: ObjectCache) -> Build:
        return Build(self.ok, out_dir / "x.elf" if self.ok else None, self.log)


R4_LOG = (
    "In file included from /tmp/KeywordSpotting.ino.cpp:1:\n"
    f'examples/KeywordSpotting/KeywordSpotting.ino:29:2: error: #error "{R4_MESSAGE}"\n'
    "Error during build: exit status 1\n"
)


def test_a_refusing_compile_passes_the_stage_and_skips_the_rest(
    library: Path, tmp_path: Path
) -> None:
    r4 = ZEPHYR_BOARDS["unor4wifi"].budget()
    assert r4 is not None
    cache = ObjectCache(tmp_path / "objects")
    report = _check_example(library, KWS, _Refusing(R4_LOG), r4, True, cache, tmp_path)
    assert report.passed
    assert [(s.stage, s.status) for s in report.stages] == [
        ("compile", Status.PASS),
        *((stage, Status.SKIP) for stage in ("sizes", "dynamic", "run", "dynamic-run")),
        ("sanitize", Status.SKIP),
        ("arena", Status.SKIP),
    ]
    assert report.stages[0].summary == REFUSED
    assert report.stages[1].summary == (
        "not built: the sketch does not fit the Arduino UNO R4 WiFi (see compile)"
    )
    assert report.runs == [] and report.sizes is None
    assert report.misfit  # the report's verdict names it among the examples that do not fit
    assert [s.stage for s in after_refusal("X", run=False)] == ["sizes", "dynamic"]


def test_a_compile_that_should_refuse_but_does_not_fails(library: Path, tmp_path: Path) -> None:
    r4 = ZEPHYR_BOARDS["unor4wifi"].budget()
    assert r4 is not None
    plan = plan_build(library, KWS)
    cache = ObjectCache(tmp_path / "objects")
    compiled = compile_example(_Refusing("", ok=True), plan, tmp_path, cache, R4_MESSAGE)
    assert not compiled.refused and compiled.stage.status is Status.FAIL
    assert "compiled, but the sketch does not fit this board" in compiled.stage.summary
    # A broken #error (another message) and any other failure fail the stage too.
    broken = R4_LOG.replace("16,384 B", "16,000 B")
    for log in (broken, "KeywordSpotting.ino:40:1: error: 'model' was not declared\n"):
        failed = compile_example(_Refusing(log), plan, tmp_path, cache, R4_MESSAGE)
        assert not failed.refused and failed.stage.status is Status.FAIL
        assert "not with the sketch's board-fit #error" in failed.stage.summary
        assert R4_MESSAGE in failed.stage.details


def test_arena_bytes_reads_the_board_s_figure_as_et_model_h_writes_it() -> None:
    both = et_model_h.model_h(b"\0" * 8, source="m.pte", arena_bytes=300, host_arena_bytes=400)
    assert fit.arena_bytes(both) == 300
    assert fit.arena_bytes(et_model_h.model_h(b"\0" * 8, source="m.pte", arena_bytes=7)) == 7
    assert fit.arena_bytes(et_model_h.model_h(b"\0" * 8, source="m.pte")) is None
    twice = "inline constexpr size_t model_pte_arena_bytes = 1;\n" * 2
    with pytest.raises(ValueError, match="declares model_pte_arena_bytes 2 times"):
        fit.arena_bytes(twice)


def test_a_model_h_without_an_arena_leaves_the_fit_unknown() -> None:
    lines = fit.fit_lines(KWS, None)
    assert lines == [
        "// Board fit: unknown: model.h declares no model_pte_arena_bytes, so no board",
        "// is refused at compile time.",
    ]
    assert all(len(line) <= fit.WIDTH for line in fit.fit_lines(KWS, 1 << 20) if line[0] == "/")
