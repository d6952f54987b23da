"""Step 6, beside the vendored sources: `src/executorch_compact.h`, the compact runtime of the
boards with little flash, rendered from the board table (`generator.boards.budgets.compact_boards`).

On an arduino:zephyr board whose sketch flash is at most `COMPACT_FLASH_MAX_BYTES` the runtime
compiles without its log and without the code of the full program verification, which the
library never runs (`COMPACT_DEFINES`, switches ExecuTorch itself offers): that is what lets
AddModel fit the 56 KiB a sketch gets on the EK-RA8D1 and FRDM MCXN947 (124,356 B whole,
measured by `check --board frdm_mcxn947`; see `COMPACT_DEFINES`). A board is told by its
core's macros (`ARDUINO_ARCH_ZEPHYR` and `ARDUINO_<build.board>`, which platform.txt passes
to every compile, the library's too).
The patch `compact-runtime` (`generator/pipeline/patches.py`) makes ExecuTorch's
`runtime/platform/compiler.h`, which every runtime source and `ExecuTorch.h` include,
include the header.

Written with the old cores' check (`board_check.py`), before the include closure is followed;
the same table gives the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from generator.boards.budgets import COMPACT_FLASH_MAX_BYTES, compact_boards
from generator.library.layout import COMPACT_HEADER
from generator.util.templates import render

TEMPLATE = "executorch_compact.h.jinja"


@dataclass(frozen=True)
class CompactDefine:
    """One switch of the compact runtime.

    Attributes:
        name, value: the macro ExecuTorch reads and the value it gets; what: what it leaves
            out, for the header's comment.
    """

    name: str
    value: str
    what: str


#: The switches, each ExecuTorch's own (pytorch/executorch at cff6f4dd):
#: - `runtime/platform/log.h` compiles every ET_LOG to nothing when ET_LOG_ENABLED is 0: the
#:   runtime's messages, their format strings and the code that formats them. Measured on
#:   AddModel for the FRDM MCXN947 (gcc-arm size link, every dtype): 124,356 B with the log,
#:   52,092 B without it. What a user loses: the `ET|` lines a sketch prints when a call fails;
#:   the error code still comes back (`ETModel::error()`).
#: - `runtime/executor/program.cpp` leaves out the FlatBuffers verifier of
#:   `Program::load`'s `InternalConsistency` level when ET_ENABLE_PROGRAM_VERIFICATION is 0
#:   (its comment: "can increase code size by ~30k"). The library and its examples load with
#:   the default level, `Minimal`, which checks the root table's offset only, on every board:
#:   the switch removes code no sketch of the library runs, and changes no behaviour.
COMPACT_DEFINES = (
    CompactDefine("ET_LOG_ENABLED", "0", "the runtime's log (its ET_LOG messages)"),
    CompactDefine(
        "ET_ENABLE_PROGRAM_VERIFICATION",
        "0",
        "the FlatBuffers verifier of Program::load's InternalConsistency level, which the "
        "library never asks for (it loads with Minimal)",
    ),
)


def compact_header() -> str:
    """The text of `src/executorch_compact.h` (the same table gives the same bytes)."""
    return render(
        TEMPLATE,
        max_bytes=COMPACT_FLASH_MAX_BYTES,
        boards=compact_boards(),
        defines=COMPACT_DEFINES,
    )


def write_compact_header(library: Path) -> Path:
    """Write `COMPACT_HEADER` into `library` (its src/ exists); returns its path."""
    dest = library / COMPACT_HEADER
    dest.write_text(compact_header(), encoding="utf-8")
    return dest
