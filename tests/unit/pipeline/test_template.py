"""Static checks of library_template/: our C++ copied into every generated library.

Nothing here needs ExecuTorch sources; compiling and running the sketches is the
end-to-end tests' job.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.library.layout import EXAMPLE_EXPECT_FILE, EXAMPLES, PLATFORM_DIR

TEMPLATE = Path(__file__).resolve().parents[3] / "data" / "library_template"
PAL = TEMPLATE / PLATFORM_DIR / "arduino_pal.cpp"

#: The functions a platform layer defines: every `et_pal_*` declared in ExecuTorch's
#: runtime/platform/platform.h (identical at d756e7d8c2, v1.0.0 and main cff6f4dd32).
PAL_FUNCTIONS = (
    "et_pal_init",
    "et_pal_abort",
    "et_pal_current_ticks",
    "et_pal_ticks_to_ns_multiplier",
    "et_pal_emit_log_message",
    "et_pal_allocate",
    "et_pal_free",
)

#: What an expected.yaml may say (the checker implements exactly these keys).
EXPECT_KEYS = {"must_print", "must_not_print", "arena", "timeout_seconds", "values"}
VALUE_KEYS = {"line_regex", "equals", "tolerance"}

#: Headers a sketch may include: the library's public ones, the files the generator
#: puts beside it, and a few C++ standard headers.
SKETCH_LIBRARY_HEADERS = {"ExecuTorch.h", "ETModel.h"}
SKETCH_STANDARD_HEADERS = {"cstddef", "cstdint", "cstdio", "cstdlib", "cstring"}
SKETCH_LOCAL_HEADER = re.compile(r"model\.h|mfcc_[a-z]+\.h")

#: The class labels of the KeywordSpotting model, in output order. Its output is
#: [1, 12] (decoded from tests/fixtures/pte/executorch-cff6f4dd/KeywordSpotting.pte
#: with flatc and program.fbs): silence and unknown come before the ten keywords.
KWS_LABELS = ["silence", "unknown", "yes", "no", "up", "down"]
KWS_LABELS += ["left", "right", "on", "off", "stop", "go"]

SPDX_HEADER = (
    "// SPDX-License-Identifier: BSD-3-Clause\n"
    "// Part of the ExecuTorch Arduino library generator.\n"
)

#: printf length modifier z (size_t): newlib-nano's printf does not implement it and
#: then reads the wrong argument.
PRINTF_Z = re.compile(r"%[-+ #0-9.*]*z")


def _strip_comments(source: str) -> str:
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.DOTALL)
    return re.sub(r"//[^\n]*", "", source)


def _sketch(name: str) -> Path:
    return TEMPLATE / "examples" / name / f"{name}.ino"


def _expected(name: str) -> dict[str, Any]:
    data = yaml.safe_load((TEMPLATE / "examples" / name / EXAMPLE_EXPECT_FILE).read_text())
    assert isinstance(data, dict), f"{name}/{EXAMPLE_EXPECT_FILE} is not a mapping"
    return data


def _cpp_files() -> list[Path]:
    suffixes = {".h", ".c", ".cpp", ".ino"}
    return sorted(p for p in TEMPLATE.rglob("*") if p.suffix in suffixes)


def test_template_has_the_files_the_layout_promises() -> None:
    assert (TEMPLATE / "src" / "ExecuTorch.h").is_file()
    assert (TEMPLATE / "src" / "ETModel.h").is_file()
    assert PAL.is_file()
    assert sorted(p.name for p in (TEMPLATE / "examples").iterdir()) == sorted(EXAMPLES)


@pytest.mark.parametrize("path", _cpp_files(), ids=lambda p: p.name)
def test_sources_carry_our_header_only(path: Path) -> None:
    text = path.read_text()
    assert text.startswith(SPDX_HEADER)
    assert "Meta Platforms" not in text
    assert "Copyright" not in text


@pytest.mark.parametrize("path", _cpp_files(), ids=lambda p: p.name)
def test_no_size_t_printf_modifier(path: Path) -> None:
    assert PRINTF_Z.findall(_strip_comments(path.read_text())) == []


@pytest.mark.parametrize("name", EXAMPLES)
def test_expected_yaml_is_well_formed(name: str) -> None:
    expected = _expected(name)
    assert set(expected) <= EXPECT_KEYS
    must_print = expected["must_print"]
    assert isinstance(must_print, list) and must_print
    assert all(isinstance(line, str) and line == line.strip() for line in must_print)
    assert "=== DONE ===" in must_print
    assert expected.get("must_not_print") == ["ERROR:"]
    assert isinstance(expected.get("arena", False), bool)
    timeout = expected.get("timeout_seconds", 60)
    assert isinstance(timeout, int) and 0 < timeout <= 600
    for value in expected.get("values", []):
        assert set(value) == VALUE_KEYS
        assert re.compile(value["line_regex"]).groups >= 1
        assert isinstance(value["equals"], float | int)
        assert isinstance(value["tolerance"], float | int) and value["tolerance"] >= 0


def test_expected_values() -> None:
    assert "[1,2,3] + 1 = [2.00, 3.00, 4.00]" in _expected("AddModel")["must_print"]
    assert "Methods: 1" in _expected("HelloExecuTorch")["must_print"]
    kws = _expected("KeywordSpotting")
    assert "Detected: yes" in kws["must_print"]
    (value,) = kws["values"]
    match = re.search(value["line_regex"], "  [yes]=8.95")
    assert match is not None and float(match.group(1)) == value["equals"] == 8.95
    assert re.search(value["line_regex"], "  [no]=8.95") is None


@pytest.mark.parametrize("name", EXAMPLES)
def test_sketch_includes_only_library_and_generated_headers(name: str) -> None:
    source = _strip_comments(_sketch(name).read_text())
    includes = re.findall(r'#\s*include\s*([<"])([^>"]+)[>"]', source)
    assert includes
    for kind, header in includes:
        if kind == '"':
            assert SKETCH_LOCAL_HEADER.fullmatch(header), header
        else:
            assert header in SKETCH_LIBRARY_HEADERS | SKETCH_STANDARD_HEADERS, header


@pytest.mark.parametrize("name", EXAMPLES)
def test_sketch_prints_what_the_checker_needs(name: str) -> None:
    source = _strip_comments(_sketch(name).read_text())
    assert '"=== DONE ==="' in source
    assert '"ERROR: ' in source
    assert re.search(r'extern "C" void et_arduino_log\(const char\* \w+\)', source)
    assert '"ET| "' in source
    prints_arena = '"Arena: used "' in source
    assert prints_arena == _expected(name).get("arena", False)
    if prints_arena:
        assert "arenaUsed()" in source and "arenaSize()" in source
    loop = re.search(r"void loop\(\) \{(.*?)\n\}", source, flags=re.DOTALL)
    assert loop is not None and loop.group(1).strip() == "delay(1000);"


def test_keyword_spotting_labels_match_the_model() -> None:
    source = _sketch("KeywordSpotting").read_text()
    table = re.search(r"kLabels\[\] = \{(.*?)\};", source, flags=re.DOTALL)
    assert table is not None
    assert re.findall(r'"(\w+)"', table.group(1)) == KWS_LABELS
    assert '#include "mfcc_yes.h"' in source


def test_pal_defines_each_function_once() -> None:
    source = _strip_comments(PAL.read_text())
    for function in PAL_FUNCTIONS:
        definitions = re.findall(rf"\b{function}\([^;{{]*\)\s*\{{", source)
        assert len(definitions) == 1, function
    defined = set(re.findall(r"\b(et_pal_\w+)\([^;{]*\)\s*\{", source))
    assert defined == set(PAL_FUNCTIONS)


def test_pal_uses_the_arduino_api_only() -> None:
    source = _strip_comments(PAL.read_text())
    assert "#include <Arduino.h>" in source
    assert re.search(r"\bk_\w+\(", source) is None
    assert "zephyr" not in source.lower()
    for call in ("micros()", "malloc(", "free(", "noInterrupts()"):
        assert call in source
    assert re.search(r'extern "C" ET_WEAK void et_arduino_log\(const char\* \w+\)', source)


def test_umbrella_header_keeps_the_published_contract() -> None:
    source = _strip_comments((TEMPLATE / "src" / "ExecuTorch.h").read_text())
    includes = re.findall(r"#include <([^>]+)>", source)
    assert includes[0] == "exception"
    assert set(includes[1:]) == {
        "executorch/extension/data_loader/buffer_data_loader.h",
        "executorch/runtime/core/memory_allocator.h",
        "executorch/runtime/executor/method.h",
        "executorch/runtime/executor/method_meta.h",
        "executorch/runtime/executor/program.h",
        "executorch/runtime/platform/runtime.h",
    }
    for define in (
        "#define C10_USING_CUSTOM_GENERATED_MACROS\n",
        "#define ET_ENABLE_DEPRECATED_CONSTANT_BUFFER 0\n",
        "#define FLATBUFFERS_MAX_ALIGNMENT 1024\n",
    ):
        assert define in source
    # The GCC guard is the generated header's (generator/pipeline/board_check.py), included
    # before any runtime header.
    first_include = source.index("#include <executorch/")
    assert 0 <= source.index('#include "executorch_board_check.h"') < first_include
    from generator.pipeline.board_check import board_check_header

    assert "__GNUC__ < 9" in board_check_header()
    for macro in ("abs", "min", "max", "round"):
        assert source.index(f"#undef {macro}\n") < first_include


def test_etmodel_keeps_the_published_api() -> None:
    source = _strip_comments((TEMPLATE / "src" / "ETModel.h").read_text())
    public = source.split(" public:", 1)[1].split(" private:", 1)[0]
    signatures = [
        r"ETModel\(\s*const uint8_t\* model_data,\s*size_t model_size,\s*uint8_t\* pool,"
        r"\s*size_t pool_size\)",
        r"bool begin\(\)",
        r"bool setInput\(size_t index, const float\* data, size_t count\)",
        r"bool run\(\)",
        r"const float\* output\(size_t index = 0\)",
        r"size_t outputCount\(size_t index = 0\)",
        r"int argmax\(size_t index = 0\)",
        r"const char\* error\(\) const",
        r"executorch::runtime::Program\* program\(\)",
        r"executorch::runtime::Method\* method\(\)",
        r"size_t arenaUsed\(\) const",
        r"size_t arenaSize\(\) const",
    ]
    for signature in signatures:
        assert re.search(signature, public), signature
