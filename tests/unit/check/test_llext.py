"""The model of the board's LLEXT loader (`generator/check/llext.py`) on small extensions
linked the way the Dynamic stage links them: what it must accept, and what it must refuse
with Zephyr's error number and log line (the loader facts of `generator/boards/cores.py`)."""

from __future__ import annotations

import shutil
import struct
import subprocess
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.boards.budgets import UNO_Q
from generator.boards.cores import CORES, VERDICT_ROWS, core, pinned_core
from generator.check.backends import GCC_ARM
from generator.check.dynamic import MERGED_RODATA, dynamic_argv, judge, rodata_split_script
from generator.check.link import LinkLine
from generator.check.llext import llext_struct_bytes, load
from generator.check.llext_elf import (
    ENODATA,
    ENOEXEC,
    ENOMEM,
    LoadError,
    map_sections,
    read_sections,
)
from generator.check.llext_relocations import short_branches_out

pytestmark = pytest.mark.skipif(
    shutil.which(GCC_ARM.cc) is None, reason="arm-none-eabi-gcc not installed (gcc-arm-none-eabi)"
)

#: `main` in the export table (the core's `LL_EXTENSION_SYMBOL(main)`), and what the core's
#: abi.cpp defines for the link's `-u __cxa_allocate_exception`.
EXPORT_MAIN = """
void *__cxa_allocate_exception(unsigned n) { (void)n; return 0; }
struct export_entry { const char *name; const void *address; };
__attribute__((section(".exported_sym"), used))
const struct export_entry export_main = {"main", (const void *)main};
"""
HEAP = 0x2001_0000
FLASH = 0x0810_0000


def _extension(tmp_path: Path, code: str, *, long_calls: bool = True, split: bool = True) -> bytes:
    """`code` (C, with `main`) compiled at the board's flags and linked as the Dynamic stage
    links an extension; the upload ELF's bytes."""
    src = tmp_path / "ext.c"
    src.write_text(textwrap.dedent(code) + EXPORT_MAIN)
    obj = tmp_path / "ext.o"
    flags = [f for f in GCC_ARM.common if long_calls or f != "-mlong-calls"]
    subprocess.run([GCC_ARM.cc, *flags, "-c", str(src), "-o", str(obj)], check=True)
    line = LinkLine(object_files=[str(obj)], core_archive=None, list_chars=0)
    script = tmp_path / "rodata.ld"
    if split:
        temp = tmp_path / "temp.elf"
        subprocess.run(dynamic_argv(line, UNO_Q, temp, GCC_ARM), check=True, capture_output=True)
        script.write_text(rodata_split_script(temp))
    else:
        script.write_text(MERGED_RODATA)
    out = tmp_path / "ext.elf"
    argv = dynamic_argv(line, UNO_Q, out, GCC_ARM, scripts=(script,))
    subprocess.run(argv, check=True, capture_output=True)
    return out.read_bytes()


PRINTS = """
    extern int __real_puts(const char *);
    static const char hello[] = "hello";
    int main(void) { return __real_puts(hello); }
"""


def test_an_extension_calling_an_export_through_a_register_loads_and_is_relocated(
    tmp_path: Path,
) -> None:
    data = _extension(tmp_path, PRINTS)
    assert short_branches_out(data) == []
    puts = 0x0801_2345
    loaded = load(
        data, heap_bytes=128 * 1024, exports={"__real_puts": puts}, heap_base=HEAP,
        storage_base=FLASH,
    )  # fmt: skip
    text = loaded.regions["TEXT"]
    assert text.on_heap and HEAP < text.address < HEAP + 1024
    # main is found in the export table, in the text the heap holds, Thumb.
    assert text.address <= loaded.entry & ~1 < text.address + text.size and loaded.entry & 1
    # -mlong-calls: the call goes through a register loaded from a literal (R_ARM_ABS32),
    # which the loader wrote into the copied text: the export's address.
    assert struct.pack("<I", puts) in bytes(text.data)
    # The string, never relocated, stays in flash, in place.
    assert loaded.regions["RODATA_NORELOC"].on_heap is False
    assert FLASH <= loaded.regions["RODATA_NORELOC"].address < FLASH + len(data)
    # What the heap holds, with Zephyr's metadata: struct llext, the section map, the
    # symbol table (main) and the export table.
    whats = [a.what for a in loaded.allocations]
    assert whats[:2] == ["struct llext", "section map"] and "TEXT" in whats
    assert whats[-2:] == ["symbol table", "export table"]
    # The peak: what the allocations took, plus the heap's own chunk 0 (no more than 128 B).
    taken = sum(a.taken for a in loaded.allocations)
    assert taken < loaded.peak_bytes <= taken + 128 < 1_024


def test_an_unexported_symbol_is_refused_with_enodata(tmp_path: Path) -> None:
    data = _extension(tmp_path, PRINTS)
    with pytest.raises(LoadError) as refused:
        load(data, heap_bytes=128 * 1024, exports={}, heap_base=HEAP, storage_base=FLASH)
    assert refused.value.errno == ENODATA == 61
    assert refused.value.log[0].startswith(
        "llext: Undefined symbol with no entry in symbol table __real_puts, offset "
    )
    assert refused.value.log[-1] == "llext: Failed to link, ret -61"


def test_a_short_branch_to_the_firmware_is_out_of_range(tmp_path: Path) -> None:
    # Without -mlong-calls (as precompiled libgcc and newlib are), the call is a BL:
    # from the heap in SRAM it cannot reach the firmware in flash.
    data = _extension(tmp_path, PRINTS, long_calls=False)
    # (a tail call: B.W, R_ARM_THM_JUMP24; a plain call would be BL, R_ARM_THM_CALL)
    assert short_branches_out(data) == [("R_ARM_THM_JUMP24", "__real_puts")]
    with pytest.raises(LoadError) as refused:
        load(
            data, heap_bytes=128 * 1024, exports={"__real_puts": 0x0801_0001}, heap_base=HEAP,
            storage_base=FLASH,
        )  # fmt: skip
    assert refused.value.errno == ENOEXEC == 8
    line = refused.value.log[0]
    assert line.startswith("elf: sym '__real_puts': relocation out of range (0x2001")
    assert line.endswith(" -> 0x8010001)")
    # The same branch to a symbol within 16 MiB is applied.
    near = HEAP + 0x10_0001
    loaded = load(
        data, heap_bytes=128 * 1024, exports={"__real_puts": near}, heap_base=HEAP,
        storage_base=FLASH,
    )  # fmt: skip
    assert loaded.entry


def test_more_than_the_heap_is_refused_with_enomem(tmp_path: Path) -> None:
    code = "static char big[100000]; int main(void) { big[7] = 1; return big[99999]; }\n"
    data = _extension(tmp_path, code)
    loaded = load(data, heap_bytes=128 * 1024, exports={}, heap_base=HEAP, storage_base=FLASH)
    bss = next(a for a in loaded.allocations if a.what == "BSS")
    assert bss.size >= 100_000
    with pytest.raises(LoadError) as refused:
        load(data, heap_bytes=64 * 1024, exports={}, heap_base=HEAP, storage_base=FLASH)
    assert refused.value.errno == ENOMEM == 12
    assert refused.value.log == [
        f"llext: Failed allocating {bss.size} bytes {bss.align}-aligned for region 3",
        "llext: Failed to copy regions, ret -12",
    ]


def test_rodata_is_copied_before_the_split_and_read_in_place_after(tmp_path: Path) -> None:
    code = """
        static const char table[20000] = {1, 2, 3};
        static const char *const tables[] = {table, table + 1};  /* relocated rodata */
        int main(void) { return tables[(unsigned)__builtin_frame_address(0) & 1][7]; }
    """
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    merged = load(
        _extension(tmp_path / "a", code, split=False), heap_bytes=128 * 1024, exports={},
        heap_base=HEAP, storage_base=FLASH, rodata_split=False,
    )  # fmt: skip
    split = load(
        _extension(tmp_path / "b", code), heap_bytes=128 * 1024, exports={}, heap_base=HEAP,
        storage_base=FLASH,
    )  # fmt: skip
    # One .rodata holds the pointer table, so the whole of it is relocated and copied; split,
    # only the pointer table is, and the table of bytes stays in flash.
    assert merged.regions["RODATA"].on_heap and merged.regions["RODATA"].size >= 20_000
    assert split.regions["RODATA"].on_heap and split.regions["RODATA"].size < 64
    assert not split.regions["RODATA_NORELOC"].on_heap
    # (less the 8 B the split's twelfth region adds to struct llext)
    assert merged.peak_bytes - split.peak_bytes >= 20_000 - (196 - 188)


def test_not_an_elf_is_refused_with_enoexec() -> None:
    with pytest.raises(LoadError) as refused:
        load(b"not an elf", heap_bytes=65536, exports={}, heap_base=HEAP, storage_base=FLASH)
    assert refused.value.errno == ENOEXEC
    assert refused.value.log == ["llext: Invalid ELF, magic does not match"]


def test_every_core_has_a_verdict_and_the_heap_grew_on_main(tmp_path: Path) -> None:
    code = "static char big[150000]; int main(void) { big[3] = 2; return big[149999]; }\n"
    data = _extension(tmp_path, code)
    verdicts = {c.version: judge(data, c) for c in CORES}
    assert not verdicts["0.55.0"].loaded and verdicts["0.55.0"].errno == ENOMEM
    assert not verdicts["0.55.0"].pinned
    assert verdicts["main@177dcef6"].loaded and verdicts["main@177dcef6"].pinned
    assert pinned_core().version == "main@177dcef6"
    assert core("main@177dcef6").heap_bytes == 2 * core("0.55.1").heap_bytes == 262_144
    # The same allocations; the larger heap's bookkeeping (8-byte chunk headers) differs.
    small, big = verdicts["0.55.0"].peak_bytes, verdicts["main@177dcef6"].peak_bytes
    assert small is not None and big is not None and abs(small - big) < 64
    summary = verdicts["0.55.0"].summary()
    assert "refused, rc -12" in summary and f"{small - 131_072:,} B over" in summary


def test_a_region_with_a_prepad_is_placed_where_zephyr_places_it(tmp_path: Path) -> None:
    # 64-aligned read-only data merged into one .rodata (as cores before 0.54.0 link): the
    # region starts `prepad` bytes before its first section, and each section lies at the
    # region's address plus its offset from that start, prepad counted once.
    code = """
        __attribute__((section(".myro"), aligned(64), used)) const int myro[16] = {1, 2, 3};
        extern int __real_puts(const char *);
        static const char hello[] = "hello";
        int main(void) { return __real_puts(hello) + (int)(long)&myro[1]; }
    """
    data = _extension(tmp_path, code, split=False)
    loaded = load(
        data, heap_bytes=131_072, exports={"__real_puts": 0x0801_2345}, heap_base=HEAP,
        storage_base=FLASH, rodata_split=False,
    )  # fmt: skip
    rodata = loaded.regions["RODATA"]
    assert rodata.prepad > 0 and rodata.align == 64 and rodata.address % 64 == 0
    assert loaded.entry  # "main" was read from the export table's relocated name pointer


def test_struct_llext_has_twelve_regions_where_the_loader_keeps_rodata_in_flash(
    tmp_path: Path,
) -> None:
    # CONFIG_LLEXT_RODATA_NO_RELOC (cores from 0.54.0) adds LLEXT_MEM_RODATA_NO_RELOC to
    # enum llext_mem: a pointer, a bool and a size more in struct llext.
    assert (llext_struct_bytes(False), llext_struct_bytes(True)) == (188, 196)
    data = _extension(tmp_path, PRINTS)
    options = {"heap_bytes": 131_072, "exports": {"__real_puts": 0x0801_0001},
               "heap_base": HEAP, "storage_base": FLASH}  # fmt: skip
    split = load(data, rodata_split=True, **options)
    merged = load(data, rodata_split=False, **options)
    assert (split.allocations[0].what, split.allocations[0].size) == ("struct llext", 196)
    assert (merged.allocations[0].what, merged.allocations[0].size) == ("struct llext", 188)
    assert [c.version for c in CORES if llext_struct_bytes(c.rodata_split) == 196] == [
        "0.54.0", "0.54.1", "0.55.0", "0.55.1", "main@177dcef6"
    ]  # fmt: skip


def _elf(sections: list[tuple[str, str, int, int, int]]) -> bytes:
    """A minimal ARM ET_REL file: each of `sections` is (name, "ax"/"a"/"aw", file offset,
    size, alignment), PROGBITS filled with zeros, then the section name table."""
    names = b"\0" + b"".join(n.encode() + b"\0" for n, *_ in sections) + b".shstrtab\0"
    end = max(offset + size for _, _, offset, size, _ in sections)
    shstrtab_at = end
    shoff = -(-(shstrtab_at + len(names)) // 4) * 4
    flags = {"a": 0x2, "ax": 0x6, "aw": 0x3}
    headers = [bytes(40)]
    at = 1
    for name, kind, offset, size, align in sections:
        headers.append(struct.pack("<10I", at, 1, flags[kind], 0, offset, size, 0, 0, align, 0))
        at += len(name) + 1
    headers.append(struct.pack("<10I", at, 3, 0, 0, shstrtab_at, len(names), 0, 0, 1, 0))
    ident = b"\x7fELF\x01\x01\x01" + bytes(9)
    header = ident + struct.pack(
        "<HHIIIIIHHHHHH", 1, 40, 1, 0, 0, shoff, 0x05000000, 52, 0, 0, 40, len(headers),
        len(headers) - 1,
    )  # fmt: skip
    body = bytearray(shoff)
    body[: len(header)] = header
    body[shstrtab_at : shstrtab_at + len(names)] = names
    return bytes(body) + b"".join(headers)


def test_the_prepad_and_the_export_table_take_no_part_in_the_overlap_test() -> None:
    # RODATA starts at 0x41 (1-aligned) and holds an 8-aligned section: its prepad (1 B)
    # reaches back over the text's last byte, 0x40, which Zephyr's test leaves out
    # (REGION_BOT adds the prepad back).
    prepad = _elf([(".text", "ax", 0x34, 0xD, 4), (".rodata.a", "a", 0x41, 3, 1),
                   (".rodata.b", "a", 0x48, 8, 8)])  # fmt: skip
    layout = map_sections(read_sections(prepad), True)
    rodata = layout.regions["RODATA"]
    assert (rodata.offset, rodata.prepad, rodata.size) == (0x40, 1, 0x10)
    # .exported_sym between two read-only sections lies inside RODATA's span: not tested.
    export = _elf([(".text", "ax", 0x34, 4, 4), (".rodata.a", "a", 0x38, 8, 4),
                   (".exported_sym", "a", 0x40, 8, 4), (".rodata.b", "a", 0x48, 8, 4)])  # fmt: skip
    assert set(map_sections(read_sections(export), True).regions) == {"TEXT", "RODATA", "EXPORT"}
    # Read-only data between two text sections: the regions share bytes, refused.
    interleaved = _elf([(".text.a", "ax", 0x34, 4, 4), (".rodata", "a", 0x38, 4, 4),
                        (".text.b", "ax", 0x3C, 4, 4)])  # fmt: skip
    with pytest.raises(LoadError) as refused:
        map_sections(read_sections(interleaved), True)
    assert refused.value.errno == ENOEXEC
    assert refused.value.log == [
        "llext: Region 0 ELF file range (0x34-0x3f) overlaps with 2 (0x38-0x3b)",
        "llext: Failed to map ELF sections, ret -8",
    ]


def test_the_one_pass_link_of_an_older_arduino_cli_copies_all_rodata(tmp_path: Path) -> None:
    code = """
        static const char table[20000] = {1, 2, 3};
        static const char *const tables[] = {table, table + 1};  /* relocated rodata */
        int main(void) { return tables[(unsigned)__builtin_frame_address(0) & 1][7]; }
    """
    # One .rodata holds the relocated pointer table, so all of it is copied to the heap; the
    # two-pass link leaves the table of bytes in flash.
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    row = VERDICT_ROWS[-1]
    assert row.version == "main@177dcef6, arduino-cli < 1.3.0" and not row.pinned
    assert row.rodata_split and not row.two_pass_link and row.heap_bytes == 262_144
    one = judge(_extension(tmp_path / "one", code, split=False), row)
    two = judge(_extension(tmp_path / "two", code), pinned_core())
    assert one.loaded and two.loaded and one.peak_bytes is not None
    assert two.peak_bytes is not None and one.peak_bytes - two.peak_bytes >= 20_000


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=6)
)
def test_a_damaged_upload_file_is_refused_or_loaded_never_crashes(
    edits: list[tuple[int, int]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    global _FUZZ_SEED
    if _FUZZ_SEED is None:
        _FUZZ_SEED = _extension(tmp_path_factory.mktemp("seed"), PRINTS)
    data = bytearray(_FUZZ_SEED)
    for at, value in edits:
        data[at % len(data)] = value
    try:
        load(bytes(data), heap_bytes=65_536, exports={"__real_puts": 0x0801_0001},
             heap_base=HEAP, storage_base=FLASH)  # fmt: skip
    except LoadError as e:
        assert e.errno in (ENOEXEC, ENOMEM, ENODATA, 2, 14, 134) and e.log
    try:
        short_branches_out(bytes(data))
    except LoadError as e:
        assert e.errno == ENOEXEC


_FUZZ_SEED: bytes | None = None
