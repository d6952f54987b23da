"""One way to pass several values to an option, the same in every command.

Every list option accepts comma-separated values, may be repeated, or both:
`--ops a,b --ops c` is `[a, b, c]`. Empty items are dropped, but an option given with no
value at all (`--example ""`) is refused rather than read as "no filter"; order is kept;
duplicates are removed (first one wins).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any


class ListAction(argparse.Action):
    """argparse action that accumulates comma-separated values across repeats."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        current: list[str] = list(getattr(namespace, self.dest, None) or [])
        raw = [values] if isinstance(values, str) else list(values or [])
        parts = [part.strip() for item in raw for part in str(item).split(",")]
        if not any(parts):
            # `--example ""` (an unset shell variable) would otherwise mean "no filter": all.
            parser.error(f"{option_string} was given no value; name at least one or leave it out")
        for part in parts:
            if part and part not in current:
                current.append(part)
        setattr(namespace, self.dest, current)


def add_list_option(
    parser: argparse.ArgumentParser | Any, *flags: str, metavar: str, help: str, **kw: Any
) -> None:
    """Add a list option that follows the project's one convention (see module docstring)."""
    parser.add_argument(
        *flags,
        action=ListAction,
        metavar=metavar,
        default=None,
        help=f"{help} (comma-separated; the option may be repeated)",
        **kw,
    )
