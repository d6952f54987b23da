"""The ARM relocations of a Dynamic upload file, applied as the board's LLEXT loader applies
them, with the same range checks and log lines (the loader model is `llext.py`), and the
short branches that cannot reach the firmware from the heap (`short_branches_out`).

Reference (read, not copied): arduino/zephyr, branch `zephyr-arduino-v4.2.0`:
`subsys/llext/llext_link.c` 069cee85 (`llext_link`, which logs every failed relocation and
returns the first error) and `arch/arm/core/elf.c` 81eda93b (`arch_elf_relocate`).
"""

from __future__ import annotations

import io
import struct
from collections.abc import Callable, Mapping
from typing import Any

from elftools.elf.elffile import ELFFile

from generator.check.llext_elf import (
    ENODATA,
    ENOEXEC,
    ENOTSUP,
    READ_ERRORS,
    SHF_ALLOC,
    SHT_REL,
    SHT_RELA,
    Region,
    invalid_elf,
)

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


def apply_relocations(
    sections: list[Any],
    symtab: Any,
    section_region: dict[int, str],
    regions: dict[str, Region],
    address_of: Callable[[int], int],
    exports: Mapping[str, int],
    log: list[str],
) -> int:
    """Apply every relocation (llext_link); log each failure, return the first error (0)."""
    first = 0
    for index, section in enumerate(sections):
        sh = section.header
        if sh.sh_type == SHT_RELA:
            log.append(f"llext: Found unsupported SHT_RELA section {index}")
            return ENOTSUP
        if sh.sh_type != SHT_REL:
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
        if not sections[target].header.sh_flags & SHF_ALLOC or sh.sh_size == 0:
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
            error = apply_relocation(region.data, at, rtype, value, place, name, bias)
            if error:
                log.append(error)
                first = first or ENOEXEC
    return first


def apply_relocation(
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
            if section.header.sh_type != SHT_REL:
                continue
            symtab: Any = elf.get_section(section.header.sh_link)
            for rel in section.iter_relocations():
                rtype = rel["r_info"] & 0xFF
                symbol = symtab.get_symbol(rel["r_info"] >> 8)
                outside = symbol.entry.st_shndx in ("SHN_UNDEF", "SHN_ABS")
                if rtype in SHORT_BRANCHES and outside:
                    out.append((RELOCATIONS[rtype][0], str(symbol.name)))
        return out
    except READ_ERRORS as e:
        raise invalid_elf(e) from None
