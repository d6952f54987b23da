"""`check` links the way arduino-cli does, in both link modes (static, and Dynamic: the sketch
as a loadable extension): a library's objects on the link line, or in one archive with
`dot_a_linkage=true`; per-folder archives in `--whole-archive` past 30,000 characters of
object list; the Dynamic stage's verdict against the board's flash.

Objects are compiled here from tiny C and C++ files with arm-none-eabi-gcc (directly, or
through the check's gcc-arm build of a library written into tmp_path); symbols are read
back with arm-none-eabi-nm.
"""

from __future__ import annotations

import dataclasses
import struct
import subprocess
import textwrap
from pathlib import Path, PurePosixPath

import pytest
from check_fixtures import needs_tools, write_library

from generator.boards.budgets import UNO_Q
from generator.boards.cores import VERDICT_ROWS
from generator.check.backends import GCC_ARM
from generator.check.dynamic import dynamic_stage
from generator.check.link import (
    MAX_OBJECT_LIST_CHARS,
    LibraryLinkage,
    LinkInputs,
    LinkObject,
    library_linkage,
    quoted_list_chars,
    stage_link,
)
from generator.check.plan import plan_build
from generator.check.stages import Status
from generator.toolchain.objcache import ObjectCache

pytestmark = needs_tools

AR = "arm-none-eabi-ar"


def _symbols(elf: Path) -> set[str]:
    """Names of the symbols `elf` defines."""
    out = subprocess.run(
        ["arm-none-eabi-nm", "--defined-only", str(elf)], capture_output=True, text=True, check=True
    ).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def _members(archive: Path) -> list[str]:
    out = subprocess.run([AR, "t", str(archive)], capture_output=True, text=True, check=True)
    return out.stdout.split()


def _compile(folder: Path, name: str, code: str) -> Path:
    """`name` (a .c file) compiled for the UNO Q's CPU into `folder`."""
    src = folder / name
    src.write_text(textwrap.dedent(code))
    obj = folder / f"{name}.o"
    flags = (*UNO_Q.cpu_flags, "-Os", "-ffunction-sections", "-fdata-sections")
    subprocess.run([GCC_ARM.cc, *flags, "-c", str(src), "-o", str(obj)], check=True)
    return obj


# A library whose sketch calls ctor_ran() (src/ctor.cpp); ctor.cpp's static constructor
# calls ctor_callee() (src/callee.c), which nothing else calls; src/orphan.cpp is called by
# nobody but has a static constructor of its own.
CTOR_SOURCES = {
    "src/ctor.cpp": """\
        extern "C" void ctor_callee(void);
        static volatile int ran;
        static struct Runs { Runs() { ctor_callee(); ran = 1; } } runs;
        int ctor_ran() { return ran; }
        """,
    "src/callee.c": """\
        volatile int callee_hits;
        void ctor_callee(void) { callee_hits++; }
        """,
    "src/orphan.cpp": """\
        extern "C" { volatile int orphan_hits; void orphan_marker(void) { orphan_hits++; } }
        static struct Orphan { Orphan() { orphan_marker(); } } orphan;
        """,
}
CTOR_SKETCH = """\
    int ctor_ran();
    void setup() { Serial.println(ctor_ran()); Serial.println("=== DONE ==="); }
    void loop() {}
    """


def _ctor_library(root: Path, dot_a: bool) -> Path:
    lib = write_library(root, {"Ctor": (textwrap.dedent(CTOR_SKETCH), "must_print: []\n")})
    for rel, text in CTOR_SOURCES.items():
        (lib / rel).write_text(textwrap.dedent(text))
    if dot_a:
        with (lib / "library.properties").open("a") as f:
            f.write("dot_a_linkage=true\n")
    return lib


@pytest.mark.parametrize("dot_a", [False, True], ids=["object-list", "dot_a_linkage"])
def test_archive_leaves_out_unreferenced_members_and_constructors_keep_callees(
    tmp_path: Path, cache_dir: Path, dot_a: bool
) -> None:
    lib = _ctor_library(tmp_path / "Lib", dot_a)
    assert library_linkage(lib) == LibraryLinkage("ExecuTorch", dot_a)
    build = GCC_ARM.build(plan_build(lib, "Ctor"), tmp_path / "out", ObjectCache(cache_dir / "o"))
    assert build.ok, build.log
    assert build.line is not None and build.binary is not None
    archive = tmp_path / "out/build/libraries/ExecuTorch/ExecuTorch.a"
    if dot_a:
        # One archive on the list instead of the library's objects.
        assert str(archive) in build.line.object_files
        assert "orphan.cpp.o" in _members(archive)
        assert not any("/libraries/" in a and a.endswith(".o") for a in build.line.object_files)
    else:
        assert not archive.exists()
        assert str(tmp_path / "out/build/libraries/ExecuTorch/orphan.cpp.o") in (
            build.line.object_files
        )
    stage, sizes = dynamic_stage(build.line, UNO_Q, tmp_path / "dyn", "Ctor")
    assert stage.status is Status.PASS, stage.details
    assert sizes is not None
    for elf in (build.binary, tmp_path / "dyn/Ctor.elf"):
        names = _symbols(elf)
        # The constructor of an object that is linked keeps what it calls, in both modes.
        assert {"ctor_callee", "callee_hits"} <= names, elf
        # An archive member nobody references is not linked, constructor and all; an
        # object on the list is linked, and its constructor keeps it.
        assert ("orphan_marker" in names) is (not dot_a), elf


#: `main` in the extension's export table, where the board's loader looks it up (the core's
#: `LL_EXTENSION_SYMBOL(main)`).
EXPORT_MAIN = """\
struct export_entry { const char *name; const void *address; };
__attribute__((section(".exported_sym"), used))
const struct export_entry export_main = {"main", (const void *)main};
"""


def _inputs(tmp_path: Path, dot_a: bool) -> LinkInputs:
    objs = tmp_path / "objs"
    objs.mkdir()
    sketch = _compile(
        objs, "S.c", "int used(void);\nint main(void) { return used(); }\n" + EXPORT_MAIN
    )
    used = _compile(objs, "used.c", "int used(void) { return 7; }\n")
    orphan = _compile(
        objs,
        "orphan.c",
        """\
        volatile int orphan_hits;
        __attribute__((constructor)) static void orphan_ctor(void) { orphan_hits++; }
        """,
    )
    variant = _compile(objs, "variant.c", "int variant_value(void) { return 3; }\n")
    # Like the board core's abi.cpp: what `-Wl,-u,__cxa_allocate_exception` asks for.
    core = _compile(
        objs, "core.c", "void *__cxa_allocate_exception(unsigned n) { (void)n; return 0; }\n"
    )
    return LinkInputs(
        sketch=(LinkObject(sketch, PurePosixPath("sketch/S.ino.cpp.o")),),
        library=(
            LinkObject(used, PurePosixPath("libraries/L/used.c.o")),
            LinkObject(orphan, PurePosixPath("libraries/L/sub/orphan.c.o")),
        ),
        linkage=LibraryLinkage("L", dot_a),
        variant=(LinkObject(variant, PurePosixPath("core/variant.c.o")),),
        core=(LinkObject(core, PurePosixPath("core/core.c.o")),),
    )


def _root_for(chars: int, rels: list[str]) -> str:
    """The longest build root that keeps the quoted list of `rels` within `chars` (so one
    character more per path is over it)."""
    base = quoted_list_chars([f"/{r}" for r in rels])
    return "/" + "r" * ((chars - base) // len(rels) - 1)


@pytest.mark.parametrize("dot_a", [False, True], ids=["object-list", "dot_a_linkage"])
def test_30000_characters_of_object_list_switch_to_archives_per_folder(
    tmp_path: Path, dot_a: bool
) -> None:
    inputs = _inputs(tmp_path, dot_a)
    rels = ["sketch/S.ino.cpp.o"]
    rels += ["libraries/L/L.a"] if dot_a else ["libraries/L/used.c.o", "libraries/L/sub/orphan.c.o"]
    rels += ["core/variant.c.o"]
    limit_root = _root_for(MAX_OBJECT_LIST_CHARS, rels)
    # Within the limit: the plain list, in arduino-cli's order; the core is an archive.
    line = stage_link(inputs, tmp_path / "b1", AR, limit_root)
    assert line.list_chars <= MAX_OBJECT_LIST_CHARS and not line.by_folder
    assert line.object_files == [str(tmp_path / "b1" / r) for r in rels]
    assert line.core_archive == tmp_path / "b1/core/core.a"
    assert _members(line.core_archive) == ["core.c.o"]

    # One character per path more and the list is over: every object goes into an
    # objs.a of its folder, archives already on the list first, all in --whole-archive.
    over = stage_link(inputs, tmp_path / "b2", AR, limit_root + "r")
    assert over.list_chars > MAX_OBJECT_LIST_CHARS and over.by_folder
    b2 = tmp_path / "b2"
    folders = ["sketch", "core"] if dot_a else ["sketch", "libraries/L", "libraries/L/sub", "core"]
    assert over.object_files == [
        "-Wl,--whole-archive",
        *([str(b2 / "libraries/L/L.a")] if dot_a else []),
        *(str(b2 / f / "objs.a") for f in folders),
        "-Wl,--no-whole-archive",
    ]
    assert _members(b2 / "sketch/objs.a") == ["S.ino.cpp.o"]
    assert _members(b2 / "core/objs.a") == ["variant.c.o"]
    if dot_a:
        assert _members(b2 / "libraries/L/L.a") == ["used.c.o", "orphan.c.o"]
    else:
        assert _members(b2 / "libraries/L/sub/objs.a") == ["orphan.c.o"]

    # Linked Dynamic: in --whole-archive every member is loaded, so the unreferenced
    # object's constructor is kept even from the library's own archive.
    for name, staged in (("list", line), ("folders", over)):
        stage, _ = dynamic_stage(staged, UNO_Q, tmp_path / name, "S")
        assert stage.status is Status.PASS, stage.details
        kept = "orphan_hits" in _symbols(tmp_path / name / "S.elf")
        assert kept is (staged.by_folder or not dot_a), name


def test_the_dynamic_stage_fails_with_the_overflow_in_bytes(tmp_path: Path) -> None:
    line = stage_link(_inputs(tmp_path, False), tmp_path / "b", AR, "/r")
    stage, sizes = dynamic_stage(line, UNO_Q, tmp_path / "fits", "S")
    assert stage.status is Status.PASS and sizes is not None
    # The upload file: the stripped ELF with zephyr-sketch-tool's header in its e_ident.
    upload = (tmp_path / "fits/S.elf-zsk.bin").read_bytes()
    assert sizes.flash == len(upload) and upload[:7] == b"\x7fELF\x01\x01\x01"
    assert upload[7:15] == struct.pack("<BIHB", 1, len(upload), 0x2341, 0)
    # RAM: what the pinned core's loader takes from its heap, judged for every core.
    assert sizes.pinned is not None and sizes.pinned.loaded
    assert sizes.pinned.peak_bytes is not None
    assert 0 < sizes.ram == sizes.pinned.peak_bytes < 4_000
    assert [v.core for v in sizes.verdicts] == [c.version for c in VERDICT_ROWS]
    # The last row: the pinned core linked in one pass (arduino-cli before 1.3.0), never
    # pinned; its .rodata is all copied, so the heap takes at least as much.
    one_pass = sizes.verdicts[-1]
    assert one_pass.core == "main@177dcef6, arduino-cli < 1.3.0" and not one_pass.pinned
    assert one_pass.loaded and one_pass.peak_bytes is not None
    assert one_pass.peak_bytes >= sizes.pinned.peak_bytes
    assert sizes.overflow == 0 and sizes.flash_max == 786_432
    assert f"upload file {sizes.flash:,} B" in stage.summary

    small = dataclasses.replace(UNO_Q, flash_bytes=sizes.flash - 100)
    stage, over = dynamic_stage(line, small, tmp_path / "over", "S")
    assert over is not None and over.flash == sizes.flash and over.overflow == 100
    # A board of less flash than the UNO Q is not the UNO Q: there it does not fit, no failure.
    assert stage.status is Status.MISFIT and stage.passed
    assert "flash overflowed by 100 bytes" in stage.summary


def test_same_named_objects_in_one_archive_fail_the_build(tmp_path: Path, cache_dir: Path) -> None:
    lib = _ctor_library(tmp_path / "Lib", dot_a=True)
    for sub in ("a", "b"):
        (lib / "src" / sub).mkdir()
        (lib / "src" / sub / "dup.c").write_text(f"int dup_{sub}(void) {{ return 1; }}\n")
    build = GCC_ARM.build(plan_build(lib, "Ctor"), tmp_path / "out", ObjectCache(cache_dir / "o"))
    assert not build.ok and build.line is not None
    # ar keeps one member per file name: b/dup.c.o (archived after a/) replaced a/dup.c.o.
    assert build.line.lost == ["libraries/ExecuTorch/ExecuTorch.a: libraries/ExecuTorch/a/dup.c.o"]
    assert "ExecuTorch.a loses libraries/ExecuTorch/a/dup.c.o" in build.log
