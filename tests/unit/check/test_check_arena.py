"""`check`'s arena stage: the figures a sketch prints (`Arena: used N of M bytes`) and an arena
smaller than the model needs, read from ETModel's messages.

Every library and sketch here is written by the test into tmp_path (check_fixtures.py); no
ExecuTorch sources are needed. Objects are shared through one cache per test session (the
`cache_dir` fixture of conftest.py).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from check_fixtures import needs_tools, write_library

from generator.check.arena import arena_stage
from generator.check.expected import Expected
from generator.check.run import run_check
from generator.check.run_sketch import RunOutput
from generator.check.stages import Status

pytestmark = needs_tools


ARENA_SKETCH = textwrap.dedent(
    """\
    #include <Tiny.h>
    // Like ETModel: the "method" needs NEED bytes from an arena of ARENA bytes.
    void setup() {
      Serial.println("=== Arena ===");
      void* a = bump(1000);
      void* b = bump(NEED - 1008);
      if (a == nullptr || b == nullptr) {
        Serial.println("ERROR: load_method failed (0x21): the 4096-byte arena is too small");
      } else {
        Serial.print("Arena: used ");
        Serial.print((unsigned long)bump_used());
        Serial.println(" of 4096 bytes");
      }
      Serial.println("=== DONE ===");
    }
    void loop() {}
    """
)


ARENA_EXPECTED = 'must_print: ["=== DONE ==="]\nmust_not_print: ["ERROR:"]\narena: true\n'


def test_arena_figures_and_an_arena_smaller_than_needed(tmp_path: Path, cache_dir: Path) -> None:
    lib = write_library(
        tmp_path / "Tiny",
        {
            "Fits": (ARENA_SKETCH.replace("NEED", "3000"), ARENA_EXPECTED),
            "TooSmall": (ARENA_SKETCH.replace("NEED", "5000"), ARENA_EXPECTED),
        },
    )
    report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir)

    fits, too_small = report.examples
    assert fits.passed, report.to_markdown()
    assert fits.arena is not None
    assert (fits.arena.used, fits.arena.size, fits.arena.headroom) == (3000, 4096, 1096)
    stage = fits.stage("arena")
    assert stage is not None and stage.summary.startswith("used 3,000 of 4,096 bytes")

    arena = too_small.stage("arena")
    assert arena is not None and arena.status is Status.FAIL
    assert arena.summary.startswith("the sketch's arena of 4,096 bytes is smaller than")
    assert "0x21" in arena.details
    assert not report.passed
    assert report.to_dict()["examples"][0]["sizes"]["arena_used"] == 3000


def test_arena_stage_reads_etmodel_messages() -> None:
    expected = Expected(("=== DONE ===",), arena=True)
    planned = RunOutput(
        "emulated",
        ["ERROR: arena too small: 96 bytes for the planned buffer 0, 200 of 256 used"],
    )
    stage, figures = arena_stage(planned, expected)
    assert stage.status is Status.FAIL and figures is None
    assert stage.summary.startswith("the sketch's arena of 256 bytes is smaller than")
    missing = RunOutput("emulated", ["=== DONE ==="], done=True)
    stage, _ = arena_stage(missing, expected)
    assert stage.status is Status.FAIL
    assert "printed no 'Arena: used N of M bytes' line" in stage.summary
    assert arena_stage(None, expected)[0].status is Status.SKIP
