"""`check` stages 2-5 for real: arm-none-eabi GCC, QEMU mps2-an505, host ASan/UBSan.

Every library and sketch here is written by the test into tmp_path; no ExecuTorch sources
are needed. Objects are shared through one cache per test session, except where the
cache itself is under test.
"""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest

from generator.boards import UNO_Q
from generator.check import CheckReport, ExampleReport, run_check
from generator.check.arena import arena_stage
from generator.check.compile import compile_example, overflows, plan_build
from generator.check.expected import Expected, ValueCheck, read_expected
from generator.check.objcache import ObjectCache, parse_depfile
from generator.check.run import RunOutput, judge_run
from generator.check.stages import Status
from generator.check.toolchains import GCC_ARM, HOST, select_toolchain
from generator.errors import FatalError
from generator.main import main

TOOLS = ("arm-none-eabi-gcc", "arm-none-eabi-g++", "qemu-system-arm", "gcc", "g++")
pytestmark = pytest.mark.skipif(
    any(shutil.which(t) is None for t in TOOLS),
    reason="needs gcc-arm-none-eabi, libnewlib-arm-none-eabi, "
    "libstdc++-arm-none-eabi-newlib, qemu-system-arm and gcc/g++",
)

#: Objects of the check's Arduino core in a gcc-arm and in a host build.
CORE_OBJECTS = len(GCC_ARM.core_sources)
HOST_CORE_OBJECTS = len(HOST.core_sources)

# A library the way Arduino compiles it: a C and a C++ source, a header in a subfolder.
TINY_SOURCES = {
    "src/Tiny.h": '#pragma once\n#include "util/calc.h"\n',
    "src/util/calc.h": textwrap.dedent(
        """\
        #pragma once
        #include <stddef.h>
        #ifdef __cplusplus
        extern "C" {
        #endif
        int add_c(int a, int b);
        /* A bump allocator like ETModel's arena: NULL when `n` does not fit. */
        void* bump(size_t n);
        size_t bump_used(void);
        #ifdef __cplusplus
        }
        #endif
        int twice(int x);
        """
    ),
    "src/calc.c": textwrap.dedent(
        """\
        #include "util/calc.h"
        int add_c(int a, int b) { return a + b; }
        """
    ),
    "src/Tiny.cpp": textwrap.dedent(
        """\
        #include "util/calc.h"
        #include <stdint.h>
        int twice(int x) { return add_c(x, x); }
        alignas(16) static uint8_t pool[4096];
        static size_t used;
        extern "C" void* bump(size_t n) {
          size_t start = (used + 15u) & ~(size_t)15u;
          if (start + n > sizeof(pool)) return nullptr;
          used = start + n;
          return pool + start;
        }
        extern "C" size_t bump_used(void) { return used; }
        """
    ),
}

HELLO_SKETCH = textwrap.dedent(
    """\
    #include <Tiny.h>

    void setup() {
      Serial.begin(115200);
      Serial.println("=== Hello ===");
      Serial.print("twice(21) = ");
      Serial.println(twice(21));
      Serial.print("hex ");
      Serial.println(255, HEX);
      Serial.print("neg ");
      Serial.println(-42);
      Serial.print("floats [");
      Serial.print(2.0f);
      Serial.print(", ");
      Serial.print(-1.256);
      Serial.print(", ");
      Serial.print(8.9512, 3);
      Serial.println("]");
      Serial.print("bytes ");
      Serial.println(sizeof(void*));
      Serial.print("bump ");
      Serial.println(bump(10) != nullptr);
      Serial.println("=== DONE ===");
    }

    void loop() { delay(100); }
    """
)
HELLO_EXPECTED = textwrap.dedent(
    """\
    must_print:
      - "=== Hello ==="
      - "twice(21) = 42"
      - "hex FF"
      - "neg -42"
      - "floats [2.00, -1.26, 8.951]"
      - "bump 1"
      - "=== DONE ==="
    must_not_print: ["ERROR:"]
    timeout_seconds: 30
    """
)


def write_library(root: Path, sketches: dict[str, tuple[str, str]]) -> Path:
    """A library at `root` with TINY_SOURCES and `name -> (sketch code, expected.yaml)`."""
    for rel, text in TINY_SOURCES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    # Metadata that passes `lint` (which check runs first), with the registered name.
    (root / "library.properties").write_text(
        "name=ExecuTorch\nversion=0.0.1\nauthor=Tests\nmaintainer=Tests <t@example.invalid>\n"
        "sentence=A tiny library for the check tests.\nparagraph=Small C and C++ sources.\n"
        "category=Data Processing\nurl=https://example.invalid/tiny\narchitectures=*\n"
        "includes=Tiny.h\n"
    )
    (root / "LICENSE").write_text("BSD License (test)\n")
    (root / "README.md").write_text("# Tiny\n")
    (root / "src" / "ExecuTorch.h").write_text('#pragma once\n#include "Tiny.h"\n')
    for name, (code, expected) in sketches.items():
        folder = root / "examples" / name
        folder.mkdir(parents=True)
        (folder / f"{name}.ino").write_text(code)
        (folder / "expected.yaml").write_text(expected)
    return root


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("check-cache")


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
        "run": Status.PASS,
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
    # The Dynamic link keeps the sketch and library only (no core, no libc); the pool
    # of 4096 bytes is its bss.
    assert example.dynamic is not None
    assert 100 < example.dynamic.flash < 5_000
    assert example.dynamic.ram >= 4096
    emulated, host = example.runs
    assert (emulated.kind, host.kind) == ("emulated", "host")
    # 32-bit on the emulated Cortex-M33, 64-bit on the host.
    assert "bytes 4" in emulated.lines and "bytes 8" in host.lines
    assert emulated.done and host.done

    data = report.to_dict()
    assert data["passed"] is True
    assert data["examples"][0]["sizes"]["flash"] == example.sizes.flash
    markdown = report.to_markdown()
    assert "## Library check: ✅ passed" in markdown
    assert f"{example.sizes.flash:,} B" in markdown


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


def test_flash_overflow_fails_the_compile_with_the_bytes(tmp_path: Path, cache_dir: Path) -> None:
    sketch = textwrap.dedent(
        """\
        const uint8_t big[900 * 1024] = {1, 2, 3};
        volatile size_t pick = 7;
        void setup() {
          Serial.println(big[pick]);
          Serial.println("=== DONE ===");
        }
        void loop() {}
        """
    )
    lib = write_library(tmp_path / "Tiny", {"Big": (sketch, 'must_print: ["=== DONE ==="]\n')})
    report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir, run=False)

    assert not report.passed
    example = report.examples[0]
    compile_stage = example.stage("compile")
    assert compile_stage is not None and compile_stage.status is Status.FAIL
    # 921,600 bytes of array alone are 135,168 over 786,432; the core and libc add more.
    built = compile_example(GCC_ARM, plan_build(lib, "Big"), tmp_path / "out", _cache(cache_dir))
    over = built.overflow["FLASH"]
    assert 900 * 1024 - 786_432 < over < 900 * 1024 - 786_432 + 100_000
    assert f"FLASH overflowed by {over:,} bytes" in compile_stage.summary
    sizes = example.stage("sizes")
    assert sizes is not None and sizes.status is Status.FAIL
    assert example.sizes is None


def test_ram_overflow_fails_the_compile_with_the_bytes(tmp_path: Path, cache_dir: Path) -> None:
    sketch = textwrap.dedent(
        """\
        static uint8_t big[300 * 1024];
        volatile size_t pick = 7;
        void setup() {
          big[pick] = 1;
          Serial.println(big[pick]);
        }
        void loop() {}
        """
    )
    lib = write_library(tmp_path / "Tiny", {"Ram": (sketch, 'must_print: ["=== DONE ==="]\n')})
    report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir, run=False)
    stage = report.examples[0].stage("compile")
    assert stage is not None and stage.status is Status.FAIL
    over = int(stage.summary.split("RAM overflowed by ")[1].split(" bytes")[0].replace(",", ""))
    # 307,200 bytes of globals are 45,056 over 262,144; the core's globals add a little.
    assert 300 * 1024 - 262_144 <= over < 300 * 1024 - 262_144 + 4_000


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


def _cache(cache_dir: Path) -> ObjectCache:
    return ObjectCache(cache_dir / "objects")


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


def test_object_cache_compiles_an_unchanged_source_once(tmp_path: Path) -> None:
    lib = write_library(tmp_path / "Tiny", {"Hello": (HELLO_SKETCH, HELLO_EXPECTED)})
    cache_root = tmp_path / "cache"
    plan = plan_build(lib, "Hello")
    # the core; the sketch; calc.c, Tiny.cpp
    total = CORE_OBJECTS + 1 + 2

    first = ObjectCache(cache_root)
    assert compile_example(GCC_ARM, plan, tmp_path / "b1", first).build.ok
    assert (first.stats.hits, first.stats.misses) == (0, total)

    second = ObjectCache(cache_root)
    built = compile_example(GCC_ARM, plan, tmp_path / "b2", second)
    assert built.build.ok and (built.build.compiled, built.build.reused) == (0, total)
    assert (second.stats.hits, second.stats.misses) == (0 + total, 0)

    # The same library in another folder (another checkout of the same ref) reuses all.
    copy = tmp_path / "elsewhere" / "Tiny"
    shutil.copytree(lib, copy)
    third = ObjectCache(cache_root)
    assert compile_example(GCC_ARM, plan_build(copy, "Hello"), tmp_path / "b3", third).build.ok
    assert (third.stats.hits, third.stats.misses) == (total, 0)

    # A changed header recompiles exactly its includers: calc.c, Tiny.cpp, the sketch.
    header = lib / "src/util/calc.h"
    header.write_text(header.read_text() + "int unused_decl(void);\n")
    fourth = ObjectCache(cache_root)
    assert compile_example(GCC_ARM, plan, tmp_path / "b4", fourth).build.ok
    assert (fourth.stats.hits, fourth.stats.misses) == (CORE_OBJECTS, 3)

    # Other flags (the host build) are other objects.
    fifth = ObjectCache(cache_root)
    assert compile_example(HOST, plan, tmp_path / "b5", fifth).build.ok
    assert (fifth.stats.hits, fifth.stats.misses) == (0, HOST_CORE_OBJECTS + 1 + 2)


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
          printf("stdout %zu %s\\n", (size_t)42, "done");
          fflush(stdout);
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


def test_cli_exit_code_json_and_step_summary(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lib = write_library(
        tmp_path / "Tiny",
        {
            "Hello": (HELLO_SKETCH, HELLO_EXPECTED),
            "Wrong": (HELLO_SKETCH.replace("twice(21)", "twice(2)"), HELLO_EXPECTED),
        },
    )
    summary = tmp_path / "summary.md"
    summary.write_text("# before\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    out_json = tmp_path / "report.json"
    common = ["--compiler", "gcc-arm", "--cache-dir", str(cache_dir), "--json", str(out_json)]

    assert main(["check", str(lib), "--example", "Hello", *common]) == 0
    data = json.loads(out_json.read_text())
    assert data["passed"] is True
    assert [e["example"] for e in data["examples"]] == ["Hello"]
    umask = os.umask(0o022)
    os.umask(umask)
    assert out_json.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's private 0600
    assert summary.read_text().startswith("# before\n## Library check: ✅ passed")

    assert main(["check", str(lib), *common]) == 1
    data = json.loads(out_json.read_text())
    assert [e["example"] for e in data["examples"]] == ["Hello", "Wrong"]
    assert [e["passed"] for e in data["examples"]] == [True, False]

    # Without the run, the wrong output goes unseen: compile and sizes pass.
    assert main(["check", str(lib), "--example", "Wrong", "--no-run", *common]) == 0
    stages = json.loads(out_json.read_text())["examples"][0]["stages"]
    assert [s["stage"] for s in stages] == ["compile", "sizes"]

    with pytest.raises(SystemExit) as exc:
        main(["check", str(lib), "--example", "Nope", *common])
    assert exc.value.code == 1


@pytest.mark.skipif(shutil.which("arduino-cli") is not None, reason="arduino-cli is installed")
def test_auto_is_gcc_arm_without_arduino_cli() -> None:
    assert select_toolchain("auto") is GCC_ARM
    with pytest.raises(FatalError, match="arduino-cli is not installed"):
        select_toolchain("arduino-cli")
    with pytest.raises(FatalError, match="unknown compiler 'clang'"):
        select_toolchain("clang")


def test_expected_yaml_reader(tmp_path: Path) -> None:
    (tmp_path / "expected.yaml").write_text(
        "must_print: [a]\narena: true\ntimeout_seconds: 5\n"
        "values: [{line_regex: '^x=(\\S+)$', equals: 8.95, tolerance: 0.01}]\n"
    )
    got = read_expected(tmp_path)
    assert got == Expected(("a",), (), True, 5.0, (ValueCheck("^x=(\\S+)$", 8.95, 0.01),))
    (tmp_path / "expected.yaml").write_text("must_print: a\n")
    with pytest.raises(FatalError, match="must be a list of strings"):
        read_expected(tmp_path)
    (tmp_path / "expected.yaml").write_text("must_prnt: [a]\n")
    with pytest.raises(FatalError, match="unknown keys"):
        read_expected(tmp_path)
    with pytest.raises(FatalError, match="is missing"):
        read_expected(tmp_path / "nowhere")


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


def test_depfile_and_overflow_parsing() -> None:
    text = "out.o: src/a.cpp src/b\\ c.h \\\n /usr/include/x.h\nsrc/b\\ c.h:\n"
    assert parse_depfile(text) == ["src/a.cpp", "src/b c.h", "/usr/include/x.h"]
    log = "ld: fw.elf section `.text' will not fit in region `FLASH'\n"
    log += "ld: region `FLASH' overflowed by 140376 bytes\n"
    assert overflows(log) == {"FLASH": 140376}


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


# ---- review findings (issue 3): bounded output, nothing-checked, cache, yaml, errors ----


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
    for stage_name, run in zip(("run", "sanitize"), example.runs, strict=True):
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


def test_a_relative_cache_dir_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lib = write_library(tmp_path / "Tiny", {"Hello": (HELLO_SKETCH, HELLO_EXPECTED)})
    monkeypatch.chdir(tmp_path)
    argv = ["check", "Tiny", "--compiler", "gcc-arm", "--cache-dir", "rel-cache", "--no-run"]
    assert main(argv) == 0, capsys.readouterr().out
    assert len(list((tmp_path / "rel-cache/objects/o").rglob("*.o"))) == CORE_OBJECTS + 3
    assert lib.is_dir()


SHADOW_SKETCH = textwrap.dedent(
    """\
    #include "shadow.h"
    void setup() { Serial.print("shadow "); Serial.println(SHADOW); }
    void loop() {}
    """
)


def test_a_new_header_that_shadows_another_recompiles(tmp_path: Path) -> None:
    lib = write_library(tmp_path / "Tiny", {"Shadow": (SHADOW_SKETCH, HELLO_EXPECTED)})
    (lib / "src/shadow.h").write_text("#define SHADOW 1\n")
    cache_root = tmp_path / "cache"
    plan = plan_build(lib, "Shadow")
    first = ObjectCache(cache_root)
    assert compile_example(GCC_ARM, plan, tmp_path / "b1", first).build.ok
    assert first.stats.misses == CORE_OBJECTS + 3

    # Found first on the sketch's include path (examples/Shadow before src): a new object.
    (lib / "examples/Shadow/shadow.h").write_text("#define SHADOW 2\n")
    second = ObjectCache(cache_root)
    built = compile_example(HOST, plan, tmp_path / "h", second)
    assert built.build.binary is not None
    from generator.check.run import run_host

    assert "shadow 2" in run_host(built.build.binary, 30).lines
    third = ObjectCache(cache_root)
    assert compile_example(GCC_ARM, plan, tmp_path / "b3", third).build.ok
    # Only the sketch has examples/Shadow on its include path; the library's objects stay.
    assert (third.stats.hits, third.stats.misses) == (CORE_OBJECTS + 2, 1)


def test_a_corrupt_cached_object_is_compiled_again(tmp_path: Path) -> None:
    lib = write_library(tmp_path / "Tiny", {"Hello": (HELLO_SKETCH, HELLO_EXPECTED)})
    cache_root = tmp_path / "cache"
    plan = plan_build(lib, "Hello")
    assert compile_example(GCC_ARM, plan, tmp_path / "b1", ObjectCache(cache_root)).build.ok
    objects = sorted((cache_root / "o").rglob("*.o"))
    assert len(objects) == CORE_OBJECTS + 3
    objects[0].write_bytes(b"")  # truncated to nothing
    objects[1].write_bytes(b"garbage, not an object")
    again = ObjectCache(cache_root)
    assert compile_example(GCC_ARM, plan, tmp_path / "b2", again).build.ok
    assert (again.stats.hits, again.stats.misses) == (CORE_OBJECTS + 1, 2)
    assert objects[0].read_bytes()[:4] == objects[1].read_bytes()[:4] == b"\x7fELF"


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
    for name in ("run", "sanitize"):
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


def test_program_output_cannot_close_the_report_code_block() -> None:
    from generator.check.report import code_fence

    out = RunOutput("emulated", ["```", "# Injected heading", "`````x"], done=True)
    stage = judge_run(out, Expected(("missing",)), "run")
    example = ExampleReport("Hello", stages=[stage])
    markdown = CheckReport(Path("/lib"), "gcc-arm", "UNO Q", examples=[example]).to_markdown()
    assert code_fence(stage.details) == "``````"
    block = markdown.split("  ``````\n")
    assert len(block) == 3  # opened and closed once, by the six-backtick fence
    assert "  # Injected heading\n" in block[1] and "  ```\n" in block[1]
    assert code_fence("no ticks") == "```"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("must_print: [a]\ntimeout_seconds: .nan\n", "`timeout_seconds` must be a finite number"),
        ("must_print: [a]\ntimeout_seconds: .inf\n", "`timeout_seconds` must be a finite number"),
        ("must_print: [a]\ntimeout_seconds: true\n", "`timeout_seconds` must be a finite number"),
        ("must_print: [a]\ntimeout_seconds: '5'\n", "`timeout_seconds` must be a finite number"),
        ("must_print: [a]\ntimeout_seconds: 0\n", "`timeout_seconds` must be a positive"),
        ("must_print: [a]\narena: 'no'\n", "`arena` must be true or false, not 'no'"),
        ("must_print: [a]\narena: 1\n", "`arena` must be true or false, not 1"),
        ("must_print: [a]\nvalues: 5\n", "`values` must be a list of mappings"),
        ("must_print: [a]\nvalues: [5]\n", "`values` must be a list of mappings"),
        ("must_print: [a]\nvalues: [{line_regex: x}]\n", "`values[0]` needs line_regex and"),
        (
            "must_print: [a]\nvalues: [{line_regex: '(', equals: 1}]\n",
            "`values[0].line_regex` is not a valid regex",
        ),
        (
            "must_print: [a]\nvalues: [{line_regex: x, equals: .nan}]\n",
            "`values[0].equals` must be a finite number",
        ),
        (
            "must_print: [a]\nvalues: [{line_regex: x, equals: '8.95'}]\n",
            "`values[0].equals` must be a finite number, not '8.95'",
        ),
        (
            "must_print: [a]\nvalues: [{line_regex: x, equals: false}]\n",
            "`values[0].equals` must be a finite number",
        ),
        (
            "must_print: [a]\nvalues: [{line_regex: x, equals: 1, tolerance: -0.1}]\n",
            "`values[0].tolerance` must be >= 0",
        ),
        (
            "must_print: [a]\nvalues: [{line_regex: x, equals: 1, tolerance: .inf}]\n",
            "`values[0].tolerance` must be a finite number",
        ),
        ("must_not_print: [x]\n", "`must_print` is required: list the lines"),
        ("must_print: []\n", "`must_print` must list at least one line"),
        ("must_print: [1, 2]\n", "`must_print` must be a list of strings"),
        ("\n", "`must_print` is required: list the lines"),
    ],
)
def test_expected_yaml_rejects_bad_values(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "expected.yaml").write_text(text)
    with pytest.raises(FatalError) as exc:
        read_expected(tmp_path)
    assert str(exc.value).startswith(f"{tmp_path / 'expected.yaml'}: ")
    assert message in str(exc.value)


def test_expected_yaml_that_is_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "expected.yaml").write_bytes("must_print: ['caf\xe9']\n".encode("latin-1"))
    with pytest.raises(FatalError, match="expected.yaml is not UTF-8 text"):
        read_expected(tmp_path)


def test_a_nan_value_never_passes() -> None:
    expected = Expected(("=== DONE ===",), values=(ValueCheck(r"^x=(\S+)$", 1.0, 1e9),))
    nan = RunOutput("emulated", ["x=nan", "=== DONE ==="], done=True)
    result = judge_run(nan, expected, "run")
    assert result.status is Status.FAIL
    assert result.summary.endswith("value nan (line '^x=(\\\\S+)$') is not 1.0 ± 1000000000.0")


def _cli_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err
    return err


def test_cli_errors_instead_of_tracebacks(
    tmp_path: Path,
    cache_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    lib = write_library(tmp_path / "Tiny", {"Hello": (HELLO_SKETCH, HELLO_EXPECTED)})
    common = ["check", str(lib), "--compiler", "gcc-arm", "--no-run"]
    cached = [*common, "--cache-dir", str(cache_dir)]

    folder = tmp_path / "a-folder"
    folder.mkdir()
    assert "is a folder; pass a file name" in _cli_error([*cached, "--json", str(folder)], capsys)
    assert "cannot write it" in _cli_error([*cached, "--json", "/proc/self/check.json"], capsys)
    assert list(folder.iterdir()) == []

    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    err = _cli_error([*common, "--cache-dir", str(a_file)], capsys)
    assert f"--cache-dir {a_file} is a file" in err

    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(folder))
    err = _cli_error(cached, capsys)
    assert f"GITHUB_STEP_SUMMARY={folder}: cannot append the report" in err
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")

    (lib / "examples/Hello/expected.yaml").write_text("must_print: [a]\nvalues: 5\n")
    assert "`values` must be a list of mappings" in _cli_error(cached, capsys)
    (lib / "examples/Hello/expected.yaml").write_bytes(b"must_print: ['\xff']\n")
    assert "expected.yaml is not UTF-8 text" in _cli_error(cached, capsys)
    (lib / "examples/Hello/expected.yaml").write_text(HELLO_EXPECTED)
    (lib / "examples/Hello/Hello.ino").write_bytes(
        HELLO_SKETCH.replace("=== Hello ===", "=== H\xe9llo ===").encode("latin-1")
    )
    assert "Hello.ino is not UTF-8 text" in _cli_error(cached, capsys)


def _qemu_children(pid: int) -> list[int]:
    """Pids of qemu-system-arm processes whose parent is `pid` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name = text[text.index("(") + 1 : text.rindex(")")]
        ppid = int(text[text.rindex(")") + 2 :].split()[1])
        if ppid == pid and name.startswith("qemu-system-arm"):
            found.append(int(stat.parent.name))
    return found


def test_sigterm_stops_the_check_and_its_qemu(tmp_path: Path, cache_dir: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    sketch = 'void setup() { Serial.println("=== Wait ==="); }\nvoid loop() { delay(10); }\n'
    lib = write_library(tmp_path / "Tiny", {"Wait": (sketch, 'must_print: ["x"]\n')})
    argv = [sys.executable, "-m", "generator", "check", str(lib), "--compiler", "gcc-arm"]
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen(
        [*argv, "--cache-dir", str(cache_dir)],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        qemu: list[int] = []
        for _ in range(1200):  # the compile comes first; QEMU then waits 60 s for DONE
            qemu = _qemu_children(proc.pid)
            if qemu or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert qemu, "qemu-system-arm never started"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM
    assert err.strip().splitlines()[-1] == "error: stopped by SIGTERM"
    assert "Traceback" not in err
    for pid in qemu:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


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
        for name, run in zip(("run", "sanitize"), example.runs, strict=True):
            stage = example.stage(name)
            assert stage is not None and stage.status is Status.FAIL, example.name
            assert stage.summary.endswith(
                "printed 'ERROR:' in a line longer than 500 characters (past the part kept)"
            )
            assert run.lines[0] == "a" * 500 + " [line cut at 500 characters]"
