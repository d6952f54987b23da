"""Our own model of the board's LLEXT loader: place a Dynamic upload file's sections the way
Zephyr's LLEXT does, apply its ARM relocations with the same range checks, resolve undefined
symbols only against a firmware's export table, and refuse what Zephyr refuses, with its
error code and log lines. The Dynamic stage judges an example with it for every core of
`cores.py`; the emulated Dynamic run (`dynamic_run.py`) places the image it computes in the
emulated board's memory.

Reference (read, not copied): arduino/zephyr (the fork ArduinoCore-zephyr builds, branch
`zephyr-arduino-v4.2.0`): `subsys/llext/llext_load.c` (`do_llext_load`, `llext_map_sections`),
`llext_mem.c` 212807aa (`llext_copy_region`), `llext_link.c` 069cee85 (`llext_link`, which
logs every failed relocation and returns the first error), `llext.c` (`llext_load`),
`arch/arm/core/elf.c` 81eda93b (`arch_elf_relocate`), and `lib/heap/heap.c` (sys_heap, for
what an allocation takes). What this model follows:

- Allocations, in order: `struct llext` (`LLEXT_STRUCT_BYTES`, an estimate: its exact size
  was not read), the section map (8 bytes a section), the string tables, then the regions
  TEXT, DATA, RODATA, BSS, EXPORT, SYMTAB, PREINIT, INIT, FINI, the symbol table (8 bytes a
  global function or object, undefined ones included) and the export table (8 bytes an
  `.exported_sym` entry). The section map and symbol table are freed at the end; the peak
  is reached before, so both count.
- A region is the span of its sections in the file, aligned to their largest alignment
  (with the prepad), and takes exactly its size (no MPU rounding: `CONFIG_ARM_MPU=n`).
  With persistent storage a region is read in place when it is not writable, no relocation
  section targets it and it has data (symbol and string tables, and `.llext.rodata.noreloc`
  where the core splits it out); with writable storage every region with data is.
- The heap is a sys_heap of `heap_bytes`: 8-byte chunks, a 4-byte chunk header (8 above
  0x7fff chunks), chunk 0 holding the heap's own bookkeeping; an aligned allocation needs a
  free chunk of `bytes + align` at that moment. Allocations come one after another from the
  one free chunk (nothing is freed before the peak), so the model is a bump allocator; the
  prefix an alignment leaves is not reused (an over-estimate of at most `align` bytes).
- Relocations: `SHT_REL` sections whose target is allocated; the types of `RELOCATIONS`.
"""

from __future__ import annotations

import io
import itertools
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from elftools.common.exceptions import ELFError, ELFParseError
from elftools.elf.elffile import ELFFile

ENOEXEC = 8
ENOMEM = 12
EFAULT = 14
ENODATA = 61
ENOTSUP = 134
ENOENT = 2

#: sizeof(struct llext) on 32-bit ARM with 11 regions and no USERSPACE: an estimate from its
#: fields (Zephyr 4.2 `include/zephyr/llext/llext.h`); the exact size was not measured.
LLEXT_STRUCT_BYTES = 188
CHUNK_UNIT = 8

# Section types as pyelftools names them.
_SHT_PROGBITS = "SHT_PROGBITS"
_SHT_SYMTAB = "SHT_SYMTAB"
_SHT_RELA = "SHT_RELA"
_SHT_NOBITS = "SHT_NOBITS"
_SHT_REL = "SHT_REL"
_SHT_INIT_ARRAY = "SHT_INIT_ARRAY"
_SHT_FINI_ARRAY = "SHT_FINI_ARRAY"
_SHT_PREINIT_ARRAY = "SHT_PREINIT_ARRAY"
_SHF_WRITE = 0x1
_SHF_ALLOC = 0x2
_SHF_EXECINSTR = 0x4

#: enum llext_mem, in the order the regions are copied.
REGIONS = ("TEXT", "DATA", "RODATA", "BSS", "EXPORT", "SYMTAB", "STRTAB", "SHSTRTAB",
           "PREINIT", "INIT", "FINI")  # fmt: skip
_COPY_ORDER = ("TEXT", "DATA", "RODATA", "BSS", "EXPORT", "SYMTAB", "PREINIT", "INIT", "FINI")
#: The rodata the board's build splits out (`gen-rodata-ld`), left in flash.
NORELOC_SECTION = ".llext.rodata.noreloc"

#: ARM relocation types arch_elf_relocate handles (name, and the branch range it checks).
RELOCATIONS: dict[int, tuple[str, str]] = {
    0: ("R_ARM_NONE", "nothing"),
    1: ("R_ARM_PC24", "±32 MiB"),
    2: ("R_ARM_ABS32", "any address"),
    3: ("R_ARM_REL32", "any address"),
    10: ("R_ARM_THM_CALL", "±16 MiB"),
    21: ("R_ARM_GLOB_DAT", "any address"),
    22: ("R_ARM_JUMP_SLOT", "any address"),
    23: ("R_ARM_RELATIVE", "any address"),
    28: ("R_ARM_CALL", "±32 MiB"),
    29: ("R_ARM_JUMP24", "±32 MiB"),
    30: ("R_ARM_THM_JUMP24", "±16 MiB"),
    38: ("R_ARM_TARGET1", "any address"),
    40: ("R_ARM_V4BX", "nothing"),
    42: ("R_ARM_PREL31", "±1 GiB"),
    43: ("R_ARM_MOVW_ABS_NC", "any address"),
    44: ("R_ARM_MOVT_ABS", "any address"),
    45: ("R_ARM_MOVW_PREL_NC", "any address"),
    46: ("R_ARM_MOVT_PREL", "any address"),
    47: ("R_ARM_THM_MOVW_ABS_NC", "any address"),
    48: ("R_ARM_THM_MOVT_ABS", "any address"),
    49: ("R_ARM_THM_MOVW_PREL_NC", "any address"),
    50: ("R_ARM_THM_MOVT_PREL", "any address"),
}
#: The short branches: calls that cannot reach the firmware from the heap.
SHORT_BRANCHES = frozenset({1, 10, 28, 29, 30})


class LoadError(Exception):
    """The loader refused the extension.

    Attributes:
        errno: the positive error number (`llext_load` returns its negative).
        log: the loader's log lines, in order, as the board's UART shows them.
    """

    def __init__(self, errno: int, log: list[str]) -> None:
        super().__init__(log[-1] if log else f"error {errno}")
        self.errno = errno
        self.log = log


@dataclass(frozen=True)
class Allocation:
    """One allocation from the LLEXT heap.

    Attributes:
        what: "struct llext", "section map", a region name, "symbol table", "export table".
        size: bytes asked for; align: alignment asked for; address: where it landed.
        taken: heap bytes it took (chunk header, rounding and alignment padding included).
    """

    what: str
    size: int
    align: int
    address: int
    taken: int


@dataclass
class Region:
    """A loader region: its sections' span in the file and where it was placed.

    `offset`, `size` and `address` include the prepad (the bytes before the first section
    that align the region's start, as Zephyr's `llext_map_sections` adds them): a section
    lies at `address + (its file offset - offset)`. `data` is the region's bytes from
    `address` on.
    """

    name: str
    offset: int
    size: int
    align: int
    nobits: bool
    flags: int
    prepad: int = 0
    has_relocs: bool = False
    address: int = 0
    on_heap: bool = False
    data: bytearray = field(default_factory=bytearray)


@dataclass
class Loaded:
    """An extension the loader accepted.

    Attributes:
        allocations: every heap allocation, in order; peak_bytes: heap bytes in use at the
        peak (chunk 0 included); heap_bytes: the heap's size.
        regions: name -> placed region; heap_image: the heap's bytes from `heap_base`, up to
        the peak (what the emulator writes there); entry: the address of `main` (Thumb bit
        set); init: the PREINIT then INIT function addresses; short_branches: relocations of
        a short-branch type to a symbol outside the extension (0 for a loadable one).
    """

    allocations: list[Allocation]
    peak_bytes: int
    heap_bytes: int
    heap_base: int
    regions: dict[str, Region]
    heap_image: bytes
    entry: int
    init: list[int]

    @property
    def free_bytes(self) -> int:
        """Heap bytes left at the peak."""
        return self.heap_bytes - self.peak_bytes

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "peak_bytes": self.peak_bytes,
            "heap_bytes": self.heap_bytes,
            "allocations": [
                {"what": a.what, "size": a.size, "align": a.align, "taken": a.taken}
                for a in self.allocations
            ],
            "in_place": sorted(r.name for r in self.regions.values() if not r.on_heap),
        }


class _Heap:
    """sys_heap arithmetic for allocations made one after another (see the module docstring)."""

    def __init__(self, base: int, size: int) -> None:
        footer = 4 if size // CHUNK_UNIT <= 0x7FFF else 8
        start = -(-base // CHUNK_UNIT) * CHUNK_UNIT
        end = (base + size - footer) // CHUNK_UNIT * CHUNK_UNIT
        chunks = (end - start) // CHUNK_UNIT
        self.header = 8 if chunks > 0x7FFF else 4
        buckets = (chunks - 1).bit_length()  # bucket_idx(heap_sz) + 1, min chunk size 1
        chunk0 = -(-(16 + buckets * 4) // CHUNK_UNIT)
        self.base = base
        self.start = start
        self.cursor = start + chunk0 * CHUNK_UNIT
        self.end = end
        self.allocations: list[Allocation] = []

    def alloc(self, what: str, size: int, align: int) -> Allocation | None:
        """Allocate `size` bytes aligned to `align`; None when no free chunk is big enough."""
        if size == 0:
            return None
        if align <= self.header:
            need = -(-(size + self.header) // CHUNK_UNIT) * CHUNK_UNIT
            if self.cursor + need > self.end:
                return None
            address = self.cursor + self.header
            taken = need
        else:
            padded = -(-(size + align) // CHUNK_UNIT) * CHUNK_UNIT
            if self.cursor + padded > self.end:
                return None
            address = -(-(self.cursor + self.header) // align) * align
            used_end = -(-(address + size) // CHUNK_UNIT) * CHUNK_UNIT
            taken = used_end - self.cursor
        self.cursor += taken
        allocation = Allocation(what, size, align, address, taken)
        self.allocations.append(allocation)
        return allocation

    @property
    def peak(self) -> int:
        return self.cursor - self.start + (self.start - self.base)


def _kind(section: Any) -> str | None:
    """The region a section goes to (llext_map_sections), None when it is not loaded."""
    header = section.header
    kind: str | None = None
    if header.sh_type == _SHT_NOBITS:
        kind = "BSS"
    elif header.sh_type == _SHT_PROGBITS:
        flags = header.sh_flags
        kind = "TEXT" if flags & _SHF_EXECINSTR else "DATA" if flags & _SHF_WRITE else "RODATA"
    elif header.sh_type == _SHT_PREINIT_ARRAY:
        kind = "PREINIT"
    elif header.sh_type == _SHT_INIT_ARRAY:
        kind = "INIT"
    elif header.sh_type == _SHT_FINI_ARRAY:
        kind = "FINI"
    if section.name == ".exported_sym":
        kind = "EXPORT"
    if kind is None or not header.sh_flags & _SHF_ALLOC or header.sh_size == 0:
        return None
    return kind


def load(data: bytes, **options: Any) -> Loaded:
    """Load the ELF `data` as the board's loader would (the options: `_load`'s).

    Whatever the file holds, the only error is `LoadError`: a file so malformed that it
    cannot be read (section headers or tables past its end, entries of the wrong size) is
    refused as Zephyr refuses an invalid ELF, with -ENOEXEC.

    Raises:
        LoadError: what Zephyr refuses, with its error number and log lines.
    """
    try:
        return _load(data, **options)
    except LoadError:
        raise
    except (ELFError, ELFParseError, struct.error, IndexError, KeyError, ValueError,
            AttributeError, TypeError, UnicodeDecodeError) as e:  # fmt: skip
        reason = " ".join(str(e).split())[:200]
        raise LoadError(ENOEXEC, [f"llext: Invalid ELF ({type(e).__name__}: {reason})"]) from None


def _load(
    data: bytes,
    *,
    heap_bytes: int,
    exports: Mapping[str, int],
    heap_base: int,
    storage_base: int,
    storage_writable: bool = False,
    rodata_split: bool = True,
    link: bool = True,
) -> Loaded:
    """Load the ELF `data` as the board's loader would, in `do_llext_load`'s order: the basic
    ELF data and tables, the section map, the regions' copies, the symbol table, then the
    link and the export table (`link=False` stops before linking, with the export table
    sized from its section).

    Args:
        data: the stripped upload file's ELF (without zephyr-sketch-tool's header).
        heap_bytes: the LLEXT heap; exports: the firmware's export table (name -> address,
        Thumb functions with bit 0 set); heap_base: the heap's address; storage_base: where
        the ELF lies (what in-place regions point into); storage_writable: the loader's
        storage type; rodata_split: the core reads `.llext.rodata.noreloc` in place.

    Returns:
        the placed extension.

    Raises:
        LoadError: what Zephyr refuses, with its error number and log lines.
    """
    heap = _Heap(heap_base, heap_bytes)
    sections, symtab = _read_tables(data, heap)
    layout = _map_sections(sections, rodata_split)
    regions = layout.regions
    _place(regions, data, heap, storage_base, storage_writable)
    _allocate_symbol_table(symtab, heap)
    export = regions.get("EXPORT")
    if not link:
        count = (export.size - export.prepad) // 8 if export else 0
        if count and heap.alloc("export table", count * 8, 4) is None:
            raise _refusal(ENOMEM, "Failed to export, ret -12")
        return Loaded(heap.allocations, heap.peak, heap_bytes, heap_base, regions, b"", 0, [])
    log: list[str] = []
    errors = _link(sections, symtab, layout.region_of, regions, layout.address_of, exports, log)
    if errors:
        raise LoadError(errors, [*log, f"llext: Failed to link, ret -{errors}"])
    exported = _export_table(export, regions, heap, log)
    entry = exported.get("main")
    if entry is None:
        raise LoadError(ENOENT, [*log, "Failed to find main function"])
    init = _init_functions(regions, log)
    image = _heap_image(regions, heap)
    return Loaded(heap.allocations, heap.peak, heap_bytes, heap_base, regions, image, entry, init)


def _refusal(errno: int, *lines: str) -> LoadError:
    """The loader's refusal before linking (nothing logged yet): error `errno`, each of
    `lines` logged as `llext: <line>`."""
    return LoadError(errno, [f"llext: {line}" for line in lines])


@dataclass
class _SectionMap:
    """Where the loaded sections go.

    Attributes:
        regions: region name -> region; region_of: a loaded section's index -> its region's
        name; offset: a loaded section's index -> its offset in its region (prepad included).
    """

    regions: dict[str, Region]
    region_of: dict[int, str]
    offset: dict[int, int]

    def address_of(self, index: int) -> int:
        """Where section `index` was placed, 0 when it is not loaded."""
        kind = self.region_of.get(index)
        return self.regions[kind].address + self.offset[index] if kind else 0


def _read_tables(data: bytes, heap: _Heap) -> tuple[list[Any], Any]:
    """The ELF's sections and its one symbol table, after the header's checks and the
    allocations of `struct llext` and the section map (what `do_llext_load` logs as the basic
    ELF data and the important ELF tables).

    Raises:
        LoadError: not an ELF, a file type or section header size Zephyr refuses, no room on
        the heap, or not exactly one valid symbol table.
    """
    try:
        elf = ELFFile(io.BytesIO(data))
        header = elf.header
    except (ELFError, struct.error, ValueError):
        raise LoadError(ENOEXEC, ["llext: Invalid ELF, magic does not match"]) from None
    if header.e_type not in ("ET_REL", "ET_DYN"):
        raise _refusal(ENOEXEC, f"Unsupported ELF file type {_etype(header.e_type):x}")
    if header.e_shentsize != 40:
        raise _refusal(ENOEXEC, f"Invalid section header size {header.e_shentsize}")
    sections: list[Any] = list(elf.iter_sections())
    if heap.alloc("struct llext", LLEXT_STRUCT_BYTES, 4) is None:
        raise _refusal(ENOMEM, "Not enough memory for extension metadata")
    if heap.alloc("section map", len(sections) * 8, 4) is None:
        size = len(sections) * 8
        raise _refusal(
            ENOMEM, f"Failed to allocate section map, size {size}",
            "Failed to load basic ELF data, ret -12",
        )  # fmt: skip
    symtabs = [s for s in sections if s.header.sh_type == _SHT_SYMTAB]
    if len(symtabs) != 1:
        raise _refusal(
            ENOEXEC, "Some sections are missing or present multiple times!",
            "Failed to find important ELF tables, ret -8",
        )  # fmt: skip
    symtab = symtabs[0]
    if symtab.header.sh_entsize != 16 or symtab.header.sh_size % 16:
        raise _refusal(
            ENOEXEC, "Invalid symbol table", "Failed to find important ELF tables, ret -8"
        )
    return sections, symtab


def _map_sections(sections: list[Any], rodata_split: bool) -> _SectionMap:
    """The regions the loaded sections make (llext_map_sections): each region spans its
    sections in the file, aligned with its prepad, and knows whether a relocation section
    targets it.

    Raises:
        LoadError: sections that cannot share a region, a malformed init array, or regions
        whose file ranges overlap.
    """
    regions, region_of = _group_sections(sections, rodata_split)
    for region in regions.values():
        region.prepad = region.offset & (region.align - 1)
        region.offset -= region.prepad
        region.size += region.prepad
    offset = {
        index: sections[index].header.sh_offset - regions[kind].offset
        for index, kind in region_of.items()
    }
    spans = sorted(
        (r.offset, r.offset + r.size, r.name) for r in regions.values() if not r.nobits and r.size
    )
    for (first, end, name), (start, stop, other) in itertools.pairwise(spans):
        if start < end:
            raise _refusal(
                ENOEXEC,
                f"Region {_index(name)} ELF file range ({first:#x}-{end:#x}) overlaps with "
                f"{_index(other)} ({start:#x}-{stop:#x})",
                "Failed to map ELF sections, ret -8",
            )
    for section in sections:
        if section.header.sh_type in (_SHT_REL, _SHT_RELA):
            target = region_of.get(section.header.sh_info)
            if target is not None:
                regions[target].has_relocs = True
    return _SectionMap(regions, region_of, offset)


def _group_sections(
    sections: list[Any], rodata_split: bool
) -> tuple[dict[str, Region], dict[int, str]]:
    """Each loaded section's region, before alignment: (region name -> region, section index
    -> region name). With `rodata_split`, `.llext.rodata.noreloc*` is a region of its own.

    Raises:
        LoadError: a malformed init array, or sections that cannot share a region.
    """
    regions: dict[str, Region] = {}
    region_of: dict[int, str] = {}
    for index, section in enumerate(sections):
        kind = _kind(section)
        if kind is None:
            continue
        if kind == "RODATA" and rodata_split and section.name.startswith(NORELOC_SECTION):
            kind = "RODATA_NORELOC"
        sh = section.header
        if kind in ("PREINIT", "INIT", "FINI") and (sh.sh_entsize != 4 or sh.sh_size % 4):
            raise _refusal(ENOEXEC, f"Invalid {kind.lower()} array in section {index}",
                           "Failed to map ELF sections, ret -8")  # fmt: skip
        region = regions.get(kind)
        if region is None:
            regions[kind] = Region(
                kind, sh.sh_offset, sh.sh_size, max(sh.sh_addralign, 1),
                sh.sh_type == _SHT_NOBITS, sh.sh_flags,
            )  # fmt: skip
        else:
            _extend_region(region, section)
        region_of[index] = kind
    return regions, region_of


def _extend_region(region: Region, section: Any) -> None:
    """Widen `region` to also span `section` (another section of the same kind).

    Raises:
        LoadError: a second BSS or init-array section, or flags that differ from the
        region's.
    """
    kind = region.name
    sh = section.header
    if kind == "BSS":
        raise _refusal(ENOTSUP, "Multiple SHT_NOBITS sections are not supported",
                       "Failed to map ELF sections, ret -134")  # fmt: skip
    if kind in ("PREINIT", "INIT", "FINI"):
        raise _refusal(ENOEXEC, f"Region {_index(kind)} redefined",
                       "Failed to map ELF sections, ret -8")  # fmt: skip
    if (region.flags ^ sh.sh_flags) & (_SHF_WRITE | _SHF_ALLOC | _SHF_EXECINSTR):
        raise _refusal(ENOEXEC, f"Unsupported section flags {region.flags:#x} / "
                       f"{sh.sh_flags:#x} for {section.name} (region {kind})",
                       "Failed to map ELF sections, ret -8")  # fmt: skip
    end = sh.sh_offset + (0 if sh.sh_type == _SHT_NOBITS else sh.sh_size)
    start = min(region.offset, sh.sh_offset)
    stop = max(region.offset + region.size, end)
    region.offset, region.size = start, stop - start
    region.align = max(region.align, sh.sh_addralign)


def _allocate_symbol_table(symtab: Any, heap: _Heap) -> None:
    """Allocate the extension's symbol table: 8 bytes a global function or object.

    Raises:
        LoadError: no room on the heap (ENOMEM).
    """
    global_symbols = sum(
        1
        for symbol in symtab.iter_symbols()
        if symbol.entry.st_info.type in ("STT_FUNC", "STT_OBJECT")
        and symbol.entry.st_info.bind == "STB_GLOBAL"
    )
    if heap.alloc("symbol table", global_symbols * 8, 4) is None:
        raise _refusal(ENOMEM, "Failed to allocate extension symbol table, ret -12")


def _export_table(
    export: Region | None, regions: dict[str, Region], heap: _Heap, log: list[str]
) -> dict[str, int]:
    """The linked `.exported_sym` table (name -> address), allocated on the heap (`log`: the
    link's lines, which a refusal repeats).

    Raises:
        LoadError: no room on the heap (ENOMEM).
    """
    exported = _exported(export, regions) if export else {}
    if exported and heap.alloc("export table", len(exported) * 8, 4) is None:
        raise LoadError(ENOMEM, [*log, "llext: Failed to export, ret -12"])
    return exported


def _init_functions(regions: dict[str, Region], log: list[str]) -> list[int]:
    """The PREINIT then INIT arrays' function addresses, after the link (`log`: the link's
    lines, which a refusal repeats).

    Raises:
        LoadError: a function outside the text region (EFAULT).
    """
    init = [
        word
        for name in ("PREINIT", "INIT")
        if name in regions
        for (word,) in struct.iter_unpack("<I", bytes(regions[name].data[regions[name].prepad :]))
    ]
    text = regions.get("TEXT")
    for address in init:
        if text is None or not text.address <= address & ~1 < text.address + text.size:
            raise LoadError(EFAULT, [*log, f"llext: init function ({address:#x}) outside text"])
    return init


def _heap_image(regions: dict[str, Region], heap: _Heap) -> bytes:
    """The heap's bytes from its base up to the peak, with every region copied there."""
    image = bytearray(heap.cursor - heap.base)
    for region in regions.values():
        if region.on_heap:
            start = region.address - heap.base
            image[start : start + len(region.data)] = region.data
    return bytes(image)


def _index(region: str) -> int:
    """The region's `enum llext_mem` value (the split-out rodata: after the others)."""
    return REGIONS.index(region) if region in REGIONS else len(REGIONS)


def _etype(name: str) -> int:
    return {"ET_NONE": 0, "ET_REL": 1, "ET_EXEC": 2, "ET_DYN": 3, "ET_CORE": 4}.get(name, 0)


def _place(
    regions: dict[str, Region],
    data: bytes,
    heap: _Heap,
    storage_base: int,
    writable: bool,
) -> None:
    """Read each region in place or copy it into the heap (llext_copy_region).

    Raises:
        LoadError: relocations into the split-out rodata, or no room on the heap for a copy.
    """
    # SYMTAB, STRTAB and SHSTRTAB are not allocated sections: with writable or persistent
    # storage (every UNO Q core) the loader reads them in place, so they take no heap.
    for name in (*_COPY_ORDER, "RODATA_NORELOC"):
        region = regions.get(name)
        if region is None or region.size == 0:
            continue
        content = (
            bytearray(region.size)
            if region.nobits
            else bytearray(data[region.offset : region.offset + region.size])
        )
        in_place = (
            not region.nobits
            and (writable or (not region.flags & _SHF_WRITE and not region.has_relocs))
            and (storage_base + region.offset) % region.align == 0
        )
        if name == "RODATA_NORELOC" and region.has_relocs:
            raise _refusal(ENOEXEC, f"{NORELOC_SECTION} has relocations")
        if in_place:
            region.address = storage_base + region.offset
            region.data = content
            continue
        got = heap.alloc(name, region.size, region.align)
        if got is None:
            raise _refusal(
                ENOMEM,
                f"Failed allocating {region.size} bytes {region.align}-aligned for region "
                f"{_index(name)}",
                "Failed to copy regions, ret -12",
            )
        if region.nobits:
            content = bytearray(region.size)
        else:
            content[: region.prepad] = bytes(region.prepad)  # the copy starts with zeros
        region.address = got.address
        region.on_heap = True
        region.data = content


def _symbol_name(symtab: Any, index: int) -> str:
    return str(symtab.get_symbol(index).name)


def _link(
    sections: list[Any],
    symtab: Any,
    section_region: dict[int, str],
    regions: dict[str, Region],
    address_of: Any,
    exports: Mapping[str, int],
    log: list[str],
) -> int:
    """Apply every relocation (llext_link); log each failure, return the first error (0)."""
    first = 0
    for index, section in enumerate(sections):
        sh = section.header
        if sh.sh_type == _SHT_RELA:
            log.append(f"llext: Found unsupported SHT_RELA section {index}")
            return ENOTSUP
        if sh.sh_type != _SHT_REL:
            continue
        if sh.sh_entsize != 8:
            log.append(f"llext: Invalid entry size {sh.sh_entsize} for SHT_REL section {index}")
            return ENOEXEC
        target = sh.sh_info
        if target >= len(sections) or sh.sh_size % 8:
            log.append(
                f"llext: Sanity checks failed for section {index} (info {target}, size "
                f"{sh.sh_size}, entsize {sh.sh_entsize})"
            )
            return ENOEXEC
        if not sections[target].header.sh_flags & _SHF_ALLOC or sh.sh_size == 0:
            continue
        kind = section_region.get(target)
        if kind is None:
            log.append(f"llext: Section {target} not loaded in any memory region")
            return ENOEXEC
        region = regions[kind]
        base = address_of(target)
        for rel in section.iter_relocations():
            offset = rel["r_offset"]
            info = rel["r_info"]
            sym_index, rtype = info >> 8, info & 0xFF
            symbol = symtab.get_symbol(sym_index)
            name = str(symbol.name)
            shndx = symbol.entry.st_shndx
            if sym_index == 0:
                value = 0
            elif shndx == "SHN_UNDEF":
                found = exports.get(name)
                if found is None:
                    log.append(
                        "llext: Undefined symbol with no entry in symbol table "
                        f"{name}, offset {offset}, link section {sh.sh_link}"
                    )
                    log.append(f"elf: Could not find symbol {name}!")
                    first = first or ENODATA
                    continue
                value = found
            elif shndx == "SHN_ABS":
                value = symbol.entry.st_value
            elif isinstance(shndx, int) and 0 < shndx < len(sections):
                value = address_of(shndx) + symbol.entry.st_value
            else:
                log.append(
                    "llext: cannot apply relocation: target symbol has unexpected section "
                    f"index {shndx}"
                )
                first = first or ENOEXEC
                continue
            at = base - region.address + offset
            place = base + offset
            bias = regions["TEXT"].address if "TEXT" in regions else 0
            error = _relocate(region.data, at, rtype, value, place, name, bias)
            if error:
                log.append(error)
                first = first or ENOEXEC
    return first


def _relocate(
    buf: bytearray, at: int, rtype: int, s: int, p: int, name: str, bias: int = 0
) -> str | None:
    """Apply one REL relocation of type `rtype` at `buf[at]` (address `p`) to symbol value
    `s` (`bias`: the text region's address, R_ARM_RELATIVE's load bias); the error line
    when Zephyr refuses it."""
    if rtype not in RELOCATIONS:
        return f"elf: unknown relocation: {rtype}"
    if rtype in (0, 40):
        if rtype == 40:
            (word,) = struct.unpack_from("<I", buf, at)
            struct.pack_into("<I", buf, at, (word & 0xF000000F) | 0x01A0F000)
        return None
    if rtype in (2, 38, 3, 21, 22, 23):
        (word,) = struct.unpack_from("<I", buf, at)
        value = {2: word + s, 38: word + s, 3: word + s - p, 21: s, 22: s, 23: word + bias}[rtype]
        struct.pack_into("<I", buf, at, value & 0xFFFFFFFF)
        return None
    out_of_range = f"elf: sym '{name}': relocation out of range ({p:#x} -> {s:#x})"
    if rtype in (10, 30):
        upper, lower = struct.unpack_from("<HH", buf, at)
        sign = (upper >> 10) & 1
        j1, j2 = (lower >> 13) & 1, (lower >> 11) & 1
        i1, i2 = ~(j1 ^ sign) & 1, ~(j2 ^ sign) & 1
        imm = (
            (sign << 24)
            | (i1 << 23)
            | (i2 << 22)
            | ((upper & 0x3FF) << 12)
            | ((lower & 0x7FF) << 1)
        )
        offset = _sign(imm, 24) + s - p
        if offset >= 0x01000000 or offset <= -0x01000000:
            return out_of_range
        offset &= 0x01FFFFFF
        sign = (offset >> 24) & 1
        j1 = (~((offset >> 23) & 1) ^ sign) & 1
        j2 = (~((offset >> 22) & 1) ^ sign) & 1
        upper = (upper & 0xF800) | (sign << 10) | ((offset >> 12) & 0x3FF)
        lower = (lower & 0xD000) | (j1 << 13) | (j2 << 11) | ((offset >> 1) & 0x7FF)
        struct.pack_into("<HH", buf, at, upper, lower)
        return None
    if rtype in (1, 28, 29):
        (insn,) = struct.unpack_from("<I", buf, at)
        offset = _sign((insn & 0x00FFFFFF) << 2, 25) + s - p
        if offset >= 0x02000000 or offset <= -0x02000000:
            return out_of_range
        struct.pack_into("<I", buf, at, (insn & 0xFF000000) | ((offset >> 2) & 0x00FFFFFF))
        return None
    if rtype == 42:
        (word,) = struct.unpack_from("<I", buf, at)
        offset = _sign(word & 0x7FFFFFFF, 30) + s - p
        if offset >= 0x40000000 or offset < -0x40000000:
            return out_of_range
        struct.pack_into("<I", buf, at, (word & 0x80000000) | (offset & 0x7FFFFFFF))
        return None
    if rtype in (43, 44, 45, 46):
        (insn,) = struct.unpack_from("<I", buf, at)
        addend = _sign(((insn & 0xF0000) >> 4) | (insn & 0xFFF), 15)
        value = addend + s - (p if rtype in (45, 46) else 0)
        if rtype in (44, 46):
            value >>= 16
        insn = (insn & 0xFFF0F000) | ((value & 0xF000) << 4) | (value & 0x0FFF)
        struct.pack_into("<I", buf, at, insn)
        return None
    # Thumb MOVW/MOVT (47-50)
    upper, lower = struct.unpack_from("<HH", buf, at)
    imm = ((upper & 0xF) << 12) | (((upper >> 10) & 1) << 11) | (((lower >> 12) & 7) << 8)
    imm |= lower & 0xFF
    value = _sign(imm, 15) + s - (p if rtype in (49, 50) else 0)
    if rtype in (48, 50):
        value >>= 16
    value &= 0xFFFF
    upper = (upper & 0xFBF0) | ((value >> 12) & 0xF) | (((value >> 11) & 1) << 10)
    lower = (lower & 0x8F00) | (((value >> 8) & 7) << 12) | (value & 0xFF)
    struct.pack_into("<HH", buf, at, upper, lower)
    return None


def _sign(value: int, bit: int) -> int:
    """`value` sign-extended from `bit` (the sign bit's index)."""
    value &= (1 << (bit + 1)) - 1
    return value - (1 << (bit + 1)) if value >> bit & 1 else value


def _exported(export: Region, regions: dict[str, Region]) -> dict[str, int]:
    """The `.exported_sym` table after relocation: name -> address (llext_export_symbols)."""
    out: dict[str, int] = {}
    body = bytes(export.data[export.prepad :])
    for name_at, address in struct.iter_unpack("<II", body[: len(body) // 8 * 8]):
        name = _read_string(name_at, regions)
        if name is not None:
            out[name] = address
    return out


def _read_string(address: int, regions: dict[str, Region]) -> str | None:
    for region in regions.values():
        start = region.address
        if start <= address < start + len(region.data):
            raw = bytes(region.data[address - start :])
            return raw.split(b"\0", 1)[0].decode("utf-8", errors="replace")
    return None


def short_branches_out(data: bytes) -> list[tuple[str, str]]:
    """The relocations of a short-branch type (`SHORT_BRANCHES`) to a symbol outside the
    ELF `data` (undefined, or absolute): (type name, symbol), one per relocation. On the
    board such a symbol is the firmware's, in flash, out of a branch's reach from the heap
    in SRAM.

    Raises:
        LoadError: `data` is not an ELF file.
    """
    try:
        elf = ELFFile(io.BytesIO(data))
        out: list[tuple[str, str]] = []
        section: Any
        for section in elf.iter_sections():
            if section.header.sh_type != _SHT_REL:
                continue
            symtab: Any = elf.get_section(section.header.sh_link)
            for rel in section.iter_relocations():
                rtype = rel["r_info"] & 0xFF
                symbol = symtab.get_symbol(rel["r_info"] >> 8)
                outside = symbol.entry.st_shndx in ("SHN_UNDEF", "SHN_ABS")
                if rtype in SHORT_BRANCHES and outside:
                    out.append((RELOCATIONS[rtype][0], str(symbol.name)))
        return out
    except (ELFError, ELFParseError, struct.error, IndexError, KeyError, ValueError,
            AttributeError, TypeError, UnicodeDecodeError) as e:  # fmt: skip
        reason = " ".join(str(e).split())[:200]
        raise LoadError(ENOEXEC, [f"llext: Invalid ELF ({type(e).__name__}: {reason})"]) from None
