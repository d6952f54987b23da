"""Our own model of the board's LLEXT loader: place a Dynamic upload file's sections the way
Zephyr's LLEXT does, apply its ARM relocations with the same range checks, resolve undefined
symbols only against a firmware's export table, and refuse what Zephyr refuses, with its
error code and log lines. The Dynamic stage judges an example with it for every core of
`cores.py`; the emulated Dynamic run (`dynamic_run.py`) places the image it computes in the
emulated board's memory.

This module places the extension in `do_llext_load`'s order (the heap's allocations, the
regions' copies, the export table and the init arrays); `llext_elf.py` reads the file (the
header's checks, the symbol table, the regions its sections make) and holds the loader's
refusal, `LoadError`, with Zephyr's error numbers; `llext_relocations.py` applies the ARM
relocations.

Reference (read, not copied): arduino/zephyr (the fork ArduinoCore-zephyr builds, branch
`zephyr-arduino-v4.2.0`): `subsys/llext/llext_load.c` (`do_llext_load`, `llext_map_sections`),
`llext_mem.c` 212807aa (`llext_copy_region`), `llext_link.c` 069cee85 (`llext_link`, which
logs every failed relocation and returns the first error), `llext.c` (`llext_load`),
`arch/arm/core/elf.c` 81eda93b (`arch_elf_relocate`), and `lib/heap/heap.c` (sys_heap, for
what an allocation takes). What this model follows:

- Allocations, in order: `struct llext` (`llext_struct_bytes`: 188 B, 196 B with the
  split-out rodata's twelfth region), the section map (8 bytes a section), the string
  tables, then the regions TEXT, DATA, RODATA, BSS, EXPORT, SYMTAB, PREINIT, INIT, FINI,
  the symbol table (8 bytes a global function or object, undefined ones included) and the
  export table (8 bytes an `.exported_sym` entry). The section map and symbol table are
  freed at the end; the peak is reached before, so both count.
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

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from generator.check.llext_elf import (
    EFAULT,
    ENOENT,
    ENOEXEC,
    ENOMEM,
    NORELOC_SECTION,
    READ_ERRORS,
    REGIONS,
    SHF_WRITE,
    LoadError,
    Region,
    invalid_elf,
    map_sections,
    read_sections,
    refusal,
    region_index,
    symbol_table,
)
from generator.check.llext_relocations import apply_relocations


def llext_struct_bytes(rodata_no_reloc: bool) -> int:
    """sizeof(struct llext) on 32-bit ARM without `CONFIG_USERSPACE` and
    `CONFIG_LLEXT_HEAP_MEMBLK`, in bytes: 188 with the 11 regions of `enum llext_mem`, 196
    with `CONFIG_LLEXT_RODATA_NO_RELOC` (`rodata_no_reloc`; the cores from 0.54.0, `cores.py`),
    which adds `LLEXT_MEM_RODATA_NO_RELOC` and so a pointer, a bool and a size to the arrays.

    The fields (zephyrproject-rtos/zephyr `include/zephyr/llext/llext.h` at 01232609, the
    enum and `struct llext`): the list node (4), `name[16]`, `mem[N]` (4 N), `mem_on_heap[N]`
    (N, padded to 4), `mem_size[N]` (4 N), `alloc_size` (4), `sym_tab` and `exp_tab` (8
    each), `use_count` (4), `dependency[8]` (32), `sect_cnt`, `sect_hdrs` (4 each) and two
    bools (padded to 4). That header also has `text_in_elf` (4), which this count leaves out
    as the model always did; whether the arduino/zephyr fork's branch `zephyr-arduino-v4.2.0`
    has it is unknown (its `llext.h` was not read), so the size may be 4 B short.
    """
    regions = len(REGIONS) + (1 if rodata_no_reloc else 0)
    fixed = 4 + 16 + 4 + 8 + 8 + 4 + 32 + 4 + 4 + 4
    return fixed + 4 * regions + -(-regions // 4) * 4 + 4 * regions


#: `llext_struct_bytes` of the cores before 0.54.0 (11 regions).
LLEXT_STRUCT_BYTES = llext_struct_bytes(False)
CHUNK_UNIT = 8

_COPY_ORDER = ("TEXT", "DATA", "RODATA", "BSS", "EXPORT", "SYMTAB", "PREINIT", "INIT", "FINI")


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
    except READ_ERRORS as e:
        raise invalid_elf(e) from None


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
    sections = read_sections(data)
    _allocate_metadata(heap, len(sections), rodata_split)
    symtab = symbol_table(sections)
    layout = map_sections(sections, rodata_split)
    regions = layout.regions
    _place(regions, data, heap, storage_base, storage_writable)
    _allocate_symbol_table(symtab, heap)
    export = regions.get("EXPORT")
    if not link:
        count = (export.size - export.prepad) // 8 if export else 0
        if count and heap.alloc("export table", count * 8, 4) is None:
            raise refusal(ENOMEM, "Failed to export, ret -12")
        return Loaded(heap.allocations, heap.peak, heap_bytes, heap_base, regions, b"", 0, [])
    log: list[str] = []
    errors = apply_relocations(
        sections, symtab, layout.region_of, regions, layout.address_of, exports, log
    )
    if errors:
        raise LoadError(errors, [*log, f"llext: Failed to link, ret -{errors}"])
    exported = _export_table(export, regions, heap, log)
    entry = exported.get("main")
    if entry is None:
        raise LoadError(ENOENT, [*log, "Failed to find main function"])
    init = _init_functions(regions, log)
    image = _heap_image(regions, heap)
    return Loaded(heap.allocations, heap.peak, heap_bytes, heap_base, regions, image, entry, init)


def _allocate_metadata(heap: _Heap, sections: int, rodata_no_reloc: bool) -> None:
    """Allocate `struct llext` (`llext_struct_bytes(rodata_no_reloc)`) and the section map of
    `sections` sections (8 bytes each).

    Raises:
        LoadError: no room on the heap (ENOMEM).
    """
    if heap.alloc("struct llext", llext_struct_bytes(rodata_no_reloc), 4) is None:
        raise refusal(ENOMEM, "Not enough memory for extension metadata")
    if heap.alloc("section map", sections * 8, 4) is None:
        size = sections * 8
        raise refusal(
            ENOMEM, f"Failed to allocate section map, size {size}",
            "Failed to load basic ELF data, ret -12",
        )  # fmt: skip


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
        raise refusal(ENOMEM, "Failed to allocate extension symbol table, ret -12")


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
            and (writable or (not region.flags & SHF_WRITE and not region.has_relocs))
            and (storage_base + region.offset) % region.align == 0
        )
        if name == "RODATA_NORELOC" and region.has_relocs:
            raise refusal(ENOEXEC, f"{NORELOC_SECTION} has relocations")
        if in_place:
            region.address = storage_base + region.offset
            region.data = content
            continue
        got = heap.alloc(name, region.size, region.align)
        if got is None:
            raise refusal(
                ENOMEM,
                f"Failed allocating {region.size} bytes {region.align}-aligned for region "
                f"{region_index(name)}",
                "Failed to copy regions, ret -12",
            )
        if region.nobits:
            content = bytearray(region.size)
        else:
            content[: region.prepad] = bytes(region.prepad)  # the copy starts with zeros
        region.address = got.address
        region.on_heap = True
        region.data = content


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
