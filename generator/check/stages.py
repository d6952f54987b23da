"""The result of one per-example stage of `check`, shared by the modules that judge them.

The stages, in the report's column order (`report.STAGES`), with the step of `check` each
belongs to (the package docstring) and the module that judges it:

- "compile" (step 2, `compile.py`): the example built for the UNO Q with the chosen toolchain;
  an example that does not fit the board (`generator.pipeline.fit`) passes it by stopping with its
  own
  `#error`, and its later stages are skipped;
- "sizes" (step 3, `sizes.py`): the static link's flash and RAM against the board's budgets;
- "dynamic" (step 3, `dynamic.py`): the Dynamic link (`link_mode=dynamic`), its sizes, and
  the loader model's verdict for every core of `cores.py`;
- "run" (step 4, `run.py`): the static gcc-arm firmware on the emulated Cortex-M33;
- "dynamic-run" (step 4, `dynamic_run.py`): the Dynamic upload file, placed by the loader
  model, on the emulated board;
- "sanitize" (step 4, `run.py`): the sketch built for the host, run under AddressSanitizer and
  UBSan;
- "arena" (step 5, `arena.py`): the method arena measured in the "run" stage.

A stage is "misfit" (`Status.MISFIT`, "does not fit") when the example is too big for the
board, a fact about the board and no fault of the library: the static link's flash or RAM
over the board's budget ("sizes"), the Dynamic upload file over its flash or the pinned
loader refusing it for want of heap, errno 12 (ENOMEM) ("dynamic"). It fails nothing, but is
never shown as a pass; the run of that link is then skipped. On the UNO Q, the board every
example is promised on, the same findings are failures (`misfit_status`).

The model check (step 1) is no stage of an example: it judges the models of every example
that carries a `model.h` together, once a library (`model_check.py`, `report.ModelCheck`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from generator.boards.budgets import UNO_Q, Board

#: The compile stage's verdict on a sketch that refused the board with its own board-fit
#: `#error` (`generator.check.compile.judge_refusal`): a pass, and the example does not fit.
REFUSED = "does not fit: refused at compile time by its own #error (as intended)"


class Status(StrEnum):
    """Outcome of one stage."""

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    #: The example does not fit the board (see the module docstring): not a failure.
    MISFIT = "misfit"


@dataclass
class StageResult:
    """One stage of one example.

    Attributes:
        stage: "compile", "sizes", "dynamic", "run", "dynamic-run", "sanitize" or "arena"
        (see the module docstring).
        status: the outcome; summary: one line for the report table.
        details: supporting text (compiler errors, the last lines printed), may be empty.
    """

    stage: str
    status: Status
    summary: str
    details: str = ""

    @property
    def passed(self) -> bool:
        """True unless the stage failed (a skipped stage, or one that found the example does
        not fit the board, does not fail a check)."""
        return self.status is not Status.FAIL

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "stage": self.stage,
            "status": self.status.value,
            "summary": self.summary,
            "details": self.details,
        }


def misfit_status(board: Board) -> Status:
    """The status of a stage that found the example too big for `board`: `Status.MISFIT`,
    or `Status.FAIL` on the UNO Q (`generator.boards.budgets.UNO_Q`), where every example must
    fit."""
    return Status.FAIL if board == UNO_Q else Status.MISFIT


def not_run_misfit(stage: str, board: Board, judged_by: str) -> StageResult:
    """The skipped run stage `stage` ("run", "dynamic-run") of a link that does not fit
    `board`, as the stage `judged_by` ("sizes", "dynamic") found."""
    return StageResult(stage, Status.SKIP, f"not run: does not fit {board.name} (see {judged_by})")
