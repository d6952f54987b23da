"""Scenario tests of `sync`, the main flow: the first sync opens a labelled pull request, the
next ones update it or say the repo is already in sync; the tree pushed, the pull request's
body, the committed check report; a failing check or lint opens nothing.

A real bare git repo is the library remote, a local fake GitHub (validated against GitHub's
OpenAPI description) answers the API, a fake build writes a small library with the real
layout, and a fake check reports sizes (conftest.py, sync_fixtures.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from github_fake import FakeGitHub, GitHubSpec
from sketches import EMPTY_SKETCH
from sync_fixtures import (
    MACHINE_NAME,
    NAME,
    OWNER,
    SHA_NEW,
    SHA_OLD,
    TOKEN,
    FakeReport,
    Runner,
    branch_of,
    branches,
    git,
    ls_tree,
    make_library_remote,
    merge_into_main,
    report_in,
    show,
    writes,
)

from generator.library.layout import LIBRARY_FACTS_FILE
from generator.util.errors import FatalError
from generator.vcs.git import DEFAULT_BOT_EMAIL, DEFAULT_BOT_NAME


def test_first_sync_opens_a_labelled_pr_from_a_bot_commit(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    main_before = branches(remote)["main"]
    result = sync("v1.5.1", "0.2.0")

    branch = branch_of(SHA_OLD)
    assert result.status == "opened"
    assert result.branch == branch
    assert [(p.number, p.head, p.base, p.labels) for p in fake.open_pulls()] == [
        (1, branch, "main", ["sync"])
    ]
    pull = fake.pulls[1]
    assert pull.title == f"Sync ExecuTorch v1.5.1 ({SHA_OLD[:12]}) as library 0.2.0"
    refs = branches(remote)
    assert refs["main"] == main_before  # never pushed to the base
    assert set(refs) == {"main", branch}
    # the commit: bot identity, not the machine's; message names ref, SHA and version
    who = git("log", "-1", "--format=%an|%ae|%cn|%ce", branch, cwd=remote)
    assert who == f"{DEFAULT_BOT_NAME}|{DEFAULT_BOT_EMAIL}|{DEFAULT_BOT_NAME}|{DEFAULT_BOT_EMAIL}"
    assert MACHINE_NAME not in git("log", "--format=%an %cn %ae %ce", branch, cwd=remote)
    message = git("log", "-1", "--format=%B", branch, cwd=remote)
    assert "v1.5.1" in message and SHA_OLD in message and "0.2.0" in message
    assert git("rev-parse", f"{branch}~1", cwd=remote) == main_before
    # the tree: generated paths + the repo's own files + the check report
    files = ls_tree(remote, branch)
    assert {"README.md", "CHANGELOG.md", ".github/workflows/lint.yml"} <= files
    assert {"library.properties", "executorch_pin.txt", "extras/check_report.json"} <= files
    assert show(remote, branch, "executorch_pin.txt") == SHA_OLD
    assert "version=0.2.0" in show(remote, branch, "library.properties")
    assert report_in(remote, branch) == FakeReport(True, 100_000, 20_000).to_dict()
    # the build got sync's build options; check ran on the build output
    assert [(c.executorch_ref, c.library_version) for c in sync.build.calls] == [
        ("v1.5.1", "0.2.0")
    ]
    assert len(sync.check.checked) == 1
    # body: ref, SHA, first sync, version, ops, files, check, manual steps
    body = pull.body
    assert f"`{SHA_OLD}`" in body
    assert "none (first sync)" in body
    assert "**0.2.0**" in body
    assert "Kernels registered: **2** (base: 0, +2)" in body
    assert "`aten::add.out`, `aten::mul.out`" in body
    assert "**9** added, **0** removed, **0** changed" in body
    assert "### Check: passed" in body and "**check passed**" in body
    assert "**`AddModel`**\n```\n=== AddModel ===\n[2, 3, 4]\n```" in body
    assert "host run" not in body
    assert "| AddModel | flash (static) | 100,000 B | n/a | n/a |" in body
    assert "- [ ] Release `v0.2.0` after the merge: run the Release workflow" in body
    assert result.body == body


def test_second_sync_of_the_same_ref_updates_the_pr_and_opens_none(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    first = sync("v1.5.1", "0.2.0")
    branch_sha = branches(remote)[first.branch]
    sync.check.flash = 100_500  # a new check report: the body changes
    second = sync("v1.5.1", "0.2.0")

    assert second.status == "updated"
    assert second.pull is not None and second.pull.number == first.pull.number  # type: ignore[union-attr]
    assert len(fake.pulls) == 1 and fake.pulls[1].updates == 1
    assert [r[:2] for r in writes(fake)].count(("POST", f"/repos/{OWNER}/{NAME}/pulls")) == 1
    assert "100,500 B" in fake.pulls[1].body
    # the branch moved by force-with-lease onto a new commit holding the new report
    assert branches(remote)[first.branch] != branch_sha
    assert report_in(remote, first.branch)["examples"][0]["sizes"]["flash"] == 100_500


def test_identical_resync_does_not_move_the_branch(sync: Runner, remote: Path) -> None:
    first = sync("v1.5.1", "0.2.0")
    before = branches(remote)[first.branch]
    second = sync("v1.5.1", "0.2.0")
    assert second.status == "updated"
    assert branches(remote)[first.branch] == before


def test_nothing_changed_says_already_in_sync_and_opens_none(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = sync("v1.5.1", "0.2.0")
    merge_into_main(remote, first.branch, tmp_path / "merge")
    refs_before = branches(remote)
    writes_before = len(writes(fake))
    sync.build.provenance_note = "rebuilt later"  # PROVENANCE differs, nothing else
    capsys.readouterr()

    result = sync("v1.5.1", "0.2.0")

    assert result.status == "in-sync"
    assert "already in sync" in capsys.readouterr().out
    assert branches(remote) == refs_before
    assert len(writes(fake)) == writes_before
    assert len(sync.check.checked) == 1  # not checked again


def test_generated_paths_are_deleted_before_writing(
    spec: GitHubSpec, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    remote = make_library_remote(
        tmp_path / "remote",
        {
            "src/stale_platform.cpp": "// from an old generator\n",
            "extras/old_tool.py": "print()\n",
            "library.properties": "name=ExecuTorch\nversion=0.1.0\n",
            "executorch_pin.txt": SHA_NEW + "\n",
        },
    )
    with FakeGitHub(spec, OWNER, NAME, TOKEN, git_dir=remote) as fake:
        runner = Runner(fake, remote, tmp_path)
        runner.build.extra = {"README.md": "# generated readme that must not be copied\n"}
        result = runner("v1.5.1", "0.2.0")
        fake.assert_clean()
    files = ls_tree(remote, result.branch)
    assert "src/stale_platform.cpp" not in files
    assert "extras/old_tool.py" not in files
    assert "src/ExecuTorch.h" in files
    assert show(remote, result.branch, "README.md") == "# ExecuTorch for Arduino"
    assert show(remote, result.branch, "CHANGELOG.md") == "# Changelog"
    assert ".github/workflows/lint.yml" in files
    body = fake.pulls[1].body
    assert f"[`{SHA_NEW[:12]}...{SHA_OLD[:12]}`]" in body
    assert "0.2.0** (base: 0.1.0)" in body
    assert "**7** added, **2** removed, **2** changed" in body


def test_next_ref_body_shows_compare_link_size_deltas_and_kernel_changes(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    first = sync("v1.5.1", "0.2.0")
    merge_into_main(remote, first.branch, tmp_path / "merge")
    sync.check.flash, sync.check.ram = 104_096, 19_000

    result = sync("main", "0.3.0")

    assert result.status == "opened" and result.branch == branch_of(SHA_NEW)
    body = fake.pulls[2].body
    compare = f"https://github.com/pytorch/executorch/compare/{SHA_OLD}...{SHA_NEW}"
    assert f"]({compare})" in body
    assert "**0.3.0** (base: 0.2.0)" in body
    assert "| AddModel | flash (static) | 104,096 B | 100,000 B | +4,096 |" in body
    assert "| AddModel | RAM (static) | 19,000 B | 20,000 B | -1,000 |" in body
    assert "Kernels registered: **3** (base: 2, +1)" in body
    assert "- added: `aten::relu.out`" in body
    assert "**0** added, **0** removed, **6** changed" in body


def test_a_tree_with_the_facts_file_is_compared_with_an_older_generators_base(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    """main holds a library without extras/library.json (an older generator's): its pin and
    kernels are read from its other files; the regenerated tree's from its facts file."""
    first = sync("v1.5.1", "0.2.0")
    merge_into_main(remote, first.branch, tmp_path / "merge")
    assert LIBRARY_FACTS_FILE not in ls_tree(remote, "main")
    sync.build.facts_file = True

    result = sync("main", "0.3.0")

    assert LIBRARY_FACTS_FILE in ls_tree(remote, result.branch)
    body = fake.pulls[2].body
    assert f"compare/{SHA_OLD}...{SHA_NEW}" in body
    assert "Kernels registered: **3** (base: 2, +1)" in body
    assert "- added: `aten::relu.out`" in body
    assert "**1** added, **0** removed, **5** changed" in body  # added: the facts file


def test_a_change_of_the_facts_file_alone_opens_no_pull_request(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    sync.build.facts_file = True
    first = sync("v1.5.1", "0.2.0")
    merge_into_main(remote, first.branch, tmp_path / "merge")
    refs_before = branches(remote)
    # the same commit by another name: PROVENANCE.txt and library.json say the new ref
    sync.build.refs["release-1.5"] = sync.build.refs["v1.5.1"]
    result = sync("release-1.5", "0.2.0")
    assert result.status == "in-sync"
    assert branches(remote) == refs_before


def test_body_says_when_the_repos_workflows_differ_from_the_generators(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    from generator.workflows.render import WORKFLOWS_DIR, render_workflows, write_workflows

    first = sync("v1.5.1", "0.2.0")
    assert first.body is not None
    assert "The repo's workflows differ from this generator's" in first.body
    assert "`.github/workflows/sync.yml`" in first.body
    # A maintainer installs the generator's workflows; the next sync says nothing about them.
    work = tmp_path / "maintainer"
    git("clone", "-q", str(remote), str(work))
    write_workflows(work, render_workflows("https://github.com/acme/generator.git", "a" * 40))
    git("add", WORKFLOWS_DIR, cwd=work)
    git("commit", "-q", "-m", "install workflows", cwd=work)
    git("push", "-q", "origin", "main", cwd=work)
    second = sync("main", "0.3.0")
    assert second.body is not None
    assert "workflows differ" not in second.body


# -- the Actions GITHUB_TOKEN: CI does not run on the pull request ---------------------------


def test_workflow_token_note_is_in_the_body_and_appended_to_the_step_summary(
    sync: Runner, fake: FakeGitHub, tmp_path: Path
) -> None:
    summary = tmp_path / "step_summary.md"
    summary.write_text("## an earlier step\n")
    sync("v1.5.1", "0.2.0", workflow_token=True, step_summary=summary)
    body = fake.pulls[1].body
    top = body.split("Regenerates the library", 1)[0]
    assert top.startswith("> [!WARNING]\n> **CI did not run on this pull request:**")
    for part in ("`SYNC_APP_ID`", "`SYNC_APP_PRIVATE_KEY`", "`SYNC_TOKEN`", "close and reopen"):
        assert part in top
    assert "contents: write and pull-requests: write" in top
    text = summary.read_text()
    assert text.startswith("## an earlier step\n### Sync pull request [#1](")
    assert "**CI did not run on this pull request:**" in text and "`SYNC_TOKEN`" in text
    assert text.endswith("**check passed**: AddModel compile passed, flash 100000 B\n")


def test_without_workflow_token_there_is_no_note(
    sync: Runner, fake: FakeGitHub, tmp_path: Path
) -> None:
    summary = tmp_path / "step_summary.md"
    sync("v1.5.1", "0.2.0", step_summary=summary)
    assert "CI did not run" not in fake.pulls[1].body
    text = summary.read_text()  # the pull request and the check report, no note
    assert text.startswith("### Sync pull request [#1](") and "CI did not run" not in text
    assert "**check passed**" in text


# -- the committed check report is stable ---------------------------------------------------


@dataclass
class _VolatileReport(FakeReport):
    """A report with what a real one has that changes from run to run."""

    library: Path = Path("/nowhere")
    run: int = 0
    cache: Path = Path("/nowhere")

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data |= {
            "library": str(self.library),
            "seconds": 12.5 + self.run,
            "cache": {"hits": self.run, "misses": 3 - self.run, "failures": 0},
            "model_check": {"library": str(self.library), "passed": True},
        }
        example = data["examples"][0]
        example["seconds"] = 3.25 + self.run
        example["stages"] = [
            {
                "stage": "compile",
                "status": "pass",
                "summary": "compiled",
                "details": f"{self.library}/src/executorch/runtime/core/evalue.h: ok",
            },
            {
                "stage": "sizes",
                "status": "pass",
                "summary": "measured",
                "details": f"objects from {self.cache}/objects/ab.o",
            },
        ]
        for run in example["runs"]:
            run["seconds"] = 0.5 + self.run
        return data


def test_committed_report_drops_times_cache_counts_and_paths(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    runs = iter(range(2))

    def volatile_check(library: Path, options: Any) -> _VolatileReport:
        cache = options.build.cache_dir
        return _VolatileReport(True, 100_000, 20_000, library=library, run=next(runs), cache=cache)

    sync.check = volatile_check  # type: ignore[assignment]
    first = sync("v1.5.1", "0.2.0")
    before = branches(remote)[first.branch]
    second = sync("v1.5.1", "0.2.0")

    assert second.status == "updated"
    assert branches(remote)[first.branch] == before  # nothing new to push
    report = report_in(remote, first.branch)
    text = show(remote, first.branch, "extras/check_report.json")
    assert "seconds" not in text and '"cache"' not in text and "hits" not in text
    assert str(sync.tmp_path) not in text and "/tmp" not in text
    assert report["library"] == "." and report["model_check"]["library"] == "."
    stage = report["examples"][0]["stages"][0]
    assert stage["details"] == "./src/executorch/runtime/core/evalue.h: ok"
    assert report["examples"][0]["stages"][1]["details"] == "objects from <cache>/objects/ab.o"
    assert report["examples"][0]["sizes"] == {"flash": 100_000, "ram": 20_000}


# -- a library that fails the check or lint opens nothing -----------------------------------


def test_failing_check_opens_nothing_and_prints_the_report(
    sync: Runner, fake: FakeGitHub, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sync.check.passed = False
    refs_before = branches(remote)
    with pytest.raises(FatalError, match=r"check failed .* no pull request was opened or updated"):
        sync("v1.5.1", "0.2.0")
    assert "**check FAILED**" in capsys.readouterr().out
    assert branches(remote) == refs_before
    assert writes(fake) == []


def test_failing_check_does_not_update_an_open_pr(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    first = sync("v1.5.1", "0.2.0")
    refs_before, body_before = branches(remote), fake.pulls[1].body
    sync.check.passed = False
    with pytest.raises(FatalError, match="check failed"):
        sync("v1.5.1", "0.2.0")
    assert branches(remote) == refs_before and fake.pulls[1].body == body_before
    assert first.status == "opened"


def test_a_library_that_fails_lint_opens_nothing(
    sync: Runner, fake: FakeGitHub, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sync.build.extra = {"examples/Broken/Other.ino": EMPTY_SKETCH}
    before = git("for-each-ref", cwd=remote)
    with pytest.raises(FatalError, match="fails 1 error of the Library Manager's rules"):
        sync()
    assert "SS001" in capsys.readouterr().out  # the rule is named in the printed report
    assert sync.check.checked == []  # lint comes first
    assert git("for-each-ref", cwd=remote) == before and writes(fake) == []
