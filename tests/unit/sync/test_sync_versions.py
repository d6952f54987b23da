"""Scenario tests of `sync`: the library version a sync may use. A version used on the base
branch, a tag or another open sync branch for another pin is refused, as is one not greater
than a published one; a published pin is never relabelled. All before any push.

A real bare git repo is the library remote, a local fake GitHub (validated against GitHub's
OpenAPI description) answers the API, a fake build writes a small library with the real
layout, and a fake check reports sizes (conftest.py, sync_fixtures.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from github_fake import FakeGitHub, GitHubSpec
from sync_fixtures import (
    NAME,
    OWNER,
    SHA_OLD,
    TOKEN,
    Runner,
    branch_of,
    branches,
    git,
    make_library_remote,
    merge_into_main,
    writes,
)

from generator.util.errors import FatalError


def test_reused_version_on_base_history_is_refused_before_any_push(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    first = sync("v1.5.1", "0.2.0")
    merge_into_main(remote, first.branch, tmp_path / "merge")
    refs_before, writes_before = branches(remote), len(writes(fake))

    with pytest.raises(FatalError, match=r"0\.2\.0 was already used on main for ExecuTorch "):
        sync("main", "0.2.0")

    assert branches(remote) == refs_before
    assert len(writes(fake)) == writes_before
    assert len(sync.check.checked) == 1  # refused before the check


def test_version_already_tagged_is_refused(sync: Runner, fake: FakeGitHub, remote: Path) -> None:
    git("tag", "v1.6.0-alpha.0", "main", cwd=remote)
    refs_before = branches(remote)
    with pytest.raises(
        FatalError,
        match=r"already released as tag v1\.6\.0-alpha\.0.*--library-version 1\.6\.0-alpha\.1 ",
    ):
        sync("main")  # version from version.txt 1.6.0a0 -> 1.6.0-alpha.0
    assert branches(remote) == refs_before
    assert writes(fake) == []


def test_same_version_for_the_same_pin_is_not_a_reuse(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    first = sync("v1.5.1", "0.2.0")
    merge_into_main(remote, first.branch, tmp_path / "merge")
    sync.build.extra = {"src/new_header.h": "#pragma once\n"}  # generator changed, same pin
    assert sync("v1.5.1", "0.2.0").status == "opened"


def test_bad_explicit_version_is_refused_before_anything(sync: Runner, fake: FakeGitHub) -> None:
    with pytest.raises(FatalError, match="not a version the Library Manager accepts"):
        sync("v1.5.1", "v0.2")
    assert fake.requests == [] and sync.build.calls == []


def test_with_keep_older_the_version_of_another_open_sync_branch_is_refused(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    sync("v1.5.1", "0.5.0")  # open PR for SHA_OLD as 0.5.0, not merged
    refs_before, writes_before = branches(remote), len(writes(fake))
    with pytest.raises(
        FatalError,
        match=rf"0\.5\.0 was already used on the sync branch {branch_of(SHA_OLD)} "
        rf"for ExecuTorch {SHA_OLD[:12]}",
    ):
        sync("main", "0.5.0", keep_older=True)
    assert branches(remote) == refs_before and len(writes(fake)) == writes_before
    assert len(sync.check.checked) == 1


def _tag_side_commit(remote: Path, work: Path, tag: str, version: str, pin: str) -> None:
    """A commit off main (a release branch nobody merged) with `version` for `pin`, tagged."""
    git("clone", "--quiet", str(remote), str(work))
    git("checkout", "--quiet", "-b", "release", cwd=work)
    (work / "library.properties").write_text(f"name=ExecuTorch\nversion={version}\n")
    (work / "executorch_pin.txt").write_text(pin + "\n")
    git("add", "-A", cwd=work)
    git("commit", "--quiet", "-m", "release", cwd=work)
    git("tag", "-a", "-m", "release", tag, cwd=work)
    git("push", "--quiet", "origin", f"refs/tags/{tag}", cwd=work)


def test_version_carried_by_a_tag_for_another_pin_is_refused(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    _tag_side_commit(remote, tmp_path / "rel", "release-2024", "0.2.0", "a" * 40)
    refs_before = branches(remote)
    with pytest.raises(
        FatalError, match=r"0\.2\.0 was already used at tag release-2024 for ExecuTorch a{12}"
    ):
        sync("v1.5.1", "0.2.0")
    assert branches(remote) == refs_before and writes(fake) == []
    # the same tag for the same pin is no reuse
    assert sync("v1.5.1", "0.2.1").status == "opened"


def test_version_tagged_without_v_is_refused(sync: Runner, fake: FakeGitHub, remote: Path) -> None:
    git("tag", "0.2.0", "main", cwd=remote)
    with pytest.raises(FatalError, match=r"already released as tag 0\.2\.0;.*0\.2\.1"):
        sync("v1.5.1", "0.2.0")
    assert writes(fake) == []


def test_published_pin_is_never_relabelled(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    first = sync("v1.5.1", "0.2.0")
    merge_into_main(remote, first.branch, tmp_path / "merge")
    sync.build.extra = {"src/new_header.h": "#pragma once\n"}  # generator changed, same pin
    refs_before, writes_before = branches(remote), len(writes(fake))
    for version in ("0.2.1", None):  # explicit, and derived from version.txt (1.5.1)
        with pytest.raises(
            FatalError,
            match=rf"ExecuTorch {SHA_OLD[:12]} is already published on main as library version "
            r"0\.2\.0; published sources are never relabelled.*--library-version 0\.2\.0",
        ):
            sync("v1.5.1", version)
    assert branches(remote) == refs_before and len(writes(fake)) == writes_before
    assert sync("v1.5.1", "0.2.0").status == "opened"


def test_indented_version_line_on_the_base_counts_as_used(
    spec: GitHubSpec, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    remote = make_library_remote(
        tmp_path / "remote",
        {
            "library.properties": "name=ExecuTorch\r\n  version=0.2.0\r\n",
            "executorch_pin.txt": "b" * 40 + "\n",
        },
    )
    with FakeGitHub(spec, OWNER, NAME, TOKEN, git_dir=remote) as fake:
        with pytest.raises(FatalError, match=r"0\.2\.0 was already used on main for ExecuTorch b"):
            Runner(fake, remote, tmp_path)("v1.5.1", "0.2.0")
        assert writes(fake) == []
        fake.assert_clean()


# -- versions against what is published ------------------------------------------------------


def test_version_lower_than_a_published_one_is_refused_before_any_push(
    spec: GitHubSpec, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    remote = make_library_remote(
        tmp_path / "remote",
        {
            "library.properties": "name=ExecuTorch\nversion=1.6.0\n",
            "executorch_pin.txt": "c" * 40 + "\n",
        },
    )
    git("tag", "v1.6.0", "main", cwd=remote)
    with FakeGitHub(spec, OWNER, NAME, TOKEN, git_dir=remote) as fake:
        runner = Runner(fake, remote, tmp_path)
        runner.build.refs["v1.5.0"] = (SHA_OLD, "1.5.0", ["aten::add.out"])
        refs_before = branches(remote)
        with pytest.raises(
            FatalError,
            match=r"library version 1\.5\.0 is not greater than 1\.6\.0, already published "
            r"\(tag v1\.6\.0, version= on main\).*pass --library-version 1\.6\.1$",
        ):
            runner("v1.5.0")  # derived from version.txt
        assert branches(remote) == refs_before and writes(fake) == []
        assert runner.check.checked == []
        assert runner("v1.5.0", "1.6.1").status == "opened"
        fake.assert_clean()


def test_prerelease_below_a_published_one_suggests_the_next_prerelease(
    spec: GitHubSpec, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    remote = make_library_remote(
        tmp_path / "remote",
        {"library.properties": "version=1.5.1\n", "executorch_pin.txt": "c" * 40 + "\n"},
    )
    git("tag", "v1.6.0-alpha.0", "main", cwd=remote)
    git("tag", "v1.6.0-beta.0", "main", cwd=remote)
    with FakeGitHub(spec, OWNER, NAME, TOKEN, git_dir=remote) as fake:
        runner = Runner(fake, remote, tmp_path)
        with pytest.raises(
            FatalError,
            match=r"1\.6\.0-alpha\.1 is not greater than 1\.6\.0-beta\.0, already published "
            r"\(tag v1\.6\.0-beta\.0\).*--library-version 1\.6\.0-beta\.1$",
        ):
            runner("main", "1.6.0-alpha.1")
        assert writes(fake) == []
        fake.assert_clean()


def test_a_tag_publishes_its_library_properties_version_whatever_its_name(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    """The Library Manager reads library.properties at every tag: a sync merged as 0.5.0 and
    tagged `latest` keeps a 0.3.0 from being proposed."""
    first = sync("v1.5.1", "0.5.0")
    merge_into_main(remote, first.branch, tmp_path / "merge")
    git("tag", "latest", "main", cwd=remote)
    before = branches(remote)
    with pytest.raises(FatalError, match=r"not greater than 0\.5\.0.*tag latest"):
        sync("main", "0.3.0")
    assert branches(remote) == before
