"""What users read about the link modes: for each example and each core of `cores.py`,
whether the board's loader loads it in the Dynamic link mode (the IDE's default), what it
takes of the loader's heap, and what to do when it does not load.

One Markdown section, made from a check report (its JSON form, `CheckReport.to_dict()`),
written three places: the check's own report, the generated library's README (between
`BEGIN` and `END`, by `check --update-docs`), and the sync pull request's body (marked as
the README section to carry over: sync never writes the library repo's README). Each
example's header comment gets its own lines between `SKETCH_BEGIN` and `SKETCH_END`
(`check --update-docs`, and sync in the library repo's examples).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from generator.boards.budgets import UNO_Q, check_boards
from generator.boards.cores import CORES, INSTALLED_CORE, PINNED_CORE, STAND_IN_REASON, UNREAD
from generator.util.atomic import write_atomic
from generator.util.errors import FatalError
from generator.util.markdown import table

BEGIN = "<!-- link-modes: begin (written from the check report; do not edit by hand) -->"
END = "<!-- link-modes: end -->"
SKETCH_BEGIN = "// link-modes: begin"
SKETCH_END = "// link-modes: end"

_REFUSED = (
    "A sketch the loader refuses is a board that prints nothing: the sketch never starts, "
    "and the loader's log on the board's UART (not the USB serial monitor) ends with "
    "`Failed to load sketch, rc -N` (-12: the loader's heap is too small; -61: a symbol the "
    "firmware does not export; -8: a relocation it cannot apply)."
)


def _verdicts(report: Mapping[str, Any]) -> list[tuple[str, list[Mapping[str, Any]]]]:
    rows = []
    for example in report.get("examples") or []:
        if not isinstance(example, Mapping):
            continue
        dynamic = example.get("dynamic")
        verdicts = dynamic.get("verdicts") if isinstance(dynamic, Mapping) else None
        if isinstance(verdicts, list) and verdicts:
            rows.append(
                (str(example.get("example")), [v for v in verdicts if isinstance(v, Mapping)])
            )
    return rows


_UNDEFINED = re.compile(r"symbol table (\S+),")
_OUT_OF_RANGE = re.compile(r"sym '([^']+)': relocation out of range")


def reason(v: Mapping[str, Any]) -> str:
    """Why a refused verdict was refused, in a few words, from the loader's first error (the
    one its return code is): `needs 140,000 B of 128 KiB (8,928 B over)`, `` `memcpy` not
    exported``, ``branch to `__aeabi_dmul` out of range``."""
    heap = int(v.get("heap_bytes") or 0)
    peak = v.get("peak_bytes")
    log = [str(line) for line in v.get("log") or []]
    if v.get("errno") == 12 and isinstance(peak, int):
        over = f" ({peak - heap:,} B over)" if peak > heap else " (with alignment)"
        return f"needs {peak:,} B of {heap // 1024} KiB{over}"
    undefined = {m.group(1) for line in log if (m := _UNDEFINED.search(line))}
    for line in log:
        if m := _UNDEFINED.search(line):
            more = len(undefined) - 1
            return f"`{m.group(1)}` not exported" + (f" (+{more} more)" if more > 0 else "")
        if m := _OUT_OF_RANGE.search(line):
            return f"branch to `{m.group(1)}` out of range"
    return log[-1] if log else "refused"


def _cell(v: Mapping[str, Any]) -> str:
    heap = int(v.get("heap_bytes") or 0)
    peak = v.get("peak_bytes")
    if v.get("loaded") and isinstance(peak, int):
        return f"✅ {peak:,} B of {heap // 1024} KiB"
    return f"❌ rc -{v.get('errno')}, {reason(v)}"


def static_fqbn(report: Mapping[str, Any]) -> str:
    """The Static link mode's FQBN of the board `report` (a check report's JSON) was checked
    for, by its `"board"` name; the UNO Q's when the name is no board of the table (a
    multi-board report, whose README section is the UNO Q's)."""
    named = [b for b in check_boards().values() if b.name == report.get("board")]
    return named[0].fqbn if named else UNO_Q.fqbn


def link_modes_markdown(report: Mapping[str, Any], heading: str = "##") -> str:
    """The section (Markdown, ending in a newline) for the check report `report`.

    Without Dynamic verdicts in `report` (nothing was linked) the section says the library
    was not checked and promises nothing.
    """
    rows = _verdicts(report)
    lines = [f"{heading} Link modes: Dynamic (the IDE's default) and Static", ""]
    if not rows:
        lines += [
            "This tree has not been checked: `python -m generator check . --update-docs` "
            "fills this section in. Until then, pick Tools > Link mode > Static, which links "
            "the sketch into the firmware and has no loader to refuse it.",
            "",
            _REFUSED,
        ]
        return "\n".join(lines) + "\n"
    cores = [str(v.get("core")) for v in rows[0][1]]
    header = [f"`{c}` (pinned)" if c == PINNED_CORE else f"`{c}`" for c in cores]
    lines += [
        "In the Dynamic link mode the board's loader copies the sketch into its LLEXT heap "
        "and links it against the firmware. What it does with each example, on each "
        "arduino:zephyr release whose loader we read (`generator/boards/cores.py` of the "
        "generator; the heap the loader takes at its peak, against its size):",
        "",
        *table(
            ["example", *header],
            ([name, *(_cell(v) for v in verdicts)] for name, verdicts in rows),
            align="l" + "r" * len(cores),
        ),
        "",
    ]
    refused = sorted(
        {
            (name, str(v.get("core")))
            for name, verdicts in rows
            for v in verdicts
            if not v.get("loaded")
        }
    )
    if refused:
        lines += [
            "Where a cell says ❌, that core's loader refuses the example (why, in short): on "
            "that core pick "
            f"Tools > Link mode > Static (`arduino-cli compile --fqbn {static_fqbn(report)}`), "
            "or update the core.",
            "",
        ]
    lines += [_REFUSED, "", unchecked_sentence()]
    return "\n".join(lines) + "\n"


def unchecked_sentence() -> str:
    """The section's last sentence: the releases `cores.py` could not read (`UNREAD`), and,
    when the core the workflows install is one of them, which read release stands in."""
    named = "".join(f"{u.version}, " for u in UNREAD)
    text = (
        f"Releases not in the table ({named}and later) were not checked: their loader's "
        "source could not be read."
    )
    if all(c.version != INSTALLED_CORE for c in CORES):
        text += (
            f" The library's CI installs {INSTALLED_CORE}; `{PINNED_CORE}` (pinned) is the "
            f"loader the check judges in its place: {STAND_IN_REASON}."
        )
    return text


def replace_section(text: str, section: str, begin: str = BEGIN, end: str = END) -> str | None:
    """`text` with what lies between the markers `begin` and `end` (this section's by
    default; `board_docs.py` passes its own) replaced by `section`; None when `text` has not
    both markers, in that order."""
    start = text.find(begin)
    stop = text.find(end, start + len(begin)) if start >= 0 else -1
    if start < 0 or stop < 0:
        return None
    return text[: start + len(begin)] + "\n" + section + text[stop:]


def check_readme(readme: Path) -> str:
    """`readme`'s text, once it is known to have the section's markers.

    Raises:
        FatalError: `readme` is missing, unreadable, not UTF-8, or has no markers.
    """
    try:
        text = readme.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise FatalError(f"--update-docs: cannot read {readme} ({e})") from None
    if replace_section(text, "") is None:
        raise FatalError(
            f"--update-docs: {readme} has no link-modes section (the lines {BEGIN!r} and "
            f"{END!r}, in that order); a generated library's README has them"
        )
    return text


def update_readme(readme: Path, report: Mapping[str, Any]) -> None:
    """Write the section for `report` into `readme` between its markers.

    Raises:
        FatalError: `readme` is missing, unreadable, or has no markers.
    """
    new = replace_section(check_readme(readme), link_modes_markdown(report))
    assert new is not None
    try:
        write_atomic(readme, new)
    except OSError as e:
        raise FatalError(f"--update-docs: cannot write {readme} ({e})") from None


def sketch_lines(verdicts: list[Mapping[str, Any]]) -> list[str]:
    """An example's header-comment lines (without the markers) for its `verdicts`."""
    lines = ["// Dynamic link mode (the IDE's default), as each core's loader takes it:"]
    for v in verdicts:
        name = str(v.get("core")) + (" (pinned)" if v.get("core") == PINNED_CORE else "")
        heap = int(v.get("heap_bytes") or 0)
        peak = v.get("peak_bytes")
        if v.get("loaded") and isinstance(peak, int):
            lines.append(f"//   {name}: loads, {peak:,} B of its {heap // 1024} KiB heap")
        else:
            lines.append(f"//   {name}: refused (rc -{v.get('errno')}, {reason(v)}): pick Static")
    lines += [
        "// A refused sketch prints nothing (the loader's log is on the board's UART):",
        "// then pick Tools > Link mode > Static. Newer cores were not checked.",
    ]
    return lines


def update_sketches(examples: Path, report: Mapping[str, Any]) -> list[Path]:
    """Rewrite the link-modes lines of each checked example's sketch under `examples`.

    Returns:
        the sketches rewritten (those with both markers and verdicts in `report`).

    Raises:
        FatalError: a sketch cannot be read or written, or an example's name is not one plain
            path component (the report may come from an untrusted check: nothing outside
            `examples` is written).
    """
    written = []
    for name, verdicts in _verdicts(report):
        if name in ("", ".", "..") or Path(name).name != name or "\\" in name:
            raise FatalError(f"the check report names the example {name!r}: not a folder name")
        sketch = examples / name / f"{name}.ino"
        try:
            text = sketch.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise FatalError(f"--update-docs: cannot read {sketch} ({e})") from None
        start = text.find(SKETCH_BEGIN)
        end = text.find(SKETCH_END, start + 1) if start >= 0 else -1
        if start < 0 or end < 0:
            continue
        body = "\n".join(sketch_lines(verdicts)) + "\n"
        new = text[: start + len(SKETCH_BEGIN)] + "\n" + body + text[end:]
        try:
            write_atomic(sketch, new)
        except OSError as e:
            raise FatalError(f"--update-docs: cannot write {sketch} ({e})") from None
        written.append(sketch)
    return written
