"""The check report: Markdown for a PR body or `$GITHUB_STEP_SUMMARY`, JSON with the same facts.

JSON shape (`CheckReport.to_dict()`)::

    {"library": str, "toolchain": str, "board": str, "passed": bool, "seconds": float,
     "cache": {"hits": int, "misses": int, "failures": int},
     "model_check": {...} | null,               # generator.pipeline.models.ModelCheckReport
     "examples": [{"example": str, "passed": bool, "seconds": float,
                   "stages": [{"stage", "status", "summary", "details"}],
                   "sizes": {"flash": B, "ram": B, "dynamic_flash": B, "dynamic_ram": B,
                             "arena_used": B, "arena_size": B},   # those measured
                   "dynamic": {"flash_bytes", "ram_bytes", "flash_max_bytes",
                               "verdicts": [{"core", "pinned", "loaded", "heap_bytes",
                                             "peak_bytes", "errno", "log",
                                             "short_branches"}]} | null,  # per core
                   "budget": {"flash_max": B, "ram_max": B, "flash_percent": %, "ram_percent": %},
                   "footprint": {"flash": {"flash_bytes": B, "map": str,
                                           "components": [{"name", "kind", "bytes"}]} | null,
                                 "flash_note": str,
                                 "ram": {"globals_bytes", "arena_bytes", "total_bytes",
                                         "max_bytes", "arena_note"} | null} | null,
                   "timing": {"run", "instructions_per_inference", "inference_us",
                              "inferences", "inference_us_min", "inference_us_max",
                              "resolution_instructions",
                              "dynamic_instructions_per_inference"} | null,
                   "runs": [{"kind", "done", "exit_code", "timed_out", "overflowed",
                             "seconds", "last_lines"}]}]}     # last_lines: at most 200

`stages[].status` is "pass", "fail", "skip" or "misfit" (the example does not fit the board,
no failure: `stages.Status.MISFIT`).
`runs[].kind` is "emulated" (the static firmware), "dynamic" (the Dynamic upload file on
the emulated Dynamic firmware, `dynamic_run.py`) or "host".

`sizes` holds bytes only, one metric per key, so a sync can diff it against the base's.
`timing` is the cost of one inference on the board's emulated CPU (`timing.py`; the CPU of its
`generator.boards.budgets.EMULATORS` machine: the UNO Q's Cortex-M33, the Giga's Cortex-M7): the
sketch's
last `Inference: N us` line in the emulated run ("run": "emulated"; the Dynamic run's when the
emulated one printed none), N * 1,000 instructions (QEMU `-icount shift=0`, to within 1,000),
and the Dynamic upload file's count from its own run (null: not run or not printed). `timing`
is null when no run printed such a line: there is no figure, not a zero one.
`footprint` (`footprint.py`) is where the static firmware's flash goes, by component (the
components' bytes sum to `flash_bytes`, the sizes' `flash`; `flash` null when unknown,
`flash_note` says why), and its RAM: the globals plus the arena its model.h declares, which the
sketch mallocs (`arena_bytes` and `total_bytes` null when unknown, `arena_note` says why).
`dynamic_flash` is the Dynamic link's upload file (what arduino-cli reports as "Sketch uses"
with `link_mode=dynamic`), `dynamic_ram` the LLEXT heap the pinned core's loader takes at its
peak (`dynamic.py`, `llext.py`); `verdicts` say what each core's loader does with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from generator.boards.budgets import EMULATORS, UNO_Q, Board, cpu_name
from generator.boards.linkmode_docs import link_modes_markdown
from generator.check.arena import ArenaFigures
from generator.check.footprint import Footprint, footprint_markdown
from generator.check.run_sketch import EMULATED_KINDS, RunOutput
from generator.check.sizes import CoreVerdict, DynamicSizes, Sizes
from generator.check.stages import REFUSED, StageResult, Status
from generator.check.timing import RESOLUTION_INSTRUCTIONS, InferenceTiming, parse_inferences
from generator.toolchain.objcache import CacheStats
from generator.util.markdown import code_fence, table

#: `code_fence` is also imported from here (it was defined here).
__all__ = ["STAGES", "CheckReport", "ExampleReport", "ModelCheck", "code_fence"]

#: Order of the per-example stage columns.
STAGES = ("compile", "sizes", "dynamic", "run", "dynamic-run", "sanitize", "arena")
_MARK = {Status.PASS: "✅", Status.FAIL: "❌", Status.SKIP: "➖", Status.MISFIT: "⛔"}


class ModelCheck(Protocol):
    """Stage 1's report (`generator.pipeline.models.ModelCheckReport`)."""

    @property
    def passed(self) -> bool: ...

    def to_markdown(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...


@dataclass
class ExampleReport:
    """Stages 2-5 of one example.

    Attributes:
        name: the example; stages: results in `STAGES` order (those that ran);
        sizes: firmware sizes; dynamic: Dynamic-link sizes; arena: arena figures;
        runs: the emulated, Dynamic (`dynamic_run.py`) and host runs; seconds: wall time
        of this example; footprint: where the static firmware's flash goes and its RAM with
        the arena (`footprint.py`; None: no firmware measured).
    """

    name: str
    stages: list[StageResult] = field(default_factory=list)
    sizes: Sizes | None = None
    dynamic: DynamicSizes | None = None
    arena: ArenaFigures | None = None
    runs: list[RunOutput] = field(default_factory=list)
    seconds: float = 0.0
    footprint: Footprint | None = None

    @property
    def passed(self) -> bool:
        """True when no stage failed."""
        return all(s.passed for s in self.stages)

    @property
    def misfit(self) -> bool:
        """True when a stage found the example does not fit the board (`Status.MISFIT`), or
        its compile stopped at its own board-fit `#error` (`stages.REFUSED`)."""
        return any(
            s.status is Status.MISFIT or (s.stage == "compile" and s.summary == REFUSED)
            for s in self.stages
        )

    def stage(self, name: str) -> StageResult | None:
        """The result of stage `name`, or None when it did not run."""
        return next((s for s in self.stages if s.stage == name), None)

    def timings(self) -> dict[str, InferenceTiming]:
        """The `Inference: N us` figures of each emulated run that printed one, by run kind
        ("emulated", "dynamic"; `timing.parse_inferences`)."""
        found = (parse_inferences(r.lines, r.kind) for r in self.runs if r.kind in EMULATED_KINDS)
        return {t.kind: t for t in found if t is not None}

    @property
    def timing(self) -> InferenceTiming | None:
        """The example's cost of one inference: the emulated run's figure, else the Dynamic
        run's; None when neither printed an `Inference: N us` line."""
        timings = self.timings()
        return timings.get("emulated") or timings.get("dynamic")

    def timing_dict(self) -> dict[str, Any] | None:
        """JSON-ready `timing` (see the module docstring), or None."""
        timing = self.timing
        if timing is None:
            return None
        dynamic = self.timings().get("dynamic")
        return {
            "run": timing.kind,
            **timing.to_dict(),
            "dynamic_instructions_per_inference": dynamic.instructions if dynamic else None,
        }

    def size_metrics(self) -> dict[str, int]:
        """Bytes per metric: flash, ram, dynamic_flash, dynamic_ram, arena_used, arena_size."""
        out: dict[str, int] = {}
        if self.sizes:
            out["flash"] = self.sizes.flash
            out["ram"] = self.sizes.ram
        if self.dynamic:
            out["dynamic_flash"] = self.dynamic.flash
            out["dynamic_ram"] = self.dynamic.ram
        if self.arena:
            out["arena_used"] = self.arena.used
            out["arena_size"] = self.arena.size
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (see the module docstring)."""
        return {
            "example": self.name,
            "passed": self.passed,
            "seconds": round(self.seconds, 2),
            "stages": [s.to_dict() for s in self.stages],
            "sizes": self.size_metrics(),
            "budget": (
                {
                    "flash_max": self.sizes.flash_max,
                    "ram_max": self.sizes.ram_max,
                    "flash_percent": self.sizes.flash_percent,
                    "ram_percent": self.sizes.ram_percent,
                }
                if self.sizes
                else None
            ),
            "sections": (
                {"text": self.sizes.text, "data": self.sizes.data, "bss": self.sizes.bss}
                if self.sizes
                else None
            ),
            "dynamic": self.dynamic.to_dict() if self.dynamic else None,
            "footprint": self.footprint.to_dict() if self.footprint else None,
            "timing": self.timing_dict(),
            "runs": [r.to_dict() for r in self.runs],
        }


@dataclass
class CheckReport:
    """Everything `check` found for one library.

    Attributes:
        library: the library folder; toolchain: the compile back end used;
        board: the board's name; model_check: stage 1 (None when no example has a
        model; when it could not run, the reason is in `errors`);
        examples: stages 2-5 per example; cache: object cache counts; seconds: wall time;
        errors: problems that stopped a stage for the whole library; emulator: the
        `EMULATORS` key the board's examples ran on (default: the UNO Q's, the default
        board's; None: the board has none), which the report's texts name the CPU of.
    """

    library: Path
    toolchain: str
    board: str
    model_check: ModelCheck | None = None
    examples: list[ExampleReport] = field(default_factory=list)
    cache: CacheStats = field(default_factory=CacheStats)
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)
    emulator: str | None = UNO_Q.emulator

    @property
    def emulated_cpu(self) -> str:
        """The emulated CPU as the report names it (`the emulated Cortex-M7`); "the emulator"
        when the board has none or its machine is not in `EMULATORS`."""
        found = EMULATORS.get(self.emulator) if self.emulator else None
        return f"the emulated {cpu_name(found.cpu)}" if found else "the emulator"

    @property
    def passed(self) -> bool:
        """True when the model check and every stage of every example passed."""
        model_ok = self.model_check is None or self.model_check.passed
        return model_ok and not self.errors and all(e.passed for e in self.examples)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (see the module docstring)."""
        return {
            "library": str(self.library),
            "toolchain": self.toolchain,
            "board": self.board,
            "passed": self.passed,
            "seconds": round(self.seconds, 1),
            "cache": {
                "hits": self.cache.hits,
                "misses": self.cache.misses,
                "failures": self.cache.failures,
            },
            "errors": list(self.errors),
            "model_check": self.model_check.to_dict() if self.model_check else None,
            "examples": [e.to_dict() for e in self.examples],
        }

    def to_markdown(self) -> str:
        """The report as Markdown: verdict, model check, stage table, sizes, failures."""
        verdict = "✅ passed" if self.passed else "❌ failed"
        misfits = [e.name for e in self.examples if e.misfit]
        if misfits:
            verb = "does" if len(misfits) == 1 else "do"
            verdict += f" ({_MARK[Status.MISFIT]} {', '.join(misfits)} {verb} not fit the board)"
        lines = [
            f"## Library check: {verdict}",
            "",
            f"`{self.library.name}` on {self.board}, compiled with `{self.toolchain}`; "
            f"{self.seconds:.0f} s, object cache: {self.cache.hits} reused, "
            f"{self.cache.misses} compiled.",
            "",
        ]
        lines += [f"- ❌ {e}" for e in self.errors]
        if self.errors:
            lines.append("")
        if self.model_check is not None:
            lines.append(self.model_check.to_markdown().rstrip())
            lines.append("")
        if self.examples:
            lines += ["### Examples", ""]
            lines += table(["example", *STAGES], (_stage_cells(e) for e in self.examples))
            if misfits:
                lines += [
                    "",
                    f"{_MARK[Status.MISFIT]}: does not fit {self.board} (the static link's "
                    "flash or RAM, or the Dynamic upload file or the loader's heap, is over "
                    "the board's): no failure, and that link is not run.",
                ]
            lines += ["", "### Sizes", ""]
            lines += table(
                [
                    "example",
                    "flash",
                    "RAM (globals)",
                    "Dynamic: flash",
                    "Dynamic: RAM",
                    "arena used / size",
                ],
                (_size_cells(e) for e in self.examples),
                align="lrrrrr",
            )
            if self.examples and self.examples[0].sizes:
                s0 = self.examples[0].sizes
                lines += [
                    "",
                    f"Budgets: flash {s0.flash_max:,} B, RAM {s0.ram_max:,} B. Dynamic: the "
                    "sketch linked as a loadable extension (`link_mode=dynamic`, the IDE's "
                    "default): flash is its upload file (what the board's flash holds), RAM "
                    "what the board's loader takes from its LLEXT heap at the peak of loading "
                    "it, on the pinned core (the loader the check judges).",
                ]
            lines += _timing_markdown(self.examples, self.emulated_cpu)
            lines += ["", *link_modes_markdown(self.to_dict(), "###").splitlines()]
            for e in self.examples:
                lines += ["", f"#### {e.name} ({e.seconds:.0f} s)", ""]
                lines += footprint_markdown(e.footprint)
                for s in e.stages:
                    lines.append(f"- {s.stage}: {_MARK[s.status]} {s.summary}")
                    if s.status is Status.FAIL and s.details:
                        fence = code_fence(s.details)
                        lines += ["", f"  {fence}", *("  " + d for d in s.details.splitlines())]
                        lines.append(f"  {fence}")
        return "\n".join(lines).rstrip() + "\n"


def _stage_cells(e: ExampleReport) -> list[str]:
    """The example's name, then a mark per stage of `STAGES` (➖: it did not run)."""
    marks = [_MARK[s.status] if s else _MARK[Status.SKIP] for s in map(e.stage, STAGES)]
    return [e.name, *marks]


def _size_cells(e: ExampleReport) -> list[str]:
    """The example's name, flash, RAM, Dynamic flash and RAM, arena ("-": not measured)."""
    dyn = e.dynamic
    return [
        e.name,
        f"{e.sizes.flash:,} B ({e.sizes.flash_percent}%)" if e.sizes else "-",
        f"{e.sizes.ram:,} B ({e.sizes.ram_percent}%)" if e.sizes else "-",
        f"{dyn.flash:,} B ({dyn.flash * 100 // dyn.flash_max}%)" if dyn and dyn.flash_max else "-",
        _heap_cell(dyn.pinned) if dyn and dyn.pinned else (f"{dyn.ram:,} B" if dyn else "-"),
        f"{e.arena.used:,} / {e.arena.size:,} B" if e.arena else "-",
    ]


def _timing_markdown(examples: list[ExampleReport], cpu: str) -> list[str]:
    """The "Inference" section: instructions per inference on `cpu` (`the emulated
    Cortex-M33`) of each example that printed an `Inference: N us` line (none printed: no
    section)."""
    timed = [(e.name, e.timings()) for e in examples]
    rows = [
        [
            name,
            f"{t.instructions:,}",
            _micros_cell(t),
            f"{d.instructions:,}" if (d := timings.get("dynamic")) else "-",
        ]
        for name, timings in timed
        if (t := timings.get("emulated") or timings.get("dynamic"))
    ]
    if not rows:
        return []
    return [
        "",
        f"### Inference (instructions on {cpu})",
        "",
        *table(
            ["example", "instructions per inference", "`Inference:` printed", "Dynamic"],
            rows,
            align="lrrr",
        ),
        "",
        "From each sketch's last `Inference: N us` line: QEMU counts instructions "
        "(`-icount shift=0`, 1 ns of virtual time each), so N µs is N × 1,000 instructions, "
        f"to within {RESOLUTION_INSTRUCTIONS:,}, the same on every run. Instructions, not "
        "the board's time: that also depends on its clock, flash wait states and cycles per "
        "instruction.",
    ]


def _micros_cell(t: InferenceTiming) -> str:
    """`10,412 µs`, or with several lines `10,412 µs (last of 3; 10,398-10,412)`."""
    cell = f"{t.inference_us:,} µs"
    if len(t.micros) > 1:
        low, high = min(t.micros), max(t.micros)
        spread = f"; {low:,}-{high:,}" if low != high else ", all equal"
        cell += f" (last of {len(t.micros)}{spread})"
    return cell


def _heap_cell(v: CoreVerdict) -> str:
    """`70,032 / 262,144 B (main@177dcef6)`, or the refusal."""
    if v.peak_bytes is None:
        return f"refused (rc -{v.errno}, {v.core})"
    mark = "" if v.loaded else f"refused (rc -{v.errno}): "
    return f"{mark}{v.peak_bytes:,} / {v.heap_bytes:,} B ({v.core})"


def board_data(
    reports: Sequence[tuple[str, CheckReport]], table: Mapping[str, Board]
) -> dict[str, Any]:
    """The check's JSON over every board checked: the first board's report's fields, each
    example entry once per board with `"board": <key>`, and `"boards"`: `[{"key", "name",
    "fqbn", "emulator" (None: none), "cpu"}]`. With more than one board, `board` names them
    all, `passed`, `seconds` and the cache counts are over all of them, and another board's
    errors start with its key.

    Args:
        reports: (board key, its report), in the order checked.
        table: the board table the keys are of (`generator.boards.budgets.check_boards`).
    """
    data = reports[0][1].to_dict()
    data["examples"] = [
        {**entry, "board": key} for key, report in reports for entry in report.to_dict()["examples"]
    ]
    data["boards"] = [
        {"key": key, "name": b.name, "fqbn": b.fqbn, "emulator": b.emulator, "cpu": b.cpu}
        for key, b in ((key, table[key]) for key, _ in reports)
    ]
    if len(reports) > 1:
        data["board"] = ", ".join(report.board for _, report in reports)
        data["passed"] = all(report.passed for _, report in reports)
        data["seconds"] = round(sum(report.seconds for _, report in reports), 1)
        data["errors"] += [f"{key}: {e}" for key, report in reports[1:] for e in report.errors]
        for count in ("hits", "misses", "failures"):
            data["cache"][count] = sum(getattr(r.cache, count) for _, r in reports)
    return data


def board_part(report: Mapping[str, Any], key: str) -> dict[str, Any]:
    """`report` with only the example entries and the `boards` entry of board `key`.

    Args:
        report: a check report's JSON: `board_data`'s (with `"boards"`, each example entry
            naming its board), or one board's `CheckReport.to_dict()` (no `"boards"`: it is
            returned whole, as a new dict).
        key: a board key (`generator.boards.budgets.check_boards`), e.g. "unoq".
    Returns:
        A new dict; `report` is not changed. A board the report lacks gives no entries.
    """
    if not isinstance(report.get("boards"), list):
        return dict(report)
    return {
        **report,
        "examples": [
            e
            for e in report.get("examples") or []
            if isinstance(e, Mapping) and e.get("board") == key
        ],
        "boards": [b for b in report["boards"] if isinstance(b, Mapping) and b.get("key") == key],
    }
