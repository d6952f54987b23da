"""What users read about the link modes (`generator/boards/linkmode_docs.py`): the section made
from a check report, written into a README between its markers and into each example's
header comment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.boards.linkmode_docs import (
    BEGIN,
    END,
    SKETCH_BEGIN,
    SKETCH_END,
    check_readme,
    link_modes_markdown,
    reason,
    replace_section,
    update_readme,
    update_sketches,
)
from generator.util.errors import FatalError

PINNED = "main@177dcef6"  # cores.PINNED_CORE, with its 256 KiB heap


def _verdict(core: str, loaded: bool, peak: int, errno: int = 0) -> Any:
    heap = 262_144 if core == PINNED else 131_072
    return {"core": core, "pinned": core == PINNED, "loaded": loaded, "heap_bytes": heap,
            "peak_bytes": peak, "errno": errno, "log": [], "short_branches": 0}  # fmt: skip


REPORT = {
    "examples": [
        {"example": "AddModel", "dynamic": {"verdicts": [
            _verdict("0.55.0", False, 140_000, errno=12), _verdict(PINNED, True, 140_032)]}},
        {"example": "HelloExecuTorch", "dynamic": {"verdicts": [
            _verdict("0.55.0", True, 20_568), _verdict(PINNED, True, 13_864)]}},
    ]
}  # fmt: skip


def test_the_section_says_per_core_what_the_loader_does() -> None:
    text = link_modes_markdown(REPORT)
    assert "| example | `0.55.0` | `main@177dcef6` (pinned) |" in text
    assert (
        "| AddModel | ❌ rc -12, needs 140,000 B of 128 KiB (8,928 B over) "
        "| ✅ 140,032 B of 256 KiB |" in text
    )
    assert "| HelloExecuTorch | ✅ 20,568 B of 128 KiB | ✅ 13,864 B of 256 KiB |" in text
    # A user of the older core reads its row: refused there, and what to do.
    assert "on that core pick Tools > Link mode > Static" in text
    assert "pick Tools > Link mode > Static" in text and "Failed to load sketch, rc -N" in text
    assert "(0.55.2, 0.56.0, 0.90.0, 1.0.0, and later) were not checked" in text


def test_the_static_fqbn_advised_is_the_checked_boards() -> None:
    # A per-board report of another board advised the UNO Q's FQBN (issue 19's breaker, 7).
    unoq = "`arduino-cli compile --fqbn arduino:zephyr:unoq:link_mode=static`"
    giga = "`arduino-cli compile --fqbn arduino:zephyr:giga:link_mode=static`"
    assert unoq in link_modes_markdown(REPORT)  # no board named: the README's, the UNO Q's
    assert unoq in link_modes_markdown({**REPORT, "board": "Arduino UNO Q"})
    text = link_modes_markdown({**REPORT, "board": "Arduino Giga R1"})
    assert giga in text and "unoq" not in text


def test_an_unchecked_tree_promises_nothing() -> None:
    text = link_modes_markdown({"examples": [{"example": "AddModel", "dynamic": None}]})
    assert "has not been checked" in text and "✅" not in text


def test_the_readme_section_is_replaced_between_its_markers(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\n{BEGIN}\nold\n{END}\n\n## After\n", encoding="utf-8")
    update_readme(readme, REPORT)
    text = readme.read_text(encoding="utf-8")
    assert text.startswith(f"# Title\n\n{BEGIN}\n## Link modes") and text.endswith(
        f"{END}\n\n## After\n"
    )
    assert "old" not in text and "140,032 B" in text
    # Twice gives the same file.
    update_readme(readme, REPORT)
    assert readme.read_text(encoding="utf-8") == text


def test_a_readme_without_markers_is_refused_before_anything_runs(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"{END}\n{BEGIN}\n", encoding="utf-8")  # wrong order
    assert replace_section(readme.read_text(), "x") is None
    with pytest.raises(FatalError, match="has no link-modes section"):
        check_readme(readme)
    with pytest.raises(FatalError, match="cannot read"):
        check_readme(tmp_path / "missing.md")


def test_each_checked_example_gets_its_lines(tmp_path: Path) -> None:
    for name in ("AddModel", "HelloExecuTorch", "Other"):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{name}.ino").write_text(
            f"// {name}\n{SKETCH_BEGIN}\n// not checked yet\n{SKETCH_END}\n\nvoid setup() {{}}\n"
        )
    written = update_sketches(tmp_path, REPORT)
    assert sorted(p.parent.name for p in written) == ["AddModel", "HelloExecuTorch"]
    add = (tmp_path / "AddModel/AddModel.ino").read_text()
    assert "//   main@177dcef6 (pinned): loads, 140,032 B of its 256 KiB heap\n" in add
    assert (
        "//   0.55.0: refused (rc -12, needs 140,000 B of 128 KiB (8,928 B over)): pick Static\n"
        in add
    )
    assert add.endswith(f"{SKETCH_END}\n\nvoid setup() {{}}\n") and "not checked yet" not in add
    assert "not checked yet" in (tmp_path / "Other/Other.ino").read_text()


def test_a_refusal_says_why_in_a_few_words() -> None:
    undefined = {**_verdict("0.51.0", False, 20_568, errno=61), "log": [
        "llext: Undefined symbol with no entry in symbol table memcpy, offset 568, link section 12",
        "elf: Could not find symbol memcpy!",
        "llext: Undefined symbol with no entry in symbol table atexit, offset 980, link section 12",
        "llext: Failed to link, ret -61"]}  # fmt: skip
    far = {**_verdict("0.54.0", False, 9_000, errno=8), "log": [
        "elf: sym '__aeabi_dmul': relocation out of range (0x20010040 -> 0x8010001)",
        "llext: Failed to link, ret -8"]}  # fmt: skip
    assert reason(undefined) == "`memcpy` not exported (+1 more)"
    assert reason(far) == "branch to `__aeabi_dmul` out of range"
    assert (
        reason(_verdict("0.55.0", False, 140_000, errno=12))
        == "needs 140,000 B of 128 KiB (8,928 B over)"
    )


def test_the_reason_is_the_first_error_the_loader_logged() -> None:
    mixed = {**_verdict("0.55.0", False, 9_000, errno=8), "log": [
        "elf: sym '__aeabi_ddiv': relocation out of range (0x20010040 -> 0x8010001)",
        "llext: Undefined symbol with no entry in symbol table __errno, offset 8, link section 3",
        "llext: Failed to link, ret -8"]}  # fmt: skip
    assert reason(mixed) == "branch to `__aeabi_ddiv` out of range"
