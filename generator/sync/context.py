"""What every step of one sync shares (`Run`: options, work folder, git's environment,
GitHub, back ends, output streams) and the clone of the library repo it works in (`Clone`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from git import Repo

from generator.sync.github import GitHubRepo
from generator.sync.options import BuildFn, CheckFn, SyncOptions
from generator.vcs import git as g

#: A full commit SHA, as the build must report its pin.
FULL_SHA = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class Run:
    """What every step of one sync shares: the options, the work folder, git's environment
    (the token), GitHub (None: a dry run), the back ends and the two output streams."""

    options: SyncOptions
    work: Path
    genv: g.GitEnv
    gh: GitHubRepo | None
    build: BuildFn
    check: CheckFn
    say: Callable[[str], None]
    emit: Callable[[str], None]


@dataclass(frozen=True)
class Clone:
    """The clone of the library repo: `lib`, and the base branch as it was cloned."""

    lib: Repo
    base_rev: str

    @property
    def worktree(self) -> Path:
        return Path(self.lib.working_dir)
