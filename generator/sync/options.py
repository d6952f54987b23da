"""What `python -m generator sync` was asked to do (`SyncOptions`) and the shapes of its
build, check and GitHub back ends (`BuildFn`, `CheckFn`, `ConnectFn`, `CheckReportLike`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from generator.boards.budgets import UNO_Q
from generator.pipeline.run import BuildOptions, BuildResult
from generator.sync.app import AppCredentials
from generator.sync.github import DEFAULT_API_URL, GitHubRepo
from generator.vcs import git as g
from generator.vcs.git import DEFAULT_BOT_EMAIL, DEFAULT_BOT_NAME


class CheckReportLike(Protocol):
    """What sync needs of `generator.check.report.CheckReport`."""

    @property
    def passed(self) -> bool: ...

    def to_markdown(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...


#: build(options, out) -> BuildResult; writes the library to `out` (must not exist).
BuildFn = Callable[[BuildOptions, Path], BuildResult]
#: check(library, options) -> report.
CheckFn = Callable[[Path, "SyncOptions"], CheckReportLike]
#: connect(api_url, repo, credentials) -> GitHubRepo; credentials: a token, or a GitHub App.
ConnectFn = Callable[[str, str, str | AppCredentials], GitHubRepo]


@dataclass(frozen=True)
class SyncOptions:
    """What `python -m generator sync` was asked to do.

    Attributes:
        build: the build options, passed on to `build_library` (ref, version, op set, examples).
        repo: the library repo on GitHub, OWNER/NAME.
        remote: git URL to clone and push (None: the repo's clone URL from the API).
        base: branch the pull request targets; never pushed to.
        dry_run: build, check and render, but push nothing and call no GitHub API.
        api_url: GitHub REST API root (GitHub Enterprise: https://HOST/api/v3).
        identity: author and committer of the sync commit.
        compiler, run: passed on to `check` (toolchain back end; whether to run emulated).
        boards: the boards `check` checks, as `check --board` takes them (keys of
            `generator.boards.budgets.check_boards`, or `all`; `sync_board_keys`); `unoq` must be
            among them: the link-modes section and the examples' header comments are the UNO
            Q's loader verdicts. More than one: the report is `board_data`'s merged one.
        work_dir: where the clone and the build go and stay (for inspection); None: a
            temporary folder, removed at the end.
        keep_older: leave the other open sync pull requests open (default: close them as
            superseded and delete their branches); their versions then count as used.
        recreate: open a pull request for the sync branch even though the last one from it
            was closed without merging (default: say so and stop, exit 0).
        workflow_token: the token is the Actions GITHUB_TOKEN, whose pushes start no workflow:
            the body (and the step summary) say that CI did not run and how to fix it.
        step_summary: the job summary (`$GITHUB_STEP_SUMMARY`): a passing check's report and
            (with `workflow_token`) the CI note are appended to it; a failing check's report
            goes to stdout, which the workflow copies there; a failing sync's error (redacted)
            is appended. None: no summary.
        app_id: act as this GitHub App (App ID or client ID; its private key comes from
            SYNC_APP_PRIVATE_KEY): sync mints the App's installation tokens itself, when
            needed and again near their end. It wins over GITHUB_TOKEN. None: use the token.
    """

    build: BuildOptions
    repo: str
    remote: str | None = None
    base: str = "main"
    dry_run: bool = False
    api_url: str = DEFAULT_API_URL
    identity: g.Identity = field(
        default_factory=lambda: g.Identity(DEFAULT_BOT_NAME, DEFAULT_BOT_EMAIL)
    )
    compiler: str = "auto"
    run: bool = True
    boards: tuple[str, ...] = (UNO_Q.key,)
    work_dir: Path | None = None
    keep_older: bool = False
    recreate: bool = False
    workflow_token: bool = False
    step_summary: Path | None = None
    app_id: str | None = None
