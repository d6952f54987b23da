"""Which boards an example's model does not fit, and the sketch lines that refuse them (issue 19).

The rule: a sketch that mallocs its model's arena (`<array>_arena_bytes` of its model.h, the
32-bit board's figure: `et_arena.py`, as `et_model_h.model_h` writes it) does not fit a board
whose RAM for a sketch (`ZephyrBoard.ram_bytes`, arduino-cli's `upload.maximum_data_size`) is
smaller than that arena. The arena is malloc'd when the sketch starts, so arduino-cli's size
check, which compares only a sketch's static data with that budget, never sees it: such a
sketch compiles and uploads, then `begin()` fails on the board. A flash overflow needs nothing
of this: it fails at link time in arduino-cli, with arduino-cli's own message ("Sketch too
big"). `ram_bytes` is the figure the check also gives a sketch's heap on the emulated board
(`generator/check/backends.py` `_budget_flags`); how large each firmware's own C heap is was
not read (no variant configuration read states it), so "arena > RAM" is the project's rule
for "cannot fit", not a measurement of each board.

Which sketches: those whose `.ino` holds the lines `BEGIN` and `END` (our KeywordSpotting and
AddModel, which `malloc(model_pte_arena_bytes)`; HelloExecuTorch runs no method and has none).
The build writes between them (`render_fit`, from the model.h it ships): a header comment
saying which boards the model does not fit and why, with the figures, and a preprocessor
block with one `#error` per such board, each under the macro that board's core defines
(`ZephyrBoard.macro`, `-DARDUINO_<build.board>`), so the compile stops on that board with a
message naming it. The check (`generator/check/run.py`) compiles with the board's macro
and expects that message on each board `refusal` names (`expected_refusal`).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable
from pathlib import Path

from generator.boards.budgets import ZEPHYR_BOARDS, ZephyrBoard
from generator.library.layout import MODEL_ARRAY, MODEL_HEADER

#: The lines a sketch's board-fit block lies between (the build rewrites what is between).
BEGIN = "// board-fit: begin (written by the build from model.h's arena; do not edit)"
END = "// board-fit: end"
#: Width of the block's comment lines (the sketches' own).
WIDTH = 80


def arena_bytes(model_h: str, name: str = MODEL_ARRAY) -> int | None:
    """The board's (32-bit) `<name>_arena_bytes` a model.h's text declares, bytes; None when
    it declares none (a program whose arena is not derivable, or a header of another tool).

    `et_model_h.model_h` writes either one `inline constexpr size_t <name>_arena_bytes = N;`
    or two, the 64-bit host's under `#if ... __SIZEOF_POINTER__ == 8` and the board's under
    `#else`: the board's is the last.

    Raises:
        ValueError: more than two such lines, or two without the 64-bit `#if` before them.
    """
    pattern = rf"^inline constexpr size_t {re.escape(name)}_arena_bytes = (\d+);$"
    found = list(re.finditer(pattern, model_h, flags=re.MULTILINE))
    if not found:
        return None
    if len(found) > 2 or (
        len(found) == 2 and "__SIZEOF_POINTER__ == 8" not in model_h[: found[0].start()]
    ):
        raise ValueError(
            f"model.h declares {name}_arena_bytes {len(found)} times, not as et_model_h writes "
            "it (once, or the 64-bit host's and the board's); regenerate it with pte_to_header"
        )
    return int(found[-1].group(1))


def misfits(arena: int, boards: Iterable[ZephyrBoard] | None = None) -> list[ZephyrBoard]:
    """The boards of `boards` (default: every `ZEPHYR_BOARDS` row, in its order) whose RAM for
    a sketch is smaller than `arena` bytes; a row whose RAM is unknown is left out."""
    rows = ZEPHYR_BOARDS.values() if boards is None else boards
    return [b for b in rows if b.ram_bytes is not None and b.ram_bytes < arena]


def refusal(example: str, board_name: str, arena: int, ram: int) -> str:
    """The `#error` message of `example` on the board `board_name` (one line, no quotes):
    its model's `arena` bytes against the board's `ram` bytes for a sketch."""
    return (
        f"{example} does not fit the {board_name}: its model plans a {arena:,} B arena and the "
        f"board has {ram:,} B of RAM for a sketch; pick a board with more RAM (see README, "
        "Boards)"
    )


def _comment(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH - 3, initial_indent="// ", subsequent_indent="// ")


def fit_lines(example: str, arena: int | None) -> list[str]:
    """The lines between `BEGIN` and `END` for `example` whose model.h declares `arena`
    bytes (None: none): the comment, then (when some board is too small) the `#if`/`#elif`
    block with one `#error "<refusal>"` per board, in `ZEPHYR_BOARDS` order."""
    array = f"{MODEL_ARRAY}_arena_bytes"
    if arena is None:
        return _comment(
            f"Board fit: unknown: {MODEL_HEADER} declares no {array}, so no board is refused "
            "at compile time."
        )
    known = [b for b in ZEPHYR_BOARDS.values() if b.ram_bytes is not None]
    planned = (
        f"its model plans a {arena:,} B arena ({array} in {MODEL_HEADER}, on a 32-bit "
        "board), which the sketch mallocs when it starts"
    )
    small = misfits(arena)
    if not small:
        least = min(known, key=lambda b: b.ram_bytes or 0)
        return _comment(
            f"Fits every board of the arduino:zephyr core: {planned}, within the least RAM a "
            f"board has for a sketch ({least.ram_bytes:,} B, the {least.name})."
        )
    named = [f"the {b.name} ({b.ram_bytes:,} B of RAM for a sketch)" for b in small]
    boards = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
    lines = _comment(
        f"Does not fit: {boards}. {planned[0].upper()}{planned[1:]}: more than those boards "
        "have. arduino-cli's size check counts only static data, so on them the #error "
        "below stops the compile instead of begin() failing at run time."
    )
    for i, board in enumerate(small):
        message = refusal(example, board.name, arena, board.ram_bytes or 0)
        lines += [f"#{'if' if i == 0 else 'elif'} defined({board.macro})", f'#error "{message}"']
    return [*lines, "#endif"]


def has_block(sketch: str) -> bool:
    """True when the sketch text holds `BEGIN` and, after it, `END` (each on a line)."""
    start = sketch.find(BEGIN + "\n")
    return start >= 0 and sketch.find("\n" + END + "\n", start) >= 0


def render_fit(sketch: str, example: str, arena: int | None) -> str:
    """`sketch` with the lines between its `BEGIN` and `END` replaced by `fit_lines`; a
    sketch without both is returned as it is."""
    if not has_block(sketch):
        return sketch
    start = sketch.find(BEGIN + "\n") + len(BEGIN) + 1
    end = sketch.find("\n" + END + "\n", start - 1) + 1
    return (
        sketch[:start] + "".join(f"{line}\n" for line in fit_lines(example, arena)) + sketch[end:]
    )


def expected_refusal(sketch_dir: Path, example: str, board_name: str, ram: int) -> str | None:
    """The `#error` message the sketch of `example` in `sketch_dir` must stop with on the
    board `board_name` (`ram` bytes for a sketch): its `.ino` has the board-fit block, its
    model.h declares an arena larger than `ram`. None: the sketch is not expected to refuse
    the board (no block, no model.h or no arena figure, or the arena fits).

    Raises:
        ValueError: the model.h declares its arena in a way `arena_bytes` refuses.
    """
    ino = sketch_dir / f"{example}.ino"
    header = sketch_dir / MODEL_HEADER
    try:
        if not has_block(ino.read_text(encoding="utf-8")) or not header.is_file():
            return None
        arena = arena_bytes(header.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None  # the compile stage reports an unreadable sketch or header
    if arena is None or arena <= ram:
        return None
    return refusal(example, board_name, arena, ram)
