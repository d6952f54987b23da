"""A user's own sketch checked like an example (`check LIBRARY --sketch PATH`).

A sketch is a folder holding `<folder name>.ino` (and maybe more `.ino`, `.cpp`, `.c`,
`.h`, a `src/` folder, a `model.h`, an `expected.yaml`): the Arduino sketch specification
(https://docs.arduino.cc/arduino-cli/sketch-specification, "Primary sketch file": "Every
sketch must contain a .ino file with a file name matching the sketch root folder name").
`--sketch` takes the folder or its main `.ino` file; anything else is refused before
anything runs (`resolve_sketch`), with exit code `BAD_INPUT_EXIT`.

The check runs on an overlay of the library (`sketch_overlay`): the library's files linked,
its `examples/` holding only the sketches, so every stage of an example (compile, sizes in
both link modes, the emulated and Dynamic runs, the host run, the arena) runs unchanged.

What a run must print (`sketch_expected`):

- with an `expected.yaml` beside the sketch: that file, as for an example (the run ends at
  `=== DONE ===`, which it must print);
- without one: nothing in particular. The run ends at the first of: `timeout` seconds
  (`DEFAULT_SKETCH_TIMEOUT_SECONDS` unless `--timeout`), a `=== DONE ===` line (print it
  to end sooner), the program's exit or a fault. It passes when the sketch printed at
  least one line, and no fault, no `ERROR:` line, no sanitizer report (host run) and no
  more than 1 MiB of output (`run.MAX_OUTPUT_BYTES`) came;
- `--expect TEXT` (either way): some line must contain TEXT.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path

from generator.check.expected import Expected, read_expected
from generator.check.report import CheckReport, ExampleReport
from generator.library.layout import EXAMPLE_EXPECT_FILE
from generator.util.errors import FatalError

#: Exit code of a refused `--sketch`, `--expect` or `--timeout` (argparse's for bad usage;
#: 1 is a check that ran and failed).
BAD_INPUT_EXIT = 2
#: How long a run of a sketch without an expected.yaml lasts, unless it ends sooner.
DEFAULT_SKETCH_TIMEOUT_SECONDS = 10.0
#: What no line of a sketch without an expected.yaml may contain (the examples' convention
#: for a failure: `Serial.print("ERROR: ")`).
SKETCH_MUST_NOT_PRINT = ("ERROR:",)
#: A valid sketch name (arduino-cli commands/sketch/new.go `sketchNameValidationRegex`,
#: since arduino/arduino-cli#2105; the specification above: at most 63 characters, not
#: ending with a dot). Reserved names (CON, NUL, ... on Windows) are not checked.
SKETCH_NAME = re.compile(r"[0-9a-zA-Z_][0-9a-zA-Z_.-]*")
SKETCH_NAME_MAX = 63
#: Serial lines printed per run after the report (the JSON keeps `run.REPORT_LINES`).
SERIAL_LINES = 200

_RUN_TITLES = {
    "emulated": "emulated Cortex-M33 (QEMU mps2-an505), static link",
    "dynamic": "emulated Cortex-M33, Dynamic upload file placed by the loader model",
    "host": "host build under AddressSanitizer + UBSan",
}


def _refuse(message: str) -> FatalError:
    return FatalError(message, exit_code=BAD_INPUT_EXIT)


def resolve_sketch(path: Path) -> Path:
    """The sketch folder `path` names: `path` itself, or the folder of the `.ino` file
    `path`; absolute.

    Every `.ino` file of the folder is read (UTF-8) so that a bad one is refused now, not
    after minutes of compiling.

    Raises:
        FatalError (exit code `BAD_INPUT_EXIT`): `path` does not exist; is a file that is
            not the folder's `<folder name>.ino`; is a folder without `<folder name>.ino`
            (the `.ino` files it holds are named); the name is not a valid sketch name;
            an `.ino` file cannot be read or is not UTF-8.
    """
    given = path
    path = path.expanduser()
    if not path.exists():
        raise _refuse(
            f"--sketch {given}: no such file or folder; pass the sketch's folder or its "
            "main .ino file"
        )
    path = path.resolve()
    if path.is_file():
        if path.suffix != ".ino":
            raise _refuse(
                f"--sketch {given}: not an .ino file; pass the sketch's folder or its main "
                ".ino file"
            )
        folder = path.parent
        if path.stem != folder.name:
            raise _refuse(
                f"--sketch {given}: {path.name} is in the folder {folder.name}/, and the "
                f"Arduino IDE opens a sketch by its folder: its main file must be "
                f"{folder.name}/{folder.name}.ino; rename the file or move it into a folder "
                f"named {path.stem}/"
            )
    else:
        folder = path
    name = folder.name
    main = folder / f"{name}.ino"
    if not main.is_file():
        inos = sorted(p.name for p in folder.glob("*.ino"))
        found = (
            f"it holds {', '.join(inos)}, none named after the folder"
            if inos
            else "it holds no .ino file"
        )
        raise _refuse(
            f"--sketch {given}: no {name}.ino in it ({found}); the Arduino IDE names a "
            "sketch's main file after its folder: rename the main .ino to "
            f"{name}.ino or the folder to the .ino's name"
        )
    if not SKETCH_NAME.fullmatch(name) or len(name) > SKETCH_NAME_MAX or name.endswith("."):
        raise _refuse(
            f"--sketch {given}: {name!r} is not a valid sketch name (the Arduino sketch "
            "specification: a letter, digit or _ first, then letters, digits, _ . -, at "
            f"most {SKETCH_NAME_MAX} characters, no dot at the end); rename the folder "
            "and its main .ino"
        )
    for ino in sorted(folder.glob("*.ino")):
        try:
            ino.read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            raise _refuse(
                f"--sketch {given}: {ino} is not UTF-8 text ({e}); save it as UTF-8"
            ) from None
        except OSError as e:
            raise _refuse(f"--sketch {given}: cannot read {ino} ({e.strerror or e})") from None
    return folder


def resolve_sketches(paths: Sequence[Path]) -> list[Path]:
    """`resolve_sketch` of each of `paths`, a folder named twice kept once, in order.

    Raises:
        FatalError (exit code `BAD_INPUT_EXIT`): see `resolve_sketch`; two different
            folders have one name (the check names a sketch by its folder).
    """
    folders: list[Path] = []
    for path in paths:
        folder = resolve_sketch(path)
        if folder in folders:
            continue
        twin = next((f for f in folders if f.name == folder.name), None)
        if twin is not None:
            raise _refuse(
                f"--sketch: {twin} and {folder} are both named {folder.name}; check them "
                "one at a time or rename one folder (and its main .ino)"
            )
        folders.append(folder)
    return folders


def sketch_expected(
    folder: Path, expect: Sequence[str] = (), timeout: float | None = None
) -> Expected:
    """What a run of the sketch at `folder` must print (see the module docstring).

    Args:
        folder: a sketch folder (`resolve_sketch`).
        expect: texts some line must each contain (`--expect`).
        timeout: seconds a run may last (`--timeout`); None: the expected.yaml's
            `timeout_seconds`, or `DEFAULT_SKETCH_TIMEOUT_SECONDS` without the file.

    Raises:
        FatalError (exit code `BAD_INPUT_EXIT`): the sketch's expected.yaml cannot be read
            or does not follow the format (`expected.read_expected`).
    """
    path = folder / EXAMPLE_EXPECT_FILE
    if path.exists() and not path.is_file():
        raise _refuse(f"--sketch {folder}: {path} is not a file; remove it or make it one")
    if path.exists():
        try:
            expected = read_expected(folder)
        except FatalError as e:
            raise _refuse(f"--sketch {folder}: {e}") from None
    else:
        expected = Expected(
            must_print=(),
            must_not_print=SKETCH_MUST_NOT_PRINT,
            timeout_seconds=DEFAULT_SKETCH_TIMEOUT_SECONDS,
            until_done=False,
        )
    expected = dataclasses.replace(expected, contains=tuple(expect))
    if timeout is not None:
        expected = dataclasses.replace(expected, timeout_seconds=timeout)
    return expected


def sketch_overlay(library: Path, sketches: Sequence[Path], overlay: Path) -> list[str]:
    """Make `overlay` a library whose examples are the user's `sketches`, the rest linked to
    `library`'s files (so the object cache's entries for them are reused).

    Args:
        library: the library root; sketches: sketch folders (`resolve_sketches`: absolute,
            names distinct); overlay: an empty folder.

    Returns:
        the sketches' names (their folders' names), in order.

    Nothing is written into the user's folders or the library: `overlay/examples/<name>/`
    holds links to the sketch folder's entries.
    """
    for entry in library.iterdir():
        if entry.name != "examples":
            (overlay / entry.name).symlink_to(entry.resolve())
    names = []
    for folder in sketches:
        target = overlay / "examples" / folder.name
        target.mkdir(parents=True)
        for item in folder.iterdir():
            (target / item.name).symlink_to(item.resolve())
        names.append(folder.name)
    return names


def real_folder_paths(text: str, overlay: Path, name: str, folder: Path) -> str:
    """`text` (a compiler's messages) with the overlay's paths of sketch `name` replaced by the
    user's `folder`: `OVERLAY/examples/<name>/x` and the relative `examples/<name>/x` (the
    gcc-arm back end compiles from the overlay's root) both become `FOLDER/x`, so an error
    names the file the user edits, not the check's temporary copy."""
    absolute = f"{overlay}/examples/{name}/"
    text = text.replace(absolute, f"{folder}/")
    relative = re.compile(rf"(?<![\w./-])examples/{re.escape(name)}/")
    return relative.sub(lambda _: f"{folder}/", text)


def name_real_folders(report: CheckReport, overlay: Path, folders: dict[str, Path]) -> CheckReport:
    """`report` (a check of `sketch_overlay`'s `overlay`) with every stage's summary and
    details naming each sketch's own folder (`folders`: sketch name -> the user's folder;
    `real_folder_paths`). Changes `report` in place and returns it."""
    for example in report.examples:
        folder = folders.get(example.name)
        if folder is None:
            continue
        for stage in example.stages:
            stage.summary = real_folder_paths(stage.summary, overlay, example.name, folder)
            stage.details = real_folder_paths(stage.details, overlay, example.name, folder)
    return report


def serial_output(example: ExampleReport) -> str:
    """What each run of `example` printed on Serial, for the terminal: a heading per run
    (its kind and how it ended), then its last `SERIAL_LINES` lines."""
    parts = []
    for run in example.runs:
        title = _RUN_TITLES.get(run.kind, run.kind)
        end = (
            "timed out"
            if run.timed_out
            else "=== DONE ==="
            if run.done
            else f"exit code {run.exit_code}"
            if run.exit_code is not None
            else "stopped"
        )
        lines = run.lines[-SERIAL_LINES:]
        skipped = len(run.lines) - len(lines)
        parts.append(
            f"--- Serial output of {example.name}: {title} ({len(run.lines)} lines, "
            f"{run.seconds:.1f} s, ended by: {end}) ---"
        )
        if skipped:
            parts.append(f"[{skipped} earlier lines not shown]")
        parts += lines or ["(nothing)"]
    return "\n".join(parts) + ("\n" if parts else "")
