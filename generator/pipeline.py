"""The build's public names, kept where callers and tests import them from: the pipeline
itself is `generator.commands.build` (the `build` verb's orchestration, which `sync` runs too).
"""

from __future__ import annotations

from generator.commands.build import BuildOptions, BuildResult, build_library
from generator.urls import DEFAULT_EXECUTORCH_REPO

__all__ = ["DEFAULT_EXECUTORCH_REPO", "BuildOptions", "BuildResult", "build_library"]
