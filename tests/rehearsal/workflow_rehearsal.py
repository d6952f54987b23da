"""A rehearsal of the library repo's workflows (issue 17, §5): a rendered workflow and an event
in, what GitHub Actions would do out, as a transcript a test prints and asserts on.

What it does as GitHub does (sources: docs.github.com, "Workflow syntax for GitHub Actions",
"Events that trigger workflows", "Contexts" and its "Context availability" table, "Evaluate
expressions in workflows and actions" (`gha_expressions.py`), "Workflow commands"):

- `on:` decides whether the event starts the workflow: the event's name, `types` (with each
  event's default types), `branches`/`tags`/`paths` filters (GitHub's glob syntax, `!`
  negations in order), schedules by cron text; a `workflow_dispatch` is refused, as GitHub
  refuses it (HTTP 422), for an input the workflow does not declare or a required one
  missing, and its inputs get their declared types (`inputs.recreate` is a boolean,
  `github.event.inputs.recreate` the string);
- a workflow-level `concurrency` group is joined when the run starts, a job's own only when
  that job runs (the docs, "Control the concurrency of workflows and jobs", say a job's
  group applies when the job is queued; that a job its `if:` skips is never queued is how
  the workflows' authors read it, not a sentence of the docs); groups are recorded, the
  queueing itself (one pending run, `cancel-in-progress`, `queue:`) is not played out;
- jobs run in `needs` order; a job's `if:` (with `success()` put in front unless it calls a
  status function) sees the contexts GitHub allows there, and a job whose needs did not all
  succeed is skipped unless its `if:` says otherwise; `strategy.matrix` is expanded (a
  vector from `fromJSON`, `include`, `exclude`; an empty vector fails the job as on GitHub);
- steps run in order; `${{ }}` in `env:`, `with:`, `name:`, outputs and `if:` are evaluated
  with the contexts their place allows (a context outside the table fails the rehearsal, as
  GitHub refuses the workflow); a `run:` script runs in bash (`bash --noprofile --norc -eo
  pipefail` for `shell: bash`, `bash -e` without a shell) in the job's workspace, with the
  runner's variables (GITHUB_*, RUNNER_*, CI, HOME) and fresh $GITHUB_OUTPUT, $GITHUB_ENV,
  $GITHUB_PATH and $GITHUB_STEP_SUMMARY files whose contents later steps and the job's
  outputs see; `continue-on-error` and the `steps` context (outputs, outcome, conclusion);
  each job gets a fresh runner.temp, as each runs on a runner of its own (home and the
  workspace are the run's);

What is emulated, not real:

- no container and no network: every `run:` script runs on this machine with
  `tests/rehearsal/rehearsal_stubs/bin` first on PATH. `gh`, `pip`, `sudo`, `apt-get` and
  `arduino-cli`
  record their arguments and do nothing (exit 0), but `gh` answers from the fake GitHub
  (`rehearsal_stubs/gh_stub.py`: the `gh api` and `gh release` calls the workflows make);
  `curl`/`wget` are refused; `git` records and runs the real git; `python`/`python3` record,
  then `-m pip` stops, `-m generator` runs `rehearsal_stubs/generator_shim.py` (the real
  generator, fetched by the workflow's own step from the generator repository the scenario
  gives; for `sync` the build and the check are the sync tests' fakes, `--api-url` points at
  the fake GitHub and the App tokens' clock is `Rehearsal.clock`; for `check` the
  compile/run stages are a fixed passing report; `release` is entirely real), anything else
  runs in the real python;
- GitHub's API is `tests/support/github_fake` (OpenAPI-validated); git's remote is the fake's bare
  repository served over smart HTTP (`github_fake.git_http.GitHttpRemote`, taking the tokens
  the fake takes); git reaches it, and the workflow's fetch of the generator reaches the
  generator's repository the scenario gives, through `url.<base>.insteadOf` in the runner's
  git config (any other https remote fails: no network);
- `uses:` actions are emulated by `ACTIONS` (an action missing there fails the rehearsal):
  checkout clones the fake's repository (a pull request's head commit, where GitHub would
  check out its test merge commit `refs/pull/N/merge`); upload-artifact and
  download-artifact keep files in the run's folder; cache/save keeps its paths as an entry of
  the run's ref and cache/restore copies back the entry of its key or of a restore-keys prefix
  (the newest) that its ref's scope or main's holds; setup-python, setup-arduino-cli, cache
  (always a miss) and arduino-lint-action record their inputs and change nothing (the stubs
  stand for what they install);
- the YAML is read by PyYAML, YAML 1.1 (plain `yes`, `no`, `off` are booleans there; GitHub's
  parser was not checked for them; `on:` is put back under its name); jobs with `uses:`,
  `container:` or `services:` are refused, not emulated;
- `runs-on`, `timeout-minutes` and `permissions` are recorded, not enforced; the token's
  permissions are whatever the fake accepts; secrets are masked as `***` in the transcript.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from gha_expressions import (
    ExpressionError,
    Scope,
    condition,
    normalize,
    render,
    render_string,
    to_string,
)

STUBS = Path(__file__).resolve().parent / "rehearsal_stubs"

#: Contexts each place may name: the "Context availability" table of
#: https://docs.github.com/en/actions/reference/workflows-and-actions/contexts.
_STEP = frozenset(
    {"github", "needs", "strategy", "matrix", "job", "runner", "env", "vars", "secrets"}
    | {"steps", "inputs"}
)
AVAILABLE: dict[str, frozenset[str]] = {
    "concurrency": frozenset({"github", "inputs", "vars"}),
    "env": frozenset({"github", "secrets", "inputs", "vars"}),
    "jobs.if": frozenset({"github", "needs", "vars", "inputs"}),
    "jobs.strategy": frozenset({"github", "needs", "vars", "inputs"}),
    "jobs.name": frozenset({"github", "needs", "strategy", "matrix", "vars", "inputs"}),
    "jobs.concurrency": frozenset({"github", "needs", "strategy", "matrix", "inputs", "vars"}),
    "jobs.env": frozenset({"github", "needs", "strategy", "matrix", "vars", "secrets", "inputs"}),
    "jobs.outputs": _STEP,
    "steps.if": _STEP - {"secrets"},
    "steps": _STEP,
}

#: The types a `pull_request` workflow without `types:` runs for ("Events that trigger
#: workflows", pull_request: "By default, a workflow only runs when a pull_request event's
#: activity type is opened, synchronize, or reopened").
PULL_REQUEST_DEFAULT_TYPES = ("opened", "synchronize", "reopened")


#: How long the generator's (fake) check takes on `Rehearsal.clock` when `slow_check` is on:
#: longer than the hour an App installation token lives (GitHub docs, "Generating an
#: installation access token for a GitHub App"), shorter than sync's 180-minute timeout.
CHECK_TAKES = timedelta(minutes=61)


class RehearsalError(Exception):
    """The rehearsal cannot go on as GitHub would: a workflow GitHub would refuse, an action
    or event it does not emulate, a scenario that says too little."""


# -- the event and the repository's settings -------------------------------------------------


@dataclass
class Event:
    """What starts a workflow.

    Attributes:
        name: the event's name (`workflow_dispatch`, `repository_dispatch`, `pull_request`,
            `push`, `schedule`).
        payload: the webhook payload (`github.event`); for `workflow_dispatch` the `inputs`
            are filled in by the rehearsal from `inputs`.
        inputs: a `workflow_dispatch`'s inputs as given (`gh workflow run -f`: strings).
        ref, sha: GITHUB_REF and GITHUB_SHA (the sha may be "" when nothing checks it out).
        changed_files: for `paths` filters: the files the push or pull request changes.
    """

    name: str
    payload: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, str] = field(default_factory=dict)
    ref: str = "refs/heads/main"
    sha: str = ""
    changed_files: list[str] | None = None


@dataclass
class Settings:
    """The library repo's settings a run sees.

    Attributes:
        vars: repository variables (`vars`); secrets: repository secrets (`secrets`).
        workflow_token: the GITHUB_TOKEN GitHub mints for the run (`github.token`).
    """

    vars: dict[str, str] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)
    workflow_token: str = "ghs_RehearsalWorkflowToken000000000000"


# -- the record --------------------------------------------------------------------------------


@dataclass
class Command:
    """One call a stub saw: the program, its arguments, and whether a program the step
    started (the generator, an inline script) made it rather than the script itself."""

    program: str
    args: list[str]
    nested: bool

    def line(self) -> str:
        return " ".join([self.program, *(_quote(a) for a in self.args)])


@dataclass
class StepRecord:
    """One step: its decision (`ran` or `skipped`, and why), what it was, its outcome."""

    number: int
    name: str
    decision: str
    why: str
    kind: str = ""
    outcome: str = "skipped"
    commands: list[Command] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)
    summary: str = ""
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0


@dataclass
class JobRecord:
    """One job (one matrix combination): its decision and why, its result, the concurrency
    group it joined, its permissions, steps and outputs."""

    job_id: str
    name: str
    decision: str
    why: str
    result: str = "skipped"
    matrix: dict[str, Any] = field(default_factory=dict)
    concurrency: str | None = None
    permissions: dict[str, str] | None = None
    steps: list[StepRecord] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)

    def step(self, name: str) -> StepRecord:
        """The step named `name` (KeyError when none is)."""
        for step in self.steps:
            if step.name == name:
                return step
        raise KeyError(f"job {self.job_id} has no step {name!r}")


@dataclass
class Run:
    """One workflow run as the rehearsal saw it."""

    workflow: str
    event: str
    triggered: bool
    why: str
    concurrency: str | None = None
    jobs: list[JobRecord] = field(default_factory=list)
    secrets: tuple[str, ...] = ()
    roots: dict[str, str] = field(default_factory=dict)

    def job(self, job_id: str) -> JobRecord:
        """The job `job_id` (its first matrix combination; KeyError when there is none)."""
        for job in self.jobs:
            if job.job_id == job_id:
                return job
        raise KeyError(f"{self.workflow} has no job {job_id!r} in this run")

    @property
    def conclusion(self) -> str:
        """`success` unless a job failed (`failure`); `skipped` when nothing ran."""
        if any(j.result == "failure" for j in self.jobs):
            return "failure"
        if not self.triggered or all(j.result == "skipped" for j in self.jobs):
            return "skipped"
        return "success"

    def commands(self, program: str | None = None, *, nested: bool | None = None) -> list[Command]:
        """Every call the stubs saw in this run (optionally one program's; `nested` False:
        only the scripts' own, True: only those of programs they started)."""
        return [
            c
            for j in self.jobs
            for s in j.steps
            for c in s.commands
            if (program is None or c.program == program) and (nested is None or c.nested == nested)
        ]

    def transcript(self) -> str:
        """The run as text: the trigger, the concurrency, each job and step with its decision
        and why, the commands the stubs saw (the scripts' own in full, the generator's git
        calls counted by subcommand), notes, outputs, summaries and the tail of the output;
        temporary folders shown by name, secrets as ***."""
        out = [
            f"=== {self.workflow} on {self.event}: "
            + ("triggered" if self.triggered else "not triggered")
            + f" ({self.why})"
        ]
        if self.concurrency is not None:
            out.append(f"  concurrency: joined {self.concurrency}")
        for job in self.jobs:
            head = f"  job {job.job_id}"
            if job.name != job.job_id:
                head += f" ({job.name})"
            out.append(f"{head}: {job.decision} ({job.why}) -> {job.result}")
            if job.concurrency is not None:
                out.append(f"    concurrency: joined {job.concurrency}")
            if job.decision == "ran" and job.permissions is not None:
                perms = ", ".join(f"{k}: {v}" for k, v in job.permissions.items()) or "none"
                out.append(f"    permissions: {perms}")
            for step in job.steps:
                out.append(
                    f"    {step.number}. {step.name}: {step.decision} ({step.why})"
                    + (f" -> {step.outcome}" if step.decision == "ran" else "")
                )
                own = [c for c in step.commands if not c.nested]
                for command in own:
                    out.append(f"         $ {command.line()}")
                nested = [c for c in step.commands if c.nested]
                if nested:
                    counts: dict[str, int] = {}
                    for c in nested:
                        key = f"{c.program} {_subcommand(c.args)}".strip()
                        counts[key] = counts.get(key, 0) + 1
                    shown = ", ".join(f"{k} x{n}" for k, n in counts.items())
                    out.append(f"         (started by the step's programs: {shown})")
                for note in step.notes:
                    out.append(f"         {note}")
                for name, value in step.outputs.items():
                    shown = "\n                ".join(value.splitlines()) or value
                    out.append(f"         output {name}={shown}")
                tail = _tail(step.stdout, 4)
                if tail:
                    out.append("         stdout: " + "\n                 ".join(tail))
                if step.outcome == "failure":
                    err = _tail(step.stderr, 6)
                    if err:
                        out.append("         stderr: " + "\n                 ".join(err))
                if step.summary.strip():
                    out.append(
                        "         summary: " + "\n                  ".join(_tail(step.summary, 8))
                    )
            for name, value in job.outputs.items():
                shown = "\n            ".join(value.splitlines()) or value
                out.append(f"    output {name}={shown}")
        out.append(f"  conclusion: {self.conclusion}")
        return self.mask("\n".join(out))

    def mask(self, text: str) -> str:
        """`text` with every secret replaced by *** and the temporary folders by their names."""
        for secret in sorted(self.secrets, key=len, reverse=True):
            if secret:
                text = text.replace(secret, "***")
        for path, name in sorted(self.roots.items(), key=lambda kv: -len(kv[0])):
            text = text.replace(path, name)
        return text


def _quote(arg: str) -> str:
    """`arg` as a shell word on one line (a newline shown as \\n)."""
    if re.fullmatch(r"[\w@%+=:,./-]+", arg):
        return arg
    return "'" + arg.replace("'", "'\\''").replace("\n", "\\n") + "'"


def _subcommand(args: list[str]) -> str:
    """git's subcommand (after -C DIR, -c K=V and other options), python's module or script."""
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-C", "-c", "--git-dir", "--work-tree", "-m"):
            if a == "-m" and i + 1 < len(args):
                return f"-m {args[i + 1]}"
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        return a
    return ""


def _tail(text: str, n: int) -> list[str]:
    lines = [line.rstrip() for line in text.strip().splitlines() if line.strip()]
    return lines[-n:]


# -- triggers ------------------------------------------------------------------------------------


def parse_workflow(text: str) -> dict[str, Any]:
    """The workflow's YAML, with YAML 1.1's `on` (read as True) back under "on"."""
    data = yaml.safe_load(text)
    if not isinstance(data, dict):
        raise RehearsalError("a workflow is a mapping")
    if True in data:
        data["on"] = data.pop(True)
    return data


def _on(workflow: Mapping[str, Any]) -> dict[str, Any]:
    on = workflow.get("on")
    if isinstance(on, str):
        return {on: {}}
    if isinstance(on, list):
        return {str(name): {} for name in on}
    if isinstance(on, dict):
        return {str(k): (v or {}) for k, v in on.items()}
    raise RehearsalError("the workflow has no `on:`")


def _glob(pattern: str) -> re.Pattern[str]:
    """GitHub's filter pattern ("Workflow syntax", "Filter pattern cheat sheet"): `*` any
    characters but `/`, `**` any characters, `?` and `+` one or more of the preceding
    character, `[]` a set."""
    out, i = "", 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif c == "*":
            out += "[^/]*"
            i += 1
        elif c in "?+":
            out += c
            i += 1
        elif c == "[":
            end = pattern.index("]", i)
            out += pattern[i : end + 1]
            i = end + 1
        else:
            out += re.escape(c)
            i += 1
    return re.compile(out + r"\Z")


def filter_matches(patterns: Iterable[str], names: Iterable[str]) -> bool:
    """Whether any of `names` is included by `patterns` (in order; a `!` pattern excludes
    what the patterns before it included)."""
    ordered = list(patterns)
    for name in names:
        included = False
        for pattern in ordered:
            negative = pattern.startswith("!")
            if _glob(pattern[1:] if negative else pattern).match(name):
                included = not negative
        if included:
            return True
    return False


def _ref_filter(spec: Mapping[str, Any], ref: str) -> tuple[bool, str]:
    for kind, prefix in (("branches", "refs/heads/"), ("tags", "refs/tags/")):
        if not ref.startswith(prefix):
            continue
        name = ref.removeprefix(prefix)
        if kind in spec and not filter_matches(spec[kind], [name]):
            return False, f"{kind} filter excludes {name}"
        ignore = spec.get(f"{kind}-ignore")
        if ignore and filter_matches(ignore, [name]):
            return False, f"{kind}-ignore excludes {name}"
    return True, ""


def _paths_filter(spec: Mapping[str, Any], event: Event) -> tuple[bool, str]:
    if "paths" not in spec and "paths-ignore" not in spec:
        return True, ""
    if event.changed_files is None:
        raise RehearsalError(f"the {event.name} workflow filters paths: say which files changed")
    if "paths" in spec and not filter_matches(spec["paths"], event.changed_files):
        return False, "paths filter matches no changed file"
    ignore = spec.get("paths-ignore")
    if ignore and all(filter_matches(ignore, [f]) for f in event.changed_files):
        return False, "paths-ignore matches every changed file"
    return True, ""


def triggers(workflow: Mapping[str, Any], event: Event) -> tuple[bool, str]:
    """Whether `event` starts `workflow`, and why (or why not).

    Raises:
        RehearsalError: a workflow_dispatch GitHub would refuse (an undeclared input, a
            required one missing); an event this rehearsal does not know.
    """
    on = _on(workflow)
    if event.name not in on:
        return False, f"no on.{event.name}"
    spec = on[event.name]
    if not isinstance(spec, dict):
        spec = {}
    if event.name == "workflow_dispatch":
        declared = spec.get("inputs") or {}
        unknown = sorted(set(event.inputs) - set(declared))
        if unknown:
            raise RehearsalError(f"GitHub refuses the dispatch: unexpected inputs {unknown}")
        for name, meta in declared.items():
            if (
                (meta or {}).get("required")
                and name not in event.inputs
                and "default" not in (meta or {})
            ):
                raise RehearsalError(f"GitHub refuses the dispatch: input {name} is required")
        return True, "on.workflow_dispatch"
    if event.name == "repository_dispatch":
        types = spec.get("types")
        action = str(event.payload.get("action", ""))
        if types and action not in types:
            return False, f"on.repository_dispatch.types {types} lacks {action!r}"
        return True, f"on.repository_dispatch (type {action})"
    if event.name in ("pull_request", "pull_request_target"):
        action = str(event.payload.get("action", ""))
        types = spec.get("types") or list(PULL_REQUEST_DEFAULT_TYPES)
        if action not in types:
            return False, f"on.{event.name}.types {list(types)} lacks {action!r}"
        base = str(event.payload.get("pull_request", {}).get("base", {}).get("ref", ""))
        ok, why = _ref_filter(spec, f"refs/heads/{base}")
        if not ok:
            return False, why
        ok, why = _paths_filter(spec, event)
        if not ok:
            return False, why
        return True, f"on.{event.name} ({action})"
    if event.name == "push":
        ok, why = _ref_filter(spec, event.ref)
        if not ok:
            return False, why
        ok, why = _paths_filter(spec, event)
        if not ok:
            return False, why
        return True, f"on.push ({event.ref})"
    if event.name == "schedule":
        crons = [str(item.get("cron")) for item in on["schedule"] or []]
        wanted = str(event.payload.get("schedule", ""))
        if wanted not in crons:
            return False, f"no on.schedule cron {wanted!r}"
        return True, f"on.schedule ({wanted})"
    raise RehearsalError(f"the rehearsal does not know the event {event.name}")


def dispatch_inputs(
    workflow: Mapping[str, Any], given: Mapping[str, str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """A workflow_dispatch's `inputs` context (declared types: booleans as booleans, numbers
    as numbers) and `github.event.inputs` (every value a string), defaults filled in."""
    declared = (_on(workflow).get("workflow_dispatch") or {}).get("inputs") or {}
    typed: dict[str, Any] = {}
    strings: dict[str, str] = {}
    for name, meta in declared.items():
        meta = meta or {}
        raw = given.get(name, meta.get("default", ""))
        kind = meta.get("type", "string")
        text = to_string(normalize(raw)) if not isinstance(raw, str) else raw
        if kind == "boolean":
            if text not in ("true", "false"):
                raise RehearsalError(
                    f"GitHub refuses the dispatch: {name}={text!r} is not a boolean"
                )
            typed[name] = text == "true"
        elif kind == "number":
            typed[name] = float(text)
        elif kind == "choice":
            if text not in [str(o) for o in meta.get("options", [])]:
                raise RehearsalError(f"GitHub refuses the dispatch: {name}={text!r} is no option")
            typed[name] = text
        else:
            typed[name] = text
        strings[name] = text
    return typed, strings


# -- actions ---------------------------------------------------------------------------------------


@dataclass
class ActionCall:
    """What an emulated action gets: its `with:` inputs (rendered), the step's env, the job's
    folders, the run's settings, and the rehearsal (for the fake repository)."""

    uses: str
    inputs: dict[str, Any]
    env: dict[str, str]
    workspace: Path
    temp: Path
    github: dict[str, Any]
    settings: Settings
    rehearsal: Rehearsal
    notes: list[str]
    artifacts: Path
    home: Path

    def path(self, text: str) -> Path:
        """A path input as the runner reads it: `~` is the runner's home, a relative path is
        under the workspace."""
        if text == "~" or text.startswith("~/"):
            return self.home / text[2:]
        return self.workspace / text


class ActionFailure(Exception):
    """An emulated action failed, as the real one would (the step fails)."""


#: An emulated action: does its minimal effect, appends notes, returns its outputs.
ActionFn = Callable[[ActionCall], dict[str, str]]


def _checkout(call: ActionCall) -> dict[str, str]:
    where = call.workspace / str(call.inputs.get("path") or "")
    repo = str(call.inputs.get("repository") or call.github["repository"])
    if repo != call.github["repository"]:
        raise ActionFailure(f"checkout of another repository ({repo}) is not emulated")
    ref = str(call.inputs.get("ref") or "")
    pull = call.github["event"].get("pull_request")
    if not ref and call.github["event_name"].startswith("pull_request") and pull:
        ref = str(pull["head"]["sha"])
        number = to_string(pull["number"])
        call.notes.append(f"checkout: head {ref[:12]} (GitHub: refs/pull/{number}/merge)")
    elif not ref:
        ref = str(call.github.get("sha") or call.github["ref"])
    if where.exists():
        shutil.rmtree(where)
    git = call.rehearsal.real_git
    subprocess.run(
        [git, "clone", "-q", str(call.rehearsal.remote), str(where)],
        check=True,
        capture_output=True,
    )
    done = subprocess.run(
        [git, "-C", str(where), "checkout", "-q", "--detach", ref.removeprefix("refs/heads/")],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        done = subprocess.run(
            [
                git,
                "-C",
                str(where),
                "checkout",
                "-q",
                "--detach",
                f"origin/{ref.removeprefix('refs/heads/')}",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        raise ActionFailure(f"checkout: no ref {ref}: {done.stderr.strip()}")
    head = subprocess.run(
        [git, "-C", str(where), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    persist = call.inputs.get("persist-credentials", True)
    into = where.relative_to(call.workspace) if where != call.workspace else "."
    kept = "" if persist is False or persist == "false" else " (token persisted in .git/config)"
    call.notes.append(f"checkout {repo}@{head[:12]} into {into}{kept}")
    return {"ref": ref, "commit": head}


def _setup_python(call: ActionCall) -> dict[str, str]:
    version = str(call.inputs.get("python-version", ""))
    call.notes.append(f"setup-python {version}: the rehearsal's python stands in")
    return {"python-version": version}


def _setup_arduino_cli(call: ActionCall) -> dict[str, str]:
    call.notes.append(
        f"setup-arduino-cli {call.inputs.get('version', '')}: the arduino-cli stub stands in"
    )
    return {}


def _cache(call: ActionCall) -> dict[str, str]:
    # Always a miss. `cache-hit` is left unset: what the action sets on a miss is not read
    # by our workflows, and was not checked here.
    paths = " ".join(str(call.inputs.get("path", "")).split())
    call.notes.append(f"cache {paths}: miss, key {call.inputs.get('key')}")
    restore = [line for line in str(call.inputs.get("restore-keys", "")).splitlines() if line]
    if restore:
        call.notes.append("cache restore-keys: " + " | ".join(restore))
    return {}


def _cache_paths(call: ActionCall) -> list[tuple[str, Path]]:
    """The `path` lines of a cache action that name a folder or file (exclusions left out),
    each with where it is on the runner."""
    lines = [line.strip() for line in str(call.inputs.get("path", "")).splitlines()]
    return [(line, call.path(line)) for line in lines if line and not line.startswith("!")]


def _cache_restore(call: ActionCall) -> dict[str, str]:
    """actions/cache/restore: the entry of `key`, else the newest whose key starts with a
    `restore-keys` line, among the entries this run's ref may read (its own and the default
    branch's, refs/heads/main: GitHub's cache scopes), copied back to its paths."""
    key = str(call.inputs.get("key", ""))
    prefixes = [line for line in str(call.inputs.get("restore-keys", "")).splitlines() if line]
    ref = str(call.github.get("ref") or "")
    visible = [e for e in reversed(call.rehearsal.caches) if e.scope in (ref, "refs/heads/main")]
    found = next((e for e in visible if e.key == key), None)
    for prefix in prefixes:
        found = found or next((e for e in visible if e.key.startswith(prefix)), None)
    outputs = {"cache-primary-key": key}
    if found is None:
        call.notes.append(f"cache restore: miss, key {key}")
        return outputs
    for line, target in _cache_paths(call):
        kept = found.folder / line
        if kept.is_dir():
            shutil.copytree(kept, target, dirs_exist_ok=True)
    call.notes.append(f"cache restore: {found.key} (saved on {found.scope})")
    return {**outputs, "cache-matched-key": found.key, "cache-hit": str(found.key == key).lower()}


def _cache_save(call: ActionCall) -> dict[str, str]:
    """actions/cache/save: the paths kept as an entry of `key` in this run's ref's scope; a
    key that exists is not saved again (entries are immutable)."""
    key = str(call.inputs.get("key", ""))
    ref = str(call.github.get("ref") or "")
    if any(e.key == key and e.scope == ref for e in call.rehearsal.caches):
        call.notes.append(f"cache save: {key} exists, not saved")
        return {}
    folder = call.rehearsal.root / "caches" / str(len(call.rehearsal.caches))
    for line, source in _cache_paths(call):
        if source.is_dir():
            shutil.copytree(source, folder / line, dirs_exist_ok=True)
    call.rehearsal.caches.append(CacheEntry(key, ref, folder))
    call.notes.append(f"cache save: {key} on {ref}")
    return {}


@dataclass(frozen=True)
class CacheEntry:
    """One saved cache: its key, the ref whose scope holds it, the folder with its paths."""

    key: str
    scope: str
    folder: Path


def _arduino_lint(call: ActionCall) -> dict[str, str]:
    shown = ", ".join(f"{k}={v}" for k, v in sorted(call.inputs.items()))
    call.notes.append(f"arduino-lint-action ({shown}): recorded, not run")
    return {}


def _upload_artifact(call: ActionCall) -> dict[str, str]:
    """actions/upload-artifact: the files under `path` kept as artifact `name` of the run."""
    name = str(call.inputs.get("name") or "artifact")
    target = call.artifacts / name
    if target.exists():
        raise ActionFailure(f"upload-artifact: an artifact {name} exists already in this run")
    sources = [
        call.path(line.strip())
        for line in str(call.inputs.get("path", "")).splitlines()
        if line.strip() and not line.strip().startswith("!")
    ]
    present = [s for s in sources if s.exists()]
    if not present:
        behaviour = str(call.inputs.get("if-no-files-found") or "warn")
        call.notes.append(f"upload-artifact {name}: no files ({behaviour})")
        if behaviour == "error":
            raise ActionFailure(f"upload-artifact {name}: no files found")
        return {}
    for source in present:
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / source.name)
    count = sum(1 for p in target.rglob("*") if p.is_file())
    call.notes.append(f"upload-artifact {name}: {count} file(s)")
    return {"artifact-id": str(len(list(call.artifacts.iterdir())))}


def _download_artifact(call: ActionCall) -> dict[str, str]:
    """actions/download-artifact: the run's artifacts matching `pattern` (or `name`) into
    `path`, each in a folder of its name unless `merge-multiple`, or it is one artifact (a
    `name`, or a pattern one matches: download-artifact v8.0.1 src/download-artifact.ts,
    `isSingleArtifactDownload` and `artifacts.length === 1 ? resolvedPath`); a `name` no
    artifact has fails, as there."""
    name = call.inputs.get("name")
    pattern = str(call.inputs.get("pattern") or name or "*")
    target = call.path(str(call.inputs.get("path") or "."))
    merge = call.inputs.get("merge-multiple") in (True, "true")
    found = (
        sorted(p for p in call.artifacts.iterdir() if fnmatch.fnmatchcase(p.name, pattern))
        if call.artifacts.exists()
        else []
    )
    if name and not found:
        raise ActionFailure(f"download-artifact: no artifact {name} in this run")
    single = bool(name) or len(found) == 1
    for artifact in found:
        into = target if merge or single else target / artifact.name
        shutil.copytree(artifact, into, dirs_exist_ok=True)
    call.notes.append(f"download-artifact {pattern}: {', '.join(p.name for p in found) or 'none'}")
    return {"download-path": str(target)}


#: The actions the rehearsal emulates, by `owner/name` (which inputs each action declares is
#: tests/unit/workflows/test_workflows.py's concern: its ACTIONS table, read from each action.yml).
ACTIONS: dict[str, ActionFn] = {
    "actions/checkout": _checkout,
    "actions/setup-python": _setup_python,
    "arduino/setup-arduino-cli": _setup_arduino_cli,
    "actions/cache": _cache,
    "actions/cache/restore": _cache_restore,
    "actions/cache/save": _cache_save,
    "arduino/arduino-lint-action": _arduino_lint,
    "actions/upload-artifact": _upload_artifact,
    "actions/download-artifact": _download_artifact,
}


# -- running -----------------------------------------------------------------------------------


@dataclass
class _JobState:
    """What the steps of one job share while it runs."""

    env: dict[str, str]
    #: `defaults.run` of the workflow, then of the job (shell, working-directory)
    defaults: dict[str, str] = field(default_factory=dict)
    steps: dict[str, dict[str, Any]] = field(default_factory=dict)
    failed: bool = False
    path: list[str] = field(default_factory=list)


class Rehearsal:
    """Runs workflows against one fake library repository.

    Args:
        root: a folder for the runs (one subfolder each).
        repo: OWNER/NAME of the library repo.
        remote: its bare git repository (what the fake GitHub serves).
        git_url: the smart-HTTP URL of `remote` (`TokenRemote`).
        api_url: the fake GitHub's URL (GITHUB_API_URL of the runs).
        generator_repo: the generator URL the workflows were rendered with; the runner's
            git config maps it to `generator_dir`.
        generator_dir: the generator's git repository (the tests: a commit of this work tree).
        mirrors: other git remotes the runs may reach (URL as the workflow names it -> a
            local repository), e.g. ExecuTorch's upstream for the schedule's ls-remote.
    """

    def __init__(
        self,
        root: Path,
        *,
        repo: str,
        remote: Path,
        git_url: str,
        api_url: str,
        generator_repo: str,
        generator_dir: Path,
        actions: Mapping[str, ActionFn] = ACTIONS,
        mirrors: Mapping[str, Path] | None = None,
    ) -> None:
        self.root = root
        self.repo = repo
        self.remote = remote
        self.git_url = git_url
        self.api_url = api_url
        self.generator_repo = generator_repo
        self.generator_dir = generator_dir
        self.mirrors = dict(mirrors or {})
        self.actions = dict(actions)
        self.real_git = shutil.which("git") or "git"
        self.real_python = sys.executable
        self.runs: list[Run] = []
        #: the caches saved by the runs (actions/cache/save), oldest first
        self.caches: list[CacheEntry] = []
        self._run_id = 1000
        #: the file whose existence says the generator's (fake) check has run
        #: (REHEARSAL_CHECK_MARK of the runs)
        self.check_mark = root / "check-ran"
        #: the check takes `CHECK_TAKES` on `clock` (the generator's App tokens and the fake
        #: GitHub's share it): REHEARSAL_SLOW_CHECK of the runs
        self.slow_check = False

    def clock(self) -> datetime:
        """The rehearsal's time (for the fake GitHub's tokens): real time, plus `CHECK_TAKES`
        once a slow check has run (`generator_shim.clock`, the generator's, is the same)."""
        slow = self.slow_check and self.check_mark.exists()
        return datetime.now(UTC) + (CHECK_TAKES if slow else timedelta())

    def run(self, workflow_file: str, text: str, event: Event, settings: Settings) -> Run:
        """Run the workflow `text` (installed as .github/workflows/`workflow_file`) for
        `event` with the repository's `settings`; returns the record (also appended to
        `runs`).

        Raises:
            RehearsalError: see the class; ExpressionError: an expression GitHub refuses.
        """
        workflow = parse_workflow(text)
        self._run_id += 1
        name = str(workflow.get("name") or workflow_file)
        secrets = (settings.workflow_token, *settings.secrets.values())
        triggered, why = triggers(workflow, event)
        run = Run(
            f"{name} ({workflow_file})",
            event.name,
            triggered,
            why,
            secrets=tuple(s for s in secrets if s),
        )
        self.runs.append(run)
        if not triggered:
            return run
        folder = self.root / f"run-{self._run_id}-{workflow_file.removesuffix('.yml')}"
        home, temp, workspace = folder / "home", folder / "temp", folder / "workspace"
        for path in (home, temp, workspace, folder / "artifacts"):
            path.mkdir(parents=True)
        run.roots = {
            str(temp): "<runner.temp>",
            str(workspace): "<workspace>",
            str(home): "<home>",
            str(folder): "<run>",
        }
        self._git_config(home)
        inputs: dict[str, Any] = {}
        payload = dict(event.payload)
        if event.name == "workflow_dispatch":
            inputs, strings = dispatch_inputs(workflow, event.inputs)
            payload["inputs"] = strings
        (folder / "event.json").write_text(json.dumps(payload))
        github = self._github(
            workflow_file, event, payload, settings, workspace, folder / "event.json"
        )
        contexts: dict[str, Any] = {
            "github": normalize(github),
            "inputs": normalize(inputs),
            "vars": dict(settings.vars),
            "secrets": {**settings.secrets, "GITHUB_TOKEN": settings.workflow_token},
        }
        concurrency = workflow.get("concurrency")
        if concurrency is not None:
            run.concurrency = self._concurrency(
                concurrency, Scope(contexts, AVAILABLE["concurrency"])
            )
        workflow_env = {
            k: render_string(v, Scope(contexts, AVAILABLE["env"]))
            for k, v in (workflow.get("env") or {}).items()
        }
        results: dict[str, JobRecord] = {}
        order = _needs_order(workflow.get("jobs") or {})
        for job_id in order:
            spec = workflow["jobs"][job_id]
            # Each job runs on a runner of its own: a fresh runner.temp (what one job leaves
            # there, another gets only as an artifact or a job output).
            shutil.rmtree(temp)
            temp.mkdir()
            records = self._job(
                job_id,
                spec,
                workflow,
                contexts,
                workflow_env,
                results,
                home,
                temp,
                workspace,
                settings,
            )
            run.jobs.extend(records)
            results[job_id] = _merge(records)
        return run

    # -- one job --------------------------------------------------------------------------

    def _job(
        self,
        job_id: str,
        spec: Mapping[str, Any],
        workflow: Mapping[str, Any],
        contexts: dict[str, Any],
        workflow_env: dict[str, str],
        results: Mapping[str, JobRecord],
        home: Path,
        temp: Path,
        workspace: Path,
        settings: Settings,
    ) -> list[JobRecord]:
        for key in ("uses", "container", "services"):
            if key in spec:
                raise RehearsalError(f"job {job_id}: `{key}:` is not emulated")
        needs = spec.get("needs") or []
        needs = [needs] if isinstance(needs, str) else list(needs)
        ancestors = _ancestors(job_id, workflow["jobs"])
        needs_ctx = {
            n: {"result": results[n].result, "outputs": dict(results[n].outputs)} for n in needs
        }

        def job_status(fn: str) -> bool:
            got = [results[a].result for a in ancestors]
            if fn == "success":
                return all(r == "success" for r in got)
            if fn == "failure":
                return any(r == "failure" for r in got)
            return fn == "always"

        base = {**contexts, "needs": needs_ctx}
        raw_if = spec.get("if")
        if raw_if is not None:
            holds, shown = condition(raw_if, Scope(base, AVAILABLE["jobs.if"], job_status))
            why = f"if: {_one_line(shown)} -> {str(holds).lower()}"
        else:
            holds = job_status("success")
            why = "no if" if holds else "a needed job did not succeed"
        name = str(spec.get("name") or job_id)
        if not holds:
            return [JobRecord(job_id, name if "${{" not in name else job_id, "skipped", why)]
        combos = self._matrix(spec, base)
        if combos is None:
            return [
                JobRecord(
                    job_id, job_id, "ran", why + "; the matrix has an empty vector", "failure"
                )
            ]
        records: list[JobRecord] = []
        for index, combo in enumerate(combos):
            strategy = spec.get("strategy") or {}
            ctx = {
                **base,
                "matrix": normalize(combo),
                "strategy": normalize(
                    {
                        "fail-fast": strategy.get("fail-fast", True),
                        "job-index": index,
                        "job-total": len(combos),
                        "max-parallel": len(combos),
                    }
                ),
            }
            shown_name = to_string(
                render(spec.get("name") or job_id, Scope(ctx, AVAILABLE["jobs.name"]))
            )
            record = JobRecord(
                job_id, shown_name, "ran", why, matrix=combo, permissions=spec.get("permissions")
            )
            if spec.get("concurrency") is not None:
                record.concurrency = self._concurrency(
                    spec["concurrency"], Scope(ctx, AVAILABLE["jobs.concurrency"])
                )
            job_env = {
                **workflow_env,
                **{
                    k: render_string(v, Scope(ctx, AVAILABLE["jobs.env"]))
                    for k, v in (spec.get("env") or {}).items()
                },
            }
            job_workspace = workspace
            if job_workspace.exists():
                shutil.rmtree(job_workspace)
            job_workspace.mkdir()
            defaults = {
                **((workflow.get("defaults") or {}).get("run") or {}),
                **((spec.get("defaults") or {}).get("run") or {}),
            }
            state = _JobState(job_env, {k: str(v) for k, v in defaults.items()})
            job_ctx = {
                **ctx,
                "job": {"status": "success"},
                "runner": normalize(self._runner(temp)),
                "github": normalize({**ctx["github"], "job": job_id}),
            }
            for number, step in enumerate(spec.get("steps") or [], start=1):
                record.steps.append(
                    self._step(number, step, job_ctx, state, home, temp, job_workspace, settings)
                )
                job_ctx["job"] = {"status": "failure" if state.failed else "success"}
            record.result = "failure" if state.failed else "success"
            out_ctx = {**job_ctx, "steps": normalize(state.steps), "env": state.env}
            record.outputs = {
                k: render_string(v, Scope(out_ctx, AVAILABLE["jobs.outputs"]))
                for k, v in (spec.get("outputs") or {}).items()
            }
            records.append(record)
        return records

    def _matrix(self, spec: Mapping[str, Any], base: dict[str, Any]) -> list[dict[str, Any]] | None:
        strategy = spec.get("strategy")
        if not strategy or "matrix" not in strategy:
            return [{}]
        matrix = render(strategy["matrix"], Scope(base, AVAILABLE["jobs.strategy"]))
        if not isinstance(matrix, dict):
            raise RehearsalError(f"strategy.matrix is {matrix!r}, not a mapping")
        include = matrix.pop("include", None) or []
        exclude = matrix.pop("exclude", None) or []
        combos: list[dict[str, Any]] = [{}]
        for key, values in matrix.items():
            if not isinstance(values, list):
                raise RehearsalError(f"matrix vector {key} is {values!r}, not a list")
            if not values:
                return None  # GitHub fails such a job (its exact message not checked here)
            combos = [{**c, key: v} for c in combos for v in values]
        combos = [
            c for c in combos if not any(all(c.get(k) == v for k, v in e.items()) for e in exclude)
        ]
        for extra in include:
            merged = False
            for c in combos:
                if all(c.get(k) == v for k, v in extra.items() if k in matrix):
                    c.update({k: v for k, v in extra.items() if k not in matrix or c.get(k) == v})
                    merged = True
            if not merged:
                combos.append(dict(extra))
        return combos

    # -- one step -------------------------------------------------------------------------

    def _step(
        self,
        number: int,
        step: Mapping[str, Any],
        job_ctx: dict[str, Any],
        state: _JobState,
        home: Path,
        temp: Path,
        workspace: Path,
        settings: Settings,
    ) -> StepRecord:
        ctx = {**job_ctx, "steps": normalize(state.steps), "env": dict(state.env)}

        def step_status(fn: str) -> bool:
            if fn == "success":
                return not state.failed
            if fn == "failure":
                return state.failed
            return fn == "always"

        label = (
            step.get("name")
            or step.get("uses")
            or (str(step.get("run", "")).splitlines() or [""])[0]
        )
        name = to_string(render(label, Scope(ctx, AVAILABLE["steps"])))
        raw_if = step.get("if")
        if raw_if is not None:
            holds, shown = condition(raw_if, Scope(ctx, AVAILABLE["steps.if"], step_status))
            why = f"if: {_one_line(shown)} -> {str(holds).lower()}"
        else:
            holds = not state.failed
            why = "no if" if holds else "an earlier step failed"
        record = StepRecord(number, name, "ran" if holds else "skipped", why)
        step_id = str(step.get("id") or f"__{number}")
        if not holds:
            state.steps[step_id] = {"outputs": {}, "outcome": "skipped", "conclusion": "skipped"}
            return record
        step_env = {
            **state.env,
            **{
                k: render_string(v, Scope(ctx, AVAILABLE["steps"]))
                for k, v in (step.get("env") or {}).items()
            },
        }
        ctx_env = {**ctx, "env": step_env}
        files = {
            key: temp / "_runner_file_commands" / f"{key.lower()}_{number}"
            for key in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY")
        }
        files["GITHUB_OUTPUT"].parent.mkdir(exist_ok=True)
        for path in files.values():
            path.write_text("")
        ok = True
        if "uses" in step:
            uses = str(step["uses"])
            key, _, pin = uses.partition("@")
            record.kind = f"uses {key}@{pin[:12]}"
            record.why += f"; uses {key}@{pin[:7]}"
            action = self.actions.get(key) or self.actions.get("/".join(key.split("/")[:2]))
            if action is None:
                raise RehearsalError(f"step {name!r}: the action {uses} is not emulated")
            inputs = render(step.get("with") or {}, Scope(ctx_env, AVAILABLE["steps"]))
            call = ActionCall(
                uses,
                inputs,
                step_env,
                workspace,
                temp,
                ctx["github"],
                settings,
                self,
                record.notes,
                temp.parent / "artifacts",
                home,
            )
            try:
                record.outputs = action(call)
            except ActionFailure as e:
                record.notes.append(f"error: {e}")
                ok = False
        elif "run" in step:
            record.kind = "run"
            script = temp / f"_step_{number}.sh"
            # GitHub substitutes expressions into the script text itself (the reason our
            # workflows pass values through env: instead).
            script.write_text(render_string(str(step["run"]), Scope(ctx_env, AVAILABLE["steps"])))
            shell = step.get("shell", state.defaults.get("shell"))
            if shell == "bash":
                argv = ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)]
            elif shell is None:
                argv = ["bash", "-e", str(script)]
            else:
                raise RehearsalError(f"step {name!r}: shell {shell!r} is not emulated")
            log = temp / f"_stub_log_{number}"
            log.write_bytes(b"")
            env = self._process_env(step_env, home, temp, workspace, state, files, log)
            where = step.get("working-directory", state.defaults.get("working-directory"))
            cwd = workspace / str(where or "")
            started = time.monotonic()
            proc = subprocess.run(
                argv,
                cwd=cwd,
                env=env,
                capture_output=True,
                text=True,
                check=False,
                stdin=subprocess.DEVNULL,
                timeout=600,
            )
            record.seconds = time.monotonic() - started
            record.stdout, record.stderr = proc.stdout, proc.stderr
            record.commands = _read_log(log)
            shim_log = temp / "_shim_log"
            if shim_log.exists():
                for line in shim_log.read_text().splitlines():
                    entry = json.loads(line)
                    record.notes.append(
                        f"stand-in for generator {entry['verb']}: "
                        + ", ".join(entry.get("faked") or entry.get("added") or [])
                    )
                shim_log.unlink()
            for line in proc.stdout.splitlines():
                m = re.match(r"::(error|warning|notice)(?: [^:]*)?::(.*)", line)
                if m:
                    record.notes.append(f"{m.group(1)}: {m.group(2)}")
            ok = proc.returncode == 0
            if not ok:
                record.notes.append(f"exit code {proc.returncode}")
        else:
            raise RehearsalError(f"step {name!r} has neither run nor uses")
        outputs = {**record.outputs, **_read_outputs(files["GITHUB_OUTPUT"])}
        record.outputs = outputs
        state.env.update(_read_outputs(files["GITHUB_ENV"]))
        state.path[:0] = [line for line in files["GITHUB_PATH"].read_text().splitlines() if line]
        record.summary = files["GITHUB_STEP_SUMMARY"].read_text()
        continue_on_error = step.get("continue-on-error", False)
        if isinstance(continue_on_error, str):
            continue_on_error = bool(render(continue_on_error, Scope(ctx_env, AVAILABLE["steps"])))
        record.outcome = "success" if ok else "failure"
        conclusion = "success" if ok or continue_on_error else "failure"
        state.steps[step_id] = {
            "outputs": outputs,
            "outcome": record.outcome,
            "conclusion": conclusion,
        }
        if conclusion == "failure":
            state.failed = True
        return record

    # -- the runner's environment --------------------------------------------------------------

    def _github(
        self,
        workflow_file: str,
        event: Event,
        payload: dict[str, Any],
        settings: Settings,
        workspace: Path,
        event_path: Path,
    ) -> dict[str, Any]:
        owner = self.repo.split("/")[0]
        ref = event.ref
        pull = payload.get("pull_request")
        if pull:
            ref = f"refs/pull/{pull['number']}/merge"
        return {
            "event_name": event.name,
            "event": payload,
            "ref": ref,
            "ref_name": ref.rsplit("/", 1)[-1] if not pull else f"{pull['number']}/merge",
            "sha": event.sha,
            "head_ref": pull["head"]["ref"] if pull else "",
            "base_ref": pull["base"]["ref"] if pull else "",
            "repository": self.repo,
            "repository_owner": owner,
            "run_id": str(self._run_id),
            "run_number": str(self._run_id - 1000),
            "run_attempt": "1",
            "actor": "a-maintainer",
            "triggering_actor": "a-maintainer",
            "workflow": workflow_file,
            "token": settings.workflow_token,
            "server_url": "https://github.com",
            "api_url": self.api_url,
            "workspace": str(workspace),
            "event_path": str(event_path),
        }

    def _runner(self, temp: Path) -> dict[str, str]:
        return {
            "os": "Linux",
            "arch": "X64",
            "temp": str(temp),
            "name": "rehearsal",
            "environment": "github-hosted",
        }

    def _process_env(
        self,
        step_env: Mapping[str, str],
        home: Path,
        temp: Path,
        workspace: Path,
        state: _JobState,
        files: Mapping[str, Path],
        log: Path,
    ) -> dict[str, str]:
        system_path = os.environ.get("PATH", "/usr/bin:/bin")
        env = {
            "PATH": ":".join([str(STUBS / "bin"), *state.path, system_path]),
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "RUNNER_OS": "Linux",
            "RUNNER_ARCH": "X64",
            "RUNNER_TEMP": str(temp),
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_REPOSITORY": self.repo,
            "GITHUB_REPOSITORY_OWNER": self.repo.split("/")[0],
            "GITHUB_API_URL": self.api_url,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_RUN_ID": str(self._run_id),
            "REHEARSAL_LOG": str(log),
            "REHEARSAL_SHIM_LOG": str(temp / "_shim_log"),
            "REHEARSAL_STUBS": str(STUBS),
            "REHEARSAL_REAL_GIT": self.real_git,
            "REHEARSAL_REAL_PYTHON": self.real_python,
            "REHEARSAL_REMOTE": str(self.remote),
            "REHEARSAL_CHECK_MARK": str(self.check_mark),
            "REHEARSAL_SLOW_CHECK": "1" if self.slow_check else "0",
            "GIT_CONFIG_NOSYSTEM": "1",
            **{key: str(path) for key, path in files.items()},
            **step_env,
        }
        return env

    def _git_config(self, home: Path) -> None:
        owner, name = self.repo.split("/")
        lines = [
            "[init]\n\tdefaultBranch = main\n",
            f'[url "file://{self.generator_dir}"]\n\tinsteadOf = {self.generator_repo}\n',
            f'[url "{self.git_url}"]\n'
            f"\tinsteadOf = https://github.com/{owner}/{name}.git\n"
            f"\tinsteadOf = https://github.example/{owner}/{name}.git\n",
            *(
                f'[url "file://{path}"]\n\tinsteadOf = {url}\n'
                for url, path in self.mirrors.items()
            ),
            # Any other https remote fails at once here: a rehearsal reaches no network.
            '[url "file:///rehearsal-has-no-network/"]\n\tinsteadOf = https://\n',
        ]
        (home / ".gitconfig").write_text("".join(lines))

    def _concurrency(self, spec: Any, scope: Scope) -> str:
        if isinstance(spec, str):
            return f"{render_string(spec, scope)} (cancel-in-progress: false)"
        group = render_string(spec.get("group", ""), scope)
        cancel = spec.get("cancel-in-progress", False)
        cancel_text = (
            to_string(render(cancel, scope)) if isinstance(cancel, str) else str(cancel).lower()
        )
        return f"{group} (cancel-in-progress: {cancel_text})"


def _needs_order(jobs: Mapping[str, Any]) -> list[str]:
    """The job ids in an order where each comes after its `needs` (file order otherwise).

    Raises:
        RehearsalError: a need names no job, or the needs form a cycle (GitHub refuses both).
    """
    order: list[str] = []
    seen: set[str] = set()

    def visit(job_id: str, path: tuple[str, ...]) -> None:
        if job_id in seen:
            return
        if job_id in path:
            raise RehearsalError(f"jobs need each other: {' -> '.join((*path, job_id))}")
        if job_id not in jobs:
            raise RehearsalError(f"{path[-1]} needs {job_id}, which is no job")
        needs = jobs[job_id].get("needs") or []
        for need in [needs] if isinstance(needs, str) else needs:
            visit(need, (*path, job_id))
        seen.add(job_id)
        order.append(job_id)

    for job_id in jobs:
        visit(job_id, ())
    return order


def _ancestors(job_id: str, jobs: Mapping[str, Any]) -> list[str]:
    found: list[str] = []
    stack = [job_id]
    while stack:
        needs = jobs[stack.pop()].get("needs") or []
        for need in [needs] if isinstance(needs, str) else needs:
            if need not in found:
                found.append(need)
                stack.append(need)
    return found


def _merge(records: list[JobRecord]) -> JobRecord:
    """One job's result over its matrix combinations (failure if any failed)."""
    first = records[0]
    result = "failure" if any(r.result == "failure" for r in records) else first.result
    outputs: dict[str, str] = {}
    for r in records:
        outputs.update({k: v for k, v in r.outputs.items() if v})
    return JobRecord(first.job_id, first.name, first.decision, first.why, result, outputs=outputs)


def _read_outputs(path: Path) -> dict[str, str]:
    """name=value lines and name<<DELIMITER blocks ("Workflow commands", "Multiline strings")."""
    values: dict[str, str] = {}
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, _, delimiter = line.partition("<<")
            end = lines.index(delimiter, i + 1)
            values[key] = "\n".join(lines[i + 1 : end])
            i = end + 1
            continue
        if "=" in line:
            key, _, value = line.partition("=")
            values[key] = value
        elif line.strip():
            raise RehearsalError(f"{path.name}: invalid line {line!r}")
        i += 1
    return values


def _read_log(path: Path) -> list[Command]:
    data = path.read_bytes().split(b"\0")
    out: list[Command] = []
    i = 0
    while i < len(data) - 1:
        count = int(data[i])
        fields = [f.decode(errors="replace") for f in data[i + 1 : i + 1 + count]]
        out.append(Command(fields[1], fields[2:], fields[0] == "1"))
        i += 1 + count
    return out


def _one_line(text: str) -> str:
    return " ".join(text.split())


__all__ = [
    "ACTIONS",
    "AVAILABLE",
    "ActionCall",
    "ActionFailure",
    "ActionFn",
    "Command",
    "Event",
    "ExpressionError",
    "JobRecord",
    "Rehearsal",
    "RehearsalError",
    "Run",
    "Settings",
    "StepRecord",
    "dispatch_inputs",
    "filter_matches",
    "parse_workflow",
    "triggers",
]
