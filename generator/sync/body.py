"""The sync pull request: its title and body (Markdown), rendered from facts gathered by sync.

Rendering is a pure step: `PullRequestFacts` in, text out (the Jinja2 template
`data/templates/github/pr_body.md.jinja`, in `generator.pipeline.render`'s one environment).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from generator.library.compare import (
    INSTRUCTIONS_NOTE,
    UPSTREAM_COMMIT,
    UPSTREAM_COMPARE,
    SizeRow,
    instruction_table,
    kernels_only_in,
    size_table,
)
from generator.sync.upstream import UpstreamChanges, is_sha, upstream_markdown
from generator.util.errors import FatalError
from generator.util.markdown import code_fence, inline_code, signed
from generator.util.templates import render

#: The pull request body's template (in data/templates/github/).
PULL_REQUEST_TEMPLATE = "pr_body.md.jinja"

#: How much of each emulated run the PR body shows (lines, and characters per line).
MAX_LINES = 40
MAX_LINE = 200

#: The longest body GitHub takes: it refuses a longer one with 422 "body is too long (maximum
#: is 65536 characters)" (the API's error, quoted in renovatebot/renovate#2032). Whether it
#: counts characters or bytes is not documented (release-plz/release-plz#1716), so the body
#: is kept within this many UTF-8 bytes, the stricter reading.
MAX_BODY = 65_536


def emulated_runs(report: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """(example, last output lines) of each emulated run in a check report.

    Reads `examples[].runs[]` entries with `kind == "emulated"` and their `last_lines`
    (the shape of `generator.check.report.CheckReport.to_dict()`). In a report of more than
    one board (`generator.check.report.board_data`) the example is named with its board's
    name, "AddModel (Arduino Giga R1)".
    """
    boards = report.get("boards")
    names = (
        {b.get("key"): b.get("name") for b in boards if isinstance(b, Mapping)}
        if isinstance(boards, list) and len(boards) > 1
        else {}
    )
    found: list[tuple[str, list[str]]] = []
    for example in report.get("examples") or []:
        if not isinstance(example, dict):
            continue
        name = str(example.get("example") or example.get("name"))
        if names:
            name += f" ({names.get(example.get('board')) or example.get('board')})"
        for run in example.get("runs") or []:
            if isinstance(run, dict) and run.get("kind") == "emulated":
                # The tail is enough for a reviewer and keeps the body far below GitHub's
                # 65,536-character limit; the full output is in the check report.
                lines = [str(line)[:MAX_LINE] for line in run.get("last_lines") or []]
                lines = lines[-MAX_LINES:]
                found.append((name, lines))
    return found


@dataclass
class PullRequestFacts:
    """Everything the body says. Paths and counts are of the generated paths only.

    Attributes:
        ref, sha: the ExecuTorch ref asked for and the full SHA it resolved to.
        base_pin: the base branch's executorch_pin.txt (full SHA) or None.
        upstream_version: the ref's version.txt; library_version / base_version: the
            library.properties `version=` now and on the base (None if the base has none).
        op_set: the selected operators; kernels / base_kernels: registered kernel names.
        added, removed, changed: generated files added/removed/changed against the base.
        check_passed, check_markdown: the check's verdict and report as Markdown;
        sizes: size rows with deltas; instructions: instructions per inference on the
        emulated Cortex-M33 with deltas (`compare.instruction_rows`; empty: no example
        printed an `Inference: N us` line); runs: (example, output lines) of the emulated runs;
        base_has_report: whether the base carried extras/check_report.json.
        branch, base: the sync branch and the base branch.
        ci_note: Markdown shown as a warning at the top (`workflow_token_note`), or None.
        upstream_reports: (patch name, its upstream report in Markdown) for each patch the
            library applies that fixes an upstream defect (`upstream_reports`).
        workflow_drift: this generator's workflows that the repo lacks or has in another form
            (`generator.workflows.render.installed_drift`); sync never pushes workflow files.
        link_modes: the README's link-modes section for this check
            (`generator.boards.linkmode_docs`); sync never writes the repo's README, so the body
            carries it over; "" when there is none.
        boards: the README's boards section for this check (`generator.boards.board_docs`):
            the boards checked, by link mode, with the examples that fit and ran; carried
            over like `link_modes`; "" when there is none.
        upstream: what changed under the ref's `examples/arduino/` since `base_pin` and what
            the library does with each file (`generator.sync.upstream.arduino_changes`), shown
            in its own section; None: the section is left out.
    """

    ref: str
    sha: str
    base_pin: str | None
    upstream_version: str
    library_version: str
    base_version: str | None
    op_set: list[str]
    kernels: list[str]
    base_kernels: list[str]
    added: list[str]
    removed: list[str]
    changed: list[str]
    check_markdown: str
    check_passed: bool = True
    sizes: list[SizeRow] = field(default_factory=list)
    instructions: list[SizeRow] = field(default_factory=list)
    runs: list[tuple[str, list[str]]] = field(default_factory=list)
    base_has_report: bool = False
    branch: str = ""
    base: str = "main"
    ci_note: str | None = None
    workflow_drift: list[str] = field(default_factory=list)
    upstream_reports: list[tuple[str, str]] = field(default_factory=list)
    link_modes: str = ""
    boards: str = ""
    upstream: UpstreamChanges | None = None

    @property
    def compare_url(self) -> str | None:
        """Upstream compare link old pin...new pin, or None (no previous pin, the same pin,
        or a previous pin that is not a full SHA: the base branch's file is any text)."""
        if not self.base_pin or self.base_pin == self.sha or not is_sha(self.base_pin):
            return None
        return UPSTREAM_COMPARE.format(old=self.base_pin, new=self.sha)

    @property
    def kernels_added(self) -> list[str]:
        return kernels_only_in(self.kernels, self.base_kernels)

    @property
    def kernels_removed(self) -> list[str]:
        return kernels_only_in(self.base_kernels, self.kernels)


def workflow_token_note() -> str:
    """Why CI did not run on a sync pull request pushed with the Actions `GITHUB_TOKEN`, and
    how to make it run (Markdown).

    Source: GitHub Actions docs, "Triggering a workflow from a workflow": events caused by the
    repository's GITHUB_TOKEN (except workflow_dispatch and repository_dispatch) create no
    workflow run; a person closing and reopening the pull request does (`reopened`).
    """
    return (
        "**CI did not run on this pull request:** sync pushed it with the workflow's "
        "`GITHUB_TOKEN`, and GitHub starts no workflow for what that token does, so the "
        "library's `ci.yml` has not checked it. To have CI run on every sync pull request, "
        "give sync another token:\n"
        "- a GitHub App with contents: write and pull-requests: write, installed on this "
        "repository: its App ID in the repository variable `SYNC_APP_ID`, its private key in "
        "the secret `SYNC_APP_PRIVATE_KEY`; or\n"
        "- a fine-grained personal access token for this repository with contents: write and "
        "pull-requests: write, in the secret `SYNC_TOKEN`.\n\n"
        "Until then, close and reopen this pull request to trigger CI."
    )


def pr_title(facts: PullRequestFacts) -> str:
    """e.g. "Sync ExecuTorch v1.5.1 (0123456789ab) as library 1.5.1"."""
    return f"Sync ExecuTorch {facts.ref} ({facts.sha[:12]}) as library {facts.library_version}"


def commit_message(ref: str, sha: str, version: str, upstream_version: str) -> str:
    """The sync commit's message: names the ref, the SHA and the version. A value that is
    not one plain word (the staged version.txt is the ref's text) is written as a Python
    literal (`repr`), so it cannot add lines, and with them trailers, to the message."""
    ref, sha, version, upstream_version = map(_one_word, (ref, sha, version, upstream_version))
    return (
        f"Sync ExecuTorch {ref} ({sha[:12]}) as library {version}\n\n"
        f"ExecuTorch ref: {ref}\n"
        f"ExecuTorch SHA: {sha}\n"
        f"ExecuTorch version.txt: {upstream_version}\n"
        f"Library version: {version}\n"
    )


#: What a commit message takes as it is: a ref, a SHA or a version (no space or control).
_ONE_WORD = re.compile(r"[0-9A-Za-z._+/@-]{1,256}")


def _one_word(text: str) -> str:
    return text if _ONE_WORD.fullmatch(text) else repr(text)


def render_body(facts: PullRequestFacts) -> str:
    """The pull request body (GitHub Markdown) for `facts`."""
    delta = len(facts.kernels) - len(facts.base_kernels)
    if facts.compare_url and facts.base_pin:
        compare = f"[`{facts.base_pin[:12]}...{facts.sha[:12]}`]({facts.compare_url})"
    elif facts.base_pin and not is_sha(facts.base_pin):
        compare = "n/a (the previous pin is not a commit SHA)"
    else:
        compare = "same pin" if facts.base_pin else "n/a (first sync)"
    return render(
        PULL_REQUEST_TEMPLATE,
        f=facts,
        commit_url=UPSTREAM_COMMIT.format(sha=facts.sha),
        kernel_delta=signed(delta),
        compare=compare,
        previous_pin=inline_code(facts.base_pin or ""),
        sizes="\n".join(size_table(facts.sizes, "This PR", f"`{facts.base}`")),
        instructions="\n".join(instruction_table(facts.instructions, "This PR", f"`{facts.base}`")),
        instructions_note=INSTRUCTIONS_NOTE,
        instructions_base=any(row.base is not None for row in facts.instructions),
        fence=code_fence,
        code=inline_code,
        upstream=upstream_markdown(facts.upstream) if facts.upstream is not None else "",
    )


def too_long_note(check_markdown: str) -> str:
    """What the body says instead of the full check report when that does not fit."""
    return (
        f"The full check report ({len(check_markdown):,} characters) does not fit in a pull "
        "request body: it is in `extras/check_report.json` of this branch, and (in the Sync "
        "workflow) in the summary of the run that opened this pull request."
    )


def fitting_body(facts: PullRequestFacts, board: str) -> tuple[str, list[str]]:
    """The body for `facts` (`render_body`), shortened until it fits in `MAX_BODY` UTF-8
    bytes: first the full check report gives way to `too_long_note`, then the emulated run
    output keeps only the runs of `board` (a board's name, "Arduino UNO Q", as
    `emulated_runs` names a run of a report of several boards).

    Returns:
        the body, and what was left out of it, in words (empty when nothing was).
    Raises:
        FatalError: it does not fit even so (a check of many boards and examples).
    """
    left_out: list[str] = []
    body = render_body(facts)
    if len(body.encode("utf-8")) > MAX_BODY:
        facts = replace(facts, check_markdown=too_long_note(facts.check_markdown))
        left_out.append("the full check report")
        body = render_body(facts)
    kept = [run for run in facts.runs if run[0].endswith(f" ({board})")]
    if len(body.encode("utf-8")) > MAX_BODY and kept != facts.runs:
        facts = replace(facts, runs=kept)
        left_out.append(f"the emulated run output of every board but the {board}")
        body = render_body(facts)
    size = len(body.encode("utf-8"))
    if size > MAX_BODY:
        raise FatalError(
            f"the pull request body would be {size:,} bytes even without "
            f"{' and '.join(left_out)}, over GitHub's {MAX_BODY:,}: "
            "check fewer boards (--board) or fewer examples (--examples); no pull request was "
            "opened or updated"
        )
    return body, left_out
