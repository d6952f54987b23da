"""The result of one per-example stage of `check`, shared by the modules that judge them.

The stages, in the report's column order (`report.STAGES`), with the step of `check` each
belongs to (the package docstring) and the module that judges it:

- "compile" (step 2, `compile.py`): the example built for the UNO Q with the chosen toolchain;
  an example that does not fit the board (`generator.fit`) passes it by stopping with its own
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

The model check (step 1) is no stage of an example: it judges the models of every example
that carries a `model.h` together, once a library (`model_check.py`, `report.ModelCheck`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    """Outcome of one stage."""

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"


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
        """True unless the stage failed (a skipped stage does not fail a check)."""
        return self.status is not Status.FAIL

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "stage": self.stage,
            "status": self.status.value,
            "summary": self.summary,
            "details": self.details,
        }
