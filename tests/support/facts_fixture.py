"""The facts the sync pull request's body and the release notes are rendered from
(`generator.sync.body.PullRequestFacts`, `generator.release.step.ReleaseFacts`), for the tests
of those texts: library 1.5.1 of ExecuTorch v1.5.1 (PIN_B) against 1.5.0 (PIN_A: the base
branch's, or tag v1.5.0's), one kernel on both sides, no file changed, no sizes, no check
report. A test passes as keyword overrides every fact its assertions rely on."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from generator.release.step import ReleaseFacts
from generator.sync.body import PullRequestFacts

#: The base branch's pin and the ref's SHA of the default facts.
PIN_A = "a" * 40
PIN_B = "b" * 40

_PULL = PullRequestFacts(
    ref="v1.5.1",
    sha=PIN_B,
    base_pin=PIN_A,
    upstream_version="1.5.1",
    library_version="1.5.1",
    base_version="1.5.0",
    op_set=["aten::add.out"],
    kernels=["aten::add.out"],
    base_kernels=["aten::add.out"],
    added=[],
    removed=[],
    changed=[],
    check_markdown="CHECK-REPORT",
    branch="sync/executorch-bbbbbbbbbbbb",
)


_RELEASE = ReleaseFacts(
    version="1.5.1",
    tag="v1.5.1",
    commit="c" * 40,
    previous_tag="v1.5.0",
    pin=PIN_B,
    previous_pin=PIN_A,
    upstream_version="1.5.1",
    previous_upstream="1.5.0",
    kernels=["aten::add.out"],
    previous_kernels=["aten::add.out"],
)


def pull_facts(**overrides: Any) -> PullRequestFacts:
    """The default pull request's facts with `overrides` (field name: value) put in; raises
    TypeError for a name that is no field of PullRequestFacts."""
    return replace(_PULL, **{**_fresh_lists(_PULL), **overrides})


def release_facts(**overrides: Any) -> ReleaseFacts:
    """The default release's facts with `overrides` (field name: value) put in; raises
    TypeError for a name that is no field of ReleaseFacts."""
    return replace(_RELEASE, **{**_fresh_lists(_RELEASE), **overrides})


def _fresh_lists(facts: object) -> dict[str, Any]:
    """Copies of the list fields of `facts`: each call's facts get lists of their own."""
    return {name: list(value) for name, value in vars(facts).items() if isinstance(value, list)}
