"""The compiler-runtime helpers every library ships
(`data/library_template/src/executorch_aeabi.c`):
the float-to-64-bit-integer conversions that ExecuTorch's kernels call and the UNO Q's
firmware does not export, so the Dynamic link's loader would refuse the sketch.

- compiled for the board, the object defines the helpers (weak) and references nothing that
  the firmware of any core in `generator/boards/cores.py` does not export;
- on the emulated Cortex-M33 (QEMU mps2-an505), each helper gives what libgcc's does;
- on the host, the same bit-level code (included with `EXECUTORCH_AEABI_HOST_TEST`) gives C's
  cast for every value in range, and `libgcc_*` below (libgcc2.c's algorithm on ARM) for
  every other one.
"""

from __future__ import annotations

import math
import random
import shutil
import struct
import subprocess
import textwrap
from collections.abc import Callable, Iterator
from itertools import product
from pathlib import Path

import pytest

from generator import data_dir
from generator.boards.cores import CORES
from generator.check.backends import GCC_ARM
from generator.check.run_sketch import run_emulated
from generator.toolchain.gcc import CORE_DIR

SOURCE = data_dir("library_template") / "src" / "executorch_aeabi.c"
HELPERS = ("__aeabi_d2ulz", "__aeabi_f2lz", "__aeabi_f2ulz")
#: Test-only names the emulated test compiles our helpers under, so that the same program's
#: C casts still call libgcc's.
RENAMED = {name: name.replace("__aeabi_", "ours_") for name in HELPERS}
BOARD_NM = "arm-none-eabi-nm"
U64 = 1 << 64

needs_arm = pytest.mark.skipif(
    any(shutil.which(t) is None for t in (GCC_ARM.cc, BOARD_NM)),
    reason="needs arm-none-eabi-gcc and arm-none-eabi-nm (Debian: gcc-arm-none-eabi)",
)
needs_qemu = pytest.mark.skipif(
    any(shutil.which(t) is None for t in (GCC_ARM.cc, "qemu-system-arm")),
    reason="needs arm-none-eabi-gcc with newlib (Debian: gcc-arm-none-eabi, "
    "libnewlib-arm-none-eabi) and qemu-system-arm",
)
needs_host_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


# --- what libgcc gives (arm-none-eabi GCC 12, thumb/v8-m.main+fp/hard) -------------------------


def libgcc_ulz(x: float) -> int:
    """__fixunssfdi / __fixunsdfdi: truncation; NaN and negative values 0, 2^64 and above
    UINT64_MAX (the saturation of __aeabi_d2uiz, which they are built on)."""
    if math.isnan(x) or x < 0:
        return 0
    return U64 - 1 if x >= U64 else int(x)


def libgcc_lz(x: float) -> int:
    """__fixsfdi: NaN 0, else the unsigned conversion of |x|, negated when x < 0, modulo
    2^64 (as int64_t)."""
    if math.isnan(x):
        return 0
    magnitude = libgcc_ulz(-x if x < 0 else x)
    value = (-magnitude if x < 0 else magnitude) % U64
    return value - U64 if value >= 1 << 63 else value


def as_float(bits: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", bits))[0])


def as_double(bits: int) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", bits))[0])


def float_bits(x: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", x))[0])


def double_bits(x: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", x))[0])


def _around(bits_of: Callable[[float], int], values: tuple[float, ...]) -> Iterator[int]:
    """The bit patterns of `values`, their neighbours, and those of their negations."""
    for value in values:
        for x in (value, -value):
            bits = bits_of(x)
            yield from (bits - 1, bits, bits + 1)


#: ±0, subnormals, the range ends and the values around them, fractions, huge, inf, NaN.
EDGES = (0.0, 2.0**-149, 2.0**-126, 0.5, 0.99999994, 1.0, 1.5, 2.5, 3.0, 2.0**23, 2.0**24,
         2.0**31, 2.0**32, 2.0**40, 2.0**52, 2.0**53, 2.0**62, 2.0**63, 1.5 * 2.0**63, 2.0**64,
         1e20, 3.4028234663852886e38, math.inf)  # fmt: skip
DOUBLE_EDGES = (*EDGES, 5e-324, 2.0**-1022, 0.9999999999999999, 2.0**64 - 2048, 1e300)


def float_cases(randoms: int) -> list[int]:
    """Bit patterns: the edges, every exponent with boundary mantissas, NaNs, `randoms`
    random ones (seeded)."""
    cases = set(_around(float_bits, EDGES))
    for sign, exponent, mantissa in product((0, 1), range(256), (0, 1, 1 << 22, (1 << 23) - 1)):
        cases.add(sign << 31 | exponent << 23 | mantissa)
    rng = random.Random(20260701)
    cases |= {rng.getrandbits(32) for _ in range(randoms)}
    return sorted(bits & 0xFFFFFFFF for bits in cases)


def double_cases(randoms: int) -> list[int]:
    """As `float_cases`, for doubles."""
    cases = set(_around(double_bits, DOUBLE_EDGES))
    for sign, exponent, mantissa in product((0, 1), range(2048), (0, 1, 1 << 51, (1 << 52) - 1)):
        cases.add(sign << 63 | exponent << 52 | mantissa)
    rng = random.Random(20260702)
    cases |= {rng.getrandbits(64) for _ in range(randoms)}
    return sorted(bits & (U64 - 1) for bits in cases)


def test_the_libgcc_models() -> None:
    assert libgcc_lz(-(2.0**63)) == -(2**63) and libgcc_lz(2.0**63) == -(2**63)
    assert libgcc_lz(-1.5) == -1 and libgcc_lz(1e20) == -1 and libgcc_lz(-math.inf) == 1
    assert libgcc_ulz(-0.5) == 0 and libgcc_ulz(2.0**64) == U64 - 1 and libgcc_ulz(math.nan) == 0


# --- for the board --------------------------------------------------------------------------


def firmware_names() -> set[str]:
    """What a sketch may leave undefined on every core: the names the firmware exports
    under their own names, or that the core's llext_wrappers.c defines in the sketch."""
    names = [set(core.exports) | set(core.wrapped) for core in CORES]
    return set.intersection(*names)


def _nm(obj: Path) -> list[tuple[str, str]]:
    """(type, name) of each global symbol of `obj`, undefined ones too."""
    out = subprocess.run([BOARD_NM, "-g", str(obj)], capture_output=True, text=True, check=True)
    return [(line.split()[-2], line.split()[-1]) for line in out.stdout.splitlines()]


@needs_arm
@pytest.mark.parametrize("opt", ["-Os", "-O0", "-O2"])
def test_board_object_defines_the_helpers_and_calls_nothing_unexported(
    tmp_path: Path, opt: str
) -> None:
    flags = [opt if f == "-Os" else f for f in GCC_ARM.common]  # the board's, at `opt`
    obj = tmp_path / "executorch_aeabi.o"
    subprocess.run(
        [GCC_ARM.cc, *flags, *GCC_ARM.c, "-Wall", "-Wextra", "-Wconversion", "-Werror",
         "-c", str(SOURCE), "-o", str(obj)],
        check=True,
    )  # fmt: skip
    symbols = _nm(obj)
    undefined = {name for kind, name in symbols if kind in "Uw"}
    assert undefined <= firmware_names(), undefined - firmware_names()
    assert undefined == set()  # integer code only: not even the firmware's helpers
    assert sorted((kind, name) for kind, name in symbols if kind not in "Uw") == [
        ("W", name) for name in HELPERS
    ]


def test_each_helper_is_missing_from_some_core() -> None:
    for name in HELPERS:
        assert any(name not in set(core.exports) | set(core.wrapped) for core in CORES), name


# --- on the emulated Cortex-M33: ours against libgcc's ---------------------------------------

EMULATED_MAIN = textwrap.dedent(
    """\
    #include <stddef.h>
    #include <stdint.h>
    #include <string.h>
    void arduino_core_write(const char* data, size_t len);
    __attribute__((pcs("aapcs"))) long long ours_f2lz(float);
    __attribute__((pcs("aapcs"))) unsigned long long ours_f2ulz(float);
    __attribute__((pcs("aapcs"))) unsigned long long ours_d2ulz(double);
    static const uint32_t floats[] = {@FLOATS@};
    static const uint64_t doubles[] = {@DOUBLES@};
    static unsigned mismatches;
    static void put(const char* s) { arduino_core_write(s, strlen(s)); }
    static void put_hex(uint64_t v) {
      char b[17];
      for (int i = 0; i < 16; i++) b[i] = "0123456789abcdef"[(v >> (60 - 4 * i)) & 15u];
      b[16] = 0;
      put(b);
    }
    static void check(const char* what, uint64_t in, uint64_t ours, uint64_t libgcc) {
      if (ours == libgcc) return;
      if (mismatches++ < 20) {
        put(what); put(" "); put_hex(in); put(" ours "); put_hex(ours);
        put(" libgcc "); put_hex(libgcc); put("\\r\\n");
      }
    }
    int main(void) {
      for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++) {
        volatile float x;
        memcpy((void*)&x, &floats[i], sizeof x);
        check("f2lz", floats[i], (uint64_t)ours_f2lz(x), (uint64_t)(long long)x);
        check("f2ulz", floats[i], ours_f2ulz(x), (unsigned long long)x);
      }
      for (size_t i = 0; i < sizeof doubles / sizeof doubles[0]; i++) {
        volatile double x;
        memcpy((void*)&x, &doubles[i], sizeof x);
        check("d2ulz", doubles[i], ours_d2ulz(x), (unsigned long long)x);
      }
      put(mismatches ? "MISMATCHES\\r\\n" : "ALL EQUAL\\r\\n");
      put("=== DONE ===\\r\\n");
      return 0;
    }
    """
)


@needs_qemu
def test_on_the_emulated_board_each_helper_gives_what_libgcc_gives(tmp_path: Path) -> None:
    floats, doubles = float_cases(2000), double_cases(2000)
    main_c = tmp_path / "main.c"
    main_c.write_text(
        EMULATED_MAIN.replace("@FLOATS@", ",".join(f"{b:#x}u" for b in floats)).replace(
            "@DOUBLES@", ",".join(f"{b:#x}ull" for b in doubles)
        )
    )
    board = CORE_DIR / "board"
    renames = [f"-D{name}={test_name}" for name, test_name in RENAMED.items()]
    objects = []
    for source, extra in ((SOURCE, renames), (main_c, []), (board / "mps2_an505.c", [])):
        obj = tmp_path / f"{source.stem}.o"
        subprocess.run(
            [GCC_ARM.cc, *GCC_ARM.common, *GCC_ARM.c, *extra, "-c", str(source), "-o", str(obj)],
            check=True,
        )
        objects.append(str(obj))
    elf = tmp_path / "aeabi.elf"
    link_map = tmp_path / "aeabi.map"
    subprocess.run(
        [GCC_ARM.cc, *GCC_ARM.common, "-nostartfiles", "--specs=nosys.specs",
         "-Wl,--gc-sections", "-Wl,--no-warn-rwx-segments", f"-T{board / 'mps2_an505.ld'}",
         f"-Wl,-Map={link_map}", *objects, "-Wl,--start-group", "-lc", "-lgcc",
         "-Wl,--end-group", "-o", str(elf)],
        check=True,
    )  # fmt: skip
    # The casts took libgcc's helpers (the members that define them), not ours.
    for member in ("_fixsfdi.o", "_fixunssfdi.o", "_fixunsdfdi.o"):
        assert f"libgcc.a({member})" in link_map.read_text()

    out = run_emulated(elf, timeout=60)
    assert out.done, (out.lines[-20:], out.stderr)
    assert out.lines[-2:] == ["ALL EQUAL", "=== DONE ==="], out.lines[-22:]


# --- on the host: ours against C's cast and libgcc's results ---------------------------------

HOST_MAIN = textwrap.dedent(
    """\
    #define EXECUTORCH_AEABI_HOST_TEST 1
    #include "@SOURCE@"
    #include <inttypes.h>
    #include <stdio.h>
    #include <string.h>
    /* Per input line "f BITS" or "d BITS" (hex): ours, then C's cast or "-" out of range. */
    int main(void) {
      char kind;
      uint64_t bits;
      while (scanf(" %c %" SCNx64, &kind, &bits) == 2) {
        if (kind == 'f') {
          uint32_t b = (uint32_t)bits;
          float x;
          memcpy(&x, &b, sizeof x);
          printf("%" PRId64 " %" PRIu64, executorch_f2lz_bits(b), executorch_f2ulz_bits(b));
          if (x >= -0x1p63f && x < 0x1p63f) printf(" %lld", (long long)x);
          else printf(" -");
          if (x > -1.0f && x < 0x1p64f) printf(" %llu\\n", (unsigned long long)x);
          else printf(" -\\n");
        } else {
          double x;
          memcpy(&x, &bits, sizeof x);
          printf("%" PRIu64, executorch_d2ulz_bits(bits));
          if (x > -1.0 && x < 0x1p64) printf(" %llu\\n", (unsigned long long)x);
          else printf(" -\\n");
        }
      }
      return 0;
    }
    """
)


def _cast(field: str) -> int | None:
    return None if field == "-" else int(field)


@needs_host_gcc
def test_on_the_host_the_bit_level_code_truncates_as_c_and_saturates_as_libgcc(
    tmp_path: Path,
) -> None:
    floats, doubles = float_cases(100_000), double_cases(100_000)
    main_c = tmp_path / "host_main.c"
    main_c.write_text(HOST_MAIN.replace("@SOURCE@", str(SOURCE)))
    exe = tmp_path / "host_main"
    subprocess.run(
        ["gcc", "-std=gnu11", "-O1", "-Wall", "-Wextra", "-Wconversion", "-Werror",
         "-fsanitize=undefined", "-fno-sanitize-recover=all", str(main_c), "-o", str(exe)],
        check=True,
    )  # fmt: skip
    stdin = "".join(f"f {b:x}\n" for b in floats) + "".join(f"d {b:x}\n" for b in doubles)
    proc = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True)
    rows = [line.split() for line in proc.stdout.splitlines()]
    assert len(rows) == len(floats) + len(doubles)

    in_range = 0
    for bits, (lz, ulz, c_lz, c_ulz) in zip(floats, rows[: len(floats)], strict=True):
        x = as_float(bits)
        assert (int(lz), int(ulz)) == (libgcc_lz(x), libgcc_ulz(x)), f"float {bits:#010x}"
        assert _cast(c_lz) in (None, int(lz)), f"float {bits:#010x}"
        assert _cast(c_ulz) in (None, int(ulz)), f"float {bits:#010x}"
        in_range += c_lz != "-"
    for bits, (ulz, c_ulz) in zip(doubles, rows[len(floats) :], strict=True):
        x = as_double(bits)
        assert int(ulz) == libgcc_ulz(x), f"double {bits:#018x}"
        assert _cast(c_ulz) in (None, int(ulz)), f"double {bits:#018x}"
    assert in_range > len(floats) // 3  # the cast was compared, not skipped
