"""Instructions per inference in the sync pull request's body and the release notes, with their
change against the base branch's (or previous tag's) check report, the way sizes are shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from facts_fixture import pull_facts, release_facts
from github_fake import FakeGitHub
from sync_fixtures import Runner, merge_into_main, report_in

from generator.library.compare import INSTRUCTIONS, SizeRow, instruction_rows, instruction_table
from generator.release.step import render_notes
from generator.sync.body import render_body


def _report(**counts: int | None) -> dict[str, Any]:
    """A check report (its JSON shape) whose examples have these instruction counts (None: the
    example's sketch printed no `Inference:` line)."""
    return {
        "examples": [
            {
                "example": name,
                "sizes": {"flash": 1000},
                "timing": None if n is None else {INSTRUCTIONS: n, "inference_us": n // 1000},
            }
            for name, n in counts.items()
        ]
    }


def test_rows_pair_examples_with_the_base_and_skip_those_without_a_count() -> None:
    new = _report(KeywordSpotting=10_412_000, AddModel=74_000, HelloExecuTorch=None)
    base = _report(KeywordSpotting=10_400_000, AddModel=None)
    rows = instruction_rows(new, base)
    assert rows == [
        SizeRow("KeywordSpotting", INSTRUCTIONS, 10_412_000, 10_400_000),
        SizeRow("AddModel", INSTRUCTIONS, 74_000, None),
    ]
    assert [r.delta for r in rows] == [12_000, None]
    assert instruction_rows(new, None)[0].base is None
    assert instruction_rows(_report(A=None), base) == []
    # an old report (no timing key at all), a bool or a text is no count
    assert instruction_rows({"examples": [{"example": "A", "sizes": {"flash": 1}}]}, None) == []
    odd = {"examples": [{"example": "A", "timing": {INSTRUCTIONS: True}}, {"timing": "x"}]}
    assert instruction_rows(odd, None) == []


def test_the_table_shows_counts_and_the_change_with_its_percentage() -> None:
    rows = [
        SizeRow("KeywordSpotting", INSTRUCTIONS, 10_412_000, 10_400_000),
        SizeRow("AddModel", INSTRUCTIONS, 74_000, 74_000),
        SizeRow("Conv", INSTRUCTIONS, 60_000, 80_000),
        SizeRow("New", INSTRUCTIONS, 5_000, None),
        SizeRow("Zero", INSTRUCTIONS, 1_000, 0),
    ]
    lines = instruction_table(rows, "This PR", "`main`")
    assert lines[0] == "| Example | This PR: instructions per inference | `main` | Delta |"
    assert lines[1] == "|---|---:|---:|---:|"
    assert "| KeywordSpotting | 10,412,000 | 10,400,000 | +12,000 (+0.1%) |" in lines
    assert "| AddModel | 74,000 | 74,000 | ±0 |" in lines
    assert "| Conv | 60,000 | 80,000 | -20,000 (-25.0%) |" in lines
    assert "| New | 5,000 | n/a | n/a |" in lines
    assert "| Zero | 1,000 | 0 | +1,000 |" in lines


def test_the_pull_request_body_shows_instructions_with_deltas_after_the_sizes() -> None:
    rows = instruction_rows(
        _report(KeywordSpotting=10_412_000), _report(KeywordSpotting=10_400_000)
    )
    facts = pull_facts(
        instructions=rows,
        sizes=[SizeRow("AddModel", "flash", 90, 100)],
        base_has_report=True,
        check_markdown="CHECK-REPORT",
    )
    body = render_body(facts)
    assert "#### Instructions per inference" in body
    assert "| KeywordSpotting | 10,412,000 | 10,400,000 | +12,000 (+0.1%) |" in body
    assert "`-icount shift=0`" in body
    assert body.index("| AddModel | flash (static)") < body.index("#### Instructions per")
    assert body.index("#### Instructions per") < body.index("CHECK-REPORT")
    assert "has no instruction counts" not in body


def test_a_base_report_without_counts_is_said_so_and_no_counts_no_section() -> None:
    rows = instruction_rows(_report(KeywordSpotting=10_412_000), _report(KeywordSpotting=None))
    body = render_body(pull_facts(instructions=rows, base_has_report=True))
    assert "| KeywordSpotting | 10,412,000 | n/a | n/a |" in body
    assert "`main`'s check report has no instruction counts, so there are no deltas." in body
    assert "Instructions per inference" not in render_body(pull_facts(base_has_report=True))


def test_the_release_notes_show_instructions_with_deltas_after_the_sizes() -> None:
    rows = instruction_rows(_report(AddModel=73_000), _report(AddModel=74_000))
    facts = release_facts(
        instructions=rows,
        sizes=[SizeRow("AddModel", "flash", 90, 100)],
        has_report=True,
        previous_has_report=True,
    )
    notes = render_notes(facts)
    assert "## Instructions per inference" in notes
    assert "| Example | 1.5.1: instructions per inference | v1.5.0 | Delta |" in notes
    assert "| AddModel | 73,000 | 74,000 | -1,000 (-1.4%) |" in notes
    assert notes.index("## Sizes") < notes.index("## Instructions per inference")
    assert "no deltas" not in notes


def test_the_release_notes_without_counts_or_a_previous_one() -> None:
    reported = {"has_report": True, "previous_has_report": True}
    assert "Instructions per inference" not in render_notes(release_facts(**reported))
    first = render_notes(
        release_facts(
            previous_tag=None,
            instructions=instruction_rows(_report(AddModel=73_000), None),
            **reported,
        )
    )
    assert "| AddModel | 73,000 | n/a | n/a |" in first
    assert "First release: no deltas." in first.split("## Instructions per inference")[1]
    rows = instruction_rows(_report(AddModel=73_000), {})
    old = render_notes(release_facts(instructions=rows, **reported))
    assert "v1.5.0's check report has no instruction counts: no deltas." in old


def test_a_sync_shows_the_change_against_the_merged_report(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    sync.check.instructions = 74_000
    first = sync("v1.5.1", "0.2.0")
    body = fake.pulls[1].body
    assert "| AddModel | 74,000 | n/a | n/a |" in body
    committed = report_in(remote, first.branch)["examples"][0]["timing"]
    assert committed == {INSTRUCTIONS: 74_000}  # kept: the count is no volatile figure
    merge_into_main(remote, first.branch, tmp_path / "merge")
    sync.check.instructions = 73_000

    sync("main", "0.3.0")

    assert "| AddModel | 73,000 | 74,000 | -1,000 (-1.4%) |" in fake.pulls[2].body
