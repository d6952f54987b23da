"""End to end: the sync pull request's section on upstream's `examples/arduino/` (issue 17
§4), on real ExecuTorch history, in a clone made the way the build makes it.

ExecuTorch PR #21995 adds `ETModel.h` and rewrites the AddModel and KeywordSpotting sketches;
the library replaces all three with the generator's own, so the section must list them as
superseded. The PR's refs (`refs/pull/21995/head`) are GitHub's, or a mirror's through
`url.<base>.insteadOf`; without them this skips, saying why.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from upstream import MAIN_AT_LEAST, PUBLISHED_PIN, ls_remote

from generator.pipeline.components import load_component
from generator.sync.upstream import arduino_changes, upstream_markdown
from generator.sync.upstream_roles import Kind, Role
from generator.util.urls import DEFAULT_EXECUTORCH_REPO
from generator.vcs.checkout import checkout

pytestmark = pytest.mark.e2e

ET = DEFAULT_EXECUTORCH_REPO
#: The pull request's head, and its base: the main commit the head last merged (the head's
#: second parent; `git merge-base refs/pull/21995/head refs/heads/main`), which is what
#: GitHub's "Files changed" of the pull request compares with.
PR_REF = "refs/pull/21995/head"
PR_HEAD = "7525aa6f13eb57348d29e1479484be672fa0171a"
PR_BASE = "c0260ec1a7c0dd2bc86d82889805b686662422fe"

SUPERSEDED: Kind = "superseded"


@functools.cache
def _unavailable() -> str | None:
    """None when ExecuTorch's URL answers for the pull request's ref, else why not."""
    proc = ls_remote(ET, PR_REF)
    if proc is None:
        return f"{ET} did not answer within 60 s (no network, and no insteadOf mirror)"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no such ref"])[-1]
        return (
            f"{ET} does not resolve {PR_REF} ({last}): real ExecuTorch history is needed "
            "(GitHub, or a mirror with the pull request refs through insteadOf)"
        )
    return None


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reason = _unavailable()
    if reason:
        pytest.skip(reason)
    return tmp_path_factory.mktemp("upstream-cache")


def _build_checkout(cache: Path, ref: str) -> str:
    """Check out ExecuTorch's `ref` into `cache` as the build does (its paths); its SHA."""
    return checkout(ET, ref, load_component("executorch").checkout, cache).sha


def test_pull_request_21995_is_listed_as_superseded(cache: Path) -> None:
    assert _build_checkout(cache, PR_REF) == PR_HEAD
    changes = arduino_changes(ET, PR_BASE, PR_HEAD, cache)
    print(upstream_markdown(changes))
    a = "examples/arduino"
    assert [(f.path, f.status, f.added, f.deleted, f.role) for f in changes.files] == [
        (
            f"{a}/ETModel.h",
            "added",
            250,
            0,
            Role(SUPERSEDED, "`data/library_template/src/ETModel.h`"),
        ),
        (
            f"{a}/build_arduino_library.sh",
            "modified",
            1,
            1,
            Role(SUPERSEDED, "the generator itself (`python -m generator build`)"),
        ),
        (
            f"{a}/examples/AddModel/AddModel.ino",
            "modified",
            25,
            111,
            Role(SUPERSEDED, "`data/library_template/examples/AddModel/AddModel.ino`"),
        ),
        (
            f"{a}/examples/KeywordSpotting/KeywordSpotting.ino",
            "modified",
            35,
            148,
            Role(
                SUPERSEDED, "`data/library_template/examples/KeywordSpotting/KeywordSpotting.ino`"
            ),
        ),
    ]
    text = upstream_markdown(changes)
    assert (
        "https://github.com/pytorch/executorch/compare/"
        f"{PR_BASE}...{PR_HEAD}): 4 files changed, +311 -260 lines." in text
    )
    assert "> 4 of them never reach the library" in text


def test_from_the_published_pin_to_main(cache: Path) -> None:
    assert _build_checkout(cache, MAIN_AT_LEAST) == MAIN_AT_LEAST
    changes = arduino_changes(ET, PUBLISHED_PIN, MAIN_AT_LEAST, cache)
    print(upstream_markdown(changes))
    # The live 1.5.1's pin to main: `git diff --stat b897b191 cff6f4dd32 -- examples/arduino`
    # gives the same 10 files, +679 -338; every file but RELEASING.md is one the library
    # replaces with the generator's own.
    template = "data/library_template"
    assert [(f.path, f.status, f.role) for f in changes.files] == [
        ("examples/arduino/ETModel.h", "added", Role(SUPERSEDED, f"`{template}/src/ETModel.h`")),
        (
            "examples/arduino/ExecuTorch.h",
            "modified",
            Role(SUPERSEDED, f"`{template}/src/ExecuTorch.h`"),
        ),
        (
            "examples/arduino/README.md",
            "modified",
            Role(SUPERSEDED, f"`{template}/README.md.jinja`"),
        ),
        ("examples/arduino/RELEASING.md", "added", Role("unused")),
        (
            "examples/arduino/arduino_pal.cpp",
            "added",
            Role(
                SUPERSEDED,
                f"`{template}/src/executorch/runtime/platform/default/arduino_pal.cpp`",
            ),
        ),
        (
            "examples/arduino/build_arduino_library.sh",
            "modified",
            Role(SUPERSEDED, "the generator itself (`python -m generator build`)"),
        ),
        (
            "examples/arduino/examples/AddModel/AddModel.ino",
            "modified",
            Role(SUPERSEDED, f"`{template}/examples/AddModel/AddModel.ino`"),
        ),
        (
            "examples/arduino/examples/KeywordSpotting/KeywordSpotting.ino",
            "modified",
            Role(SUPERSEDED, f"`{template}/examples/KeywordSpotting/KeywordSpotting.ino`"),
        ),
        (
            "examples/arduino/export_model.py",
            "modified",
            Role(SUPERSEDED, "`data/extras/tools/export_model.py`"),
        ),
        (
            "examples/arduino/library.properties",
            "modified",
            Role(SUPERSEDED, f"`{template}/library.properties.jinja`"),
        ),
    ]
    assert [(f.added, f.deleted) for f in changes.files] == [
        (250, 0), (31, 0), (78, 30), (162, 0), (83, 0), (9, 42), (25, 111), (35, 148), (5, 6),
        (1, 1),
    ]  # fmt: skip
    text = upstream_markdown(changes)
    assert "10 files changed, +679 -338 lines." in text
    assert "> 9 of them never reach the library" in text
