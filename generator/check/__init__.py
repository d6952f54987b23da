"""`check`'s steps: prove every example of a generated library works, stage by stage.

1. model check (`model_check.py`), no toolchain needed;
2. compile for the UNO Q (`compile.py` with the sources of `plan.py`, back ends in
   `toolchains.py`, objects cached by content in `objcache.py`);
3. sizes like arduino-cli's report (`sizes.py`), and the Dynamic link (the IDE's default
   link mode) with its sizes (`dynamic.py`), both linked as arduino-cli links (`link.py`);
4. run on an emulated Cortex-M33 (QEMU mps2-an505) and once on the host under
   AddressSanitizer + UBSan, compared with the example's expected.yaml (`run.py`);
5. the method arena measured in the emulated run (`arena.py`).

The verb that runs them is `generator.commands.check` (`run_check`), which returns a
`CheckReport` (`report.py`) with the Markdown and JSON forms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from generator.check.plan import library_examples
from generator.check.report import CheckReport, ExampleReport

if TYPE_CHECKING:
    from generator.commands.check import run_check

__all__ = ["CheckReport", "ExampleReport", "library_examples", "run_check"]


def __getattr__(name: str) -> Any:
    """`generator.check.run_check`, where callers imported it from before the verb's
    orchestration moved to `generator.commands.check`; resolved on first use, since that
    module imports this package's steps."""
    if name == "run_check":
        from generator.commands.check import run_check

        return run_check
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
