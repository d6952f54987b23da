"""Lint and check before anything is pushed: the library repo's tree linted as the Library
Manager will, the built library checked and its report written as committed; and the
escaping of text from the untrusted check before it reaches an Actions log."""

from __future__ import annotations

import json
from typing import Any

from generator.boards.budgets import UNO_Q
from generator.boards.linkmode_docs import update_sketches
from generator.check.report import board_part
from generator.library.layout import CHECK_REPORT_FILE, GENERATED_PATHS
from generator.lint.run import lint_library
from generator.pipeline.run import BuildResult
from generator.sync.committed_report import committed_report
from generator.sync.context import Clone, Run
from generator.sync.options import CheckReportLike
from generator.util.cache import default_cache_dir
from generator.util.errors import FatalError
from generator.util.workflow_commands import no_workflow_commands, shown
from generator.vcs import git as g

__all__ = ["check_built", "lint_clone", "no_workflow_commands", "shown"]


def lint_clone(run: Run, clone: Clone, built: BuildResult) -> None:
    """Lint the library repo's work tree as the Library Manager will.

    Raises:
        FatalError: a finding (the findings are emitted first).
    """
    run.say("linting the library repo as the Library Manager will")
    linted = lint_library(clone.worktree)
    if not linted.passed:
        run.emit(shown(linted.to_markdown()))
        raise FatalError(
            f"the library repo with ExecuTorch {built.sha[:12]} fails {linted.counts()} of the "
            "Library Manager's rules (printed above; `python -m generator lint` names each "
            "rule), so the Library Manager would not publish it; no pull request was opened "
            "or updated"
        )


def check_built(
    run: Run, clone: Clone, built: BuildResult
) -> tuple[CheckReportLike, dict[str, Any]]:
    """Check the built library, write its report as committed into the work tree and stage
    it; returns the report and that committed form.

    Raises:
        FatalError: the check failed (the report is emitted first).
    """
    run.say("checking the regenerated library")
    report = run.check(built.out, run.options)
    # The library's own report names it relative to itself and holds nothing that changes
    # from run to run (times, cache counts, this machine's paths), so re-syncing an unchanged
    # ref writes the same file.
    roots = {
        built.out: ".",
        run.work: "<work>",
        run.options.build.cache_dir or default_cache_dir(): "<cache>",
    }
    report_dict = committed_report(report.to_dict(), roots)
    for part in (report_dict, report_dict.get("model_check")):
        if isinstance(part, dict) and "library" in part:
            part["library"] = "."
    report_path = clone.worktree / CHECK_REPORT_FILE
    report_path.parent.mkdir(parents=True, exist_ok=True)
    report_path.write_text(json.dumps(report_dict, indent=2, sort_keys=True) + "\n")
    # What each core's loader does with each example goes into its header comment: the UNO
    # Q's verdicts (the comment names no board).
    update_sketches(clone.worktree / "examples", board_part(report_dict, UNO_Q.key))
    if not report.passed:
        run.emit(shown(report.to_markdown()))
        raise FatalError(
            f"check failed for ExecuTorch {built.ref} ({built.sha[:12]}); no pull request "
            "was opened or updated (the report is printed above)"
        )
    g.stage(clone.lib, GENERATED_PATHS, run.genv)
    return report, report_dict
