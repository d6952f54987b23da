"""Shared fixtures: the real ExecuTorch libraries of the end-to-end tests (built once a session)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # tests import their helpers (et_fixture, upstream)

from upstream import MAIN_AT_LEAST, PUBLISHED_0_2_0, real_library, upstream_unavailable

from generator.pipeline import BuildResult


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
    """The library generated from d756e7d8c2, the commit the published 0.2.0 came from."""
    return real_library(e2e_root, PUBLISHED_0_2_0)


__all__ = ["MAIN_AT_LEAST"]
