"""Stage 3's breakdown: where a static firmware's flash goes, component by component, and its
RAM with the model's arena.

Flash. The figure is `sizes.Sizes.flash`, arm-none-eabi-size's text + data of the sized ELF
(the size link when the build made one: `sizes.measure_elf`). binutils' `size` (2.40,
`binutils/size.c` `berkeley_or_gnu_sum`) sums every allocated section: into text when it is
code or read-only, into data when it has contents, else into bss. `flash_breakdown` reads those
sections from the ELF (pyelftools) and splits each one by the linker map of the same link
(`-Wl,-Map`, written beside the ELF by `backends.GccToolchain.build`): the map lists every
input section the link kept after `--gc-sections`, with its address, size and object file.
Each byte of an output section goes to the first input section covering it (the linker
merges equal strings of several objects into one place: the first owns them); the bytes no
input section covers (alignment, `*fill*`, the linker's own assignments) are the "linker
fill" row. So the rows sum to the flash figure exactly, by construction.

Each object is a component by its path (`component_of`): the library's sources under `src/`
(`RULES`: CMSIS-NN, each kernel's `op_*.cpp` by name, the kernel utilities, the prim ops, the
kernel registration, the rest of the library: the ExecuTorch runtime), the sketch's objects
(the model's program array, `<array>` of its `model.h`, is the model row: its input section
`.rodata.<array>`), the check's Arduino core, and the toolchain's C and C++ libraries. With
`dot_a_linkage=true` the map names a library object as `ExecuTorch.a(op_add.cpp.o)`: `ar`
keeps one member per file name (`link.py`), so the member's name finds its source.

RAM. `Sizes.ram` is the globals (data + bss), what arduino-cli prints. A sketch that runs a
model mallocs its arena when it starts (the examples: `malloc(model_pte_arena_bytes)`), which
no size report sees. `ram_figure` adds the arena its `model.h` declares (`<array>_arena_bytes`,
the 32-bit board's: the memory plan, what `load_method` allocates and ETModel's table,
`extras/tools/et_arena.py`; read with `generator.pipeline.fit.arena_bytes`) when the sketch's
sources use that constant; otherwise the arena is unknown, and says why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

from generator.check.backends import Build
from generator.check.link import LinkInputs
from generator.check.plan import BuildPlan
from generator.check.sizes import Sizes, size_elf
from generator.library.layout import MODEL_ARRAY, MODEL_HEADER
from generator.pipeline.fit import arena_bytes
from generator.util.markdown import table

#: Component kinds, in the order a table shows equal sizes.
KINDS = ("runtime", "kernel", "cmsis-nn", "model", "sketch", "rest")

#: The library's sources (paths under its `src/`) by prefix, first match wins: (prefix,
#: component, kind). A kernel is named by its source (`component_of`); what matches none
#: is the runtime (src/executorch/runtime, extension, schema, the platform layer).
#: Where each comes from: data/vendored/*.yaml (`to:`) and generator/pipeline/selection.py.
RULES: tuple[tuple[str, str, str], ...] = (
    ("cmsis-nn/", "CMSIS-NN", "cmsis-nn"),
    ("executorch/kernels/portable/cpu/util/", "portable kernel utilities", "runtime"),
    ("executorch/kernels/portable/cpu/pattern/", "portable kernel utilities", "runtime"),
    ("executorch/kernels/prim_ops/", "prim ops", "runtime"),
    ("executorch/codegen/", "kernel registration", "runtime"),
)
#: A kernel's family by its folder under `src/` (an `op_*` source elsewhere is labelled by its
#: folder): ExecuTorch's Cortex-M backend and its portable kernels.
KERNEL_FAMILIES = (
    ("executorch/backends/cortex_m/", "Cortex-M"),
    ("executorch/kernels/portable/", "portable"),
)
RUNTIME = "ExecuTorch runtime"
SKETCH = "sketch"
MODEL = "model"
CORE = "Arduino core"
C_LIBRARIES = "C/C++ libraries"
LINKER = "linker fill"


@dataclass(frozen=True)
class Component:
    """One row of a breakdown.

    Attributes:
        name: what it is (`ExecuTorch runtime`, `op_add (portable)`, `CMSIS-NN`, `model`,
            `sketch`, `Arduino core`, `C/C++ libraries`, `linker fill`); kind: one of `KINDS`;
        size: bytes of flash.
    """

    name: str
    kind: str
    size: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: name, kind, bytes."""
        return {"name": self.name, "kind": self.kind, "bytes": self.size}


@dataclass(frozen=True)
class FlashBreakdown:
    """Where a firmware's flash goes.

    Attributes:
        components: the rows, largest first (kernels each by name); their sizes sum to
            `flash`.
        flash: bytes, text + data of the ELF (arm-none-eabi-size's figure).
        map_file: the linker map read (its file name).
    """

    components: tuple[Component, ...]
    flash: int
    map_file: str

    def size_of(self, name: str) -> int:
        """Bytes of the component `name` (0 when the firmware has none)."""
        return sum(c.size for c in self.components if c.name == name)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: flash_bytes, map, components [{name, kind, bytes}]."""
        return {
            "flash_bytes": self.flash,
            "map": self.map_file,
            "components": [c.to_dict() for c in self.components],
        }


@dataclass(frozen=True)
class Contribution:
    """One input section of a linker map.

    Attributes:
        output: the output section it lies in (`.text`); section: its name
        (`.rodata.model_pte`); address, size: where it lies (the output section's addresses)
        and its bytes; source: the map's file column (`.../core.a(Print.cpp.o)`).
    """

    output: str
    section: str
    address: int
    size: int
    source: str


_OUTPUT = re.compile(r"^(?P<name>[^\s*]\S*)(?:\s+0x(?P<addr>[0-9a-f]+)\s+0x(?P<size>[0-9a-f]+))?")
_INPUT = re.compile(r"^ (?P<name>[^\s*]\S*)(?:\s+0x(?P<addr>[0-9a-f]+)\s+0x(?P<size>[0-9a-f]+))?")
_TAIL = re.compile(r"^\s+0x(?P<addr>[0-9a-f]+)\s+0x(?P<size>[0-9a-f]+)(?P<rest>.*)$")
_MAP_START = "Linker script and memory map"


def map_contributions(text: str) -> list[Contribution]:
    """The input sections of a GNU ld map's memory map, in the order listed.

    A name too long for its column ends its line, and its address, size and file follow on
    the next (GNU ld `ldlang.c` `print_input_section`); `*fill*`, patterns (` *(.text*)`)
    and symbol lines are no input section.

    Raises:
        ValueError: the text has no "Linker script and memory map" part.
    """
    start = text.find(_MAP_START)
    if start < 0:
        raise ValueError("not a GNU ld map file (no 'Linker script and memory map')")
    found: list[Contribution] = []
    output = ""
    pending: tuple[str, bool] | None = None  # (name, is an output section) awaiting its line
    for line in text[start:].splitlines()[1:]:
        tail = _TAIL.match(line) if pending else None
        if pending and tail:
            name, is_output = pending
            pending = None
            if is_output:
                output = name
            else:
                found.append(_section(output, name, tail["addr"], tail["size"], tail["rest"]))
            continue
        pending = None
        match = _OUTPUT.match(line) or _INPUT.match(line)
        if match is None:
            continue
        is_output = not line.startswith(" ")
        if match["addr"] is None:
            if line.strip() == match["name"]:
                pending = (match["name"], is_output)
            continue
        if is_output:
            output = match["name"]
        else:
            rest = line[match.end() :]
            found.append(_section(output, match["name"], match["addr"], match["size"], rest))
    return found


def _section(output: str, name: str, addr: str, size: str, rest: str) -> Contribution:
    return Contribution(output, name, int(addr, 16), int(size, 16), rest.strip())


def flash_sections(elf: Path) -> dict[str, int]:
    """The ELF's sections that `size` counts as text or data, name -> bytes (the allocated
    sections except those without contents that may be written: bss; binutils 2.40
    `size.c` `berkeley_or_gnu_sum`)."""
    with elf.open("rb") as f:
        sections = list(ELFFile(f).iter_sections())
        out: dict[str, int] = {}
        for s in sections:
            flags = s["sh_flags"]
            if not flags & SH_FLAGS.SHF_ALLOC:
                continue
            code_or_readonly = flags & SH_FLAGS.SHF_EXECINSTR or not flags & SH_FLAGS.SHF_WRITE
            if code_or_readonly or s["sh_type"] != "SHT_NOBITS":
                out[s.name] = out.get(s.name, 0) + s["sh_size"]
    return out


def object_names(inputs: LinkInputs) -> dict[str, list[PurePosixPath]]:
    """Each linked object's file name -> the paths under arduino-cli's build folder
    (`sketch/...`, `libraries/<Dir>/...`, `core/...`) of the objects of that name, in link
    order: what the members of a map's archives are found by (`build_path_of`)."""
    names: dict[str, list[PurePosixPath]] = {}
    for group in (inputs.sketch, inputs.library, inputs.variant, inputs.core):
        for obj in group:
            names.setdefault(obj.build_path.name, []).append(obj.build_path)
    return names


_MEMBER = re.compile(r"^(?P<archive>.*)\((?P<member>[^()]+)\)$")


def build_path_of(source: str, names: dict[str, list[PurePosixPath]]) -> PurePosixPath | None:
    """The build-folder path of a map's file column (`.../build/core/core.a(Print.cpp.o)`,
    `.../build/sketch/Add.ino.cpp.o`), None when it is no object of the build folder (a
    toolchain library, `linker stubs`). An archive's member is the object of that name
    below the archive's folder (`ar` keeps one member per name: `link.py`)."""
    member = _MEMBER.match(source)
    path = PurePosixPath(member["archive"] if member else source)
    if "build" not in path.parts:
        return None
    parts = path.parts
    rel = PurePosixPath(*parts[len(parts) - parts[::-1].index("build") :])
    if member is None:
        return rel
    folder = rel.parent
    found = [p for p in names.get(member["member"], []) if p.is_relative_to(folder)]
    return found[0] if found else folder / member["member"]


def library_component(rel: PurePosixPath) -> tuple[str, str]:
    """(component, kind) of a library object by its source's path under `src/`
    (`executorch/kernels/portable/cpu/op_add.cpp.o` -> `op_add (portable)`, "kernel")."""
    text = rel.as_posix()
    for prefix, name, kind in RULES:
        if text.startswith(prefix):
            return name, kind
    stem = rel.name.split(".")[0]
    if stem.startswith("op_"):
        for prefix, family in KERNEL_FAMILIES:
            if text.startswith(prefix):
                return f"{stem} ({family})", "kernel"
        return f"{stem} ({rel.parent.as_posix()})", "kernel"
    return RUNTIME, "runtime"


def component_of(
    contribution: Contribution, names: dict[str, list[PurePosixPath]], model_array: str | None
) -> tuple[str, str]:
    """(component, kind) of one input section: by its object's place in the build folder,
    the model row by its section name (`.rodata.<array>`, `.data.<array>`)."""
    rel = build_path_of(contribution.source, names)
    if rel is None:
        is_linker = contribution.source in ("", "linker stubs")
        return (LINKER if is_linker else C_LIBRARIES), "rest"
    top = rel.parts[0]
    if top == "sketch":
        if model_array and contribution.section.split(".")[-1] == model_array:
            return MODEL, "model"
        return SKETCH, "sketch"
    if top == "libraries" and len(rel.parts) > 2:
        return library_component(PurePosixPath(*rel.parts[2:]))
    return CORE, "rest"


def attribute(
    contributions: Iterable[Contribution],
    sections: dict[str, int],
    names: dict[str, list[PurePosixPath]],
    model_array: str | None,
) -> dict[tuple[str, str], int]:
    """Bytes per (component, kind) of `sections` (an ELF's, name -> bytes): each byte to the
    first of `contributions` (a map's, `map_contributions`) covering it, by `component_of`;
    what no input section covers to `LINKER`. The values sum to the sections' bytes.

    Raises:
        ValueError: the input sections of an output section cover more than its bytes (the
            map is of another link).
    """
    totals: dict[tuple[str, str], int] = {}
    by_output: dict[str, list[Contribution]] = {}
    for c in contributions:
        if c.output in sections and c.size > 0:
            by_output.setdefault(c.output, []).append(c)
    for output, size in sections.items():
        covered = 0
        cursor = -1
        for c in sorted(by_output.get(output, []), key=lambda x: x.address):
            start = max(c.address, cursor)
            end = c.address + c.size
            if end <= start:
                continue
            key = component_of(c, names, model_array)
            totals[key] = totals.get(key, 0) + end - start
            covered += end - start
            cursor = end
        if covered > size:
            raise ValueError(f"the map's {output} holds {covered} B, its ELF section {size} B")
        if size > covered:
            totals[(LINKER, "rest")] = totals.get((LINKER, "rest"), 0) + size - covered
    return totals


def flash_breakdown(
    elf: Path, map_file: Path, inputs: LinkInputs, model_array: str | None = None
) -> FlashBreakdown:
    """Where the flash of the firmware `elf` goes, by component (the module docstring).

    Args:
        elf: the sized ELF (`sizes.size_elf` or the run link's); map_file: the map of the
        same link; inputs: its objects (`Build.inputs`); model_array: the program array of
        the sketch's model.h (`model_array`), None: no model row.

    Returns:
        rows, largest first, whose sizes sum to the ELF's text + data.

    Raises:
        OSError: a file cannot be read; ValueError: the map is no GNU ld map, or it does
        not match the ELF.
    """
    sections = flash_sections(elf)
    text = map_file.read_text(encoding="utf-8", errors="replace")
    totals = attribute(map_contributions(text), sections, object_names(inputs), model_array)
    rows = sorted(
        (Component(name, kind, size) for (name, kind), size in totals.items() if size),
        key=lambda c: (-c.size, KINDS.index(c.kind), c.name),
    )
    return FlashBreakdown(tuple(rows), sum(sections.values()), map_file.name)


_ARRAY = re.compile(r"^alignas\(\d+\) inline constexpr uint8_t (\w+)\[\]", re.MULTILINE)


def model_array(model_h: str) -> str:
    """The program array a model.h declares (`et_model_h.model_h`'s `alignas(16) inline
    constexpr uint8_t <name>[]`), else `MODEL_ARRAY` (other tools' headers, `xxd -i`)."""
    found = _ARRAY.search(model_h)
    return found.group(1) if found else MODEL_ARRAY


@dataclass(frozen=True)
class RamFigure:
    """A sketch's RAM: its globals and the arena it mallocs, bytes.

    Attributes:
        globals: data + bss (`Sizes.ram`); ram_max: the board's RAM for a sketch;
        arena: `<array>_arena_bytes` of its model.h, None: unknown; note: why unknown
            ("" when known).
    """

    globals: int
    ram_max: int
    arena: int | None
    note: str = ""

    @property
    def total(self) -> int | None:
        """Globals + arena, bytes (None when the arena is unknown)."""
        return None if self.arena is None else self.globals + self.arena

    def line(self) -> str:
        """`RAM: globals 2,560 B + arena 76,756 B (heap) = 79,316 B of 262,144`, or with the
        arena unknown `RAM: globals 2,560 B + arena unknown (why) of 262,144`."""
        head = f"RAM: globals {self.globals:,} B + arena "
        if self.total is None:
            return f"{head}unknown ({self.note}) of {self.ram_max:,}"
        return f"{head}{self.arena:,} B (heap) = {self.total:,} B of {self.ram_max:,}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: globals, arena, total (None: unknown), max, note (bytes)."""
        return {
            "globals_bytes": self.globals,
            "arena_bytes": self.arena,
            "total_bytes": self.total,
            "max_bytes": self.ram_max,
            "arena_note": self.note,
        }


def ram_figure(
    globals_bytes: int, ram_max: int, sketch_dir: Path, sources: Sequence[Path]
) -> RamFigure:
    """The RAM of a sketch whose globals are `globals_bytes`, with its model's arena.

    Args:
        globals_bytes: data + bss; ram_max: the board's RAM for a sketch (bytes);
        sketch_dir: the sketch's folder (its `model.h`); sources: its `.ino` and source
        files, searched for `<array>_arena_bytes`.

    Returns:
        the figure; the arena unknown when the sketch has no model.h, the model.h declares
        no arena, or the sketch's sources do not use it.
    """
    header = sketch_dir / MODEL_HEADER
    if not header.is_file():
        return RamFigure(globals_bytes, ram_max, None, f"no {MODEL_HEADER}")
    text = header.read_text(encoding="utf-8", errors="replace")
    name = model_array(text)
    try:
        arena = arena_bytes(text, name)
    except ValueError:
        arena = None
    if arena is None:
        return RamFigure(globals_bytes, ram_max, None, f"{MODEL_HEADER} declares no arena")
    constant = f"{name}_arena_bytes"
    used = any(
        constant in p.read_text(encoding="utf-8", errors="replace") for p in sources if p.is_file()
    )
    if not used:
        return RamFigure(globals_bytes, ram_max, None, f"the sketch does not use {constant}")
    return RamFigure(globals_bytes, ram_max, arena)


@dataclass(frozen=True)
class Footprint:
    """Stage 3's breakdown of one example (`measure_footprint`).

    Attributes:
        flash: where its flash goes (None: unknown, `note` says why); ram: its globals and
        arena (None: no firmware was measured); note: why `flash` is unknown ("" when known).
    """

    flash: FlashBreakdown | None
    ram: RamFigure | None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: flash (`FlashBreakdown.to_dict`, None), flash_note, ram."""
        return {
            "flash": self.flash.to_dict() if self.flash else None,
            "flash_note": self.note,
            "ram": self.ram.to_dict() if self.ram else None,
        }


def measure_footprint(build: Build, plan: BuildPlan, sizes: Sizes | None) -> Footprint | None:
    """The breakdown of the firmware `build` made of `plan`, whose `sizes` were measured
    (None: no firmware, no breakdown).

    The ELF and map are those `sizes.measure_elf` sizes: the size link's
    (`<example>_size.elf`, `.map`) when the build made one, else the run link's. A build
    without a map of ours (arduino-cli's) or objects (`Build.inputs`) has the flash
    unknown; a map that does not match its ELF too, with the reason.
    """
    if sizes is None or build.binary is None:
        return None
    sketch_dir = plan.library / plan.sketch_dir
    sources = [plan.library / p for p in (*plan.ino_files, *plan.sketch_sources)]
    ram = ram_figure(sizes.ram, sizes.ram_max, sketch_dir, sources)
    if build.inputs is None:
        return Footprint(None, ram, "the build made no map of its objects (arduino-cli)")
    sized = size_elf(build.binary)
    elf = sized if sized.is_file() else build.binary
    header = sketch_dir / MODEL_HEADER
    array = (
        model_array(header.read_text(encoding="utf-8", errors="replace"))
        if header.is_file()
        else None
    )
    try:
        flash = flash_breakdown(elf, elf.with_suffix(".map"), build.inputs, array)
    except (OSError, ValueError) as e:
        return Footprint(None, ram, f"{elf.with_suffix('.map').name}: {e}")
    if flash.flash != sizes.flash:
        return Footprint(None, ram, f"{elf.name} has {flash.flash:,} B, not {sizes.flash:,} B")
    return Footprint(flash, ram)


def footprint_markdown(footprint: Footprint | None) -> list[str]:
    """An example's lines of the check report: the RAM line (`RamFigure.line`), then the
    flash table: each component but the rest (kind "rest") by name, largest first, the rest
    summed in one row, then the flash total; its bytes sum to that total. None: no lines."""
    if footprint is None:
        return []
    lines = [f"- {footprint.ram.line()}"] if footprint.ram else []
    flash = footprint.flash
    if flash is None:
        return [*lines, f"- flash by component: unknown ({footprint.note})", ""]
    shown = [c for c in flash.components if c.kind != "rest"]
    rest = [c for c in flash.components if c.kind == "rest"]

    def share(size: int) -> str:
        return f"{size * 100 / flash.flash:.1f}%" if flash.flash else "-"

    rows = [[c.name, f"{c.size:,} B", share(c.size)] for c in shown]
    if rest:
        parts = ", ".join(f"{c.name} {c.size:,} B" for c in rest)
        total = sum(c.size for c in rest)
        rows.append([f"the rest: {parts}", f"{total:,} B", share(total)])
    rows.append(["**flash**", f"**{flash.flash:,} B**", share(flash.flash)])
    return [
        *lines,
        f"- flash by component (the static link's sections, from `{flash.map_file}`):",
        "",
        *table(["component", "flash", "share"], rows, align="lrr"),
        "",
    ]
