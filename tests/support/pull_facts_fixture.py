"""The facts of one sync pull request (`generator.sync.body.PullRequestFacts`) for the tests of
the body: a sync of ExecuTorch v1.5.1 (PIN_B) onto a base branch of library 1.5.0 (PIN_A),
one kernel on both sides, no file changed, no sizes, no base check report. A test passes as
keyword overrides every fact its assertions rely on."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from generator.sync.body import PullRequestFacts

#: The base branch's pin and the ref's SHA of the default facts.
PIN_A = "a" * 40
PIN_B = "b" * 40

_DEFAULT = PullRequestFacts(
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


def pull_facts(**overrides: Any) -> PullRequestFacts:
    """The default facts with `overrides` (field name: value) put in; raises TypeError for a
    name that is no field of PullRequestFacts. Each call gets lists of its own."""
    fresh: dict[str, Any] = {
        name: list(value) for name, value in vars(_DEFAULT).items() if isinstance(value, list)
    }
    return replace(_DEFAULT, **{**fresh, **overrides})
