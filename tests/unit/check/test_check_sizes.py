"""`check`'s compile and sizes stages against the UNO Q's budgets: a sketch over the flash
or the RAM fails the compile with the bytes over, read from the linker's messages.

Every library and sketch here is written by the test into tmp_path (check_fixtures.py); no
ExecuTorch sources are needed. Objects are shared through one cache per test session (the
`cache_dir` fixture of conftest.py).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from check_fixtures import needs_tools, write_library

from generator.check.backends import GCC_ARM
from generator.check.compile import compile_example, overflows, plan_build
from generator.check.run import run_check
from generator.check.stages import Status
from generator.toolchain.objcache import ObjectCache, parse_depfile

pytestmark = needs_tools


def _cache(cache_dir: Path) -> ObjectCache:
    return ObjectCache(cache_dir / "objects")


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


def test_depfile_and_overflow_parsing() -> None:
    text = "out.o: src/a.cpp src/b\\ c.h \\\n /usr/include/x.h\nsrc/b\\ c.h:\n"
    assert parse_depfile(text) == ["src/a.cpp", "src/b c.h", "/usr/include/x.h"]
    log = "ld: fw.elf section `.text' will not fit in region `FLASH'\n"
    log += "ld: region `FLASH' overflowed by 140376 bytes\n"
    assert overflows(log) == {"FLASH": 140376}
