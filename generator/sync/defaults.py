"""The real back ends of `generator.sync.run.run_sync`: the build (`generator.pipeline.run`),
the check (`generator.check.run`, one board or several as one `BoardsReport`) and GitHub
(`generator.sync.github.GitHubRepo`), and the two output streams (progress on stderr, results
on stdout). Tests and the two phases (`generator.sync.phases`) pass their own."""

from __future__ import annotations

import sys
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.boards.budgets import UNO_Q, board_keys, check_boards
from generator.check.compile import CompileResult
from generator.check.report import CheckReport, board_data
from generator.check.run import run_check
from generator.check.run_sketch import RunOutput
from generator.pipeline.run import BuildOptions, BuildResult, build_library
from generator.sync.app import AppCredentials
from generator.sync.github import GitHubRepo
from generator.sync.options import CheckReportLike, SyncOptions
from generator.util.errors import FatalError
from generator.util.workflow_commands import shown


def default_build(options: BuildOptions, out: Path) -> BuildResult:
    """`generator.pipeline.run.build_library` into `out` (errors: its FatalErrors)."""
    return build_library(options, out)


def sync_board_keys(values: Collection[str]) -> list[str]:
    """The keys of the boards sync checks, in order: `values` as `check --board` takes them
    (`generator.check.run.board_keys`: keys of `check_boards()`, `all` for every one).

    Raises:
        FatalError: a key the board table lacks, or no `unoq` among them (the pull request's
            link-modes section and the examples' header comments are the UNO Q's).
    """
    keys = board_keys(list(values), check_boards())
    if UNO_Q.key not in keys:
        raise FatalError(
            "sync writes the link-modes section and the examples' header comments from the "
            f"UNO Q's check: add {UNO_Q.key} to --board (e.g. --board {UNO_Q.key},{keys[0]}, "
            "or all)"
        )
    return keys


@dataclass(frozen=True)
class BoardsReport:
    """The check of several boards as one report (`CheckReportLike`): each board's
    `CheckReport` by key, in the order checked; its JSON is `board_data`'s."""

    reports: list[tuple[str, CheckReport]]

    @property
    def passed(self) -> bool:
        return all(report.passed for _, report in self.reports)

    def to_markdown(self) -> str:
        return "\n".join(report.to_markdown() for _, report in self.reports)

    def to_dict(self) -> dict[str, Any]:
        return board_data(self.reports, check_boards())


def default_check(library: Path, options: SyncOptions) -> CheckReportLike:
    """`generator.check.run.run_check` of `library` on the boards of `options.boards`
    (`sync_board_keys`): the UNO Q alone gives its own report, as sync always committed it;
    several give a `BoardsReport`, their host runs shared (one `host_runs` dict).

    Raises:
        FatalError: the boards are refused (`sync_board_keys`), or the check's own.
    """
    keys = sync_board_keys(options.boards)
    examples = list(options.build.examples) if options.build.examples else None
    if keys == [UNO_Q.key]:
        # The one report as sync always committed it (no "boards", no per-entry "board").
        return run_check(
            library,
            examples=examples,
            compiler=options.compiler,
            run=options.run,
            cache_dir=options.build.cache_dir,
        )
    table = check_boards()
    host_runs: dict[str, tuple[CompileResult, RunOutput | None]] = {}
    return BoardsReport(
        [
            (
                key,
                run_check(
                    library,
                    examples=examples,
                    compiler=options.compiler,
                    run=options.run,
                    cache_dir=options.build.cache_dir,
                    board=table[key],
                    host_runs=host_runs,
                ),
            )
            for key in keys
        ]
    )


def default_connect(api_url: str, repo: str, credentials: str | AppCredentials) -> GitHubRepo:
    """The library repo on GitHub at `api_url` (`GitHubRepo`, its retries said on stderr)."""
    return GitHubRepo(api_url, repo, credentials, say=to_stderr)


def to_stderr(text: str) -> None:
    """A progress line, on stderr (flushed), as `generator.util.workflow_commands.shown`
    prints untrusted text (a line may quote a ref's file or operator names)."""
    print(shown(text), file=sys.stderr, flush=True)


def to_stdout(text: str) -> None:
    """A result for the user, on stdout (flushed), through `shown` as `to_stderr`."""
    print(shown(text), flush=True)
