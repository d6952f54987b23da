"""What an example's run must print: the `expected.yaml` beside each sketch.

Format (written by the library template, shipped with every generated library so that
`check` works on any copy of it)::

    must_print: [exact lines]            # each must appear as a whole line
    must_not_print: [substrings]         # none may appear anywhere in the output
    arena: true                          # optional: sketch prints "Arena: used N of M bytes"
    timeout_seconds: 60                  # optional: the run is over at "=== DONE ==="
    values:                              # optional: numbers within a tolerance
      - {line_regex: '...(group 1)...', equals: 8.95, tolerance: 0.01}

A sketch checked with `check --sketch` may have no such file: `sketch.py` then builds an
`Expected` with `until_done=False` (the run ends at its timeout, not at `=== DONE ===`),
and `--expect TEXT` adds to `contains` either way.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from generator.library.layout import EXAMPLE_EXPECT_FILE
from generator.util.errors import FatalError

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
    """One example's expectations (see the module docstring for the file format).

    Attributes:
        must_print, must_not_print, arena, timeout_seconds, values: the file's keys.
        contains: substrings each of which some line must contain (`check --sketch
            --expect TEXT`; no key of the file).
        until_done: True: the run must end with `=== DONE ===` (every example's file);
            False (a sketch without the file): the timeout is the run's normal end.
    """

    must_print: tuple[str, ...]
    must_not_print: tuple[str, ...] = ()
    arena: bool = False
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    values: tuple[ValueCheck, ...] = ()
    contains: tuple[str, ...] = ()
    until_done: bool = True


def _strings(
    data: dict[str, Any], key: str, path: Path, *, required: bool = False
) -> tuple[str, ...]:
    raw = data.get(key)
    if raw is None:
        if not required:
            return ()
        raise FatalError(
            f"{path}: `{key}` is required: list the lines the run must print (e.g. "
            f"{DONE_LINE!r}); without it nothing is checked"
        )
    if not isinstance(raw, list) or not all(isinstance(s, str) for s in raw):
        raise FatalError(f"{path}: `{key}` must be a list of strings; fix the file")
    if required and not raw:
        raise FatalError(
            f"{path}: `{key}` must list at least one line the run prints (e.g. "
            f"{DONE_LINE!r}); without it nothing is checked"
        )
    return tuple(raw)


def _number(value: object, what: str, path: Path, *, minimum: float | None = None) -> float:
    """`value` as a finite float; booleans, strings, NaN and infinities are refused."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise FatalError(f"{path}: `{what}` must be a finite number, not {value!r}; fix the file")
    if minimum is not None and value < minimum:
        raise FatalError(f"{path}: `{what}` must be >= {minimum:g}, not {value!r}; fix the file")
    return float(value)


def _value_checks(raw: object, path: Path) -> tuple[ValueCheck, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        raise FatalError(
            f"{path}: `values` must be a list of mappings "
            "({line_regex: ..., equals: ..., tolerance: ...}), not "
            f"{raw!r}; fix the file"
        )
    checks = []
    for i, item in enumerate(raw):
        unknown = set(item) - {"line_regex", "equals", "tolerance"}
        if unknown or "line_regex" not in item or "equals" not in item:
            raise FatalError(
                f"{path}: `values[{i}]` needs line_regex and equals (and optional tolerance), "
                f"has {sorted(map(str, item))}; fix the file"
            )
        regex = item["line_regex"]
        if not isinstance(regex, str):
            raise FatalError(f"{path}: `values[{i}].line_regex` must be a string; fix the file")
        try:
            re.compile(regex)
        except re.error as e:
            raise FatalError(
                f"{path}: `values[{i}].line_regex` is not a valid regex ({e})"
            ) from None
        checks.append(
            ValueCheck(
                line_regex=regex,
                equals=_number(item["equals"], f"values[{i}].equals", path),
                tolerance=_number(
                    item.get("tolerance", 0.0), f"values[{i}].tolerance", path, minimum=0.0
                ),
            )
        )
    return tuple(checks)


def read_expected(sketch_dir: Path) -> Expected:
    """Read `<sketch_dir>/expected.yaml`.

    Raises:
        FatalError: the file is missing, cannot be read, not UTF-8 or does not follow the
            format (a
            number that is a boolean, a string, NaN or infinite; a negative tolerance;
            `arena` not a boolean; `values` not a list of mappings; `must_print` absent
            or empty).
    """
    path = sketch_dir / EXAMPLE_EXPECT_FILE
    if not path.is_file():
        raise FatalError(
            f"{path} is missing: every example ships what its run must print; "
            "regenerate the library or add the file"
        )
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except UnicodeDecodeError as e:
        raise FatalError(f"{path} is not UTF-8 text ({e}); save it as UTF-8") from None
    except yaml.YAMLError as e:
        raise FatalError(f"{path} is not valid YAML: {e}") from None
    except OSError as e:
        raise FatalError(
            f"{path}: cannot read it ({e.strerror or e}); fix its permissions"
        ) from None
    if not isinstance(data, dict):
        raise FatalError(f"{path} must be a mapping (must_print, must_not_print, ...)")
    unknown = set(data) - {"must_print", "must_not_print", "arena", "timeout_seconds", "values"}
    if unknown:
        raise FatalError(
            f"{path}: unknown keys {sorted(map(str, unknown))}; see the format in its header"
        )
    timeout = _number(data.get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS), "timeout_seconds", path)
    if timeout <= 0:
        raise FatalError(f"{path}: `timeout_seconds` must be a positive number; fix the file")
    arena = data.get("arena", False)
    if not isinstance(arena, bool):
        raise FatalError(f"{path}: `arena` must be true or false, not {arena!r}; fix the file")
    return Expected(
        must_print=_strings(data, "must_print", path, required=True),
        must_not_print=_strings(data, "must_not_print", path),
        arena=arena,
        timeout_seconds=timeout,
        values=_value_checks(data.get("values"), path),
    )
