#!/usr/bin/env python3
"""Turn an ExecuTorch .pte into the model.h a sketch includes.

    python3 extras/tools/pte_to_header.py MODEL.pte [-o model.h] [--name model_pte] [--no-check]

The header declares `alignas(16) const uint8_t model_pte[]` (plain read-only data, kept in
flash by every Arduino core) and `model_pte_size`, then selects the kernels of the operators
the program calls: a sketch links and registers only those (see "Kernel selection" in the
library's README; `--all-kernels` registers every kernel instead). When this script sits in a
generated library, the .pte is first read through the library's program reader (pte_schema/ beside
this script, generated from extras/schema/), so a file that is not an ExecuTorch program is
refused instead of silently embedded (so is a damaged one whose arena, `<array>_arena_bytes`,
cannot be computed: nothing is written then), and then checked against the library the way
check_models.py checks it (et_checks.py, et_dtypes.py: operators it lacks, argument counts
that differ, dtypes it was built without, delegates it does not register): a program that
would fail on the board is refused with the reason (`--no-check` writes it anyway). When the
installed `executorch` package (read with importlib.metadata, without importing it) was not
built from the library's pin (executorch_pin.txt), a note after the model check says that the
check decides, and so nothing needs installing when it passed; a warning says what to install
when it refused the program or did not run.
export_model.py (beside this script) writes its model.h through `header_for` and
`pin_message` below.

Python standard library only (and the reader beside it); runs from any working directory.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import re
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import et_arena  # these from this script's own folder (sys.path above)
import et_checks
import et_dtypes
import et_model_h
import et_pte
import et_registration

#: The program reader beside this script in a generated library (extras/tools/pte_schema/).
DEFAULT_READER = Path(__file__).resolve().parent / "pte_schema"


def write_together(files: list[tuple[Path, bytes]]) -> None:
    """Write every (path, data) through a temporary file in its folder, then rename them all:
    a failure before the renames leaves no file written or changed (no half files).

    A symbolic link is written through (its target is replaced, not the link); a path that
    exists and is no regular file (`/dev/null`, a FIFO) is written to as it is, after the
    others: renaming a file over it would replace the node itself (as root, /dev/null).

    Raises:
        OSError: a folder cannot be made or a file written; the temporary files are removed.
    """
    temps: list[tuple[str, Path]] = []
    umask = os.umask(0)
    os.umask(umask)
    files = [(Path(os.path.realpath(path)), data) for path, data in files]
    special = [(path, data) for path, data in files if path.exists() and not path.is_file()]
    files = [(path, data) for path, data in files if (path, data) not in special]
    try:
        for path, data in files:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
            temps.append((tmp, path))
            with os.fdopen(fd, "wb") as f:
                os.fchmod(f.fileno(), 0o666 & ~umask)  # as open() would make it, not 0600
                f.write(data)
        for tmp, path in temps:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in temps:
            if os.path.exists(tmp):
                os.unlink(tmp)
        raise
    for path, data in special:
        with open(path, "wb") as f:
            f.write(data)


def write_atomically(path: Path, text: str) -> None:
    """Write `text` (UTF-8, newlines as given) to `path` as `write_together` does."""
    write_together([(path, text.encode("utf-8"))])


def file_in_the_way(path: Path) -> Path | None:
    """The nearest existing parent of `path` when it is a file, not a folder, else None: the
    reason `path` cannot be written, found before any work is done."""
    folder = next((p for p in path.parents if p.exists()), None)
    return folder if folder is not None and not folder.is_dir() else None


class Refused(Exception):
    """The .pte cannot be embedded; the message says why and what to do (printed after
    "error: ")."""


def library_of(reader: Path) -> Path | None:
    """The generated library whose program reader is `reader` (LIBRARY/extras/tools/
    pte_schema), or None when `reader` is not inside one (no src/executorch/codegen there)."""
    library = reader.resolve().parent.parent.parent
    return library if (library / et_registration.LIBRARY_CODEGEN_DIR).is_dir() else None


def check_pte(
    data: bytes, source: str, library: Path, reader: et_pte.ProgramReader
) -> et_checks.ModelResult:
    """Check the .pte bytes `data` against `library` as check_models.py does: operators the
    library does not register and argument counts that differ (`et_checks.check_model`),
    delegates to backends it does not register (`et_checks.check_backends`), and dtypes its
    kernels were built without (`et_dtypes.dtype_problems`).

    Returns:
        The result; `passed` False when the program would fail on the board.

    Raises:
        et_pte.EtPteError: the library's kernel registration, backends or dtype selection
            cannot be read.
    """
    kernels = et_registration.library_kernels(library)
    backends = et_registration.registered_backends(library)
    result = et_checks.check_program_bytes(source, source, data, reader, kernels, backends)
    kept = et_dtypes.library_dtypes(library)
    if result.error or not kept:
        return result
    program = et_pte.read_program(data, reader)
    counts = {(m.name, c.operator): c.arg_count for m in program.methods for c in m.kernel_calls}
    dtypes = et_dtypes.dtype_problems(et_dtypes.kernel_call_dtypes(data, reader), kept, counts)
    return replace(result, problems=(*result.problems, *dtypes)) if dtypes else result


def _absent_operators(operators: Sequence[str], library: Path) -> list[str]:
    """The `operators` that `library` does not register, in order; empty when its
    registration cannot be read (then nothing is left out).

    With --no-check, model.h still selects only what the library has: selecting an
    operator it lacks references an `et_arduino_register_<op>` no archive defines, and the
    sketch fails to link with an undefined reference instead of loading and failing in
    `Method::load` with OperatorMissing, which names each operator (ETModel's `error()`).
    """
    try:
        registered = et_registration.library_kernels(library)
    except et_pte.EtPteError:
        return []
    return [op for op in operators if op not in registered]


def _arena(
    data: bytes,
    source: str,
    program: et_pte.Program,
    reader: et_pte.ProgramReader,
    check: bool,
) -> tuple[int | None, str, int | None]:
    """`(arena_bytes, arena_note, host_arena_bytes)` for model.h (`et_arena.for_model_h`,
    `et_arena.host_arena_bytes`). A figure is left out only where model.h says why and the
    library's README says so: a program with a delegate (its backend's allocations are not
    in the program), or, with `check` False, external constants.

    Raises:
        Refused: the program reads but the arena replay cannot (a table or index the reader's
            first pass does not visit is out of range: a damaged or cut file), or, with `check`,
            it keeps constants outside the program (ETModel passes no .ptd: it cannot load).
    """
    try:
        arena_bytes, arena_note = et_arena.for_model_h(data, reader)
        # The 64-bit host's larger figure (the check's host run), as the build's headers have.
        host_bytes = et_arena.host_arena_bytes(data, reader) if arena_bytes is not None else None
    except et_pte.EtPteError as e:
        # Without the figure a sketch sized from <array>_arena_bytes does not compile.
        reason = str(e).replace("\n", " ").rstrip(".")
        raise Refused(
            f"{source} is damaged: the arena model.h declares cannot be computed ({reason}); "
            "nothing written: export the model again, or copy the file again if it was cut short"
        ) from None
    if arena_bytes is None and check and not any(m.delegates for m in program.methods):
        raise Refused(
            f"{source} would not load on the board: its arena is {arena_note}; nothing "
            "written: export it with its constants in the program (--no-check writes anyway)"
        )
    return arena_bytes, arena_note, host_bytes


@dataclass(frozen=True)
class Header:
    """A model.h made by `header_for`.

    Attributes:
        text: the header.
        summary: what it holds, for the line printed after writing it ("; methods forward;
            selects the kernels of 2 operators").
        library: the generated library holding the reader the program was read with (None:
            not read, or a reader outside a library); checked against it unless told not to.
        checked: the model check ran against `library` and passed.
    """

    text: str
    summary: str
    library: Path | None
    checked: bool = False


def header_for(
    data: bytes,
    *,
    source: str,
    name: str = et_model_h.MODEL_ARRAY,
    reader: Path | None = None,
    validate: bool = True,
    check: bool = True,
    all_kernels: bool = False,
    origins: Mapping[str, str] | None = None,
) -> Header:
    """The model.h for the .pte bytes `data` (`et_model_h.model_h`), after the model check.

    Args:
        data: the program. source: its name, for the banner and messages (one line).
        name: the C array name.
        reader: the program reader to read it with; None: DEFAULT_READER when present.
            Without one (or with `validate` False) the program is not read and the header
            registers every kernel of the library.
        check: check the program against the library holding the reader (`check_pte`)
            and refuse one that would fail on the board.
        all_kernels: register every kernel instead of selecting the program's.
        origins: operator -> the PyTorch construct it came from (export_model.py reads them
            from the exported graph), named in a refusal (`et_checks.problem_lines`).

    Raises:
        Refused: the program does not read, or reads but its arena cannot be replayed (a
            damaged file: model.h would lack `<name>_arena_bytes`; refused with `check`
            False too), would fail on the library (the message lists each problem with
            check_models.py's words; with `check`, constants outside the program too), or
            the library cannot be read.
        ValueError: `name` is not a C identifier, `source` spans lines, `data` is empty.
    """
    if reader is None and DEFAULT_READER.is_dir():
        reader = DEFAULT_READER
    if reader is None or not validate:
        text = et_model_h.model_h(data, name=name, source=source, all_kernels=True)
        return Header(text, "; operators not read: registers every kernel of the library", None)
    try:
        program_reader = et_pte.load_reader(reader)
        program = et_pte.read_program(data, program_reader)
    except et_pte.EtPteError as e:
        raise Refused(
            f"{source} is not a readable ExecuTorch program: {str(e).rstrip('.')}; nothing "
            "written: give the file ExecuTorch's exporter wrote (export it again if it was "
            "changed or cut short)"
        ) from None
    library = library_of(reader)
    if library is not None and check:
        try:
            result = check_pte(data, source, library, program_reader)
        except et_pte.EtPteError as e:
            raise Refused(
                f"cannot check {source} against {library}: {e} (--no-check writes the header "
                "without the check)"
            ) from None
        if not result.passed:
            lines = et_checks.problem_lines(result.problems, origins)
            problems = "\n".join(f"  {line}" for line in lines)
            raise Refused(
                f"{source} would not run on the library {library}; nothing written:\n{problems}"
                "\n(--no-check writes the header anyway)"
            )
    arena_bytes, arena_note, host_bytes = _arena(data, source, program, program_reader, check)
    ops = program.called_operators
    absent = _absent_operators(ops, library) if library is not None and not check else []
    methods = ", ".join(m.name for m in program.methods)
    arena = f"; arena {arena_bytes} bytes" if arena_bytes is not None else ""
    if all_kernels:
        operators, summary = None, f"; methods {methods}{arena}; every kernel of the library"
        summary += " (--all-kernels)"
    else:
        operators = [op for op in ops if op not in absent]
        summary = f"; methods {methods}{arena}; selects the kernels of {len(operators)} operators"
    if absent:
        summary += (
            f"; not in the library, so Method::load fails with OperatorMissing (0x14) naming "
            f"them: {', '.join(absent)} (--no-check)"
        )
    text = et_model_h.model_h(
        data,
        name=name,
        source=source,
        operators=operators,
        all_kernels=all_kernels,
        arena_bytes=arena_bytes,
        arena_note=arena_note or "the program was not read",
        host_arena_bytes=host_bytes,
    )
    return Header(text, summary, library, checked=library is not None and check)


# ---------------------------------------------------------------------------------------
# The installed executorch and the library's pin

#: The pip distribution whose exporter writes .pte files.
EXECUTORCH_DISTRIBUTION = "executorch"
#: `git_version: Optional[str] = '<sha>'` in the package's executorch/version.py, which
#: ExecuTorch's setup.py writes (`Version.write_to_python_file`, setup.py at cff6f4dd).
_GIT_VERSION = re.compile(r"""^git_version\b[^=]*=\s*['"](?P<sha>[0-9a-fA-F]{7,40})['"]""", re.M)
#: A release tag of ExecuTorch (v1.5.0, v1.5.0-rc2): a ref a release wheel is built from.
_RELEASE_TAG = re.compile(r"v?(?P<version>\d+\.\d+\.\d+)\Z")


@dataclass(frozen=True)
class Installed:
    """The installed `executorch` package: `version` (its metadata's, e.g. "1.5.1+cpu") and
    `commit` (the git_version its executorch/version.py records; None when it has none)."""

    version: str
    commit: str | None


def installed_executorch() -> Installed | None:
    """The installed `executorch` package, read from its metadata and its version.py as text
    (neither executorch nor torch is imported); None when it is not installed."""
    try:
        dist = importlib.metadata.distribution(EXECUTORCH_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None
    commit = None
    try:
        text = Path(str(dist.locate_file("executorch/version.py"))).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    match = _GIT_VERSION.search(text)
    if match:
        commit = match.group("sha").lower()
    return Installed(dist.version, commit)


@dataclass(frozen=True)
class Pin:
    """The ExecuTorch a library was built from: `commit` (executorch_pin.txt), `version`
    (the ref's version.txt: extras/library.json, else library.properties `version=`),
    `ref` (the name it was built from, "main" or "v1.5.0"; "" when not recorded)."""

    commit: str
    version: str
    ref: str


def library_pin(library: Path) -> Pin | None:
    """The pin of the generated library at `library`; None when it records none (no
    executorch_pin.txt)."""
    try:
        commit = (library / "executorch_pin.txt").read_text(encoding="utf-8").strip().lower()
    except (OSError, UnicodeDecodeError):
        return None
    version = ref = ""
    try:
        facts = json.loads((library / "extras" / "library.json").read_text(encoding="utf-8"))
        version = str(facts["executorch"]["upstream_version"])
        ref = str(facts["executorch"].get("ref", ""))
    except (OSError, ValueError, KeyError, TypeError):
        try:
            properties = (library / "library.properties").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            properties = ""
        found = re.search(r"^version=(.*)$", properties, re.M)
        version = found.group(1).strip() if found else ""
    return Pin(commit, version, ref)


#: What the model check said of the program, for `pin_message`: it found every kernel call
#: matching the library ("passed"), refused the program ("refused"), or did not run
#: ("unchecked": --no-check, or no library's reader to check with).
CHECK_OUTCOMES = ("passed", "refused", "unchecked")


def pin_message(library: Path, outcome: str, installed: Installed | None = None) -> str | None:
    """What to tell the user when the installed executorch (`installed_executorch()` unless
    given) was not built from `library`'s pin, given the model check's `outcome` (one of
    CHECK_OUTCOMES): one line starting "note: " (the check passed: nothing to do) or
    "warning: " (it refused the program, or did not run), ending in the one thing to do.
    None when the installed package was built from the pin, or when either is not known
    (nothing installed, or the library records no pin).

    The model check is the deciding evidence: it compares every kernel call of the program
    (operator, argument count, dtypes, delegates) with the library's kernels, so a program it
    passes runs whichever wheel exported it. Without a recorded commit, the package's version
    (without its +local part) is compared with the pin's version.

    Raises:
        ValueError: `outcome` is not one of CHECK_OUTCOMES.
    """
    if outcome not in CHECK_OUTCOMES:
        raise ValueError(f"outcome {outcome!r} is not one of {', '.join(CHECK_OUTCOMES)}")
    pin = library_pin(library)
    found = installed if installed is not None else installed_executorch()
    if pin is None or found is None or not pin.commit:
        return None
    if found.commit is not None:
        if pin.commit.startswith(found.commit) or found.commit.startswith(pin.commit):
            return None
    elif found.version.split("+")[0] == pin.version:
        return None
    built = f" (commit {found.commit[:12]})" if found.commit else ""
    mismatch = (
        f"the installed executorch {found.version}{built} is not this library's pin "
        f"(ExecuTorch {pin.version or 'version unknown'}, commit {pin.commit[:12]}, "
        f"{library / 'executorch_pin.txt'})"
    )
    if outcome == "passed":
        return (
            f"note: {mismatch}; the model check compared every kernel call of this program "
            "with the library and found none that differs, so it runs: nothing to install"
        )
    release = _RELEASE_TAG.match(pin.ref)
    if release:
        todo = f"pip install executorch=={release.group('version')}, the pin's own release"
    else:
        between = f" of {pin.ref}" if pin.ref else ""
        todo = (
            f"build the wheel from the pin (no release is built from a commit{between} "
            f"between releases): git checkout {pin.commit[:12]} in an ExecuTorch clone, then "
            "./install_executorch.sh"
        )
    if outcome == "refused":
        return (
            f"warning: {mismatch}, the likely cause of the refusal below; export with the "
            f"pin's exporter: {todo}"
        )
    return (
        f"warning: {mismatch}, and nothing checked this program's kernel calls against the "
        "library; check it with extras/tools/check_models.py MODEL.pte, which decides whether "
        f"it runs, and only if it refuses: {todo}"
    )


def print_pin_message(library: Path | None, outcome: str) -> None:
    """Print `pin_message(library, outcome)` to stderr, if there is one (none without a
    library)."""
    message = pin_message(library, outcome) if library is not None else None
    if message:
        print(message, file=sys.stderr)


def _parser() -> argparse.ArgumentParser:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pte", type=Path, metavar="MODEL.pte", help="the ExecuTorch program")
    parser.add_argument(
        "-o",
        "--output",
        default=et_model_h.MODEL_HEADER,
        help=f"header to write; - for stdout ({et_model_h.MODEL_HEADER})",
    )
    parser.add_argument(
        "--name", default=et_model_h.MODEL_ARRAY, help=f"C array name ({et_model_h.MODEL_ARRAY})"
    )
    parser.add_argument(
        "--reader",
        type=Path,
        default=None,
        help="a library's program reader to validate with, e.g. LIBRARY/extras/tools/"
        "pte_schema (default: pte_schema beside this script, when present); the program is "
        "checked against that library",
    )
    parser.add_argument(
        "--no-validate",
        action="store_true",
        help="embed without decoding (then the header registers every kernel of the library)",
    )
    parser.add_argument(
        "--no-check",
        action="store_true",
        help="write the header even when the model check finds that the program would fail "
        "on the library (for experts: e.g. a library about to be regenerated)",
    )
    parser.add_argument(
        "--all-kernels",
        action="store_true",
        help="register every kernel of the library, whatever the sketch's other model.h files "
        "select (for a sketch that also loads programs not embedded in a model.h, e.g. from "
        "an SD card)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 written, 1 bad input, 2 usage)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not et_model_h.is_c_identifier(args.name):
        parser.error(f"--name {args.name!r} is not a C identifier (letters, digits, _)")
    try:
        data = et_pte.read_pte(args.pte)
    except et_pte.PteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: cannot read {args.pte}: {e}", file=sys.stderr)
        return 1
    reader = args.reader or (DEFAULT_READER if DEFAULT_READER.is_dir() else None)
    library = library_of(reader) if reader is not None and not args.no_validate else None
    try:
        header = header_for(
            data,
            source=args.pte.name,
            name=args.name,
            reader=args.reader,
            validate=not args.no_validate,
            check=not args.no_check,
            all_kernels=args.all_kernels,
        )
    except Refused as e:
        print_pin_message(library, "refused")  # a different commit is the likely cause
        print(f"error: {e}", file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"error: cannot embed {args.pte}: {e}", file=sys.stderr)
        return 1
    print_pin_message(library, "passed" if header.checked else "unchecked")
    text, summary = header.text, header.summary
    if args.output == "-":
        sys.stdout.write(text)
    else:
        out = Path(args.output)
        try:
            if (folder := file_in_the_way(out)) is not None:
                raise NotADirectoryError(f"{folder} is a file, not a folder")
            write_atomically(out, text)
        except OSError as e:
            print(f"error: cannot write {out}: {e.strerror or e}", file=sys.stderr)
            return 1
        print(f"{out}: {args.name}[{len(data)}] from {args.pte.name}{summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
