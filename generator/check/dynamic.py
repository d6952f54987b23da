"""The Dynamic stage: link an example the way the board core's `link_mode=dynamic` (the IDE's
default for the UNO Q) does, and measure it the way its size recipe does.

Source: arduino/ArduinoCore-zephyr `platform.txt` (the release line with
`build.link_mode`, `gen-rodata-ld` and `zephyr-check-size`):

- `build.link_command`: `g++ -Wl,--gc-sections -Wl,-z,noexecstack <machine flags>
  -std=gnu++17 {compiler.zephyr.common_ldflags} {object_files} -Wl,--start-group
  core.a -lstdc++ -lsupc++ -lm -lgcc -lc -Wl,--end-group {build.link_args.dynamic}`,
  with `common_ldflags` = `-fno-exceptions -fno-rtti -fno-threadsafe-statics
  -fno-unwind-tables -fno-use-cxa-atexit -lnosys -nostdlib -Wl,-u,__cxa_allocate_exception`
  and `build.link_args.dynamic` = `-e main`; the build adds
  `-T variants/_ldscripts/build-dynamic.ld -r` (`build.link_args.build-dynamic`). The
  `{object_files}` and the core archive are arduino-cli's (`link.py`).
- `recipe.hooks.linking.postlink.1`: `strip --strip-debug` of that ELF gives the `.elf`
  that `zephyr-sketch-tool` wraps into `<sketch>.elf-zsk.bin` (a 16-byte header, then
  the ELF) for upload.
- `recipe.size.pattern`: `zephyr-check-size dynamic <config> <upload file> <elf>`, with
  `recipe.size.regex` `^\\.text\\s+([0-9]+)` = the upload file's length (what the board's
  flash holds: "Sketch uses N bytes") and `recipe.size.regex.data` `^\\.data\\s+([0-9]+)`
  = its LLEXT heap use (every allocated section: the loader copies the extension into
  RAM).

Here the link uses this machine's arm-none-eabi GCC and newlib (the board's: the Zephyr
SDK's GCC and picolibc), the check's own core, and our linker script modelled on the
board's (`arduino_core/board/llext.ld`); the upload file is the stripped ELF plus the
16-byte header.

The board's link has no `-lc` or `-lgcc` (`extra_ldflags` is `-lstdc++ -lsupc++ -lm` in
cores 0.54.0 to 0.55.1 and the main line to 2026-06-30; the link here keeps `-lgcc -lc`
for what the firmware does not export): the C library functions the firmware exports
stay undefined in the extension and the loader resolves them (`firmware_symbols.py`).
Here they are defined outside the extension (`--defsym`), so that no newlib or libgcc code
is kept for them, and those no relocation names are dropped from the upload file after
stripping.
"""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

from generator.boards import Board
from generator.check.firmware_symbols import defsym_flags, provided_functions, strip_unneeded
from generator.check.link import LinkLine
from generator.check.sizes import DynamicSizes
from generator.check.stages import StageResult, Status
from generator.check.toolchains import CORE_DIR, GCC_ARM, GccToolchain

#: The extension's linker script (ours, modelled on the core's build-dynamic.ld).
LLEXT_SCRIPT = CORE_DIR / "board" / "llext.ld"
#: zephyr-sketch-tool's header before the ELF in `<sketch>.elf-zsk.bin` (bytes).
SKETCH_HEADER_BYTES = 16
#: `compiler.zephyr.common_ldflags` of the core's platform.txt.
COMMON_LDFLAGS = (
    "-fno-exceptions",
    "-fno-rtti",
    "-fno-threadsafe-statics",
    "-fno-unwind-tables",
    "-fno-use-cxa-atexit",
    "-lnosys",
    "-nostdlib",
    "-Wl,-u,__cxa_allocate_exception",
)
#: `compiler.zephyr.extra_ldflags`, linked in one group with the core archive.
EXTRA_LDFLAGS = ("-lstdc++", "-lsupc++", "-lm", "-lgcc", "-lc")
STRIP_TOOL = "arm-none-eabi-strip"
_SHF_ALLOC = 0x2
_SHT_NOBITS = 8


def allocated_sections(elf: Path) -> dict[str, int]:
    """Name -> size (bytes) of the sections of a 32-bit little-endian ELF that take memory
    when loaded (`SHF_ALLOC`), as zephyr-check-size sums them.

    Raises:
        ValueError: not a 32-bit little-endian ELF.
    """
    data = elf.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 1 or data[5] != 1:
        raise ValueError(f"{elf} is not a 32-bit little-endian ELF")
    (shoff,) = struct.unpack_from("<I", data, 0x20)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x2E)
    headers = [struct.unpack_from("<IIIIIIIIII", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx]
    names = data[strtab[4] : strtab[4] + strtab[5]]
    out: dict[str, int] = {}
    for name_at, _type, flags, _addr, _off, size, *_ in headers:
        if flags & _SHF_ALLOC and size:
            name = names[name_at : names.index(b"\0", name_at)].decode()
            out[name] = out.get(name, 0) + size
    return out


def dynamic_argv(
    line: LinkLine,
    board: Board,
    out: Path,
    toolchain: GccToolchain,
    provided: tuple[str, ...] = (),
) -> list[str]:
    """The Dynamic link command (see the module docstring) writing `out`, with the
    firmware's `provided` functions defined outside the extension."""
    return [
        toolchain.cxx,
        "-Wl,--gc-sections",
        "-Wl,-z,noexecstack",
        *board.cpu_flags,
        "-std=gnu++17",
        *COMMON_LDFLAGS,
        *line.object_files,
        "-Wl,--start-group",
        *([str(line.core_archive)] if line.core_archive else []),
        *EXTRA_LDFLAGS,
        "-Wl,--end-group",
        "-e",
        "main",
        f"-T{LLEXT_SCRIPT}",
        "-r",
        f"-Wl,-Map,{out.with_suffix('.map')}",
        *defsym_flags(provided),
        "-o",
        str(out),
    ]


def dynamic_stage(
    line: LinkLine | None, board: Board, out_dir: Path, name: str
) -> tuple[StageResult, DynamicSizes | None]:
    """Link `line` (the gcc-arm build's staged objects) as a loadable extension and judge it.

    Fails when the link fails, or when the upload file is larger than the board's flash
    (the summary gives the overflow in bytes). The RAM figure is reported, not judged.

    Returns:
        the stage result ("dynamic") and the sizes (None when nothing was linked).

    Raises:
        FatalError: arm-none-eabi-nm, -readelf or -objcopy is missing.
    """
    if line is None:
        return StageResult("dynamic", Status.SKIP, "no gcc-arm objects to link"), None
    out_dir.mkdir(parents=True, exist_ok=True)
    debug_elf = out_dir / f"{name}_debug.elf"
    elf = out_dir / f"{name}.elf"
    own = [*line.object_files, *([str(line.core_archive)] if line.core_archive else [])]
    provided = provided_functions(own)
    proc = subprocess.run(
        dynamic_argv(line, board, debug_elf, GCC_ARM, provided),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0 or not debug_elf.is_file():
        log = (proc.stdout + proc.stderr).strip()
        tail = "\n".join(log.splitlines()[-40:])
        return StageResult("dynamic", Status.FAIL, "Dynamic link failed", tail), None
    strip = subprocess.run(
        [STRIP_TOOL, "--strip-debug", str(debug_elf), "-o", str(elf)],
        capture_output=True,
        text=True,
        check=False,
    )
    if strip.returncode != 0:
        return StageResult("dynamic", Status.FAIL, "strip failed", strip.stderr.strip()), None
    strip_unneeded(elf, provided)
    sections = allocated_sections(elf)
    sizes = DynamicSizes(
        flash=elf.stat().st_size + SKETCH_HEADER_BYTES,
        ram=sum(sections.values()),
        flash_max=board.flash_bytes,
        text=sections.get(".text", 0),
        rodata=sections.get(".rodata", 0),
        data=sections.get(".data", 0),
        bss=sections.get(".bss", 0),
    )
    summary = (
        f"upload file {sizes.flash:,} B ({sizes.flash * 100 // board.flash_bytes}% of "
        f"{board.flash_bytes:,}), loaded into RAM: {sizes.ram:,} B"
    )
    if sizes.overflow:
        return (
            StageResult(
                "dynamic",
                Status.FAIL,
                f"does not fit {board.name} when linked Dynamic: flash overflowed by "
                f"{sizes.overflow:,} bytes ({summary})",
            ),
            sizes,
        )
    return StageResult("dynamic", Status.PASS, summary), sizes
