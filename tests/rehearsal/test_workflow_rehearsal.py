"""Issue 17, §5: the library repo's workflows rehearsed end to end (`workflow_rehearsal.py`):
sync by hand and by repository_dispatch, CI on the sync pull request, a merged sync pull
request that releases, a closed one that must not, GitHub's refusal to let the workflow token
open pull requests, and an App token that expires during a long run.

Each scenario renders the workflows from this work tree (`render_workflows`), puts them on the
fake library repo's main, and rehearses them step by step. The generator they fetch is this
work tree too: a commit of its files (tracked and untracked, not ignored) in a scratch
repository, made once a session, so a change counts before it is committed.

Set REHEARSAL_TRANSCRIPTS=DIR to keep each test's transcripts in DIR/<test>.txt.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import tarfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from gha_expressions import ExpressionError, Scope, condition, evaluate, render
from github_fake import FakeGitHub, GitHubSpec
from github_fake.git_http import GitHttpRemote
from github_fake.server import FakeApp
from github_fake.spec import OPERATIONS
from sync_fixtures import (
    NAME,
    OWNER,
    PULLS,
    SHA_NEW,
    branches,
    git,
    isolate_git,
    make_library_remote,
    show,
)
from workflow_rehearsal import (
    Event,
    Rehearsal,
    RehearsalError,
    Run,
    Settings,
    filter_matches,
    parse_workflow,
    triggers,
)

from generator import PROJECT_ROOT
from generator.boards.budgets import ZEPHYR_BOARDS, check_boards
from generator.sync.github import GitHubRepo
from generator.workflows.render import WORKFLOWS_DIR, render_workflows

GENERATOR_REPO = "https://github.com/example/executorch-arduino-generator.git"
REPO = f"{OWNER}/{NAME}"
WORKFLOW_TOKEN = "ghs_RehearsalWorkflowToken000000000000"
APP_CLIENT_ID = "Iv23liRehearsal00001"
#: GitHub's answer to POST /repos/{o}/{r}/pulls with a workflow token when "Allow GitHub
#: Actions to create and approve pull requests" is off (quoted in
#: https://github.com/danielroe/uppt/issues/11; the setting named in
#: https://github.com/peter-evans/create-pull-request/issues/1175).
NOT_PERMITTED = {
    "message": "GitHub Actions is not permitted to create or approve pull requests.",
    "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
    "status": "403",
}
SETTING = "Allow GitHub Actions to create and approve pull requests"


# --- fixtures: the generator as this work tree, the fake library repo, the rehearsal --------------


@pytest.fixture(scope="session")
def generator_commit(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(a git repository holding this work tree's files as one commit, that commit)."""
    try:
        listed = subprocess.run(
            ["git", "-C", str(PROJECT_ROOT), "ls-files", "-co", "--exclude-standard", "-z"],
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("the rehearsal fetches the generator from this repository's git work tree")
    snapshot = tmp_path_factory.mktemp("generator")
    archive = snapshot.parent / f"{snapshot.name}.tar"
    with tarfile.open(archive, "w") as tar:
        for name in listed.decode().split("\0"):
            path = PROJECT_ROOT / name
            if name and (path.is_file() or path.is_symlink()):
                tar.add(path, arcname=name, recursive=False)
    with tarfile.open(archive) as tar:
        tar.extractall(snapshot, filter="tar")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        [
            "-c",
            "user.name=work tree",
            "-c",
            "user.email=tree@example.invalid",
            "commit",
            "-qm",
            "tree",
        ],
    ):
        subprocess.run(["git", *args], cwd=snapshot, env=env, check=True, capture_output=True)
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"],
        cwd=snapshot,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return snapshot, sha


@pytest.fixture(scope="session")
def app_key() -> tuple[str, bytes]:
    """A GitHub App's private key (PEM text, made here) and its public key (PEM bytes)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private, public


@dataclass
class World:
    """The fake library repo (bare git, fake GitHub, its git remote over HTTP with tokens) and
    a rehearsal of its installed workflows. The fake's clock is the rehearsal's: after
    `slow_check()`, the sync's check takes 61 minutes on it, so a token minted before the check
    has expired after it."""

    fake: FakeGitHub
    remote: Path
    git_remote: GitHttpRemote
    rehearsal: Rehearsal
    workflows: dict[str, str]
    tmp: Path
    app: Settings
    finished: bool = False
    runs: list[Run] = field(default_factory=list)

    def run(self, name: str, event: Event, settings: Settings) -> Run:
        run = self.rehearsal.run(name, self.workflows[name], event, settings)
        self.runs.append(run)
        keep = os.environ.get("REHEARSAL_TRANSCRIPTS")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            test = os.environ.get("PYTEST_CURRENT_TEST", "run").split("::")[-1].split(" ")[0]
            with open(Path(keep) / f"{test}.txt", "a", encoding="utf-8") as f:
                f.write(run.transcript() + "\n\n")
        return run

    def sync(self, settings: Settings, **inputs: str) -> Run:
        """sync.yml dispatched by hand (`gh workflow run sync.yml -f ...`)."""
        return self.run(
            "sync.yml", Event("workflow_dispatch", inputs=inputs, sha=self.main()), settings
        )

    def main(self) -> str:
        return branches(self.remote)["main"]

    def slow_check(self) -> None:
        """From now on the sync's check takes 61 minutes on the rehearsal's clock."""
        self.rehearsal.slow_check = True

    def merge(self, number: int) -> str:
        """Merge pull request `number` into main as a maintainer would; returns main's SHA."""
        pull = self.fake.pulls[number]
        work = self.tmp / f"merge-{number}"
        git("clone", "--quiet", str(self.remote), str(work))
        git(
            "merge",
            "--quiet",
            "--no-ff",
            "-m",
            f"Merge pull request #{number}",
            f"origin/{pull.head}",
            cwd=work,
        )
        git("push", "--quiet", "origin", "main", cwd=work)
        pull.state, pull.merged, pull.closed_by = "closed", True, "a-maintainer"
        return self.main()

    def sync_pull(self, branch: str, files: dict[str, str] | None = None) -> int:
        """A sync pull request made cheaply (a commit pushed, the PR opened through the
        generator's GitHub code) for scenarios that only need one to exist."""
        work = self.tmp / f"pull-{branch.replace('/', '-')}"
        git("clone", "--quiet", str(self.remote), str(work))
        git("checkout", "--quiet", "-b", branch, cwd=work)
        for path, text in (files or {"src/ExecuTorch.h": "#pragma once\n"}).items():
            (work / path).parent.mkdir(parents=True, exist_ok=True)
            (work / path).write_text(text)
        git("add", "-A", cwd=work)
        git("commit", "--quiet", "-m", "sync", cwd=work)
        git("push", "--quiet", "origin", branch, cwd=work)
        gh = GitHubRepo(self.fake.url, REPO, WORKFLOW_TOKEN, throttle=False, sleep=lambda s: None)
        return gh.open_or_update(branch, "main", "Sync", "body", "sync").number

    def pull_event(self, number: int, action: str) -> Event:
        """The pull_request webhook for pull request `number` as the fake holds it."""
        pull = self.fake.pulls[number]
        heads = branches(self.remote)
        payload: dict[str, Any] = {
            "action": action,
            "number": number,
            "pull_request": {
                "number": number,
                "title": pull.title,
                "state": pull.state,
                "merged": pull.merged,
                "labels": [{"name": label} for label in pull.labels],
                "head": {
                    "ref": pull.head,
                    "sha": heads.get(pull.head, ""),
                    "repo": {"full_name": REPO},
                },
                "base": {"ref": pull.base, "sha": heads[pull.base], "repo": {"full_name": REPO}},
                "user": {"login": "executorch-arduino-bot"},
            },
            "repository": {"full_name": REPO, "default_branch": "main"},
        }
        sha = heads["main"] if pull.merged else heads.get(pull.head, "")
        return Event("pull_request", payload, sha=sha)

    def finish(self, allowed: tuple[str, ...] = ()) -> None:
        """The fake saw nothing outside GitHub's description (but `allowed` prefixes)."""
        self.finished = True
        left = [v for v in self.fake.violations if not v.startswith(allowed)]
        assert not left, "GitHub OpenAPI violations:\n" + "\n".join(left)


@contextlib.contextmanager
def make_world(
    tmp: Path, spec: GitHubSpec, generator_commit: tuple[Path, str], app_key: tuple[str, bytes]
) -> Iterator[World]:
    """A `World` in `tmp`, with git isolated (`sync_fixtures.isolate_git`) while it lasts."""
    with pytest.MonkeyPatch.context() as mp:
        for key, value in isolate_git(tmp / "home").items():
            mp.setenv(key, value)
        mp.delenv("GITHUB_TOKEN", raising=False)
        generator_dir, sha = generator_commit
        rendered = render_workflows(GENERATOR_REPO, sha)
        remote = make_library_remote(
            tmp / "remote", {f"{WORKFLOWS_DIR}/{n}": t for n, t in rendered.items()}
        )
        runs = tmp / "runs"
        runs.mkdir()
        made: list[Rehearsal] = []  # the fake's clock is the rehearsal's, made below

        def clock() -> datetime:
            return made[0].clock()

        app = FakeApp(app_id=1234567, public_key=app_key[1], client_id=APP_CLIENT_ID)
        with (
            FakeGitHub(
                spec, OWNER, NAME, WORKFLOW_TOKEN, git_dir=remote, app=app, clock=clock
            ) as fake,
            GitHttpRemote(remote.parent, WORKFLOW_TOKEN, accept=fake.token_valid) as git_remote,
        ):
            # what the workflow token writes is by github-actions[bot] (ci.yml finds its size
            # comment by that login)
            fake.logins[WORKFLOW_TOKEN] = "github-actions[bot]"
            rehearsal = Rehearsal(
                runs,
                repo=REPO,
                remote=remote,
                git_url=f"{git_remote.url}/{remote.name}",
                api_url=fake.url,
                generator_repo=GENERATOR_REPO,
                generator_dir=generator_dir,
            )
            settings = Settings(
                vars={"SYNC_APP_ID": APP_CLIENT_ID},
                secrets={"SYNC_APP_PRIVATE_KEY": app_key[0]},
                workflow_token=WORKFLOW_TOKEN,
            )
            made.append(rehearsal)
            yield World(fake, remote, git_remote, rehearsal, rendered, tmp, settings)


@pytest.fixture
def world(
    spec: GitHubSpec,
    tmp_path: Path,
    generator_commit: tuple[Path, str],
    app_key: tuple[str, bytes],
) -> Iterator[World]:
    with make_world(tmp_path, spec, generator_commit, app_key) as made:
        yield made


@pytest.fixture(scope="module")
def module_world(
    spec: GitHubSpec,
    tmp_path_factory: pytest.TempPathFactory,
    generator_commit: tuple[Path, str],
    app_key: tuple[str, bytes],
) -> Callable[[], contextlib.AbstractContextManager[World]]:
    """Makes a `World` for a scenario that several tests look at (run once a module)."""
    return lambda: make_world(tmp_path_factory.mktemp("world"), spec, generator_commit, app_key)


WORKFLOW_ONLY = Settings(workflow_token=WORKFLOW_TOKEN)


def sync_branches(remote: Path) -> list[str]:
    """The sync branches on the library repo's remote, sorted."""
    return sorted(b for b in branches(remote) if b.startswith("sync/"))


def generator_calls(run: Run, verb: str) -> list[list[str]]:
    """The arguments of each `python -m generator VERB ...` the run's scripts made."""
    return [
        c.args[3:]
        for c in run.commands("python", nested=False)
        if c.args[:3] == ["-m", "generator", verb]
    ]


def offered(world: World) -> set[str]:
    """Every password git offered the library repo's remote."""
    return {password for _, password in world.git_remote.offered}


def with_vars(settings: Settings, **more: str) -> Settings:
    """`settings` with more repository variables."""
    return Settings(
        {**settings.vars, **more},
        dict(settings.secrets),
        settings.workflow_token,
    )


# --- the expression language (docs.github.com, "Evaluate expressions in workflows and actions") ---


def _scope(**contexts: Any) -> Scope:
    """A scope with `contexts` (and `github`) allowed, no status functions."""
    return Scope(contexts, frozenset(contexts) | {"github"})


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("null == 0", True),  # different types: both cast to numbers
        ("'' == 0", True),
        ("'abc' == 'ABC'", True),  # strings compare ignoring case
        ("true == 1", True),
        ("'1.0' == 1", True),
        ("'x' == 0", False),  # NaN equals nothing
        ("1 < 'x'", False),  # NaN in a relational comparison is false
        ("'a' < 'B'", True),
        ("!2 < 3", True),  # ! binds tighter than <
        ("3 < 2 < 1", True),  # left to right: (3 < 2) < 1 -> false < 1
        ("'' || 'fallback'", "fallback"),  # || returns an operand
        ("'x' && 'y'", "y"),
        ("0 && 'y'", 0.0),
        ("contains('Hello world', 'LLO')", True),
        ("contains(fromJSON('[\"push\", \"pull_request\"]'), 'PUSH')", True),
        ("startsWith('Hello', 'he') && endsWith('Hello', 'LO')", True),
        ("format('{{x}} {0}-{1}', 'a', 1)", "{x} a-1"),
        ("join(fromJSON('[1, true, null]'), '+')", "1+true+"),
        ("toJSON(fromJSON('{\"a\": [1]}'))", '{\n  "a": [\n    1\n  ]\n}'),
        ("fromJSON('[]') == fromJSON('[]')", False),  # arrays are equal only to themselves
        ("case(1 == 2, 'a', 'x' == 'X', 'b', 'c')", "b"),
        ("-9.2", -9.2),
        ("0xff", 255.0),
        ("-2.99e-2", -0.0299),
        ("'It''s open source!'", "It's open source!"),
    ],
)
def test_expressions_follow_githubs_rules(expr: str, expected: Any) -> None:
    assert evaluate(expr, _scope()) == expected


def test_expressions_read_contexts_case_insensitively_and_filter_objects() -> None:
    event = {"pull_request": {"merged": True, "labels": [{"name": "sync"}, {"name": "x"}, {}]}}
    scope = _scope(github={"event_name": "pull_request", "event": event})
    assert evaluate("github.EVENT_NAME", scope) == "pull_request"
    assert evaluate("github.event.pull_request.labels.*.name", scope) == ["sync", "x"]
    assert evaluate("contains(github.event.pull_request.labels.*.name, 'SYNC')", scope) is True
    assert evaluate("github.event.pull_request['merged']", scope) is True
    assert evaluate("github.event.missing.deeper", scope) is None
    assert evaluate("join(github.event.pull_request.labels.*.name, ' ')", scope) == "sync x"


def test_an_unavailable_context_double_quotes_or_a_status_function_outside_if_are_refused() -> None:
    scope = Scope({"secrets": {"X": "1"}}, frozenset({"github"}))
    with pytest.raises(ExpressionError, match="context 'secrets' is not available"):
        evaluate("secrets.X != ''", scope)
    with pytest.raises(ExpressionError, match="double-quoted"):
        evaluate('"x" == 1', _scope())
    with pytest.raises(ExpressionError, match="success\\(\\) is not available"):
        evaluate("success()", _scope())
    with pytest.raises(ExpressionError, match="not implemented"):
        evaluate("hashFiles('x')", _scope())


def test_if_puts_success_in_front_unless_it_calls_a_status_function() -> None:
    failed = Scope({}, frozenset({"github"}), status=lambda fn: fn in ("failure", "always"))
    assert condition("true", failed) == (False, "success() && (true)")
    assert condition("always()", failed)[0] is True
    assert condition("${{ failure() }}", failed)[0] is True
    assert condition("${{ !cancelled() }}", failed)[0] is True
    # text around ${{ }} makes a string, and a non-empty string is truthy
    assert condition("true && ${{ false }}", Scope({}, frozenset({"github"}), lambda f: True))[0]


def test_render_keeps_a_whole_expression_typed_and_interpolates_text() -> None:
    scope = _scope(needs={"examples": {"outputs": {"examples": '["A", "B"]'}}})
    assert render("${{ fromJSON(needs.examples.outputs.examples) }}", scope) == ["A", "B"]
    assert render("Example ${{ needs.examples.outputs.examples }}!", scope) == 'Example ["A", "B"]!'
    assert render({"x": "${{ 1 == 1 }}", "y": 3}, scope) == {"x": True, "y": 3.0}


# --- triggers -------------------------------------------------------------------------------------


def test_filters_and_triggers() -> None:
    assert filter_matches(["src/**", "!src/gen/**"], ["src/a.h"])
    assert not filter_matches(["src/**", "!src/gen/**"], ["src/gen/x.h"])
    assert not filter_matches(["src/*"], ["src/a/b.h"])
    workflow = parse_workflow(
        "on:\n  pull_request:\n    types: [closed]\n  repository_dispatch:\n"
        "    types: [executorch-release]\n  push:\n    branches: [main]\njobs: {}\n"
    )
    closed = Event("pull_request", {"action": "closed", "pull_request": {"base": {"ref": "main"}}})
    assert triggers(workflow, closed) == (True, "on.pull_request (closed)")
    opened = Event("pull_request", {"action": "opened", "pull_request": {"base": {"ref": "main"}}})
    assert triggers(workflow, opened)[0] is False
    assert triggers(workflow, Event("repository_dispatch", {"action": "other"}))[0] is False
    assert triggers(workflow, Event("push", ref="refs/heads/main"))[0] is True
    assert triggers(workflow, Event("push", ref="refs/heads/sync/x"))[0] is False
    assert triggers(workflow, Event("schedule", {"schedule": "0 0 * * *"})) == (
        False,
        "no on.schedule",
    )


SMALL = """
on:
  workflow_dispatch:
    inputs:
      flag: {type: boolean, default: false}
defaults:
  run:
    shell: bash
env:
  GREETING: hello
jobs:
  first:
    runs-on: x
    outputs:
      word: ${{ steps.say.outputs.word }}
      text: ${{ steps.say.outputs.text }}
    steps:
      - id: say
        run: |
          echo "word=$GREETING" >> "$GITHUB_OUTPUT"
          printf 'text<<EOF\\nline 1\\nline 2\\nEOF\\n' >> "$GITHUB_OUTPUT"
          echo "LATER=set by say" >> "$GITHUB_ENV"
      - name: sees the env file
        run: test "$LATER" = "set by say" && echo "pipefail is on" | (cat; false) | cat
        continue-on-error: true
      - name: after a tolerated failure
        run: echo "flag is $FLAG"
        env:
          FLAG: ${{ inputs.flag }}
      - name: fails
        run: exit 3
      - name: skipped after the failure
        run: echo never
      - name: runs on failure
        if: failure() && steps.say.outputs.word == 'HELLO'
        run: echo cleaning up
  matrix:
    needs: first
    runs-on: x
    strategy:
      matrix:
        a: [1, 2]
        b: [x, y]
        exclude: [{a: 2, b: y}]
        include: [{a: 1, b: x, extra: more}, {a: 3, b: z}]
    steps:
      - run: echo ${{ matrix.a }}
  after:
    needs: first
    if: always() && needs.first.result == 'failure'
    runs-on: x
    steps:
      - run: echo "${{ needs.first.outputs.word }}"
"""


def test_the_runner_on_a_small_workflow(world: World) -> None:
    world.workflows["small.yml"] = SMALL
    run = world.run("small.yml", Event("workflow_dispatch", inputs={"flag": "true"}), WORKFLOW_ONLY)
    first = run.job("first")
    assert [(s.decision, s.outcome) for s in first.steps] == [
        ("ran", "success"),
        ("ran", "failure"),  # pipefail (defaults.run.shell: bash), tolerated
        ("ran", "success"),
        ("ran", "failure"),
        ("skipped", "skipped"),
        ("ran", "success"),  # failure() && a case-insensitive comparison
    ]
    assert first.steps[2].stdout == "flag is true\n"
    assert first.result == "failure"
    assert first.outputs == {"word": "hello", "text": "line 1\nline 2"}
    # the matrix job needs a job that failed: skipped; `after` asks for it
    assert [(j.job_id, j.decision) for j in run.jobs[1:]] == [
        ("matrix", "skipped"),
        ("after", "ran"),
    ]
    assert run.job("after").steps[0].stdout == "hello\n"
    assert run.conclusion == "failure"
    world.finish()


def test_the_matrix_expands_with_include_and_exclude(world: World) -> None:
    world.workflows["small.yml"] = SMALL.replace("      - name: fails\n        run: exit 3\n", "")
    run = world.run("small.yml", Event("workflow_dispatch"), WORKFLOW_ONLY)
    combos = [j.matrix for j in run.jobs if j.job_id == "matrix"]
    assert combos == [
        {"a": 1, "b": "x", "extra": "more"},
        {"a": 1, "b": "y"},
        {"a": 2, "b": "x"},
        {"a": 3, "b": "z"},
    ]
    assert [j.steps[0].stdout for j in run.jobs if j.job_id == "matrix"] == [
        "1\n",
        "1\n",
        "2\n",
        "3\n",
    ]
    assert run.job("after").decision == "skipped"  # first succeeded
    world.finish()


def test_a_dispatch_with_an_undeclared_input_is_refused(world: World) -> None:
    with pytest.raises(RehearsalError, match="unexpected inputs \\['nope'\\]"):
        world.sync(WORKFLOW_ONLY, nope="x")
    world.finish()


def test_an_action_the_rehearsal_does_not_emulate_fails_it(world: World) -> None:
    text = (
        "on: workflow_dispatch\njobs:\n  j:\n    runs-on: x\n    steps:\n"
        "      - uses: evil/action@v1\n"
    )
    world.workflows["odd.yml"] = text
    with pytest.raises(RehearsalError, match="evil/action@v1 is not emulated"):
        world.run("odd.yml", Event("workflow_dispatch"), WORKFLOW_ONLY)
    world.finish()


# --- sync -----------------------------------------------------------------------------------------


def test_sync_dispatch_with_the_workflow_token_opens_the_pull_request(world: World) -> None:
    run = world.sync(WORKFLOW_ONLY, executorch_ref="v1.5.1")
    assert run.triggered and run.conclusion == "success", run.transcript()
    assert [(j.job_id, j.decision) for j in run.jobs] == [
        ("ref", "ran"),
        ("prepare", "ran"),
        ("publish", "ran"),
    ]
    assert run.job("ref").outputs == {"ref": "v1.5.1", "trusted": "true"}
    job = run.job("publish")
    prepare = run.job("prepare")
    assert prepare.concurrency == "sync-v1.5.1 (cancel-in-progress: false)"
    assert job.concurrency == "sync-publish-v1.5.1 (cancel-in-progress: false)"
    # Every step of both jobs ran: the workflow token needs no step of its own, and a step
    # skipped here (an App's, a cache's) would be a step this run never rehearsed.
    assert [(s.name, s.decision) for s in job.steps] == [
        ("Set up Python", "ran"),
        ("Install the generator at its pin", "ran"),
        ("Fetch the staged library", "ran"),
        ("Publish", "ran"),
    ]
    assert len(prepare.steps) == 12 and {s.decision for s in prepare.steps} == {"ran"}, [
        (s.name, s.decision) for s in prepare.steps
    ]
    # the digest travelled as the prepare job's output; the tree as its artifact
    (digest,) = prepare.outputs.values()
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest), prepare.outputs
    assert prepare.step("Build and check").stdout.splitlines()[-1] == digest
    own = [c.line() for c in run.commands(nested=False)]
    assert any(
        line.startswith("sudo apt-get install -y -q --no-install-recommends cmake") for line in own
    )
    assert "arduino-cli config set network.connection_timeout 600s" in own
    assert any(line.startswith("arduino-cli core install arduino:zephyr@") for line in own)
    assert any("--index-url https://download.pytorch.org/whl/cpu torch==" in line for line in own)
    staged, published = generator_calls(run, "sync")
    assert staged[0] == "--prepare" and staged[1].endswith("/temp/stage"), staged
    assert "--executorch-ref=v1.5.1" in staged and "--workflow-token" not in staged
    assert published[0] == "--publish" and published[2:4] == ["--digest", digest]
    assert "--executorch-ref=v1.5.1" in published and "--workflow-token" in published
    # the real sync pushed its branch with the workflow token and opened the pull request
    (pull,) = world.fake.open_pulls()
    assert pull.labels == ["sync"] and sync_branches(world.remote) == [pull.head]
    assert offered(world) == {WORKFLOW_TOKEN}
    sync = job.step("Publish")
    assert f"opened pull request #{pull.number}" in sync.stdout
    assert "CI will not run on the sync pull request" in sync.summary
    assert WORKFLOW_TOKEN not in run.transcript()
    world.finish()


def test_sync_dispatch_with_the_app_pushes_and_opens_with_an_installation_token(
    world: World,
) -> None:
    run = world.sync(world.app, executorch_ref="v1.5.1")
    assert run.conclusion == "success", run.transcript()
    assert len(world.fake.open_pulls()) == 1
    minted = set(world.fake.minted)
    assert minted and offered(world) <= minted  # git: only App tokens, never the workflow's
    api = {cred for method, path, cred in world.fake.used if "/pulls" in path}
    assert api and api <= minted
    assert "CI will not run" not in run.job("publish").step("Publish").summary
    assert not any(token in run.transcript() for token in minted)
    # nothing the run left on disk (runner files, clones, the remote) holds a token or the key
    key_body = world.app.secrets["SYNC_APP_PRIVATE_KEY"].splitlines()[1]
    for path in world.tmp.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            assert key_body.encode() not in data, path
            assert not any(token.encode() in data for token in minted), path
    world.finish()


def test_sync_builds_without_a_token_and_publishes_without_building(world: World) -> None:
    run = world.sync(world.app, executorch_ref="v1.5.1")
    assert run.conclusion == "success", run.transcript()
    (pull,) = world.fake.open_pulls()
    prepare, publish = run.job("prepare"), run.job("publish")
    # `sync --prepare` refuses GITHUB_TOKEN, SYNC_TOKEN and SYNC_APP_PRIVATE_KEY: it ran.
    assert prepare.result == "success" and publish.result == "success"
    assert prepare.permissions == {"contents": "read"}
    key_body = world.app.secrets["SYNC_APP_PRIVATE_KEY"].splitlines()[1]
    secrets = [WORKFLOW_TOKEN, key_body, *world.fake.minted]
    for step in prepare.steps:
        seen = "\n".join(
            [step.stdout, step.stderr, step.summary, *step.notes, *step.outputs.values()]
            + [c.line() for c in step.commands]
        )
        assert not any(s in seen for s in secrets), step.name
        assert "***" not in seen, step.name  # nothing the transcript had to mask
    # Nothing of the prepare job's text names a token (secrets.*, github.token, the names).
    spec = parse_workflow(world.workflows["sync.yml"])["jobs"]["prepare"]
    text = str(spec)
    for needle in ("GITHUB_TOKEN", "SYNC_TOKEN", "SYNC_APP_PRIVATE_KEY", "github.token",
                   "secrets."):  # fmt: skip
        assert needle not in text, needle
    # The publish job built and checked nothing: no --prepare, no toolchain, no torch.
    lines = [c.line() for s in publish.steps for c in s.commands if not c.nested]
    assert not any("--prepare" in line for line in lines), lines
    for tool in ("apt-get", "arduino-cli", "download.pytorch.org"):
        assert not any(tool in line for line in lines), (tool, lines)
    assert [s.kind.split("@")[0] for s in publish.steps if s.kind.startswith("uses")] == [
        "uses actions/setup-python",
        "uses actions/download-artifact",
    ]
    # It published the very tree the prepare job staged, by the digest it output.
    (digest,) = prepare.outputs.values()
    (published,) = [line for line in lines if "sync --publish" in line]
    assert f"--digest {digest}" in published
    assert f"opened pull request #{pull.number}" in publish.step("Publish").stdout
    world.finish()


def _repository_dispatch(ref: str) -> Event:
    # The live library repo's type and payload key (meta-pytorch/executorch-arduino,
    # .github/workflows/sync.yml at 0e4de219: `types: [executorch-release]`,
    # `github.event.client_payload.ref`).
    payload = {"action": "executorch-release", "client_payload": {"ref": ref}, "branch": "main"}
    return Event("repository_dispatch", payload)


def test_a_repository_dispatch_of_another_type_starts_nothing(world: World) -> None:
    event = Event("repository_dispatch", {"action": "something-else", "client_payload": {}})
    run = world.run("sync.yml", event, WORKFLOW_ONLY)
    assert not run.triggered and run.jobs == []
    world.finish()


def test_sync_on_repository_dispatch_syncs_the_payloads_ref(world: World) -> None:
    event = _repository_dispatch("v1.5.1")
    event.sha = world.main()
    run = world.run("sync.yml", event, world.app)
    assert run.triggered and run.conclusion == "success", run.transcript()
    _, args = generator_calls(run, "sync")
    assert "--executorch-ref=v1.5.1" in args and "--workflow-token" not in args
    assert run.job("prepare").concurrency == "sync-v1.5.1 (cancel-in-progress: false)"
    assert [p.head for p in world.fake.open_pulls()] == sync_branches(world.remote)
    world.finish()


def test_a_repository_dispatch_whose_ref_is_not_plain_stops_before_sync(world: World) -> None:
    event = _repository_dispatch("main; curl evil")
    run = world.run("sync.yml", event, WORKFLOW_ONLY)
    assert run.job("ref").result == "failure"
    assert any(
        "client_payload.ref is not a plain git ref" in n for n in run.job("ref").steps[0].notes
    )
    assert run.job("prepare").decision == "skipped" and generator_calls(run, "sync") == []
    assert run.job("publish").decision == "skipped"
    world.finish()


def test_the_schedule_does_nothing_unless_the_repository_opts_in(world: World) -> None:
    run = world.run("sync.yml", Event("schedule", {"schedule": "41 5 * * *"}), WORKFLOW_ONLY)
    assert run.triggered
    assert [(j.job_id, j.decision) for j in run.jobs] == [
        ("ref", "skipped"),
        ("prepare", "skipped"),
        ("publish", "skipped"),
    ]
    assert run.commands() == []
    world.finish()


def _upstream_with_tags(root: Path, tags: list[str]) -> Path:
    """A bare repository standing for ExecuTorch's upstream: one commit per tag."""
    bare, seed = root / "executorch.git", root / "executorch-seed"
    git("init", "--quiet", "--bare", str(bare))
    git("init", "--quiet", "--initial-branch=main", str(seed))
    for tag in tags:
        (seed / "version.txt").write_text(tag.removeprefix("v") + "\n")
        git("add", "-A", cwd=seed)
        git("commit", "--quiet", "-m", tag, cwd=seed)
        git("tag", tag, cwd=seed)
    git("push", "--quiet", "--tags", str(bare), "main", cwd=seed)
    return bare


#: What the schedule's ref job asks GitHub (sync.yml: `gh api .../contents/executorch_pin.txt`
#: and `gh api .../git/matching-refs/heads/sync/executorch-<sha>`).
SCHEDULE_OPERATIONS = (
    ("/repos/{owner}/{repo}/contents/{path}", "get"),
    ("/repos/{owner}/{repo}/git/matching-refs/{ref}", "get"),
)


def test_the_schedule_opted_in_syncs_the_newest_release_tag(world: World) -> None:
    assert set(SCHEDULE_OPERATIONS) <= set(OPERATIONS)
    upstream = _upstream_with_tags(world.tmp, ["v1.4.0", "v1.5.1", "v1.6.0-rc1"])
    world.rehearsal.mirrors["https://github.com/pytorch/executorch"] = upstream
    settings = with_vars(world.app, SYNC_SCHEDULE="true")
    run = world.run("sync.yml", Event("schedule", {"schedule": "41 5 * * *"}), settings)
    assert run.job("ref").outputs == {"ref": "v1.5.1", "trusted": "true"}, run.transcript()
    assert run.conclusion == "success", run.transcript()
    for args in generator_calls(run, "sync"):
        assert "--executorch-ref=v1.5.1" in args
    world.finish()


GENERATOR_CACHE = "the generator's cache (checkouts, flatc, objects, steps)"


def _build_notes(run: Run) -> list[str]:
    """What the prepare job's build said of its cache (the shim's stand-in notes)."""
    step = run.job("prepare").step("Build and check")
    return [n for n in step.notes if n.startswith("stand-in for generator build")]


def test_the_daily_run_restores_the_caches_a_trusted_run_saved_and_builds_warm(
    world: World,
) -> None:
    upstream = _upstream_with_tags(world.tmp, ["v1.4.0", "v1.5.1"])
    world.rehearsal.mirrors["https://github.com/pytorch/executorch"] = upstream
    settings = with_vars(world.app, SYNC_SCHEDULE="true")
    daily = Event("schedule", {"schedule": "41 5 * * *"})
    first = world.run("sync.yml", daily, settings)
    assert first.conclusion == "success", first.transcript()
    assert first.job("ref").outputs == {"ref": "v1.5.1", "trusted": "true"}
    assert _build_notes(first) == ["stand-in for generator build: every step run (cold cache)"]
    saved = first.job("prepare").step(f"Save {GENERATOR_CACHE}")
    assert saved.decision == "ran" and saved.outcome == "success", first.transcript()
    (key,) = [e.key for e in world.rehearsal.caches if e.key.startswith("executorch-arduino-")]
    # The next day (the pull request still open): the same release, restored, warm.
    second = world.run("sync.yml", daily, settings)
    assert second.conclusion == "success", second.transcript()
    restored = second.job("prepare").step(f"Restore {GENERATOR_CACHE}")
    assert f"cache restore: {key} (saved on refs/heads/main)" in restored.notes
    assert _build_notes(second) == [
        "stand-in for generator build: every step from the step cache (warm)"
    ]
    world.finish()


def test_a_dispatch_of_an_untrusted_ref_restores_the_caches_but_saves_none(
    world: World,
) -> None:
    run = world.sync(WORKFLOW_ONLY, executorch_ref=SHA_NEW)  # anyone's commit, by SHA
    assert run.conclusion == "success", run.transcript()
    assert run.job("ref").outputs == {"ref": SHA_NEW, "trusted": "false"}
    prepare = run.job("prepare")
    assert prepare.step(f"Restore {GENERATOR_CACHE}").decision == "ran"
    saves = [s for s in prepare.steps if s.name.startswith("Save ")]
    assert len(saves) == 3 and all(s.decision == "skipped" for s in saves), run.transcript()
    assert world.rehearsal.caches == []
    # A dispatch of a release tag is trusted: it saves.
    trusted = world.sync(WORKFLOW_ONLY, executorch_ref="v1.5.1")
    assert trusted.conclusion == "success", trusted.transcript()
    assert [e.key.split("-")[0] for e in world.rehearsal.caches] == [
        "executorch",
        "pip",
        "arduino",
    ]
    world.finish()


# --- GitHub refuses the workflow token a pull request ---------------------------------------------


@pytest.fixture(scope="module")
def refused(
    module_world: Callable[[], contextlib.AbstractContextManager[World]],
) -> Iterator[tuple[World, Run]]:
    """sync dispatched with the workflow token while GitHub refuses it pull requests."""
    with module_world() as world:
        world.fake.fail("POST", PULLS, 403, body=NOT_PERMITTED)
        yield world, world.sync(WORKFLOW_ONLY, executorch_ref="v1.5.1")


def test_sync_refused_a_pull_request_leaves_no_pushed_branch(refused: tuple[World, Run]) -> None:
    world, run = refused
    assert run.conclusion == "failure"
    assert run.job("publish").step("Publish").outcome == "failure"
    assert world.fake.pulls == {}
    assert sync_branches(world.remote) == []  # pushed, then put back when the PR failed
    pushes = [c for c in run.commands("git", nested=True) if "push" in c.args]
    assert len(pushes) == 2  # the push and its undoing
    world.finish()


def test_sync_refused_a_pull_request_names_the_setting(refused: tuple[World, Run]) -> None:
    world, run = refused
    step = run.job("publish").step("Publish")
    assert step.outcome == "failure"
    assert SETTING in step.stderr, step.stderr
    assert SETTING in step.summary, step.summary
    world.finish()


# --- the App token's lifetime ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def expired(
    module_world: Callable[[], contextlib.AbstractContextManager[World]],
) -> Iterator[tuple[World, Run]]:
    """sync dispatched with the App, its check taking 61 minutes on the fake's clock: a token
    minted before the check has expired when sync pushes (github.com's installation tokens
    live an hour; a cold sync may run 180 minutes)."""
    with module_world() as world:
        world.slow_check()
        yield world, world.sync(world.app, executorch_ref="v1.5.1")


def test_sync_succeeds_when_the_check_outlives_an_app_token(
    expired: tuple[World, Run],
) -> None:
    world, run = expired
    assert run.conclusion == "success", run.transcript()
    assert len(world.fake.open_pulls()) == 1
    # the clock did what the scenario says (the check took 61 minutes), but the check ran in
    # the prepare job, which has no key: every token was minted by the publish job after it
    # (an hour on the fake's clock, already 61 minutes ahead), so none could expire
    assert world.rehearsal.check_mark.exists()
    assert world.fake.minted
    after_check = datetime.now(UTC) + timedelta(minutes=100)
    assert all(expires > after_check for expires in world.fake.minted.values())
    pushed_with = world.git_remote.offered[-1][1]
    assert pushed_with in world.fake.minted
    assert not any(token in run.transcript() for token in world.fake.minted)
    world.finish()


# --- merged sync pull request -> release; closed one -> nothing -----------------------------------


def _tags(remote: Path) -> list[str]:
    """The tags on the library repo's remote."""
    return git("tag", "--list", cwd=remote).split()


@pytest.fixture(scope="module")
def released(
    module_world: Callable[[], contextlib.AbstractContextManager[World]],
) -> Iterator[tuple[World, list[Run]]]:
    """sync dispatched with the workflow token -> its PR -> closed and reopened by the
    maintainer, as the summary says (the workflow token's push starts no CI), so CI runs on it
    -> merged -> release."""
    with module_world() as world:
        settings = with_vars(WORKFLOW_ONLY, RELEASE_ON_SYNC_MERGE="true")
        sync = world.sync(settings, executorch_ref="v1.5.1")
        assert sync.conclusion == "success", sync.transcript()
        (pull,) = world.fake.open_pulls()
        ci = world.run("ci.yml", world.pull_event(pull.number, "reopened"), settings)
        world.merge(pull.number)
        release = world.run("release.yml", world.pull_event(pull.number, "closed"), settings)
        yield world, [sync, ci, release]


def test_dispatch_through_release(released: tuple[World, list[Run]]) -> None:
    world, (sync, ci, release) = released
    print("\n\n".join(r.transcript() for r in (sync, ci, release)))
    # CI on the pull request: one check per example and board, lint, sizes, the final job
    assert ci.triggered and ci.conclusion == "success", ci.transcript()
    assert [j.matrix for j in ci.jobs if j.job_id == "example"] == [
        {"board": "unoq", "example": "AddModel"}
    ]
    base, head = generator_calls(ci, "check")  # the base's sizes, then the example's check
    assert base[:1] == ["base"] and "--no-run" in base
    assert head[:1] == ["head"] and head[head.index("--compiler") + 1] == "arduino-cli"
    assert ci.job("ci-passed").decision == "ran" and ci.job("ci-passed").result == "success"
    # the size table as the one comment on the pull request (a branch of this repository)
    (comment,) = world.fake.pulls[1].comments
    assert comment.startswith("<!-- executorch-arduino: size changes -->\n## Size changes")
    assert "| AddModel | flash (static) | 100,000 B |" in comment
    # release: the job ran (merged, labelled sync, opted in), tagged main's merge commit
    job = release.job("release")
    assert job.decision == "ran" and job.concurrency == "release (cancel-in-progress: false)"
    assert job.step("Tag the commit").outcome == "success", release.transcript()
    assert _tags(world.remote) == ["v1.5.1"]
    assert git("rev-parse", "v1.5.1^{commit}", cwd=world.remote) == world.main()
    assert "version=1.5.1" in show(world.remote, "v1.5.1", "library.properties")
    assert WORKFLOW_TOKEN in offered(world)  # the tag went with the run's contents: write token
    gh = [c.args[:2] for c in release.commands("gh", nested=False)]
    assert gh[:1] == [["release", "view"]] and ["release", "create"] in gh
    world.finish()


def test_a_merged_sync_pull_request_creates_the_github_release(
    released: tuple[World, list[Run]],
) -> None:
    world, (_, _, release) = released
    assert release.conclusion == "success", release.transcript()
    step = release.job("release").step("Create or update the GitHub Release")
    assert "Created the GitHub Release v1.5.1." in step.summary
    created = [c.args for c in release.commands("gh") if c.args[:2] == ["release", "create"]]
    assert created and created[0][2] == "v1.5.1" and "--verify-tag" in created[0]
    world.finish()


def test_a_rerun_of_the_release_edits_the_github_release_instead_of_creating_another(
    released: tuple[World, list[Run]],
) -> None:
    world, _ = released
    (made,) = world.fake.releases.values()
    (merged,) = [p for p in world.fake.pulls.values() if p.merged]
    assert (made.tag_name, made.name, made.updates) == ("v1.5.1", "v1.5.1", 0)
    assert made.body and "1.5.1" in made.body  # the release notes, from --notes-file
    settings = with_vars(WORKFLOW_ONLY, RELEASE_ON_SYNC_MERGE="true")
    # "Re-run all jobs": the same event, main as it was
    again = world.run("release.yml", world.pull_event(merged.number, "closed"), settings)
    assert again.conclusion == "success", again.transcript()
    step = again.job("release").step("Create or update the GitHub Release")
    assert "Updated the GitHub Release v1.5.1." in step.summary
    gh = [c.args[:2] for c in again.commands("gh", nested=False)]
    assert ["release", "edit"] in gh and ["release", "create"] not in gh
    assert list(world.fake.releases.values()) == [made] and made.updates == 1
    assert _tags(world.remote) == ["v1.5.1"]
    world.finish()


def test_a_closed_unmerged_sync_pull_request_neither_releases_nor_joins_the_group(
    world: World,
) -> None:
    number = world.sync_pull("sync/executorch-0123456789ab")
    world.fake.close(number)
    settings = with_vars(WORKFLOW_ONLY, RELEASE_ON_SYNC_MERGE="true")
    run = world.run("release.yml", world.pull_event(number, "closed"), settings)
    assert run.triggered  # on: pull_request: types: [closed]
    job = run.job("release")
    assert job.decision == "skipped" and job.steps == []
    assert "merged == true" in job.why and job.why.endswith("-> false")
    # no group joined: a pending release is neither cancelled nor replaced by this run
    assert run.concurrency is None and job.concurrency is None
    assert run.commands() == [] and _tags(world.remote) == []
    world.finish()


def test_a_superseded_sync_pull_request_neither_releases_nor_joins_the_group(
    world: World,
) -> None:
    """An older sync pull request is open; the sync closes it as superseded (sync's rule),
    and that close is a pull_request closed event the release workflow sees."""
    older = world.sync_pull("sync/executorch-0123456789ab")
    settings = with_vars(WORKFLOW_ONLY, RELEASE_ON_SYNC_MERGE="true")
    assert world.sync(settings, executorch_ref="v1.5.1").conclusion == "success"
    first = world.fake.pulls[older]
    assert (first.state, first.merged, first.closed_by) == ("closed", False, world.fake.login)
    assert first.comments and first.comments[0].startswith("Superseded by #2")
    run = world.run("release.yml", world.pull_event(older, "closed"), settings)
    job = run.job("release")
    assert job.decision == "skipped" and job.concurrency is None and run.concurrency is None
    assert _tags(world.remote) == []
    world.finish()


def test_a_merged_pull_request_that_is_not_a_sync_does_not_release(world: World) -> None:
    number = world.sync_pull("feature/x")
    world.fake.pulls[number].labels.clear()
    world.merge(number)
    run = world.run(
        "release.yml",
        world.pull_event(number, "closed"),
        with_vars(WORKFLOW_ONLY, RELEASE_ON_SYNC_MERGE="true"),
    )
    assert run.job("release").decision == "skipped" and _tags(world.remote) == []
    world.finish()


# --- CI beyond the sync pull request ---------------------------------------------------------


def test_ci_run_again_on_a_sync_pull_request_edits_its_one_size_comment(world: World) -> None:
    sync = world.sync(WORKFLOW_ONLY, executorch_ref="v1.5.1")
    assert sync.conclusion == "success", sync.transcript()
    (pull,) = world.fake.open_pulls()
    first = world.run("ci.yml", world.pull_event(pull.number, "reopened"), WORKFLOW_ONLY)
    assert first.conclusion == "success", first.transcript()
    assert len(world.fake.pulls[pull.number].comments) == 1  # posted
    assert world.fake.pulls[pull.number].comment_edits == {}
    again = world.run("ci.yml", world.pull_event(pull.number, "synchronize"), WORKFLOW_ONLY)
    assert again.conclusion == "success", again.transcript()
    # one comment, by the workflow token's github-actions[bot], PATCHed in place
    (comment,) = world.fake.pulls[pull.number].comments
    assert comment.startswith("<!-- executorch-arduino: size changes -->\n## Size changes")
    assert world.fake.pulls[pull.number].comment_authors == ["github-actions[bot]"]
    assert world.fake.pulls[pull.number].comment_edits == {1: 1}
    edits = [
        (method, path)
        for method, path, status in world.fake.requests
        if "/issues/comments/" in path and status == 200
    ]
    assert edits == [("PATCH", f"/repos/{REPO}/issues/comments/{100 * pull.number + 1}")]
    world.finish()


def test_ci_nightly_checks_every_board_and_a_pull_request_only_the_uno_q(world: World) -> None:
    sync = world.sync(WORKFLOW_ONLY, executorch_ref="v1.5.1")
    assert sync.conclusion == "success", sync.transcript()
    (pull,) = world.fake.open_pulls()
    on_pull = world.run("ci.yml", world.pull_event(pull.number, "reopened"), WORKFLOW_ONLY)
    assert on_pull.conclusion == "success", on_pull.transcript()
    assert [j.matrix["board"] for j in on_pull.jobs if j.job_id == "example"] == ["unoq"]
    main = world.merge(pull.number)
    nightly = world.run(
        "ci.yml",
        Event("schedule", {"schedule": "23 4 * * *"}, ref="refs/heads/main", sha=main),
        WORKFLOW_ONLY,
    )
    assert nightly.triggered and nightly.conclusion == "success", nightly.transcript()
    jobs = [j for j in nightly.jobs if j.job_id == "example"]
    full = list(check_boards())
    assert [j.matrix for j in jobs] == [{"board": b, "example": "AddModel"} for b in full]
    # every board of the arduino:zephyr table (the M0+, without an emulator, is sized only)
    assert full == list(ZEPHYR_BOARDS) and "nano_connect" in full
    assert all(j.result == "success" for j in jobs)
    # each job checks its own board, with no base and no size report (not a pull request)
    checks = generator_calls(nightly, "check")
    assert [c[c.index("--board") + 1] for c in checks] == full
    assert all(c[:1] == ["head"] for c in checks)
    decisions = {j.job_id: j.result for j in nightly.jobs if j.job_id != "example"}
    assert decisions == {
        "examples": "success",
        "lint": "success",
        "sizes": "skipped",
        "size-comment": "skipped",
        "ci-passed": "success",
    }
    # by hand: full unless asked for smoke
    smoke = world.run(
        "ci.yml",
        Event("workflow_dispatch", inputs={"boards": "smoke"}, sha=main),
        WORKFLOW_ONLY,
    )
    assert smoke.conclusion == "success", smoke.transcript()
    assert [j.matrix["board"] for j in smoke.jobs if j.job_id == "example"] == ["unoq"]
    world.finish()


def test_ci_on_a_push_to_main_without_examples_fails_and_says_why(world: World) -> None:
    main = world.main()
    payload = {"ref": "refs/heads/main", "after": main, "repository": {"full_name": REPO}}
    run = world.run(
        "ci.yml", Event("push", payload, ref="refs/heads/main", sha=main), WORKFLOW_ONLY
    )
    assert run.triggered and run.concurrency == "ci-push-refs/heads/main (cancel-in-progress: true)"
    decisions = {j.job_id: (j.decision, j.result) for j in run.jobs}
    assert decisions == {
        "examples": ("ran", "failure"),  # main has no library yet: no example to check
        "example": ("skipped", "skipped"),
        "lint": ("ran", "success"),
        "sizes": ("skipped", "skipped"),  # not a pull request
        "size-comment": ("skipped", "skipped"),
        "ci-passed": ("ran", "failure"),  # always(): the required check fails, not skips
    }
    notes = run.job("examples").steps[-1].notes
    assert any(n.startswith("error: the library has no example") for n in notes), notes
    world.finish()


def test_ci_passed_fails_when_an_example_fails(world: World) -> None:
    # a pull request whose library the Library Manager's rules refuse: check fails on it
    number = world.sync_pull("sync/broken", {"examples/Blink/Blink.ino": "void setup() {}\n"})
    run = world.run("ci.yml", world.pull_event(number, "opened"), WORKFLOW_ONLY)
    assert run.job("example").result == "failure"
    check = run.job("example").step("Check (arduino-cli compile, model check, sizes, emulated run)")
    assert check.outcome == "failure"
    # the sizes still run (`!cancelled()`), the final job runs (`always()`) and fails
    assert run.job("sizes").decision == "ran"
    final = run.job("ci-passed")
    assert final.decision == "ran" and final.result == "failure"
    assert any("ended: failure" in note for note in final.steps[0].notes), final.steps[0].notes
    world.finish()


def test_a_gh_call_the_stub_does_not_know_fails_the_step(world: World) -> None:
    text = (
        "on: workflow_dispatch\njobs:\n  j:\n    runs-on: x\n    steps:\n"
        "      - shell: bash\n        run: gh pr merge 1\n"
    )
    world.workflows["odd.yml"] = text
    run = world.run("odd.yml", Event("workflow_dispatch"), WORKFLOW_ONLY)
    assert run.conclusion == "failure"
    assert "gh stub: gh pr merge is not emulated" in run.jobs[0].steps[0].stderr
    world.finish()
