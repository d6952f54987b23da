"""Toolchains for `check`: interchangeable back ends behind one small protocol.

- `gcc-arm`: Debian's arm-none-eabi GCC 12 (the board core's compiler family) with the
  check's Arduino core (Arduino's ArduinoCore-API, as the board's core uses it, and our
  board half for QEMU's mps2-an505); its firmware is also what the emulated run boots.
- `arduino-cli`: the board's own build, `arduino-cli compile --fqbn
  arduino:zephyr:unoq:link_mode=static`; its firmware is for the real UNO Q, so the
  emulated run still uses a `gcc-arm` build.
- `host`: the machine's GCC with AddressSanitizer and UBSan, for the sanitizer run.

`select_toolchain` is the one place that picks a back end.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field, fields
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from generator.boards.budgets import EMULATORS, UNO_Q, Board, is_compact
from generator.boards.firmware_symbols import defsym_flags, provided_functions
from generator.check.link import (
    LinkInputs,
    LinkLine,
    LinkObject,
    library_linkage,
    model_build_folder,
    source_object,
    stage_link,
)
from generator.check.plan import BuildPlan, sketch_cpp
from generator.check.sizes import size_elf
from generator.toolchain.gcc import (
    API_DIR,
    CORE_DIR,
    CORE_INCLUDES,
    CORE_SOURCES,
    HOST_GCC,
    Compiler,
    arm_gcc,
)
from generator.toolchain.objcache import CompileJob, ObjectCache
from generator.util.errors import FatalError

#: newlib's formatting entry points, wrapped so "%zu" works (board/printf_c99.c).
PRINTF_WRAPS = (
    "_vfprintf_r",
    "_svfprintf_r",
    "_vfiprintf_r",
    "_svfiprintf_r",
    "vfprintf",
    "vfiprintf",
)


@dataclass
class Build:
    """What a toolchain's build of one example produced.

    Attributes:
        ok: True when compiling and linking succeeded.
        binary: the firmware ELF or host executable (None when the build failed).
        log: compiler and linker diagnostics.
        objects: objects of the sketch and the library (no core); empty for arduino-cli.
        compiled, reused: objects compiled now, and taken from the object cache.
        size_report: the toolchain's own size report text (arduino-cli), else "".
        inputs: the link's objects grouped as arduino-cli groups them (None for
            arduino-cli, or when compiling failed); line: the staged object part of the
            link, which the Dynamic link (`dynamic.py`) reuses.
    """

    ok: bool
    binary: Path | None
    log: str
    objects: list[Path] = field(default_factory=list)
    compiled: int = 0
    reused: int = 0
    size_report: str = ""
    inputs: LinkInputs | None = None
    line: LinkLine | None = None
    size_binary: Path | None = None


class Toolchain(Protocol):
    """A back end that builds one example of a library."""

    @property
    def name(self) -> str:
        """ "gcc-arm", "arduino-cli" or "host"."""
        ...

    def missing(self) -> str | None:
        """Why this toolchain cannot be used here (what to install), or None."""
        ...

    def build(self, plan: BuildPlan, out_dir: Path, cache: ObjectCache) -> Build:
        """Compile and link `plan` into `out_dir`; failures are in the returned `Build`."""
        ...


@dataclass(frozen=True, kw_only=True)
class GccToolchain(Compiler):
    """A GCC build following the Arduino rules, with the check's Arduino core: a `Compiler`
    (`generator/toolchain/gcc.py`: compilers, archiver, flags per language) with the core's
    sources and the link.

    Attributes:
        name: back-end name; core_sources: the core's half for this target (absolute);
        link: link flags; variant_sources: those of `core_sources` that arduino-cli would
        compile from the variant folder (on the object list; the others go into `core.a`);
        size_link: link a second time for the sizes (`_size_link`);
        library_defines: whether the library's sources get `defines` too (a board of the
        compact runtime, whose header `src/executorch_compact.h` tests its macro).
    """

    name: str
    core_sources: tuple[Path, ...]
    link: tuple[str, ...]
    variant_sources: tuple[Path, ...] = ()
    size_link: bool = False
    library_defines: bool = False

    def build(self, plan: BuildPlan, out_dir: Path, cache: ObjectCache) -> Build:
        """Compile (through the object cache, in parallel) and link `plan`.

        Raises:
            FatalError: a compiler is not installed.
        """
        reason = self.missing()
        if reason:
            raise FatalError(reason)
        jobs, sketch_sources = self._compile_jobs(plan, cache)
        outcomes = cache.compile_all(jobs)
        compiled = sum(1 for o in outcomes if o.object is not None and not o.hit)
        reused = sum(1 for o in outcomes if o.hit)
        failed = [o for o in outcomes if o.object is None]
        warnings = "\n".join(o.log for o in outcomes if o.log and o.object is not None)
        if failed:
            log = "\n".join(f"{o.job.source}:\n{o.log}" for o in failed[:5])
            if len(failed) > 5:
                log += f"\n... and {len(failed) - 5} more sources failed to compile"
            return Build(False, None, log, compiled=compiled, reused=reused)

        objects = [o.object for o in outcomes if o.object is not None]
        inputs = self.link_inputs(plan, sketch_sources, objects)
        out_dir.mkdir(parents=True, exist_ok=True)
        line = stage_link(
            inputs, out_dir / "build", self.ar, model_build_folder(plan.library / plan.sketch_dir)
        )
        binary = out_dir / f"{plan.example}.{'elf' if self.name == 'gcc-arm' else 'exe'}"
        argv = [
            self.cxx,
            *self.common,
            *self.link,
            f"-Wl,-Map={out_dir / (plan.example + '.map')}",
            *line.object_files,
            *([str(line.core_archive)] if line.core_archive else []),
            "-o",
            str(binary),
        ]
        proc = subprocess.run(argv, cwd=out_dir, capture_output=True, text=True, check=False)
        log = "\n".join(s for s in (warnings, proc.stdout.strip(), proc.stderr.strip()) if s)
        ok = proc.returncode == 0 and binary.is_file()
        size_binary = self._size_link(argv, binary, line) if ok and self.size_link else None
        if ok and self.size_link and size_binary is None:
            log = "\n".join(
                [
                    log,
                    f"the size link failed (see {size_elf(binary).with_suffix('.log')}); "
                    "the static sizes are of the run link, with newlib's C library",
                ]
            ).strip()
        if line.lost:
            ok = False
            log = "\n".join([*(lost_message(x) for x in line.lost), log]).strip()
        return Build(
            ok,
            binary if ok else None,
            log,
            objects=objects[len(self.core_sources) :],
            compiled=compiled,
            reused=reused,
            inputs=inputs,
            line=line,
            size_binary=size_binary,
        )

    def _compile_jobs(
        self, plan: BuildPlan, cache: ObjectCache
    ) -> tuple[list[CompileJob], list[str]]:
        """The compiles of `plan`: the core's sources, then the sketch's (its generated
        `.ino.cpp` first), then the library's; and the sketch's sources (`link_inputs`)."""
        core = tuple(str(p) for p in CORE_INCLUDES)
        lib_inc = ("src", *core)
        sketch_inc = (plan.sketch_dir.as_posix(), "src", *core)
        jobs: list[CompileJob] = []
        # The board's macros (`defines`) go to the sketch's sources, and to the library's on a
        # board of the compact runtime only: arduino-cli passes them to every compile, but no
        # other source of the library or of the check's core tests an arduino:zephyr board
        # macro (src/executorch_compact.h tests those of the compact boards; the old-core
        # `#error`s of executorch_board_check.h test theirs only under GCC < 9 with an
        # mbed/Renesas architecture macro), so their objects are the same without them, and
        # boards of one CPU share them in the object cache (with them, each of the 14 boards
        # compiled the library cold).
        plain = dataclasses.replace(self, defines=())
        library = self if self.library_defines else plain
        for src in (str(p) for p in self.core_sources):
            jobs.append(CompileJob(plain.compile_argv(src, core), src, CORE_DIR))
        sketch_sources = [str(sketch_cpp(plan, cache))] + [
            p.as_posix() for p in plan.sketch_sources
        ]
        for src in sketch_sources:
            jobs.append(CompileJob(self.compile_argv(src, sketch_inc), src, plan.library))
        for src in (p.as_posix() for p in plan.library_sources):
            jobs.append(CompileJob(library.compile_argv(src, lib_inc), src, plan.library))
        return jobs, sketch_sources

    def _size_link(self, argv: list[str], binary: Path, line: LinkLine) -> Path | None:
        """Link `argv` (the run link writing `binary`) again for its size, into
        `size_elf(binary)`, with the firmware's functions provided; None when it fails."""
        out = size_elf(binary)
        out.unlink(missing_ok=True)
        own = [*line.object_files, *([str(line.core_archive)] if line.core_archive else [])]
        # argv ends with "-o BINARY"; the map goes beside the size link.
        size_argv = [
            f"-Wl,-Map={out.with_suffix('.map')}" if a.startswith("-Wl,-Map=") else a
            for a in argv[:-2]
        ]
        size_argv += [*defsym_flags(provided_functions(own)), "-o", str(out)]
        proc = subprocess.run(
            size_argv, cwd=binary.parent, capture_output=True, text=True, check=False
        )
        if proc.returncode != 0 or not out.is_file():
            (out.parent / f"{out.stem}.log").write_text(proc.stdout + proc.stderr)
            return None
        return out

    def link_inputs(
        self, plan: BuildPlan, sketch_sources: list[str], objects: list[Path]
    ) -> LinkInputs:
        """Group `objects` (the core's, then the sketch's, then the library's, in the
        order `build` compiled them) as arduino-cli groups them, with its object names."""
        core_objects = objects[: len(self.core_sources)]
        sketch_objects = objects[
            len(self.core_sources) : len(self.core_sources) + len(sketch_sources)
        ]
        library_objects = objects[len(self.core_sources) + len(sketch_sources) :]
        variant = set(self.variant_sources)
        core: list[LinkObject] = []
        board: list[LinkObject] = []
        for src, obj in zip(self.core_sources, core_objects, strict=True):
            base = API_DIR if src.is_relative_to(API_DIR) else src.parent
            entry = LinkObject(
                obj, PurePosixPath("core") / source_object(src.as_posix(), base.as_posix())
            )
            (board if src in variant else core).append(entry)
        sketch_dir = plan.sketch_dir.as_posix()
        sketch = [
            LinkObject(obj, PurePosixPath("sketch") / f"{plan.example}.ino.cpp.o")
            if i == 0
            else LinkObject(obj, PurePosixPath("sketch") / source_object(src, sketch_dir))
            for i, (src, obj) in enumerate(zip(sketch_sources, sketch_objects, strict=True))
        ]
        linkage = library_linkage(plan.library)
        library = [
            LinkObject(
                obj, PurePosixPath("libraries", linkage.dir_name) / source_object(src, "src")
            )
            for src, obj in zip(
                (p.as_posix() for p in plan.library_sources), library_objects, strict=True
            )
        ]
        # compileFiles sorts each compiled folder's objects by path; the sketch folder's
        # come before its src/ folder's (sketch.go buildSketch).
        return LinkInputs(
            sketch=tuple(sorted(sketch, key=lambda o: (o.build_path.parts[1] == "src", _key(o)))),
            library=tuple(sorted(library, key=_key)),
            linkage=linkage,
            variant=tuple(sorted(board, key=_key)),
            core=tuple(sorted(core, key=_key)),
        )


def _key(obj: LinkObject) -> str:
    return str(obj.build_path)


def lost_message(lost: str) -> str:
    """Why an object that `ar` replaced by a same-named one fails the build (`lost`: as in
    `LinkLine.lost`)."""
    archive, member = lost.split(": ", 1)
    return (
        f"{archive} loses {member}: arduino-cli archives with `ar rcs`, which keeps one member "
        f"per file name, so a later object named {PurePosixPath(member).name} replaced it and "
        "it is not linked on the board; give the source a name of its own"
    )


#: The board halves of the boards no emulator runs, by CPU (`Board.cpu`): compiled, linked
#: and sized, never booted (`arduino_core/board/armv6m.c`, `.ld`: the Cortex-M0+'s ARMv6-M).
COMPILE_ONLY_BOARD_FILES = {"cortex-m0plus": "armv6m"}


def board_file(board: Board) -> str:
    """The stem of `board`'s board half (`arduino_core/board/<stem>.c` and `.ld`): its
    emulator's (`generator.boards.budgets.EMULATORS`), else its CPU's compile-only one
    (`COMPILE_ONLY_BOARD_FILES`).

    Raises:
        ValueError: `board` has no emulator and its CPU no compile-only board half.
    """
    if board.emulator is not None:
        return EMULATORS[board.emulator].board_file
    stem = COMPILE_ONLY_BOARD_FILES.get(board.cpu)
    if stem is None:
        raise ValueError(f"{board.name} ({board.cpu}) has no emulator and no board half")
    return stem


def _board_sources(board_dir: Path, stem: str = "mps2_an505") -> tuple[Path, ...]:
    """The board half of the emulated core: the variant's sources (start-up, UART, heap)."""
    return (board_dir / "new.cpp", board_dir / f"{stem}.c", board_dir / "printf_c99.c")


def _compiler(compiler: Compiler) -> dict[str, Any]:
    """`compiler`'s fields, to build a `GccToolchain` on it."""
    return {f.name: getattr(compiler, f.name) for f in fields(Compiler)}


#: The stack the emulated board gives the sketch above its RAM budget (the `.ld` files'
#: `STACK_SIZE`): on the board `setup()` and `loop()` run on the firmware's main thread, whose
#: stack is the firmware's, not part of the RAM arduino-cli counts for the sketch
#: (`upload.maximum_data_size`, `generator.boards.budgets`); the size of that stack on each variant
#: was not read, and the check gives every board this one.
STACK_BYTES = 16 * 1024
#: newlib's own globals in the run link (its `_impure_data`, malloc's state, stdio), which on
#: the board are the firmware's C library's, not the sketch's: the run link's `.data` +
#: `.bss` less the size link's (which takes the C library from the firmware,
#: `firmware_symbols.py`). Measured: 2,552 B for AddModel and KeywordSpotting on each of the
#: 14 emulated boards (`check --board all --keep`, 5,104 and 5,112 B against 2,552 and
#: 2,560 B, arm-none-eabi-size, 2026-12-02). The emulated RAM holds them beside the board's
#: budget, so a sketch's globals and heap have the board's RAM.
C_LIBRARY_RAM_BYTES = 2_552


def _budget_flags(board: Board) -> tuple[str, ...]:
    """The run link's budget: the emulated RAM's length is `board`'s RAM plus the stack
    (`STACK_BYTES`) and newlib's globals (`C_LIBRARY_RAM_BYTES`; `__board_ram_bytes` of the
    board's `.ld`), so the sketch's globals and heap (its arena comes from malloc) have the
    board's RAM and no more. The flash is not: the run link carries newlib's C library
    (printf, string functions: about 35 KB), which on the board is the firmware's, so a
    sketch that fits the board would overflow it (AddModel on the UNO R4 WiFi: 37,264 B over
    its 122,880). The flash budget is judged on the size link (`sizes.measure_elf`, which takes
    those functions from the firmware as the board's link does) by the sizes stage. None
    for the UNO Q: mps2_an505.ld's defaults are its budgets, and its link line stays the one
    it always was."""
    if board == UNO_Q:
        return ()
    ram = board.ram_bytes + STACK_BYTES + C_LIBRARY_RAM_BYTES
    return (f"-Wl,--defsym=__board_ram_bytes={ram}",)


def board_defines(board: Board) -> tuple[str, ...]:
    """The board's macros as the core defines them (`-D<Board.macro>` and
    `-DARDUINO_ARCH_ZEPHYR`: platform.txt's `-DARDUINO_{build.board}` and
    `-DARDUINO_ARCH_ZEPHYR`, lines 73 and 76 at 00ec4954, see `ZephyrBoard.macro`), which the
    check passes to the sketch's compile (`GccToolchain.build`), so a sketch that refuses the
    board (`generator.pipeline.fit`) stops there as it does under arduino-cli, and to the library's
    on
    a board of the compact runtime (`generator.boards.budgets.is_compact`). None for the UNO Q
    (`()`): its compile line stays the one it always was (no source of the library or the
    check's core tests `ARDUINO_UNO_Q`), nor for a board without a macro."""
    if board == UNO_Q or not board.macro:
        return ()
    return (f"-D{board.macro}", "-DARDUINO_ARCH_ZEPHYR")


def _gcc_arm(board: Board) -> GccToolchain:
    board_dir = CORE_DIR / "board"
    stem = board_file(board)
    return GccToolchain(
        **_compiler(arm_gcc(board.cpu_flags, board_defines(board))),
        name="gcc-arm",
        library_defines=is_compact(board),
        core_sources=(*CORE_SOURCES, board_dir / "abi.cpp", *_board_sources(board_dir, stem)),
        variant_sources=_board_sources(board_dir, stem),
        # Full newlib (no nano.specs); nosys.specs only for system calls we do not define.
        link=(
            "-nostartfiles",
            "--specs=nosys.specs",
            "-Wl,--gc-sections",
            "-Wl,--no-warn-rwx-segments",
            "-Wl," + ",".join(f"--wrap={symbol}" for symbol in PRINTF_WRAPS),
            f"-T{board_dir / (stem + '.ld')}",
            *_budget_flags(board),
            "-Wl,--start-group",
            "-lstdc++",
            "-lm",
            "-lc",
            "-lgcc",
            "-Wl,--end-group",
        ),
        size_link=True,
    )


HOST = GccToolchain(
    **_compiler(HOST_GCC),
    name="host",
    core_sources=(*CORE_SOURCES, CORE_DIR / "host" / "host.c"),
    variant_sources=(CORE_DIR / "host" / "host.c",),
    link=("-lm",),
)

GCC_ARM = _gcc_arm(UNO_Q)


@dataclass(frozen=True)
class ArduinoCli:
    """The board's own build through `arduino-cli` (core `arduino:zephyr`)."""

    board: Board = UNO_Q
    name: str = "arduino-cli"

    def missing(self) -> str | None:
        """Why arduino-cli cannot build for the board here, or None."""
        exe = shutil.which("arduino-cli")
        if exe is None:
            return "arduino-cli is not installed (https://arduino.github.io/arduino-cli/)"
        platform = self.board.fqbn.split(":")[0] + ":" + self.board.fqbn.split(":")[1]
        proc = subprocess.run([exe, "core", "list"], capture_output=True, text=True, check=False)
        if platform not in proc.stdout:
            return f"the {platform} core is not installed: arduino-cli core install {platform}"
        return None

    def build(self, plan: BuildPlan, out_dir: Path, cache: ObjectCache) -> Build:
        """`arduino-cli compile` the example with the library passed by `--library`.

        Raises:
            FatalError: arduino-cli or the board core is not installed.
        """
        reason = self.missing()
        if reason:
            raise FatalError(reason)
        build_path = out_dir / "arduino-cli"
        argv = [
            "arduino-cli",
            "compile",
            "--fqbn",
            self.board.fqbn,
            "--library",
            str(plan.library),
            "--build-path",
            str(build_path),
            "--jobs",
            str(os.cpu_count() or 1),
            # The compiler's default warnings, as the live executorch-arduino CI compiles
            # (meta-pytorch/executorch-arduino .github/workflows/ci.yml at 0e4de219);
            # arduino-cli's own default is `none`.
            "--warnings",
            "default",
            # The compile lines, to read the board macro the core defines (`board_macro_error`).
            "--verbose",
            str(plan.library / plan.sketch_dir),
        ]
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        out = "\n".join(line for line in proc.stdout.splitlines() if not _COMPILE_LINE.search(line))
        log = (out + "\n" + proc.stderr).strip()
        wrong = board_macro_error(self.board, proc.stdout)
        if wrong:
            return Build(False, None, f"{wrong}\n{log}")
        elf = build_path / f"{plan.example}.ino.elf"
        ok = proc.returncode == 0 and elf.is_file()
        return Build(ok, elf if ok else None, log, size_report=out if ok else "")


#: A compile line of arduino:zephyr's recipes (platform.txt lines 73, 76 and 79 at 00ec4954
#: pass `-DARDUINO_ARCH_{build.arch}` on each), which `--verbose` prints.
_COMPILE_LINE = re.compile(r"(?<!\S)-DARDUINO_ARCH_\w+")
_BOARD_DEFINE = re.compile(r"(?<!\S)-D(ARDUINO_\w+)")


def board_macro_error(board: Board, verbose: str) -> str | None:
    """Why arduino-cli's compile lines (`verbose`: `arduino-cli compile --verbose`'s output)
    do not define `board.macro`, or None when they do, print none, or the board has none.

    The core defines `-DARDUINO_{build.board}` (platform.txt); `generator/boards/budgets.py` has
    each board's `build.board` from one boards.txt (03c7e065), and both the compact runtime
    (`src/executorch_compact.h`) and the examples' board-fit `#error`s test that macro. A core
    that spells it otherwise would leave both silently off; this says so instead. None on the
    UNO Q, where neither tests it (no example refuses it, it is no compact board), so that a
    core's spelling never fails the check every pull request runs."""
    defined = {m for m in _BOARD_DEFINE.findall(verbose) if not m.startswith("ARDUINO_ARCH_")}
    if board.key == UNO_Q.key or not board.macro or not defined or board.macro in defined:
        return None
    seen = ", ".join(f"-D{m}" for m in sorted(defined))
    return (
        f"arduino-cli compiled for the {board.name} with {seen}, not -D{board.macro}, the "
        "macro generator/boards/budgets.py has for it (boards.txt build.board): the library's "
        "compact "
        "runtime and the examples' board-fit #error test that macro, so on this core neither "
        "would act. Correct the board's build_board in generator/boards/budgets.py."
    )


TOOLCHAINS: dict[str, Toolchain] = {
    "gcc-arm": GCC_ARM,
    "arduino-cli": ArduinoCli(),
}


def _for_board(board: Board) -> dict[str, Toolchain]:
    """`TOOLCHAINS` for `board`: the UNO Q's are the table's own objects."""
    if board == UNO_Q:
        return TOOLCHAINS
    return {"gcc-arm": _gcc_arm(board), "arduino-cli": ArduinoCli(board)}


def select_toolchain(name: str, board: Board = UNO_Q) -> Toolchain:
    """The compile back end for `--compiler NAME` ("auto", "gcc-arm" or "arduino-cli") and
    `--board` (`board`: its FQBN for arduino-cli, its CPU flags for gcc-arm).

    "auto" is arduino-cli when it and the board core are installed, else gcc-arm.

    Raises:
        FatalError: unknown name, or the chosen toolchain is not installed.
    """
    toolchains = _for_board(board)
    if name == "auto":
        name = "arduino-cli" if toolchains["arduino-cli"].missing() is None else "gcc-arm"
    toolchain = toolchains.get(name)
    if toolchain is None:
        raise FatalError(f"unknown compiler {name!r}; use auto, gcc-arm or arduino-cli")
    reason = toolchain.missing()
    if reason:
        raise FatalError(f"--compiler {name}: {reason}")
    return toolchain
