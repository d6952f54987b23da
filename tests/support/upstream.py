"""Real ExecuTorch sources for the end-to-end tests: available when the upstream URLs resolve.

They resolve on GitHub, or offline when git's `url.<base>.insteadOf` maps them to mirrors
(README, "Local mirrors"). CI cannot fetch, so there these tests skip with the reason below.
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

from generator.pipeline.run import (
    BuildOptions,
    BuildResult,
    build_library,
)
from generator.util.urls import DEFAULT_EXECUTORCH_REPO

#: The newest ExecuTorch main in today's snapshot.
MAIN_AT_LEAST = "cff6f4dd32e630945b7188512c1f2b4f102b05ad"
#: The published state: the live library (meta-pytorch/executorch-arduino) is at version 1.5.1,
#: pinned to this ExecuTorch commit (issue 32; the library repo was not read here). The pin's
#: own `version.txt` says 1.5.0 (read from the ExecuTorch mirror), so 1.5.1 is a
#: `--library-version` of its own. An ancestor of `MAIN_AT_LEAST` (2026-08-12).
PUBLISHED_PIN = "b897b1914b97b77b90f9d1cee0e0f9dd25f445b3"
PUBLISHED_VERSION = "1.5.1"

UPSTREAM_URLS = (
    DEFAULT_EXECUTORCH_REPO,
    "https://github.com/google/flatbuffers.git",
    "https://github.com/dvidelabs/flatcc.git",
    "https://github.com/ARM-software/CMSIS-NN.git",
)


def ls_remote(url: str, ref: str) -> subprocess.CompletedProcess[str] | None:
    """`git ls-remote --exit-code URL REF` without prompts; None when it took over 60 s."""
    try:
        return subprocess.run(
            ["git", "ls-remote", "--exit-code", url, ref],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
        )
    except subprocess.TimeoutExpired:
        return None


@functools.cache
def upstream_unavailable() -> str | None:
    """None when every upstream URL answers `git ls-remote`, else the reason to skip."""
    for url in UPSTREAM_URLS:
        proc = ls_remote(url, "HEAD")
        if proc is None:
            return f"{url} did not answer within 60 s (no network, and no insteadOf mirror)"
        if proc.returncode not in (0, 2):
            return (
                f"{url} does not resolve ({proc.stderr.strip().splitlines()[-1:]}); "
                "real ExecuTorch sources are needed (GitHub, or a mirror through insteadOf)"
            )
    return None


@functools.cache
def real_library(root: Path, ref: str, **options: object) -> BuildResult:
    """Build (once per test session and arguments) the library for a real ExecuTorch ref."""
    opts = BuildOptions(executorch_ref=ref, **options)  # type: ignore[arg-type]
    name = ref.replace("/", "_") + "".join(f"-{k}" for k in sorted(options))
    return build_library(opts, root / name / "ExecuTorch")
