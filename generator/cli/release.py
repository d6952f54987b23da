"""`python -m generator release`: tag `v<version>` on the library repo."""

from __future__ import annotations

import argparse


def add_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `release` verb's options."""
    from generator.release.run import add_release_parser

    add_release_parser(verbs)


def run(args: argparse.Namespace) -> int:
    """`python -m generator release`."""
    from generator.release.run import release

    return release(args)
