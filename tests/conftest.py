"""Shared fixtures: the real ExecuTorch libraries of the end-to-end tests (built once a session),
the build tests' small upstream repositories, the check tests' object cache (one a session),
and the sync scenarios' remote, fake GitHub and runner (the OpenAPI description loaded once a
session)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "support"))  # helpers: et_fixture, upstream…

from et_fixture import Upstream, make_upstream
from github_fake import FakeGitHub, GitHubSpec, load, missing_reason
from sync_fixtures import (
    MACHINE_NAME,
    NAME,
    OWNER,
    TOKEN,
    Runner,
    isolate_git,
    make_library_remote,
)
from upstream import MAIN_AT_LEAST, PUBLISHED_PIN, real_library, upstream_unavailable

from generator.pipeline.run import BuildResult


@pytest.fixture(scope="session")
def e2e_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reason = upstream_unavailable()
    if reason:
        pytest.skip(reason)
    return tmp_path_factory.mktemp("e2e")


@pytest.fixture(scope="session")
def real_main(e2e_root: Path) -> BuildResult:
    """The library generated from real ExecuTorch main (at least MAIN_AT_LEAST)."""
    result = real_library(e2e_root, "main")
    assert result.sha  # resolved
    return result


@pytest.fixture(scope="session")
def real_published(e2e_root: Path) -> BuildResult:
    """The library generated from `PUBLISHED_PIN`, the commit the live 1.5.1 pins."""
    return real_library(e2e_root, PUBLISHED_PIN)


# -- build: the small ExecuTorch-shaped repositories of et_fixture, served under upstream URLs --


@pytest.fixture
def upstream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Upstream:
    up = make_upstream(tmp_path)
    for key, value in up.env().items():
        monkeypatch.setenv(key, value)
    return up


# -- check: objects are shared through one cache a session, except where the cache is tested --


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("check-cache")


# -- sync: a bare git repo as the library remote, the fake GitHub, the runner ------------------


@pytest.fixture(scope="session")
def spec() -> GitHubSpec:
    reason = missing_reason()
    if reason:
        pytest.skip(reason)
    return load()


@pytest.fixture
def gitenv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    variables = isolate_git(tmp_path / "home")
    for key, value in variables.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    return variables


@pytest.fixture
def remote(tmp_path: Path, gitenv: dict[str, str]) -> Path:
    return make_library_remote(tmp_path / "remote")


@pytest.fixture
def fake(spec: GitHubSpec, remote: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(spec, OWNER, NAME, TOKEN, git_dir=remote) as server:
        yield server
        server.assert_clean()


@pytest.fixture
def sync(fake: FakeGitHub, remote: Path, tmp_path: Path) -> Runner:
    return Runner(fake, remote, tmp_path)


__all__ = ["MAIN_AT_LEAST"]


@pytest.fixture(scope="module")
def e2e_spec() -> GitHubSpec:
    """GitHub's OpenAPI description for an end-to-end sync on real ExecuTorch sources;
    skips with the reason when either is missing."""
    reason = missing_reason() or upstream_unavailable()
    if reason:
        pytest.skip(reason)
    return load()


@pytest.fixture
def machine_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The machine's git config (its insteadOf mirrors) with an identity the bot must not
    use."""
    original = os.environ.get("GIT_CONFIG_GLOBAL") or str(Path.home() / ".gitconfig")
    config = tmp_path / "gitconfig"
    config.write_text(
        f"[include]\n\tpath = {original}\n"
        f"[user]\n\tname = {MACHINE_NAME}\n\temail = machine@example.invalid\n"
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    yield


@pytest.fixture(autouse=True)
def _no_runner_api_url(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CI runner's GITHUB_API_URL would become sync's default API: no test talks to it."""
    monkeypatch.delenv("GITHUB_API_URL", raising=False)
