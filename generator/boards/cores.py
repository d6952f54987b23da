"""The board's loader, per core release: what the UNO Q firmware's LLEXT loader does with a
sketch linked in the Dynamic link mode. One table, read by the Dynamic stage (`dynamic.py`,
`llext.py`), the emulated Dynamic run, the check's report, the README and the PR body.

Sources, arduino/ArduinoCore-zephyr at the commit of each row (read from a snapshot of its
fork pillo79/ArduinoCore-zephyr, which holds the upstream tags 0.51.0 to 0.55.1; the upstream
snapshot stops in January 2025). The main-line row's 177dcef6 (2026-06-30) is that fork's
`main`: upstream ff4a421c (2026-06-23) and three commits of the fork that touch CI scripts
and `cores/arduino/wiring_analog.cpp`, none of the files below:

- heap: `variants/arduino_uno_q_stm32u585xx/arduino_uno_q_stm32u585xx.conf`
  `CONFIG_LLEXT_HEAP_SIZE` (KiB; `loader/prj.conf` has 32, the variant's line wins); it is a
  static `K_HEAP_DEFINE` in the firmware's SRAM (no `CONFIG_LLEXT_HEAP_REGION`, no shared
  multi-heap for the UNO Q). 256 KiB from PR #511 (45a766b2, merged as b77985d3 on
  2026-06-15); every tag to 0.55.1 has 128.
- storage: `CONFIG_LLEXT_STORAGE_WRITABLE=n` (the variant's first line at 0.51.0 to 0.55.1,
  then `loader/prj.conf` from 14e7ccec): `loader/main.c` hands `llext_load` the sketch where
  it lies in flash (`LLEXT_BUF_LOADER(base_addr, len)`, persistent storage); PR #324
  (0.53.1) only grew a debugger "RAM mode" buffer, removed in 0.55.0. Default load
  parameters (`LLEXT_LOAD_PARAM_DEFAULT`); the core frees nothing after loading.
- rodata split: from 0.54.0 `platform.txt` links twice and `gen-rodata-ld` moves every
  `.rodata*` input section that no relocation section targets into `.llext.rodata.noreloc`,
  which `CONFIG_LLEXT_RODATA_NO_RELOC=y` (prj.conf, a134c51b) leaves in flash
  (`tools/zephyr-check-size/main.go`: "all allocated sections go to LLEXT heap" except
  that prefix). Before 0.54.0 all of `.rodata` is copied.
- libm: `compiler.zephyr.extra_ldflags` is `-lstdc++ -lsupc++` to 0.53.1 and adds `-lm`
  from 0.54.0; no tag links `-lc` or `-lgcc` in the Dynamic mode.
- exports: `loader/llext_exports.c` and `loader/fixups.c` (`cores/<version>.exports`, each
  with its source line). `EXPORT_LIBC_SYM(f)` (0.54.0+) and `EXPORT_AEABI_SYM(f)` (0.55.1+)
  export `__real_f`, and the core's `cores/arduino/llext_wrappers.c` (in the sketch's
  `core.a`) defines `f` as a call to it, compiled as a long call (the wrapper reaches the
  firmware through a register, whatever calls the wrapper).
- Zephyr: `west.yml` names the branch `zephyr-arduino-v4.2.0` of arduino/zephyr at every tag
  (no commit is pinned). Its LLEXT (`subsys/llext/llext_load.c`, `llext_mem.c`,
  `llext_link.c`, `arch/arm/core/elf.c` of that fork) is what `llext.py` follows (with
  `llext_elf.py` and `llext_relocations.py`).

- Zephyr's own exports: `subsys/llext/llext_export.c` (`cores/zephyr.exports`, the eight C
  library functions upstream and an Arduino maintainer's fork both export).

Not known here, so never assumed: the releases after 0.55.1 (`UNREAD`: each exists, but no
source gives the commit of its tag, so no file of it could be read), Zephyr's other built-in
exports (syscalls; the arduino/zephyr fork's own `llext_export.c`), and exports behind
settings that neither configuration file sets (their rows' `.exports` files leave them out).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from generator import data_dir

CORES_DIR = data_dir("core_exports")
#: The core version the rendered workflows install (`data/workflows/*.yml` ZEPHYR_CORE);
#: tests/unit/boards/test_cores.py keeps them equal, and keeps it a row of `CORES` or of `UNREAD`.
#: 0.90.0
#: with Arduino_RouterBridge 0.4.3, as the live executorch-arduino CI installs them
#: (meta-pytorch/executorch-arduino `.github/workflows/ci.yml` at 17edf1f4).
INSTALLED_CORE = "0.90.0"
#: The release whose loader the check judges: the check fails when an example does not load
#: there. `INSTALLED_CORE` when its loader was read; otherwise the newest loader that was read
#: and that `INSTALLED_CORE` descends from stands in for it, and the link-modes section says
#: so (every other row is still reported). `main@177dcef6` stands in for 0.90.0, whose tag's
#: commit no source gave:
#: - 0.90.0 is taken to descend from it (inferred; the tag's commit is unread): 0.90.0 appears
#:   after 2026-07-08 (`UNREAD`: PR #552 of
#:   2026-07-23), later than 177dcef6 (2026-06-30), and releases are cut from `main` (every
#:   tag from 0.51.0 to 0.55.1 is an ancestor of 177dcef6 in the fork's snapshot).
#: - 0.90.0 has PR #511's 256 KiB heap: arduino-cli reports 262,144 B of RAM for 0.90.0
#:   (generator/boards/budgets.py's docstring: meta-pytorch/executorch-arduino CHANGELOG [0.2.0]),
#:   and the core writes `upload.maximum_data_size` as `CONFIG_LLEXT_HEAP_SIZE` x 1024 of
#:   the built firmware (`extra/package_core.sh` line 64 at 0.55.0, which gives 0.55.0's
#:   131,072; `extra/build.sh` line 192 at 177dcef6, "maximum data size: configured LLEXT
#:   heap size"), so 0.90.0's heap is 256 KiB, as at 177dcef6 (variant `.conf` line 5).
#: - Not known, so not assumed: what 0.90.0 changed after 177dcef6. The main line added
#:   exports from 2026-07-08 (`UNREAD`'s comment), which only let more sketches load, and
#:   moved `west.yml` to `zephyr-arduino-v4.4.1`, whose LLEXT was not read.
#: The releases to 0.55.1 keep their 128 KiB heap (and 0.55.0 its two wrapped AEABI helpers):
#: a user of one reads that row's verdict.
PINNED_CORE = "main@177dcef6"
#: Why `PINNED_CORE` stands in for `INSTALLED_CORE` (the link-modes section's last sentence
#: says it when the installed core was not read; the reasons are in `PINNED_CORE`'s comment).
STAND_IN_REASON = (
    "the newest loader read, which 0.90.0 was released after on the same main line (its tag's "
    "commit is unread), with the 256 KiB LLEXT heap 0.90.0 reports (262,144 B of RAM)"
)
#: The Cortex-M33's SRAM (Zephyr `dts/arm/st/u5/stm32u585Xi.dtsi`: sram0 at 0x20000000, 768
#: KiB) and the firmware's flash (the loader at the start of the 2 MiB flash at 0x08000000):
#: where the board's heap and the symbols the firmware exports lie. Their distance (at least
#: 0x17F40000) is beyond any branch's reach, wherever in them the linker put the heap.
SRAM_BASE = 0x2000_0000
FLASH_BASE = 0x0800_0000
#: Where the sketch partition lies in flash (variant overlay `user_sketch`: 0x100000 from
#: 0.54.0, 0xF0000 before): the address of the regions the loader reads in place.
SKETCH_PARTITION = 0x0810_0000


@dataclass(frozen=True)
class CoreFacts:
    """The UNO Q loader of one arduino:zephyr release (or main-line commit).

    Attributes:
        version: the release (`0.55.0`) or `main@<commit>` for a main-line commit.
        commit: arduino/ArduinoCore-zephyr commit; date: its date.
        heap_bytes: the LLEXT heap (`CONFIG_LLEXT_HEAP_SIZE` KiB x 1024).
        storage_writable: True when the loader may write the sketch where it lies (then it
            reads every region in place); False: persistent storage in flash.
        rodata_split: True when the build splits `.llext.rodata.noreloc` out, read in place.
        links_libm: True when the Dynamic link has `-lm`.
        exports_file: the export table (`cores/<file>`).
        note: what changed at this release, for people.
        two_pass_link: False for the one-pass link of an older arduino-cli (`one_pass`):
            `.rodata` is not split, whatever the core's loader does with the split.
    """

    version: str
    commit: str
    date: str
    heap_bytes: int
    storage_writable: bool
    rodata_split: bool
    links_libm: bool
    exports_file: str
    note: str
    two_pass_link: bool = True

    @property
    def exports(self) -> frozenset[str]:
        """The names the loader resolves undefined symbols against: the core's table and
        Zephyr's own (`ZEPHYR_EXPORTS_FILE`)."""
        own = (name if kind == "symbol" else f"__real_{name}" for kind, name in _entries(self))
        return frozenset([*own, *(name for _, name in _read_exports(ZEPHYR_EXPORTS_FILE))])

    @property
    def wrapped(self) -> tuple[str, ...]:
        """The functions the core's `llext_wrappers.c` defines in the sketch (each a long
        call to `__real_<name>`), in the table's order."""
        return tuple(name for kind, name in _entries(self) if kind != "symbol")

    @property
    def pinned(self) -> bool:
        """True for the release the check judges (`PINNED_CORE`)."""
        return self.version == PINNED_CORE


@cache
def _read_exports(file: str) -> tuple[tuple[str, str], ...]:
    rows = []
    for line in (CORES_DIR / file).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            kind, name = line.split()
            rows.append((kind, name))
    return tuple(rows)


#: Zephyr's own exports (`subsys/llext/llext_export.c`), the same for every core.
ZEPHYR_EXPORTS_FILE = "zephyr.exports"


def _entries(core: CoreFacts) -> tuple[tuple[str, str], ...]:
    return _read_exports(core.exports_file)


_K = 1024
#: Every core whose loader facts were read, oldest first.
CORES: tuple[CoreFacts, ...] = (
    CoreFacts("0.51.0", "cbf7e449e063", "2025-10-15", 128 * _K, False, False, False,
              "0.51.0.exports", "first UNO Q release"),
    CoreFacts("0.52.0", "93ad66d107f5", "2025-11-12", 128 * _K, False, False, False,
              "0.52.0.exports", ""),
    CoreFacts("0.53.0", "e85008303f75", "2026-01-13", 128 * _K, False, False, False,
              "0.53.0.exports", ""),
    CoreFacts("0.53.1", "750597597212", "2026-02-05", 128 * _K, False, False, False,
              "0.53.1.exports", "PR #324: a larger debugger RAM-mode buffer only"),
    CoreFacts("0.54.0", "ff6d41939515", "2026-03-23", 128 * _K, False, True, True,
              "0.54.0.exports", "rodata split, libc long-call wrappers, -lm"),
    CoreFacts("0.54.1", "7dbd415d9a4b", "2026-03-25", 128 * _K, False, True, True,
              "0.54.1.exports", ""),
    CoreFacts("0.55.0", "6544208c33a8", "2026-04-28", 128 * _K, False, True, True,
              "0.55.0.exports", "__aeabi_dadd and __aeabi_dcmpgt wrapped (PR #453)"),
    CoreFacts("0.55.1", "aab6b7fd3adc", "2026-05-15", 128 * _K, False, True, True,
              "0.55.1.exports", "every __aeabi_* helper wrapped (EXPORT_AEABI_SYM)"),
    CoreFacts("main@177dcef6", "177dcef66eca", "2026-06-30", 256 * _K, False, True, True,
              "main.exports", "LLEXT heap 256 KiB (PR #511); no release with it could be read"),
)  # fmt: skip


@dataclass(frozen=True)
class UnreadRelease:
    """An arduino:zephyr release that exists but whose loader could not be read.

    Attributes:
        version: the release (`0.90.0`).
        exists: the source that shows the release exists (repository, file or thread).
    """

    version: str
    exists: str


#: Releases after 0.55.1, oldest first. For none of them does a source give the commit of
#: its tag: no snapshot holds a tag after 0.55.1 (the fork's stops at 2026-06-30, without
#: 0.56.0; a mirror of upstream `main` to b5c2013 of 2026-08-21, Stars1233/ArduinoCore-zephyr,
#: has no tags), and the package index, which names a release's archive by its commit
#: (0.55.0: `ArduinoCore-zephyr_unoq-6544208c.tar.bz2`, in the `arduino-cli board details`
#: output of weimingtom/wmt_arduino_uno_q_study README.md), was not found quoted for them.
#: Which main-line commit a release is matters: between 2026-07-08 and 2026-08-21 `main`
#: added exports (`gmtime` e7a9132, float `__aeabi_f*` helpers 2e77eab, `gettimeofday`
#: 1629519) and moved `west.yml` to `zephyr-arduino-v4.4.1` (628ba0a).
UNREAD: tuple[UnreadRelease, ...] = (
    UnreadRelease("0.55.2", "meta-pytorch/executorch-arduino .github/workflows/ci.yml at "
                  "0e4de219 installs it; its CHANGELOG [0.2.0] measured against it"),
    UnreadRelease("0.56.0", "arduino/ArduinoCore-zephyr issue #542 (2026-07-08): arduino-cli "
                  "prints 'Board platform: arduino:zephyr (0.56.0)'"),
    UnreadRelease("0.90.0", "meta-pytorch/executorch-arduino .github/workflows/ci.yml at "
                  "17edf1f4 installs it; arduino/ArduinoCore-zephyr PR #552 (2026-07-23)"),
    UnreadRelease("1.0.0", "arduino/ArduinoCore-zephyr PR #625 'README: update for 1.0.0 "
                  "release'; FastLED/FastLED PR #4443 (2026-09-19) installs it"),
)  # fmt: skip


#: The first arduino-cli release that runs a platform's numbered link recipes
#: (`recipe.c.combine.1.pattern` ...); an older one runs only `recipe.c.combine.pattern`.
#: The version is issue 32's (citing arduino/ArduinoCore-zephyr PR #245); arduino-cli's own
#: change was not read here, so the bound is not verified.
TWO_PASS_CLI = "1.3.0"


def one_pass(facts: CoreFacts) -> CoreFacts:
    """`facts` as linked by an arduino-cli before `TWO_PASS_CLI`: its loader, with the sketch
    linked in one pass, so every `.rodata*` section lands in one `.rodata`, which the loader
    copies to the heap whole when any of it is relocated (a C++ sketch's vtables are)
    (`two_pass_link` False; never pinned).

    Source: pillo79/ArduinoCore-zephyr `platform.txt` at 017a0d3f: "Combine ... -
    Single-pass linking (older IDEs)": `recipe.c.combine.pattern` links once with
    `-T{build.ldscript.path}/build-rodata.ld`, beside the four numbered recipes of the
    two-pass link (`gen-rodata-ld` between them). What `build-rodata.ld` holds was not read;
    the model takes it to gather all read-only data into `.rodata` (`dynamic.MERGED_RODATA`).
    """
    return dataclasses.replace(
        facts,
        version=f"{facts.version}, arduino-cli < {TWO_PASS_CLI}",
        two_pass_link=False,
        note=f"one-pass link of arduino-cli before {TWO_PASS_CLI}: all .rodata on the heap",
    )


def core(version: str) -> CoreFacts:
    """The facts of `version` (a `CoreFacts.version`).

    Raises:
        KeyError: no facts for that version.
    """
    for facts in CORES:
        if facts.version == version:
            return facts
    raise KeyError(version)


def pinned_core() -> CoreFacts:
    """The facts of `PINNED_CORE`."""
    return core(PINNED_CORE)


#: The rows of the Dynamic verdict on the UNO Q: every core of `CORES`, then the pinned core
#: linked in one pass by an older arduino-cli (`one_pass`).
VERDICT_ROWS: tuple[CoreFacts, ...] = (*CORES, one_pass(pinned_core()))


def exports_path(facts: CoreFacts) -> Path:
    """The export table file of `facts`."""
    return CORES_DIR / facts.exports_file
