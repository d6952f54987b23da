"""The Dynamic upload file's ELF as the board's LLEXT loader reads it (the loader model is
`llext.py`): the header's checks, the one symbol table, and the regions the loaded sections
make (`llext_map_sections`); and the loader's refusal, `LoadError` with Zephyr's error
numbers, which every step of the model raises.

Reference (read, not copied): arduino/zephyr, branch `zephyr-arduino-v4.2.0`:
`subsys/llext/llext_load.c` (`do_llext_load`, `llext_map_sections`).
"""

from __future__ import annotations

import io
import itertools
import struct
from dataclasses import dataclass, field
from typing import Any

from elftools.common.exceptions import ELFError, ELFParseError
from elftools.elf.elffile import ELFFile

#: Zephyr's error numbers (positive: `llext_load` returns their negative).
ENOEXEC = 8
ENOMEM = 12
EFAULT = 14
ENODATA = 61
ENOTSUP = 134
ENOENT = 2

# Section types as pyelftools names them.
SHT_PROGBITS = "SHT_PROGBITS"
SHT_SYMTAB = "SHT_SYMTAB"
SHT_RELA = "SHT_RELA"
SHT_NOBITS = "SHT_NOBITS"
SHT_REL = "SHT_REL"
SHT_INIT_ARRAY = "SHT_INIT_ARRAY"
SHT_FINI_ARRAY = "SHT_FINI_ARRAY"
SHT_PREINIT_ARRAY = "SHT_PREINIT_ARRAY"
SHF_WRITE = 0x1
SHF_ALLOC = 0x2
SHF_EXECINSTR = 0x4

#: enum llext_mem, in the order the regions are copied.
REGIONS = ("TEXT", "DATA", "RODATA", "BSS", "EXPORT", "SYMTAB", "STRTAB", "SHSTRTAB",
           "PREINIT", "INIT", "FINI")  # fmt: skip
#: The rodata the board's build splits out (`gen-rodata-ld`), left in flash.
NORELOC_SECTION = ".llext.rodata.noreloc"


#: What reading a malformed file raises (section headers or tables past its end, entries of
#: the wrong size): Zephyr refuses such a file as an invalid ELF (`invalid_elf`).
READ_ERRORS = (ELFError, ELFParseError, struct.error, IndexError, KeyError, ValueError,
               AttributeError, TypeError, UnicodeDecodeError)  # fmt: skip


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


def refusal(errno: int, *lines: str) -> LoadError:
    """The loader's refusal before linking (nothing logged yet): error `errno`, each of
    `lines` logged as `llext: <line>`."""
    return LoadError(errno, [f"llext: {line}" for line in lines])


def invalid_elf(error: Exception) -> LoadError:
    """The loader's refusal (-ENOEXEC) of a file whose reading raised `error` (`READ_ERRORS`)."""
    reason = " ".join(str(error).split())[:200]
    return LoadError(ENOEXEC, [f"llext: Invalid ELF ({type(error).__name__}: {reason})"])


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
class SectionMap:
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


def region_kind(section: Any) -> str | None:
    """The region a section goes to (llext_map_sections), None when it is not loaded."""
    header = section.header
    kind: str | None = None
    if header.sh_type == SHT_NOBITS:
        kind = "BSS"
    elif header.sh_type == SHT_PROGBITS:
        flags = header.sh_flags
        kind = "TEXT" if flags & SHF_EXECINSTR else "DATA" if flags & SHF_WRITE else "RODATA"
    elif header.sh_type == SHT_PREINIT_ARRAY:
        kind = "PREINIT"
    elif header.sh_type == SHT_INIT_ARRAY:
        kind = "INIT"
    elif header.sh_type == SHT_FINI_ARRAY:
        kind = "FINI"
    if section.name == ".exported_sym":
        kind = "EXPORT"
    if kind is None or not header.sh_flags & SHF_ALLOC or header.sh_size == 0:
        return None
    return kind


def read_sections(data: bytes) -> list[Any]:
    """The ELF's sections, after the header's checks (what `do_llext_load` logs as the basic
    ELF data).

    Raises:
        LoadError: not an ELF, or a file type or section header size Zephyr refuses.
    """
    try:
        elf = ELFFile(io.BytesIO(data))
        header = elf.header
    except (ELFError, struct.error, ValueError):
        raise LoadError(ENOEXEC, ["llext: Invalid ELF, magic does not match"]) from None
    if header.e_type not in ("ET_REL", "ET_DYN"):
        raise refusal(ENOEXEC, f"Unsupported ELF file type {_etype(header.e_type):x}")
    if header.e_shentsize != 40:
        raise refusal(ENOEXEC, f"Invalid section header size {header.e_shentsize}")
    return list(elf.iter_sections())


def symbol_table(sections: list[Any]) -> Any:
    """The one symbol table of `sections` (the important ELF tables).

    Raises:
        LoadError: not exactly one symbol table, or one of the wrong entry size.
    """
    symtabs = [s for s in sections if s.header.sh_type == SHT_SYMTAB]
    if len(symtabs) != 1:
        raise refusal(
            ENOEXEC, "Some sections are missing or present multiple times!",
            "Failed to find important ELF tables, ret -8",
        )  # fmt: skip
    symtab = symtabs[0]
    if symtab.header.sh_entsize != 16 or symtab.header.sh_size % 16:
        raise refusal(
            ENOEXEC, "Invalid symbol table", "Failed to find important ELF tables, ret -8"
        )
    return symtab


def map_sections(sections: list[Any], rodata_split: bool) -> SectionMap:
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
    _check_overlaps(regions)
    for section in sections:
        if section.header.sh_type in (SHT_REL, SHT_RELA):
            target = region_of.get(section.header.sh_info)
            if target is not None:
                regions[target].has_relocs = True
    return SectionMap(regions, region_of, offset)


def _check_overlaps(regions: dict[str, Region]) -> None:
    """Refuse regions whose file ranges overlap, as `llext_map_sections` tests them: every
    pair in `enum llext_mem` order, skipping empty regions, BSS (no file data) and EXPORT
    (which may lie inside DATA or RODATA); each range from its first section (the prepad
    left out: `REGION_BOT` adds `sh_info`, the prepad) to its last byte, inclusive
    (`REGION_TOP`). Source: zephyrproject-rtos/zephyr `subsys/llext/llext_load.c` at
    0526fa10 (`REGION_BOT`, `REGION_TOP`, `REGIONS_OVERLAP_ON`); that the arduino/zephyr
    fork's branch `zephyr-arduino-v4.2.0` has the same test is unknown (its `llext_load.c`
    was not read).

    Raises:
        LoadError: two regions share a byte of the file (-ENOEXEC).
    """
    spans = sorted(
        (region_index(r.name), r.offset + r.prepad, r.offset + r.size - 1, r.name)
        for r in regions.values()
        if not r.nobits and r.size and r.name != "EXPORT"
    )
    for (i, bot_x, top_x, _), (j, bot_y, top_y, _) in itertools.combinations(spans, 2):
        if bot_x <= bot_y <= top_x or bot_y <= bot_x <= top_y:
            raise refusal(
                ENOEXEC,
                f"Region {i} ELF file range ({bot_x:#x}-{top_x:#x}) overlaps with "
                f"{j} ({bot_y:#x}-{top_y:#x})",
                "Failed to map ELF sections, ret -8",
            )


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
        kind = region_kind(section)
        if kind is None:
            continue
        if kind == "RODATA" and rodata_split and section.name.startswith(NORELOC_SECTION):
            kind = "RODATA_NORELOC"
        sh = section.header
        if kind in ("PREINIT", "INIT", "FINI") and (sh.sh_entsize != 4 or sh.sh_size % 4):
            raise refusal(ENOEXEC, f"Invalid {kind.lower()} array in section {index}",
                           "Failed to map ELF sections, ret -8")  # fmt: skip
        region = regions.get(kind)
        if region is None:
            regions[kind] = Region(
                kind, sh.sh_offset, sh.sh_size, max(sh.sh_addralign, 1),
                sh.sh_type == SHT_NOBITS, sh.sh_flags,
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
        raise refusal(ENOTSUP, "Multiple SHT_NOBITS sections are not supported",
                       "Failed to map ELF sections, ret -134")  # fmt: skip
    if kind in ("PREINIT", "INIT", "FINI"):
        raise refusal(ENOEXEC, f"Region {region_index(kind)} redefined",
                       "Failed to map ELF sections, ret -8")  # fmt: skip
    if (region.flags ^ sh.sh_flags) & (SHF_WRITE | SHF_ALLOC | SHF_EXECINSTR):
        raise refusal(ENOEXEC, f"Unsupported section flags {region.flags:#x} / "
                       f"{sh.sh_flags:#x} for {section.name} (region {kind})",
                       "Failed to map ELF sections, ret -8")  # fmt: skip
    end = sh.sh_offset + (0 if sh.sh_type == SHT_NOBITS else sh.sh_size)
    start = min(region.offset, sh.sh_offset)
    stop = max(region.offset + region.size, end)
    region.offset, region.size = start, stop - start
    region.align = max(region.align, sh.sh_addralign)


def region_index(region: str) -> int:
    """The region's `enum llext_mem` value (the split-out rodata: after the others)."""
    return REGIONS.index(region) if region in REGIONS else len(REGIONS)


def _etype(name: str) -> int:
    return {"ET_NONE": 0, "ET_REL": 1, "ET_EXEC": 2, "ET_DYN": 3, "ET_CORE": 4}.get(name, 0)
