"""Stage results shared by every step of `check`."""

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
        stage: "compile", "sizes", "dynamic", "run", "dynamic-run", "sanitize" or "arena".
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
