#!/usr/bin/env python3
"""Check a library's example models against the kernels the library registers.

    python3 extras/tools/check_models.py LIBRARY_DIR [--example NAME] [--pte FILE] [--json]

A .pte records, for every kernel call, the operator and the values it passes. The library's
generated kernel registration (src/executorch/codegen/) registers each operator with a
wrapper that accepts exactly N values. An operator the library lacks fails Method::load
with OperatorMissing (0x14); a count that differs fails Method::execute with InvalidProgram
(0x23). Both happen when the model and the library come from different ExecuTorch commits.
A model lowered to a delegate backend (XNNPACK, ...) that the library does not register fails
Method::load with NotFound (0x20). A library built for only some dtypes (the generator's
--dtypes or --dtypes-from-pte) aborts at Method::execute when a kernel call passes a tensor
of a dtype its kernel was built without ("dtype '<n>' not selected for operator <name>").
This finds them in a second, with no board and no toolchain.

Each example's model is read back from its model.h (or give .pte files with --pte) and
read through the library's own program reader (extras/tools/pte_schema/, generated from its
extras/schema/). Exit status: 0 when every model matches, 1 when any does not, 2 when the
library itself cannot be read.

Python standard library only (and the library's reader); runs from any working directory.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import et_checks  # these from this script's own folder (sys.path above)
import et_dtypes
import et_pte


class _ListAction(argparse.Action):
    """Comma-separated and/or repeated values, like every list option of the generator."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        current: list[str] = list(getattr(namespace, self.dest, None) or [])
        for part in str(values).split(","):
            part = part.strip()
            if part and part not in current:
                current.append(part)
        setattr(namespace, self.dest, current)


def _print_text(library: Path, results: list[et_checks.ModelResult]) -> None:
    for r in results:
        if r.error:
            print(f"FAIL {r.name}: {r.error}")
            continue
        status = "ok  " if r.passed else "FAIL"
        ops = ", ".join(r.operators) or "no kernel calls"
        delegates = f"; delegates to {', '.join(r.delegates)}" if r.delegates else ""
        print(f"{status} {r.name}: {r.kernel_calls} kernel calls ({ops}){delegates}")
        for line in et_checks.problem_lines(r.problems):
            print(f"       {line}")
    failed = [r.name for r in results if not r.passed]
    if failed:
        print(f"\n{len(failed)} of {len(results)} models do not match {library}")
    else:
        print(f"\n{len(results)} models match {library}")


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 all match, 1 a mismatch, 2 unreadable library)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("library", type=Path, metavar="LIBRARY_DIR", help="library root")
    parser.add_argument(
        "--example",
        action=_ListAction,
        default=None,
        metavar="NAME",
        help="check only these examples (comma-separated; the option may be repeated)",
    )
    parser.add_argument(
        "--pte",
        action=_ListAction,
        default=None,
        metavar="FILE",
        help="check these .pte files instead of the examples' model.h "
        "(comma-separated; the option may be repeated)",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    if args.example and args.pte:
        parser.error("give --example or --pte, not both")

    try:
        results = et_checks.check_library(args.library, args.example, args.pte)
        results = et_dtypes.add_dtype_problems(args.library, results)
    except et_pte.EtPteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    passed = all(r.passed for r in results)
    if args.json:
        doc = {
            "library": str(args.library),
            "passed": passed,
            "models": [r.to_dict() for r in results],
        }
        print(json.dumps(doc, indent=2))
    else:
        _print_text(args.library, results)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
