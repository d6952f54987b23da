"""The C library the UNO Q's firmware gives a sketch, for the SIZE links only.

On the board a sketch does not link a C library of its own, in either link mode:

- arduino/ArduinoCore-zephyr `platform.txt` (tags 0.54.0 ff6d4193 to 0.55.1 aab6b7fd,
  and the main line to 177dcef6 of 2026-06-30; the change is 1bc5de85 "build: Switch to
  nano specs", which dropped `-lc -lm -lgcc` from `build.link_args.static`):
  `build.link_command` is `g++ ... -lstdc++ -lsupc++ -lnosys -nostdlib --specs=nano.specs
  --specs=nosys.specs {object_files} -Wl,--start-group core.a -lstdc++ -lsupc++ -lm
  -Wl,--end-group {build.link_args.<mode>}`: `-nostdlib` and no `-lc` or `-lgcc` in
  either mode (`build.link_args.dynamic` is `-e main`, `build.link_args.static` only
  `--wrap`s malloc, calloc, realloc, free and random).
- Dynamic (`link_mode=dynamic`): the extension is linked with `-r`, so what the sketch
  calls and does not define stays undefined and the loader resolves it against the
  firmware's exports (`loader/llext_exports.c`); the build's check link
  (`build.link_args.check-dynamic`, `-T syms-dynamic.ld`) fails on anything else.
- Static: `build.link_args.build-static` adds `-T variants/<variant>/syms-static.ld`,
  which `extra/build.sh` generates with `extra/gen_provides.py zephyr.elf -LF ...`: a
  `PROVIDE(name = address)` for every exported symbol (`-L`) and every global function
  of the firmware (`-F`), and `malloc`, `free`, `realloc`, `calloc`, `random` as the
  `__wrap_` names of the `--wrap`s.
- Exported libc functions are exported as `__real_<name>` (`EXPORT_LIBC_SYM`) and the
  core's `cores/arduino/llext_wrappers.c` defines `<name>` as a call to it (a long-call
  trampoline, a few bytes each); `printf`, `sprintf`, `snprintf` and a few more are
  exported under their own names.

`FIRMWARE_FUNCTIONS` lists the C library and compiler-runtime functions that
`loader/llext_exports.c` of 0.55.1 (aab6b7fd) exports; the main line to 177dcef6 only adds
Zephyr APIs and Thumb-1 helpers. They are the ones the board certainly provides in both
modes; static mode also provides every other global function of the firmware, which only
its `zephyr.elf` (not in the repository) can list, so the static provision here is a lower
bound. Not modelled: the trampolines' own bytes on the board.

The check's static size link (measured for "Sketch uses", `backends.py`) defines each of
these that the link's own objects do not define as an absolute symbol outside the sketch
(`--defsym`), so that no newlib or libgcc code is kept for it; the emulator and host builds
keep linking the real ones. The Dynamic link (`dynamic.py`) links no C library at all, as
the board's does, and leaves these undefined for the loader.

Calibration, the every-kernel AddModel against the board (core 0.90.0: 507,876 B static,
787,508 B Dynamic upload file): with newlib linked the check measured 524,896 / 804,528 B
(+17,020 each); with the firmware's functions provided 486,208 / 750,252 B (-21,668 /
-37,256). The board's sketch compiles with the LLEXT EDK's flags, which include
`-mlong-calls` (`variants/<variant>/llext-edk/Makefile.cflags`); the check's compile does
not, and with it the largest ExecuTorch objects grow by about 6 % (3.4 to 9.8 %), the size
of what is left.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from generator.util.errors import FatalError

#: The C library's functions that llext_exports.c exports (EXPORT_LIBC_SYM, in its order),
#: and printf, sprintf, snprintf, sscanf, time, mktime (EXPORT_SYMBOL).
LIBC_FUNCTIONS = (
    # string.h
    "memcpy", "memmove", "strrchr", "strstr", "strncmp", "strncpy", "strcasecmp", "strcmp",
    "strlen", "strnlen", "strchr", "strcat", "strcpy", "memcmp", "memset", "strtok",
    "memchr", "strdup", "memmem",
    # stdlib.h
    "malloc", "realloc", "calloc", "free", "rand", "srand", "strtod", "strtol", "strtoul",
    "atoi", "atof", "atol", "abort", "exit", "atexit", "_exit",
    # ctype.h
    "isspace", "isalnum", "tolower", "toupper", "isalpha", "iscntrl", "isdigit", "isgraph",
    "isprint", "isupper", "islower", "isxdigit",
    # math.h
    "acos", "acosf", "asin", "asinf", "atan", "atan2", "atan2f", "atanf", "cos", "cosf",
    "exp", "exp2", "fmod", "log", "logf", "log2", "log10", "pow", "sin", "sinf", "sqrt",
    "sqrtf", "tan", "tanf", "ldexp",
    # stdio.h
    "puts", "putchar", "vsnprintf", "printf", "sprintf", "snprintf", "sscanf",
    # time.h
    "time", "mktime",
)  # fmt: skip

#: The compiler-runtime helpers llext_exports.c exports (EXPORT_AEABI_SYM): the board's
#: link has no -lgcc, so these come from the firmware.
AEABI_FUNCTIONS = (
    "__aeabi_dadd", "__aeabi_dsub", "__aeabi_dmul", "__aeabi_ddiv",
    "__aeabi_dcmpeq", "__aeabi_dcmplt", "__aeabi_dcmple", "__aeabi_dcmpgt",
    "__aeabi_dcmpge", "__aeabi_dcmpun", "__aeabi_fcmple", "__aeabi_fcmpun",
    "__aeabi_d2iz", "__aeabi_d2uiz", "__aeabi_d2lz", "__aeabi_i2d", "__aeabi_ui2d",
    "__aeabi_l2d", "__aeabi_ul2d", "__aeabi_d2f", "__aeabi_f2d", "__aeabi_l2f",
    "__aeabi_ul2f", "__aeabi_idiv", "__aeabi_uidiv", "__aeabi_idivmod",
    "__aeabi_uidivmod", "__aeabi_ldivmod", "__aeabi_uldivmod",
)  # fmt: skip

#: What `assert()` calls: the board's C library headers (picolibc, Zephyr's EDK) call
#: `__assert_no_args`, which llext_exports.c exports (FORCE_EXPORT_SYM); newlib's headers,
#: which the check compiles with, call `__assert_func` instead. Both end in the firmware.
ASSERT_FUNCTIONS = ("__assert_func", "__assert_no_args")

#: Every function the size links take from the firmware.
FIRMWARE_FUNCTIONS = (*LIBC_FUNCTIONS, *AEABI_FUNCTIONS, *ASSERT_FUNCTIONS)

#: Where the provided functions are placed: one 16-byte slot each from here, a Thumb
#: address (odd), below the check's flash (0x10000000, `board/mps2_an505.ld`) and within
#: a branch's reach of it, so the static link needs no veneers.
PROVIDED_BASE = 0x0F800000
NM_TOOL = "arm-none-eabi-nm"


def defined_symbols(inputs: Iterable[Path | str], nm: str = NM_TOOL) -> set[str]:
    """The global symbols that `inputs` (objects and archives; link flags among them, such
    as `-Wl,--whole-archive`, are skipped) define.

    Raises:
        FatalError: `nm` is missing or cannot read an input.
    """
    paths = [str(p) for p in inputs if not str(p).startswith("-")]
    if not paths:
        return set()
    try:
        proc = subprocess.run(
            [nm, "-g", "--defined-only", "-P", *paths],
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError as err:
        raise FatalError(f"{nm} not found; install binutils-arm-none-eabi") from err
    if proc.returncode != 0:
        raise FatalError(f"{nm} failed: {proc.stderr.strip()}")
    out: set[str] = set()
    for line in proc.stdout.splitlines():
        fields = line.split()
        # "name type value size"; archive member headers ("lib.a[x.o]:") have one field.
        if len(fields) >= 2 and not line.endswith(":"):
            out.add(fields[0])
    return out


def provided_functions(inputs: Sequence[Path | str], nm: str = NM_TOOL) -> tuple[str, ...]:
    """The `FIRMWARE_FUNCTIONS` that the link's own `inputs` do not define (the link's
    definitions win, as the sketch's and core's do on the board)."""
    own = defined_symbols(inputs, nm)
    return tuple(name for name in FIRMWARE_FUNCTIONS if name not in own)


def defsym_flags(names: Sequence[str]) -> list[str]:
    """Linker flags (`-Wl,--defsym=NAME=ADDRESS`) giving each of `names` its slot: an
    absolute Thumb address outside the sketch (`PROVIDED_BASE` + 16 bytes per name, + 1)."""
    return [f"-Wl,--defsym={name}={PROVIDED_BASE + 16 * i + 1:#x}" for i, name in enumerate(names)]
