"""The library repo's GitHub workflows (`data/workflows/*.yml`, `generator/workflows/render.py`)
and the
`workflows` command: lint (actionlint with ShellCheck, zizmor), pins and each action's inputs,
triggers, permissions, concurrency, caches, where torch is installed, every `run:` script run
with recording stubs (inputs and payloads stay data), rendering, drift, atomic writes, the CLI."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from gha_expressions import Scope, normalize, render

from generator import PROJECT_ROOT
from generator.boards.budgets import BOARDS, ZEPHYR_BOARDS, check_boards
from generator.cli.main import main
from generator.util.errors import FatalError
from generator.workflows import render as wf
from generator.workflows.install import (
    default_generator_ref,
    default_generator_repo,
    install_workflows,
)

REPO = "https://github.com/example/executorch-arduino-generator.git"
SHA = "0123456789abcdef0123456789abcdef01234567"
NAMES = ["ci.yml", "release.yml", "sync.yml"]

#: Values an attacker could put in a workflow input, a repository_dispatch payload or an
#: example folder name.
HOSTILE = (
    "main$(touch PWNED)",
    "`touch PWNED`",
    'x"; touch PWNED; echo "',
    "'; touch PWNED; echo '",
    "--upload-pack=touch PWNED",
    "main\ntouch PWNED",
    "$(touch${IFS}PWNED)",
    "main;touch PWNED&&touch PWNED|touch PWNED",
    "$(: > PWNED)",
    "main; : > PWNED",
    "a b\tc* ?[x]",
    "::error::x",
)
#: What the `run:` scripts may start, replaced by stubs that record their argv.
STUBBED = (
    "python",
    "python3",
    "pip",
    "git",
    "arduino-cli",
    "sudo",
    "apt-get",
    "gh",
    "curl",
    "sleep",
)
#: Real programs the scripts may use besides bash builtins (touch: so that injected code
#: would really leave a PWNED file).
REAL = ("cat", "tee", "grep", "rm", "touch", "mkdir", "sed", "sort", "tail", "head", "cut", "tr")
#: Expressions whose value comes from outside (a dispatch's inputs, its payload, a PR's
#: folder names through the matrix, the ref job's output): each must reach a program as one
#: whole argument, whatever it holds.
CARRIERS = ("inputs.", "matrix.", "github.event.client_payload.", "needs.ref.outputs.")
_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}", re.S)
#: The shell GitHub runs a `shell: bash` step with: bash --noprofile --norc -eo pipefail.
BASH = [shutil.which("bash") or "/bin/bash", "--noprofile", "--norc", "-eo", "pipefail"]

#: Every action the workflows use: the commit its tag names and the inputs its action.yml
#: declares there. Read 2026-12-01 from clones of each repository: `git rev-parse
#: TAG^{commit}` (the tag is also the repository's newest vX.Y.Z) and `git show
#: SHA:action.yml`.
ACTIONS: dict[str, tuple[str, str, frozenset[str]]] = {
    "actions/checkout": (
        "3d3c42e5aac5ba805825da76410c181273ba90b1",
        "v7.0.1",
        frozenset(
            [
                "allow-unsafe-pr-checkout",
                "clean",
                "fetch-depth",
                "fetch-tags",
                "filter",
                "github-server-url",
                "lfs",
                "path",
                "persist-credentials",
                "ref",
                "repository",
                "set-safe-directory",
                "show-progress",
                "sparse-checkout",
                "sparse-checkout-cone-mode",
                "ssh-key",
                "ssh-known-hosts",
                "ssh-strict",
                "ssh-user",
                "submodules",
                "token",
            ]
        ),
    ),
    "actions/setup-python": (
        "5fda3b95a4ea91299a34e894583c3862153e4b97",
        "v7.0.0",
        frozenset(
            [
                "allow-prereleases",
                "architecture",
                "cache",
                "cache-dependency-path",
                "check-latest",
                "freethreaded",
                "pip-version",
                "python-version",
                "python-version-file",
                "token",
                "update-environment",
            ]
        ),
    ),
    "actions/cache": (
        "27d5ce7f107fe9357f9df03efb73ab90386fccae",
        "v5.0.5",
        frozenset(
            [
                "enableCrossOsArchive",
                "fail-on-cache-miss",
                "key",
                "lookup-only",
                "path",
                "restore-keys",
                "save-always",
                "upload-chunk-size",
            ]
        ),
    ),
    # The same repository and commit as actions/cache: its restore/ and save/ action.yml.
    "actions/cache/restore": (
        "27d5ce7f107fe9357f9df03efb73ab90386fccae",
        "v5.0.5",
        frozenset(
            [
                "enableCrossOsArchive",
                "fail-on-cache-miss",
                "key",
                "lookup-only",
                "path",
                "restore-keys",
            ]
        ),
    ),
    "actions/cache/save": (
        "27d5ce7f107fe9357f9df03efb73ab90386fccae",
        "v5.0.5",
        frozenset(["enableCrossOsArchive", "key", "path", "upload-chunk-size"]),
    ),
    "actions/upload-artifact": (
        "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f",
        "v7.0.0",
        frozenset(
            [
                "archive",
                "compression-level",
                "if-no-files-found",
                "include-hidden-files",
                "name",
                "overwrite",
                "path",
                "retention-days",
            ]
        ),
    ),
    "actions/download-artifact": (
        "3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c",
        "v8.0.1",
        frozenset(
            [
                "artifact-ids",
                "digest-mismatch",
                "github-token",
                "merge-multiple",
                "name",
                "path",
                "pattern",
                "repository",
                "run-id",
                "skip-decompress",
            ]
        ),
    ),
    "arduino/setup-arduino-cli": (
        "81d310742121c928ea9c8bbd407b4217b432ae02",
        "v2.0.0",
        frozenset({"token", "version"}),
    ),
    "arduino/arduino-lint-action": (
        "9a3603836c75e41753e531167395edeb90ba5dae",
        "v3.0.0",
        frozenset(
            [
                "compliance",
                "library-manager",
                "official",
                "path",
                "project-type",
                "recursive",
                "report-file",
                "token",
                "verbose",
                "version",
            ]
        ),
    ),
}
#: The pins of the live executorch-arduino repository's CI (issue 17), in every workflow.
ZEPHYR_CORE = "arduino:zephyr@0.90.0"
ROUTER_BRIDGE = "Arduino_RouterBridge@0.4.3"


@pytest.fixture(scope="module")
def rendered() -> dict[str, str]:
    return wf.render_workflows(REPO, SHA)


def parsed(text: str) -> dict[str, Any]:
    data = yaml.safe_load(text)
    assert isinstance(data, dict)
    if True in data:  # YAML 1.1 reads the key `on` as true
        data["on"] = data.pop(True)
    return data


def steps(workflow: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(job id, job, step) for every step of every job."""
    for job_id, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            yield job_id, job, step


def step_named(workflow: dict[str, Any], job_id: str, name: str) -> dict[str, Any]:
    """The step of `job_id` whose name starts with `name`."""
    job_steps: list[dict[str, Any]] = workflow["jobs"][job_id]["steps"]
    found = [s for s in job_steps if s.get("name", "").startswith(name)]
    assert len(found) == 1, (job_id, name, [s.get("name") for s in job_steps])
    return found[0]


def installed(tmp_path: Path, rendered: dict[str, str]) -> Path:
    folder = tmp_path / "library" / wf.WORKFLOWS_DIR
    folder.mkdir(parents=True)
    for name, text in rendered.items():
        (folder / name).write_text(text)
    return folder


def tool(name: str) -> str:
    """The path of a lint tool; a missing one fails (CI installs requirements-dev.txt)."""
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: pip install -r requirements-dev.txt")
    return path


# --- lint --------------------------------------------------------------------------------


def test_actionlint_with_shellcheck_finds_nothing(tmp_path: Path, rendered: dict[str, str]) -> None:
    # actionlint checks every run: script with ShellCheck when it is on PATH.
    tool("shellcheck")
    folder = installed(tmp_path, rendered)
    proc = subprocess.run(
        [tool("actionlint"), "-no-color", *sorted(str(p) for p in folder.iterdir())],
        capture_output=True,
        text=True,
        check=False,
        cwd=folder.parent.parent,
    )
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr


def _zizmor(folder: Path, persona: str) -> list[dict[str, Any]]:
    options = ["--offline", "--no-config", f"--persona={persona}", "--format=json"]
    proc = subprocess.run(
        [tool("zizmor"), *options, str(folder)],
        capture_output=True,
        text=True,
        check=False,
        env={k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN")},
    )
    assert proc.stdout.strip(), proc.stderr
    findings = json.loads(proc.stdout)
    assert isinstance(findings, list)
    return findings


def test_zizmor_pedantic_finds_nothing(tmp_path: Path, rendered: dict[str, str]) -> None:
    findings = _zizmor(installed(tmp_path, rendered), "pedantic")
    assert findings == [], json.dumps(findings, indent=2)


def test_zizmor_auditor_finds_nothing(tmp_path: Path, rendered: dict[str, str]) -> None:
    # The auditor persona also wants secrets read only in a job with a deployment
    # environment (secrets-outside-env): sync's publish job runs in `sync-publish`.
    findings = _zizmor(installed(tmp_path, rendered), "auditor")
    assert findings == [], json.dumps(findings, indent=2)


def test_only_the_publish_job_runs_in_the_secrets_environment(rendered: dict[str, str]) -> None:
    # Issue 29: the environment's secrets reach only the jobs naming it; prepare, which runs
    # the ref's code, must not be one of them.
    jobs = parsed(rendered["sync.yml"])["jobs"]
    assert {name: job.get("environment") for name, job in jobs.items()} == {
        "ref": None,
        "prepare": None,
        "publish": "sync-publish",
    }


# --- pins and inputs of the actions ------------------------------------------------------


def test_every_action_is_pinned_to_a_commit_with_its_version(rendered: dict[str, str]) -> None:
    pinned = re.compile(r"^\s*(- )?uses: [\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$")
    for name, text in rendered.items():
        lines = [line for line in text.splitlines() if re.match(r"^\s*(- )?uses:", line)]
        assert lines, name
        for line in lines:
            assert pinned.match(line), f"{name}: {line.strip()}"
        for _, _, step in steps(parsed(text)):
            if "uses" in step:
                assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", step["uses"]), step


def test_every_action_is_its_tags_commit_and_gets_only_inputs_it_declares(
    rendered: dict[str, str],
) -> None:
    used: set[str] = set()
    for name, text in rendered.items():
        comments = dict(re.findall(r"uses: ([\w./-]+@[0-9a-f]{40}) # (v\S+)", text))
        for job_id, _, step in steps(parsed(text)):
            if "uses" not in step:
                continue
            action, _, sha = step["uses"].partition("@")
            assert action in ACTIONS, f"{name} {job_id}: {action} is not in the verified table"
            want_sha, want_tag, inputs = ACTIONS[action]
            assert (sha, comments[step["uses"]]) == (want_sha, want_tag), f"{name}: {action}"
            unknown = set(step.get("with", {})) - inputs
            assert not unknown, f"{name} {job_id} {step.get('name')}: {action} has no {unknown}"
            used.add(action)
    assert used == set(ACTIONS)


def test_the_pins_are_the_same_in_every_workflow(rendered: dict[str, str]) -> None:
    envs = {name: parsed(text)["env"] for name, text in rendered.items()}
    for name in ("sync.yml", "ci.yml"):
        assert envs[name]["ZEPHYR_CORE"] == ZEPHYR_CORE, name
        assert envs[name]["ROUTER_BRIDGE"] == ROUTER_BRIDGE, name
        assert envs[name]["ARDUINO_CLI_VERSION"] == envs["ci.yml"]["ARDUINO_CLI_VERSION"]
    assert envs["release.yml"]["ARDUINO_LINT_VERSION"] == envs["ci.yml"]["ARDUINO_LINT_VERSION"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", envs["ci.yml"]["ARDUINO_CLI_VERSION"])
    # The shapes `workflows --outdated` reads (generator/workflows/pins.py): one double-quoted line
    # each.
    for name in ("sync.yml", "ci.yml"):
        assert f'  ZEPHYR_CORE: "{ZEPHYR_CORE}"\n' in rendered[name]
        assert f'  ROUTER_BRIDGE: "{ROUTER_BRIDGE}"\n' in rendered[name]


# --- triggers, permissions, concurrency ----------------------------------------------------


def test_no_expression_inside_a_run_script_and_every_script_is_bash(
    rendered: dict[str, str],
) -> None:
    runs = 0
    for name, text in rendered.items():
        for job_id, _, step in steps(parsed(text)):
            if "run" in step:
                runs += 1
                assert "${{" not in step["run"], f"{name} {job_id}: {step.get('name')}"
                # bash -eo pipefail: `... | tee` fails when the command before it fails.
                assert step.get("shell") == "bash", f"{name} {job_id}: {step.get('name')}"
    assert runs >= 15


def test_permissions_are_exactly_as_stated(rendered: dict[str, str]) -> None:
    read = {"contents": "read"}
    expected = {
        "sync.yml": {
            "ref": read,
            "prepare": read,
            "publish": {"contents": "write", "pull-requests": "write"},
        },
        "ci.yml": {
            "examples": read,
            "example": read,
            "lint": read,
            "sizes": {},
            "size-comment": {"pull-requests": "write"},
            "ci-passed": {},
        },
        "release.yml": {"release": {"contents": "write"}},
    }
    for name, jobs in expected.items():
        workflow = parsed(rendered[name])
        assert workflow["permissions"] == {}, name
        assert {job: spec["permissions"] for job, spec in workflow["jobs"].items()} == jobs


def test_ci_runs_on_every_pull_request_push_to_main_nightly_and_by_hand(
    rendered: dict[str, str],
) -> None:
    ci = parsed(rendered["ci.yml"])
    # No paths filter: a required check that never reports blocks the merge.
    assert ci["on"] == {
        "pull_request": None,
        "push": {"branches": ["main"]},
        "schedule": [{"cron": "23 4 * * *"}],
        "workflow_dispatch": {
            "inputs": {
                "boards": {
                    "description": "full: every board the generator checks; smoke: the UNO Q only",
                    "type": "choice",
                    "options": ["full", "smoke"],
                    "default": "full",
                }
            }
        },
    }
    assert ci["concurrency"] == {
        "group": "ci-${{ github.event_name }}-"
        "${{ github.event.pull_request.number || github.ref }}",
        "cancel-in-progress": True,
    }


def test_the_final_ci_job_needs_every_other_job_and_always_runs(rendered: dict[str, str]) -> None:
    jobs = parsed(rendered["ci.yml"])["jobs"]
    final = jobs["ci-passed"]
    assert final["name"] == "CI passed"
    # always(), not !cancelled(): a skipped required check would count as passed.
    assert final["if"] == "always()"
    assert sorted(final["needs"]) == sorted(set(jobs) - {"ci-passed"})
    assert final["steps"][0]["env"] == {"RESULTS": "${{ join(needs.*.result, ' ') }}"}
    assert all("ci-passed" not in (job.get("needs") or []) for job in jobs.values())


@pytest.mark.parametrize(
    ("results", "passed"),
    [
        ("success success success success success", True),
        ("success skipped success skipped skipped", True),
        ("success failure success skipped skipped", False),
        ("success cancelled success success success", False),
        ("skipped skipped skipped skipped skipped", True),
        ("", False),
    ],
)
def test_the_final_ci_job_passes_only_on_success_or_skips(
    tmp_path: Path, rendered: dict[str, str], results: str, passed: bool
) -> None:
    step = parsed(rendered["ci.yml"])["jobs"]["ci-passed"]["steps"][0]
    proc = _run(tmp_path, step["run"], {"RESULTS": results})
    assert (proc.returncode == 0) == passed, proc.stdout
    if not passed and results:
        assert "::error::" in proc.stdout


def test_sync_runs_by_hand_on_a_repository_dispatch_and_on_an_opt_in_schedule(
    rendered: dict[str, str],
) -> None:
    sync = parsed(rendered["sync.yml"])
    assert set(sync["on"]) == {"workflow_dispatch", "repository_dispatch", "schedule"}
    assert sync["on"]["repository_dispatch"] == {"types": ["executorch-release"]}
    assert sync["on"]["schedule"] == [{"cron": "41 5 * * *"}]
    inputs = sync["on"]["workflow_dispatch"]["inputs"]
    assert set(inputs) == {"executorch_ref", "library_version", "recreate", "keep_older", "boards"}
    assert inputs["recreate"]["type"] == inputs["keep_older"]["type"] == "boolean"
    assert inputs["boards"]["type"] == "string" and inputs["boards"]["default"] == "unoq"
    assert inputs["boards"]["required"] is False
    assert "all for every board" in inputs["boards"]["description"]
    assert inputs["executorch_ref"]["default"] == "main"
    assert inputs["library_version"]["required"] is False
    ref = sync["jobs"]["ref"]
    assert ref["if"] == "github.event_name != 'schedule' || vars.SYNC_SCHEDULE == 'true'"
    assert ref["outputs"] == {
        "ref": "${{ steps.resolve.outputs.ref }}",
        "trusted": "${{ steps.resolve.outputs.trusted }}",
    }
    resolve = step_named(sync, "ref", "Resolve")
    assert resolve["env"]["PAYLOAD_REF"] == "${{ github.event.client_payload.ref }}"
    assert resolve["env"]["INPUT_REF"] == "${{ inputs.executorch_ref }}"


def test_sync_is_one_run_per_resolved_ref(rendered: dict[str, str]) -> None:
    sync = parsed(rendered["sync.yml"])
    # Not on the workflow: the schedule's ref is known only after the ref job.
    assert "concurrency" not in sync
    job = sync["jobs"]["prepare"]
    assert job["needs"] == "ref"
    assert job["if"] == "needs.ref.outputs.ref != ''"
    assert job["concurrency"] == {
        "group": "sync-${{ needs.ref.outputs.ref }}",
        "cancel-in-progress": False,
    }
    assert sync["jobs"]["ref"]["concurrency"]["group"] == "sync-ref-${{ github.run_id }}"
    run = step_named(sync, "prepare", "Build and check")
    assert run["env"]["EXECUTORCH_REF"] == "${{ needs.ref.outputs.ref }}"
    cache = step_named(sync, "prepare", "Restore the generator's cache")
    assert "needs.ref.outputs.ref" in cache["with"]["key"]
    assert "inputs." not in json.dumps(job.get("concurrency"))
    publish = sync["jobs"]["publish"]
    assert publish["needs"] == ["ref", "prepare"]
    assert publish["if"] == "needs.ref.outputs.ref != ''"
    assert publish["concurrency"] == {
        "group": "sync-publish-${{ needs.ref.outputs.ref }}",
        "cancel-in-progress": False,
    }
    assert step_named(sync, "publish", "Publish")["env"]["EXECUTORCH_REF"] == (
        "${{ needs.ref.outputs.ref }}"
    )


def test_sync_token_app_then_secret_then_workflow_token(rendered: dict[str, str]) -> None:
    sync = parsed(rendered["sync.yml"])
    # No token minted at job start (it would expire before a long run pushes): sync --app-id
    # mints the App's tokens itself, from the key in its environment.
    assert "create-github-app-token" not in rendered["sync.yml"]
    env = step_named(sync, "publish", "Publish")["env"]
    assert env["SYNC_APP_ID"] == "${{ vars.SYNC_APP_ID }}"
    assert env["SYNC_APP_PRIVATE_KEY"] == (
        "${{ vars.SYNC_APP_ID != '' && secrets.SYNC_APP_PRIVATE_KEY || '' }}"
    )
    assert env["GITHUB_TOKEN"] == (
        "${{ vars.SYNC_APP_ID == '' && (secrets.SYNC_TOKEN || github.token) || '' }}"
    )
    assert env["TOKEN_SOURCE"] == (
        "${{ vars.SYNC_APP_ID != '' && 'app' || secrets.SYNC_TOKEN && 'secret' || 'workflow' }}"
    )
    secrets = [
        (job_id, step.get("name"), key)
        for job_id, _, step in steps(sync)
        for key, value in step.get("env", {}).items()
        if "secrets." in str(value)
    ]
    assert secrets == [
        ("publish", "Publish", "SYNC_APP_PRIVATE_KEY"),
        ("publish", "Publish", "GITHUB_TOKEN"),
        ("publish", "Publish", "TOKEN_SOURCE"),
    ]


def test_release_starts_only_by_hand_or_on_a_merged_sync_and_queues_on_the_job(
    rendered: dict[str, str],
) -> None:
    release = parsed(rendered["release.yml"])
    assert set(release["on"]) == {"workflow_dispatch", "pull_request"}
    assert release["on"]["pull_request"] == {"types": ["closed"]}
    # A workflow-level group would let any closed pull request replace a pending release;
    # a job skipped by its `if` never joins the job's group.
    assert "concurrency" not in release
    job = release["jobs"]["release"]
    assert job["concurrency"] == {"group": "release", "cancel-in-progress": False}
    assert " ".join(job["if"].split()) == (
        "github.event_name == 'workflow_dispatch' || "
        "(github.event.pull_request.merged == true && "
        "github.event.pull_request.head.repo.full_name == github.repository && "
        "contains(github.event.pull_request.labels.*.name, 'sync') && "
        "vars.RELEASE_ON_SYNC_MERGE == 'true')"
    )


def test_release_lints_main_then_tags_and_publishes_that_very_commit(
    rendered: dict[str, str],
) -> None:
    release = parsed(rendered["release.yml"])
    names = [s["name"] for s in release["jobs"]["release"]["steps"]]
    assert names == [
        "Check out main",
        "arduino-lint the tree to tag (Library Manager, strict)",
        "Set up Python",
        "Install the generator at its pin",
        "Tag the commit",
        "Create or update the GitHub Release",
    ]
    checkout = step_named(release, "release", "Check out main")
    assert checkout["id"] == "main" and checkout["with"]["ref"] == "main"
    assert "path" not in checkout["with"]  # the workspace, which arduino-lint reads
    lint = step_named(release, "release", "arduino-lint")
    assert "path" not in lint["with"]
    assert lint["with"]["library-manager"] == "${{ vars.LIBRARY_MANAGER_MODE || 'update' }}"
    assert lint["with"]["compliance"] == "strict"
    tag = step_named(release, "release", "Tag the commit")
    # actions/checkout's output `commit`: the SHA it checked out (src/git-source-provider.ts).
    assert tag["env"]["COMMIT"] == "${{ steps.main.outputs.commit }}"
    assert '--ref "$COMMIT"' in tag["run"]
    assert '--notes "$RUNNER_TEMP/release-notes.md"' in tag["run"]


def test_ci_lint_is_the_library_managers_update_mode_unless_told(rendered: dict[str, str]) -> None:
    ci = parsed(rendered["ci.yml"])
    lint = next(s for s in ci["jobs"]["lint"]["steps"] if "arduino-lint-action" in s["uses"])
    # "update": the library is registered; "submit" only for a library not in the index.
    assert lint["with"]["library-manager"] == "${{ vars.LIBRARY_MANAGER_MODE || 'update' }}"
    assert lint["with"]["compliance"] == "strict"
    assert "submit" in rendered["ci.yml"] and "#8927" in rendered["ci.yml"]


# --- CI's checks -------------------------------------------------------------------------


def test_ci_checks_each_example_once_per_board_with_arduino_cli(rendered: dict[str, str]) -> None:
    ci = parsed(rendered["ci.yml"])
    example = ci["jobs"]["example"]
    matrix = example["strategy"]["matrix"]
    assert _boards_for(rendered, "pull_request") == list(BOARDS)
    assert matrix["example"] == "${{ fromJSON(needs.examples.outputs.examples) }}"
    # No compile of its own: check's is the one (arduino-cli, no fall-back to gcc-arm).
    assert not [s for _, _, s in steps(ci) if "arduino-cli compile" in s.get("run", "")]
    checks = [s for s in example["steps"] if "generator check" in s.get("run", "")]
    assert [s["name"] for s in checks] == [
        "Measure the base",
        "Check (arduino-cli compile, model check, sizes, emulated run)",
    ]
    head, base = checks[1], checks[0]
    assert "if" not in head and base["if"] == "github.event_name == 'pull_request'"
    for step in checks:
        assert step["env"]["BOARD"] == "${{ matrix.board }}"
        assert step["env"]["EXAMPLE"] == "${{ matrix.example }}"
    assert "--no-run" in base["run"] and "--no-run" not in head["run"]


def _boards_for(rendered: dict[str, str], event: str, inputs: dict[str, str] | None = None) -> Any:
    """The example job's board vector for `event` (`inputs`: a dispatch's, as given; the
    declared default fills in a missing one, as GitHub does)."""
    ci = parsed(rendered["ci.yml"])
    declared = ci["on"]["workflow_dispatch"]["inputs"]
    given = {
        **{name: spec["default"] for name, spec in declared.items()},
        **(inputs or {}),
    }
    contexts = {
        "github": {"event_name": event},
        "inputs": given if event == "workflow_dispatch" else {},
    }
    scope = Scope(normalize(contexts), frozenset({"github", "needs", "vars", "inputs"}))
    return render(ci["jobs"]["example"]["strategy"]["matrix"]["board"], scope)


def test_the_smoke_boards_on_a_change_and_the_full_table_nightly_and_by_hand(
    rendered: dict[str, str],
) -> None:
    full = list(check_boards())
    # every arduino:zephyr board, the one without an emulator (the M0+) compiled and sized only
    assert full == list(ZEPHYR_BOARDS) and len(full) == 15
    assert "nano_connect" in full and ZEPHYR_BOARDS["nano_connect"].emulator is None
    assert _boards_for(rendered, "pull_request") == ["unoq"] == list(BOARDS)
    assert _boards_for(rendered, "push") == ["unoq"]
    assert _boards_for(rendered, "schedule") == full
    assert _boards_for(rendered, "workflow_dispatch") == full  # the default: full
    assert _boards_for(rendered, "workflow_dispatch", {"boards": "full"}) == full
    assert _boards_for(rendered, "workflow_dispatch", {"boards": "smoke"}) == ["unoq"]
    # 256 jobs at most per matrix (GitHub docs, "Running variations of jobs in a workflow")
    examples = [
        p for p in (PROJECT_ROOT / "data" / "library_template" / "examples").iterdir() if p.is_dir()
    ]
    assert examples and len(full) * len(examples) <= 256


def test_a_new_row_of_the_zephyr_table_changes_only_the_full_matrix(
    rendered: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    giga = ZEPHYR_BOARDS["giga"]
    monkeypatch.setitem(ZEPHYR_BOARDS, "new_board", dataclasses.replace(giga, key="new_board"))
    two = wf.render_workflows(REPO, SHA)
    assert [name for name in NAMES if two[name] != rendered[name]] == ["ci.yml"]
    before, after = rendered["ci.yml"].splitlines(), two["ci.yml"].splitlines()
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert changed == [(a, a.replace("\"ventunoq\"]", "\"ventunoq\", \"new_board\"]"))
                       for a, _ in changed]  # fmt: skip
    assert len(changed) == 1
    for event in ("pull_request", "push"):
        assert _boards_for(two, event) == ["unoq"]
    assert _boards_for(two, "schedule") == [*check_boards()] and "new_board" in check_boards()
    # a row without an emulator is taken too (compiled and sized only): the same matrix
    monkeypatch.setitem(
        ZEPHYR_BOARDS, "new_board", dataclasses.replace(giga, key="new_board", emulator=None)
    )
    assert wf.render_workflows(REPO, SHA) == two
    # a row whose RAM is unknown is one check does not take: nothing changes
    monkeypatch.setitem(
        ZEPHYR_BOARDS, "new_board", dataclasses.replace(giga, key="new_board", ram_bytes=None)
    )
    assert wf.render_workflows(REPO, SHA) == rendered


def test_every_ci_job_ends_within_the_hour(rendered: dict[str, str]) -> None:
    jobs = parsed(rendered["ci.yml"])["jobs"]
    assert jobs["example"]["timeout-minutes"] == 60
    assert all(0 < job["timeout-minutes"] <= 60 for job in jobs.values())


def test_the_check_steps_pass_example_board_and_compiler(
    tmp_path: Path, rendered: dict[str, str]
) -> None:
    ci = parsed(rendered["ci.yml"])
    home = "/home/runner"
    argvs = []
    for name in ("Measure the base", "Check ("):
        step = step_named(ci, "example", name)
        log = tmp_path / name.split()[0]
        env = {"BOARD": "unoq", "EXAMPLE": "Add Model", "JOB_INDEX": "3", "HOME": home}
        proc = _run(tmp_path, step["run"], env, log=log)
        assert proc.returncode == 0, proc.stderr
        [argv] = _calls(log)
        argvs.append(argv)
    out = f"{tmp_path}/sizes/unoq/3"
    common = ["--board", "unoq", "--compiler", "arduino-cli"]
    cache = ["--cache-dir", f"{home}/.cache/executorch-arduino"]
    assert argvs[0] == ["python", "-m", "generator", "check", "base", "--example=Add Model",
                        *common, "--no-run", "--json", f"{out}/base.json", *cache]  # fmt: skip
    assert argvs[1] == ["python", "-m", "generator", "check", "head", "--example=Add Model",
                        *common, "--json", f"{out}/head.json", *cache]  # fmt: skip
    assert (tmp_path / "sizes" / "unoq" / "3").is_dir()


def test_the_base_may_fail_to_measure_the_head_may_not(
    tmp_path: Path, rendered: dict[str, str]
) -> None:
    ci = parsed(rendered["ci.yml"])
    replies = {"python": "exit 1\n"}
    env = {"BOARD": "unoq", "EXAMPLE": "AddModel", "JOB_INDEX": "0"}
    base = _run(tmp_path, step_named(ci, "example", "Measure the base")["run"], env, replies)
    assert base.returncode == 0 and "its sizes are still compared" in base.stdout
    head = _run(tmp_path, step_named(ci, "example", "Check (")["run"], env, replies)
    assert head.returncode == 1


def test_the_sizes_travel_as_artifacts_named_by_job_index(rendered: dict[str, str]) -> None:
    ci = parsed(rendered["ci.yml"])
    upload = step_named(ci, "example", "Keep the sizes")
    assert upload["if"] == "${{ !cancelled() && github.event_name == 'pull_request' }}"
    # An artifact name may not hold every character a folder name may: no example in it.
    assert upload["with"]["name"] == "sizes-${{ strategy.job-index }}"
    assert upload["with"]["path"] == "${{ runner.temp }}/sizes"
    # A re-run of a failed example job is the same run; upload-artifact v7.0.0 action.yml:
    # "If false, the action will fail if an artifact for the given name already exists."
    assert upload["with"]["overwrite"] is True
    download = step_named(ci, "sizes", "Collect")
    # merge-multiple: one artifact would otherwise land without its folder (download-artifact
    # v8.0.1 src/download-artifact.ts: `artifacts.length === 1 ? resolvedPath`).
    assert download["with"] == {
        "pattern": "sizes-*",
        "path": "${{ runner.temp }}/sizes",
        "merge-multiple": True,
    }
    sizes = ci["jobs"]["sizes"]
    assert sizes["needs"] == ["examples", "example"]
    assert "!cancelled()" in sizes["if"] and "github.event_name == 'pull_request'" in sizes["if"]


def test_the_size_comment_is_for_this_repositorys_pull_requests_only(
    rendered: dict[str, str],
) -> None:
    ci = parsed(rendered["ci.yml"])
    comment = ci["jobs"]["size-comment"]
    assert comment["needs"] == "sizes"
    assert " ".join(comment["if"].split()) == (
        "!cancelled() && needs.sizes.result == 'success' && "
        "github.event.pull_request.head.repo.full_name == github.repository"
    )
    assert [s.get("uses") for s in comment["steps"]] == [None]  # no checkout, no code of the PR
    pr_write = [
        (name, job_id)
        for name, text in rendered.items()
        for job_id, job in parsed(text)["jobs"].items()
        if job["permissions"].get("pull-requests") == "write"
    ]
    assert pr_write == [("ci.yml", "size-comment"), ("sync.yml", "publish")]


# --- caches --------------------------------------------------------------------------------


def _caches(workflow: dict[str, Any], job_id: str) -> dict[str, dict[str, Any]]:
    """The caches a job restores (actions/cache, or actions/cache/restore), by step name."""
    return {
        s["name"]: s["with"]
        for s in workflow["jobs"][job_id]["steps"]
        if s.get("uses", "").startswith(("actions/cache@", "actions/cache/restore@"))
    }


def test_caches_are_keyed_so_a_new_pin_misses(rendered: dict[str, str]) -> None:
    ci, sync = parsed(rendered["ci.yml"]), parsed(rendered["sync.yml"])
    arduino = "Restore the arduino core, its toolchain and the library"
    pip = "Restore pip's downloads"
    for workflow, job_id in ((ci, "example"), (sync, "prepare")):
        caches = _caches(workflow, job_id)
        core = caches[arduino]
        for pin in ("env.ZEPHYR_CORE", "env.ROUTER_BRIDGE", "env.ARDUINO_CLI_VERSION"):
            assert pin in core["key"], (job_id, pin)
        assert "restore-keys" not in core  # an older core would be restored and kept
        assert core["path"].split() == ["~/.arduino15", "!~/.arduino15/staging",
                                        "~/Arduino/libraries"]  # fmt: skip
        assert "env.GENERATOR_REF" in caches[pip]["key"]
        assert caches[pip]["path"] == "~/.cache/pip"
    objects = _caches(ci, "example")["Restore the check's object cache"]
    assert objects["path"] == "~/.cache/executorch-arduino/objects"
    for part in ("env.GENERATOR_REF", "env.ZEPHYR_CORE", "matrix.board"):
        assert part in objects["key"] and part in objects["restore-keys"]
    assert "matrix.example" not in objects["key"]  # a folder name may hold a comma
    generator = _caches(sync, "prepare")[
        "Restore the generator's cache (checkouts, flatc, objects, steps)"
    ]
    for part in ("env.GENERATOR_REF", "env.ZEPHYR_CORE", "needs.ref.outputs.ref"):
        assert part in generator["key"]
    assert _caches(ci, "sizes")[pip]["key"] == _caches(ci, "example")[pip]["key"]
    # The torch-less and the torch installs never share an entry.
    assert _caches(sync, "prepare")[pip]["key"] != _caches(ci, "example")[pip]["key"]
    # The publish job restores nothing: it holds the token (zizmor's cache-poisoning rule).
    assert _caches(sync, "publish") == {}
    # A workflow that publishes restores nothing (zizmor's cache-poisoning rule).
    assert "actions/cache@" not in rendered["release.yml"]


def test_each_cache_is_restored_before_what_fills_it(rendered: dict[str, str]) -> None:
    for name in ("ci.yml", "sync.yml"):
        for job_id, job in parsed(rendered[name])["jobs"].items():
            if (name, job_id) == ("sync.yml", "publish"):
                # Holds the token: restores no cache the prepare job (upstream code) wrote.
                continue
            names = [s.get("name", "") for s in job.get("steps", [])]
            for cache, user in (
                ("Restore pip's downloads", "Install the generator at its pin"),
                ("Restore the arduino core", "Install the toolchains check uses"),
            ):
                uses = [i for i, n in enumerate(names) if n.startswith(user)]
                caches = [i for i, n in enumerate(names) if n.startswith(cache)]
                if uses:
                    assert caches and caches[0] < uses[0], (name, job_id, cache)


# --- torch only where it is imported -------------------------------------------------------


def _closure(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += graph.get(module, ())
    return seen


def test_torch_is_installed_only_in_the_job_whose_build_imports_it(
    rendered: dict[str, str],
) -> None:
    cpu = "--index-url https://download.pytorch.org/whl/cpu"
    installs = {}
    for name, text in rendered.items():
        for job_id, _, step in steps(parsed(text)):
            if "requirements.txt" in step.get("run", ""):
                installs[(name, job_id)] = step["run"]
    assert set(installs) == {
        ("sync.yml", "prepare"),
        ("sync.yml", "publish"),
        ("ci.yml", "example"),
        ("ci.yml", "sizes"),
        ("release.yml", "release"),
    }
    for where, script in installs.items():
        if where == ("sync.yml", "prepare"):
            assert script.index(cpu) < script.index('pip install -q -r "$gen/requirements')
        else:
            assert "download.pytorch.org" not in script, where
            assert "grep -v '^torch==' \"$gen/requirements.txt\"" in script, where
            pips = [line.strip() for line in script.splitlines() if "pip install" in line]
            assert pips == ['python -m pip install -q -r "$RUNNER_TEMP/requirements-no-torch.txt"']
    assert "torch==" in (PROJECT_ROOT / "requirements.txt").read_text()


def test_the_jobs_without_torch_run_code_that_never_imports_it() -> None:
    # The verbs and modules the torch-less jobs run (check, release, the size table) reach
    # no module that imports torch or torchgen: deferred imports count
    # (tests/project/test_imports.py).
    sys.path.insert(0, str(PROJECT_ROOT / "tests" / "project"))
    try:
        from test_imports import import_graph
    finally:
        sys.path.pop(0)
    graph = import_graph()
    reached: set[str] = set()
    for start in ("generator.check.run", "generator.release.run", "generator.library.compare",
                  "generator.boards.budgets"):  # fmt: skip
        assert start in graph
        reached |= _closure(graph, start)
    assert "generator.pipeline.codegen" not in reached
    torch = re.compile(r"^\s*(import|from)\s+torch(gen)?\b", re.M)
    for module in sorted(reached):
        relative = Path(*module.split("."))
        path = PROJECT_ROOT / relative.with_suffix(".py")
        if not path.is_file():
            path = PROJECT_ROOT / relative / "__init__.py"
        assert not torch.search(path.read_text(encoding="utf-8")), module
    assert torch.search((PROJECT_ROOT / "generator/pipeline/codegen.py").read_text())  # control


def test_the_install_without_torch_installs_every_other_requirement(
    tmp_path: Path, rendered: dict[str, str]
) -> None:
    step = step_named(parsed(rendered["ci.yml"]), "example", "Install the generator")
    gen = tmp_path / "generator"
    gen.mkdir()
    shutil.copy(PROJECT_ROOT / "requirements.txt", gen / "requirements.txt")
    log = tmp_path / "log"
    env = {"GENERATOR_REPO": REPO, "GENERATOR_REF": SHA}
    proc = _run(tmp_path, step["run"], env, log=log)
    assert proc.returncode == 0, proc.stderr
    pip = [argv for argv in _calls(log) if argv[0] == "python"]
    assert pip == [["python", "-m", "pip", "install", "-q", "-r",
                    f"{tmp_path}/requirements-no-torch.txt"]]  # fmt: skip
    kept = (tmp_path / "requirements-no-torch.txt").read_text().splitlines()
    full = (PROJECT_ROOT / "requirements.txt").read_text().splitlines()
    assert kept == [line for line in full if not line.startswith("torch==")]
    assert len(kept) == len(full) - 1


# --- the toolchain install ---------------------------------------------------------------


def _install_script(rendered: dict[str, str], name: str, job_id: str) -> str:
    return str(step_named(parsed(rendered[name]), job_id, "Install the toolchains")["run"])


def test_the_toolchain_install_is_the_same_in_sync_and_ci(rendered: dict[str, str]) -> None:
    script = _install_script(rendered, "ci.yml", "example")
    assert _install_script(rendered, "sync.yml", "prepare") == script
    assert "arduino-cli config set network.connection_timeout 600s" in script
    assert 'retry arduino-cli core install "$ZEPHYR_CORE"' in script


def test_the_toolchain_install_sets_the_timeout_then_installs(
    tmp_path: Path, rendered: dict[str, str]
) -> None:
    log = tmp_path / "log"
    env = {"ZEPHYR_CORE": ZEPHYR_CORE, "ROUTER_BRIDGE": ROUTER_BRIDGE}
    proc = _run(tmp_path, _install_script(rendered, "ci.yml", "example"), env, log=log)
    assert proc.returncode == 0, proc.stderr
    cli = [argv[1:] for argv in _calls(log) if argv[0] == "arduino-cli"]
    assert cli == [
        ["config", "init", "--overwrite"],
        ["config", "set", "network.connection_timeout", "600s"],
        ["update"],
        ["lib", "install", ROUTER_BRIDGE],
        ["core", "install", ZEPHYR_CORE],
    ]


@pytest.mark.parametrize(("failures", "ok"), [(1, True), (2, True), (3, False)])
def test_core_install_is_tried_three_times(
    tmp_path: Path, rendered: dict[str, str], failures: int, ok: bool
) -> None:
    log = tmp_path / "log"
    count = tmp_path / "count"
    # The stub fails `core install` the first `failures` times.
    replies = {
        "arduino-cli": (
            'if [[ "$1 $2" == "core install" ]]; then\n'
            f'  n=$(( $(cat "{count}" 2>/dev/null || echo 0) + 1 )); echo "$n" > "{count}"\n'
            f"  if (( n <= {failures} )); then exit 1; fi\n"
            "fi\n"
        )
    }
    env = {"ZEPHYR_CORE": ZEPHYR_CORE, "ROUTER_BRIDGE": ROUTER_BRIDGE}
    proc = _run(tmp_path, _install_script(rendered, "ci.yml", "example"), env, replies, log=log)
    calls = _calls(log)
    installs = [a for a in calls if a[:3] == ["arduino-cli", "core", "install"]]
    sleeps = [a[1] for a in calls if a[0] == "sleep"]
    assert len(installs) == min(failures + 1, 3)
    assert sleeps == ["30", "60"][: min(failures, 2)]
    assert (proc.returncode == 0) == ok
    if not ok:
        assert f"::error::failed 3 times: arduino-cli core install {ZEPHYR_CORE}" in proc.stdout


# --- recording stubs -----------------------------------------------------------------------


def _stub_path(root: Path) -> Path:
    """A folder of stubs for `STUBBED` and links to `REAL`. A stub appends its argv to
    `$STUB_LOG/<n>-<name>` (n counts up, so the files sort in call order), then runs
    `$STUB_REPLIES/<name>` when there is one (sourced: it sees the arguments and may print,
    read stdin or exit), then reads its stdin and exits 0."""
    bin_dir = root / "bin"
    if bin_dir.is_dir():
        return bin_dir
    bin_dir.mkdir()
    for name in STUBBED:
        stub = bin_dir / name
        stub.write_text(
            "#!/bin/bash\n"
            'n=$(( $(cat "$STUB_LOG/.count" 2>/dev/null || echo 0) + 1 ))\n'
            'echo "$n" > "$STUB_LOG/.count"\n'
            'printf "%s\\0" "${0##*/}" "$@" > "$STUB_LOG/$(printf %05d "$n")-${0##*/}"\n'
            'if [[ -n "${STUB_REPLIES:-}" && -f "$STUB_REPLIES/${0##*/}" ]]; then\n'
            '  source "$STUB_REPLIES/${0##*/}"\n'
            "fi\n"
            "exec cat > /dev/null\n"
        )
        stub.chmod(0o755)
    for name in REAL:
        real = shutil.which(name)
        assert real, name
        (bin_dir / name).symlink_to(real)
    return bin_dir


def _decode(path: Path) -> list[str]:
    return [part.decode() for part in path.read_bytes().split(b"\0")[:-1]]


def _calls(log: Path) -> list[list[str]]:
    """The argv of every stub call recorded in `log`, in call order."""
    return [_decode(f) for f in sorted(log.iterdir()) if not f.name.startswith(".")]


def _run(
    root: Path,
    script: str,
    env: dict[str, str],
    replies: dict[str, str] | None = None,
    *,
    log: Path | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `script` as GitHub runs a bash step, with the stubs on PATH and the runner's
    variables (RUNNER_TEMP = `root`; GITHUB_STEP_SUMMARY, GITHUB_OUTPUT as files in `root`)
    unless `env` sets them. `replies`: stub name -> reply script (see `_stub_path`)."""
    log = log or root / "log"
    log.mkdir(parents=True, exist_ok=True)
    reply_dir = root / "replies"
    reply_dir.mkdir(exist_ok=True)
    for old in reply_dir.iterdir():
        old.unlink()
    for name, text in (replies or {}).items():
        (reply_dir / name).write_text(text)
    full = {
        "PATH": str(_stub_path(root)),
        "HOME": str(root / "home"),
        "RUNNER_TEMP": str(root),
        "GITHUB_REPOSITORY": "owner/executorch-arduino",
        "GITHUB_STEP_SUMMARY": str(root / "summary.md"),
        "GITHUB_OUTPUT": str(root / "output.txt"),
        "STUB_LOG": str(log),
        "STUB_REPLIES": str(reply_dir),
        **env,
    }
    path = root / "step.sh"
    path.write_text(script)
    return subprocess.run(
        [*BASH, str(path)],
        cwd=cwd or root,
        env=full,
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
    )


# --- inputs stay data ----------------------------------------------------------------------


def _step_env(
    workflow: dict[str, Any],
    job: dict[str, Any],
    step: dict[str, Any],
    value: str,
    temp: Path,
    event: str = "workflow_dispatch",
) -> tuple[dict[str, str], set[str]]:
    """The step's environment with expressions evaluated: each `CARRIERS` expression becomes
    `value` tagged with its name (so two are told apart), `github.event_name` is `event`, a
    job result is success, the rest stand-ins. Returns it and the names of the variables that
    carry a tagged `value`."""
    env: dict[str, str] = {}
    carrying: set[str] = set()
    for scope in (workflow.get("env", {}), job.get("env", {}), step.get("env", {})):
        for key, raw in scope.items():
            text = str(raw)
            exprs = _EXPR.findall(text)
            if any(e.startswith(CARRIERS) for e in exprs):
                carrying.add(key)

            def stand_in(m: re.Match[str]) -> str:
                expr = m.group(1)
                if expr.startswith(CARRIERS):
                    return f"{value}.{expr}"
                if expr == "runner.temp":
                    return str(temp)
                if expr == "github.event_name":
                    return event
                if ".result" in expr:
                    return "success"
                return "stand-in-token" if "token" in expr or "secrets." in expr else "x"

            env[key] = _EXPR.sub(stand_in, text)
    if "TOKEN_SOURCE" in env:
        env["TOKEN_SOURCE"] = "workflow"  # the fallback path is the one with the most code
    return env, carrying


def _boolean_inputs(workflow: dict[str, Any], step: dict[str, Any]) -> set[str]:
    """The step's env variables that carry a boolean workflow_dispatch input."""
    on = workflow.get("on") or {}  # `parsed` moved YAML 1.1's True key to "on"
    dispatch = (on.get("workflow_dispatch") or {}) if isinstance(on, dict) else {}
    inputs = dispatch.get("inputs") or {}
    booleans = {name for name, spec in inputs.items() if spec.get("type") == "boolean"}
    return {
        key
        for key, raw in step.get("env", {}).items()
        if any(e.removeprefix("inputs.") in booleans for e in _EXPR.findall(str(raw)))
    }


#: (workflow, the event it runs for) of the hostile-value test.
EVENTS = [
    ("ci.yml", "pull_request"),
    ("release.yml", "workflow_dispatch"),
    ("sync.yml", "workflow_dispatch"),
    ("sync.yml", "repository_dispatch"),
]


@pytest.mark.parametrize("value", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize(("name", "event"), EVENTS, ids=[f"{n}-{e}" for n, e in EVENTS])
def test_hostile_values_stay_one_argument(
    tmp_path: Path, rendered: dict[str, str], name: str, event: str, value: str
) -> None:
    workflow = parsed(rendered[name])
    temp = tmp_path / "runner-temp"
    (temp / "generator").mkdir(parents=True)
    shutil.copy(PROJECT_ROOT / "requirements.txt", temp / "generator" / "requirements.txt")
    work = tmp_path / "work"
    work.mkdir()
    (work / "library.properties").write_text("name=ExecuTorch\nversion=1.2.3\n")
    files = {"GITHUB_STEP_SUMMARY": tmp_path / "summary", "GITHUB_OUTPUT": tmp_path / "output"}
    files["GITHUB_ENV"] = tmp_path / "github_env"
    carried = refused = 0
    for job_id, job, step in steps(workflow):
        if "run" not in step:
            continue
        log = tmp_path / "log" / f"{job_id}-{step['name']}"
        env, carrying = _step_env(workflow, job, step, value, temp, event)
        env.update(GITHUB_WORKSPACE=str(work), RUNNER_TEMP=str(temp))
        env.update({k: str(p) for k, p in files.items()})
        output_before = (
            files["GITHUB_OUTPUT"].read_text() if files["GITHUB_OUTPUT"].exists() else ""
        )
        proc = _run(tmp_path, step["run"], env, log=log, cwd=work)
        argvs = _calls(log)
        if step.get("id") == "resolve":
            # The ref job refuses what is not a plain ref before anything runs or is written,
            # and never echoes it (a line starting with :: is a workflow command).
            assert proc.returncode == 1, proc.stdout + proc.stderr
            assert "is not a plain git ref" in proc.stdout
            assert value not in proc.stdout + proc.stderr
            assert argvs == []
            assert (files["GITHUB_OUTPUT"].read_text() if files["GITHUB_OUTPUT"].exists()
                    else "") == output_before  # fmt: skip
            refused += 1
            continue
        assert proc.returncode == 0, f"{name} {job_id} {step['name']}: {proc.stderr}"
        for var in carrying:
            if f"${var}" not in step["run"] and f"${{{var}}}" not in step["run"]:
                continue
            if var in _boolean_inputs(workflow, step):
                continue  # only compared, never passed on: the PWNED check covers it
            carried += 1
            tagged = env[var]
            whole = [
                arg
                for argv in argvs
                for arg in argv
                if arg == tagged or arg.endswith(("=" + tagged, "/" + tagged))
            ]
            assert whole, f"{name} {step['name']}: ${var} is not one argument in {argvs}"
    assert not list(tmp_path.rglob("PWNED")), f"{name}: a hostile value ran as code"
    assert not files["GITHUB_ENV"].exists() or files["GITHUB_ENV"].read_text() == ""
    if name != "release.yml":
        assert carried, f"{name}: no step passed the input on"
    assert refused == (1 if name == "sync.yml" else 0)


@pytest.mark.parametrize(
    ("source", "version", "boards", "extra"),
    [
        ("workflow", "", "", ["--workflow-token"]),
        ("app", "1.2.3", "", ["--library-version=1.2.3", "--app-id", "Iv23liABC"]),
        ("secret", "", "", []),
        ("secret", "", "unoq", ["--board=unoq"]),
        ("secret", "", "unoq,giga", ["--board=unoq,giga"]),
        ("secret", "", "all", ["--board=all"]),
        ("secret", "", "--help", ["--board=--help"]),  # one value, never an option of its own
    ],
)
def test_sync_passes_the_inputs_and_the_workflow_token_flag(
    tmp_path: Path,
    rendered: dict[str, str],
    source: str,
    version: str,
    boards: str,
    extra: list[str],
) -> None:
    sync = parsed(rendered["sync.yml"])
    step = step_named(sync, "publish", "Publish")
    assert step["env"]["BOARDS"] == "${{ inputs.boards }}"
    assert step["env"]["DIGEST"] == "${{ needs.prepare.outputs.digest }}"
    env, _ = _step_env(sync, sync["jobs"]["publish"], step, "", tmp_path)
    env.update(EXECUTORCH_REF="v1.5.1", LIBRARY_VERSION=version, TOKEN_SOURCE=source,
               SYNC_APP_ID="Iv23liABC", HOME="/home/runner", BOARDS=boards,
               DIGEST="sha256:" + "ab" * 32, RUNNER_TEMP=str(tmp_path))  # fmt: skip
    proc = _run(tmp_path, step["run"], env)
    assert proc.returncode == 0, proc.stderr
    [argv] = [a for a in _calls(tmp_path / "log") if a[0] == "python"]
    assert argv == [
        "python",
        "-m",
        "generator",
        "sync",
        "--publish",
        f"{tmp_path}/stage",
        "--digest",
        "sha256:" + "ab" * 32,
        "--repo",
        "owner/executorch-arduino",
        "--executorch-ref=v1.5.1",
        *extra,
    ]
    text = (tmp_path / "summary.md").read_text()
    warned = "CI will not run on the sync pull request" in text
    assert warned == (source == "workflow")
    if warned:
        assert "SYNC_APP_ID" in text and "SYNC_APP_PRIVATE_KEY" in text and "SYNC_TOKEN" in text
        assert "Allow GitHub Actions to create and approve pull requests" in " ".join(
            line.removeprefix("> ") for line in text.splitlines()
        )


# --- the sync's ref --------------------------------------------------------------------------


def _resolve(
    tmp_path: Path,
    rendered: dict[str, str],
    event: str,
    ref: str = "",
    replies: dict[str, str] | None = None,
) -> tuple[subprocess.CompletedProcess[str], str | None]:
    """Run the ref job's step for `event` with `ref` as the input and the payload's ref;
    returns the run and the `ref` it output (None: no output)."""
    proc, outputs = _resolve_outputs(tmp_path, rendered, event, ref, replies)
    return proc, outputs.get("ref")


def _resolve_outputs(
    tmp_path: Path,
    rendered: dict[str, str],
    event: str,
    ref: str = "",
    replies: dict[str, str] | None = None,
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """`_resolve`, returning every output of the step (`ref` and `trusted`) by name."""
    step = step_named(parsed(rendered["sync.yml"]), "ref", "Resolve")
    env = {
        "EVENT": event,
        "INPUT_REF": ref,
        "PAYLOAD_REF": ref,
        "GH_TOKEN": "stand-in-token",
        "UPSTREAM": "https://github.com/pytorch/executorch",
    }
    output = tmp_path / "output.txt"
    output.unlink(missing_ok=True)
    proc = _run(tmp_path, step["run"], env, replies)
    lines = output.read_text().splitlines() if output.exists() else []
    outputs = dict(line.partition("=")[::2] for line in lines)
    assert len(outputs) == len(lines) and set(outputs) <= {"ref", "trusted"}, lines
    assert set(outputs) in (set(), {"ref", "trusted"}), lines
    return proc, outputs


@pytest.mark.parametrize(
    ("event", "ref", "trusted"),
    [
        ("workflow_dispatch", "main", "true"),
        ("workflow_dispatch", "v1.5.1", "true"),
        ("repository_dispatch", "v1.5.1", "true"),
        ("workflow_dispatch", "v1.6.0-rc1", "false"),
        ("workflow_dispatch", "refs/pull/7/head", "false"),
        ("workflow_dispatch", "0123456789abcdef0123456789abcdef01234567", "false"),
        ("repository_dispatch", "viable/strict", "false"),
        ("workflow_dispatch", "v1.5.1x", "false"),
    ],
)
def test_only_the_schedule_main_and_release_tags_may_save_the_caches(
    tmp_path: Path, rendered: dict[str, str], event: str, ref: str, trusted: str
) -> None:
    proc, outputs = _resolve_outputs(tmp_path, rendered, event, ref)
    assert proc.returncode == 0, proc.stderr
    assert outputs == {"ref": ref, "trusted": trusted}


@pytest.mark.parametrize("event", ["workflow_dispatch", "repository_dispatch"])
@pytest.mark.parametrize(
    "ref",
    ["v1.5.1", "main", SHA, SHA[:12], "release/1.5", "viable/strict", "v1.6.0-rc1", "a_b.c"],
)
def test_a_plain_ref_is_passed_on(
    tmp_path: Path, rendered: dict[str, str], event: str, ref: str
) -> None:
    proc, out = _resolve(tmp_path, rendered, event, ref)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out == ref
    assert _calls(tmp_path / "log") == []  # a dispatch's ref needs no look-up


@pytest.mark.parametrize(
    "ref",
    ["", "-main", ".hidden", "a..b", "a//b", "a/", "a.", "a.lock", "a/.b", "a b", "a~1",
     "a^{}", "a:b", "a@{1}", "x" * 201, "main\n", "ref/../../x", "\u00e9t\u00e9"],
)  # fmt: skip
@pytest.mark.parametrize(
    ("event", "source"),
    [
        ("workflow_dispatch", "the input executorch_ref"),
        ("repository_dispatch", "client_payload.ref"),
    ],
)
def test_anything_else_is_refused_naming_where_it_came_from(
    tmp_path: Path, rendered: dict[str, str], ref: str, event: str, source: str
) -> None:
    proc, out = _resolve(tmp_path, rendered, event, ref)
    assert proc.returncode == 1
    assert f"::error::{source} is not a plain git ref" in proc.stdout
    assert out is None


def test_an_unknown_event_is_refused(tmp_path: Path, rendered: dict[str, str]) -> None:
    proc, out = _resolve(tmp_path, rendered, "push", "main")
    assert proc.returncode == 1 and out is None
    assert "sync runs on workflow_dispatch, repository_dispatch or schedule" in proc.stdout


TAG_COMMIT = "c" * 40
#: What `git ls-remote` of ExecuTorch answers (tab-separated, as git prints it).
LS_REMOTE_TAGS = "".join(
    f"{'a' * 40}\trefs/tags/{tag}\n"
    for tag in ("v0.9.0", "v1.10.0-rc3", "v1.9.2", "v1.10.0", "v1.2.0", "v2.0.0rc1", "vnext")
)


def _schedule_replies(
    pin: str = "", branches: str = "0", pin_error: str = "", properties: str | None = None
) -> dict[str, str]:
    """Stub replies for the schedule: ExecuTorch's tags, v1.10.0 annotated (peeled to
    TAG_COMMIT), main's executorch_pin.txt (`pin`, or `pin_error` on stderr with exit 1),
    main's library.properties (`properties`; None: GitHub's 404, as `pin_error` when set),
    and the count of matching sync branches."""
    git = (
        'if [[ "$1 $2" == "ls-remote --tags" ]]; then\n'
        f"  printf '%s' '{LS_REMOTE_TAGS}'\n"
        'elif [[ "$1" == ls-remote ]]; then\n'
        f"  printf '%s\\t%s\\n' '{'b' * 40}' \"$3\" '{TAG_COMMIT}' \"$4\"\n"
        "fi\n"
    )
    gh = (
        'if [[ "$*" == *contents/executorch_pin.txt* ]]; then\n'
        + (f"  echo '{pin_error}' >&2; exit 1\n" if pin_error else f"  printf '%s\\n' '{pin}'\n")
        + 'elif [[ "$*" == *contents/library.properties* ]]; then\n'
        + (
            f"  printf '%s' {shlex.quote(properties)}\n"
            if properties is not None
            else f"  echo '{pin_error or 'gh: Not Found (HTTP 404)'}' >&2; exit 1\n"
        )
        + 'elif [[ "$*" == *matching-refs* ]]; then\n'
        f"  echo '{branches}'\n"
        "fi\n"
    )
    return {"git": git, "gh": gh}


def test_the_schedule_syncs_the_newest_release_tag(
    tmp_path: Path, rendered: dict[str, str]
) -> None:
    proc, out = _resolve(tmp_path, rendered, "schedule", "", _schedule_replies(pin="d" * 40))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out == "v1.10.0"  # not v2.0.0rc1, v1.10.0-rc3 or vnext; 1.10 above 1.9
    calls = _calls(tmp_path / "log")
    upstream = "https://github.com/pytorch/executorch"
    assert calls[0] == ["git", "ls-remote", "--tags", "--refs", upstream, "v*"]
    assert calls[1] == ["git", "ls-remote", upstream, "refs/tags/v1.10.0", "refs/tags/v1.10.0^{}"]
    assert calls[2][:4] == ["gh", "api", "-H", "Accept: application/vnd.github.raw+json"]
    assert calls[2][4] == "repos/owner/executorch-arduino/contents/executorch_pin.txt"
    assert calls[3] == [*calls[2][:4], "repos/owner/executorch-arduino/contents/library.properties"]
    assert calls[4] == ["gh", "api", "--jq", "length", "repos/owner/executorch-arduino/git/"
                        f"matching-refs/heads/sync/executorch-{TAG_COMMIT[:12]}"]  # fmt: skip


#: main's library.properties version= against the newest tag v1.10.0 (SemVer 2.0 precedence,
#: semver.org item 11): at or above it, the schedule leaves it alone.
MAIN_VERSIONS = [
    ("1.10.0", True),
    ("1.10.0+build.5", True),  # build metadata has no precedence
    ("1.10.1-alpha.0", True),  # a sync of main after the release
    ("1.11.0-alpha.0", True),
    ("2.0.0-rc.1", True),
    ("1.100.0", True),  # numbers, not text: 100 > 10
    ("10.0.0", True),
    ("99999999999999999999.0.0", True),  # above bash's 64-bit integers
    ("1.10.0-rc.1", False),  # a pre-release is below its release
    ("1.10.0-rc1", False),
    ("1.9.99", False),
    ("1.9.0", False),  # text order would put 1.9 above 1.10
    ("0.99.0", False),
    ("1.1.0", False),
    ("01.10.0", False),  # not SemVer: sync, which says what is wrong
    ("v1.10.0", False),
    ("1.10", False),
    ("", False),
]


@pytest.mark.parametrize(("version", "at_or_above"), MAIN_VERSIONS)
def test_the_schedule_leaves_main_at_a_version_as_high_alone(
    tmp_path: Path, rendered: dict[str, str], version: str, at_or_above: bool
) -> None:
    # the last version= line counts, spaces and a CRLF around it as the Arduino tools read it
    properties = f"name=ExecuTorch\r\nversion=0.1.0\r\nversion = {version} \r\nurl=x\r\n"
    replies = _schedule_replies(pin="d" * 40, properties=properties)
    proc, out = _resolve(tmp_path, rendered, "schedule", "", replies)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = tmp_path / "summary.md"
    if at_or_above:
        assert out == ""  # the sync job's `if` skips it
        said = f"main's library version {version} is not below ExecuTorch v1.10.0"
        assert said in summary.read_text()
        assert proc.stdout == ""  # quiet: no warning, no error
    else:
        assert out == "v1.10.0"
        assert not summary.exists() or "not below" not in summary.read_text()


def test_the_schedule_compares_with_the_newest_tags_numbers(
    tmp_path: Path, rendered: dict[str, str]
) -> None:
    # a tag with a zero-padded number still compares by value (v1.010.0 is 1.10.0)
    tags = LS_REMOTE_TAGS.replace("v1.10.0\n", "v1.010.0\n")
    replies = _schedule_replies(pin="d" * 40, properties="version=1.10.0\n")
    replies["git"] = replies["git"].replace(LS_REMOTE_TAGS, tags)
    proc, out = _resolve(tmp_path, rendered, "schedule", "", replies)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out == ""
    assert "is not below ExecuTorch v1.010.0" in (tmp_path / "summary.md").read_text()


@pytest.mark.parametrize(
    ("replies", "said"),
    [
        (_schedule_replies(pin=TAG_COMMIT), "is on main already"),
        (_schedule_replies(pin="d" * 40, branches="1"), "has its sync branch"),
    ],
)
def test_the_schedule_leaves_a_synced_release_alone(
    tmp_path: Path, rendered: dict[str, str], replies: dict[str, str], said: str
) -> None:
    proc, out = _resolve(tmp_path, rendered, "schedule", "", replies)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out == ""  # the sync job's `if` skips it
    assert said in (tmp_path / "summary.md").read_text()


def test_the_schedule_syncs_into_a_repository_without_a_library(
    tmp_path: Path, rendered: dict[str, str]
) -> None:
    replies = _schedule_replies(pin_error="gh: Not Found (HTTP 404)")
    proc, out = _resolve(tmp_path, rendered, "schedule", "", replies)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out == "v1.10.0"


def test_the_schedule_fails_when_github_does_not_answer(
    tmp_path: Path, rendered: dict[str, str]
) -> None:
    replies = _schedule_replies(pin_error="gh: Server Error (HTTP 502)")
    proc, out = _resolve(tmp_path, rendered, "schedule", "", replies)
    assert proc.returncode == 1 and out is None
    assert "HTTP 502" in proc.stderr


def test_the_schedule_fails_when_github_does_not_answer_for_the_version(
    tmp_path: Path, rendered: dict[str, str]
) -> None:
    replies = _schedule_replies(pin="d" * 40)
    replies["gh"] = replies["gh"].replace("HTTP 404", "HTTP 503")
    proc, out = _resolve(tmp_path, rendered, "schedule", "", replies)
    assert proc.returncode == 1 and out is None
    assert "HTTP 503" in proc.stderr


def test_the_schedule_fails_without_a_release_tag(tmp_path: Path, rendered: dict[str, str]) -> None:
    proc, out = _resolve(tmp_path, rendered, "schedule", "", {})
    assert proc.returncode == 1 and out is None
    assert "::error::the newest ExecuTorch release tag is not a plain git ref" in proc.stdout


# --- release's GitHub Release --------------------------------------------------------------


@pytest.mark.parametrize(
    ("properties", "exists", "expected"),
    [
        ("version=1.5.1\n", False, ["create", "v1.5.1", "--verify-tag"]),
        ("version=1.5.1\n", True, ["edit", "v1.5.1"]),
        ("version=1.0.0\r\nversion = 1.6.0-rc.1  \r\n", False,
         ["create", "v1.6.0-rc.1", "--verify-tag"]),
        ("version=1.2.3+build-1\n", False, ["create", "v1.2.3+build-1", "--verify-tag"]),
        ("version=1.2.3-rc.1+build.5\n", False, ["create", "v1.2.3-rc.1+build.5", "--verify-tag"]),
    ],
)  # fmt: skip
def test_the_github_release_is_created_or_edited_with_the_notes(
    tmp_path: Path, rendered: dict[str, str], properties: str, exists: bool, expected: list[str]
) -> None:
    step = step_named(parsed(rendered["release.yml"]), "release", "Create or update")
    work = tmp_path / "work"
    work.mkdir()
    (work / "library.properties").write_text(f"name=ExecuTorch\n{properties}")
    replies = {"gh": "" if exists else 'if [[ "$2" == view ]]; then exit 1; fi\n'}
    env = {"GH_TOKEN": "stand-in-token", "GH_REPO": "owner/executorch-arduino"}
    proc = _run(tmp_path, step["run"], env, replies, cwd=work)
    assert proc.returncode == 0, proc.stderr
    view, publish = _calls(tmp_path / "log")
    tag = expected[1]
    assert view == ["gh", "release", "view", tag]
    flags = ["--title", tag, "--notes-file", f"{tmp_path}/release-notes.md"]
    if "-rc" in tag:  # a pre-release; 1.2.3+build-1's "-" is in its build metadata
        flags.append("--prerelease")
    assert publish == ["gh", "release", *expected, *flags]
    word = "Updated" if exists else "Created"
    assert f"{word} the GitHub Release {tag}." in (tmp_path / "summary.md").read_text()


def test_the_github_release_needs_a_version(tmp_path: Path, rendered: dict[str, str]) -> None:
    step = step_named(parsed(rendered["release.yml"]), "release", "Create or update")
    (tmp_path / "library.properties").write_text("name=ExecuTorch\n")
    proc = _run(tmp_path, step["run"], {})
    assert proc.returncode == 1
    assert "::error::library.properties has no version= line" in proc.stdout
    assert _calls(tmp_path / "log") == []


@pytest.mark.parametrize("retag", ["true", "false"])
def test_release_tags_the_checked_out_commit_and_writes_the_notes(
    tmp_path: Path, rendered: dict[str, str], retag: str
) -> None:
    step = step_named(parsed(rendered["release.yml"]), "release", "Tag the commit")
    proc = _run(tmp_path, step["run"], {"RETAG": retag, "COMMIT": SHA})
    assert proc.returncode == 0, proc.stderr
    [argv] = _calls(tmp_path / "log")
    assert argv == ["python", "-m", "generator", "release", "--repo", "owner/executorch-arduino",
                    "--ref", SHA, "--notes", f"{tmp_path}/release-notes.md",
                    *(["--retag"] if retag == "true" else [])]  # fmt: skip


# --- the Python and the comment of CI's size report ------------------------------------------


def _heredoc(script: str) -> str:
    match = re.search(r"<<'PY'\n(.*?)\nPY\n", script, re.S)
    assert match, script
    return match.group(1) + "\n"


def test_the_example_list_is_json_of_sketch_folders(
    tmp_path: Path, rendered: dict[str, str]
) -> None:
    listing = parsed(rendered["ci.yml"])["jobs"]["examples"]["steps"]
    step = next(s for s in listing if "<<'PY'" in s.get("run", ""))
    for folder in ("AddModel", "Hello World", "we$(ird)\nname"):
        (tmp_path / "examples" / folder).mkdir(parents=True)
        (tmp_path / "examples" / folder / f"{folder}.ino").write_text("")
    (tmp_path / "examples" / "NoSketch").mkdir()
    proc = _list_examples(tmp_path, _heredoc(step["run"]))
    assert proc.returncode == 0, proc.stderr
    out = (tmp_path / "output.txt").read_text()
    assert out.count("\n") == 1
    key, _, value = out.strip().partition("=")
    assert key == "examples"
    assert json.loads(value) == sorted(["AddModel", "Hello World", "we$(ird)\nname"])


def _list_examples(root: Path, code: str) -> subprocess.CompletedProcess[str]:
    """Run the example list's Python in `root` with GITHUB_OUTPUT = root/output.txt."""
    (root / "output.txt").write_text("")
    return subprocess.run(
        [sys.executable, "-"],
        input=code,
        cwd=root,
        env={**os.environ, "GITHUB_OUTPUT": str(root / "output.txt")},
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("layout", ["no folder", "empty folder", "folders without sketch"])
def test_a_library_without_examples_fails_ci(
    tmp_path: Path, rendered: dict[str, str], layout: str
) -> None:
    # a library none of whose examples compiles or runs proves nothing: the list job fails,
    # so "CI passed" sees a failure (and the example matrix is skipped by it)
    jobs = parsed(rendered["ci.yml"])["jobs"]
    step = next(s for s in jobs["examples"]["steps"] if "<<'PY'" in s.get("run", ""))
    if layout != "no folder":
        (tmp_path / "examples").mkdir()
    if layout == "folders without sketch":
        (tmp_path / "examples" / "Blink").mkdir()
        (tmp_path / "examples" / "Blink" / "Other.ino").write_text("")
    proc = _list_examples(tmp_path, _heredoc(step["run"]))
    assert proc.returncode == 1
    assert proc.stdout.startswith("::error::the library has no example"), proc.stdout
    assert (tmp_path / "output.txt").read_text() == ""
    # no job skips itself on an empty list any more: it cannot pass the list job
    assert "if" not in jobs["example"]
    assert "needs.examples.result == 'success'" in jobs["sizes"]["if"]


def _size_table(tmp_path: Path, rendered: dict[str, str], jobs: dict[str, Any]) -> tuple[str, str]:
    """Run the sizes job's Python on artifacts laid out as the example jobs upload them:
    `jobs` maps "<board>/<job index>" to {"head": report or None, "base": report or None}.
    Returns the job summary and the output `table`."""
    code = _heredoc(str(step_named(parsed(rendered["ci.yml"]), "sizes", "Summarize")["run"]))
    root = tmp_path / "sizes"
    for where, reports in jobs.items():
        (root / where).mkdir(parents=True)
        for side, report in reports.items():
            if report is not None:
                (root / where / f"{side}.json").write_text(json.dumps(report))
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    summary.write_text("")
    output.write_text("")
    subprocess.run(
        [sys.executable, "-", str(root)],
        input=code,
        env={
            **os.environ,
            "PYTHONPATH": str(PROJECT_ROOT),
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_OUTPUT": str(output),
        },
        capture_output=True,
        text=True,
        check=True,
    )
    match = re.fullmatch(r"table<<(END_[0-9a-f]{32})\n(.*)\1\n", output.read_text(), re.S)
    assert match, output.read_text()
    return summary.read_text(), match.group(2)


def _report(example: str, flash: int, ram: int, board: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"example": example, "sizes": {"flash": flash, "ram": ram}}
    if board is None:
        return {"examples": [entry]}
    return {"boards": [{"key": board}], "examples": [{**entry, "board": board}]}


def test_the_size_table_shows_deltas_per_board(tmp_path: Path, rendered: dict[str, str]) -> None:
    summary, table = _size_table(
        tmp_path,
        rendered,
        {
            "unoq/1": {"head": _report("Keyword", 2000, 500), "base": None},
            "unoq/0": {
                "head": _report("AddModel", 1100, 300),
                "base": _report("AddModel", 1000, 300),
            },
            "unoq/2": {"head": None, "base": _report("Gone", 1, 1)},
            # as `check --board giga --json` writes it: the entry's "board", the "boards" list
            "giga/3": {
                "head": _report("AddModel", 1200, 310, board="giga"),
                "base": _report("AddModel", 1250, 310, board="giga"),
            },
        },
    )
    assert summary == table
    assert table == (
        "## Size changes against the base branch\n"
        "\n"
        "### Arduino Giga R1 (`giga`)\n"
        "\n"
        "| Example | Size | This PR | Base | Delta |\n"
        "|---|---|---:|---:|---:|\n"
        "| AddModel | flash (static) | 1,200 B | 1,250 B | -50 |\n"
        "| AddModel | RAM (static) | 310 B | 310 B | \u00b10 |\n"
        "\n"
        "### Arduino UNO Q (`unoq`)\n"
        "\n"
        "| Example | Size | This PR | Base | Delta |\n"
        "|---|---|---:|---:|---:|\n"
        "| AddModel | flash (static) | 1,100 B | 1,000 B | +100 |\n"
        "| AddModel | RAM (static) | 300 B | 300 B | \u00b10 |\n"
        "| Keyword | flash (static) | 2,000 B | n/a | n/a |\n"
        "| Keyword | RAM (static) | 500 B | n/a | n/a |\n"
        "\n"
        "1 example(s) could not be checked; see their jobs.\n"
    )


def test_the_size_table_says_when_no_example_reported(
    tmp_path: Path, rendered: dict[str, str]
) -> None:
    _, table = _size_table(tmp_path, rendered, {})
    assert "No example reported sizes; see the example jobs." in table


def test_the_size_tables_delimiter_cannot_be_forged(
    tmp_path: Path, rendered: dict[str, str]
) -> None:
    # An example named like a delimiter line and an output: still the one `table` output.
    name = "x\nEOF\ntable<<EOF\nEND_0\nother=1"
    _, table = _size_table(tmp_path, rendered, {"unoq/0": {"head": _report(name, 1, 1)}})
    assert name.split("\n")[-1] in table


def _comment(
    tmp_path: Path, rendered: dict[str, str], table: str, replies: dict[str, str]
) -> tuple[subprocess.CompletedProcess[str], list[list[str]]]:
    step = step_named(parsed(rendered["ci.yml"]), "size-comment", "Create or edit")
    env = {"GH_TOKEN": "stand-in-token", "PR": "7", "TABLE": table}
    proc = _run(tmp_path, step["run"], env, replies)
    return proc, _calls(tmp_path / "log")


MARKER = "<!-- executorch-arduino: size changes -->"
TABLE = "## Size changes\n\n| a | b |\n$(touch PWNED) `touch PWNED`\n"


def test_the_size_comment_is_edited_when_it_exists(
    tmp_path: Path, rendered: dict[str, str]
) -> None:
    replies = {
        "gh": 'if [[ "$2" == --paginate ]]; then printf "42\\n99\\n"; fi\necho https://x/c\n'
    }
    proc, calls = _comment(tmp_path, rendered, TABLE, replies)
    assert proc.returncode == 0, proc.stderr
    listing, edit = calls
    assert listing[:4] == [
        "gh",
        "api",
        "--paginate",
        "repos/owner/executorch-arduino/issues/7/comments",
    ]
    jq = listing[5]
    assert 'select(.user.login == "github-actions[bot]")' in jq and "startswith(env.MARKER)" in jq
    assert edit == ["gh", "api", "--method", "PATCH",
                    "repos/owner/executorch-arduino/issues/comments/42",
                    "-F", f"body=@{tmp_path}/size-comment.md", "--jq", ".html_url"]  # fmt: skip
    assert (tmp_path / "size-comment.md").read_text() == f"{MARKER}\n{TABLE}"
    assert not list(tmp_path.rglob("PWNED"))
    assert "Size changes: https://x/c" in (tmp_path / "summary.md").read_text()


def test_the_size_comment_is_created_once(tmp_path: Path, rendered: dict[str, str]) -> None:
    replies = {"gh": 'if [[ "$2" == --method ]]; then echo https://x/c; fi\n'}
    proc, calls = _comment(tmp_path, rendered, TABLE, replies)
    assert proc.returncode == 0, proc.stderr
    assert calls[1] == ["gh", "api", "--method", "POST",
                        "repos/owner/executorch-arduino/issues/7/comments",
                        "-F", f"body=@{tmp_path}/size-comment.md", "--jq", ".html_url"]  # fmt: skip
    assert len(calls) == 2


@pytest.mark.parametrize("failing", ["--paginate", "--method"])
def test_a_size_comment_github_refuses_is_a_warning(
    tmp_path: Path, rendered: dict[str, str], failing: str
) -> None:
    replies = {"gh": f'if [[ "$2" == {failing} ]]; then exit 1; fi\necho https://x/c\n'}
    proc, calls = _comment(tmp_path, rendered, TABLE, replies)
    assert proc.returncode == 0
    assert "::warning::could not comment on the pull request" in proc.stdout
    assert len(calls) == (1 if failing == "--paginate" else 2)  # never a second comment


# --- render, drift, write ------------------------------------------------------------------


def test_render_pins_the_generator_and_leaves_no_placeholder(rendered: dict[str, str]) -> None:
    assert sorted(rendered) == NAMES
    for name, text in rendered.items():
        assert "@@" not in text, name
        env = parsed(text)["env"]
        assert env["GENERATOR_REPO"] == REPO and env["GENERATOR_REF"] == SHA, name
        assert text.startswith("# Rendered by `python -m generator workflows`"), name
    assert wf.render_workflows(REPO, SHA.upper()) == rendered


@pytest.mark.parametrize(
    "url",
    [
        "https://user:secret@github.com/o/n.git",
        "https://ghp_token@github.com/o/n.git",
        "http://github.com/o/n.git",
        "git@github.com:o/n.git",
        "ssh://git@github.com/o/n.git",
        "file:///srv/gen.git",
        "https://github.com/o/n.git?x=1",
        'https://github.com/o/n".git',
        "https://github.com/o/n .git",
        "https://github.com/o/n.git\n",
        "https://github.com/${{ github.token }}",
        "https://github.com",
        "https://[bad/o/n.git",
    ],
)
def test_render_refuses_urls_it_cannot_pin(url: str) -> None:
    with pytest.raises(FatalError):
        wf.render_workflows(url, SHA)


def test_a_credential_url_is_refused_with_the_credential_helper_hint() -> None:
    with pytest.raises(FatalError, match="credential helper"):
        wf.render_workflows("https://user:secret@github.com/o/n.git", SHA)


@pytest.mark.parametrize("ref", ["main", "v1.0.0", SHA[:12], SHA + "0", "g" * 40, "", "0" * 40])
def test_render_refuses_refs_that_are_not_full_shas(ref: str) -> None:
    with pytest.raises(FatalError, match="full 40-hex"):
        wf.render_workflows(REPO, ref)


def test_an_unknown_placeholder_is_a_template_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "x.yml").write_text("name: @@GENERATOR_REF@@ @@NOPE@@\n")
    monkeypatch.setattr(wf, "TEMPLATES_DIR", tmp_path)
    with pytest.raises(ValueError, match="NOPE"):
        wf.render_workflows(REPO, SHA)


def test_drift_then_write_then_no_drift(tmp_path: Path, rendered: dict[str, str]) -> None:
    library = tmp_path / "library"
    library.mkdir()
    assert wf.workflow_drift(library, rendered) == NAMES
    own = library / wf.WORKFLOWS_DIR / "own.yml"
    own.parent.mkdir(parents=True)
    own.write_text("the repo's own workflow\n")
    paths = wf.write_workflows(library, rendered)
    assert paths == [library / wf.WORKFLOWS_DIR / name for name in NAMES]
    assert wf.workflow_drift(library, rendered) == []
    assert own.read_text() == "the repo's own workflow\n"
    assert sorted(p.name for p in own.parent.iterdir()) == sorted([*NAMES, "own.yml"])
    sync = library / wf.WORKFLOWS_DIR / "sync.yml"
    sync.write_bytes(rendered["sync.yml"].replace("\n", "\r\n").encode())
    assert wf.workflow_drift(library, rendered) == ["sync.yml"]
    (library / wf.WORKFLOWS_DIR / "ci.yml").unlink()
    assert wf.workflow_drift(library, rendered) == ["ci.yml", "sync.yml"]


def test_write_is_atomic_and_readable(tmp_path: Path, rendered: dict[str, str]) -> None:
    library = tmp_path / "library"
    library.mkdir()
    old = os.umask(0o022)
    try:
        wf.write_workflows(library, rendered)
    finally:
        os.umask(old)
    for path in (library / wf.WORKFLOWS_DIR).iterdir():
        assert not path.name.startswith("."), "a temporary file was left behind"
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
        assert path.read_text() == rendered[path.name]


def test_write_refuses_a_missing_library_or_a_folder_in_the_way(
    tmp_path: Path, rendered: dict[str, str]
) -> None:
    with pytest.raises(FatalError, match="not a folder"):
        wf.write_workflows(tmp_path / "nowhere", rendered)
    library = tmp_path / "library"
    (library / wf.WORKFLOWS_DIR / "sync.yml").mkdir(parents=True)
    with pytest.raises(FatalError, match="is a folder"):
        wf.write_workflows(library, rendered)


# --- the command -------------------------------------------------------------------------


def test_cli_writes_then_check_passes_then_detects_drift(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    library = tmp_path / "library"
    library.mkdir()
    pin = ["--generator-repo", REPO, "--generator-ref", SHA]
    assert main(["workflows", str(library), "--check", *pin]) == 1
    out = capsys.readouterr().out
    assert "sync.yml (missing)" in out
    assert f"workflows {library} --generator-repo {REPO} --generator-ref {SHA}" in out
    assert not (library / ".github").exists()
    assert main(["workflows", str(library), *pin]) == 0
    assert "wrote" in capsys.readouterr().out
    assert main(["workflows", str(library), "--check", *pin]) == 0
    (library / wf.WORKFLOWS_DIR / "ci.yml").write_text("edited\n")
    assert main(["workflows", str(library), "--check", *pin]) == 1
    out = capsys.readouterr().out
    assert "ci.yml (differs)" in out and "release.yml" not in out
    other = "f" * 40
    assert main(["workflows", str(library), "--check", "--generator-repo", REPO,
                 "--generator-ref", other]) == 1  # fmt: skip


def test_cli_refuses_a_credential_url(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "workflows",
                str(tmp_path),
                "--generator-repo",
                "https://bot:ghp_secret@github.com/o/n.git",
                "--generator-ref",
                SHA,
            ]
        )
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "credential helper" in err and "ghp_secret" not in err
    assert not (tmp_path / ".github").exists()


def test_cli_refuses_a_library_folder_that_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["workflows", str(tmp_path / "nowhere"), "--generator-repo", REPO,
              "--generator-ref", SHA])  # fmt: skip
    assert exit_info.value.code == 1


def _git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Dev",
        "GIT_AUTHOR_EMAIL": "dev@example.invalid",
        "GIT_COMMITTER_NAME": "Dev",
        "GIT_COMMITTER_EMAIL": "dev@example.invalid",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A generator checkout: one commit, origin an https URL, HEAD on origin/main."""
    repo = tmp_path / "generator"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("generator\n")
    _git(repo, "add", "README.md")
    _git(repo, "commit", "-q", "-m", "first")
    _git(repo, "remote", "add", "origin", REPO)
    _git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    return repo


def test_the_default_pin_is_origin_and_head(
    tmp_path: Path, checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head = _git(checkout, "rev-parse", "HEAD")
    assert default_generator_repo(checkout) == REPO
    assert default_generator_ref(checkout) == head
    assert "warning" not in capsys.readouterr().err
    library = tmp_path / "library"
    library.mkdir()
    assert install_workflows(library, checkout=checkout) == 0
    assert f'GENERATOR_REF: "{head}"' in (library / wf.WORKFLOWS_DIR / "sync.yml").read_text()


def test_the_default_ref_refuses_a_dirty_checkout_unless_allowed(
    checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (checkout / "new.py").write_text("")
    with pytest.raises(FatalError, match="uncommitted changes"):
        default_generator_ref(checkout)
    assert default_generator_ref(checkout, allow_dirty=True) == _git(checkout, "rev-parse", "HEAD")
    _git(checkout, "add", "new.py")
    _git(checkout, "commit", "-q", "-m", "second")
    default_generator_ref(checkout)
    assert "on no remote-tracking branch" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("origin", "message"),
    [
        ("git@github.com:o/n.git", "not an https URL"),
        ("https://me:pw@github.com/o/n.git", "credential helper"),
        (None, "no origin remote"),
    ],
)
def test_the_default_repo_refuses_an_origin_it_cannot_pin(
    checkout: Path, origin: str | None, message: str
) -> None:
    _git(checkout, "remote", "remove", "origin")
    if origin is not None:
        _git(checkout, "remote", "add", "origin", origin)
    with pytest.raises(FatalError, match=message):
        default_generator_repo(checkout)


def test_the_default_pin_needs_a_git_checkout(tmp_path: Path) -> None:
    with pytest.raises(FatalError, match="not a git checkout"):
        default_generator_repo(tmp_path)
    with pytest.raises(FatalError, match="not a git checkout"):
        default_generator_ref(tmp_path)


def test_installed_drift_compares_with_the_generator_the_repo_runs(tmp_path: Path) -> None:
    repo = tmp_path / "library"
    repo.mkdir()
    assert wf.installed_drift(repo) == NAMES  # nothing installed
    wf.write_workflows(repo, wf.render_workflows(REPO, SHA))
    assert wf.installed_drift(repo) == []
    # Pinned to another generator commit, same templates: no drift.
    other = "f" * 40
    wf.write_workflows(repo, wf.render_workflows(REPO, other))
    assert wf.installed_drift(repo) == []
    # A maintainer's edit, or an older template, is drift.
    ci = repo / wf.WORKFLOWS_DIR / "ci.yml"
    ci.write_text(ci.read_text() + "# local change\n")
    assert wf.installed_drift(repo) == ["ci.yml"]
    # A sync.yml that names no generator cannot be compared: everything is drift.
    (repo / wf.WORKFLOWS_DIR / "sync.yml").write_text("name: sync\n")
    assert wf.installed_drift(repo) == NAMES


# --- sync's two jobs: the token only where nothing of the ref runs ------------------------


#: What names or carries a credential in a workflow's text.
TOKEN_TEXT = ("GITHUB_TOKEN", "SYNC_TOKEN", "SYNC_APP_PRIVATE_KEY", "github.token", "secrets.")


def test_the_prepare_job_has_no_token_and_the_publish_job_builds_nothing(
    rendered: dict[str, str],
) -> None:
    sync = parsed(rendered["sync.yml"])
    prepare, publish = sync["jobs"]["prepare"], sync["jobs"]["publish"]
    # The job that runs the ref's code: no token in any step's env, with: or script, nor in
    # the job's own env or outputs (GITHUB_TOKEN, SYNC_TOKEN, SYNC_APP_PRIVATE_KEY are what
    # `sync --prepare` refuses; github.token and secrets.* what could carry one).
    assert prepare["permissions"] == {"contents": "read"}
    text = json.dumps(prepare)
    for needle in TOKEN_TEXT:
        assert needle not in text, needle
    for step in prepare["steps"]:
        assert "token" not in {k.lower() for k in step.get("with", {})}, step.get("name")
    assert "env" not in prepare and "secrets" not in prepare
    # The workflow-level env holds no credential either (every job sees it).
    for needle in TOKEN_TEXT:
        assert needle not in json.dumps(sync.get("env", {})), needle
    run = step_named(sync, "prepare", "Build and check")
    assert run["id"] == "prepare"
    assert prepare["outputs"] == {"digest": "${{ steps.prepare.outputs.digest }}"}
    assert 'sync --prepare "$RUNNER_TEMP/stage"' in run["run"]
    upload = step_named(sync, "prepare", "Keep the staged library")
    assert upload["with"]["path"] == "${{ runner.temp }}/stage"
    assert upload["with"]["retention-days"] == 1
    assert upload["with"]["include-hidden-files"] is True
    assert upload["with"]["if-no-files-found"] == "error"
    # The job with the token: the staged tree and the digest in, no build, no check, no
    # toolchain, no torch, no cache (a cache the prepare job wrote is the ref's to poison).
    ptext = json.dumps(publish)
    for absent in ("--prepare", "apt-get", "arduino-cli", "download.pytorch.org", "qemu",
                   "actions/cache@", "setup-arduino-cli", "Install the toolchains"):  # fmt: skip
        assert absent not in ptext, absent
    assert [s.get("uses", "").partition("@")[0] for s in publish["steps"]] == [
        "actions/setup-python",
        "",
        "actions/download-artifact",
        "",
    ]
    download = step_named(sync, "publish", "Fetch the staged library")
    assert download["with"] == {"name": upload["with"]["name"], "path": "${{ runner.temp }}/stage"}
    step = step_named(sync, "publish", "Publish")
    assert step["env"]["DIGEST"] == "${{ needs.prepare.outputs.digest }}"
    assert 'sync --publish "$RUNNER_TEMP/stage" --digest "$DIGEST"' in step["run"]
    # Every secret of the workflow is the publish step's.
    owners = {
        (job_id, s.get("name"))
        for job_id, _, s in steps(sync)
        if any(n in json.dumps(s) for n in ("secrets.", "github.token"))
    }
    assert owners == {("ref", "Resolve and check the ref"), ("publish", "Publish")}
