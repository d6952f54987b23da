"""The vendored CMSIS-NN's patch (generator/pipeline/cmsis_nn_patches.py): the left shifts of
signed values in arm_elementwise_add_s8.c become defined arithmetic with the same bits."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from et_fixture import ADD_S8

from generator.pipeline import cmsis_nn_patches
from generator.pipeline.cmsis_nn_patches import ELEMENTWISE_ADD_S8, UPSTREAM_REPORTS, add_s8_shift
from generator.pipeline.patches import PATCHES
from generator.util.errors import FatalError


def _library(tmp_path: Path, text: str = ADD_S8) -> Path:
    path = tmp_path / ELEMENTWISE_ADD_S8
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return tmp_path


def test_the_shifts_become_a_multiplication_and_unsigned_shifts(tmp_path: Path) -> None:
    lib = _library(tmp_path)
    assert add_s8_shift(lib) == [ELEMENTWISE_ADD_S8]
    text = (lib / ELEMENTWISE_ADD_S8).read_text()
    assert "<< left_shift;" not in text
    assert "        input_1 = (*input_1_vect++ + input_1_offset) * (1 << left_shift);\n" in text
    assert "        input_2 = (*input_2_vect++ + input_2_offset) * (1 << left_shift);\n" in text
    assert "        input_1 = (int32_t)((uint32_t)(b_1 & 0x0FFFF) << left_shift);\n" in text
    assert "        input_2 = (int32_t)((uint32_t)((a_2 >> 16) & 0x0FFFF) << left_shift);\n" in text
    assert text.count("(int32_t)((uint32_t)(") == 8
    # Nothing else changed: the same lines, the same lines untouched.
    before, after = ADD_S8.splitlines(), text.splitlines()
    assert len(before) == len(after)
    assert sum(b != a for b, a in zip(before, after, strict=True)) == 10


def test_applying_twice_changes_nothing(tmp_path: Path) -> None:
    lib = _library(tmp_path)
    add_s8_shift(lib)
    once = (lib / ELEMENTWISE_ADD_S8).read_text()
    assert add_s8_shift(lib) == []
    assert (lib / ELEMENTWISE_ADD_S8).read_text() == once


def test_a_ref_without_cmsis_nn_is_left_alone(tmp_path: Path) -> None:
    assert add_s8_shift(tmp_path) == []


def test_a_cmsis_nn_without_the_s8_add_names_the_patch(tmp_path: Path) -> None:
    (tmp_path / cmsis_nn_patches.CMSIS_NN_DIR).mkdir(parents=True)
    with pytest.raises(
        FatalError, match="cmsis-nn-add-shift no longer applies: .*arm_elementwise_add_s8.c is"
    ):
        add_s8_shift(tmp_path)


@pytest.mark.parametrize(
    ("old", "new", "counts"),
    [
        # Upstream fixed the scalar loop its own way: the DSP loop alone is no longer our patch.
        (
            "(*input_1_vect++ + input_1_offset) << left_shift",
            "(*input_1_vect++ + input_1_offset) * 1048576",
            "has 1 of the 2 .* and 8 of the 8",
        ),
        ("(a_1 & 0x0FFFF) << left_shift", "(int16_t)a_1 << left_shift", "has 2 of the 2 .* 7 of"),
    ],
)
def test_a_changed_line_fails_naming_what_is_missing(
    tmp_path: Path, old: str, new: str, counts: str
) -> None:
    assert old in ADD_S8
    lib = _library(tmp_path, ADD_S8.replace(old, new))
    with pytest.raises(FatalError, match=f"cmsis-nn-add-shift no longer applies: .*{counts}"):
        add_s8_shift(lib)
    assert (lib / ELEMENTWISE_ADD_S8).read_text() == ADD_S8.replace(old, new)


def test_the_patch_is_in_the_patch_step_before_the_renames() -> None:
    names = [p.name for p in PATCHES]
    assert names.index("cmsis-nn-add-shift") < names.index("unique-object-names")
    (patch,) = [p for p in PATCHES if p.name == "cmsis-nn-add-shift"]
    assert patch.apply is add_s8_shift
    assert "lines 208-209 at dbf45dbfcc51" in patch.why
    report = UPSTREAM_REPORTS[patch.name]
    assert report.startswith("### arm_elementwise_add_s8: left shift of a negative value")
    assert "input_1 = (*input_1_vect++ + input_1_offset) << left_shift;" in report


#: A main calling the fixture function (et_fixture.ADD_S8) with the halfwords of HALFWORDS,
#: packed as SADD16 leaves them, inputs -1 and -128 and offsets 0 and 5: (int8 + offset) sums.
_MAIN = """\
#include <stdint.h>
#include <stdio.h>
#define PACK(l, h) ((int32_t)((((uint32_t)(h) & 0xFFFFu) << 16) | ((uint32_t)(l) & 0xFFFFu)))
int32_t add_s8(const int8_t *, const int8_t *, int32_t, int32_t, int32_t, int32_t, int32_t,
               int32_t, int32_t);
int main(void) {{
    const int8_t in_1[] = {{-1}}, in_2[] = {{-128}};
    printf("%ld\\n", (long)add_s8(in_1, in_2, 0, 5, PACK({a_1}), PACK({b_1}), PACK({a_2}),
                                  PACK({b_2}), 20));
    return 0;
}}
"""
LEFT_SHIFT = 20
#: (low, high) halfwords of a_1, b_1, a_2, b_2: negative ones (the DSP loop's undefined shift
#: comes first), or none (the scalar loop's comes first).
HALFWORDS = {
    "negative halfwords": {"a_1": (-3, 7), "b_1": (-255, 255), "a_2": (0, -1), "b_2": (-128, 100)},
    "positive halfwords": {"a_1": (3, 7), "b_1": (0, 255), "a_2": (1, 2), "b_2": (128, 100)},
}
#: What UBSan reports first in the unpatched file, per case: line 7 of ADD_S8 is the first
#: halfword shift, (b_1 & 0x0FFFF) with b_1's low half -255 (0xFF01 = 65281); line 19 is the
#: scalar loop's first shift (upstream's line 208).
UBSAN = {
    "negative halfwords": ":7:35: runtime error: left shift of 65281 by 20 places cannot be "
    "represented in type 'int'",
    "positive halfwords": ":19:54: runtime error: left shift of negative value -1",
}


def _wrap(value: int) -> int:
    """`value` as a 32-bit two's-complement int32_t."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _expected(words: dict[str, tuple[int, int]]) -> int:
    """What the fixture function returns: each halfword's bits and each scalar sum shifted
    left by 20 in 32-bit two's complement (what the Cortex-M's LSL gives), summed with
    wrap-around."""
    total = 0
    for letter, half in (("b", 0), ("b", 1), ("a", 0), ("a", 1)):
        for n in (1, 2):
            total = _wrap(total + _wrap((words[f"{letter}_{n}"][half] & 0xFFFF) << LEFT_SHIFT))
    return _wrap(total + _wrap((-1 + 0) << LEFT_SHIFT) + _wrap((-128 + 5) << LEFT_SHIFT))


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs the host's gcc (UBSan)")
@pytest.mark.parametrize("case", sorted(HALFWORDS))
@pytest.mark.parametrize("patched", [False, True])
def test_under_ubsan_the_patched_shifts_are_defined_and_give_the_same_bits(
    tmp_path: Path, patched: bool, case: str
) -> None:
    lib = _library(tmp_path / "lib")
    if patched:
        add_s8_shift(lib)
    words = HALFWORDS[case]
    args = {name: f"{low}, {high}" for name, (low, high) in words.items()}
    (tmp_path / "main.c").write_text(_MAIN.format(**args))
    exe = tmp_path / "add"
    sources = [str(lib / ELEMENTWISE_ADD_S8), str(tmp_path / "main.c")]
    flags = ["-O1", "-fsanitize=undefined", "-fno-sanitize-recover=all"]
    subprocess.run(["gcc", *flags, "-o", str(exe), *sources], check=True, capture_output=True)
    proc = subprocess.run([str(exe)], capture_output=True, text=True, check=False)
    if patched:
        assert (proc.returncode, proc.stderr) == (0, "")
        assert int(proc.stdout) == _expected(words)
    else:
        assert proc.returncode != 0
        assert f"arm_elementwise_add_s8.c{UBSAN[case]}" in proc.stderr
