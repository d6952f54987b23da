"""The loader-facts table (`generator/boards/cores.py`): one row per core release read, each
with its export table, and the pinned row is the core the rendered workflows install."""

from __future__ import annotations

import dataclasses
import re

import pytest

from generator import data_dir
from generator.boards.budgets import UNO_Q, ZEPHYR_BOARDS
from generator.boards.cores import (
    CORES,
    INSTALLED_CORE,
    PINNED_CORE,
    UNREAD,
    VERDICT_ROWS,
    core,
    exports_path,
    pinned_core,
)


def test_the_pinned_core_is_the_one_the_workflows_install() -> None:
    pins = set()
    for workflow in ("ci.yml", "sync.yml"):
        text = (data_dir("workflows") / workflow).read_text(encoding="utf-8")
        pins |= set(re.findall(r'ZEPHYR_CORE: "arduino:zephyr@([0-9.]+)"', text))
    assert pins == {INSTALLED_CORE}
    assert pinned_core().pinned and sum(c.pinned for c in CORES) == 1
    read = [c.version for c in CORES]
    if INSTALLED_CORE in read:
        assert PINNED_CORE == INSTALLED_CORE  # a core that was read is judged itself
    else:
        # Installing a core whose loader was not read is declared, with its evidence.
        assert INSTALLED_CORE in {u.version for u in UNREAD}


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def test_the_unread_releases_are_the_ones_after_the_newest_read_release() -> None:
    releases = [c.version for c in CORES if not c.version.startswith("main@")]
    unread = [u.version for u in UNREAD]
    assert unread == ["0.55.2", "0.56.0", "0.90.0", "1.0.0"]
    assert all(_key(v) > _key(releases[-1]) for v in unread) and not set(unread) & set(releases)
    assert all(u.exists for u in UNREAD)


def test_every_row_has_its_export_table_with_its_source() -> None:
    for facts in CORES:
        text = exports_path(facts).read_text(encoding="utf-8")
        assert facts.commit[:8] in text  # the commit it was read at
        kinds = {line.split()[0] for line in text.splitlines() if not line.startswith("#")}
        assert kinds <= {"symbol", "libc", "aeabi"}
        # Every core exports the C library's basics; from 0.54.0 under __real_ names, with
        # the core's wrappers defining the plain names in the sketch.
        # Zephyr's own eight, for every core.
        assert {"memcpy", "memset", "strcmp"} <= facts.exports
        if facts.rodata_split:
            assert {"__real_memcpy", "__real_malloc", "__assert_no_args"} <= facts.exports
            assert "memcpy" in facts.wrapped and "strtok" not in facts.exports
        else:
            assert {"memmove", "malloc"} <= facts.exports and facts.wrapped == ()


def test_the_facts_the_issue_names() -> None:
    # 128 KiB to 0.55.1, 256 KiB from ArduinoCore-zephyr PR #511 (2026-06-15).
    assert {c.heap_bytes for c in CORES if not c.version.startswith("main")} == {131_072}
    assert core("main@177dcef6").heap_bytes == 262_144
    # __aeabi_f2lz is exported by no core; __aeabi_d2lz by all; every __aeabi_* helper is
    # wrapped from 0.55.1 (EXPORT_AEABI_SYM), __aeabi_dadd already in 0.55.0 (PR #453).
    for facts in CORES:
        assert not {"__aeabi_f2lz", "__real___aeabi_f2lz"} & facts.exports
        assert {"__aeabi_d2lz", "__real___aeabi_d2lz"} & facts.exports
    assert "__aeabi_dadd" in core("0.55.0").wrapped and "__aeabi_dmul" not in core("0.55.0").wrapped
    assert "__aeabi_dmul" in core("0.55.1").wrapped
    assert not any(c.storage_writable for c in CORES)


def test_the_stand_in_for_0_90_0_is_the_newest_loader_read() -> None:
    # 0.90.0 was not read; the newest row read stands in (cores.py PINNED_CORE's comment):
    # the main line of 2026-06-30, with the 256 KiB heap arduino-cli reports for 0.90.0
    # (boards.py: 262,144 B of RAM) and every __aeabi_* helper wrapped, as from 0.55.1.
    assert INSTALLED_CORE == "0.90.0" and INSTALLED_CORE not in {c.version for c in CORES}
    assert PINNED_CORE == "main@177dcef6" == CORES[-1].version
    assert max(c.date for c in CORES) == pinned_core().date == "2026-06-30"
    assert pinned_core().heap_bytes == 262_144 == UNO_Q.ram_bytes
    assert ZEPHYR_BOARDS["unoq"].llext_heap_bytes == pinned_core().heap_bytes
    assert {"__aeabi_dmul", "__aeabi_ddiv", "__aeabi_dsub"} <= set(pinned_core().wrapped)
    # The older rows stay, each with its own heap and wrappers.
    assert core("0.55.0").heap_bytes == 131_072 and not core("0.55.0").pinned


def test_the_section_names_the_stand_in_when_the_installed_core_was_not_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from generator.boards import linkmode_docs as linkmodes

    monkeypatch.setattr(linkmodes, "INSTALLED_CORE", "0.90.0")
    assert linkmodes.unchecked_sentence().endswith(
        "and later) were not checked: their loader's source could not be read. The library's "
        "CI installs 0.90.0; `main@177dcef6` (pinned) is the loader the check judges in its "
        "place: the newest loader read, which 0.90.0 was released after on the same main "
        "line (its tag's commit is unread), with the 256 KiB LLEXT heap 0.90.0 reports "
        "(262,144 B of RAM)."
    )
    monkeypatch.setattr(linkmodes, "INSTALLED_CORE", "0.55.0")
    assert linkmodes.unchecked_sentence().endswith("source could not be read.")


def test_export_names_are_the_symbols_the_firmware_exports_not_the_macros() -> None:
    # llext_exports.c's EXPORT_SYMBOL(TYPE_SECTION_START(device)) exports the expanded name.
    main = core("main@177dcef6").exports
    assert {"_device_list_start", "_device_list_end", "device_from_handle"} <= main
    for facts in CORES:
        assert not [n for n in facts.exports if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n)]


def test_the_one_pass_link_is_a_verdict_row_of_its_own() -> None:
    *cores, one = VERDICT_ROWS
    assert tuple(cores) == CORES
    assert one == dataclasses.replace(
        pinned_core(),
        version="main@177dcef6, arduino-cli < 1.3.0",
        two_pass_link=False,
        note="one-pass link of arduino-cli before 1.3.0: all .rodata on the heap",
    )
    assert not one.pinned and all(c.two_pass_link for c in CORES)
