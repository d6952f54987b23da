"""The object cache (`generator.toolchain.objcache`): an unchanged source compiles once, also from
another folder; a changed or a new shadowing header recompiles exactly its includers; a corrupt
object is compiled again; and its housekeeping: one check never deletes another's work in
progress.

The compile tests write a tiny library into tmp_path (check_fixtures.py) and give each its own
cache, the thing under test.
"""

from __future__ import annotations

import os
import shutil
import textwrap
import time
from pathlib import Path

from check_fixtures import (
    CORE_OBJECTS,
    HELLO_EXPECTED,
    HELLO_SKETCH,
    HOST_CORE_OBJECTS,
    needs_tools,
    write_library,
)

from generator.check.backends import GCC_ARM, HOST
from generator.check.compile import compile_example, plan_build
from generator.toolchain.objcache import ObjectCache


def test_clear_temporaries_removes_only_stale_leftovers(tmp_path: Path) -> None:
    cache = ObjectCache(tmp_path / "objects")
    tmp = cache.root / "tmp"
    busy = tmp / "compiling-now"  # another check's compile, in progress
    stale = tmp / "interrupted"  # a compile killed an hour and more ago
    for folder in (busy, stale):
        folder.mkdir(parents=True)
        (folder / "out.d").write_text("x.o: x.c\n")
    old = time.time() - ObjectCache.STALE_TEMPORARY_SECONDS - 60
    os.utime(stale, (old, old))
    cache.clear_temporaries()
    assert (busy / "out.d").is_file()
    assert not stale.exists()


def test_clear_temporaries_without_a_tmp_folder_is_quiet(tmp_path: Path) -> None:
    ObjectCache(tmp_path / "objects").clear_temporaries()
    assert not (tmp_path / "objects").exists()


@needs_tools
def test_object_cache_compiles_an_unchanged_source_once(tmp_path: Path) -> None:
    lib = write_library(tmp_path / "Tiny", {"Hello": (HELLO_SKETCH, HELLO_EXPECTED)})
    cache_root = tmp_path / "cache"
    plan = plan_build(lib, "Hello")
    # the core; the sketch; calc.c, Tiny.cpp
    total = CORE_OBJECTS + 1 + 2

    first = ObjectCache(cache_root)
    assert compile_example(GCC_ARM, plan, tmp_path / "b1", first).build.ok
    assert (first.stats.hits, first.stats.misses) == (0, total)

    second = ObjectCache(cache_root)
    built = compile_example(GCC_ARM, plan, tmp_path / "b2", second)
    assert built.build.ok and (built.build.compiled, built.build.reused) == (0, total)
    assert (second.stats.hits, second.stats.misses) == (0 + total, 0)

    # The same library in another folder (another checkout of the same ref) reuses all.
    copy = tmp_path / "elsewhere" / "Tiny"
    shutil.copytree(lib, copy)
    third = ObjectCache(cache_root)
    assert compile_example(GCC_ARM, plan_build(copy, "Hello"), tmp_path / "b3", third).build.ok
    assert (third.stats.hits, third.stats.misses) == (total, 0)

    # A changed header recompiles exactly its includers: calc.c, Tiny.cpp, the sketch.
    header = lib / "src/util/calc.h"
    header.write_text(header.read_text() + "int unused_decl(void);\n")
    fourth = ObjectCache(cache_root)
    assert compile_example(GCC_ARM, plan, tmp_path / "b4", fourth).build.ok
    assert (fourth.stats.hits, fourth.stats.misses) == (CORE_OBJECTS, 3)

    # Other flags (the host build) are other objects.
    fifth = ObjectCache(cache_root)
    assert compile_example(HOST, plan, tmp_path / "b5", fifth).build.ok
    assert (fifth.stats.hits, fifth.stats.misses) == (0, HOST_CORE_OBJECTS + 1 + 2)


SHADOW_SKETCH = textwrap.dedent(
    """\
    #include "shadow.h"
    void setup() { Serial.print("shadow "); Serial.println(SHADOW); }
    void loop() {}
    """
)


@needs_tools
def test_a_new_header_that_shadows_another_recompiles(tmp_path: Path) -> None:
    lib = write_library(tmp_path / "Tiny", {"Shadow": (SHADOW_SKETCH, HELLO_EXPECTED)})
    (lib / "src/shadow.h").write_text("#define SHADOW 1\n")
    cache_root = tmp_path / "cache"
    plan = plan_build(lib, "Shadow")
    first = ObjectCache(cache_root)
    assert compile_example(GCC_ARM, plan, tmp_path / "b1", first).build.ok
    assert first.stats.misses == CORE_OBJECTS + 3

    # Found first on the sketch's include path (examples/Shadow before src): a new object.
    (lib / "examples/Shadow/shadow.h").write_text("#define SHADOW 2\n")
    second = ObjectCache(cache_root)
    built = compile_example(HOST, plan, tmp_path / "h", second)
    assert built.build.binary is not None
    from generator.check.run_sketch import run_host

    assert "shadow 2" in run_host(built.build.binary, 30).lines
    third = ObjectCache(cache_root)
    assert compile_example(GCC_ARM, plan, tmp_path / "b3", third).build.ok
    # Only the sketch has examples/Shadow on its include path; the library's objects stay.
    assert (third.stats.hits, third.stats.misses) == (CORE_OBJECTS + 2, 1)


@needs_tools
def test_a_corrupt_cached_object_is_compiled_again(tmp_path: Path) -> None:
    lib = write_library(tmp_path / "Tiny", {"Hello": (HELLO_SKETCH, HELLO_EXPECTED)})
    cache_root = tmp_path / "cache"
    plan = plan_build(lib, "Hello")
    assert compile_example(GCC_ARM, plan, tmp_path / "b1", ObjectCache(cache_root)).build.ok
    objects = sorted((cache_root / "o").rglob("*.o"))
    assert len(objects) == CORE_OBJECTS + 3
    fresh = objects[2].read_bytes()
    objects[0].write_bytes(b"")  # truncated to nothing
    objects[1].write_bytes(b"garbage, not an object")
    flipped = bytearray(fresh)  # still an ELF object, one bit off in the middle
    flipped[len(flipped) // 2] ^= 0x40
    objects[2].write_bytes(bytes(flipped))
    again = ObjectCache(cache_root)
    assert compile_example(GCC_ARM, plan, tmp_path / "b2", again).build.ok
    assert (again.stats.hits, again.stats.misses) == (CORE_OBJECTS, 3)
    assert objects[0].read_bytes()[:4] == objects[1].read_bytes()[:4] == b"\x7fELF"
    assert objects[2].read_bytes() == fresh
