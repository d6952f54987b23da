"""The job summary (`$GITHUB_STEP_SUMMARY`): the pull request and check report of a sync
that stands, or a failed sync's error. Writing is append-only and a failure to write is a
warning."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from generator.sync.body import workflow_token_note
from generator.sync.github import PullRequestResult


def append_step_summary(
    path: Path,
    pull: PullRequestResult,
    check_report: str,
    ci_note: bool,
    say: Callable[[str], None],
) -> None:
    """Append the pull request, (with `ci_note`) why CI did not run on it, and the check
    report to the step summary file (append mode: other steps' parts stay). A failure is a
    warning: the pull request stands."""
    note = f"{workflow_token_note()}\n\n" if ci_note else ""
    text = f"### Sync pull request [#{pull.number}]({pull.url})\n\n{note}{check_report.strip()}\n"
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        say(f"warning: could not append to the step summary {path}: {e}")


def append_failure(path: Path, text: str, say: Callable[[str], None]) -> None:
    """Append a failed sync's error (already redacted) to the step summary, in a code block
    (fenced longer than any backtick run in it, so nothing in it is read as Markdown). A
    failure to write is a warning: the error is what matters."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    block = f"### Sync failed\n\n{fence}text\n{text.strip()}\n{fence}\n"
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(block)
    except OSError as e:
        say(f"warning: could not append to the step summary {path}: {e}")
