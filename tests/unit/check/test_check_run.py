"""`check`'s runs: on the emulated Cortex-M33 (QEMU mps2-an505) and on the host under
ASan/UBSan, each judged against the example's expected.yaml. Wrong output, crashes, faults,
time-outs, endless or long output, banned lines and values out of tolerance all fail.

Every library and sketch here is written by the test into tmp_path (check_fixtures.py); no
ExecuTorch sources are needed. Objects are shared through one cache per test session (the
`cache_dir` fixture of conftest.py).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from check_fixtures import HELLO_EXPECTED, HELLO_SKETCH, needs_tools, write_library

from generator.check.expected import Expected, ValueCheck
from generator.check.report import CheckReport, ExampleReport
from generator.check.run import run_check
from generator.check.run_sketch import RunOutput, judge_run
from generator.check.stages import Status

pytestmark = needs_tools


def test_wrong_output_fails_showing_the_last_lines(tmp_path: Path, cache_dir: Path) -> None:
    sketch = HELLO_SKETCH.replace("twice(21)", "twice(20)")  # prints "twice(20) = 40"
    lib = write_library(tmp_path / "Tiny", {"Hello": (sketch, HELLO_EXPECTED)})
    report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir)

    assert not report.passed
    run = report.examples[0].stage("run")
    assert run is not None and run.status is Status.FAIL
    assert "missing line: 'twice(21) = 42'" in run.summary
    assert "Last lines printed:" in run.details
    assert "twice(20) = 40" in run.details
    sanitize = report.examples[0].stage("sanitize")
    assert sanitize is not None and sanitize.status is Status.FAIL
    assert "❌" in report.to_markdown()


def test_null_write_crashes_the_emulated_run(tmp_path: Path, cache_dir: Path) -> None:
    sketch = textwrap.dedent(
        """\
        void setup() {
          Serial.println("=== Crash ===");
          volatile int* volatile p = nullptr;
          *p = 1;
          Serial.println("=== DONE ===");
        }
        void loop() {}
        """
    )
    expected = 'must_print: ["=== Crash ===", "=== DONE ==="]\ntimeout_seconds: 30\n'
    lib = write_library(tmp_path / "Tiny", {"Crash": (sketch, expected)})
    report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir)

    assert not report.passed
    example = report.examples[0]
    run = example.stage("run")
    assert run is not None and run.status is Status.FAIL
    assert run.summary.startswith("emulated Cortex-M33 (QEMU mps2-an505): crashed: MemManage")
    assert "=== Crash ===" in run.details  # the last line printed before the fault
    assert example.runs[0].exit_code == 3  # the core's fault exit through semihosting
    sanitize = example.stage("sanitize")
    assert sanitize is not None and sanitize.status is Status.FAIL
    assert "AddressSanitizer" in sanitize.summary  # SEGV on unknown address


def test_host_out_of_bounds_fails_the_sanitizer_run(tmp_path: Path, cache_dir: Path) -> None:
    sketch = textwrap.dedent(
        """\
        void setup() {
          Serial.println("=== Oob ===");
          char* p = static_cast<char*>(malloc(16));
          volatile size_t n = 17;
          memset(p, 0, n);  // one past the end: silent on the board, caught on the host
          Serial.println((int)p[0]);
          free(p);
          Serial.println("=== DONE ===");
        }
        void loop() {}
        """
    )
    expected = 'must_print: ["=== Oob ===", "=== DONE ==="]\ntimeout_seconds: 30\n'
    lib = write_library(tmp_path / "Tiny", {"Oob": (sketch, expected)})
    report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir)

    assert not report.passed
    example = report.examples[0]
    run = example.stage("run")
    assert run is not None and run.status is Status.PASS
    sanitize = example.stage("sanitize")
    assert sanitize is not None and sanitize.status is Status.FAIL
    assert "sanitizer report" in sanitize.summary
    assert "heap-buffer-overflow" in sanitize.details


def test_stack_overflow_faults_on_the_emulated_board(tmp_path: Path, cache_dir: Path) -> None:
    # The core keeps 16 KiB of stack below the top of RAM and sets MSPLIM there, so a
    # runaway stack faults instead of silently overwriting the heap and the globals.
    sketch = textwrap.dedent(
        """\
        int deep(int n) {
          volatile char frame[1024];
          frame[0] = (char)n;
          return n == 0 ? frame[0] : deep(n - 1) + frame[0];
        }
        void setup() {
          Serial.println(deep(64));
          Serial.println("=== DONE ===");
        }
        void loop() {}
        """
    )
    lib = write_library(tmp_path / "Tiny", {"Deep": (sketch, 'must_print: ["=== DONE ==="]\n')})
    report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir)
    example = report.examples[0]
    run = example.stage("run")
    assert run is not None and run.status is Status.FAIL
    assert "crashed: UsageFault" in run.summary
    assert "CFSR=0x00100000" in run.summary  # STKOF
    sanitize = example.stage("sanitize")
    assert sanitize is not None and sanitize.status is Status.PASS  # 64 KiB is fine on a PC


def test_printf_zu_works_on_the_emulated_board(tmp_path: Path, cache_dir: Path) -> None:
    # newlib as Debian builds it skips "%zu" without consuming the argument, so the "%s"
    # after it would read the number as a pointer; the core makes it work.
    sketch = textwrap.dedent(
        """\
        void setup() {
          char line[80];
          snprintf(line, sizeof(line), "n=%zu s=%s w=%5zu t=%td", (size_t)1234, "ok",
                   (size_t)7, (ptrdiff_t)-3);
          Serial.println(line);
          sprintf(line, "printf %zu of %zu bytes", (size_t)3000, (size_t)4096);
          Serial.println(line);
          printf("stdout %zu %s\\n", (size_t)42, "done");  // line-buffered: no fflush, which
                                                     // no core's firmware exports
          Serial.println("=== DONE ===");
        }
        void loop() {}
        """
    )
    expected = textwrap.dedent(
        """\
        must_print:
          - "n=1234 s=ok w=    7 t=-3"
          - "printf 3000 of 4096 bytes"
          - "stdout 42 done"
          - "=== DONE ==="
        must_not_print: ["zu"]
        """
    )
    lib = write_library(tmp_path / "Tiny", {"Zu": (sketch, expected)})
    report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir)
    assert report.passed, report.to_markdown()
    assert "n=1234 s=ok w=    7 t=-3" in report.examples[0].runs[0].lines


def test_a_sketch_that_never_finishes_times_out(tmp_path: Path, cache_dir: Path) -> None:
    sketch = 'void setup() { Serial.println("=== Slow ==="); }\nvoid loop() { delay(10); }\n'
    expected = 'must_print: ["=== DONE ==="]\ntimeout_seconds: 1.5\n'
    lib = write_library(tmp_path / "Tiny", {"Slow": (sketch, expected)})
    report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir)
    run = report.examples[0].stage("run")
    assert run is not None and run.status is Status.FAIL
    assert "timed out: no '=== DONE ===' within 1.5 s" in run.summary
    assert "=== Slow ===" in run.details
    assert report.examples[0].runs[0].timed_out


def test_values_within_tolerance() -> None:
    expected = Expected(
        ("=== DONE ===",), values=(ValueCheck(r"^\s*\[yes\]=(-?[0-9.]+)$", 8.95, 0.01),)
    )
    good = RunOutput("emulated", ["  [yes]=8.95", "=== DONE ==="], done=True)
    assert judge_run(good, expected, "run").status is Status.PASS
    bad = RunOutput("emulated", ["  [yes]=8.90", "=== DONE ==="], done=True)
    result = judge_run(bad, expected, "run")
    assert result.status is Status.FAIL
    assert "value 8.9" in result.summary and "8.95 ± 0.01" in result.summary
    absent = RunOutput("emulated", ["=== DONE ==="], done=True)
    assert "no line matches" in judge_run(absent, expected, "run").summary


def test_a_nan_value_never_passes() -> None:
    expected = Expected(("=== DONE ===",), values=(ValueCheck(r"^x=(\S+)$", 1.0, 1e9),))
    nan = RunOutput("emulated", ["x=nan", "=== DONE ==="], done=True)
    result = judge_run(nan, expected, "run")
    assert result.status is Status.FAIL
    assert result.summary.endswith("value nan (line '^x=(\\\\S+)$') is not 1.0 ± 1000000000.0")


# -- bounded output, faults and banned lines around the end -----------------------------------


def _run_one(
    tmp_path: Path, cache_dir: Path, sketch: str, expected: str
) -> tuple[CheckReport, ExampleReport]:
    """Check a Tiny library with one example `T` (the sketch and its expected.yaml)."""
    name = "T"
    lib = write_library(tmp_path / "Tiny", {name: (sketch, expected)})
    report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir)
    return report, report.examples[0]


def test_endless_output_is_capped_and_fails_the_run(tmp_path: Path, cache_dir: Path) -> None:
    sketch = textwrap.dedent(
        """\
        void setup() { Serial.println("=== Flood ==="); }
        void loop() { Serial.print("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"); }
        """
    )
    report, example = _run_one(
        tmp_path, cache_dir, sketch, 'must_print: ["=== DONE ==="]\ntimeout_seconds: 120\n'
    )
    for stage_name, run in zip(("run", "dynamic-run", "sanitize"), example.runs, strict=True):
        stage = example.stage(stage_name)
        assert stage is not None and stage.status is Status.FAIL
        assert "printed more than 1 MiB of output" in stage.summary
        assert run.overflowed and not run.timed_out and run.exit_code is None
        assert run.lines[0] == "=== Flood ==="
        # The endless line is kept cut, once: nothing near the 1 MiB it printed.
        assert run.lines[-1].endswith("[line cut at 500 characters]")
        assert len(run.lines[-1]) == 500 + len(" [line cut at 500 characters]")
        assert sum(len(line) for line in run.lines) < 2_000
    assert len(report.to_markdown()) < 20_000
    assert len(json.dumps(report.to_dict())) < 20_000


def test_long_lines_are_cut_and_the_json_keeps_the_last_200(
    tmp_path: Path, cache_dir: Path
) -> None:
    sketch = textwrap.dedent(
        """\
        void setup() {
          for (int i = 0; i < 300; ++i) { Serial.print("line "); Serial.println(i); }
          for (int i = 0; i < 2000; ++i) Serial.print('y');
          Serial.println();
          Serial.println("=== DONE ===");
        }
        void loop() { delay(100); }
        """
    )
    report, example = _run_one(tmp_path, cache_dir, sketch, 'must_print: ["line 299"]\n')
    assert report.passed, report.to_markdown()
    emulated = example.runs[0]
    assert emulated.lines[300] == "y" * 500 + " [line cut at 500 characters]"
    last = report.to_dict()["examples"][0]["runs"][0]["last_lines"]
    assert len(last) == 200 and last[0] == "line 102" and last[-1] == "=== DONE ==="


def test_a_banned_string_past_the_cut_of_a_long_line_fails(tmp_path: Path, cache_dir: Path) -> None:
    sketch = textwrap.dedent(
        """\
        void setup() {
          for (int i = 0; i < AT; ++i) Serial.print('a');
          Serial.print("ERROR: hidden");
          for (int i = 0; i < 3000; ++i) Serial.print('b');
          Serial.println();
          Serial.println("=== DONE ===");
        }
        void loop() { delay(100); }
        """
    )
    expected = 'must_print: ["=== DONE ==="]\nmust_not_print: ["ERROR:"]\n'
    lib = write_library(
        tmp_path / "Tiny",
        {  # inside the bytes kept for a line, and far past them
            "Near": (sketch.replace("AT", "1000"), expected),
            "Far": (sketch.replace("AT", "5000"), expected),
        },
    )
    report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir)
    for example in report.examples:
        for name, run in zip(("run", "dynamic-run", "sanitize"), example.runs, strict=True):
            stage = example.stage(name)
            assert stage is not None and stage.status is Status.FAIL, example.name
            assert stage.summary.endswith(
                "printed 'ERROR:' in a line longer than 500 characters (past the part kept)"
            )
            assert run.lines[0] == "a" * 500 + " [line cut at 500 characters]"


def test_a_fault_right_after_done_fails_with_its_reason(tmp_path: Path, cache_dir: Path) -> None:
    sketch = textwrap.dedent(
        """\
        void setup() {
          Serial.println("=== DONE ===");
          volatile int* volatile p = nullptr;
          *p = 1;
        }
        void loop() {}
        """
    )
    _, example = _run_one(tmp_path, cache_dir, sketch, 'must_print: ["=== DONE ==="]\n')
    run = example.stage("run")
    assert run is not None and run.status is Status.FAIL
    assert run.summary.startswith("emulated Cortex-M33 (QEMU mps2-an505): crashed: MemManage")
    assert example.runs[0].exit_code == 3
    sanitize = example.stage("sanitize")
    assert sanitize is not None and sanitize.status is Status.FAIL
    assert "AddressSanitizer" in sanitize.summary


def test_a_banned_line_right_after_done_fails(tmp_path: Path, cache_dir: Path) -> None:
    sketch = textwrap.dedent(
        """\
        void setup() { Serial.println("=== DONE ==="); delay(200); Serial.println("ERROR: late"); }
        void loop() { delay(100); }
        """
    )
    expected = 'must_print: ["=== DONE ==="]\nmust_not_print: ["ERROR:"]\n'
    _, example = _run_one(tmp_path, cache_dir, sketch, expected)
    for name in ("run", "dynamic-run", "sanitize"):
        stage = example.stage(name)
        assert stage is not None and stage.status is Status.FAIL
        assert "printed 'ERROR:': 'ERROR: late'" in stage.summary


def test_stars_are_not_a_crash_and_exit_0_is_not_either(tmp_path: Path, cache_dir: Path) -> None:
    sketch = textwrap.dedent(
        """\
        void setup() {
          Serial.println("*** Banner ***");
          Serial.println("=== DONE ===");
          exit(0);
        }
        void loop() {}
        """
    )
    report, example = _run_one(tmp_path, cache_dir, sketch, 'must_print: ["*** Banner ***"]\n')
    assert report.passed, report.to_markdown()
    assert example.runs[0].exit_code == 0

    early = sketch.replace('  Serial.println("=== DONE ===");\n', "")
    _, example = _run_one(tmp_path / "early", cache_dir, early, 'must_print: ["*** Banner ***"]\n')
    run = example.stage("run")
    assert run is not None and run.status is Status.FAIL
    assert run.summary.endswith("ended before printing '=== DONE ==='")

    failing = sketch.replace("exit(0)", "exit(7)").replace(
        '  Serial.println("=== DONE ===");\n', ""
    )
    _, example = _run_one(tmp_path / "seven", cache_dir, failing, 'must_print: ["=== DONE ==="]\n')
    run = example.stage("run")
    assert run is not None and run.summary.endswith("the sketch called exit(7)")
    sanitize = example.stage("sanitize")
    assert sanitize is not None and sanitize.summary.endswith("exited with code 7")
