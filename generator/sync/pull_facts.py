"""What the sync pull request's body says (`generator.sync.body.PullRequestFacts`), gathered by
comparing the regenerated tree with the base branch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from generator.boards.board_docs import boards_markdown
from generator.boards.budgets import UNO_Q
from generator.boards.linkmode_docs import link_modes_markdown
from generator.check.report import board_part
from generator.library.compare import instruction_rows, size_rows
from generator.library.facts import facts_in_folder
from generator.library.layout import CHECK_REPORT_FILE, PROPERTIES_FILE, PROVENANCE_FILE
from generator.library.properties import properties_version
from generator.pipeline.cmsis_nn_patches import UPSTREAM_REPORTS
from generator.pipeline.run import BuildResult
from generator.sync.body import PullRequestFacts, emulated_runs, workflow_token_note
from generator.sync.context import Clone, Run
from generator.sync.options import CheckReportLike
from generator.sync.upstream_stage import comparison_for
from generator.vcs import git as g
from generator.workflows.render import installed_drift


def pull_request_facts(
    run: Run,
    clone: Clone,
    built: BuildResult,
    branch: str,
    changes: list[tuple[str, str]],
    report: CheckReportLike,
    report_dict: dict[str, Any],
) -> PullRequestFacts:
    """Gather what the body says, comparing the regenerated tree with the base branch."""
    lib, base_rev, build = clone.lib, clone.base_rev, run.options.build
    base_facts = g.facts_at(lib, base_rev)
    base_report_text = g.file_at(lib, base_rev, CHECK_REPORT_FILE)
    base_report: dict[str, Any] | None = None
    if base_report_text:
        try:
            loaded = json.loads(base_report_text)
            base_report = loaded if isinstance(loaded, dict) else None
        except json.JSONDecodeError:
            base_report = None
    by_status: dict[str, list[str]] = {"A": [], "D": [], "M": []}
    for status, path in changes:
        by_status.setdefault(status, []).append(path)
    return PullRequestFacts(
        link_modes=link_modes_markdown(board_part(report_dict, UNO_Q.key)),
        boards=boards_markdown(report_dict),
        ref=built.ref,
        sha=built.sha,
        base_pin=base_facts.pin,
        upstream_version=built.upstream_version,
        library_version=built.library_version,
        base_version=properties_version(g.file_at(lib, base_rev, PROPERTIES_FILE)),
        op_set=list(built.op_set),
        kernels=list(facts_in_folder(built.out).kernels),
        base_kernels=list(base_facts.kernels),
        added=by_status["A"],
        removed=by_status["D"],
        changed=by_status["M"],
        check_markdown=report.to_markdown().strip(),
        check_passed=report.passed,
        sizes=size_rows(report_dict, base_report),
        instructions=instruction_rows(report_dict, base_report),
        runs=emulated_runs(report_dict),
        base_has_report=base_report is not None,
        branch=branch,
        base=run.options.base,
        ci_note=workflow_token_note() if run.options.workflow_token else None,
        workflow_drift=installed_drift(clone.worktree),
        upstream_reports=upstream_reports(built.out),
        # the prepare phase's comparison, checked (`upstream_stage`): no git runs here in the
        # build's cache, which the untrusted build may have written
        upstream=comparison_for(
            getattr(report, "upstream", None), base_facts.pin, built.sha, build.executorch_repo
        ),
    )


#: The line that opens extras/PROVENANCE.txt's list of patches (PROVENANCE.txt.jinja).
PATCHES_HEADER = "patches applied:"
#: The most of PROVENANCE.txt read for it (the file is a few KiB; the staged tree is untrusted).
MAX_PROVENANCE_BYTES = 1 << 20


def upstream_reports(library: Path) -> list[tuple[str, str]]:
    """(patch name, report) for each patch that `library`'s extras/PROVENANCE.txt lists as
    applied and that has an upstream report (`UPSTREAM_REPORTS`, the generator's own text:
    the staged file only chooses which reports show), in the file's order; [] when the file
    is missing, too big, or lists none."""
    path = library / PROVENANCE_FILE
    try:
        if path.is_symlink() or path.stat().st_size > MAX_PROVENANCE_BYTES:
            return []
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    names: list[str] = []
    if PATCHES_HEADER in lines:
        for line in lines[lines.index(PATCHES_HEADER) + 1 :]:
            if not line.startswith("  "):
                break
            names.append(line.strip().split(":", 1)[0])
    return [
        (name, UPSTREAM_REPORTS[name]) for name in dict.fromkeys(names) if name in UPSTREAM_REPORTS
    ]
