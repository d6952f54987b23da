"""The library repo's GitHub workflows (`workflows/*.yml`, `generator/workflows.py`) and the
`workflows` command: lint (actionlint with ShellCheck, zizmor), pins, permissions, inputs that
stay data in every `run:` script, rendering, drift, atomic writes, the CLI."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import PROJECT_ROOT
from generator import workflows as wf
from generator.commands.workflows import (
    default_generator_ref,
    default_generator_repo,
    workflows,
)
from generator.errors import FatalError
from generator.main import main

REPO = "https://github.com/example/executorch-arduino-generator.git"
SHA = "0123456789abcdef0123456789abcdef01234567"
NAMES = ["ci.yml", "release.yml", "sync.yml"]

#: Values an attacker could put in a workflow input or an example folder name.
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
)
#: What the `run:` scripts may start, replaced by stubs that record their argv.
STUBBED = ("python", "python3", "pip", "git", "arduino-cli", "sudo", "apt-get", "gh", "curl")
#: Real programs the scripts may use besides bash builtins (touch: so that injected code
#: would really leave a PWNED file).
REAL = ("cat", "tee", "grep", "rm", "touch")
_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}", re.S)
#: The shell GitHub runs a `shell: bash` step with: bash --noprofile --norc -eo pipefail.
BASH = [shutil.which("bash") or "/bin/bash", "--noprofile", "--norc", "-eo", "pipefail"]


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


def test_zizmor_auditor_finds_only_repository_secrets(
    tmp_path: Path, rendered: dict[str, str]
) -> None:
    # The auditor persona also wants secrets behind a deployment environment; the sync job
    # reads repository secrets (the App key, SYNC_TOKEN) on purpose. Nothing else is accepted.
    findings = _zizmor(installed(tmp_path, rendered), "auditor")
    assert {f["ident"] for f in findings} <= {"secrets-outside-env"}


# --- pins, scripts, permissions, inputs --------------------------------------------------


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
    assert runs >= 10


def test_permissions_are_exactly_as_stated(rendered: dict[str, str]) -> None:
    expected = {
        "sync.yml": {"sync": {"contents": "write", "pull-requests": "write"}},
        "ci.yml": {job: {"contents": "read"} for job in ("examples", "example", "lint", "sizes")},
        "release.yml": {"release": {"contents": "write"}},
    }
    for name, jobs in expected.items():
        workflow = parsed(rendered[name])
        assert workflow["permissions"] == {}, name
        assert {job: spec["permissions"] for job, spec in workflow["jobs"].items()} == jobs


def test_sync_inputs_and_concurrency(rendered: dict[str, str]) -> None:
    sync = parsed(rendered["sync.yml"])
    inputs = sync["on"]["workflow_dispatch"]["inputs"]
    assert set(inputs) == {"executorch_ref", "library_version", "recreate", "keep_older"}
    assert inputs["recreate"]["type"] == inputs["keep_older"]["type"] == "boolean"
    assert inputs["executorch_ref"]["default"] == "main"
    assert inputs["library_version"]["required"] is False
    assert sync["concurrency"] == {
        "group": "sync-${{ inputs.executorch_ref }}",
        "cancel-in-progress": False,
    }
    cache = next(s for _, _, s in steps(sync) if s.get("uses", "").startswith("actions/cache@"))
    assert "inputs.executorch_ref" in cache["with"]["key"]
    assert "env.GENERATOR_REF" in cache["with"]["key"]


def test_sync_token_app_then_secret_then_workflow_token(rendered: dict[str, str]) -> None:
    sync = parsed(rendered["sync.yml"])
    app = next(s for _, _, s in steps(sync) if s.get("id") == "app-token")
    assert app["if"] == "vars.SYNC_APP_ID != ''"
    assert app["uses"].startswith("actions/create-github-app-token@")
    assert app["with"]["private-key"] == "${{ secrets.SYNC_APP_PRIVATE_KEY }}"
    run = next(s for _, _, s in steps(sync) if s.get("name") == "Sync")
    assert run["env"]["GITHUB_TOKEN"] == (
        "${{ steps.app-token.outputs.token || secrets.SYNC_TOKEN || github.token }}"
    )
    assert "--workflow-token" in run["run"]
    assert "GITHUB_STEP_SUMMARY" in run["run"]


def test_release_is_manual_or_opt_in_after_a_merged_sync(rendered: dict[str, str]) -> None:
    release = parsed(rendered["release.yml"])
    assert set(release["on"]) == {"workflow_dispatch", "pull_request"}
    assert release["on"]["pull_request"] == {"types": ["closed"]}
    condition = release["jobs"]["release"]["if"]
    for part in (
        "github.event_name == 'workflow_dispatch'",
        "github.event.pull_request.merged == true",
        "contains(github.event.pull_request.labels.*.name, 'sync')",
        "vars.RELEASE_ON_SYNC_MERGE == 'true'",
    ):
        assert part in condition
    assert 'args=(release --repo "$GITHUB_REPOSITORY")' in rendered["release.yml"]


def test_ci_triggers_on_library_paths_and_compiles_each_example(
    rendered: dict[str, str],
) -> None:
    ci = parsed(rendered["ci.yml"])
    assert ci["on"] == {
        "pull_request": {
            "paths": [
                "src/**",
                "examples/**",
                "extras/**",
                "library.properties",
                "executorch_pin.txt",
            ]
        }
    }
    example = ci["jobs"]["example"]
    assert example["strategy"]["matrix"]["example"] == (
        "${{ fromJSON(needs.examples.outputs.examples) }}"
    )
    scripts = "\n".join(s.get("run", "") for s in example["steps"])
    assert 'arduino-cli compile --fqbn "$FQBN" --library . "examples/$EXAMPLE"' in scripts
    assert 'python -m generator check . --example="$EXAMPLE"' in scripts
    assert ci["env"]["FQBN"] == "arduino:zephyr:unoq:link_mode=static"
    lint = next(s for s in ci["jobs"]["lint"]["steps"] if "arduino-lint-action" in s["uses"])
    # "update" unless the repo says it is not registered yet (LP018 fails "update" then)
    assert lint["with"]["library-manager"] == "${{ vars.LIBRARY_MANAGER_MODE || 'update' }}"
    assert lint["with"]["compliance"] == "strict"


def test_tool_pins_agree_between_workflows(rendered: dict[str, str]) -> None:
    envs = [parsed(rendered[name])["env"] for name in ("sync.yml", "ci.yml")]
    for key in ("ARDUINO_CLI_VERSION", "ZEPHYR_CORE", "ROUTER_BRIDGE"):
        assert envs[0][key] == envs[1][key], key
    assert re.fullmatch(r"\d+\.\d+\.\d+", envs[0]["ARDUINO_CLI_VERSION"])
    assert re.fullmatch(r"arduino:zephyr@\d+\.\d+\.\d+", envs[0]["ZEPHYR_CORE"])
    assert re.fullmatch(r"Arduino_RouterBridge@\d+\.\d+\.\d+", envs[0]["ROUTER_BRIDGE"])


def test_torch_is_installed_from_the_cpu_index_before_the_requirements(
    rendered: dict[str, str],
) -> None:
    cpu = "--index-url https://download.pytorch.org/whl/cpu"
    for name, text in rendered.items():
        for _, _, step in steps(parsed(text)):
            script = step.get("run", "")
            if "requirements.txt" in script:
                assert script.index(cpu) < script.index('pip install -q -r "$gen/requirements'), (
                    name
                )
    assert "torch==" in (PROJECT_ROOT / "requirements.txt").read_text()


# --- inputs stay data ----------------------------------------------------------------------


def _stub_path(root: Path) -> Path:
    bin_dir = root / "bin"
    bin_dir.mkdir()
    for name in STUBBED:
        stub = bin_dir / name
        stub.write_text(
            "#!/bin/bash\n"
            'printf "%s\\0" "${0##*/}" "$@" > "$STUB_LOG/${0##*/}.$$.$RANDOM"\n'
            "exec cat > /dev/null\n"
        )
        stub.chmod(0o755)
    for name in REAL:
        real = shutil.which(name)
        assert real, name
        (bin_dir / name).symlink_to(real)
    return bin_dir


def _step_env(
    workflow: dict[str, Any], job: dict[str, Any], step: dict[str, Any], value: str, temp: Path
) -> tuple[dict[str, str], set[str]]:
    """The step's environment with expressions evaluated: each input or matrix value becomes
    `value` tagged with its name (so two inputs are told apart), the rest stand-ins. Returns
    it and the names of the variables that carry a tagged `value`."""
    env: dict[str, str] = {}
    carrying: set[str] = set()
    for scope in (workflow.get("env", {}), job.get("env", {}), step.get("env", {})):
        for key, raw in scope.items():
            text = str(raw)
            exprs = _EXPR.findall(text)
            if any(e.startswith(("inputs.", "matrix.")) for e in exprs):
                carrying.add(key)

            def stand_in(m: re.Match[str]) -> str:
                expr = m.group(1)
                if expr.startswith(("inputs.", "matrix.")):
                    return f"{value}.{expr}"
                if expr == "runner.temp":
                    return str(temp)
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


def _decode(path: Path) -> list[str]:
    return [part.decode() for part in path.read_bytes().split(b"\0")[:-1]]


@pytest.mark.parametrize("value", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize("name", NAMES)
def test_hostile_values_stay_one_argument(
    tmp_path: Path, rendered: dict[str, str], name: str, value: str
) -> None:
    workflow = parsed(rendered[name])
    bin_dir = _stub_path(tmp_path)
    temp = tmp_path / "runner-temp"
    (temp / "generator").mkdir(parents=True)
    shutil.copy(PROJECT_ROOT / "requirements.txt", temp / "generator" / "requirements.txt")
    work = tmp_path / "work"
    work.mkdir()
    files = {key: tmp_path / key.lower() for key in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT")}
    files["GITHUB_ENV"] = tmp_path / "github_env"
    carried = 0
    for job_id, job, step in steps(workflow):
        if "run" not in step:
            continue
        log = tmp_path / "log" / f"{job_id}-{step['name']}"
        log.mkdir(parents=True)
        env, carrying = _step_env(workflow, job, step, value, temp)
        env.update(
            PATH=str(bin_dir),
            HOME=str(tmp_path / "home"),
            RUNNER_TEMP=str(temp),
            GITHUB_REPOSITORY="owner/executorch-arduino",
            GITHUB_WORKSPACE=str(work),
            STUB_LOG=str(log),
            **{key: str(path) for key, path in files.items()},
        )
        script = tmp_path / "step.sh"
        script.write_text(step["run"])
        proc = subprocess.run(
            [*BASH, str(script)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        assert proc.returncode == 0, f"{name} {job_id} {step['name']}: {proc.stderr}"
        argvs = [_decode(f) for f in sorted(log.iterdir())]
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


@pytest.mark.parametrize(
    ("source", "version", "extra"),
    [
        ("workflow", "", ["--workflow-token"]),
        ("app", "1.2.3", ["--library-version=1.2.3"]),
        ("secret", "", []),
    ],
)
def test_sync_passes_the_inputs_and_the_workflow_token_flag(
    tmp_path: Path, rendered: dict[str, str], source: str, version: str, extra: list[str]
) -> None:
    sync = parsed(rendered["sync.yml"])
    job = sync["jobs"]["sync"]
    step = next(s for s in job["steps"] if s.get("name") == "Sync")
    bin_dir = _stub_path(tmp_path)
    env, _ = _step_env(sync, job, step, "", tmp_path)
    summary = tmp_path / "summary.md"
    env.update(
        EXECUTORCH_REF="v1.5.1",
        LIBRARY_VERSION=version,
        TOKEN_SOURCE=source,
        PATH=str(bin_dir),
        HOME="/home/runner",
        RUNNER_TEMP=str(tmp_path),
        GITHUB_REPOSITORY="owner/executorch-arduino",
        GITHUB_STEP_SUMMARY=str(summary),
        STUB_LOG=str(tmp_path / "log"),
    )
    (tmp_path / "log").mkdir()
    script = tmp_path / "sync.sh"
    script.write_text(step["run"])
    subprocess.run([*BASH, str(script)], env=env, check=True)
    [argv] = [_decode(f) for f in (tmp_path / "log").glob("python.*")]
    assert argv == [
        "python",
        "-m",
        "generator",
        "sync",
        "--repo",
        "owner/executorch-arduino",
        "--executorch-ref=v1.5.1",
        "--cache-dir",
        "/home/runner/.cache/executorch-arduino",
        *extra,
    ]
    text = summary.read_text()
    warned = "CI will not run on the sync pull request" in text
    assert warned == (source == "workflow")
    if warned:
        assert "SYNC_APP_ID" in text and "SYNC_APP_PRIVATE_KEY" in text and "SYNC_TOKEN" in text


# --- the Python the CI runs ----------------------------------------------------------------


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
    out = subprocess.run(
        [sys.executable, "-"],
        input=_heredoc(step["run"]),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.count("\n") == 1
    key, _, value = out.strip().partition("=")
    assert key == "examples"
    assert json.loads(value) == sorted(["AddModel", "Hello World", "we$(ird)\nname"])


def test_the_size_summary_shows_deltas_against_the_base(
    tmp_path: Path, rendered: dict[str, str]
) -> None:
    sizes = parsed(rendered["ci.yml"])["jobs"]["sizes"]["steps"]
    code = _heredoc(next(s["run"] for s in sizes if "<<'PY'" in s.get("run", "")))
    head = {"examples": [{"example": "AddModel", "sizes": {"flash": 1100, "ram": 300}}]}
    base = {"examples": [{"example": "AddModel", "sizes": {"flash": 1000, "ram": 300}}]}
    (tmp_path / "head.json").write_text(json.dumps(head))
    (tmp_path / "base.json").write_text(json.dumps(base))

    def summary(*files: str) -> str:
        return subprocess.run(
            [sys.executable, "-", *(str(tmp_path / f) for f in files)],
            input=code,
            env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    text = summary("head.json", "base.json")
    assert "| AddModel | flash | 1,000 | 1,100 | +100 |" in text
    assert "| AddModel | ram | 300 | 300 | +0 |" in text
    assert "no deltas" in summary("head.json", "missing.json")
    assert "could not be checked" in summary("missing.json", "base.json")


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


def _args(library: Path, **options: Any) -> argparse.Namespace:
    values = {"generator_repo": None, "generator_ref": None, "allow_dirty": False, "check": False}
    return argparse.Namespace(library=library, **{**values, **options})


def test_the_default_pin_is_origin_and_head(
    tmp_path: Path, checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head = _git(checkout, "rev-parse", "HEAD")
    assert default_generator_repo(checkout) == REPO
    assert default_generator_ref(checkout) == head
    assert "warning" not in capsys.readouterr().err
    library = tmp_path / "library"
    library.mkdir()
    assert workflows(_args(library), checkout=checkout) == 0
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
