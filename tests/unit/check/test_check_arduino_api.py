"""`check` builds sketches against the Arduino API the UNO Q's core uses (ArduinoCore-API).

A sketch that uses String, Stream/Print overloads, PinStatus and the API's global min/max
templates next to ExecuTorch's headers compiles and prints the same on the emulated board and
on the host; a sketch that uses what the board's Serial lacks fails to compile, as on the
board; and the vendored API is byte for byte the pinned upstream files.

The CI tests give the sketch a stand-in `ExecuTorch.h`: the library template's own header with
its ExecuTorch includes replaced by the C++ standard headers the runtime's headers include
(real ExecuTorch needs upstream sources). The e2e test runs the same sketch in the library
generated from real ExecuTorch main.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import textwrap
from pathlib import Path

import pytest
import yaml
from check_fixtures import TOOLS, write_library

from generator import data_dir
from generator.check.run import run_check
from generator.check.stages import Status
from generator.pipeline.board_check import BOARD_CHECK, board_check_header
from generator.pipeline.run import BuildResult
from generator.toolchain.gcc import API_DIR, API_SOURCES, CORE_INCLUDES, CORE_SOURCES

needs_tools = pytest.mark.skipif(
    any(shutil.which(t) is None for t in TOOLS),
    reason="needs gcc-arm-none-eabi, libnewlib-arm-none-eabi, "
    "libstdc++-arm-none-eabi-newlib, qemu-system-arm and gcc/g++",
)

#: The C++ standard headers the ExecuTorch runtime's headers include (main, cff6f4dd).
RUNTIME_STD_HEADERS = (
    *("algorithm", "array", "bit", "cassert", "cinttypes", "climits", "cmath", "complex"),
    *("cstdarg", "cstddef", "cstdint", "cstdio", "cstdlib", "cstring", "exception"),
    *("functional", "iosfwd", "iterator", "limits", "new", "optional", "ostream"),
    *("string_view", "tuple", "type_traits", "utility", "variant", "vector"),
)

#: What the runtime's headers give the sketch here, so it also compiles in the real library.
ERROR_STAND_IN = textwrap.dedent(
    """\
    namespace executorch {
    namespace runtime {
    enum class Error : uint32_t { Ok = 0 };
    }  // namespace runtime
    }  // namespace executorch
    """
)

# Compiled after ExecuTorch.h, as a sketch of the library is.
API_SKETCH = textwrap.dedent(
    """\
    #include <ExecuTorch.h>

    #if defined(HIGH) || defined(LOW)
    #error "HIGH and LOW are PinStatus enumerators in the Arduino API, not macros"
    #endif

    void setup() {
      Serial.begin(115200);
      Serial.println("=== ArduinoApi ===");
      String s = String("pi=") + String(3.5f, 2);
      s += ' ';
      s += 42;
      Serial.println(s);
      Serial.print(String("length "));
      Serial.println(s.length());
      Serial.println(1.5, 3);
      Serial.print("hex ");
      Serial.print(0xBEEFu, HEX);
      Serial.print(' ');
      uint8_t b = 0x2a;
      Serial.println(b, HEX);
      digitalWrite(LED_BUILTIN, HIGH);
      PinStatus st = LOW;
      Serial.print("pin ");
      Serial.println(st == LOW ? "low" : "high");
      Serial.print("min ");
      Serial.print(min(3, 7));
      Serial.print(" max ");
      Serial.print(max(2.5f, 1.5f));
      Serial.print(" std ");
      Serial.println(std::min<long>(4, 9));
      Stream& stream = Serial;
      stream.print("stream ");
      stream.println(s.indexOf('4'));
      executorch::runtime::Error e = executorch::runtime::Error::Ok;
      Serial.print("error ");
      Serial.println(static_cast<int>(e));
      Serial.println("=== DONE ===");
    }

    void loop() { delay(100); }
    """
)
API_LINES = [
    "=== ArduinoApi ===",
    "pi=3.50 42",
    "length 10",
    "1.500",
    "hex BEEF 2A",
    "pin low",
    "min 3 max 2.50 std 4",
    "stream 8",
    "error 0",
    "=== DONE ===",
]
API_EXPECTED = "must_print:\n" + "".join(f'  - "{line}"\n' for line in API_LINES)


def stand_in_executorch_h() -> str:
    """The library template's ExecuTorch.h, its ExecuTorch includes replaced (see above)."""
    template = (data_dir("library_template") / "src" / "ExecuTorch.h").read_text(encoding="utf-8")
    includes = re.findall(r"^#include <executorch/.*>\n", template, flags=re.MULTILINE)
    assert includes, "the template's ExecuTorch.h no longer includes the runtime"
    std = "".join(f"#include <{h}>\n" for h in RUNTIME_STD_HEADERS)
    text = template.replace(includes[0], std + "#include <stdint.h>\n" + ERROR_STAND_IN)
    for line in includes[1:]:
        text = text.replace(line, "")
    # ETModel.h needs the whole runtime: this stand-in library has none of it.
    etmodel = '#include "ETModel.h"\n'
    assert etmodel in text, "the template's ExecuTorch.h no longer includes ETModel.h"
    return text.replace(etmodel, "")


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("api-cache")


@needs_tools
def test_arduino_api_sketch_next_to_executorch_runs(tmp_path: Path, cache_dir: Path) -> None:
    lib = write_library(tmp_path / "Tiny", {"ArduinoApi": (API_SKETCH, API_EXPECTED)})
    (lib / "src/ExecuTorch.h").write_text(stand_in_executorch_h())
    (lib / BOARD_CHECK).write_text(board_check_header())  # what the build writes beside it
    report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir)

    assert report.passed, report.to_markdown()
    emulated, dynamic, host = report.examples[0].runs
    assert (emulated.kind, dynamic.kind, host.kind) == ("emulated", "dynamic", "host")
    # The same lines, in order, on the emulated Cortex-M33 (static and Dynamic) and under
    # the sanitizers.
    assert emulated.lines == dynamic.lines == host.lines == API_LINES


@needs_tools
def test_what_the_boards_serial_lacks_does_not_compile(tmp_path: Path, cache_dir: Path) -> None:
    # The UNO Q's Serial is an arduino::HardwareSerial (a Stream): it has no printf.
    sketch = 'void setup() { Serial.printf("%d\\n", 1); }\nvoid loop() {}\n'
    lib = write_library(tmp_path / "Tiny", {"Printf": (sketch, API_EXPECTED)})
    report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir)

    compile_stage = report.examples[0].stage("compile")
    assert compile_stage is not None and compile_stage.status is Status.FAIL
    assert "has no member named 'printf'" in compile_stage.details


def _git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def test_vendored_api_is_the_pinned_upstream_files() -> None:
    vendored = data_dir("vendored")
    description = yaml.safe_load((vendored / "arduinocore-api.yaml").read_text(encoding="utf-8"))
    assert description["role"] == "check-core"
    assert description["url"] == "https://github.com/arduino/ArduinoCore-API.git"
    assert description["pin"] == {
        "kind": "fixed",
        "tag": "1.5.2",
        "commit": "cd91833d90b4fe50e428021ba5051e2b7ceafc84",
        "date": "2025-09-29",
    }
    # The committed copy is the folder the core compiles against, and holds exactly `blobs`.
    assert vendored / description["tree"] == API_DIR
    listed: dict[str, str] = description["blobs"]
    on_disk = {p.relative_to(API_DIR).as_posix() for p in API_DIR.rglob("*") if p.is_file()}
    assert set(listed) == on_disk
    for path, blob in sorted(listed.items()):
        assert re.fullmatch(r"[0-9a-f]{40}", blob), path
        assert _git_blob_id((API_DIR / path).read_bytes()) == blob, f"{path} differs from upstream"
    assert description["license_file"] in listed
    assert set(description["license_exceptions"]) <= set(listed)
    # What the core compiles and includes is in the vendored tree.
    assert API_DIR in CORE_INCLUDES and (API_DIR / "api/ArduinoAPI.h").is_file()
    assert all(p.is_file() for p in CORE_SOURCES)
    assert {
        p.relative_to(API_DIR).as_posix() for p in CORE_SOURCES if p.is_relative_to(API_DIR)
    } == {f"api/{name}" for name in API_SOURCES}


@pytest.mark.e2e
def test_arduino_api_sketch_runs_in_the_real_library(
    real_main: BuildResult, tmp_path: Path
) -> None:
    lib = tmp_path / "ExecuTorch"
    shutil.copytree(real_main.out, lib)
    folder = lib / "examples/ArduinoApi"
    folder.mkdir()
    (folder / "ArduinoApi.ino").write_text(API_SKETCH)
    (folder / "expected.yaml").write_text(API_EXPECTED)
    report = run_check(lib, examples=["ArduinoApi"], compiler="gcc-arm")

    (example,) = report.examples
    # Every stage of the example passes (the library-wide lint is not this test's concern).
    assert all(s.status is not Status.FAIL for s in example.stages), report.to_markdown()
    emulated, dynamic, host = example.runs
    assert emulated.lines == dynamic.lines == host.lines == API_LINES
