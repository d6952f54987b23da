"""End-to-end sync with real ExecuTorch (issue 4, last section): the real build and the real
check, a bare git repo holding only a README as the library repo, the fake GitHub.

1. sync b897b191 (the live 1.5.1's pin) as 1.5.1 -> PR #1; merge it with git;
2. sync newest main with --library-version 1.6.0 -> PR #2, whose body shows the pin compare
   and size deltas against the merged 1.5.1 (its extras/check_report.json);
3. sync main without --library-version -> the version comes from main's version.txt, 1.5.0,
   below the merged 1.5.1: refused, nothing pushed;
4. sync main with 1.5.1 again -> refused, nothing pushed.

Skips with a reason when the upstream URLs do not resolve (tests/support/upstream.py). Set
SYNC_E2E_BODIES=DIR to keep the two PR bodies as DIR/pr1.md and DIR/pr2.md.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from github_fake import FakeGitHub, GitHubSpec
from sync_fixtures import branches, make_library_remote, merge_into_main, show
from upstream import PUBLISHED_PIN

from generator.pipeline.run import BuildOptions
from generator.sync.github import GitHubRepo
from generator.sync.run import SyncOptions, SyncResult, run_sync
from generator.util.errors import FatalError

pytestmark = pytest.mark.e2e

TOKEN = "ghp_EndToEndToken0123456789"
OWNER, NAME = "pytorch-labs", "executorch-arduino"


def test_sync_real_executorch_twice_then_derive_then_refuse(
    e2e_spec: GitHubSpec, machine_git: None, tmp_path: Path
) -> None:
    remote = make_library_remote(tmp_path / "remote", only_readme=True)
    sleeps: list[float] = []
    with FakeGitHub(e2e_spec, OWNER, NAME, TOKEN, git_dir=remote) as fake:

        def sync(ref: str, version: str | None) -> SyncResult:
            options = SyncOptions(
                build=BuildOptions(executorch_ref=ref, library_version=version),
                repo=f"{OWNER}/{NAME}",
                remote=str(remote),
                api_url=fake.url,
            )
            return run_sync(
                options,
                TOKEN,
                connect=lambda url, repo, tok: GitHubRepo(
                    url, repo, tok, sleep=sleeps.append, throttle=False
                ),
            )

        first = sync(PUBLISHED_PIN, "1.5.1")
        assert first.status == "opened" and first.sha.startswith(PUBLISHED_PIN)
        assert show(remote, first.branch, "executorch_pin.txt") == first.sha
        assert "version=1.5.1" in show(remote, first.branch, "library.properties")
        assert show(remote, first.branch, "README.md").startswith("# ExecuTorch for Arduino")
        merge_into_main(remote, first.branch, tmp_path / "merge")

        second = sync("main", "1.6.0")
        assert second.status == "opened" and second.sha != first.sha
        titled = [f"# {p.title}\n\n{p.body}" for p in (fake.pulls[1], fake.pulls[2])]
        body1, body2 = fake.pulls[1].body, fake.pulls[2].body
        compare = f"https://github.com/pytorch/executorch/compare/{first.sha}...{second.sha}"
        assert f"]({compare})" in body2
        assert "**1.6.0** (base: 1.5.1)" in body2
        # every flash row, static and Dynamic, has a base value and a delta (the base carried
        # its check report)
        flash_rows = re.findall(
            r"^\| (\w+) \| flash \((?:static|Dynamic)\) \| ([\d,]+) B \| ([\d,]+) B \| (\S+) \|$",
            body2,
            re.MULTILINE,
        )
        assert len(flash_rows) == 6, body2  # three examples, two link modes
        for _, new, old, delta in flash_rows:
            value = int(new.replace(",", "")) - int(old.replace(",", ""))
            assert delta == ("±0" if value == 0 else f"{value:+,}")
        assert "none (first sync)" in body1
        assert "#### Emulated run output" in body2 and "=== DONE ===" in body2

        # Without --library-version the version comes from main's version.txt: 1.5.0 (at
        # MAIN_AT_LEAST), below the 1.5.1 merged on main, so it is refused, nothing pushed.
        before = branches(remote)
        with pytest.raises(
            FatalError, match=r"library version 1\.5\.0 is not greater than 1\.5\.1"
        ):
            sync("main", None)
        assert branches(remote) == before and len(fake.pulls) == 2

        before = branches(remote)
        with pytest.raises(FatalError, match=r"1\.5\.1 was already used on main"):
            sync("main", "1.5.1")
        assert branches(remote) == before
        fake.assert_clean()

    keep = os.environ.get("SYNC_E2E_BODIES")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        (Path(keep) / "pr1.md").write_text(titled[0])
        (Path(keep) / "pr2.md").write_text(titled[1])
