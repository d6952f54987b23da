"""The maintainers' whole cycle on real ExecuTorch (issue 7): the real build, lint and check,
a bare git repo holding only a README as the library repo, the OpenAPI-checked fake GitHub.

1. sync b897b191 (the live 1.5.1's pin) as 1.5.1 -> PR #1;
2. sync main as 1.6.0 -> PR #2; PR #1 is closed as superseded, its branch deleted;
3. merge PR #2 (with git, as GitHub's merge button would);
4. release -> tag v1.6.0 on main, release notes printed;
5. release again -> already released (exit 0, nothing pushed); a maintainer commit on main
   without a version bump -> release refused (v1.6.0 is on another commit).

Skips with a reason when the upstream URLs do not resolve (tests/support/upstream.py). Set
E2E_TRANSCRIPT=FILE to keep what the tools printed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from github_fake import FakeGitHub, GitHubSpec
from sync_fixtures import branches, git, make_library_remote, merge_into_main
from upstream import PUBLISHED_PIN

from generator.pipeline.run import BuildOptions
from generator.release.run import run_release
from generator.release.step import ReleaseOptions
from generator.sync.github import GitHubRepo
from generator.sync.run import SyncOptions, SyncResult, run_sync
from generator.util.errors import FatalError

pytestmark = pytest.mark.e2e

TOKEN = "ghp_LifecycleToken0123456789"
OWNER, NAME = "pytorch-labs", "executorch-arduino"


def test_sync_supersede_merge_release_and_refuse(
    e2e_spec: GitHubSpec, machine_git: None, tmp_path: Path
) -> None:
    remote = make_library_remote(tmp_path / "remote", only_readme=True)
    transcript: list[str] = []

    def say(line: str) -> None:
        transcript.append(line)

    with FakeGitHub(e2e_spec, OWNER, NAME, TOKEN, git_dir=remote) as fake:

        def sync(ref: str, version: str) -> SyncResult:
            transcript.append(f"\n$ python -m generator sync --executorch-ref {ref} "
                              f"--library-version {version} --repo {OWNER}/{NAME}")  # fmt: skip
            options = SyncOptions(
                build=BuildOptions(executorch_ref=ref, library_version=version),
                repo=f"{OWNER}/{NAME}",
                remote=str(remote),
                api_url=fake.url,
            )
            return run_sync(
                options,
                TOKEN,
                connect=lambda url, repo, tok: GitHubRepo(url, repo, tok, throttle=False),
                say=say,
                emit=say,
            )

        def release() -> None:
            transcript.append(f"\n$ python -m generator release --repo {OWNER}/{NAME}")
            options = ReleaseOptions(repo=f"{OWNER}/{NAME}", remote=str(remote))
            run_release(options, None, say=say, emit=say)

        first = sync(PUBLISHED_PIN, "1.5.1")
        assert first.status == "opened" and first.pull is not None
        second = sync("main", "1.6.0")
        assert second.status == "opened" and second.pull is not None
        # PR #1 is closed as superseded by #2, with a comment, and its branch is gone.
        assert fake.pulls[first.pull.number].state == "closed"
        comments = fake.pulls[first.pull.number].comments
        assert any(f"Superseded by #{second.pull.number}" in c for c in comments), comments
        assert first.branch not in branches(remote) and second.branch in branches(remote)

        transcript.append(f"\n(maintainer merges #{second.pull.number})")
        merged = merge_into_main(remote, second.branch, tmp_path / "merge")
        release()
        assert git("rev-parse", "v1.6.0^{commit}", cwd=remote) == merged
        assert git("cat-file", "-t", "v1.6.0", cwd=remote) == "tag"  # annotated

        before = git("for-each-ref", cwd=remote)
        release()
        assert "already released" in "\n".join(transcript[-3:])
        assert git("for-each-ref", cwd=remote) == before

        work = tmp_path / "maintainer"
        git("clone", "-q", str(remote), str(work))
        (work / "CHANGELOG.md").write_text("# Changelog\n\n- 1.6.0: ExecuTorch main\n")
        git("add", "CHANGELOG.md", cwd=work)
        git("commit", "-q", "-m", "changelog", cwd=work)
        git("push", "-q", "origin", "main", cwd=work)
        with pytest.raises(FatalError) as refused:
            release()
        transcript.append(f"error: {refused.value}")
        assert "v1.6.0 already tags commit" in str(refused.value)
        assert git("rev-parse", "v1.6.0^{commit}", cwd=remote) == merged
        fake.assert_clean()

    keep = os.environ.get("E2E_TRANSCRIPT")
    if keep:
        Path(keep).write_text("\n".join(transcript) + "\n")
