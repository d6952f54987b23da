"""Parts for the `check` tests: a tiny library the way Arduino compiles it (a C and a C++
source, a header in a subfolder, metadata that passes `lint`), a sketch that prints what the
emulated board and the host must show, and the tools the tests need (the session's object
cache is the `cache_dir` fixture of conftest.py).
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from generator.check.backends import GCC_ARM, HOST

TOOLS = ("arm-none-eabi-gcc", "arm-none-eabi-g++", "qemu-system-arm", "gcc", "g++")
#: Skips a test when one of TOOLS is missing (the check test files' `pytestmark`).
needs_tools = pytest.mark.skipif(
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
