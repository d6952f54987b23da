"""The loader-facts table (`generator/check/cores.py`): one row per core release read, each
with its export table, and the pinned row is the core the rendered workflows install."""

from __future__ import annotations

import re

from generator import data_dir
from generator.check.cores import CORES, PINNED_CORE, core, exports_path, pinned_core


def test_the_pinned_core_is_the_one_the_workflows_install() -> None:
    pins = set()
    for workflow in ("ci.yml", "sync.yml"):
        text = (data_dir("workflows") / workflow).read_text(encoding="utf-8")
        pins |= set(re.findall(r'ZEPHYR_CORE: "arduino:zephyr@([0-9.]+)"', text))
    assert pins == {PINNED_CORE}
    assert pinned_core().pinned and sum(c.pinned for c in CORES) == 1


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
