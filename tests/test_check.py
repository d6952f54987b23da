"""`check` stages 2-5 for real: arm-none-eabi GCC, QEMU mps2-an505, host ASan/UBSan.

Every library and sketch here is written by the test into tmp_path; no ExecuTorch sources
are needed. Objects are shared through one cache per test session, except where the
cache itself is under test.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from generator.boards import UNO_Q
from generator.check import run_check
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
    (root / "library.properties").write_text("name=Tiny\nversion=0.0.1\n")
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
    # core: Print.cpp, main.cpp, new.cpp, mps2_an505.c, printf_c99.c; sketch; calc.c, Tiny.cpp
    total = 5 + 1 + 2

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
    assert (fourth.stats.hits, fourth.stats.misses) == (5, 3)

    # Other flags (the host build) are other objects.
    fifth = ObjectCache(cache_root)
    assert compile_example(HOST, plan, tmp_path / "b5", fifth).build.ok
    assert (fifth.stats.hits, fifth.stats.misses) == (0, 3 + 1 + 2)


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
          Serial.printf("printf %zu of %zu bytes%c", (size_t)3000, (size_t)4096, '\\n');
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
