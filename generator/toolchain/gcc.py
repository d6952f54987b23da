"""GCC as the Arduino rules call it: the compilers and their flags per language for the
UNO Q (`ARM_GCC`: Debian's arm-none-eabi GCC 12, the board core's compiler family) and the
host (`HOST_GCC`, with AddressSanitizer and UBSan), and the check's Arduino core they compile
against (Arduino's ArduinoCore-API, as the board's core uses it, committed in
`data/vendored/arduinocore-api/`, and our board half, in `data/emulated_core/`).

The build's pruning step (`generator/pipeline/prune.py`) compiles with `ARM_GCC`'s compilers and
language flags; `check` (`generator/check/backends.py`) adds the core's sources and the link.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass

from generator import data_dir

#: The sources the Arduino builder compiles (of a library's src/ and a sketch folder).
SOURCE_SUFFIXES = (".c", ".cpp", ".S")

#: Our half of the check's core: Arduino.h, the board-independent sources, board/ and host/.
CORE_DIR = data_dir("emulated_core")
#: The vendored ArduinoCore-API (`tree` of data/vendored/arduinocore-api.yaml, which gives the pin);
#: its `api/` folder is included as `api/...`, as the board core's Arduino.h does.
API_DIR = data_dir("vendored") / "arduinocore-api"
#: The core's include path: our Arduino.h, then the API.
CORE_INCLUDES = (CORE_DIR / "include", API_DIR)
#: The API's sources the core compiles (of `API_DIR / "api"`).
API_SOURCES = ("Common.cpp", "IPAddress.cpp", "Print.cpp", "Stream.cpp", "String.cpp")
#: The core's sources for every target: the API's, then our board-independent half.
CORE_SOURCES = (
    *(API_DIR / "api" / name for name in API_SOURCES),
    *(CORE_DIR / name for name in ("wiring.cpp", "itoa.c", "dtostrf.c", "main.cpp")),
)

#: C++ code-generation flags of the board core (arduino/ArduinoCore-zephyr platform.txt:
#: `compiler.zephyr.common_cxxflags` and the code-generation half of
#: `compiler.zephyr.common_ldflags`, both in `compiler.cpp.flags`).
BOARD_CXX_FLAGS = (
    "-fno-exceptions",
    "-fno-rtti",
    "-fno-threadsafe-statics",
    "-fno-unwind-tables",
    "-fno-use-cxa-atexit",
    "-fno-extern-tls-init",
)

#: Defined by every Arduino build (the IDE version: 1.6.7 here).
ARDUINO_DEFINES = ("-DARDUINO=10607",)

#: The sanitizers of the host run; any report ends the program (no recovery).
SANITIZE = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all")


@dataclass(frozen=True, kw_only=True)
class Compiler:
    """A GCC and its flags, as the Arduino rules compile each kind of source.

    Attributes:
        cc, cxx: C and C++ compilers; ar: the archiver; common: flags for every source;
        c, cxx_flags, asm: per-language flags; install_hint: what to install;
        defines: `-D` flags after `ARDUINO_DEFINES` on every compile (a board's macro).
    """

    cc: str
    cxx: str
    common: tuple[str, ...]
    c: tuple[str, ...]
    cxx_flags: tuple[str, ...]
    asm: tuple[str, ...]
    install_hint: str
    ar: str = "ar"
    defines: tuple[str, ...] = ()

    def missing(self) -> str | None:
        """Why the compilers cannot be used, or None."""
        absent = [tool for tool in (self.cc, self.cxx, self.ar) if shutil.which(tool) is None]
        if absent:
            return f"{', '.join(absent)} not found; install {self.install_hint}"
        return None

    def compile_argv(self, source: str, includes: tuple[str, ...]) -> tuple[str, ...]:
        """Compiler and flags for `source` (by its suffix), without `-c` or outputs."""
        inc = tuple(f"-I{i}" for i in includes)
        defines = (*ARDUINO_DEFINES, *self.defines)
        if source.endswith(".c"):
            return (self.cc, *self.common, *self.c, *defines, *inc)
        if source.endswith(".S"):
            return (self.cc, *self.common, *self.asm, *defines, *inc)
        return (self.cxx, *self.common, *self.cxx_flags, *defines, *inc)


def arm_gcc(cpu_flags: tuple[str, ...], defines: tuple[str, ...] = ()) -> Compiler:
    """arm-none-eabi GCC for a board whose CPU takes `cpu_flags` (`Board.cpu_flags`), with
    `defines` (`-DNAME` flags: the board's macro) on every compile."""
    return Compiler(
        cc="arm-none-eabi-gcc",
        cxx="arm-none-eabi-g++",
        # -mlong-calls: the board core compiles sketches and libraries with its llext EDK's
        # flags (variants/<variant>/llext-edk/Makefile.cflags of arduino/ArduinoCore-zephyr),
        # which have it in both link modes; every call becomes an indirect one (larger code).
        common=(*cpu_flags, "-Os", "-ffunction-sections", "-fdata-sections", "-mlong-calls"),
        c=("-std=gnu11",),
        # The board core's C++ flags (platform.txt compiler.cpp.flags takes
        # compiler.zephyr.common_cxxflags and common_ldflags): without them a sketch calls
        # libstdc++'s guards and exception objects, which its Dynamic link cannot load.
        cxx_flags=("-std=gnu++17", *BOARD_CXX_FLAGS),
        asm=("-x", "assembler-with-cpp"),
        ar="arm-none-eabi-ar",
        install_hint="gcc-arm-none-eabi libnewlib-arm-none-eabi "
        "libstdc++-arm-none-eabi-newlib (Debian packages)",
        defines=defines,
    )


#: The machine's GCC with the sanitizers, for the host run.
HOST_GCC = Compiler(
    cc="gcc",
    cxx="g++",
    common=("-O1", "-g", "-fno-omit-frame-pointer", *SANITIZE),
    c=("-std=gnu11",),
    cxx_flags=("-std=gnu++17", "-fno-exceptions", "-fno-rtti"),
    asm=("-x", "assembler-with-cpp"),
    install_hint="gcc g++ (Debian: build-essential)",
)
