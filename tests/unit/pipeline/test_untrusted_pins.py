"""The pins of an untrusted ExecuTorch ref (issue 29): `.gitmodules` names where FlatBuffers and
flatcc are fetched from, and the build fetches them only from their canonical URLs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from et_fixture import Upstream, commit_all, git, write_tree

from generator.pipeline.run import BuildOptions, build_library
from generator.util.errors import FatalError

SECRET = "int stolen_from_a_private_repository_of_the_same_user;\n"


def gitmodules(upstream: Upstream, flatbuffers_url: str, sha: str) -> None:
    """Commit a `.gitmodules` naming `flatbuffers_url` for FlatBuffers, pinned at `sha`."""
    git(upstream.executorch, "update-index", "--cacheinfo", f"160000,{sha},third-party/flatbuffers")
    upstream.commit_executorch(
        {
            ".gitmodules": (
                '[submodule "third-party/flatbuffers"]\n\tpath = third-party/flatbuffers\n'
                f"\turl = {flatbuffers_url}\n"
                '[submodule "third-party/flatcc"]\n\tpath = third-party/flatcc\n'
                "\turl = https://github.com/dvidelabs/flatcc.git\n"
            )
        },
        "a submodule URL of the ref's choosing",
    )


def private_repository(tmp_path: Path, upstream: Upstream) -> tuple[Path, str]:
    """A repository of the same user that is no upstream: FlatBuffers' files plus a secret."""
    private = tmp_path / "private"
    shutil.copytree(upstream.flatbuffers, private)
    write_tree(private, {"include/flatbuffers/secret.h": SECRET})
    return private, commit_all(private, "private work")


def holding_secret(top: Path) -> list[Path]:
    return [p for p in top.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]


@pytest.mark.parametrize("form", ["path", "file-url", "relative"])
def test_a_submodule_url_naming_a_local_repository_is_refused(
    tmp_path: Path, upstream: Upstream, form: str
) -> None:
    private, sha = private_repository(tmp_path, upstream)
    cache = tmp_path / "cache"
    url = {
        "path": str(private),
        "file-url": private.as_uri(),
        # git resolves a relative URL against the cached clone's folder, cache/repos/<slug>/
        "relative": "../../../private",
    }[form]
    gitmodules(upstream, url, sha)
    with pytest.raises(FatalError) as info:
        build_library(BuildOptions(cache_dir=cache), tmp_path / "out" / "ExecuTorch")
    message = str(info.value)
    assert "\n" not in message
    head = git(upstream.executorch, "rev-parse", "HEAD")
    assert f".gitmodules of ExecuTorch at {head[:12]} gives {url!r} for FlatBuffers" in message
    assert "canonical https://github.com/google/flatbuffers.git" in message
    assert "untrusted" in message
    assert holding_secret(cache) == []
    assert not (tmp_path / "out" / "ExecuTorch").exists()


def test_a_submodule_url_on_another_host_is_refused_before_any_fetch(
    tmp_path: Path, upstream: Upstream
) -> None:
    gitmodules(
        upstream, "https://gitlab.example/evil/flatbuffers.git", upstream.shas["flatbuffers"]
    )
    with pytest.raises(FatalError, match="gives 'https://gitlab.example/evil/flatbuffers.git'"):
        build_library(BuildOptions(cache_dir=tmp_path / "cache"), tmp_path / "out")
    assert not [p for p in (tmp_path / "cache" / "repos").iterdir() if "gitlab" in p.name]


def test_the_canonical_url_without_dot_git_is_the_same_repository(
    tmp_path: Path, upstream: Upstream
) -> None:
    gitmodules(upstream, "https://github.com/google/flatbuffers/", upstream.shas["flatbuffers"])
    result = build_library(BuildOptions(cache_dir=tmp_path / "cache"), tmp_path / "out")
    assert (result.out / "src" / "flatbuffers" / "flatbuffers.h").is_file()
    provenance = (result.out / "extras" / "PROVENANCE.txt").read_text(encoding="utf-8")
    assert "https://github.com/google/flatbuffers.git" in provenance
