"""`check`: prove every example of a generated library works, stage by stage.

1. model check (`generator.models.check_library_models`), no toolchain needed;
2. compile for the UNO Q (`compile.py`, back ends in `toolchains.py`, objects cached by
   content in `objcache.py`);
3. sizes like arduino-cli's report, plus the Dynamic-link bytes (`sizes.py`);
4. run on an emulated Cortex-M33 (QEMU mps2-an505) and once on the host under
   AddressSanitizer + UBSan, compared with the example's expected.yaml (`run.py`);
5. the method arena measured in the emulated run (`arena.py`).

`run_check` returns a `CheckReport` (`report.py`) with the Markdown and JSON forms.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from generator.boards import UNO_Q, Board
from generator.check.arena import arena_stage
from generator.check.compile import CompileResult, compile_example
from generator.check.expected import read_expected
from generator.check.objcache import ObjectCache, default_cache_dir
from generator.check.plan import library_examples, missing_sketches, plan_build
from generator.check.report import CheckReport, ExampleReport
from generator.check.run import judge_run, run_emulated, run_host
from generator.check.sizes import (
    dynamic_link,
    measure_elf,
    parse_arduino_cli,
    sizes_stage,
)
from generator.check.stages import StageResult, Status
from generator.check.toolchains import GCC_ARM, HOST, Toolchain, select_toolchain
from generator.errors import FatalError
from generator.layout import EXAMPLES
from generator.models import ModelCheckReport, check_library_models

#: The generated header holding an example's .pte (array `model_pte`).
MODEL_HEADER = "model.h"

__all__ = ["CheckReport", "ExampleReport", "library_examples", "run_check"]


#: The array a generated model header defines; a sketch naming it carries a model.
MODEL_ARRAY = "model_pte"
#: Files of a sketch folder searched for `MODEL_ARRAY`.
_SKETCH_TEXT = (".ino", ".h", ".hpp", ".c", ".cpp")


def _needs_model(folder: Path) -> bool:
    """True for a standard example, or a sketch whose files name `MODEL_ARRAY`."""
    if folder.name in EXAMPLES:
        return True
    return any(
        path.suffix in _SKETCH_TEXT
        and path.is_file()
        and not path.name.startswith(".")
        and MODEL_ARRAY.encode() in path.read_bytes()
        for path in folder.iterdir()
    )


def _model_check(
    library: Path, examples: Sequence[str]
) -> tuple[ModelCheckReport | None, list[str]]:
    """Stage 1 over the examples that carry a model (`model.h`).

    Returns:
        (the report, or None when no example carries a model; errors: one per example
        that uses a model but has no `model.h`, or why the check could not run).
    """
    errors = []
    with_model = []
    for name in examples:
        folder = library / "examples" / name
        if (folder / MODEL_HEADER).is_file():
            with_model.append(name)
        elif _needs_model(folder):
            errors.append(
                f"model check: examples/{name} has no {MODEL_HEADER}, so its model cannot be "
                f"checked (the sketch uses `{MODEL_ARRAY}`, or it is a standard example); the "
                f"generated header must be named {MODEL_HEADER}"
            )
    if not with_model:
        return None, errors
    try:
        return check_library_models(library, with_model), errors
    except FatalError as e:
        return None, [*errors, f"model check: {e}"]


def _check_example(
    library: Path,
    name: str,
    toolchain: Toolchain,
    board: Board,
    run: bool,
    cache: ObjectCache,
    work: Path,
) -> ExampleReport:
    start = time.monotonic()
    report = ExampleReport(name)
    plan = plan_build(library, name)
    expected = read_expected(library / plan.sketch_dir)

    # Stage 2: compile (and stage 3: sizes) with the chosen back end.
    built = compile_example(toolchain, plan, work / name / toolchain.name, cache)
    report.stages.append(built.stage)
    if built.build.ok and built.build.binary is not None:
        if built.build.size_report:
            report.sizes = parse_arduino_cli(built.build.size_report, board)
        else:
            report.sizes = measure_elf(built.build.binary, board)
    report.stages.append(sizes_stage(report.sizes, built.overflow, board))

    # The emulated run boots a gcc-arm firmware (arduino-cli's is for the real board);
    # its objects also give the Dynamic-link size.
    firmware: CompileResult | None = built if toolchain.name == GCC_ARM.name else None
    if firmware is None and (run or built.build.ok):
        firmware = compile_example(GCC_ARM, plan, work / name / GCC_ARM.name, cache)
    if firmware is not None and firmware.build.ok and firmware.build.objects:
        report.dynamic = dynamic_link(firmware.build.objects, work / name / f"{name}.dynamic.o")

    if not run:
        report.seconds = time.monotonic() - start
        return report
    timeout = expected.timeout_seconds
    emulated = None
    if firmware is not None and firmware.build.ok and firmware.build.binary is not None:
        emulated = run_emulated(firmware.build.binary, timeout, expected.must_not_print)
        report.runs.append(emulated)
        report.stages.append(judge_run(emulated, expected, "run"))
    else:
        report.stages.append(
            StageResult(
                "run",
                Status.FAIL,
                "no firmware to run: the gcc-arm build failed",
                firmware.stage.details if firmware else "",
            )
        )

    host = compile_example(HOST, plan, work / name / HOST.name, cache)
    if host.build.ok and host.build.binary is not None:
        out = run_host(host.build.binary, timeout, expected.must_not_print)
        report.runs.append(out)
        report.stages.append(judge_run(out, expected, "sanitize"))
    else:
        report.stages.append(
            StageResult("sanitize", Status.FAIL, "host build failed", host.stage.details)
        )

    stage, figures = arena_stage(emulated, expected)
    report.stages.append(stage)
    report.arena = figures
    report.seconds = time.monotonic() - start
    return report


def run_check(
    library: Path,
    *,
    examples: Sequence[str] | None = None,
    compiler: str = "auto",
    run: bool = True,
    cache_dir: Path | None = None,
    board: Board = UNO_Q,
) -> CheckReport:
    """Check the examples of the generated library at `library` (stages 1-5).

    Args:
        library: the library root (library.properties, src/, examples/).
        examples: example names to check; None: all the library has.
        compiler: "auto", "gcc-arm" or "arduino-cli" (see `toolchains.select_toolchain`).
        run: False skips stages 4 and 5 (nothing is run).
        cache_dir: cache root; objects go to `<cache_dir>/objects` (default: the user
            cache folder's `executorch-arduino/objects`).
        board: the target's budgets.

    Returns:
        the report; `.passed` is True only when every selected example passed every
        stage that ran and the model check passed. An example folder without its
        `<Name>.ino`, or a sketch that uses a model without a `model.h`, is an entry of
        `.errors` (so the check fails).

    Raises:
        FatalError: the library or an example does not exist, the library has no
            example, an expected.yaml is malformed or a sketch not UTF-8, the cache
            folder cannot be created, or a needed tool is not installed.
    """
    start = time.monotonic()
    # Absolute from here on: compiles run in the library folder.
    library = library.resolve()
    if not library.is_dir():
        raise FatalError(f"{library} is not a folder; pass the generated library's root")
    objects = cache_dir.resolve() / "objects" if cache_dir else default_cache_dir()
    if cache_dir is not None and cache_dir.exists() and not cache_dir.is_dir():
        raise FatalError(f"--cache-dir {cache_dir} is a file; pass a folder (it is created)")
    try:
        objects.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise FatalError(
            f"cannot create the object cache folder {objects} ({e}); pass a writable "
            "folder with --cache-dir"
        ) from None
    available = library_examples(library)
    names = list(examples) if examples else available
    unknown = [n for n in names if n not in available]
    if unknown:
        raise FatalError(
            f"no example {', '.join(unknown)} in {library}; it has: {', '.join(available)}"
        )
    toolchain = select_toolchain(compiler)
    cache = ObjectCache(objects)

    report = CheckReport(library, toolchain.name, board.name)
    # A folder without its sketch fails the check instead of being skipped.
    report.errors += missing_sketches(library, names)
    names = [n for n in names if (library / "examples" / n / f"{n}.ino").is_file()]
    model, errors = _model_check(library, names)
    report.model_check = model
    report.errors += errors

    with tempfile.TemporaryDirectory(prefix="check-") as tmp:
        for name in names:
            report.examples.append(
                _check_example(library, name, toolchain, board, run, cache, Path(tmp))
            )
    cache.clear_temporaries()
    report.cache = cache.stats
    report.seconds = time.monotonic() - start
    return report
