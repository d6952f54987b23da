"""Step 6, beside the vendored sources: `src/executorch_board_check.h`, the compiler check
ExecuTorch.h includes, rendered from the old cores' table (`generator.boards.old_cores`).

On a GCC older than `MIN_GCC` (the mbed, Renesas and SAMD cores ship GCC 7) the runtime's
templates fail with long, unrelated errors; the header stops first with one `#error`: for a
board that has an arduino:zephyr board, its line names the core, its GCC and the board to
select instead (ZEPHYR_BOARDS' name and `arduino:zephyr:<key>`); every other compile gets the
plain message. A board is told by its core's two macros, `ARDUINO_ARCH_<ARCHITECTURE>` and
`ARDUINO_<build.board>` (see `generator.boards.old_cores`). Boards sharing both macros (the Nicla
Sense ME and Nicla Voice both build as `NICLA`) share one line, which says which of them the
advice is for.

Written before the include closure is followed (the header is one of its starts), from
`data/templates/src/executorch_board_check.h.jinja`; the same table gives the same bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from generator.boards.budgets import ZEPHYR_BOARDS
from generator.boards.old_cores import MIN_GCC, OLD_CORES, OldBoard, OldCore
from generator.util.templates import render

#: Where the header is written, relative to the library (ExecuTorch.h includes it by name).
BOARD_CHECK = "src/executorch_board_check.h"
TEMPLATE = "executorch_board_check.h.jinja"
#: The message of a compile on an old GCC whose board has no arduino:zephyr board.
GENERIC_MESSAGE = (
    f"ExecuTorch needs GCC {MIN_GCC} or newer; this board core's arm-none-eabi-gcc is older. "
    "Use a board whose core ships a newer toolchain."
)
_MACRO = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class BoardGuard:
    """One `#elif` of the header.

    Attributes:
        arch_macro: the core's `ARDUINO_ARCH_*` macro; board_macro: the board's `ARDUINO_*`.
        fqbns: the old FQBNs (menu option included) compiled with both macros, for the comment.
        message: the `#error` text (no `"` nor `\\`: it is written inside a string literal).
    """

    arch_macro: str
    board_macro: str
    fqbns: tuple[str, ...]
    message: str


def _fqbn(core: OldCore, board: OldBoard) -> str:
    """The old board's FQBN, with the menu option its `build.board` needs."""
    fqbn = f"{core.platform}:{board.board_id}"
    return f"{fqbn}:{board.menu}" if board.menu else fqbn


def _advice(board_id: str, key: str) -> str:
    """The advice for the zephyr row `key`, e.g. `select 'Arduino Nano 33 BLE'
    (arduino:zephyr:nano33ble)`.

    Raises:
        ValueError: `key` is not a `ZEPHYR_BOARDS` key (a table error).
    """
    row = ZEPHYR_BOARDS.get(key)
    if row is None:
        raise ValueError(
            f"generator/boards/old_cores.py: {board_id} names arduino:zephyr board {key!r}, which "
            "generator/boards/budgets.py ZEPHYR_BOARDS has not"
        )
    # ZephyrBoard.fqbn() adds the link mode; without it arduino-cli takes the default.
    return f"select '{row.name}' (arduino:zephyr:{row.key})"


def _message(core: OldCore, boards: list[OldBoard]) -> str:
    """The `#error` text for `boards`, which compile with the same two macros of `core` (at
    least one with an arduino:zephyr board)."""
    head = (
        f"ExecuTorch needs GCC {MIN_GCC} or newer; this board's {core.platform} core ships "
        f"GCC {core.gcc_major}; "
    )
    install = "install the arduino:zephyr core and "
    names = list(dict.fromkeys(b.name for b in boards))
    mapped = {b.name: _advice(b.board_id, b.zephyr) for b in boards if b.zephyr is not None}
    if len(names) == 1:
        return f"{head}{install}{mapped[names[0]]} instead."
    advice = "; ".join(f"on the {name}, {install}{text} instead" for name, text in mapped.items())
    others = [n for n in names if n not in mapped]
    text = f"{head}{advice}."
    if others:
        verb = "has" if len(others) == 1 else "have"
        text += (
            f" The {' and the '.join(others)}, built with the same board macro, {verb} no "
            "arduino:zephyr variant."
        )
    return text


def board_guards() -> list[BoardGuard]:
    """One guard per (core, build.board) of `OLD_CORES` that some board with an arduino:zephyr
    board compiles as, in table order.

    Raises:
        ValueError: a row names a zephyr key `ZEPHYR_BOARDS` lacks, a macro that is not a C
            identifier, or a message a C string literal cannot hold as it is.
    """
    guards: list[BoardGuard] = []
    for core in OLD_CORES:
        groups: dict[str, list[OldBoard]] = {}
        for board in core.boards:
            groups.setdefault(board.board_macro, []).append(board)
        for macro, boards in groups.items():
            if all(b.zephyr is None for b in boards):
                continue
            guard = BoardGuard(
                core.arch_macro,
                macro,
                tuple(_fqbn(core, b) for b in boards),
                _message(core, boards),
            )
            _check(guard)
            guards.append(guard)
    return guards


def _check(guard: BoardGuard) -> None:
    """Refuse a guard the header could not hold as it is.

    Raises:
        ValueError: naming the bad macro or message.
    """
    for macro in (guard.arch_macro, guard.board_macro):
        if not _MACRO.fullmatch(macro):
            raise ValueError(f"generator/boards/old_cores.py: {macro!r} is not a C macro name")
    if '"' in guard.message or "\\" in guard.message:
        raise ValueError(f'generator/boards/old_cores.py: a message holds " or \\: {guard.message}')


def board_check_header() -> str:
    """The text of `src/executorch_board_check.h` (the same table gives the same bytes).

    Raises:
        ValueError: see `board_guards`.
    """
    return render(TEMPLATE, min_gcc=MIN_GCC, guards=board_guards(), generic_message=GENERIC_MESSAGE)


def write_board_check(library: Path) -> Path:
    """Write `BOARD_CHECK` into `library` (its src/ exists); returns its path.

    Raises:
        ValueError: see `board_guards`.
    """
    dest = library / BOARD_CHECK
    dest.write_text(board_check_header(), encoding="utf-8")
    return dest
