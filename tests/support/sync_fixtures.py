"""Parts for the sync tests: a real bare git repo as the library remote, a fake build that
writes a small library tree with the real layout, a fake check, git helpers, and the `Runner`
that runs sync against them and the fake GitHub (the fixtures are in conftest.py).

The fake build stands in for `generator.pipeline.run.build_library` (the real one needs ExecuTorch
sources); it follows the same contract: writes the generated paths to `out`, returns a
`BuildResult`, and takes the library version from `generator.library.version.library_version`.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sketches import EMPTY_SKETCH

from generator.library.facts import LibraryFacts
from generator.library.layout import CODEGEN_DIR, LIBRARY_FACTS_FILE, PIN_FILE, PROVENANCE_FILE
from generator.library.version import library_version
from generator.pipeline.run import BuildOptions, BuildResult
from generator.sync.github import GitHubRepo
from generator.sync.run import SyncOptions, SyncResult, run_sync
from generator.util.errors import FatalError

if TYPE_CHECKING:
    from github_fake import FakeGitHub

#: A machine identity the bot must never use (tests put it in the global git config).
MACHINE_NAME = "Machine Person"
MACHINE_EMAIL = "machine@example.invalid"
#: Identity of commits the tests make themselves (the library repo's maintainers).
MAINTAINER = ("Maintainer", "maintainer@example.invalid")

#: What the fake GitHub accepts, the repo it serves, and the two ExecuTorch commits of the
#: fake build (refs -> (SHA, version.txt, kernels registered)).
TOKEN = "ghp_SyncTestToken0123456789abcdefABCDEF"
OWNER, NAME = "acme", "ExecuTorch"
SHA_OLD = "d756e7d8c2" + "0" * 30
SHA_NEW = "5f3e2a1b0c" + "1" * 30
REFS = {
    "v1.5.1": (SHA_OLD, "1.5.1", ["aten::add.out", "aten::mul.out"]),
    "main": (SHA_NEW, "1.6.0a0", ["aten::add.out", "aten::mul.out", "aten::relu.out"]),
}

#: API paths (regular expressions) the tests make the fake GitHub fail.
PULLS = rf"^/repos/{OWNER}/{NAME}/pulls$"
REPO = rf"^/repos/{OWNER}/{NAME}$"


def git(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run git (test side) and return stdout; fails the test on a non-zero exit."""
    full_env = {
        **os.environ,
        "GIT_AUTHOR_NAME": MAINTAINER[0],
        "GIT_AUTHOR_EMAIL": MAINTAINER[1],
        "GIT_COMMITTER_NAME": MAINTAINER[0],
        "GIT_COMMITTER_EMAIL": MAINTAINER[1],
        **(env or {}),
    }
    result = subprocess.run(
        ["git", *args], cwd=cwd, env=full_env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, f"git {' '.join(args)} failed:\n{result.stderr}"
    return result.stdout.strip()


def isolate_git(home: Path) -> dict[str, str]:
    """Environment that points git at a global config with a machine identity and a
    credential store, and away from the system config. Returns the variables to set."""
    home.mkdir(parents=True, exist_ok=True)
    config = home / "gitconfig"
    store = home / "credentials"
    config.write_text(
        f"[user]\n\tname = {MACHINE_NAME}\n\temail = {MACHINE_EMAIL}\n"
        f"[credential]\n\thelper = store --file={store}\n"
        "[init]\n\tdefaultBranch = main\n"
    )
    return {"GIT_CONFIG_GLOBAL": str(config), "GIT_CONFIG_NOSYSTEM": "1"}


def make_library_remote(
    root: Path, files: dict[str, str] | None = None, *, only_readme: bool = False
) -> Path:
    """A bare repo `root/library.git` whose `main` holds README.md, CHANGELOG.md, .github/
    (only README.md if `only_readme`) and `files` (path -> text). Returns its path."""
    bare = root / "library.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(bare))
    seed = root / "seed"
    git("init", "--quiet", "--initial-branch=main", str(seed))
    owned = {
        "README.md": "# ExecuTorch for Arduino\n",
        "CHANGELOG.md": "# Changelog\n",
        ".github/workflows/lint.yml": "name: lint\non: push\njobs: {}\n",
    }
    if only_readme:
        owned = {"README.md": owned["README.md"]}
    for path, text in {**owned, **(files or {})}.items():
        target = seed / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git("add", "-A", cwd=seed)
    git("commit", "--quiet", "-m", "Initial library repo", cwd=seed)
    git("push", "--quiet", str(bare), "main", cwd=seed)
    return bare


def branches(bare: Path) -> dict[str, str]:
    """refs/heads/* of a bare repo: branch name -> SHA."""
    out = git("for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads", cwd=bare)
    return dict(line.split(" ", 1) for line in out.splitlines() if line)


def show(bare: Path, rev: str, path: str) -> str:
    """A file's text at `rev` in the bare repo."""
    return git("show", f"{rev}:{path}", cwd=bare)


def ls_tree(bare: Path, rev: str) -> set[str]:
    """Every file path at `rev`."""
    return set(git("ls-tree", "-r", "--name-only", rev, cwd=bare).splitlines())


def merge_into_main(bare: Path, branch: str, work: Path) -> str:
    """Merge `branch` into `main` of the bare repo (as the maintainer would on GitHub)."""
    git("clone", "--quiet", str(bare), str(work))
    git("merge", "--quiet", "--no-ff", "-m", f"Merge {branch}", f"origin/{branch}", cwd=work)
    git("push", "--quiet", "origin", "main", cwd=work)
    return git("rev-parse", "HEAD", cwd=work)


@dataclass
class FakeBuild:
    """Stands in for `build_library`: refs map to (SHA, version.txt, ops); each call writes a
    tree with the library layout.

    Attributes:
        refs: ref -> (40-hex SHA, version.txt text, kernel names registered).
        calls: the options of every call (asserts that sync passes the build options on).
        extra: extra files (path -> text) every build writes (e.g. a top-level README.md that
            sync must not copy).
        provenance_note: written into PROVENANCE.txt, to vary it without other changes.
        facts_file: also write extras/library.json, as today's build does (without it, the
            tree is an older generator's).
    """

    refs: dict[str, tuple[str, str, list[str]]]
    calls: list[BuildOptions] = field(default_factory=list)
    extra: dict[str, str] = field(default_factory=dict)
    provenance_note: str = "built"
    facts_file: bool = False

    def __call__(self, options: BuildOptions, out: Path) -> BuildResult:
        self.calls.append(options)
        if options.executorch_ref not in self.refs:
            raise FatalError(
                f"ExecuTorch ref {options.executorch_ref!r} does not exist in "
                f"{options.executorch_repo}: give a branch, tag or SHA that does"
            )
        sha, upstream, kernels = self.refs[options.executorch_ref]
        version = library_version(upstream, options.library_version, options.executorch_ref)
        registration = "\n".join(
            f'  Kernel("{op}", [](KernelRuntimeContext& ctx, Span<EValue*> stack) '
            f"{{ ET_CHECK(stack.size() == 3); }}),"
            for op in kernels
        )
        files = {
            "library.properties": (
                f"name=ExecuTorch\nversion={version}\nauthor=PyTorch\n"
                "maintainer=bot\nsentence=ExecuTorch\nparagraph=.\ncategory=Other\n"
                "url=https://github.com/pytorch/executorch\narchitectures=*\n"
            ),
            "LICENSE": "BSD License\n",
            PIN_FILE: f"{sha}\n",
            "src/ExecuTorch.h": "#pragma once\n",
            "src/executorch/runtime/core/evalue.h": f"// {sha}\n",
            f"{CODEGEN_DIR}/RegisterCodegenUnboxedKernelsEverything.cpp": (
                f"static Kernel kernels[] = {{\n{registration}\n}};\n"
            ),
            "examples/AddModel/AddModel.ino": EMPTY_SKETCH,
            PROVENANCE_FILE: (
                f"ExecuTorch ref: {options.executorch_ref}\nExecuTorch SHA: {sha}\n"
                f"version.txt: {upstream}\nnote: {self.provenance_note}\n"
            ),
            **self.extra,
        }
        if self.facts_file:
            files[LIBRARY_FACTS_FILE] = LibraryFacts(
                version,
                sha,
                ref=options.executorch_ref,
                upstream_version=upstream,
                kernels=tuple(kernels),
            ).to_json()
        for path, text in files.items():
            target = out / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        return BuildResult(
            out=out,
            ref=options.executorch_ref,
            sha=sha,
            upstream_version=upstream,
            library_version=version,
            op_set=sorted(set(kernels)),
            kernel_count=len(kernels),
            files=len(files),
        )


@dataclass
class FakeReport:
    """Stands in for `generator.check.report.CheckReport`."""

    passed: bool
    flash: int
    ram: int
    instructions: int | None = None  # per inference (timing.py); None: no `Inference:` line

    def to_dict(self) -> dict[str, Any]:
        timing = (
            None if self.instructions is None else {"instructions_per_inference": self.instructions}
        )
        return {
            "passed": self.passed,
            "examples": [
                {
                    "example": "AddModel",
                    "sizes": {"flash": self.flash, "ram": self.ram},
                    "timing": timing,
                    "runs": [
                        {"kind": "host", "last_lines": ["host run"]},
                        {"kind": "emulated", "last_lines": ["=== AddModel ===", "[2, 3, 4]"]},
                    ],
                },
            ],
        }

    def to_markdown(self) -> str:
        verdict = "passed" if self.passed else "FAILED"
        return f"**check {verdict}**: AddModel compile {verdict}, flash {self.flash} B"


@dataclass
class FakeCheck:
    """Stands in for `run_check`; records the libraries it was asked to check."""

    passed: bool = True
    flash: int = 100_000
    ram: int = 20_000
    instructions: int | None = None
    checked: list[Path] = field(default_factory=list)

    def __call__(self, library: Path, options: Any) -> FakeReport:
        self.checked.append(library)
        assert (library / "library.properties").is_file()
        return FakeReport(self.passed, self.flash, self.ram, self.instructions)


def report_in(bare: Path, rev: str) -> dict[str, Any]:
    """extras/check_report.json at `rev`."""
    loaded: dict[str, Any] = json.loads(show(bare, rev, "extras/check_report.json"))
    return loaded


class Runner:
    """Runs sync against the fake GitHub and the bare remote, recording waits."""

    def __init__(self, fake: FakeGitHub, remote: Path, tmp_path: Path) -> None:
        self.fake = fake
        self.remote = remote
        self.tmp_path = tmp_path
        self.build = FakeBuild(dict(REFS))
        self.check = FakeCheck()
        self.sleeps: list[float] = []
        self.runs = 0
        self.repo_class: type[GitHubRepo] = GitHubRepo

    def __call__(
        self,
        ref: str = "v1.5.1",
        version: str | None = None,
        token: str | None = TOKEN,
        **options: Any,
    ) -> SyncResult:
        self.runs += 1
        opts = SyncOptions(
            build=BuildOptions(
                executorch_ref=ref, library_version=version, cache_dir=self.tmp_path / "cache"
            ),
            repo=options.pop("repo", f"{OWNER}/{NAME}"),
            remote=options.pop("remote", str(self.remote)),
            api_url=options.pop("api_url", self.fake.url),
            **options,
        )
        return run_sync(
            opts,
            token,
            build=self.build,
            check=self.check,
            connect=lambda url, repo, tok: self.repo_class(
                url, repo, tok, sleep=self.sleeps.append, throttle=False
            ),
        )


def with_fakes(runner: Runner) -> Any:
    """`run_sync` with `runner`'s build, check and GitHub, for a test that drives sync through
    `generator.cli.main.main` (monkeypatched over `generator.sync.run.run_sync`)."""

    def run(options: SyncOptions, token: str | None, **_: Any) -> SyncResult:
        return run_sync(
            options,
            token,
            build=runner.build,
            check=runner.check,
            connect=lambda url, repo, tok: GitHubRepo(url, repo, tok, throttle=False),
        )

    return run


def writes(fake: FakeGitHub) -> list[tuple[str, str, int]]:
    return [r for r in fake.requests if r[0] in ("POST", "PATCH")]


def branch_of(sha: str) -> str:
    return f"sync/executorch-{sha[:12]}"
