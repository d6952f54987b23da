"""The "dynamic-run" stage: a loadable extension placed by our loader model (check/llext.py)
in the emulated Dynamic firmware (check/dynamic_run.py, board/llext_host.c) and booted on
QEMU mps2-an505; a refused one prints the loader's log on the emulated UART.

The extensions are tiny C files written by the test, linked as the Dynamic stage links
(`-r -e main` with board/llext.ld); no Arduino core or ExecuTorch is needed.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import textwrap
from pathlib import Path

import pytest

from generator.boards.cores import pinned_core
from generator.check.backends import GCC_ARM
from generator.check.dynamic import LLEXT_SCRIPT, MERGED_RODATA
from generator.check.dynamic_run import (
    BOOT_FORMAT,
    LOADED_MAGIC,
    REFUSED_MAGIC,
    boot_descriptor,
    build_firmware,
    dynamic_run_stage,
    export_names,
)
from generator.check.expected import Expected
from generator.check.llext import Loaded
from generator.check.llext_elf import LoadError
from generator.check.stages import Status

needs_qemu = pytest.mark.skipif(
    any(shutil.which(t) is None for t in ("arm-none-eabi-gcc", "qemu-system-arm")),
    reason="needs arm-none-eabi-gcc (gcc-arm-none-eabi, libnewlib-arm-none-eabi) and "
    "qemu-system-arm",
)

#: `main` in the extension's export table, as the board core's LL_EXTENSION_SYMBOL(main).
EXTENSION = textwrap.dedent(
    """\
    #include <stddef.h>
    void arduino_core_write(const char* data, size_t len);
    int snprintf(char* out, size_t n, const char* fmt, ...);
    EXTRA_DECL

    static int ready;           /* .bss in the heap, set by the constructor */
    static int seven = 7;       /* .data in the heap */
    static const char done[] = "=== DONE ===\\r\\n";   /* .rodata */

    __attribute__((constructor)) static void init(void) { ready = 42; }

    static void say(const char* s) {
      size_t n = 0;
      while (s[n]) ++n;
      arduino_core_write(s, n);
    }

    int main(void) {
      char line[32];
      EXTRA_CALL
      snprintf(line, sizeof line, "ready=%d seven=%d\\r\\n", ready, seven);
      say(line);
      say(done);
      for (;;) {
      }
    }

    struct export { const char* name; const void* address; };
    __attribute__((section(".exported_sym"), used))
    const struct export export_main = {"main", (const void*)&main};
    """
)


def _extension(tmp_path: Path, decl: str = "", call: str = "") -> Path:
    """The upload ELF of EXTENSION (with `decl` and `call` put in), linked as Dynamic."""
    source = tmp_path / "ext.c"
    source.write_text(EXTENSION.replace("EXTRA_DECL", decl).replace("EXTRA_CALL", call))
    obj = tmp_path / "ext.o"
    # No pattern distribution: say()'s loop would become a call to strlen, which the
    # pinned core exports only through its wrapper (in the core's archive, not linked here).
    subprocess.run(
        [GCC_ARM.cc, *GCC_ARM.common, "-fno-tree-loop-distribute-patterns", "-c", str(source),
         "-o", str(obj)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    rodata = tmp_path / "rodata.ld"
    rodata.write_text(MERGED_RODATA)
    elf = tmp_path / "ext.elf"
    subprocess.run(
        [GCC_ARM.cc, *GCC_ARM.common[:4], "-nostdlib", "-r", "-Wl,--gc-sections", "-e", "main",
         str(obj), f"-T{rodata}", f"-T{LLEXT_SCRIPT}", "-o", str(elf)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return elf


EXPECTED = Expected(must_print=("ready=42 seven=7", "=== DONE ==="), timeout_seconds=30)


@needs_qemu
def test_an_extension_runs_as_the_loader_places_it(tmp_path: Path) -> None:
    stage, out = dynamic_run_stage(
        _extension(tmp_path), EXPECTED, tmp_path / "work", tmp_path / "out"
    )
    assert out is not None and out.kind == "dynamic"
    assert stage.status is Status.PASS, (stage.summary, stage.details, out.lines)
    assert stage.stage == "dynamic-run"
    assert out.lines[:2] == ["ready=42 seven=7", "=== DONE ==="]
    # The firmware is built once per core and reused: the pinned core's, with its heap
    # (main@177dcef6's 256 KiB) and its export table.
    (folder,) = (tmp_path / "work" / "dynamic-firmware").iterdir()
    firmware = build_firmware(pinned_core(), tmp_path / "work")
    assert firmware.elf.parent == folder and firmware.heap_bytes == 262_144
    table = (folder / "llext_host_exports.c").read_text()
    assert "uint8_t llext_host_heap[262144];" in table and "main@177dcef6" in table


@needs_qemu
def test_a_refused_extension_prints_the_loaders_log(tmp_path: Path) -> None:
    stage, out = dynamic_run_stage(
        _extension(tmp_path, "void not_exported_anywhere(void);", "not_exported_anywhere();"),
        EXPECTED,
        tmp_path / "work",
        tmp_path / "out",
    )
    assert stage.status is Status.FAIL
    assert stage.summary.startswith(f"core {pinned_core().version}'s loader refuses it: rc -61")
    assert out is not None
    assert "elf: Could not find symbol not_exported_anywhere!" in out.lines
    assert out.lines[-1] == "Failed to load sketch, rc -61"
    assert "ready=42 seven=7" not in out.lines  # nothing of the sketch ran
    assert "Emulated UART:" in stage.details


@needs_qemu
def test_a_zephyr_api_the_emulator_lacks_skips(tmp_path: Path) -> None:
    stage, _ = dynamic_run_stage(
        _extension(tmp_path, "void* k_malloc(size_t n);", "(void)k_malloc(4);"),
        EXPECTED,
        tmp_path / "work",
        tmp_path / "out",
    )
    assert stage.status is Status.SKIP
    assert "does not provide k_malloc" in stage.summary


def test_no_upload_file_skips(tmp_path: Path) -> None:
    stage, out = dynamic_run_stage(None, EXPECTED, tmp_path, tmp_path)
    assert stage.status is Status.SKIP and out is None


def test_export_names_map_the_libc_wrappers_to_newlib() -> None:
    core = pinned_core()
    provided, missing = export_names(
        core, frozenset({"memcpy", "printf", "arduino_core_write", "_impure_ptr"})
    )
    assert provided["__real_memcpy"] == "memcpy"
    assert provided["printf"] == "printf"
    assert provided["arduino_core_write"] == "arduino_core_write"
    assert "k_malloc" in missing and "__real_memcpy" not in missing


def test_boot_descriptor_layout() -> None:
    size = struct.calcsize(BOOT_FORMAT)
    refused = boot_descriptor(LoadError(61, ["llext: a", "elf: b"]))
    assert len(refused) == size
    magic, rc = struct.unpack_from("<Ii", refused)
    assert (magic, rc) == (REFUSED_MAGIC, -61)
    assert refused[16 + 64 * 4 :].rstrip(b"\0") == b"llext: a\nelf: b\n"
    loaded = boot_descriptor(Loaded([], 0, 0, 0, {}, b"", 0x1235, [0x1001]))
    assert len(loaded) == size
    assert struct.unpack_from("<IiIII", loaded) == (LOADED_MAGIC, 0, 0x1235, 1, 0x1001)
