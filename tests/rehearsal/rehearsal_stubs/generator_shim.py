"""`python -m generator ARGS` inside a workflow rehearsal (`tests/rehearsal/workflow_rehearsal.py`).

The `python` stub runs this file with the real interpreter. It imports the generator the
workflow installed (its `PYTHONPATH`, the generator's repo checked out at the pinned
commit) and runs the real `generator.cli.main.main(ARGS)`, with three stand-ins:

- `sync`: the build and the check are `tests/sync_fixtures.FakeBuild` and `FakeCheck` (the
  real ones need ExecuTorch sources and the board toolchains); PyGithub does not sleep
  between retries; the App tokens' clock is `clock` (the check may take 61 minutes on it,
  as on the fake GitHub's); and `--api-url $GITHUB_API_URL` is added when the workflow gave none,
  since the generator has no other way to learn the API's address (a runner sets
  GITHUB_API_URL; the generator does not read it). Everything else is the real sync:
  the token from GITHUB_TOKEN, the clone, lint, commit, push, the pull request, the 403s.
- `check`: `run_check` returns a fixed passing report (sizes of `FakeCheck`) for the
  examples asked for, and refuses one the library lacks; lint (whose findings fail the
  report), the Markdown, `--json` and the step summary are the real command's.
- every other verb (`release`, `lint`, `workflows`): the real thing, nothing replaced.

Each stand-in appends one JSON line to `$REHEARSAL_SHIM_LOG` (verb and what it faked), so the
transcript can say what was not real.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[2]


def _note(entry: dict[str, Any]) -> None:
    log = os.environ.get("REHEARSAL_SHIM_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


#: How long the check takes on the rehearsal's clock when REHEARSAL_SLOW_CHECK=1 (as
#: `workflow_rehearsal.Rehearsal.clock` has it): longer than an installation token lives.
CHECK_TAKES = timedelta(minutes=61)


def clock() -> datetime:
    """The rehearsal's time: real time, plus `CHECK_TAKES` once a slow check has run."""
    mark = os.environ.get("REHEARSAL_CHECK_MARK", "")
    slow = os.environ.get("REHEARSAL_SLOW_CHECK") == "1" and mark and Path(mark).exists()
    return datetime.now(UTC) + (CHECK_TAKES if slow else timedelta())


def _fake_sync() -> None:
    from sync_fixtures import REFS, FakeBuild, FakeCheck

    from generator.sync import run as sync_command
    from generator.sync.github import GitHubRepo

    real_run_sync = sync_command.run_sync

    accepted = inspect.signature(GitHubRepo).parameters
    extra: dict[str, Any] = {}
    if "clock" in accepted:
        extra["clock"] = clock
    if "say" in accepted:  # as the real connect passes it
        extra["say"] = lambda text: print(text, file=sys.stderr, flush=True)

    def connect(url: str, repo: str, credentials: Any) -> GitHubRepo:
        return GitHubRepo(url, repo, credentials, sleep=lambda s: None, throttle=False, **extra)

    # A commit SHA builds too (an untrusted ref for the cache tests: anyone's commit).
    refs = {**REFS, **{entry[0]: entry for entry in REFS.values()}}
    fake_build, fake_check = FakeBuild(refs), FakeCheck()

    def build(options: Any, out: Path) -> Any:
        # The real step cache under the build's --cache-dir: a run whose cache was restored
        # says its build came from it, as the real build's notes do ("from the step cache").
        result = fake_build(options, out)
        if options.cache_dir is not None:
            from generator.util.cache import StepCache

            steps, key = StepCache(Path(options.cache_dir)), {"sha": result.sha}
            if steps.get("fake-build", key, lambda value: value or None) is None:
                steps.put("fake-build", key, {"sha": result.sha})
                _note({"verb": "build", "faked": ["every step run (cold cache)"]})
            else:
                _note({"verb": "build", "faked": ["every step from the step cache (warm)"]})
        return result

    def check(library: Path, options: Any) -> Any:
        report = fake_check(library, options)
        # The scenario's clock may take the check as long (`REHEARSAL_CHECK_MARK`).
        mark = os.environ.get("REHEARSAL_CHECK_MARK")
        if mark:
            Path(mark).touch()
        return report

    faked = functools.partial(real_run_sync, build=build, check=check, connect=connect)
    sync_command.run_sync = faked
    # A generator with the two phases (issue 29): a plain sync runs `sync --prepare` in a
    # child, started through this shim too, whose build and check are these.
    from generator.sync import defaults

    defaults.default_build = build
    defaults.default_check = check
    # `sync --publish` passes its connect to run_sync itself (overriding the one above).
    defaults.default_connect = connect  # type: ignore[assignment]
    try:
        from generator.sync import stage
    except ImportError:
        stage = None  # type: ignore[assignment]
    if stage is not None and hasattr(stage, "CHILD_COMMAND"):
        stage.CHILD_COMMAND = [sys.executable, str(Path(__file__).resolve())]
    _note({"verb": "sync", "faked": ["build (FakeBuild)", "check (FakeCheck)", "retry sleeps"]})


class _Report:
    """What `generator.cli.check.run` reads of a report, for a passing check."""

    def __init__(self, examples: list[str]) -> None:
        from sync_fixtures import FakeCheck

        self.errors: list[str] = []
        self.examples = examples
        self.flash, self.ram = FakeCheck().flash, FakeCheck().ram

    @property
    def passed(self) -> bool:
        return not self.errors

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "errors": self.errors,
            "examples": [
                {"example": name, "sizes": {"flash": self.flash, "ram": self.ram}, "runs": []}
                for name in self.examples
            ],
        }

    def to_markdown(self) -> str:
        verdict = "passed" if self.passed else "FAILED"
        names = ", ".join(self.examples) or "no examples"
        return f"**check {verdict}** (rehearsal stand-in): {names}"


def _fake_check() -> None:
    from generator.check import run as check_command
    from generator.util.errors import FatalError

    def run_check(library: Path, *, examples: Any = None, **options: Any) -> _Report:
        present = sorted(
            p.parent.name for p in library.glob("examples/*/*.ino") if p.stem == p.parent.name
        )
        names = list(examples) if examples else present
        _note({"verb": "check", "faked": ["run_check"], "examples": names})
        unknown = sorted(set(names) - set(present))
        if unknown:  # as the real check refuses an example the library lacks
            raise FatalError(f"{library} has no example {', '.join(unknown)}")
        return _Report(names)

    check_command.run_check = run_check  # type: ignore[assignment]


def main(argv: list[str]) -> int:
    """Run `python -m generator argv` with the stand-ins above; returns its exit code."""
    # After the workflow's PYTHONPATH (the pinned generator): the tests' helpers.
    sys.path.append(str(TESTS / "support"))
    verb = next((a for a in argv if not a.startswith("-")), "")
    if verb == "sync":
        if not any(a == "--api-url" or a.startswith("--api-url=") for a in argv):
            argv = [*argv, "--api-url", os.environ["GITHUB_API_URL"]]
            _note({"verb": "sync", "added": ["--api-url $GITHUB_API_URL"]})
        _fake_sync()
    elif verb == "check":
        _fake_check()
    from generator.cli.main import main as generator_main

    return generator_main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
