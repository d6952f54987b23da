"""`python -m generator check LIBRARY_DIR`: prove every example of a generated library works,
stage by stage (the steps are the modules of `generator.check`):

1. model check (`check/model_check.py`), no toolchain needed;
2. compile for the UNO Q (`check/compile.py` with the sources of `check/plan.py`, back ends
   in `check/toolchains.py` on `toolchain/gcc.py`, objects cached by content in
   `toolchain/objcache.py`);
3. sizes like arduino-cli's report (`check/sizes.py`), and the Dynamic link (the IDE's
   default link mode) with its sizes (`check/dynamic.py`);
4. run on the board's CPU emulated (`boards.EMULATORS`: QEMU mps2-an505's Cortex-M33 for the
   UNO Q, mps2-an500's Cortex-M7 for the Giga), the Dynamic upload file run there as
   the board's loader would place it (`check/dynamic_run.py`), and once on the host under
   AddressSanitizer + UBSan, compared with the example's expected.yaml (`check/run.py`); a
   host run that fell short of arena only, where the emulated run passed, is the host's
   limitation, not the sketch's error (`check/arena.py` `host_arena_limit`);
5. the method arena measured in the emulated run (`check/arena.py`).

An example too big for a board other than the UNO Q (its static link over the flash or RAM,
its upload file over the flash or the loader's heap, `stages.Status.MISFIT`) "does not fit":
no failure, and the run of that link is skipped (`_check_example`).

`--sketch PATH` checks the user's own sketches instead of the library's examples, on an
overlay of the library (`check/sketch.py`), and prints their serial output.

Lint (`generator.lint.run`) runs first. `run_check` returns a `CheckReport` (`check/report.py`)
with the Markdown and JSON forms; `sync` runs it on the regenerated library.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from generator.boards import board_docs as boardsdoc
from generator.boards import linkmode_docs as linkmodes
from generator.boards.budgets import EMULATORS, UNO_Q, Board, check_boards, no_emulator_reason
from generator.boards.linkmode_docs import update_sketches
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
from generator.check.model_check import model_check
from generator.check.plan import library_examples, missing_sketches, plan_build
from generator.check.report import CheckReport, ExampleReport, board_part
from generator.check.run_sketch import RunOutput, judge_run, run_emulated, run_host, stop_children
from generator.check.sizes import measure_elf, parse_arduino_cli, sizes_stage
from generator.check.sketch import (
    BAD_INPUT_EXIT,
    resolve_sketches,
    serial_output,
    sketch_expected,
    sketch_overlay,
)
from generator.check.stages import StageResult, Status, misfit_status, not_run_misfit
from generator.lint.run import lint_library
from generator.toolchain.objcache import ObjectCache
from generator.util.atomic import write_atomic
from generator.util.cache import objects_dir
from generator.util.errors import FatalError
from generator.util.userpaths import output_file


def _write_json(path: Path, data: object) -> None:
    """Write `data` as JSON to `path` through a temporary file in the same folder.

    Raises:
        FatalError: `path` is a folder, its folder does not exist, or it cannot be
            written (no temporary file is left behind).
    """
    path = path.resolve()
    if path.is_dir():
        raise FatalError(f"--json {path} is a folder; pass a file name")
    if not path.parent.is_dir():
        raise FatalError(f"--json {path}: folder {path.parent} does not exist; create it first")
    try:
        write_atomic(path, json.dumps(data, indent=2) + "\n")
    except OSError as e:
        raise FatalError(f"--json {path}: cannot write it ({e})") from None


def _append_summary(path: str, markdown: str) -> None:
    """Append the report to the GitHub step summary file `path`.

    Raises:
        FatalError: it cannot be written (a folder, no permission, ...).
    """
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(markdown + "\n")
    except OSError as e:
        raise FatalError(
            f"GITHUB_STEP_SUMMARY={path}: cannot append the report ({e}); point it at a file"
        ) from None


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


def _keep_dir(path: Path, library: Path) -> Path:
    """`--keep DIR`, resolved and created before anything runs.

    Raises:
        FatalError: DIR is a file, a folder that is not empty, inside the library, or it
            cannot be created.
    """
    path = path.resolve()
    if path.exists() and not path.is_dir():
        raise FatalError(f"--keep {path} is a file; pass a folder (it is created)")
    if path.is_relative_to(library.resolve()):
        raise FatalError(f"--keep {path} is inside the library {library}; pass a folder outside it")
    if path.is_dir() and any(path.iterdir()):
        raise FatalError(
            f"--keep {path} is not empty; pass a new or empty folder (the check writes a "
            "folder per example there)"
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise FatalError(f"--keep {path}: cannot create it ({e}); pass a writable folder") from None
    return path


def _stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    """SIGTERM: end like Ctrl-C does, through the error handler, killing what runs."""
    stop_children()
    raise FatalError("stopped by SIGTERM", exit_code=128 + signal.SIGTERM)


def _sketch_options(args: argparse.Namespace) -> dict[str, tuple[Path, Expected]]:
    """`--sketch`, `--expect` and `--timeout`, checked before anything runs or is written.

    Returns:
        sketch name -> (its folder, what its runs must print); empty without `--sketch`.

    Raises:
        FatalError (exit code `sketch.BAD_INPUT_EXIT`): `--sketch` with `--example` or
            `--update-docs`; `--expect` or `--timeout` without `--sketch`; `--expect` with
            `--no-run`; a sketch path, name or expected.yaml that is refused
            (`sketch.resolve_sketch`, `sketch.sketch_expected`).
    """
    paths = [Path(p) for p in getattr(args, "sketch", None) or []]
    expect: list[str] = getattr(args, "expect", None) or []
    timeout: float | None = getattr(args, "timeout", None)
    if not paths:
        if expect or timeout is not None:
            raise FatalError(
                "--expect and --timeout judge the run of your own sketch: use them with "
                "--sketch PATH (an example's run is judged by its expected.yaml)",
                exit_code=BAD_INPUT_EXIT,
            )
        return {}
    if args.example or getattr(args, "update_docs", False):
        raise FatalError(
            "--sketch checks your own sketches against the library; it goes with neither "
            "--example nor --update-docs (check the library's examples in another run)",
            exit_code=BAD_INPUT_EXIT,
        )
    if expect and args.no_run:
        raise FatalError(
            "--expect asserts what a run prints, and --no-run runs nothing; drop one",
            exit_code=BAD_INPUT_EXIT,
        )
    return {
        folder.name: (folder, sketch_expected(folder, expect, timeout))
        for folder in resolve_sketches(paths)
    }


def check(args: argparse.Namespace) -> int:
    """Run the check, print the Markdown report, write JSON / the step summary.

    SIGTERM ends it cleanly: the programs it runs (QEMU, the host build) run in their
    own sessions and are killed, and it exits with 143.

    Lint runs first (`generator.lint.run`, the Library Manager's rules): its findings are
    entries of the report's errors, so a library the Library Manager would refuse fails.

    With `--sketch`, the user's sketches are checked instead of the library's examples
    (`check/sketch.py`); each one's serial output is printed before the report, the
    report names the library (not the overlay it ran in), and each sketch's JSON entry
    carries `"sketch": <its folder>`.

    Returns:
        0 when lint passed and every selected example passed every stage, else 1.

    Raises:
        FatalError: bad library, unknown example, missing tool (see `run_check`); the
            JSON or step summary cannot be written; SIGTERM; refused sketch options
            (`_sketch_options`, exit code 2).
    """
    sketches = _sketch_options(args)
    if args.example and getattr(args, "update_docs", False):
        raise FatalError(
            "--update-docs writes every example's row: run it without --example (the "
            "README would otherwise describe only the examples checked)"
        )
    table = check_boards()
    keys = board_keys(getattr(args, "board", None), table)
    if getattr(args, "update_docs", False) and "unoq" not in keys:
        raise FatalError(
            "--update-docs also writes the README's link-modes section and the examples' "
            "header comments, from the UNO Q's check: add unoq to --board (e.g. --board "
            f"unoq,{keys[0]}, or all)"
        )
    # Resolved before anything runs: compiles run in other folders.
    json_path = output_file(args.json, "--json") if args.json else None
    cache_dir = args.cache_dir.resolve() if args.cache_dir else None
    keep = _keep_dir(args.keep, args.library) if getattr(args, "keep", None) else None
    readme = args.library.resolve() / "README.md"
    if getattr(args, "update_docs", False):
        _readme_with_markers(readme)  # before the check runs, not after
    lint = lint_library(args.library)
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _stop_on_sigterm) if main_thread else None
    try:
        with contextlib.ExitStack() as stack:
            library, examples = args.library.resolve(), args.example
            if sketches:
                if not library.is_dir():
                    raise FatalError(
                        f"{library} is not a folder; pass the generated library's root"
                    )
                overlay = Path(stack.enter_context(_temporary()))
                examples = sketch_overlay(
                    library, [folder for folder, _ in sketches.values()], overlay
                )
                library = overlay
            host_runs: dict[str, tuple[CompileResult, RunOutput | None]] = {}
            reports = [
                (
                    key,
                    run_check(
                        library,
                        examples=examples,
                        compiler=args.compiler,
                        run=not args.no_run,
                        cache_dir=cache_dir,
                        board=table[key],
                        keep=keep / key if keep is not None and len(keys) > 1 else keep,
                        expectations={name: exp for name, (_, exp) in sketches.items()},
                        host_runs=host_runs,
                    ),
                )
                for key in keys
            ]
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
    for _, report in reports:
        report.library = args.library.resolve()
    reports[0][1].errors[:0] = [f"lint: {finding}" for finding in lint.findings]
    for _, report in reports if sketches else ():
        for example in report.examples:
            if example.name in sketches:
                print(serial_output(example), end="")
    markdown = "\n".join(report.to_markdown() for _, report in reports)
    print(markdown)
    data = board_data(reports, table)
    for entry in data["examples"]:
        if entry["example"] in sketches:
            entry["sketch"] = str(sketches[entry["example"]][0])
    if getattr(args, "update_docs", False):
        unoq = board_part(data, "unoq")
        update_docs(readme, data, unoq)
        update_sketches(args.library.resolve() / "examples", unoq)
    if json_path is not None:
        _write_json(json_path, data)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        _append_summary(summary, markdown)
    return 0 if all(report.passed for _, report in reports) else 1


def _readme_with_markers(readme: Path) -> str:
    """`readme`'s text, once it is known to have both sections' markers (link modes, boards).

    Raises:
        FatalError: `readme` is missing, unreadable, or lacks a section's markers.
    """
    return boardsdoc.check_readme(readme, linkmodes.check_readme(readme))


def update_docs(readme: Path, data: Mapping[str, Any], unoq: Mapping[str, Any]) -> None:
    """Write the README's two sections in one write: the boards from `data` (every board's
    report, `board_data`), the link modes from `unoq` (the UNO Q's entries of it).

    Raises:
        FatalError: `readme` is missing, unreadable, lacks a section's markers, or cannot be
            written (it is then left as it was).
    """
    text = _readme_with_markers(readme)
    text = linkmodes.replace_section(text, linkmodes.link_modes_markdown(unoq)) or text
    text = boardsdoc.with_section(text, data)
    try:
        write_atomic(readme, text)
    except OSError as e:
        raise FatalError(f"--update-docs: cannot write {readme} ({e})") from None


def board_keys(values: Sequence[str] | None, table: Mapping[str, Board]) -> list[str]:
    """`--board`'s keys in order: None is the UNO Q; `all` is every key of `table`
    (`generator.boards.budgets.check_boards`), in its order, where it stands.

    Raises:
        FatalError: a key `table` does not have (argparse refuses it first on the command
            line).
    """
    keys: list[str] = []
    for value in values or ["unoq"]:
        for key in list(table) if value == "all" else [value]:
            if key not in table:
                raise FatalError(f"no board {key!r}; --board takes {', '.join(table)} or all")
            if key not in keys:
                keys.append(key)
    return keys


def board_data(
    reports: Sequence[tuple[str, CheckReport]], table: Mapping[str, Board]
) -> dict[str, Any]:
    """The check's JSON over every board checked: the first board's report's fields, each
    example entry once per board with `"board": <key>`, and `"boards"`: `[{"key", "name",
    "fqbn", "emulator" (None: none), "cpu"}]`. With more than one board, `board` names them
    all, `passed`, `seconds` and the cache counts are over all of them, and another board's
    errors start with its key.
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
    host_runs: dict[str, tuple[CompileResult, RunOutput | None]] | None = None,
) -> CheckReport:
    """Check the examples of the generated library at `library` (stages 1-5).

    Args:
        library: the library root (library.properties, src/, examples/).
        examples: example names to check; None: all the library has.
        compiler: "auto", "gcc-arm" or "arduino-cli" (see `toolchains.select_toolchain`).
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
    available = library_examples(library)
    names = list(examples) if examples else available
    unknown = [n for n in names if n not in available]
    if unknown:
        raise FatalError(
            f"no example {', '.join(unknown)} in {library}; it has: {', '.join(available)}"
        )
    toolchain = select_toolchain(compiler, board)
    cache = ObjectCache(objects)

    report = CheckReport(library, toolchain.name, board.name, emulator=board.emulator)
    # A folder without its sketch fails the check instead of being skipped.
    report.errors += missing_sketches(library, names)
    names = [n for n in names if (library / "examples" / n / f"{n}.ino").is_file()]
    model, errors = model_check(library, names)
    report.model_check = model
    report.errors += errors

    with contextlib.ExitStack() as stack:
        work = keep if keep is not None else Path(stack.enter_context(_temporary()))
        for name in names:
            report.examples.append(
                _check_example(
                    library,
                    name,
                    toolchain,
                    board,
                    run,
                    cache,
                    work,
                    (expectations or {}).get(name),
                    host_runs,
                )
            )
    if keep is not None:
        for name in names:
            _materialize(keep / name)
    cache.clear_temporaries()
    report.cache = cache.stats
    report.seconds = time.monotonic() - start
    return report


def _check_example(
    library: Path,
    name: str,
    toolchain: Toolchain,
    board: Board,
    run: bool,
    cache: ObjectCache,
    work: Path,
    expected: Expected | None = None,
    host_runs: dict[str, tuple[CompileResult, RunOutput | None]] | None = None,
) -> ExampleReport:
    """Stages 2-5 of the example `name`, judged by `expected` (None: its expected.yaml)."""
    start = time.monotonic()
    report = ExampleReport(name)
    plan = plan_build(library, name)
    if expected is None:
        expected = read_expected(library / plan.sketch_dir)

    # Stage 2: compile (and stage 3: sizes) with the chosen back end. A sketch that does not
    # fit the board must stop with its own #error (generator/pipeline/fit.py); then nothing else
    # runs.
    refusal = expected_refusal(toolchain, plan, board)
    built = compile_example(toolchain, plan, work / name / toolchain.name, cache, refusal)
    if refusal is None and built.overflow and built.stage.status is Status.FAIL:
        # Over the board's flash or RAM (the linker's regions or arduino-cli's size check
        # said), as the sizes stage will say: a misfit unless the board is the UNO Q. (A
        # sketch that should have refused the board with its #error fails as it was.)
        built.stage.status = misfit_status(board)
    report.stages.append(built.stage)
    if built.refused:
        report.stages += after_refusal(board.name, run)
        report.seconds = time.monotonic() - start
        return report
    if built.build.ok and built.build.binary is not None:
        if built.build.size_report:
            report.sizes = parse_arduino_cli(built.build.size_report, board)
        else:
            report.sizes = measure_elf(built.build.binary, board)
    report.stages.append(sizes_stage(report.sizes, built.overflow, board))

    # The emulated run boots a gcc-arm firmware (arduino-cli's is for the real board), the
    # board's own (its CPU flags, its emulator's board half; GCC_ARM for the UNO Q); its
    # objects are also linked Dynamic (link_mode=dynamic, check/dynamic.py).
    gcc = toolchain if toolchain.name == GCC_ARM.name else GCC_ARM
    if gcc is GCC_ARM and board != UNO_Q:
        gcc = select_toolchain("gcc-arm", board)
    firmware: CompileResult | None = built if toolchain is gcc else None
    if firmware is None and (run or built.build.ok):
        firmware = compile_example(gcc, plan, work / name / gcc.name, cache)
    line = firmware.build.line if firmware is not None and firmware.build.ok else None
    stage, report.dynamic = dynamic_stage(line, board, work / name / "dynamic", name)
    report.stages.append(stage)

    if not run:
        report.seconds = time.monotonic() - start
        return report
    timeout = expected.timeout_seconds
    emulated = None
    no_emulator = no_emulator_reason(board)
    sizes = report.stage("sizes")
    if sizes is not None and sizes.status is Status.MISFIT:
        # Too big for the board: what the emulator (with more memory) would print says
        # nothing of it, and a run that failed would be one more red for the same fact.
        report.stages.append(not_run_misfit("run", board, "sizes"))
    elif board.emulator is None:
        report.stages.append(StageResult("run", Status.SKIP, no_emulator))
    elif firmware is not None and firmware.build.ok and firmware.build.binary is not None:
        machine = EMULATORS[board.emulator].machine
        emulated = run_emulated(
            firmware.build.binary, timeout, expected.must_not_print, machine=machine
        )
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

    # The Dynamic upload file (the pinned core's), placed by the loader model and booted.
    # Its firmware (board/llext_host.c, .ld) is the UNO Q's: memory, heap, mps2-an505.
    dynamic = report.stage("dynamic")
    if dynamic is not None and dynamic.status is Status.MISFIT:
        report.stages.append(not_run_misfit("dynamic-run", board, "dynamic"))
    elif board.emulator is None:
        report.stages.append(StageResult("dynamic-run", Status.SKIP, no_emulator))
    elif board != UNO_Q:
        report.stages.append(
            StageResult(
                "dynamic-run",
                Status.SKIP,
                f"not run for {board.name}: the loader model's firmware is the UNO Q's",
            )
        )
    else:
        upload = work / name / "dynamic" / f"{name}.elf-zsk.bin" if report.dynamic else None
        stage, dynamic_run = dynamic_run_stage(upload, expected, work, work / name / "dynamic-run")
        if dynamic_run is not None:
            report.runs.append(dynamic_run)
        report.stages.append(stage)

    host_run = host_runs.get(name) if host_runs is not None else None
    if host_run is None:
        host = compile_example(HOST, plan, work / name / HOST.name, cache)
        out = None
        if host.build.ok and host.build.binary is not None:
            out = run_host(host.build.binary, timeout, expected.must_not_print)
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

    if not expected.until_done and emulated is not None and parse_arena(emulated.lines):
        # A sketch without expected.yaml that prints its arena has it measured too.
        expected = dataclasses.replace(expected, arena=True)
    if board.emulator is None:
        stage, figures = StageResult("arena", Status.SKIP, no_emulator), None
    else:
        stage, figures = arena_stage(emulated, expected)
    report.stages.append(stage)
    report.arena = figures
    report.seconds = time.monotonic() - start
    return report
