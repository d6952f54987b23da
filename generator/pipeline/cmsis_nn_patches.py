"""The patches of the vendored CMSIS-NN (applied in step 8 with the others of patches.py).

CMSIS-NN is C: a left shift of a negative `int32_t`, or one whose result does not fit, is
undefined behaviour (C11 6.5.7p4), which the check's host run under UBSan reports and an
optimiser may exploit. Each patch here rewrites one such expression so it computes the
same bits by defined arithmetic, and carries the text of its upstream report
(`UPSTREAM_REPORTS`, Markdown, ready to paste into an issue of ARM-software/CMSIS-NN or a
pull request body).
"""

from __future__ import annotations

import re
from pathlib import Path

from generator.util.errors import FatalError

#: The CMSIS-NN pin of ExecuTorch cff6f4dd (backends/cortex_m/CMakeLists.txt,
#: CMSIS_NN_VERSION), where the lines below were read; CMSIS-NN main at 99f736a6
#: (2026-12) still has them.
CMSIS_NN_PIN = "dbf45dbfcc515421dd6099037d3e2637b90748c8"
#: The vendored CMSIS-NN (data/vendored/cmsis-nn.yaml) and the file the patch edits.
CMSIS_NN_DIR = "src/cmsis-nn"
ELEMENTWISE_ADD_S8 = f"{CMSIS_NN_DIR}/Source/BasicMathFunctions/arm_elementwise_add_s8.c"

#: The scalar loop (the host's, and every CPU's last block_size % 4 elements; lines 208-209
#: at the pin): `(int8 + offset) << left_shift`, negative for any input below -offset.
_SCALAR_SHIFT = re.compile(r"= \(\*(input_[12])_vect\+\+ \+ (input_[12])_offset\) << left_shift;")
_SCALAR_FIXED = r"= (*\1_vect++ + \2_offset) * (1 << left_shift);"
#: The ARM_MATH_DSP loop (the Cortex-M33's; lines 138-184 at the pin): a 16-bit two's-
#: complement halfword, masked to 0..65535, shifted left by 20: beyond INT32_MAX for every
#: negative halfword.
_HALFWORD_SHIFT = re.compile(r"= (\((?:\([ab]_[12] >> 16\)|[ab]_[12]) & 0x0FFFF\)) << left_shift;")
_HALFWORD_FIXED = r"= (int32_t)((uint32_t)\1 << left_shift);"
#: How many of each the pin has: two inputs, in the scalar loop and in four DSP sums.
_SCALAR_COUNT = 2
_HALFWORD_COUNT = 8

UPSTREAM_REPORTS: dict[str, str] = {
    "cmsis-nn-add-shift": f"""\
### arm_elementwise_add_s8: left shift of a negative value (undefined behaviour)

`Source/BasicMathFunctions/arm_elementwise_add_s8.c` at {CMSIS_NN_PIN} (still on main
at 99f736a6), lines 208-209, the scalar loop (every build without MVE; with DSP, the last
`block_size % 4` elements):

```c
input_1 = (*input_1_vect++ + input_1_offset) << left_shift;
input_2 = (*input_2_vect++ + input_2_offset) << left_shift;
```

`*input_1_vect + input_1_offset` is an `int32_t` in [-255, 255], negative whenever the input
is below its zero point, and a left shift of a negative signed value is undefined (C11
6.5.7p4). The `ARM_MATH_DSP` loop (lines 138-184) has the same shift on a masked halfword,
`input_1 = (b_1 & 0x0FFFF) << left_shift;`: for a negative sum the halfword is 0xFF01..0xFFFF,
and with the usual `left_shift` of 20 the product exceeds `INT32_MAX`, also undefined.
GCC and Clang emit a plain `LSL` today, so results are right, but UBSan reports it and an
optimiser may assume it does not happen.

Minimal input (host build, `-fsanitize=undefined`): `block_size = 1`,
`input_1_vect = {{-1}}`, `input_1_offset = 0`, `left_shift = 20`, any multipliers:

    arm_elementwise_add_s8.c:208:52: runtime error: left shift of negative value -1

(ExecuTorch's `cortex_m::quantized_add`, which passes `left_shift = 20`, reaches it with any
int8 residual add of a MobileNetV2 block.)

Fix: the same bits by defined arithmetic. In the scalar loop multiply, as
`arm_nn_requantize` does (`val * (1 << LEFT_SHIFT(shift))`; 255 * 2^20 fits an `int32_t`);
in the DSP loop shift the halfword as unsigned (it is a bit pattern whose upper bits the
shift drops) and convert back:

```c
input_1 = (*input_1_vect++ + input_1_offset) * (1 << left_shift);
input_1 = (int32_t)((uint32_t)(b_1 & 0x0FFFF) << left_shift);
```

Both compile to the same `LSL` with GCC (arm-none-eabi 12.2, `-Os -mcpu=cortex-m33`): the
object code is unchanged, so outputs are bit-exact.
""",
}


def add_s8_shift(library: Path) -> list[str]:
    """Rewrite arm_elementwise_add_s8.c's ten left shifts of signed values (two in the
    scalar loop, eight in the DSP loop) as `UPSTREAM_REPORTS["cmsis-nn-add-shift"]`
    says.

    Returns:
        [ELEMENTWISE_ADD_S8]; [] for a ref without CMSIS-NN (no Cortex-M backend) and for a
        file already patched (applying twice changes nothing).
    Raises:
        FatalError: the file is missing from a vendored CMSIS-NN, or has other than the two
            scalar and eight halfword shifts (upstream changed the kernel: check whether the
            patch is still needed).
    """
    if not (library / CMSIS_NN_DIR).is_dir():
        return []
    path = library / ELEMENTWISE_ADD_S8
    if not path.is_file():
        raise FatalError(
            f"patch cmsis-nn-add-shift no longer applies: {ELEMENTWISE_ADD_S8} is missing "
            "from the vendored CMSIS-NN; upstream moved its s8 add (see "
            "generator/pipeline/cmsis_nn_patches.py)"
        )
    text = path.read_text(encoding="utf-8")
    new, scalar = _SCALAR_SHIFT.subn(_SCALAR_FIXED, text)
    new, halfword = _HALFWORD_SHIFT.subn(_HALFWORD_FIXED, new)
    if scalar == halfword == 0 and _patched(text):
        return []
    if (scalar, halfword) != (_SCALAR_COUNT, _HALFWORD_COUNT):
        raise FatalError(
            f"patch cmsis-nn-add-shift no longer applies: {ELEMENTWISE_ADD_S8} has "
            f"{scalar} of the {_SCALAR_COUNT} `(*input_N_vect++ + input_N_offset) << "
            f"left_shift` and {halfword} of the {_HALFWORD_COUNT} `(x & 0x0FFFF) << "
            "left_shift` the patch rewrites; upstream changed its s8 add (check whether it "
            "still shifts signed values: generator/pipeline/cmsis_nn_patches.py)"
        )
    path.write_text(new, encoding="utf-8")
    return [ELEMENTWISE_ADD_S8]


def _patched(text: str) -> bool:
    """Whether `text` holds exactly the rewritten shifts and none of the originals."""
    return (
        text.count("_offset) * (1 << left_shift);") == _SCALAR_COUNT
        and text.count("= (int32_t)((uint32_t)(") == _HALFWORD_COUNT
        and "<< left_shift;" not in text
    )
