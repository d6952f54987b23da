"""Stage "dynamic-run": the Dynamic upload file run on the emulated Cortex-M33 as the board's
loader would run it, and judged against the example's `expected.yaml` like the static run.

How: an emulated Dynamic *firmware* (the board half of the check's core,
`board/mps2_an505.c` and `printf_c99.c`, with newlib, libm and libgcc, booted by
`board/llext_host.c` and linked with `board/llext_host.ld`) holds the LLEXT heap (the
core's `heap_bytes`, in `.noinit`) and an export table generated here. Our loader model
(`llext.load`) places the upload file against that table's addresses, with the heap at the
firmware's heap and the storage (what in-place regions point into) at `STORAGE_BASE`;
QEMU's generic loader then writes the heap's image, the upload file and a boot descriptor
(`BOOT_FORMAT`) into memory before the core starts. `llext_host.c` runs the sketch's
constructors and `main`. When the loader refuses the sketch, the descriptor carries the
error and the log, and the emulated UART prints what the board's would: the loader's lines,
then `Failed to load sketch, rc -N`, and nothing of the sketch.

The export table: every name of the pinned core's table (`CoreFacts.exports`) that the
emulated firmware defines, `__real_<f>` as `<f>` and the others as themselves, plus
`dynamic.BOARD_INTERFACE` and `dynamic.TOOLCHAIN_DIFFERENCES`. Defined means: by the
firmware's own objects (the board half, `__assert_no_args` in `llext_host.c`) or by
newlib's `libc.a`/`libm.a` or `libgcc.a` (read with `nm`). Not provided, since the emulator
has no Zephyr: the kernel APIs (`k_malloc`, `k_free`, `k_sched_lock`, message queues, work
queues, timers, `k_fatal_halt`, ...), logging (`z_log_msg_runtime_vcreate`,
`log_const_sketch`), `cbvprintf`, `sys_clock_settime`, `sys_clock_cycle_get_32`, picolibc's
`stdin`/`stdout`/`stderr` objects, the LED matrix, flash areas, CAN, IRQ control,
`SystemCoreClock`, `analog_reference`, and any other name none of those libraries define
(`not_provided` lists them per core). A sketch that calls one of these is refused by the
emulated loader although the board's would load it; the stage then skips, naming them.
"""

from __future__ import annotations

import functools
import hashlib
import re
import shutil
import struct
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from generator.boards.cores import CoreFacts, pinned_core
from generator.check.backends import GCC_ARM, PRINTF_WRAPS
from generator.check.dynamic import BOARD_INTERFACE, TOOLCHAIN_DIFFERENCES
from generator.check.expected import Expected
from generator.check.llext import Loaded, load
from generator.check.llext_elf import LoadError
from generator.check.run_sketch import RunOutput, judge_run, run_emulated
from generator.check.stages import StageResult, Status
from generator.toolchain.gcc import CORE_DIR
from generator.util.errors import FatalError

STAGE = "dynamic-run"
BOARD_DIR = CORE_DIR / "board"
#: The firmware's sources: the board half (`dynamic.FIRMWARE_OBJECTS`) and the boot.
FIRMWARE_SOURCES = (
    BOARD_DIR / "mps2_an505.c",
    BOARD_DIR / "printf_c99.c",
    BOARD_DIR / "llext_host.c",
)
LINKER_SCRIPT = BOARD_DIR / "llext_host.ld"
#: Where the upload file lies in emulated memory (SSRAM1's Secure alias, past the
#: firmware's 786,432 B of FLASH); the regions the loader reads in place point there.
STORAGE_BASE = 0x1010_0000
#: Bytes from STORAGE_BASE to the end of SSRAM1 (4 MiB at 0x10000000).
STORAGE_BYTES = 0x1040_0000 - STORAGE_BASE
#: `struct llext_host_boot` of llext_host.c: magic, rc, entry, init count, 64 init
#: addresses, 2,048 bytes of log text.
BOOT_FORMAT = "<IiII64I2048s"
BOOT_MAX_INIT = 64
LOADED_MAGIC = 0x54584C4C  # "LLXT"
REFUSED_MAGIC = 0x46584C4C  # "LLXF"
#: Symbols of llext_host.c and the generated table the Python side reads.
HEAP_SYMBOL = "llext_host_heap"
BOOT_SYMBOL = "llext_host_boot"
NM = "arm-none-eabi-nm"
#: The libraries whose definitions the firmware can export (`-print-file-name`).
LIBRARIES = ("libc.a", "libm.a", "libgcc.a")
#: Lines of the emulated UART shown when the loader refused the sketch.
UART_LINES = 40
_MISSING = re.compile(r"elf: Could not find symbol (\S+)!")


@dataclass(frozen=True)
class Firmware:
    """A built emulated Dynamic firmware.

    Attributes:
        elf: the firmware (what QEMU's `-kernel` boots); exports: export name -> address
        (Thumb functions with bit 0 set), what the loader resolves against; heap_base,
        heap_bytes: the LLEXT heap; boot: the boot descriptor's address; not_provided: the
        core's export names the firmware cannot provide (sorted).
    """

    elf: Path
    exports: dict[str, int]
    heap_base: int
    heap_bytes: int
    boot: int
    not_provided: tuple[str, ...]


def _cflags() -> tuple[str, ...]:
    return (*GCC_ARM.common, *GCC_ARM.c, "-fno-builtin")


def _link_flags() -> tuple[str, ...]:
    return (
        "-nostartfiles",
        "--specs=nosys.specs",
        "-Wl,--gc-sections",
        "-Wl,--no-warn-rwx-segments",
        "-Wl," + ",".join(f"--wrap={symbol}" for symbol in PRINTF_WRAPS),
        f"-T{LINKER_SCRIPT}",
        "-Wl,--start-group",
        "-lm",
        "-lc",
        "-lgcc",
        "-Wl,--end-group",
    )


def _run(argv: Sequence[str], what: str) -> str:
    proc = subprocess.run(list(argv), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-30:])
        raise FatalError(f"the emulated Dynamic firmware: {what} failed:\n{tail}")
    return proc.stdout


@functools.cache
def _library_paths() -> tuple[Path, ...]:
    flags = GCC_ARM.common[:4]  # the CPU and FPU flags select the multilib
    out = []
    for name in LIBRARIES:
        found = _run([GCC_ARM.cc, *flags, f"-print-file-name={name}"], "finding " + name)
        path = Path(found.strip())
        if not path.is_absolute() or not path.is_file():
            raise FatalError(f"{GCC_ARM.cc} has no {name}; install {GCC_ARM.install_hint}")
        out.append(path)
    return tuple(out)


@functools.cache
def _defined(files: tuple[Path, ...]) -> frozenset[str]:
    """The global symbols `files` (objects, archives) define (read once a process)."""
    listing = _run([NM, "-g", "--defined-only", *map(str, files)], "nm")
    names = set()
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) == 3:
            names.add(parts[2])
    return frozenset(names)


def export_names(core: CoreFacts, defined: frozenset[str]) -> tuple[dict[str, str], list[str]]:
    """(export name -> firmware symbol, the core's names not provided), see the module
    docstring; `defined`: what the firmware's objects and libraries define."""
    provided: dict[str, str] = {}
    missing: list[str] = []
    for name in sorted({*core.exports, *BOARD_INTERFACE, *TOOLCHAIN_DIFFERENCES}):
        symbol = name.removeprefix("__real_")
        if symbol in defined:
            provided[name] = symbol
        else:
            missing.append(name)
    return provided, missing


def exports_source(provided: dict[str, str], heap_bytes: int, version: str) -> str:
    """The generated C: the export table (kept by llext_host.ld) and the LLEXT heap."""
    lines = [
        "/* Generated by generator/check/dynamic_run.py: the emulated Dynamic firmware's",
        f" * export table for core {version} and its LLEXT heap. */",
        "#include <stdint.h>",
        "struct llext_host_export {",
        "  const char* name;",
        "  const void* address;",
        "};",
    ]
    symbols = sorted(set(provided.values()))
    index = {symbol: i for i, symbol in enumerate(symbols)}
    lines += [f'extern char llext_host_sym_{i}[] __asm__("{s}");' for s, i in index.items()]
    lines.append(
        '__attribute__((section(".llext_host_exports"), used)) '
        "const struct llext_host_export llext_host_exports[] = {"
    )
    lines += [f'  {{"{name}", llext_host_sym_{index[s]}}},' for name, s in provided.items()]
    lines += [
        "};",
        f'__attribute__((section(".noinit.{HEAP_SYMBOL}"), aligned(8), used)) '
        f"uint8_t {HEAP_SYMBOL}[{heap_bytes}];",
    ]
    return "\n".join(lines) + "\n"


def _symbols(elf: Path) -> dict[str, tuple[int, int]]:
    """Global (and weak) symbols of `elf`: name -> (value, size)."""
    with elf.open("rb") as f:
        parsed = ELFFile(f)
        table = parsed.get_section_by_name(".symtab")
        if not isinstance(table, SymbolTableSection):
            raise FatalError(f"{elf} has no symbol table")
        out: dict[str, tuple[int, int]] = {}
        for symbol in table.iter_symbols():
            entry = symbol.entry
            if entry.st_info.bind in ("STB_GLOBAL", "STB_WEAK") and entry.st_shndx != "SHN_UNDEF":
                out[symbol.name] = (entry.st_value, entry.st_size)
        return out


def build_firmware(core: CoreFacts, work: Path) -> Firmware:
    """Build (or reuse from `work`) the emulated Dynamic firmware for `core`.

    Cached in `work/dynamic-firmware/<digest>/`, the digest of the sources, the linker
    script, the flags, the core's export names and heap size.

    Raises:
        FatalError: arm-none-eabi-gcc or -nm is missing, or a compile or link failed.
    """
    reason = GCC_ARM.missing()
    if reason:
        raise FatalError(reason)
    if shutil.which(NM) is None:
        raise FatalError(f"{NM} not found; install {GCC_ARM.install_hint}")
    digest = hashlib.sha256()
    for path in (*FIRMWARE_SOURCES, LINKER_SCRIPT):
        digest.update(path.read_bytes())
    digest.update(repr((_cflags(), _link_flags(), sorted(core.exports), core.heap_bytes)).encode())
    folder = work / "dynamic-firmware" / digest.hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    objects = []
    for source in FIRMWARE_SOURCES:
        obj = folder / f"{source.name}.o"
        if not obj.is_file():
            _run([GCC_ARM.cc, *_cflags(), "-c", str(source), "-o", str(obj)], source.name)
        objects.append(obj)
    provided, missing = export_names(core, _defined((*objects, *_library_paths())))
    table = folder / "llext_host_exports.c"
    elf = folder / "firmware.elf"
    if not elf.is_file():
        table.write_text(exports_source(provided, core.heap_bytes, core.version), "utf-8")
        table_obj = folder / "llext_host_exports.c.o"
        _run([GCC_ARM.cc, *_cflags(), "-c", str(table), "-o", str(table_obj)], table.name)
        partial = folder / "firmware.elf.tmp"
        _run(
            [GCC_ARM.cc, *GCC_ARM.common, *map(str, objects), str(table_obj), *_link_flags(),
             f"-Wl,-Map={folder / 'firmware.map'}", "-o", str(partial)],
            "the link",
        )  # fmt: skip
        partial.replace(elf)
    symbols = _symbols(elf)
    boot, boot_size = symbols[BOOT_SYMBOL]
    if boot_size != struct.calcsize(BOOT_FORMAT):
        raise FatalError(
            f"{BOOT_SYMBOL} is {boot_size} bytes in {elf}, BOOT_FORMAT "
            f"{struct.calcsize(BOOT_FORMAT)}; keep llext_host.c and dynamic_run.py in step"
        )
    return Firmware(
        elf,
        {name: symbols[symbol][0] for name, symbol in provided.items()},
        symbols[HEAP_SYMBOL][0],
        core.heap_bytes,
        boot,
        tuple(missing),
    )


def boot_descriptor(placed: Loaded | LoadError) -> bytes:
    """The boot descriptor for a placed sketch, or for the loader's refusal."""
    if isinstance(placed, LoadError):
        text = "".join(f"{line}\n" for line in placed.log).encode("utf-8", errors="replace")
        text = text[:2047]
        return struct.pack(BOOT_FORMAT, REFUSED_MAGIC, -placed.errno, 0, 0, *[0] * 64, text)
    init = placed.init
    return struct.pack(
        BOOT_FORMAT, LOADED_MAGIC, 0, placed.entry, len(init),
        *init, *[0] * (BOOT_MAX_INIT - len(init)), b"",
    )  # fmt: skip


def loader_device(path: Path, address: int) -> str:
    """A QEMU generic-loader `-device` value writing the file `path` raw at `address`."""
    return f"loader,file={str(path).replace(',', ',,')},addr={address:#x},force-raw=on"


def place(upload: bytes, firmware: Firmware, core: CoreFacts) -> Loaded | LoadError:
    """The loader model's placing of `upload` in `firmware`'s heap (or its refusal)."""
    try:
        return load(
            upload,
            heap_bytes=firmware.heap_bytes,
            exports=firmware.exports,
            heap_base=firmware.heap_base,
            storage_base=STORAGE_BASE,
            storage_writable=core.storage_writable,
            rodata_split=core.rodata_split,
        )
    except LoadError as e:
        return e


def run_dynamic(
    upload: Path,
    firmware: Firmware,
    core: CoreFacts,
    out_dir: Path,
    timeout: float,
    watch: Sequence[str] = (),
) -> tuple[RunOutput, Loaded | LoadError]:
    """Place `upload` with the loader model and boot `firmware` with it on QEMU.

    Writes `heap.bin` and `boot.bin` (the images QEMU loads) into `out_dir`.

    Raises:
        FatalError: qemu-system-arm is not installed; the upload file is larger than the
            emulated storage.
    """
    data = upload.read_bytes()
    if len(data) > STORAGE_BYTES:
        raise FatalError(f"{upload} is {len(data):,} B, more than the emulated storage")
    placed = place(data, firmware, core)
    if isinstance(placed, Loaded) and len(placed.init) > BOOT_MAX_INIT:
        placed = LoadError(0, [f"more than {BOOT_MAX_INIT} init functions: {len(placed.init)}"])
    out_dir.mkdir(parents=True, exist_ok=True)
    boot = out_dir / "boot.bin"
    boot.write_bytes(boot_descriptor(placed))
    devices = [loader_device(upload, STORAGE_BASE), loader_device(boot, firmware.boot)]
    if isinstance(placed, Loaded) and placed.heap_image:
        heap = out_dir / "heap.bin"
        heap.write_bytes(placed.heap_image)
        devices.append(loader_device(heap, firmware.heap_base))
    out = run_emulated(firmware.elf, timeout, watch, devices=devices, kind="dynamic")
    return out, placed


def dynamic_run_stage(
    upload: Path | None,
    expected: Expected,
    work: Path,
    out_dir: Path,
    core: CoreFacts | None = None,
) -> tuple[StageResult, RunOutput | None]:
    """Run the Dynamic upload file `upload` for `core` (the pinned one by default) and
    judge it against `expected`.

    Args:
        upload: the pinned core's upload ELF (None: the Dynamic link did not give one);
        work: where the firmware is cached (shared by the examples); out_dir: this
        example's images.

    Returns:
        the stage ("dynamic-run"): skipped without an upload file, or when the loader
        refuses only names the emulator cannot provide; failed when the loader refuses
        it (errno and the first log lines; the run shows the loader's UART lines) or the
        run does not print what `expected` asks; and the run (None when nothing ran).

    Raises:
        FatalError: a tool is missing, or the firmware does not build.
    """
    if upload is None or not upload.is_file():
        return StageResult(STAGE, Status.SKIP, "no Dynamic upload file to run"), None
    core = core or pinned_core()
    firmware = build_firmware(core, work)
    out, placed = run_dynamic(
        upload, firmware, core, out_dir, expected.timeout_seconds, expected.must_not_print
    )
    if isinstance(placed, LoadError):
        unresolved = sorted(set(_MISSING.findall("\n".join(placed.log))))
        if unresolved and set(unresolved) <= set(firmware.not_provided):
            return (
                StageResult(
                    STAGE,
                    Status.SKIP,
                    "the emulated firmware does not provide "
                    f"{', '.join(unresolved)} (core {core.version} exports it; no Zephyr here)",
                ),
                out,
            )
        first = next((line for line in placed.log if line.strip()), "")
        # The UART shows the loader's log (the descriptor carries it), as the board's would.
        uart = "\n".join(out.lines[:UART_LINES]) or "(nothing)"
        return (
            StageResult(
                STAGE,
                Status.FAIL,
                f"core {core.version}'s loader refuses it: rc -{placed.errno} ({first})",
                f"Emulated UART:\n{uart}",
            ),
            out,
        )
    return judge_run(out, expected, STAGE), out
