"""What users read about the boards: which boards this tree was checked on, in which link
mode, which examples fit each and ran on its emulated CPU, and their flash and RAM against the
board's budgets. No board is listed as working without a check run behind it: a board of
`generator.boards.budgets.ZEPHYR_BOARDS` the report has no run for is "not checked".

One Markdown section, made from a check report's JSON (`generator.check.report.board_data`, one
entry per example and board, or a one-board `CheckReport.to_dict()` such as sync's), written
two places like the link-modes section (`linkmode_docs.py`): the generated library's README
(between `BEGIN` and `END`, by `check --update-docs`) and the sync pull request's body
(marked as the README section to carry over: sync never writes the library repo's README).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.boards.budgets import EMULATORS, ZEPHYR_BOARDS, ZephyrBoard, check_boards, cpu_name
from generator.boards.cores import PINNED_CORE
from generator.boards.linkmode_docs import BEGIN as LINK_BEGIN
from generator.boards.linkmode_docs import END as LINK_END
from generator.boards.linkmode_docs import check_readme as check_link_modes_readme
from generator.boards.linkmode_docs import link_modes_markdown, reason, replace_section
from generator.util.atomic import write_atomic
from generator.util.errors import FatalError
from generator.util.markdown import table

BEGIN = "<!-- boards: begin (written from the check report; do not edit by hand) -->"
END = "<!-- boards: end -->"

#: The command that fills the section in, run in the library's folder.
FILL = "python -m generator check . --board all --update-docs"

_PASS, _FAIL, _SKIP, _MISFIT = "✅", "❌", "➖", "⛔"
_OVERFLOW = re.compile(r"(\w+) by ([\d,]+) bytes")
_REFUSED = "does not fit (its own #error refuses the board at compile time)"


@dataclass(frozen=True)
class _Run:
    """One board's run in the report: its key (None: a board name `ZEPHYR_BOARDS` does not
    have), name, emulated CPU and QEMU machine (None: no emulator or not said), examples."""

    key: str | None
    name: str
    cpu: str | None
    machine: str | None
    examples: list[Mapping[str, Any]]


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _entries(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [e for e in report.get("examples") or [] if isinstance(e, Mapping)]


def _emulated(emulator: object) -> tuple[str | None, str | None]:
    """(CPU, QEMU machine) of an `EMULATORS` key; (None, None) when it is not one."""
    found = EMULATORS.get(emulator) if isinstance(emulator, str) else None
    return (found.cpu, found.machine) if found else (None, None)


def _runs(report: Mapping[str, Any]) -> list[_Run]:
    """The boards `report` ran on, in its order, each with its example entries.

    A report with `"boards"` (`board_data`) gives each board the entries whose `"board"` is
    its key; one without (a single `CheckReport.to_dict()`) is one board, the
    `ZEPHYR_BOARDS` row whose name its `"board"` is. A report without example entries ran
    on no board.
    """
    entries = _entries(report)
    if not entries:
        return []
    boards = report.get("boards")
    if isinstance(boards, list):
        runs = []
        for b in (_mapping(b) for b in boards):
            key = str(b.get("key"))
            cpu, machine = _emulated(b.get("emulator"))
            mine = [e for e in entries if e.get("board") == key]
            name = str(b.get("name") or key)
            runs.append(_Run(key if key in ZEPHYR_BOARDS else None, name, cpu, machine, mine))
        return runs
    name = str(report.get("board") or "")
    row = next((r for r in ZEPHYR_BOARDS.values() if r.name == name), None)
    if row is None:
        return [_Run(None, name or "an unnamed board", None, None, entries)]
    cpu, machine = _emulated(row.emulator)
    return [_Run(row.key, row.name, cpu, machine, entries)]


def _stage(entry: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    for stage in entry.get("stages") or []:
        if isinstance(stage, Mapping) and stage.get("stage") == name:
            return stage
    return None


def _status(stage: Mapping[str, Any] | None) -> str | None:
    return str(stage.get("status")) if stage is not None else None


def _cpu_name(cpu: str | None) -> str:
    """`cortex-m7` as `Cortex-M7` (`boards.cpu_name`); "the emulator" when unknown."""
    return cpu_name(cpu) if cpu else "the emulator"


def _of(used: int, budget: int | None) -> str:
    """`20,260 B of 122,880 (16%)`, or `20,260 B` without a budget."""
    if not budget:
        return f"{used:,} B"
    return f"{used:,} B of {budget:,} ({used * 100 // budget}%)"


def _overflow(stage: Mapping[str, Any] | None) -> dict[str, int]:
    """Linker region -> bytes over, from a failed or misfit "sizes" stage's summary
    (`sizes_stage`: `does not fit <board>: FLASH by 37,264 bytes`), the only place a
    firmware that did not link keeps them."""
    if stage is None or _status(stage) not in ("fail", "misfit"):
        return {}
    summary = str(stage.get("summary") or "")
    return {m.group(1): int(m.group(2).replace(",", "")) for m in _OVERFLOW.finditer(summary)}


def _refused(compile_stage: Mapping[str, Any] | None, later: Mapping[str, Any] | None) -> bool:
    """Whether the sketch refused the board with its own board-fit `#error`: its compile
    stage passed as `does not fit: refused at compile time ...` and a later stage was
    skipped as `not built: the sketch does not fit ...` (`check/compile.py`)."""
    said = [str(s.get("summary") or "") for s in (compile_stage, later) if s is not None]
    return any(x.startswith(("does not fit: refused", "not built: the sketch does not fit"))
               for x in said)  # fmt: skip


def _region(name: str) -> str:
    return {"FLASH": "flash", "RAM": "RAM"}.get(name, f"region {name}")


def _not_run(summary: str) -> str:
    """A skipped run's reason in a few words."""
    if "no emulator" in summary:
        return "no emulator: compiled and sized only"
    if summary.startswith("not run for "):
        return f"not run ({summary.partition(': ')[2]})"
    return summary or "not run"


def _ran(stage: Mapping[str, Any] | None, fits: str) -> tuple[str, str]:
    """(mark, reason) of an example that fits, by its run stage (`stage`: "run" or
    "dynamic-run"; None: the check ran nothing, `--no-run`)."""
    if stage is None:
        return _SKIP, f"{fits}, not run (`--no-run`)"
    status, summary = _status(stage), str(stage.get("summary") or "")
    if status == "pass":
        return _PASS, ""
    if status == "skip":
        return _SKIP, f"{fits}, {_not_run(summary)}"
    # judge_run: "<what ran> (QEMU <machine>): <the first problem>"
    return _FAIL, "run failed: " + (summary.partition("): ")[2] or summary)


def _static(entry: Mapping[str, Any], flash_max: int | None, ram_max: int | None) -> list[str]:
    """The Static row's cells of one example: verdict, flash, RAM."""
    name = str(entry.get("example"))
    sizes = _mapping(entry.get("sizes"))
    budget = _mapping(entry.get("budget"))
    flash_max = int(budget.get("flash_max") or 0) or flash_max
    ram_max = int(budget.get("ram_max") or 0) or ram_max
    sizes_stage = _stage(entry, "sizes")
    flash, ram = sizes.get("flash"), sizes.get("ram")
    flash_cell = _of(flash, flash_max) if isinstance(flash, int) else "-"
    ram_cell = _of(ram, ram_max) if isinstance(ram, int) else "-"
    over = _overflow(sizes_stage)
    if isinstance(flash, int) and flash_max and flash > flash_max:
        over.setdefault("FLASH", flash - flash_max)
    if isinstance(ram, int) and ram_max and ram > ram_max:
        over.setdefault("RAM", ram - ram_max)
    if over:
        why = ", ".join(f"{_region(r)} over by {n:,} B" for r, n in over.items())
        if "FLASH" in over and not isinstance(flash, int):
            flash_cell = f"{over['FLASH']:,} B over {flash_max:,}" if flash_max else "over"
        if "RAM" in over and not isinstance(ram, int):
            ram_cell = f"{over['RAM']:,} B over {ram_max:,}" if ram_max else "over"
        if _status(sizes_stage) == "misfit":
            return [f"{_MISFIT} {name}: does not fit: {why}", flash_cell, ram_cell]
        return [f"{_FAIL} {name}: {why}", flash_cell, ram_cell]
    compile_stage = _stage(entry, "compile")
    if _status(compile_stage) == "fail":
        return [f"{_FAIL} {name}: does not compile", flash_cell, ram_cell]
    if _refused(compile_stage, sizes_stage):
        return [f"{_MISFIT} {name}: {_REFUSED}", flash_cell, ram_cell]
    if _status(sizes_stage) != "pass":
        return [f"{_SKIP} {name}: not sized", flash_cell, ram_cell]
    mark, why = _ran(_stage(entry, "run"), "fits")
    return [f"{mark} {name}" + (f": {why}" if why else ""), flash_cell, ram_cell]


def _dynamic(entry: Mapping[str, Any]) -> list[str]:
    """The Dynamic row's cells of one example: verdict, upload file, loader heap."""
    name = str(entry.get("example"))
    stage = _stage(entry, "dynamic")
    dynamic = _mapping(entry.get("dynamic"))
    verdicts = [_mapping(v) for v in dynamic.get("verdicts") or []]
    pinned = next((v for v in verdicts if v.get("pinned")), verdicts[-1] if verdicts else {})
    flash, flash_max = dynamic.get("flash_bytes"), dynamic.get("flash_max_bytes")
    flash_max = flash_max if isinstance(flash_max, int) else None
    flash_cell = _of(flash, flash_max) if isinstance(flash, int) else "-"
    peak, heap = pinned.get("peak_bytes"), pinned.get("heap_bytes")
    heap = heap if isinstance(heap, int) else None
    ram_cell = f"heap {_of(peak, heap)}" if isinstance(peak, int) else "-"
    status = _status(stage)
    if stage is None:
        return [f"{_SKIP} {name}: not linked Dynamic", flash_cell, ram_cell]
    if status == "skip":
        summary = str(stage.get("summary") or "")
        if _refused(_stage(entry, "compile"), stage):
            return [f"{_MISFIT} {name}: {_REFUSED}", flash_cell, ram_cell]
        why = "not linked: the build failed" if "no gcc-arm objects" in summary else summary
        return [f"{_SKIP} {name}: {why}", flash_cell, ram_cell]
    if status in ("fail", "misfit"):
        refused = bool(pinned) and not pinned.get("loaded")
        misfit = status == "misfit"  # `dynamic_stage`: over the flash, or heap too small
        refusal = f"loader refused: rc -{pinned.get('errno')}, {reason(pinned)}"
        if refused and pinned.get("errno") != 12:
            why = refusal
        elif isinstance(flash, int) and flash_max and flash > flash_max:
            why = f"upload file over flash by {flash - flash_max:,} B"
        elif refused:
            why = f"the loader's heap: {reason(pinned)}" if misfit else refusal
        else:
            why = "Dynamic link failed"
        if misfit:
            return [f"{_MISFIT} {name}: does not fit: {why}", flash_cell, ram_cell]
        return [f"{_FAIL} {name}: {why}", flash_cell, ram_cell]
    mark, why = _ran(_stage(entry, "dynamic-run"), "the loader takes it")
    return [f"{mark} {name}" + (f": {why}" if why else ""), flash_cell, ram_cell]


def _rows(run: _Run) -> Iterator[list[str]]:
    """The table rows of one board's run: Static then Dynamic, one row per example; the
    board and the link mode are named on the first row of their group."""
    row = ZEPHYR_BOARDS.get(run.key) if run.key else None
    board = f"{run.name} (`{run.key}`)" if run.key else run.name
    flash_max = row.flash_bytes if row else None
    ram_max = row.ram_bytes if row else None
    first = True
    for mode, cells in (
        ("Static", [_static(e, flash_max, ram_max) for e in run.examples]),
        ("Dynamic", [_dynamic(e) for e in run.examples]),
    ):
        for i, example in enumerate(cells):
            yield [board if first else "", mode if i == 0 else "", *example]
            first = False


def _unchecked(board: ZephyrBoard) -> str:
    """The cell of a board the report has no run for: "not checked", and why `check` cannot
    check it when it cannot (`check_boards` leaves out a row whose flash or RAM is unknown)."""
    if board.key in check_boards():
        return "not checked"
    return "not checked (`check` cannot size it: its flash or RAM is unknown)"


def checked_boards(report: Mapping[str, Any]) -> list[str]:
    """The `ZEPHYR_BOARDS` keys `report` has a run for, in its order."""
    return [run.key for run in _runs(report) if run.key is not None]


def boards_markdown(report: Mapping[str, Any], heading: str = "##") -> str:
    """The section (Markdown, ending in a newline) for the check report `report` (the JSON of
    `check`, see the module docstring).

    One table: each board the report ran on, by link mode (Static: the sketch linked into
    the firmware; Dynamic: the upload file the board's loader links), one row per example:
    ✅ it fits and printed what its expected.yaml asks on the emulated CPU; ⛔ it does not
    fit the board (a "misfit" stage: over its flash or RAM, or the loader's heap); ❌ the
    loader refuses it for another reason, its run failed, or it does not fit the UNO Q
    (why, in short); ➖ neither shown (not run, no emulator, the loader model's firmware is
    the UNO Q's). Flash and RAM are against the
    board's budget; Dynamic RAM is the LLEXT heap the pinned core's loader takes at its peak.
    Every other board of `ZEPHYR_BOARDS` is a row "not checked". Without example entries in
    `report` the section says no board was checked and how to fill it in.
    """
    runs = _runs(report)
    lines = [f"{heading} Boards", ""]
    if not runs:
        names = ", ".join(f"{b.name} (`{b.key}`)" for b in ZEPHYR_BOARDS.values())
        cannot = [b for b in ZEPHYR_BOARDS.values() if b.key not in check_boards()]
        lines += [
            "Checked: none. This tree has not been checked on any board, so no board is "
            f"listed as supported: `{FILL}` (in the library's folder) fills this section "
            "in with the boards it checks, the examples that fit each and ran on its "
            "emulated CPU, and their flash and RAM.",
            "",
            f"Not checked: {names}.",
        ]
        if cannot:
            lines[-1] += " " + " ".join(f"{b.name}: {_unchecked(b)}." for b in cannot)
        return "\n".join(lines) + "\n"
    checked = {run.key for run in runs}
    named = ", ".join(
        f"{run.name} (`{run.key}`" + (f", {_cpu_name(run.cpu)} on QEMU {run.machine})"
                                      if run.machine else ", no emulator)")
        if run.key else run.name
        for run in runs
    )  # fmt: skip
    rows = [r for run in runs for r in _rows(run)]
    rows += [
        [f"{b.name} (`{b.key}`)", "", _unchecked(b), "", ""]
        for b in ZEPHYR_BOARDS.values()
        if b.key not in checked
    ]
    others = (
        f" On the other boards of the `arduino:zephyr` core nothing was checked (`{FILL}` "
        "checks every board)."
        if any(b.key not in checked for b in ZEPHYR_BOARDS.values())
        else " That is every board of the `arduino:zephyr` core's table."
    )
    lines += [
        f"Checked: {named}.{others}",
        "",
        *table(
            ["board", "link mode", "example", "flash", "RAM"],
            rows,
            align="lllrr",
        ),
        "",
        f"{_PASS}: the example fits the board and printed what its `expected.yaml` asks for "
        "on the board's CPU, emulated (QEMU runs the CPU and the firmware, not the board's "
        f"peripherals or clock). {_MISFIT}: it does not fit the board (its flash or RAM, or "
        f"the loader's heap, is too small for it). {_FAIL}: the loader refuses it for another "
        f"reason, its run failed, or it does not fit the board every example is promised on. "
        f"{_SKIP}: neither was shown. Static links the sketch into the firmware: "
        "flash and RAM (its globals) against the board's budgets. Dynamic (the IDE's "
        "default) is the upload file the board's loader links: flash is that file, RAM the "
        f'loader\'s LLEXT heap at its peak, on core `{PINNED_CORE}` (see "Link modes").',
    ]
    return "\n".join(lines) + "\n"


def unchecked_section() -> str:
    """The README's boards section before any check, between its markers."""
    return f"{BEGIN}\n{boards_markdown({})}{END}"


def check_readme(readme: Path, text: str | None = None) -> str:
    """`readme`'s text (`text`: already read), once it is known to have the section's markers.

    Raises:
        FatalError: `readme` is missing, unreadable, not UTF-8, or has no markers.
    """
    if text is None:
        try:
            text = readme.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise FatalError(f"--update-docs: cannot read {readme} ({e})") from None
    if replace_section(text, "", BEGIN, END) is None:
        raise FatalError(
            f"--update-docs: {readme} has no boards section (the lines {BEGIN!r} and "
            f"{END!r}, in that order); a README the generator renders has them: rebuild the "
            "library, or add the two lines where the section goes"
        )
    twice = [m for m in (BEGIN, END, LINK_BEGIN, LINK_END) if text.count(m) > 1]
    if twice:
        raise FatalError(
            f"--update-docs: {readme} has the line {twice[0]!r} {text.count(twice[0])} times; "
            "keep one of each section's markers (only the first pair would be written)"
        )
    ours = (text.find(BEGIN), text.find(END))
    theirs = (text.find(LINK_BEGIN), text.find(LINK_END))
    if theirs[0] >= 0 and theirs[1] >= 0 and ours[0] < theirs[1] and theirs[0] < ours[1]:
        raise FatalError(
            f"--update-docs: {readme}'s boards section and link-modes section overlap (one's "
            "markers lie inside the other's); move them apart, each pair around its own section"
        )
    return text


def with_section(text: str, report: Mapping[str, Any]) -> str:
    """`text` (a README with the markers, `check_readme`) with the section for `report`."""
    new = replace_section(text, boards_markdown(report), BEGIN, END)
    assert new is not None, "check_readme first"
    return new


def update_readme(readme: Path, report: Mapping[str, Any]) -> None:
    """Write the section for `report` into `readme` between its markers.

    Raises:
        FatalError: `readme` is missing, unreadable, has no markers, or cannot be written.
    """
    new = with_section(check_readme(readme), report)
    try:
        write_atomic(readme, new)
    except OSError as e:
        raise FatalError(f"--update-docs: cannot write {readme} ({e})") from None


def check_both_sections(readme: Path) -> str:
    """`readme`'s text, once it is known to have both sections' markers (link modes, boards).

    Raises:
        FatalError: `readme` is missing, unreadable, or lacks a section's markers.
    """
    return check_readme(readme, check_link_modes_readme(readme))


def update_both_sections(readme: Path, data: Mapping[str, Any], unoq: Mapping[str, Any]) -> None:
    """Write the README's two sections in one write (`check --update-docs`): the boards from
    `data` (every board's report, `generator.check.report.board_data`), the link modes from
    `unoq` (the UNO Q's entries of it, `board_part`).

    Raises:
        FatalError: `readme` is missing, unreadable, lacks a section's markers, or cannot be
            written (it is then left as it was).
    """
    text = check_both_sections(readme)
    text = replace_section(text, link_modes_markdown(unoq)) or text
    text = with_section(text, data)
    try:
        write_atomic(readme, text)
    except OSError as e:
        raise FatalError(f"--update-docs: cannot write {readme} ({e})") from None
