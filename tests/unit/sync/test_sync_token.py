"""Scenario tests of `sync`: the GitHub token. It reaches git only through askpass and is never
shown, stored or passed to the build's subprocesses; without one only a dry run works; a
malformed one is refused without showing it.

A real bare git repo is the library remote, a local fake GitHub (validated against GitHub's
OpenAPI description) answers the API, a fake build writes a small library with the real
layout, and a fake check reports sizes (conftest.py, sync_fixtures.py).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from github_fake import FakeGitHub, GitHubSpec
from github_fake.git_http import GitHttpRemote
from sync_fixtures import NAME, OWNER, PULLS, SHA_OLD, TOKEN, Runner, branch_of, branches, git

from generator.cli.main import main
from generator.util.errors import FatalError


def test_token_never_appears_in_output_config_commits_or_body(
    sync: Runner,
    fake: FakeGitHub,
    remote: Path,
    tmp_path: Path,
    gitenv: dict[str, str],
    capfd: pytest.CaptureFixture[str],
) -> None:
    work = tmp_path / "work"
    result = sync("v1.5.1", "0.2.0", work_dir=work)
    fake.fail("POST", PULLS, 422, times=1)
    with pytest.raises(FatalError) as info:
        sync("main", "0.3.0")
    out, err = capfd.readouterr()
    assert TOKEN not in out + err + str(info.value)
    assert result.body is not None and TOKEN not in result.body
    assert all(TOKEN not in p.body + p.title for p in fake.pulls.values())
    config = (work / "library" / ".git" / "config").read_text()
    assert '[remote "origin"]' in config and TOKEN not in config
    for path in (work / "library" / ".git").rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path
    assert TOKEN not in Path(gitenv["GIT_CONFIG_GLOBAL"]).read_text()
    assert TOKEN not in git("log", "--all", "--format=%B", cwd=remote)


def test_missing_token_is_a_clear_error(sync: Runner, fake: FakeGitHub) -> None:
    with pytest.raises(FatalError, match="GITHUB_TOKEN is not set"):
        sync("v1.5.1", "0.2.0", token=None)
    assert fake.requests == []


def test_dry_run_needs_no_token_and_changes_nothing(
    sync: Runner, fake: FakeGitHub, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refs_before = branches(remote)
    result = sync("v1.5.1", "0.2.0", token=None, dry_run=True)
    assert result.status == "dry-run"
    out = capsys.readouterr().out
    assert f"would push {branch_of(SHA_OLD)}" in out
    assert f"# Sync ExecuTorch v1.5.1 ({SHA_OLD[:12]}) as library 0.2.0" in out
    assert fake.requests == [] and branches(remote) == refs_before


def test_token_reaches_git_only_through_askpass_and_is_never_stored(
    spec: GitHubSpec,
    remote: Path,
    tmp_path: Path,
    gitenv: dict[str, str],
    capfd: pytest.CaptureFixture[str],
) -> None:
    # an HTTP remote that demands the token, like github.com; the global git config of the
    # machine has `credential.helper = store`, which must not receive it
    with (
        GitHttpRemote(remote.parent, TOKEN) as http,
        FakeGitHub(spec, OWNER, NAME, TOKEN, git_dir=remote) as fake,
    ):
        runner = Runner(fake, remote, tmp_path)
        work = tmp_path / "work"
        result = runner("v1.5.1", "0.2.0", remote=f"{http.url}/library.git", work_dir=work)
        fake.assert_clean()
    assert result.status == "opened"
    assert branches(remote)[result.branch]  # pushed over authenticated HTTP
    assert ("x-access-token", TOKEN) in http.offered
    assert set(http.offered) == {("x-access-token", TOKEN)}
    store = Path(gitenv["GIT_CONFIG_GLOBAL"]).parent / "credentials"
    assert not store.exists() or TOKEN not in store.read_text()
    config = (work / "library" / ".git" / "config").read_text()
    assert f"url = {http.url}/library.git" in config and TOKEN not in config
    out, err = capfd.readouterr()
    assert TOKEN not in out + err


def test_wrong_token_for_the_git_remote_is_a_clear_error(
    spec: GitHubSpec, remote: Path, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    with (
        GitHttpRemote(remote.parent, "the-right-token") as http,
        FakeGitHub(spec, OWNER, NAME, TOKEN, git_dir=remote) as fake,
    ):
        runner = Runner(fake, remote, tmp_path)
        with pytest.raises(FatalError, match="refused the credentials") as info:
            runner("v1.5.1", "0.2.0", remote=f"{http.url}/library.git")
        fake.assert_clean()
    assert TOKEN not in str(info.value)
    assert fake.pulls == {}


@pytest.mark.parametrize("padded", [f"{TOKEN}\n", f"  {TOKEN}\r\n", f"\t{TOKEN} "])
def test_token_surrounding_whitespace_is_stripped(
    sync: Runner, fake: FakeGitHub, padded: str, capfd: pytest.CaptureFixture[str]
) -> None:
    # the fake accepts only the exact token: a padded one would be refused (or break the header)
    assert sync("v1.5.1", "0.2.0", token=padded).status == "opened"
    out, err = capfd.readouterr()
    assert TOKEN not in out + err


@pytest.mark.parametrize(
    "bad",
    [TOKEN[:12] + " " + TOKEN[12:], TOKEN[:12] + "\n" + TOKEN[12:], TOKEN + "\x00", TOKEN + "…"],
)
def test_token_with_inner_whitespace_control_or_non_ascii_is_refused_without_showing_it(
    sync: Runner, fake: FakeGitHub, remote: Path, bad: str
) -> None:
    refs_before = branches(remote)
    with pytest.raises(
        FatalError, match="GITHUB_TOKEN contains spaces, control or non-ASCII"
    ) as info:
        sync("v1.5.1", "0.2.0", token=bad)
    message = str(info.value)
    assert TOKEN[:12] not in message and TOKEN[12:] not in message
    assert fake.requests == [] and sync.build.calls == []
    assert branches(remote) == refs_before


# -- the command line ------------------------------------------------------------------------


def test_cli_sync_without_token_fails_cleanly(
    gitenv: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["sync", "--executorch-ref", "v1.5.1", "--repo", "acme/ExecuTorch"])
    assert exit_info.value.code == 1
    assert "error: GITHUB_TOKEN is not set" in capsys.readouterr().err


def test_cli_takes_github_token_out_of_the_environment_before_anything(
    gitenv: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    with pytest.raises(SystemExit) as exit_info:
        main(["sync", "--repo", "acme/ExecuTorch", "--api-url", "ftp://example.invalid"])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "error: --api-url 'ftp://example.invalid' is not an http(s) URL" in err
    assert "Traceback" not in err and TOKEN not in err
    # build and check subprocesses (compilers, QEMU, sketches) would inherit os.environ
    assert "GITHUB_TOKEN" not in os.environ
    child = subprocess.run(
        ["sh", "-c", 'echo "${GITHUB_TOKEN:-unset}"'], capture_output=True, text=True, check=True
    )
    assert child.stdout.strip() == "unset"
