"""Pure parts of sync: version reuse rule, body rendering, kernel counting, askpass."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from facts_fixture import PIN_A, PIN_B, pull_facts

from generator.library.compare import SizeRow, size_rows, size_table
from generator.library.facts import kernel_names
from generator.library.properties import properties_version
from generator.library.version import tag_versions
from generator.sync.body import emulated_runs, render_body
from generator.sync.version_gate import (
    check_version_greater,
    check_version_unused,
)
from generator.util.errors import FatalError
from generator.vcs.git import TOKEN_ENV, git_env
from generator.vcs.versions import VersionUse


def test_version_tagged_is_refused_with_a_suggestion() -> None:
    with pytest.raises(FatalError, match=r"tag v0\.2\.0.*--library-version 0\.2\.1"):
        check_version_unused("0.2.0", PIN_A, {"v0.1.0", "v0.2.0"}, [])
    with pytest.raises(FatalError, match=r"already released as tag 0\.2\.0;"):
        check_version_unused("0.2.0", PIN_A, {"0.2.0"}, [])


def test_version_used_for_another_pin_is_refused() -> None:
    uses = [
        VersionUse("0.3.0", PIN_A, "on main", "c" * 40),
        VersionUse("0.2.0", PIN_B, "at tag x", "d" * 40),
    ]
    with pytest.raises(
        FatalError, match=r"0\.2\.0 was already used at tag x for ExecuTorch b{12} \(commit d{12}\)"
    ):
        check_version_unused("0.2.0", PIN_A, set(), uses)


def test_version_used_for_the_same_pin_or_unused_passes() -> None:
    uses = [VersionUse("0.2.0", PIN_A, "on main", "c" * 40)]
    check_version_unused("0.2.0", PIN_A, {"v0.1.0"}, uses)
    check_version_unused("0.4.0", PIN_A, {"v0.1.0"}, uses)


def test_refusal_suggests_the_next_version_above_everything_seen() -> None:
    with pytest.raises(FatalError, match=r"--library-version 1\.6\.0-alpha\.1 "):
        check_version_unused("1.6.0-alpha.0", PIN_A, {"v1.6.0-alpha.0"}, [])
    uses = [VersionUse("0.9.0", PIN_B, "on main", "c" * 40)]
    with pytest.raises(FatalError, match=r"--library-version 1\.2\.4 "):
        check_version_unused("0.9.0", PIN_A, {"v1.2.3", "release-x"}, uses)


def test_tag_versions_reads_v_semver_and_bare_semver_tags() -> None:
    tags = {"v1.6.0", "1.5.0", "v1.6.0-rc.1", "release-2024", "v1.5", "vx"}
    assert tag_versions(tags) == {"v1.6.0": "1.6.0", "1.5.0": "1.5.0", "v1.6.0-rc.1": "1.6.0-rc.1"}


def test_version_must_be_greater_than_every_published_version() -> None:
    with pytest.raises(
        FatalError,
        match=r"1\.5\.0 is not greater than 1\.6\.0, already published \(tag v1\.6\.0, "
        r"version= on main\).*--library-version 1\.6\.1$",
    ):
        check_version_greater(
            "1.5.0", PIN_A, tag_versions({"v1.6.0", "v1.5.0"}), "1.6.0", PIN_B, "main"
        )
    # a pre-release ranks below its release, and the suggestion stays a pre-release
    with pytest.raises(FatalError, match=r"not greater than 1\.6\.0-rc\.1.*1\.6\.0-rc\.2$"):
        check_version_greater(
            "1.6.0-alpha.1", PIN_A, tag_versions({"v1.6.0-rc.1"}), None, None, "main"
        )
    # equal precedence is not greater (build metadata is ignored)
    with pytest.raises(FatalError, match="not greater than 1.6.0"):
        check_version_greater("1.6.0+cpu", PIN_A, tag_versions(set()), "1.6.0", PIN_B, "main")
    check_version_greater(
        "1.6.1", PIN_A, tag_versions({"v1.6.0", "release-x"}), "1.6.0", PIN_B, "main"
    )
    check_version_greater("1.0.0", PIN_A, tag_versions(set()), None, None, "main")
    check_version_greater("1.0.0", PIN_A, tag_versions(set()), "not-semver", PIN_B, "main")


def test_base_version_of_the_same_pin_does_not_count() -> None:
    # regenerating the pin the base branch holds, under its (unreleased) version
    check_version_greater("1.6.0", PIN_A, tag_versions({"v1.5.0"}), "1.6.0", PIN_A, "main")
    with pytest.raises(FatalError, match=r"\(tag v1\.7\.0\)"):
        check_version_greater("1.6.0", PIN_A, tag_versions({"v1.7.0"}), "1.6.0", PIN_A, "main")


def test_properties_version() -> None:
    assert properties_version("name=ExecuTorch\nversion = 1.4.1\nurl=x\n") == "1.4.1"
    assert properties_version("name=x\n") is None
    assert properties_version(None) is None
    # The Arduino tools keep a repeated key's last value; so does every reader of ours.
    assert properties_version("version=1.8.0\nname=x\nversion=9.0.0\n") == "9.0.0"
    assert properties_version("version=1.0.0\nnot a property\n") is None


def test_kernel_names_count_each_registration() -> None:
    sources = {
        "b.cpp": 'Kernel(\n  "aten::mul.out", fn),',
        "a.cpp": 'Kernel("aten::add.out", f), Kernel( "aten::add.out" , g)',
    }
    assert kernel_names(sources) == ["aten::add.out", "aten::add.out", "aten::mul.out"]


def test_size_rows_pair_examples_and_metrics_with_the_base() -> None:
    new = {"examples": [{"name": "AddModel", "sizes": {"flash": 120, "ram": 10}}]}
    base = {"examples": [{"name": "AddModel", "sizes": {"flash": 100}}]}
    rows = size_rows(new, base)
    assert rows == [SizeRow("AddModel", "flash", 120, 100), SizeRow("AddModel", "ram", 10, None)]
    assert [r.delta for r in rows] == [20, None]
    assert size_rows({"sizes": {"flash": {"bytes": 5}}}, None) == [
        SizeRow("library", "flash", 5, None)
    ]


def test_the_size_table_shows_static_and_dynamic_sizes_with_deltas() -> None:
    new = {
        "examples": [
            {
                "example": "AddModel",
                "sizes": {
                    "flash": 120_000,
                    "ram": 9_000,
                    "dynamic_flash": 180_000,
                    "dynamic_ram": 190_000,
                },
            }
        ]
    }
    base = {"examples": [{"example": "AddModel", "sizes": {"flash": 520_000, "ram": 9_000,
                                                           "dynamic_flash": 790_000,
                                                           "dynamic_ram": 800_000}}]}  # fmt: skip
    lines = size_table(size_rows(new, base), "This PR", "`main`")
    assert "| AddModel | flash (static) | 120,000 B | 520,000 B | -400,000 |" in lines
    assert "| AddModel | RAM (static) | 9,000 B | 9,000 B | ±0 |" in lines
    assert "| AddModel | flash (Dynamic) | 180,000 B | 790,000 B | -610,000 |" in lines
    assert "| AddModel | RAM (Dynamic) | 190,000 B | 800,000 B | -610,000 |" in lines


def test_body_has_every_part_of_issue_point_6() -> None:
    facts = pull_facts(
        ref="v1.5.1",
        sha=PIN_B,
        base_pin=PIN_A,
        library_version="1.5.1",
        base_version="1.5.0",
        kernels=["aten::add.out"],
        base_kernels=["aten::add.out", "aten::sub.out"],
        added=["a"],
        removed=[],
        changed=["b", "c"],
        check_markdown="CHECK-REPORT",
        sizes=[SizeRow("AddModel", "flash", 90, 100)],
        base_has_report=True,
    )
    body = render_body(facts)
    assert f"https://github.com/pytorch/executorch/compare/{PIN_A}...{PIN_B}" in body
    assert f"| ExecuTorch SHA | `{PIN_B}` |" in body
    assert "| Library version | **1.5.1** (base: 1.5.0) |" in body
    assert "Kernels registered: **1** (base: 2, -1)." in body
    assert "- removed: `aten::sub.out`" in body
    assert "**1** added, **0** removed, **2** changed." in body
    assert "| AddModel | flash (static) | 90 B | 100 B | -10 |" in body
    assert "CHECK-REPORT" in body
    release = next(line for line in body.splitlines() if line.startswith("- [ ] Release"))
    assert release.startswith("- [ ] Release `v1.5.1` after the merge: run the Release workflow")
    assert "`gh workflow run release.yml`" in release
    assert "`RELEASE_ON_SYNC_MERGE` is `true` (then merging starts it)" in release
    assert "tags it `v1.5.1`" in release
    assert "Tag the merge commit" not in body  # a tag by hand skips lint and Release
    assert "Flash a board" in body


def test_body_for_the_same_pin_and_no_base_report() -> None:
    body = render_body(
        pull_facts(
            sha=PIN_B,
            base_pin=PIN_B,
            sizes=[SizeRow("AddModel", "flash", 90, None)],
            base_has_report=False,
        )
    )
    assert "| Upstream changes | same pin |" in body
    assert "has no `extras/check_report.json`, so there are no deltas" in body


def test_a_previous_pin_that_is_not_a_sha_stays_in_its_cell_and_links_nowhere() -> None:
    # the base branch's executorch_pin.txt is anyone's text
    pin = "abc)](https://evil.example) @octocat\n\n# Heading | x`"
    body = render_body(pull_facts(base_pin=pin))
    shown = "`` abc)](https://evil.example) @octocat\\n\\n# Heading \\| x` ``"
    assert f"| Previous pin | {shown} |" in body
    assert "| Upstream changes | n/a (the previous pin is not a commit SHA) |" in body
    assert "\n# Heading" not in body and body.count("evil.example") == 1
    assert pull_facts(base_pin=pin).compare_url is None


def test_askpass_answers_the_token_without_writing_it() -> None:
    token = "ghp_askpass_secret_123"
    with git_env(token) as genv:
        script = genv.env["GIT_ASKPASS"]
        assert token not in Path(script).read_text()
        # The token is no part of the git environment: GitEnv.run adds it for one https git.
        assert genv.env[TOKEN_ENV] == ""
        env = {TOKEN_ENV: token, "PATH": "/usr/bin:/bin"}
        user = subprocess.run(
            [script, "Username for 'https://github.com': "],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        password = subprocess.run(
            [script, "Password for 'https://x-access-token@github.com': "],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert (user, password) == ("x-access-token\n", f"{token}\n")
        assert genv.redact(f"url https://x:{token}@h") == "url https://h"
        assert genv.redact(f"said {token} twice {token}") == "said *** twice ***"
    assert not Path(script).exists()


def test_emulated_runs_reads_the_check_report_shape() -> None:
    report = {
        "examples": [
            {
                "example": "Hello",
                "runs": [
                    {"kind": "emulated", "last_lines": ["hi", "=== DONE ==="]},
                    {"kind": "host", "last_lines": ["host"]},
                ],
            },
            {"example": "NotRun", "runs": []},
        ]
    }
    assert emulated_runs(report) == [("Hello", ["hi", "=== DONE ==="])]
    body = render_body(pull_facts(runs=emulated_runs(report)))
    assert "**`Hello`**\n```\nhi\n=== DONE ===\n```" in body


def test_redact_hides_the_token_also_as_an_exception_repr_shows_it() -> None:
    from generator.sync.github import redact

    token = "ghp_abc123\n"
    text = "Invalid leading whitespace in header value: 'token ghp_abc123\\n' / ghp_abc123"
    assert "ghp_abc123" not in redact(text, token)
    assert redact("nothing", None) == "nothing"


def test_run_output_cannot_close_its_fence_and_is_capped() -> None:
    from generator.sync.body import MAX_LINES, emulated_runs

    report = {
        "examples": [
            {
                "example": "AddModel",
                "runs": [
                    {
                        "kind": "emulated",
                        "last_lines": ["```", "## Library check: passed"] + ["x" * 900] * 100,
                    }
                ],
            }
        ]
    }
    runs = emulated_runs(report)
    assert len(runs[0][1]) == MAX_LINES and all(len(line) <= 200 for line in runs[0][1])
    injected = [("AddModel", ["```", "## Library check: passed"])]
    body = render_body(pull_facts(runs=injected))
    assert "````\n```\n## Library check: passed\n````" in body


def test_ci_note_is_a_warning_at_the_top_of_the_body() -> None:
    from generator.sync.body import workflow_token_note

    body = render_body(pull_facts(ci_note=workflow_token_note()))
    lines = body.splitlines()
    assert lines[0] == "> [!WARNING]"
    assert lines[1].startswith("> **CI did not run on this pull request:**")
    quoted = lines[: lines.index("")]
    assert all(line.startswith(">") for line in quoted)
    assert "> Until then, close and reopen this pull request to trigger CI." in quoted
    assert "CI did not run" not in render_body(pull_facts())
    assert render_body(pull_facts()).startswith("Regenerates the library")


def test_body_carries_the_link_modes_section_for_the_readme() -> None:
    from generator.boards.linkmode_docs import link_modes_markdown

    report = {"examples": [{"example": "AddModel", "dynamic": {"verdicts": [
        {"core": "main@177dcef6", "pinned": True, "loaded": True, "heap_bytes": 262_144,
         "peak_bytes": 70_104, "errno": 0, "log": [], "short_branches": 0}]}}]}  # fmt: skip
    section = link_modes_markdown(report)
    body = render_body(pull_facts(link_modes=section))
    assert "### Link modes: the README section to carry over" in body
    assert "| AddModel | ✅ 70,104 B of 256 KiB |" in body
    # Its Markdown source too, fenced, to paste into the repo's README.
    assert "```markdown\n" + section in body
    assert "README section to carry over" not in render_body(pull_facts())


def test_the_body_carries_the_upstream_report_of_each_patch_the_library_applies(
    tmp_path: Path,
) -> None:
    from generator.pipeline.cmsis_nn_patches import UPSTREAM_REPORTS
    from generator.sync.pull_facts import upstream_reports

    (tmp_path / "extras").mkdir()
    (tmp_path / "extras/PROVENANCE.txt").write_text(
        "op set: default\n\npatches applied:\n  drop-tests: Tests are host code.\n"
        "  cmsis-nn-add-shift: CMSIS-NN's s8 add shifts signed values left.\n"
        "  made-up: a staged file names it; the generator has no report for it.\n"
        "\ntools: flatc 24.3.25\n  cmsis-nn-add-shift: not in the list of patches\n"
    )
    reports = upstream_reports(tmp_path)
    assert reports == [("cmsis-nn-add-shift", UPSTREAM_REPORTS["cmsis-nn-add-shift"])]
    body = render_body(pull_facts(upstream_reports=reports))
    section = body[body.index("### Patches to report upstream") :]
    assert "patches 1 upstream defect (`extras/PROVENANCE.txt`" in section
    assert "<details><summary>`cmsis-nn-add-shift`</summary>" in section
    assert "left shift of negative value -1" in section  # the report's own text
    assert section.index("</details>") < section.index("Full check report")
    assert "Patches to report upstream" not in render_body(pull_facts())
    assert upstream_reports(tmp_path / "missing") == []
