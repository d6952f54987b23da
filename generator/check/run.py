"""The check's runner (`run_check`): prove every example of a generated library works on one
board, stage by stage (the steps are the modules of `generator.check`):

1. model check (`check/model_check.py`), no toolchain needed;
2. compile for the UNO Q (`check/compile.py` with the sources of `check/plan.py`, back ends
   in `check/backends.py` on `toolchain/gcc.py`, objects cached by content in
   `toolchain/objcache.py`);
3. sizes like arduino-cli's report (`check/sizes.py`), where the flash goes by component and
   the RAM with the model's arena (`check/footprint.py`), and the Dynamic link (the IDE's
   default link mode) with its sizes (`check/dynamic.py`);
4. run on the board's CPU emulated (`boards.EMULATORS`: QEMU mps2-an505's Cortex-M33 for the
   UNO Q, mps2-an500's Cortex-M7 for the Giga), the Dynamic upload file run there as
   the board's loader would place it (`check/dynamic_run.py`), and once on the host under
   AddressSanitizer + UBSan, compared with the example's expected.yaml
   (`check/run_sketch.py`); a host run that fell short of arena only, where the emulated run
   passed, is the host's limitation, not the sketch's error (`check/arena.py`
   `host_arena_limit`);
5. the method arena measured in the emulated run (`check/arena.py`).

An example too big for a board other than the UNO Q (its static link over the flash or RAM,
its upload file over the flash or the loader's heap, `stages.Status.MISFIT`) "does not fit":
no failure, and the run of that link is skipped (`_check_example`).

`run_check` returns a `CheckReport` (`check/report.py`) with the Markdown and JSON forms.
`python -m generator check` (`generator.cli.check`) runs lint (`generator.lint.run`) first,
then `run_check` once per board (on an overlay of the library holding the user's sketches with
`--sketch PATH`, `check/sketch.py`); `sync` runs it on the regenerated library.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from generator.boards.budgets import EMULATORS, UNO_Q, Board, no_emulator_reason
from generator.check.arena import arena_stage, host_arena_limit, parse_arena
from generator.check.backends import GCC_ARM, HOST, Toolchain, select_toolchain
from generator.check.compile import (
    CompileResult,
    after_refusal,
    compile_example,
    expected_refusal,
)
from generator.check.dynamic import dynamic_stage
from generator.check.dynamic_run import dynamic_run_stage
from generator.check.expected import Expected, read_expected
from generator.check.footprint import measure_footprint
from generator.check.model_check import model_check
from generator.check.plan import BuildPlan, library_examples, missing_sketches, plan_build
from generator.check.report import CheckReport, ExampleReport
from generator.check.run_sketch import RunOutput, judge_run, run_emulated, run_host
from generator.check.sizes import measure_elf, parse_arduino_cli, sizes_stage
from generator.check.stages import StageResult, Status, misfit_status, not_run_misfit
from generator.toolchain.objcache import ObjectCache
from generator.util.cache import objects_dir
from generator.util.errors import FatalError

#: Each example's host build and run by name (`run_check`'s `host_runs`).
HostRuns = dict[str, tuple[CompileResult, RunOutput | None]]


def _temporary() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="check-")


def _materialize(folder: Path) -> None:
    """Replace every symbolic link below `folder` (the staged objects point into the object
    cache) by a copy of its target, so a kept build folder outlives the cache."""
    for link in sorted(p for p in folder.rglob("*") if p.is_symlink()):
        target = link.resolve()
        link.unlink()
        if target.is_file():
            shutil.copyfile(target, link)


def run_check(
    library: Path,
    *,
    examples: Sequence[str] | None = None,
    compiler: str = "auto",
    run: bool = True,
    cache_dir: Path | None = None,
    board: Board = UNO_Q,
    keep: Path | None = None,
    expectations: Mapping[str, Expected] | None = None,
    host_runs: HostRuns | None = None,
) -> CheckReport:
    """Check the examples of the generated library at `library` (stages 1-5).

    Args:
        library: the library root (library.properties, src/, examples/).
        examples: example names to check; None: all the library has.
        compiler: "auto", "gcc-arm" or "arduino-cli" (see `backends.select_toolchain`).
        run: False skips stages 4 and 5 (nothing is run).
        cache_dir: cache root; objects go to `<cache_dir>/objects` (default: the user
            cache folder's `executorch-arduino/objects`).
        board: the target: its budgets, and the FQBN (arduino-cli) or CPU flags (gcc-arm)
            it is compiled for.
        keep: a folder to keep each example's build folder in (`keep/<example>/`);
            None: they go to a temporary folder that is removed at the end.
        expectations: example name -> what its runs must print, instead of its
            expected.yaml (a user's sketch, `check/sketch.py`).
        host_runs: example name -> its host build and run, filled and reused here, so
            a check of several boards builds and runs each example on the host once (it
            does not depend on the board); None: not kept.

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
    cache = ObjectCache(_objects_folder(cache_dir))
    names = _example_names(library, examples)
    toolchain = select_toolchain(compiler, board)

    report = CheckReport(library, toolchain.name, board.name, emulator=board.emulator)
    # A folder without its sketch fails the check instead of being skipped.
    report.errors += missing_sketches(library, names)
    names = [n for n in names if (library / "examples" / n / f"{n}.ino").is_file()]
    report.model_check, errors = model_check(library, names)
    report.errors += errors

    with contextlib.ExitStack() as stack:
        work = keep if keep is not None else Path(stack.enter_context(_temporary()))
        for name in names:
            expected = (expectations or {}).get(name)
            report.examples.append(
                _check_example(
                    library, name, toolchain, board, run, cache, work, expected, host_runs
                )
            )
    if keep is not None:
        for name in names:
            _materialize(keep / name)
    cache.clear_temporaries()
    report.cache = cache.stats
    report.seconds = time.monotonic() - start
    return report


def _objects_folder(cache_dir: Path | None) -> Path:
    """The object cache's folder under `cache_dir` (None: the user cache folder), created.

    Raises:
        FatalError: `cache_dir` is a file, or the folder cannot be created.
    """
    objects = objects_dir(cache_dir.resolve() if cache_dir else None)
    if cache_dir is not None and cache_dir.exists() and not cache_dir.is_dir():
        raise FatalError(f"--cache-dir {cache_dir} is a file; pass a folder (it is created)")
    try:
        objects.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise FatalError(
            f"cannot create the object cache folder {objects} ({e}); pass a writable "
            "folder with --cache-dir"
        ) from None
    return objects


def _example_names(library: Path, examples: Sequence[str] | None) -> list[str]:
    """`examples` (None: every example `library` has), each one the library has.

    Raises:
        FatalError: an example the library does not have, or it has none.
    """
    available = library_examples(library)
    names = list(examples) if examples else available
    unknown = [n for n in names if n not in available]
    if unknown:
        raise FatalError(
            f"no example {', '.join(unknown)} in {library}; it has: {', '.join(available)}"
        )
    return names


def _check_example(
    library: Path,
    name: str,
    toolchain: Toolchain,
    board: Board,
    run: bool,
    cache: ObjectCache,
    work: Path,
    expected: Expected | None = None,
    host_runs: HostRuns | None = None,
) -> ExampleReport:
    """Stages 2-5 of the example `name`, judged by `expected` (None: its expected.yaml),
    its build folders in `work/<name>/`."""
    start = time.monotonic()
    report = ExampleReport(name)
    plan = plan_build(library, name)
    if expected is None:
        expected = read_expected(library / plan.sketch_dir)
    built = _compile_stage(report, plan, toolchain, board, cache, work / name)
    if built.refused:
        report.stages += after_refusal(board.name, run)
        report.seconds = time.monotonic() - start
        return report
    if built.build.ok and built.build.binary is not None:
        if built.build.size_report:
            report.sizes = parse_arduino_cli(built.build.size_report, board)
        else:
            report.sizes = measure_elf(built.build.binary, board)
        report.footprint = measure_footprint(built.build, plan, report.sizes)
    report.stages.append(sizes_stage(report.sizes, built.overflow, board))
    firmware = _dynamic_stage(report, plan, toolchain, built, board, run, cache, work / name)
    if run:
        emulated = _run_stage(report, board, firmware, expected)
        _dynamic_run_stage(report, board, expected, work)
        _sanitize_stage(report, plan, expected, cache, work, host_runs, emulated)
        _arena_stage(report, board, expected, emulated)
    report.seconds = time.monotonic() - start
    return report


def _compile_stage(
    report: ExampleReport,
    plan: BuildPlan,
    toolchain: Toolchain,
    board: Board,
    cache: ObjectCache,
    folder: Path,
) -> CompileResult:
    """Stage 2 into `report`: compile with `toolchain` into `folder/<toolchain>/`.

    A sketch that does not fit the board must stop with its own #error
    (generator/pipeline/fit.py; then nothing else runs); one over the flash or RAM of a
    board other than the UNO Q is a misfit (`stages.Status.MISFIT`), whose runs are skipped.
    """
    refusal = expected_refusal(toolchain, plan, board)
    built = compile_example(toolchain, plan, folder / toolchain.name, cache, refusal)
    if refusal is None and built.overflow and built.stage.status is Status.FAIL:
        # Over the board's flash or RAM (the linker's regions or arduino-cli's size check
        # said), as the sizes stage will say: a misfit unless the board is the UNO Q. (A
        # sketch that should have refused the board with its #error fails as it was.)
        built.stage.status = misfit_status(board)
    report.stages.append(built.stage)
    return built


def _dynamic_stage(
    report: ExampleReport,
    plan: BuildPlan,
    toolchain: Toolchain,
    built: CompileResult,
    board: Board,
    run: bool,
    cache: ObjectCache,
    folder: Path,
) -> CompileResult | None:
    """Stage 3's Dynamic link into `report`, of the gcc-arm firmware's objects.

    Returns:
        the gcc-arm firmware the emulated run boots: `built` when `toolchain` is the
        board's gcc-arm, else compiled into `folder/gcc-arm/` (None: not compiled, when
        nothing runs and `built` failed).
    """
    # The emulated run boots a gcc-arm firmware (arduino-cli's is for the real board), the
    # board's own (its CPU flags, its emulator's board half; GCC_ARM for the UNO Q); its
    # objects are also linked Dynamic (link_mode=dynamic, check/dynamic.py).
    gcc = toolchain if toolchain.name == GCC_ARM.name else GCC_ARM
    if gcc is GCC_ARM and board != UNO_Q:
        gcc = select_toolchain("gcc-arm", board)
    firmware: CompileResult | None = built if toolchain is gcc else None
    if firmware is None and (run or built.build.ok):
        firmware = compile_example(gcc, plan, folder / gcc.name, cache)
    line = firmware.build.line if firmware is not None and firmware.build.ok else None
    stage, report.dynamic = dynamic_stage(line, board, folder / "dynamic", report.name)
    report.stages.append(stage)
    return firmware


def _run_stage(
    report: ExampleReport, board: Board, firmware: CompileResult | None, expected: Expected
) -> RunOutput | None:
    """Stage 4's "run" into `report`: `firmware` booted on the board's emulated CPU.

    Returns:
        the run's output (None: not run: a misfit, no emulator, or no firmware).
    """
    sizes = report.stage("sizes")
    if sizes is not None and sizes.status is Status.MISFIT:
        # Too big for the board: what the emulator (with more memory) would print says
        # nothing of it, and a run that failed would be one more red for the same fact.
        report.stages.append(not_run_misfit("run", board, "sizes"))
    elif board.emulator is None:
        report.stages.append(StageResult("run", Status.SKIP, no_emulator_reason(board)))
    elif firmware is not None and firmware.build.ok and firmware.build.binary is not None:
        machine = EMULATORS[board.emulator].machine
        emulated = run_emulated(
            firmware.build.binary,
            expected.timeout_seconds,
            expected.must_not_print,
            machine=machine,
        )
        report.runs.append(emulated)
        report.stages.append(judge_run(emulated, expected, "run"))
        return emulated
    else:
        report.stages.append(
            StageResult(
                "run",
                Status.FAIL,
                "no firmware to run: the gcc-arm build failed",
                firmware.stage.details if firmware else "",
            )
        )
    return None


def _dynamic_run_stage(report: ExampleReport, board: Board, expected: Expected, work: Path) -> None:
    """Stage 4's "dynamic-run" into `report`: the Dynamic upload file (the pinned core's),
    placed by the loader model and booted. Its firmware (board/llext_host.c, .ld) is the
    UNO Q's: memory, heap, mps2-an505."""
    dynamic = report.stage("dynamic")
    if dynamic is not None and dynamic.status is Status.MISFIT:
        report.stages.append(not_run_misfit("dynamic-run", board, "dynamic"))
    elif board.emulator is None:
        report.stages.append(StageResult("dynamic-run", Status.SKIP, no_emulator_reason(board)))
    elif board != UNO_Q:
        report.stages.append(
            StageResult(
                "dynamic-run",
                Status.SKIP,
                f"not run for {board.name}: the loader model's firmware is the UNO Q's",
            )
        )
    else:
        folder = work / report.name
        upload = folder / "dynamic" / f"{report.name}.elf-zsk.bin" if report.dynamic else None
        stage, dynamic_run = dynamic_run_stage(upload, expected, work, folder / "dynamic-run")
        if dynamic_run is not None:
            report.runs.append(dynamic_run)
        report.stages.append(stage)


def _sanitize_stage(
    report: ExampleReport,
    plan: BuildPlan,
    expected: Expected,
    cache: ObjectCache,
    work: Path,
    host_runs: HostRuns | None,
    emulated: RunOutput | None,
) -> None:
    """Stage 4's "sanitize" into `report`: the host build run under AddressSanitizer +
    UBSan, once per example (`host_runs`: kept there for the other boards' checks). A host
    run that fell short of arena only, where the `emulated` run passed, is the host's limit
    (`arena.host_arena_limit`)."""
    name = report.name
    host_run = host_runs.get(name) if host_runs is not None else None
    if host_run is None:
        host = compile_example(HOST, plan, work / name / HOST.name, cache)
        out = None
        if host.build.ok and host.build.binary is not None:
            out = run_host(host.build.binary, expected.timeout_seconds, expected.must_not_print)
        host_run = (host, out)
        if host_runs is not None:
            host_runs[name] = host_run
    host, out = host_run
    if out is not None:
        report.runs.append(out)
        # A host that fell short of arena where the board did not is the host's limit.
        report.stages.append(
            host_arena_limit(
                out, judge_run(out, expected, "sanitize"), emulated, report.stage("run")
            )
        )
    else:
        report.stages.append(
            StageResult("sanitize", Status.FAIL, "host build failed", host.stage.details)
        )


def _arena_stage(
    report: ExampleReport, board: Board, expected: Expected, emulated: RunOutput | None
) -> None:
    """Stage 5 into `report`: the method arena the `emulated` run measured."""
    if not expected.until_done and emulated is not None and parse_arena(emulated.lines):
        # A sketch without expected.yaml that prints its arena has it measured too.
        expected = dataclasses.replace(expected, arena=True)
    if board.emulator is None:
        stage, figures = StageResult("arena", Status.SKIP, no_emulator_reason(board)), None
    else:
        stage, figures = arena_stage(emulated, expected)
    report.stages.append(stage)
    report.arena = figures
