"""`python -m generator workflows`: install or check the library repo's workflows."""

from __future__ import annotations

import argparse


def add_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `workflows` verb's options."""
    from generator.workflows.install import add_workflows_parser

    add_workflows_parser(verbs)


def run(args: argparse.Namespace) -> int:
    """`python -m generator workflows`."""
    from generator.workflows.install import workflows

    return workflows(args)
