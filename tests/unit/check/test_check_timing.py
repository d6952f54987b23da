"""Instructions per inference: the emulated runs count instructions (QEMU `-icount shift=0`),
so a sketch's `Inference: N us` line is N * 1,000 instructions, the same on every run; `check`
reports it in its Markdown and JSON, and a sketch that prints no such line has no figure.

The sketch here times a loop of a known length (`subs` + `bne` on the Cortex-M33, two
instructions an iteration) with `micros()`, as `ETModel::lastRunMicros()` times `run()`; it is
written into tmp_path (check_fixtures.py), no ExecuTorch sources needed.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from check_fixtures import needs_tools, write_library

from generator.check.report import CheckReport, ExampleReport
from generator.check.run import run_check
from generator.check.run_sketch import QEMU_ICOUNT, RunOutput
from generator.check.timing import parse_inferences

#: Iterations of the timed loop in each of the sketch's inferences: 2 instructions each.
ITERATIONS = (500_000, 1_000_000, 1_500_000)

SPIN_SKETCH = textwrap.dedent(
    """\
    static void spin(unsigned long n) {
    #ifdef __arm__
      __asm__ volatile("1: subs %0, %0, #1\\n bne 1b" : "+r"(n) : : "cc");
    #else  // the host build (its clock is not read)
      for (volatile unsigned long i = 0; i < n; i = i + 1) {
      }
    #endif
    }
    static void timed(unsigned long n) {
      unsigned long start = micros();
      spin(n);
      unsigned long took = micros() - start;
      Serial.print("Inference: ");
      Serial.print(took);
      Serial.println(" us");
    }
    void setup() {
      Serial.begin(115200);
      Serial.println("=== Spin ===");
      timed(500000ul);
      timed(1000000ul);
      timed(1500000ul);
      Serial.println("=== DONE ===");
    }
    void loop() { delay(100); }
    """
)
SPIN_EXPECTED = 'must_print: ["=== Spin ===", "=== DONE ==="]\ntimeout_seconds: 60\n'

QUIET_SKETCH = textwrap.dedent(
    """\
    void setup() {
      Serial.println("=== Quiet ===");
      Serial.println("Inference took 12 ms");
      Serial.println("=== DONE ===");
    }
    void loop() { delay(100); }
    """
)
QUIET_EXPECTED = 'must_print: ["=== DONE ==="]\ntimeout_seconds: 60\n'


# -- reading the line ------------------------------------------------------------------------


def test_the_last_line_is_the_figure_and_every_line_is_kept() -> None:
    timing = parse_inferences(
        ["=== M ===", "Inference: 10412 us", "Inference: 10398 us\r", "Inference: 10400 us"],
        "emulated",
    )
    assert timing is not None
    assert timing.micros == (10412, 10398, 10400)
    assert timing.inference_us == 10400
    assert timing.instructions == 10_400_000
    assert timing.to_dict() == {
        "instructions_per_inference": 10_400_000,
        "inference_us": 10400,
        "inferences": 3,
        "inference_us_min": 10398,
        "inference_us_max": 10412,
        "resolution_instructions": 1000,
    }


@pytest.mark.parametrize(
    "line",
    [
        "Inference took 12 ms",
        "Inference: 12 ms",
        "Inference: 1.5 us",
        "Inference: -3 us",
        "ET| Inference: 12 us",
        "Inference: 12 us and more",
        "Inference: us",
    ],
)
def test_other_wordings_are_no_figure(line: str) -> None:
    assert parse_inferences([line], "emulated") is None


def test_zero_microseconds_is_a_figure_not_none() -> None:
    timing = parse_inferences(["Inference: 0 us"], "emulated")
    assert timing is not None and timing.instructions == 0


def _example(runs: list[RunOutput]) -> ExampleReport:
    return ExampleReport("M", runs=runs)


def test_the_report_takes_the_emulated_run_and_names_the_dynamic_one() -> None:
    example = _example(
        [
            RunOutput("emulated", ["Inference: 74 us"], done=True),
            RunOutput("dynamic", ["Inference: 76 us"], done=True),
            RunOutput("host", ["Inference: 3 us"], done=True),  # the host's clock: not read
        ]
    )
    assert example.to_dict()["timing"] == {
        "run": "emulated",
        "instructions_per_inference": 74_000,
        "inference_us": 74,
        "inferences": 1,
        "inference_us_min": 74,
        "inference_us_max": 74,
        "resolution_instructions": 1000,
        "dynamic_instructions_per_inference": 76_000,
    }
    markdown = CheckReport(Path("/lib"), "gcc-arm", "UNO Q", examples=[example]).to_markdown()
    assert "### Inference (instructions on the emulated Cortex-M33)" in markdown
    assert "| M | 74,000 | 74 µs | 76,000 |" in markdown


def test_without_an_emulated_figure_the_dynamic_run_gives_it() -> None:
    example = _example(
        [RunOutput("emulated", ["crashed"]), RunOutput("dynamic", ["Inference: 9 us"])]
    )
    timing = example.to_dict()["timing"]
    assert timing["run"] == "dynamic" and timing["instructions_per_inference"] == 9000


def test_a_host_only_figure_and_no_line_are_no_timing() -> None:
    example = _example([RunOutput("host", ["Inference: 3 us"]), RunOutput("emulated", ["hi"])])
    assert example.timing is None
    assert example.to_dict()["timing"] is None
    markdown = CheckReport(Path("/lib"), "gcc-arm", "UNO Q", examples=[example]).to_markdown()
    assert "Inference" not in markdown


def test_several_lines_show_their_range_in_the_report() -> None:
    example = _example([RunOutput("emulated", ["Inference: 12 us", "Inference: 10 us"])])
    markdown = CheckReport(Path("/lib"), "gcc-arm", "UNO Q", examples=[example]).to_markdown()
    assert "| M | 10,000 | 10 µs (last of 2; 10-12) | - |" in markdown


# -- on the emulated board -------------------------------------------------------------------


@needs_tools
def test_the_emulated_clock_counts_instructions_the_same_on_every_run(
    tmp_path: Path, cache_dir: Path
) -> None:
    assert QEMU_ICOUNT.startswith("shift=0")
    counts = []
    for attempt in ("a", "b"):
        lib = write_library(
            tmp_path / attempt,
            {"Spin": (SPIN_SKETCH, SPIN_EXPECTED), "Quiet": (QUIET_SKETCH, QUIET_EXPECTED)},
        )
        report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir)
        assert report.passed, report.to_markdown()
        spin, quiet = (next(e for e in report.examples if e.name == n) for n in ("Spin", "Quiet"))
        timings = spin.timings()
        assert set(timings) == {"emulated", "dynamic"}
        for timing in timings.values():
            # 2 instructions an iteration, 1 ns of virtual time each: N iterations take
            # 2N ns; micros() truncates, and the calls around the loop add a few instructions.
            for micros, n in zip(timing.micros, ITERATIONS, strict=True):
                assert 2 * n // 1000 <= micros <= 2 * n // 1000 + 1
        counts.append({kind: t.micros for kind, t in timings.items()})
        data = json.loads(json.dumps(report.to_dict()))
        by_name = {e["example"]: e for e in data["examples"]}
        assert (
            by_name["Spin"]["timing"]["instructions_per_inference"]
            == 1000 * (timings["emulated"].micros[-1])
        )
        assert by_name["Quiet"]["timing"] is None
        assert quiet.timing is None
    assert counts[0] == counts[1]
