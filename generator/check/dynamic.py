"""The Dynamic stage: link an example the way the board core's `link_mode=dynamic` (the IDE's
default for the UNO Q) does, measure it the way its size recipe does, and judge it the way
the board's loader would, for every core of `cores.py`.

Source: arduino/ArduinoCore-zephyr `platform.txt` at the tags of `cores.py`:

- `build.link_command`: `g++ -Wl,--gc-sections <machine flags> -std=gnu++17
  {compiler.zephyr.common_ldflags} {object_files} -Wl,--start-group core.a
  {compiler.zephyr.extra_ldflags} -Wl,--end-group -e main -T build-dynamic.ld -r`, with
  `common_ldflags` = `-fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-unwind-tables
  -fno-use-cxa-atexit -lstdc++ -lsupc++ -lnosys -nostdlib` and `extra_ldflags` =
  `-lstdc++ -lsupc++` (`-lm` added in 0.54.0): no `-lc`, no `-lgcc`. What the firmware
  does not export stays undefined, and the loader refuses it.
- From 0.54.0 the link runs twice: `gen-rodata-ld` reads the first output and writes a script
  that puts each `.rodata*` section some relocation section targets into `.rodata` and the
  others into `.llext.rodata.noreloc` (read in place from flash), and the second link uses
  it. Before, one `.rodata`; and an arduino-cli before 1.3.0 runs only the one-pass recipe
  (`cores.one_pass`), so the core's loader gets one `.rodata` too.
- `recipe.hooks.linking.postlink.1`: `strip --strip-debug`; `zephyr-sketch-tool` writes its
  header into bytes 7 to 15 of the ELF's `e_ident` (version 1, the file's length, magic
  0x2341, flags: none for a Dynamic sketch), which the ELF specification leaves free; the
  result, `<sketch>.elf-zsk.bin`, is what the board's flash holds and its loader reads
  (`tools/zephyr-sketch-tool/main.go` at 0.55.0: space is added only to a file without an
  ELF header, a Static sketch's binary).

The check's link differs from the board's in these ways, each on purpose:

- The core is the check's (ArduinoCore-API, committed in `data/vendored/arduinocore-api/`, and
  our `data/emulated_core/`), plus the wrappers of the core version judged
  (`CoreFacts.wrapped`: the board core's `cores/arduino/llext_wrappers.c`, here as naked
  trampolines `movw/movt r12, __real_<f>; bx r12`, what 0.55.1 writes for the AEABI ones).
- The emulated board's own half (`FIRMWARE_OBJECTS`: vectors, UART, system calls) is the
  firmware there, as Zephyr is on the board, so it is not linked into the extension; what
  the check's core calls of it (`BOARD_INTERFACE`) stands in for the Zephyr functions the
  board core calls, and every verdict takes it as exported.
- The C library is newlib here, picolibc (0.51.0 to 0.53.1) or newlib-nano (0.54.0 on) of
  the Zephyr SDK there; `TOOLCHAIN_DIFFERENCES` lists the symbols that difference adds,
  with the reason, and every verdict takes them as exported.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from generator.boards.budgets import UNO_Q, Board
from generator.boards.cores import (
    CORES,
    FLASH_BASE,
    SKETCH_PARTITION,
    SRAM_BASE,
    VERDICT_ROWS,
    CoreFacts,
)
from generator.check.backends import GCC_ARM, GccToolchain
from generator.check.link import LinkLine
from generator.check.llext import Loaded, load
from generator.check.llext_elf import ENODATA, ENOMEM, LoadError
from generator.check.llext_relocations import short_branches_out
from generator.check.sizes import CoreVerdict, DynamicSizes
from generator.check.stages import StageResult, Status, misfit_status
from generator.toolchain.gcc import CORE_DIR

#: The extension's linker script (ours, modelled on the core's build-dynamic.ld).
LLEXT_SCRIPT = CORE_DIR / "board" / "llext.ld"
#: zephyr-sketch-tool's header: at this offset of the ELF, `<BIHB` (version, length, magic,
#: flags), bytes 7 to 15 of `e_ident`.
SKETCH_HEADER_AT = 7
SKETCH_HEADER = struct.Struct("<BIHB")
SKETCH_MAGIC = 0x2341
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
STRIP_TOOL = "arm-none-eabi-strip"
#: The objects of the emulated board's own half: the firmware in the Dynamic mode.
#: Each emulator's board file (`generator.boards.budgets.EMULATORS`) and each compile-only one
#: (`toolchains.COMPILE_ONLY_BOARD_FILES`); a link holds one of them.
FIRMWARE_OBJECTS = (
    "mps2_an505.c.o",
    "mps2_an386.c.o",
    "mps2_an500.c.o",
    "mps3_an547.c.o",
    "armv6m.c.o",
    "printf_c99.c.o",
)
#: What the check's core calls of its board half (board/mps2_an505.c): stand-ins for the
#: Zephyr functions the board core's Serial, timing and interrupts call, which the board's
#: firmware exports (Zephyr's own exports, not read here).
BOARD_INTERFACE = (
    "arduino_core_write",
    "delay",
    "delayMicroseconds",
    "micros",
    "millis",
    "interrupts",
    "noInterrupts",
)
#: Symbols our toolchain's C library adds that the board's would not ask for.
TOOLCHAIN_DIFFERENCES = {
    "__assert_func": "newlib's assert(); the board's headers (the LLEXT EDK's picolibc) call "
    "__assert_no_args, which every core exports (FORCE_EXPORT_SYM)",
}
#: Where the firmware's exports are placed for the verdicts (see cores.SRAM_BASE).
EXPORTS_BASE = FLASH_BASE + 0x1_0000
#: Where the verdicts place the heap: the start of SRAM plus the firmware's own globals
#: (the heap's exact address is the firmware's linker's choice; any SRAM address is as far
#: from the flash).
HEAP_BASE = SRAM_BASE + 0x1_0000


def sketch_file(elf: bytes) -> bytes:
    """`elf` as zephyr-sketch-tool writes it for a Dynamic sketch (see the module docstring).

    Raises:
        ValueError: `elf` is not an ELF file, or bytes 7 to 15 are not free.
    """
    if elf[:4] != b"\x7fELF" or len(elf) < 16:
        raise ValueError("not an ELF file")
    if any(elf[SKETCH_HEADER_AT:16]):
        raise ValueError("bytes 7 to 15 of e_ident are not free (zephyr-sketch-tool refuses it)")
    header = SKETCH_HEADER.pack(1, len(elf), SKETCH_MAGIC, 0)
    return elf[:SKETCH_HEADER_AT] + header + elf[SKETCH_HEADER_AT + len(header) :]


def _exports_map(core: CoreFacts) -> dict[str, int]:
    """Export name -> representative firmware address (Thumb), for a verdict."""
    names = sorted({*core.exports, *BOARD_INTERFACE, *TOOLCHAIN_DIFFERENCES})
    return {name: EXPORTS_BASE + 16 * i + 1 for i, name in enumerate(names)}


#: CPUs without Thumb-2's `movw`/`movt` (ARMv6-M), whose trampolines load the address from a
#: literal instead (`wrappers_source`).
THUMB1_CPUS = frozenset({"cortex-m0", "cortex-m0plus", "cortex-m1"})


def wrappers_source(names: tuple[str, ...], thumb1: bool = False) -> str:
    """Thumb assembly defining each of `names` as a long-call trampoline to `__real_<name>`,
    each in a section of its own (so the link keeps only those called).

    Thumb-2 (`thumb1` False): `movw`/`movt` into r12, `bx r12`. ARMv6-M has neither
    instruction nor a load into r12, so there the trampoline makes room on the stack, loads the
    address into r0 from a literal (an R_ARM_ABS32 the loader applies), stores it over the
    slot and pops r0 and pc: r0-r3 reach `__real_<name>` unchanged.
    """
    out = ["\t.syntax unified", "\t.thumb"]
    for name in names:
        out += [
            f'\t.section .text.__llext_wrapper.{name},"ax",%progbits',
            f"\t.global {name}",
            f"\t.type {name}, %function",
            "\t.thumb_func",
            f"{name}:",
        ]
        if thumb1:
            out += [
                "\tpush {r0, r1}",
                f"\tldr r0, =__real_{name}",
                "\tstr r0, [sp, #4]",
                "\tpop {r0, pc}",
                "\t.ltorg",
            ]
        else:
            out += [
                f"\tmovw r12, #:lower16:__real_{name}",
                f"\tmovt r12, #:upper16:__real_{name}",
                "\tbx r12",
            ]
        out.append(f"\t.size {name}, . - {name}")
    return "\n".join(out) + "\n"


def _wrappers_archive(
    names: tuple[str, ...], work: Path, toolchain: GccToolchain, board: Board
) -> Path | None:
    """`names`' trampolines assembled for `board`'s CPU (its flags: its float ABI and, on
    ARMv6-M, Thumb-1 code) into an archive under `work` (reused by content)."""
    if not names:
        return None
    source = wrappers_source(names, thumb1=board.cpu in THUMB1_CPUS)
    flags = list(board.cpu_flags)
    digest = hashlib.sha256(repr((source, flags)).encode()).hexdigest()[:16]
    archive = work / f"llext_wrappers-{digest}.a"
    if archive.is_file():
        return archive
    work.mkdir(parents=True, exist_ok=True)
    asm = work / f"llext_wrappers-{digest}.S"
    asm.write_text(source, encoding="utf-8")
    obj = asm.with_suffix(".o")
    subprocess.run(
        [toolchain.cc, *flags, "-c", str(asm), "-o", str(obj)],
        check=True,
        capture_output=True,
    )
    subprocess.run([toolchain.ar, "rcs", str(archive), str(obj)], check=True, capture_output=True)
    return archive


def extension_objects(line: LinkLine) -> list[str]:
    """The link line's objects without the emulated board's firmware half."""
    out = []
    for arg in line.object_files:
        name = Path(arg).name
        if name in FIRMWARE_OBJECTS:
            continue
        if name == "objs.a" and Path(arg).parent.name == "core":
            # By-folder archives: the variant's objects; keep those of the core's half.
            out += [
                str(p)
                for p in sorted(Path(arg).parent.glob("*.o"))
                if p.name not in FIRMWARE_OBJECTS
            ]
            continue
        out.append(arg)
    return out


def dynamic_argv(
    line: LinkLine,
    board: Board,
    out: Path,
    toolchain: GccToolchain,
    *,
    wrappers: Path | None = None,
    libm: bool = True,
    scripts: tuple[Path, ...] = (),
) -> list[str]:
    """The Dynamic link command (see the module docstring) writing `out`.

    Args:
        wrappers: the core's libc wrappers (an archive), first in the group; libm: link
        `-lm` (cores 0.54.0 on); scripts: the read-only data script(s) before ours.
    """
    return [
        toolchain.cxx,
        "-Wl,--gc-sections",
        "-Wl,-z,noexecstack",
        *board.cpu_flags,
        "-std=gnu++17",
        *COMMON_LDFLAGS,
        *extension_objects(line),
        "-Wl,--start-group",
        *([str(wrappers)] if wrappers else []),
        *([str(line.core_archive)] if line.core_archive else []),
        "-lstdc++",
        "-lsupc++",
        *(["-lm"] if libm else []),
        "-Wl,--end-group",
        "-e",
        "main",
        *(f"-T{s}" for s in scripts),
        f"-T{LLEXT_SCRIPT}",
        "-r",
        f"-Wl,-Map,{out.with_suffix('.map')}",
        "-o",
        str(out),
    ]


def rodata_split_script(elf: Path) -> str:
    """What `gen-rodata-ld` writes for the first link's output `elf`: each `.rodata*`
    section a relocation section targets into `.rodata`, the others into
    `.llext.rodata.noreloc`.

    Raises:
        ValueError: `elf` is not an ELF file.
    """
    try:
        with elf.open("rb") as f:
            parsed = ELFFile(io.BytesIO(f.read()))
            sections = list(parsed.iter_sections())
    except ELFError as e:
        raise ValueError(f"{elf}: {e}") from None
    targeted = {s.header.sh_info for s in sections if s.header.sh_type in ("SHT_REL", "SHT_RELA")}
    with_relocs: list[str] = []
    without: list[str] = []
    for index, section in enumerate(sections):
        if section.name.startswith(".rodata"):
            (with_relocs if index in targeted else without).append(section.name)

    def rule(names: list[str]) -> str:
        return " ".join(f"*({name})" for name in names)

    return (
        "SECTIONS\n{\n"
        f"  .rodata : {{ {rule(with_relocs)} }}\n"
        f"  .llext.rodata.noreloc : {{ {rule(without)} }}\n"
        "}\n"
    )


MERGED_RODATA = "SECTIONS\n{\n  .rodata : { *(.rodata .rodata.* .rodata1) }\n}\n"


@dataclass(frozen=True)
class _Flavour:
    """What makes two cores' links differ."""

    wrapped: tuple[str, ...]
    rodata_split: bool
    libm: bool


def _link(
    line: LinkLine, board: Board, out_dir: Path, name: str, flavour: _Flavour
) -> tuple[Path | None, str]:
    """Link and strip one flavour; (the upload ELF, "") or (None, the log)."""
    tag = hashlib.sha256(repr(flavour).encode()).hexdigest()[:8]
    work = out_dir / f"link-{tag}"
    work.mkdir(parents=True, exist_ok=True)
    wrappers = _wrappers_archive(flavour.wrapped, out_dir, GCC_ARM, board)
    debug = work / f"{name}_debug.elf"
    if flavour.rodata_split:
        temp = work / f"{name}_temp.elf"
        argv = dynamic_argv(line, board, temp, GCC_ARM, wrappers=wrappers, libm=flavour.libm)
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            return None, (proc.stdout + proc.stderr).strip()
        script = work / "rodata_split.ld"
        script.write_text(rodata_split_script(temp), encoding="utf-8")
    else:
        script = work / "rodata.ld"
        script.write_text(MERGED_RODATA, encoding="utf-8")
    argv = dynamic_argv(
        line, board, debug, GCC_ARM, wrappers=wrappers, libm=flavour.libm, scripts=(script,)
    )
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not debug.is_file():
        return None, (proc.stdout + proc.stderr).strip()
    elf = work / f"{name}.elf"
    strip = subprocess.run(
        [STRIP_TOOL, "--strip-debug", str(debug), "-o", str(elf)],
        capture_output=True,
        text=True,
        check=False,
    )
    if strip.returncode != 0:
        return None, strip.stderr.strip()
    return elf, ""


def _load_for(elf: bytes, core: CoreFacts, heap_bytes: int | None = None) -> Loaded:
    """`llext.load` of `elf` as `core`'s loader (a heap of `heap_bytes`, when given, and
    then only measured: no symbol is resolved)."""
    return load(
        elf,
        heap_bytes=core.heap_bytes if heap_bytes is None else heap_bytes,
        exports=_exports_map(core) if heap_bytes is None else {},
        heap_base=HEAP_BASE,
        storage_base=SKETCH_PARTITION,
        storage_writable=core.storage_writable,
        rodata_split=core.rodata_split,
        link=heap_bytes is None,
    )


def judge(elf: bytes, core: CoreFacts) -> CoreVerdict:
    """The loader's verdict on the upload file `elf` for `core` (see `llext.load`); a
    refused one carries the heap the load would take without a limit (None when the file
    cannot be read that far)."""
    try:
        short = len(short_branches_out(elf))
    except LoadError:
        short = 0
    try:
        loaded = _load_for(elf, core)
    except LoadError as e:
        try:
            peak: int | None = _load_for(elf, core, heap_bytes=16 << 20).peak_bytes
        except LoadError:
            peak = None
        return CoreVerdict(
            core.version, core.pinned, False, core.heap_bytes, peak, e.errno, tuple(e.log), short
        )
    return CoreVerdict(
        core.version, core.pinned, True, core.heap_bytes, loaded.peak_bytes, 0, (), short
    )


def board_cores(board: Board) -> tuple[CoreFacts, ...]:
    """The loader `board`'s Dynamic verdict takes: the pinned core release's (`CORES`: the
    arduino:zephyr core is one release for all its boards, so its loader code is the UNO Q's)
    with `board`'s LLEXT heap (`Board.llext_heap_bytes`, from `ZEPHYR_BOARDS`). The UNO Q's
    earlier releases are not judged for another board: their heaps are the UNO Q's.

    Raises:
        ValueError: `board`'s heap is unknown.
    """
    if board.llext_heap_bytes is None:
        raise ValueError(f"{board.name}'s LLEXT heap is unknown")
    pinned = next(core for core in CORES if core.pinned)
    return (dataclasses.replace(pinned, heap_bytes=board.llext_heap_bytes),)


def dynamic_stage(
    line: LinkLine | None,
    board: Board,
    out_dir: Path,
    name: str,
    cores: tuple[CoreFacts, ...] = VERDICT_ROWS,
) -> tuple[StageResult, DynamicSizes | None]:
    """Link `line` (the gcc-arm build's staged objects) as a loadable extension for each
    core of `cores` (`VERDICT_ROWS`: every core, and the pinned one linked in one pass by an
    older arduino-cli), and judge it as that core's loader would.

    Fails when a link fails or when the pinned core's loader refuses it for another reason
    than its heap (undefined symbol, a relocation it cannot apply: the log says which).
    "Does not fit" (`stages.misfit_status`: a failure on the UNO Q) when the upload file is
    larger than the board's flash or the pinned loader's heap is too small for it (ENOMEM).
    The other cores' verdicts are reported, not judged.

    Returns:
        the stage result ("dynamic") and the sizes (None when nothing was linked); the
        sizes' `ram` is the pinned core's heap peak, `verdicts` one per core.

    Raises:
        FatalError: arm-none-eabi-gcc or -strip is missing.
    """
    if line is None:
        return StageResult("dynamic", Status.SKIP, "no gcc-arm objects to link"), None
    if cores is VERDICT_ROWS and board != UNO_Q:
        if board.llext_heap_bytes is None:
            unknown = f"verdict unknown: {board.name}'s LLEXT heap was not read"
            return StageResult("dynamic", Status.SKIP, unknown), None
        cores = board_cores(board)
    out_dir.mkdir(parents=True, exist_ok=True)
    verdicts: list[CoreVerdict] = []
    links: dict[_Flavour, tuple[Path | None, str]] = {}
    uploads: dict[str, bytes] = {}
    elfs: dict[str, bytes] = {}
    for core in cores:
        flavour = _Flavour(core.wrapped, core.rodata_split and core.two_pass_link, core.links_libm)
        if flavour not in links:
            links[flavour] = _link(line, board, out_dir, name, flavour)
        elf, log = links[flavour]
        if elf is None:
            last = next((x for x in reversed(log.splitlines()) if x.strip()), "")
            verdicts.append(CoreVerdict(core.version, core.pinned, False, core.heap_bytes,
                                        None, 0, (f"link failed: {last}",)))  # fmt: skip
            if core.pinned:
                tail = "\n".join(log.splitlines()[-40:])
                return StageResult("dynamic", Status.FAIL,
                                   f"Dynamic link failed ({core.version})", tail), None  # fmt: skip
            continue
        elfs[core.version] = elf.read_bytes()
        uploads[core.version] = sketch_file(elfs[core.version])
        verdicts.append(judge(uploads[core.version], core))
    pinned = next((v for v in verdicts if v.pinned), verdicts[-1])
    if pinned.core not in uploads:
        return StageResult("dynamic", Status.FAIL, "Dynamic link failed", ""), None
    upload = out_dir / f"{name}.elf-zsk.bin"
    upload.write_bytes(uploads[pinned.core])
    # The same ELF without the header, for readelf and nm.
    (out_dir / f"{name}.elf").write_bytes(elfs[pinned.core])
    sizes = DynamicSizes(
        flash=upload.stat().st_size,
        ram=pinned.peak_bytes or 0,
        flash_max=board.flash_bytes,
        verdicts=tuple(verdicts),
    )
    return judge_dynamic(sizes, board), sizes


def judge_dynamic(sizes: DynamicSizes, board: Board) -> StageResult:
    """The "dynamic" stage of a linked upload file of `sizes.flash` bytes, by the pinned
    core's verdict (`sizes.pinned`; none: the last of `sizes.verdicts`), on `board`.

    A pass when it fits the flash and the pinned loader takes it; "does not fit"
    (`stages.misfit_status`: a failure on the UNO Q) when it is over the flash or the
    loader's heap is too small (ENOMEM); a failure when the loader refuses it otherwise.
    """
    pinned = sizes.pinned or sizes.verdicts[-1]
    summary = (
        f"upload file {sizes.flash:,} B ({sizes.flash * 100 // board.flash_bytes}% of "
        f"{board.flash_bytes:,}); {pinned.summary()}"
    )
    details = "\n".join(f"- {v.summary()}" for v in sizes.verdicts)
    refused = sizes.pinned if sizes.pinned and not sizes.pinned.loaded else None
    log = "\n".join(refused.log[-20:]) if refused else ""
    if sizes.overflow:
        summary = (
            f"does not fit {board.name} when linked Dynamic: flash overflowed by "
            f"{sizes.overflow:,} bytes ({summary})"
        )
    # A symbol not exported (-61) is judged with the UNO Q firmware's export table (the only
    # one read, data/core_exports/); on another board that is no verdict: its firmware's
    # table was not read (the Nano RP2040 Connect's Cortex-M0+ code calls libgcc's Thumb-1
    # `__gnu_thumb1_case_uqi`, which a Cortex-M33 firmware has no reason to export).
    if refused is not None and refused.errno == ENODATA and board != UNO_Q:
        summary = (
            f"unknown for {board.name}: {summary}; that is the UNO Q firmware's export table, "
            f"the only one read: {board.name}'s was not read"
        )
        return StageResult("dynamic", Status.SKIP, summary, f"{details}\n\n{log}")
    # Only a heap too small (ENOMEM) is the board's size; any other refusal (-61 on the UNO
    # Q: a symbol the firmware does not export, -8: a relocation) is a loader that cannot
    # link it.
    if refused is not None and refused.errno != ENOMEM:
        return StageResult("dynamic", Status.FAIL, summary, f"{details}\n\n{log}")
    if sizes.overflow:
        return StageResult("dynamic", misfit_status(board), summary, details)
    if refused is not None:
        heap = f"LLEXT heap ({refused.heap_bytes // 1024} KiB) too small"
        summary = f"does not fit {board.name} when linked Dynamic: {heap} ({summary})"
        return StageResult("dynamic", misfit_status(board), summary, f"{details}\n\n{log}")
    return StageResult("dynamic", Status.PASS, summary, details)
