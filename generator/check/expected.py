"""What an example's run must print: the `expected.yaml` beside each sketch.

Format (written by the library template, shipped with every generated library so that
`check` works on any copy of it)::

    must_print: [exact lines]            # each must appear as a whole line
    must_not_print: [substrings]         # none may appear anywhere in the output
    arena: true                          # optional: sketch prints "Arena: used N of M bytes"
    timeout_seconds: 60                  # optional: the run is over at "=== DONE ==="
    values:                              # optional: numbers within a tolerance
      - {line_regex: '...(group 1)...', equals: 8.95, tolerance: 0.01}
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from generator.errors import FatalError
from generator.layout import EXAMPLE_EXPECT_FILE

DEFAULT_TIMEOUT_SECONDS = 60.0
#: The line every sketch prints when it has finished; the run stops reading there.
DONE_LINE = "=== DONE ==="


@dataclass(frozen=True)
class ValueCheck:
    """A number the output must contain.

    Attributes:
        line_regex: Python regex searched in each output line; group 1 (or the whole
            match when the regex has no group) is the number.
        equals: expected value; tolerance: largest allowed absolute difference.
    """

    line_regex: str
    equals: float
    tolerance: float


@dataclass(frozen=True)
class Expected:
    """One example's expectations (see the module docstring for the file format)."""

    must_print: tuple[str, ...]
    must_not_print: tuple[str, ...] = ()
    arena: bool = False
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    values: tuple[ValueCheck, ...] = ()


def _strings(data: dict[str, Any], key: str, path: Path) -> tuple[str, ...]:
    raw = data.get(key) or []
    if not isinstance(raw, list) or not all(isinstance(s, str) for s in raw):
        raise FatalError(f"{path}: `{key}` must be a list of strings; fix the file")
    return tuple(raw)


def read_expected(sketch_dir: Path) -> Expected:
    """Read `<sketch_dir>/expected.yaml`.

    Raises:
        FatalError: the file is missing or does not follow the format.
    """
    path = sketch_dir / EXAMPLE_EXPECT_FILE
    if not path.is_file():
        raise FatalError(
            f"{path} is missing: every example ships what its run must print; "
            "regenerate the library or add the file"
        )
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as e:
        raise FatalError(f"{path} is not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise FatalError(f"{path} must be a mapping (must_print, must_not_print, ...)")
    unknown = set(data) - {"must_print", "must_not_print", "arena", "timeout_seconds", "values"}
    if unknown:
        raise FatalError(f"{path}: unknown keys {sorted(unknown)}; see the format in its header")
    values = []
    for item in data.get("values") or []:
        try:
            check = ValueCheck(
                line_regex=str(item["line_regex"]),
                equals=float(item["equals"]),
                tolerance=float(item.get("tolerance", 0.0)),
            )
            re.compile(check.line_regex)
        except (KeyError, TypeError, ValueError, re.error) as e:
            raise FatalError(
                f"{path}: each of `values` needs line_regex (a valid regex), equals and "
                f"tolerance numbers ({e})"
            ) from None
        values.append(check)
    timeout = data.get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS)
    if not isinstance(timeout, int | float) or timeout <= 0:
        raise FatalError(f"{path}: timeout_seconds must be a positive number")
    return Expected(
        must_print=_strings(data, "must_print", path),
        must_not_print=_strings(data, "must_not_print", path),
        arena=bool(data.get("arena", False)),
        timeout_seconds=float(timeout),
        values=tuple(values),
    )
