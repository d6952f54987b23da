"""No git the build runs on an upstream checkout executes anything (issue 29): not a filter
driver the ref's `.gitattributes` selects, not a hook or `core.fsmonitor` that an earlier
build's code wrote into the cached clone; and the work tree holds the commit's bytes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from et_fixture import Upstream, git

from generator.pipeline.run import BuildOptions, BuildResult, build_library


def build(tmp_path: Path) -> BuildResult:
    out = tmp_path / "out" / "ExecuTorch"
    shutil.rmtree(out, ignore_errors=True)
    return build_library(BuildOptions(cache_dir=tmp_path / "cache"), out)


def executorch_clone(tmp_path: Path) -> Path:
    repos = tmp_path / "cache" / "repos"
    return next(p for p in repos.iterdir() if "pytorch-executorch" in p.name)


@pytest.mark.parametrize("where", [".gitattributes", "runtime/core/.gitattributes"])
def test_a_filter_the_ref_selects_is_not_run_by_the_checkout(
    tmp_path: Path, upstream: Upstream, where: str
) -> None:
    # What git-lfs's `git lfs install` writes, with a program of the test's instead.
    marker = tmp_path / "smudged"
    subprocess.run(
        [
            *("git", "config", "--file", str(upstream.gitconfig)),
            *("filter.lfs.smudge", f"sh -c 'echo ran >> {marker}; cat'"),
        ],
        check=True,
    )
    upstream.commit_executorch({where: "* filter=lfs\n"}, "every file through a filter")
    result = build(tmp_path)
    assert not marker.exists()
    assert (result.out / "src/executorch/runtime/core/error.h").is_file()


def test_attributes_do_not_rewrite_the_bytes_checked_out(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.commit_executorch(
        {".gitattributes": "*.h eol=crlf ident\n", "runtime/core/ident.h": "// $Id$\n"},
        "rewrite on checkout",
    )
    result = build(tmp_path)
    assert (result.out / "src/executorch/runtime/core/ident.h").read_bytes() == b"// $Id$\n"


def test_a_hook_or_fsmonitor_written_into_the_cached_clone_is_not_run(
    tmp_path: Path, upstream: Upstream
) -> None:
    build(tmp_path)
    clone = executorch_clone(tmp_path)
    hooked, monitored = tmp_path / "hooked", tmp_path / "monitored"
    hook = clone / ".git" / "hooks" / "post-checkout"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\ntouch {hooked}\n")
    hook.chmod(0o755)
    git(clone, "config", "core.fsmonitor", f"sh -c 'touch {monitored}'")
    (clone / ".git" / "info" / "attributes").write_text("* filter=lfs\n")
    upstream.commit_executorch({"runtime/core/new.h": "#pragma once\n"}, "the next commit")
    result = build(tmp_path)
    assert (result.out / "src/executorch/runtime/core/new.h").is_file()
    assert not hooked.exists()
    assert not monitored.exists()
    attributes = (clone / ".git" / "info" / "attributes").read_text()
    assert attributes == "* -filter -text -eol -ident -working-tree-encoding\n"
