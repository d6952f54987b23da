#!/usr/bin/env python3
"""Turn an ExecuTorch .pte into the model.h a sketch includes.

    python3 extras/tools/pte_to_header.py MODEL.pte [-o model.h] [--name model_pte]

The header declares `alignas(16) const uint8_t model_pte[]` (plain read-only data, kept in
flash by every Arduino core) and `model_pte_size`, then selects the kernels of the operators
the program calls: a sketch links and registers only those (see "Kernel selection" in the
library's README; `--all-kernels` registers every kernel instead). When this script sits in a
generated library, the .pte is first read through the library's program reader (pte_schema/ beside
this script, generated from extras/schema/), so a file that is not an ExecuTorch program is
refused instead of silently embedded.

Python standard library only (and the reader beside it); runs from any working directory.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import et_checks  # these from this script's own folder (sys.path above)
import et_model_h
import et_pte
import et_registration

#: The program reader beside this script in a generated library (extras/tools/pte_schema/).
DEFAULT_READER = Path(__file__).resolve().parent / "pte_schema"


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same folder (no half files)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    umask = os.umask(0)
    os.umask(umask)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            os.fchmod(f.fileno(), 0o666 & ~umask)  # as open() would make it, not 0600
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def to_header(buffer: bytes, name: str = et_model_h.MODEL_ARRAY, source: str = "a .pte") -> str:
    """The model.h text for the .pte bytes `buffer`, selecting the kernels it calls when the
    library's program reader sits beside this script (as `main` writes it by default).

    The ref's export_model.py, shipped beside this script, imports it under this name.

    Raises:
        ValueError: `name` is not a C identifier, `source` spans lines, `buffer` is empty,
            or (with the reader present) `buffer` is not a readable program.
    """
    operators = None  # not read: the header registers every kernel
    if DEFAULT_READER.is_dir():
        try:
            program = et_pte.read_program(buffer, et_pte.load_reader(DEFAULT_READER))
        except et_pte.EtPteError as e:
            raise ValueError(f"{source} is not a readable ExecuTorch program: {e}") from None
        operators = program.called_operators
    return et_model_h.model_h(
        buffer, name=name, source=source, operators=operators, all_kernels=operators is None
    )


def _not_in_library(operators: list[str], reader: Path) -> list[str]:
    """The `operators` that the library holding `reader` (its extras/tools/pte_schema)
    does not register; none when `reader` is not inside a library (no src/ two levels up)."""
    library = reader.resolve().parent.parent.parent
    if not (library / et_registration.LIBRARY_CODEGEN_DIR).is_dir():
        return []
    try:
        registered = et_registration.library_kernels(library)
    except et_pte.EtPteError:
        return []  # check_models.py reports an unreadable registration
    return [op for op in operators if op not in registered]


class _Refused(Exception):
    """The .pte cannot be embedded; the message says why (printed after "error: ")."""


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
        "pte_schema (default: pte_schema beside this script, when present)",
    )
    parser.add_argument(
        "--no-validate",
        action="store_true",
        help="embed without decoding (then the header registers every kernel of the library)",
    )
    parser.add_argument(
        "--all-kernels",
        action="store_true",
        help="register every kernel of the library, whatever the sketch's other model.h files "
        "select (for a sketch that also loads programs not embedded in a model.h, e.g. from "
        "an SD card)",
    )
    return parser


def _selection(args: argparse.Namespace, data: bytes) -> tuple[list[str] | None, bool, str]:
    """What the header selects for the .pte bytes `data`: (operators, all_kernels, summary),
    as `et_model_h.model_h` takes them, and the end of the line printed.

    Without a reader (or with --no-validate) the program is not read: every kernel.

    Raises:
        _Refused: the program does not read, or calls operators the library lacks.
    """
    reader = args.reader or (DEFAULT_READER if DEFAULT_READER.is_dir() else None)
    if reader is None or args.no_validate:
        return None, True, "; operators not read: registers every kernel of the library"
    try:
        program = et_pte.read_program(data, et_pte.load_reader(reader))
    except et_pte.EtPteError as e:
        raise _Refused(f"{args.pte} is not a readable ExecuTorch program: {e}") from None
    ops = program.called_operators
    missing = _not_in_library(ops, reader)
    if missing:
        raise _Refused(
            f"{args.pte} calls {', '.join(missing)}, which this library does not "
            f"register: {et_checks.MISSING_CAUSE}"
        )
    methods = ", ".join(m.name for m in program.methods)
    if args.all_kernels:
        return None, True, f"; methods {methods}; every kernel of the library (--all-kernels)"
    return ops, False, f"; methods {methods}; selects the kernels of {len(ops)} operators"


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 written, 1 bad input, 2 usage)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not et_model_h.is_c_identifier(args.name):
        parser.error(f"--name {args.name!r} is not a C identifier (letters, digits, _)")
    try:
        data = args.pte.read_bytes()
    except OSError as e:
        print(f"error: cannot read {args.pte}: {e}", file=sys.stderr)
        return 1
    try:
        operators, all_kernels, summary = _selection(args, data)
        text = et_model_h.model_h(
            data,
            name=args.name,
            source=args.pte.name,
            operators=operators,
            all_kernels=all_kernels,
        )
    except _Refused as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"error: cannot embed {args.pte}: {e}", file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(text)
    else:
        out = Path(args.output)
        write_atomically(out, text)
        print(f"{out}: {args.name}[{len(data)}] from {args.pte.name}{summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
