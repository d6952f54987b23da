"""`python -m generator workflows`: install or check the library repo's workflows
(`generator.workflows`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from generator.util.errors import FatalError


def add_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `workflows` verb's options."""
    workflows = verbs.add_parser(
        "workflows",
        help="install the library repo's GitHub workflows (sync, CI, release), pinned to this "
        "generator",
    )
    workflows.add_argument(
        "library",
        type=Path,
        nargs="?",
        metavar="LIBRARY_REPO_DIR",
        help="checkout of the library repo (not with --outdated)",
    )
    workflows.add_argument(
        "--generator-repo",
        metavar="URL",
        help="https git URL the workflows fetch the generator from (default: the origin "
        "remote of this generator's checkout)",
    )
    workflows.add_argument(
        "--generator-ref",
        metavar="SHA",
        help="full commit SHA of the generator the workflows run (default: HEAD of this "
        "generator's checkout, which must be clean)",
    )
    workflows.add_argument(
        "--allow-dirty",
        action="store_true",
        help="pin HEAD even when this checkout has uncommitted changes (they are not in HEAD)",
    )
    workflows.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 and list the workflows that are missing or differ",
    )
    outdated = workflows.add_argument_group(
        "pins", "--outdated: the templates' pins against their newest releases"
    )
    outdated.add_argument(
        "--outdated",
        action="store_true",
        help="list every pin of the templates (actions, arduino-cli, arduino-lint, the core, "
        "the library) with its newest release; exit 1 when one is older, an action's SHA "
        "is not its tag's commit or a pin is not in a shape it can check, 2 when a source "
        "cannot be read (token from GITHUB_TOKEN, optional)",
    )
    outdated.add_argument(
        "--api-url",
        metavar="URL",
        help="GitHub REST API root (default: https://api.github.com)",
    )
    outdated.add_argument(
        "--package-index",
        metavar="URL",
        help="Arduino package index, .json, .gz or .tar.bz2 (default: "
        "https://downloads.arduino.cc/packages/package_index.tar.bz2)",
    )
    outdated.add_argument(
        "--library-index",
        metavar="URL",
        help="Library Manager index, .json, .gz or .tar.bz2 (default: "
        "https://downloads.arduino.cc/libraries/library_index.tar.bz2)",
    )


def run(args: argparse.Namespace) -> int:
    """`python -m generator workflows`: `generator.workflows.install.report_outdated` with
    `--outdated`, else `install_workflows` into LIBRARY_REPO_DIR.

    Returns:
        the runner's exit code (0, or 1 when something is out of date).
    Raises:
        FatalError: options that do not go together (LIBRARY_REPO_DIR or --check with
            --outdated, the index and API options without it), no LIBRARY_REPO_DIR; and the
            runners' failures.
    """
    from generator.workflows.install import install_workflows, report_outdated

    if args.outdated:
        if args.library is not None or args.check:
            raise FatalError(
                "--outdated reads the generator's own templates: it takes no LIBRARY_REPO_DIR "
                "and no --check"
            )
        return report_outdated(
            api_url=args.api_url,
            package_index=args.package_index,
            library_index=args.library_index,
        )
    given = [
        flag
        for flag, value in (
            ("--api-url", args.api_url),
            ("--package-index", args.package_index),
            ("--library-index", args.library_index),
        )
        if value
    ]
    if given:
        raise FatalError(f"{', '.join(given)} go with --outdated only")
    if args.library is None:
        raise FatalError(
            "pass LIBRARY_REPO_DIR, the library repo's checkout (or --outdated to report pins)"
        )
    return install_workflows(
        args.library,
        generator_repo=args.generator_repo,
        generator_ref=args.generator_ref,
        allow_dirty=args.allow_dirty,
        check=args.check,
    )
