"""The types of option values every verb shares: checked by argparse, so a wrong value exits 2
with argparse's message before any work starts."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path


def path(text: str) -> Path:
    """A path option's value: not empty nor only spaces (else argparse's error).

    `Path("")` is `Path(".")`: an empty `--cache-dir ''` (an unset variable in a script)
    would silently mean the current folder.
    """
    if not text.strip():
        raise argparse.ArgumentTypeError(
            f"{text!r} is empty; give a path (the current folder is '.')"
        )
    return Path(text)


def git_text(what: str) -> Callable[[str], str]:
    """The type of an option's value that reaches git or an HTTP request (`what`: "a git
    URL", "a branch, tag or SHA"): not empty nor only spaces (an empty --remote or --api-url
    would silently mean the default; an empty --executorch-repo reached git and made a cache
    entry), no leading or trailing space, not starting with '-' (git would read an option)."""

    def check(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"{text!r} is empty; give {what}")
        if text.startswith("-"):
            raise argparse.ArgumentTypeError(
                f"{text!r} starts with '-', which git would read as an option; give {what}"
            )
        if text != text.strip():
            raise argparse.ArgumentTypeError(
                f"{text!r} starts or ends with a space; give {what} without them"
            )
        return text

    return check


def _board_keys() -> list[str]:
    from generator.boards.budgets import check_boards

    return list(check_boards())


def board_list(text: str) -> str:
    """`--board`'s value: comma-separated keys of `check_boards()` or `all`, checked here so a
    wrong one exits 2 as argparse's choices do (`ListAction` splits the value)."""
    keys = _board_keys()
    for part in (p.strip() for p in text.split(",")):
        if part and part != "all" and part not in keys:
            raise argparse.ArgumentTypeError(
                f"invalid choice: {part!r} (choose from {', '.join(keys)}, or all)"
            )
    return text


def positive_seconds(text: str) -> float:
    """`--timeout`'s value: a finite number of seconds above 0 (else argparse's error)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of seconds above 0")
    return value
