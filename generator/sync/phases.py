"""The two phases of a sync (`generator.sync.stage`, issue 29): `prepare` builds and checks
the untrusted ref without the secrets and stages the result; `publish` runs
`generator.sync.run.run_sync` on a staged folder, executing nothing of it. `ChildPhase` is
both in one process: its build runs `sync --prepare` in a child without the secrets.

The default back ends (`generator.sync.defaults`) and `run_sync` are looked up when called,
so a test or the rehearsal's shim may replace them there."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from generator.library.version import check_explicit_version
from generator.pipeline.run import BuildOptions, BuildResult
from generator.sync import defaults, stage
from generator.sync import run as runner
from generator.sync.committed_report import committed_report
from generator.sync.context import FULL_SHA
from generator.sync.defaults import sync_board_keys, to_stderr, to_stdout
from generator.sync.options import BuildFn, CheckFn, CheckReportLike, ConnectFn, SyncOptions
from generator.sync.upstream_stage import prepare_comparison
from generator.util.cache import default_cache_dir
from generator.util.errors import FatalError
from generator.util.urls import refuse_credentials
from generator.vcs.git_config import snapshot_global_config


def harden(secrets: list[str]) -> None:
    """Make this process non-dumpable and scrub `secrets` from its initial environment
    (`generator.sync.stage`), warning where that cannot be done."""
    if not stage.make_nondumpable():
        to_stderr(
            "warning: could not make sync non-dumpable (not Linux?): the build and check "
            "run in a child without the token, but the same user may read this process's "
            "environment"
        )
    if secrets and not stage.scrub_initial_environ(secrets):
        to_stderr(
            "warning: could not scrub the token from this process's initial environment "
            "(/proc/self/environ)"
        )


@dataclass
class ChildPhase:
    """The build and check back ends of the CLI's sync: `build` runs `sync --prepare` in a
    child process without the secrets (`generator.sync.stage`) into a staging folder beside
    the build folder `run_sync` names, and returns the staged build once its digest checks
    out; `check` returns the report the child staged.

    Attributes:
        argv: the command line sync was given (the child's is it plus `--prepare DIR`).
        secrets: the token and the App key (variables holding them are not passed on).
    """

    argv: list[str]
    secrets: list[str]
    report: stage.StagedReport | None = None
    global_config: str | None = None

    def build(self, options: BuildOptions, out: Path) -> BuildResult:
        """Run the prepare phase; the staging folder is `out`'s sibling `stage`. The global
        git config is read first (`git_config`): the child may write the user's.

        Raises:
            FatalError: the child failed, or what it staged is not intact (`read_stage`).
        """
        harden(self.secrets)
        self.global_config = snapshot_global_config()
        staged = out.parent / "stage"
        env = stage.child_env(os.environ, self.secrets)
        to_stderr("building and checking in an unprivileged child process (no token)")
        stage.run_prepare_child([*self.argv, "--prepare", str(staged)], env, to_stderr)
        built, self.report = stage.read_stage(staged)
        if built.ref != options.executorch_ref:
            raise FatalError(f"the child built {built.ref!r}, not {options.executorch_ref!r}")
        return built

    def check(self, library: Path, options: SyncOptions) -> CheckReportLike:
        """The report the prepare phase staged."""
        if self.report is None:
            raise FatalError("internal: the check was asked for before the build")
        return self.report

    def git_config(self) -> str | None:
        """The global git config as it was before the child started (None: not started)."""
        return self.global_config


def refuse_secrets() -> None:
    """Refuse to run the prepare phase with a secret in the environment.

    Raises:
        FatalError: GITHUB_TOKEN, SYNC_APP_PRIVATE_KEY or SYNC_TOKEN is set
            (`generator.sync.stage.secrets_in_env`): the phase runs upstream code.
    """
    found = stage.secrets_in_env(os.environ)
    if found:
        raise FatalError(
            f"sync --prepare builds and runs code of the ExecuTorch ref, which must not see "
            f"the library repo's credentials: unset {', '.join(found)} for this step (give "
            "them only to `sync --publish`)"
        )


def prepare(
    options: SyncOptions,
    staged: Path,
    build: BuildFn | None = None,
    check: CheckFn | None = None,
) -> int:
    """`sync --prepare DIR`: the unprivileged phase. Build the library into `DIR/library`,
    check it, and write the report and the manifest (`generator.sync.stage.write_stage`);
    prints the tree's digest (`sha256:<hex>`) as the last line of stdout, and, when
    `$GITHUB_OUTPUT` is set, appends `digest=<it>` there. A failing check is staged too: the
    publish phase refuses it. `build` and `check` default to `generator.sync.defaults`'
    `default_build` and `default_check`, looked up when called.

    Raises:
        FatalError: a secret (GITHUB_TOKEN, SYNC_APP_PRIVATE_KEY, SYNC_TOKEN) is set: this
            phase runs upstream code and must not see it (`refuse_secrets`); `DIR` exists and
            is not empty; bad options; the build failed.
    """
    refuse_secrets()
    sync_board_keys(options.boards)
    refuse_credentials(options.build.executorch_repo, "--executorch-repo")
    if options.build.library_version is not None:
        check_explicit_version(options.build.library_version)
    if staged.exists() and (not staged.is_dir() or any(staged.iterdir())):
        raise FatalError(f"--prepare {staged}: the folder exists and is not empty")
    staged.mkdir(parents=True, exist_ok=True)
    staged = staged.resolve()
    built = (build or defaults.default_build)(options.build, staged / stage.LIBRARY_DIR)
    if not FULL_SHA.match(built.sha):
        raise FatalError(f"the build reported pin {built.sha!r}, not a full SHA")
    to_stderr("checking the built library")
    report = (check or defaults.default_check)(built.out, options)
    roots = {
        built.out: ".",
        staged: "<work>",
        options.build.cache_dir or default_cache_dir(): "<cache>",
    }
    data = committed_report(report.to_dict(), roots)
    upstream = prepare_comparison(options, built.sha)
    digest = stage.write_stage(staged, built, report.passed, report.to_markdown(), data, upstream)
    output = os.environ.get("GITHUB_OUTPUT")
    if output:
        with open(output, "a", encoding="utf-8") as f:
            f.write(f"digest={digest}\n")
    to_stdout(digest)
    return 0


def publish(
    options: SyncOptions,
    token: str | None,
    app_key: str | None,
    staged: Path,
    expected: str | None,
    connect: ConnectFn | None = None,
) -> runner.SyncResult:
    """The publish phase: `run_sync` with the staged build and check report as its back ends
    (the digest checked first: `generator.sync.stage.read_stage`).

    Raises:
        FatalError: the staged folder is not one `--prepare` wrote, its digest is wrong, it
            was built from another ref or version than the options ask, or `run_sync`'s.
    """
    built, report = stage.read_stage(staged, expected)
    wanted = options.build
    if built.ref != wanted.executorch_ref:
        raise FatalError(
            f"the staged library was built from ExecuTorch {built.ref!r}, not "
            f"{wanted.executorch_ref!r}: prepare and publish with the same options"
        )
    if wanted.library_version is not None and built.library_version != wanted.library_version:
        raise FatalError(
            f"the staged library is version {built.library_version}, not "
            f"{wanted.library_version}: prepare and publish with the same options"
        )

    def staged_build(_options: BuildOptions, _out: Path) -> BuildResult:
        return built

    def staged_check(_library: Path, _options: SyncOptions) -> CheckReportLike:
        return report

    return runner.run_sync(
        options,
        token,
        app_key=app_key,
        build=staged_build,
        check=staged_check,
        connect=connect or defaults.default_connect,
    )
