"""`check`'s Markdown report: what a sketch prints cannot close the code block it is shown in."""

from __future__ import annotations

from pathlib import Path

from check_fixtures import needs_tools

from generator.check.expected import Expected
from generator.check.report import CheckReport, ExampleReport
from generator.check.run_sketch import RunOutput, judge_run

pytestmark = needs_tools


def test_program_output_cannot_close_the_report_code_block() -> None:
    from generator.check.report import code_fence

    out = RunOutput("emulated", ["```", "# Injected heading", "`````x"], done=True)
    stage = judge_run(out, Expected(("missing",)), "run")
    example = ExampleReport("Hello", stages=[stage])
    markdown = CheckReport(Path("/lib"), "gcc-arm", "UNO Q", examples=[example]).to_markdown()
    assert code_fence(stage.details) == "``````"
    block = markdown.split("  ``````\n")
    assert len(block) == 3  # opened and closed once, by the six-backtick fence
    assert "  # Injected heading\n" in block[1] and "  ```\n" in block[1]
    assert code_fence("no ticks") == "```"
