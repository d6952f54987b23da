"""Issue 29, the third pass: a hostile ExecuTorch commit of the fixture upstream, synced end to
end by the CLI (`python -m generator sync`: prepare in the unprivileged child with the real
build, publish in the parent) against a bare library remote and the fake GitHub. Only the check
is a stand-in (`sync_fixtures.FakeCheck`: the fixture's sources do not compile for a board).

The commit puts workflow commands (`::set-output`, `::add-mask::`, `::stop-commands::`, the
legacy `##[...]`), Markdown and HTML meant for the pull request body (`<!--`, `<img>`,
`@team` mentions, `Fixes #1`) and ANSI escapes into what a ref controls and sync shows: its
`version.txt`, its commit message, file names under `examples/arduino/` (listed in the body's
upstream section) and the operator names its codegen registers (the body's kernel list).
Each test asserts the protection (nothing the runner reads as a command, nothing rendered
outside code, no terminal escape printed) and that the hostile text really reached sync.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import test_sync_reattack as reattack
from et_fixture import Upstream
from github_fake import FakeGitHub
from sync_fixtures import NAME, OWNER, TOKEN, branches, merge_into_main

ROOT = Path(__file__).resolve().parents[3]

#: Runs first in every Python of the CLI run: the stand-in check, GitHub's throttle off; the
#: build is the real one.
HOOK = f"""
import sys
sys.path.insert(0, {str(ROOT / "tests" / "support")!r})
import functools
import generator.sync.defaults as backends
from sync_fixtures import FakeCheck
backends.default_check = lambda library, options: FakeCheck()(library, options)
backends.GitHubRepo = functools.partial(backends.GitHubRepo, throttle=False)
"""

#: Workflow commands, body Markdown/HTML and a terminal escape, in one string.
HOSTILE = (
    "x`\n::set-output name=ok::true\n::add-mask::AddModel\n::stop-commands::t0k\n"
    "##[error]forged\n\x1b[2J\x1b]0;owned\x07\n<!-- @acme/owners Fixes #1 <img src=x>"
)
#: The same, as a file name can hold it (no "/", no NUL).
HOSTILE_NAME = HOSTILE.replace("/", "|")


def _cli(tmp_path: Path, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    hook = tmp_path / "hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(HOOK)
    full = {**os.environ, **env, "PYTHONPATH": os.pathsep.join([str(hook), str(ROOT)])}
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        cwd=ROOT,
        env=full,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture
def both(upstream: Upstream, gitenv: dict[str, str]) -> dict[str, str]:
    """The git environment of sync (its identity, credential store) that also serves the
    fixture upstream under the GitHub URLs."""
    config = Path(gitenv["GIT_CONFIG_GLOBAL"])
    config.write_text(config.read_text() + f"[include]\n\tpath = {upstream.gitconfig}\n")
    return {**gitenv, "FLATC": str(upstream.flatc)}


def _sync(
    tmp_path: Path, fake: FakeGitHub, remote: Path, env: dict[str, str], *more: str
) -> subprocess.CompletedProcess[str]:
    args = ["sync", "--repo", f"{OWNER}/{NAME}", "--remote", str(remote), "--api-url", fake.url]
    args += ["--cache-dir", str(tmp_path / "cache"), "--executorch-ref", "main", *more]
    return _cli(tmp_path, args, {**env, "GITHUB_TOKEN": TOKEN})


def _hostile_ops(upstream: Upstream) -> dict[str, str | bytes]:
    """The fixture's portable functions.yaml with one more operator named `HOSTILE`, its
    source, and a codegen that takes a name with `::` as the generator does (in full)."""
    yaml = (upstream.executorch / "kernels" / "portable" / "functions.yaml").read_text()
    entry = f"- op: {json.dumps(HOSTILE)}\n"
    entry += "  kernels:\n    - arg_meta: null\n      kernel_name: torch::executor::evil_out\n"
    gen = (upstream.executorch / "codegen" / "gen.py").read_text()
    relu = (upstream.executorch / "kernels" / "portable" / "cpu" / "op_relu.cpp").read_text()
    return {
        "kernels/portable/functions.yaml": yaml + entry,
        "kernels/portable/cpu/op_evil.cpp": relu.replace("relu_out", "evil_out"),
        "codegen/gen.py": gen.replace(
            '"aten::" + e["op"]', '(e["op"] if "::" in e["op"] else "aten::" + e["op"])'
        ),
    }


def _assert_shown_safely(result: subprocess.CompletedProcess[str], body: str) -> None:
    printed = result.stdout + result.stderr
    commands = reattack.runner_commands(printed)
    assert not commands, f"sync printed workflow commands of the ref: {commands}"
    assert "\x1b" not in printed and "\x07" not in printed, "sync printed a terminal escape"
    rendered = reattack._outside_code(body)
    for bad in ("<!--", "<img", "@acme", "Fixes #1", "\x1b"):
        assert bad not in rendered, f"{bad!r} of the ref is rendered in the body"
    assert "### Left to do by hand" in rendered


def test_a_hostile_ref_synced_end_to_end_shows_its_text_only_as_code(
    tmp_path: Path, upstream: Upstream, fake: FakeGitHub, remote: Path, both: dict[str, str]
) -> None:
    """Holds. A first sync of the clean fixture, merged; then a commit whose message and an
    added file's name under examples/arduino/ carry `HOSTILE` (and a changed upstream
    sketch), synced. The pull request opens; its body lists the hostile file name inside code
    only; nothing printed is a workflow command or a terminal escape. (The commit message is
    read by nothing: the upstream section lists files.)"""
    first = _sync(tmp_path, fake, remote, both, "--library-version", "0.2.0")
    assert first.returncode == 0, first.stderr[-2000:]
    (branch,) = (b for b in branches(remote) if b != "main")
    merge_into_main(remote, branch, tmp_path / "merge")
    upstream.commit_executorch(
        {
            f"examples/arduino/{HOSTILE_NAME}.md": "# notes\n",
            "examples/arduino/examples/AddModel/AddModel.ino": "// upstream sketch, changed\n",
        },
        HOSTILE,
    )
    second = _sync(tmp_path, fake, remote, both, "--library-version", "0.3.0")
    assert second.returncode == 0, second.stderr[-3000:]
    body = fake.pulls[2].body
    assert "<!-- @acme\\|owners" in body, "the hostile file name never reached the body"
    assert "AddModel.ino" in body
    _assert_shown_safely(second, body)


@pytest.mark.parametrize(
    ("files", "more"),
    [
        ({"version.txt": HOSTILE + "\n"}, ()),
        ({"version.txt": HOSTILE + "\n"}, ("--library-version", "0.3.0")),
        ("ops", ("--library-version", "0.3.0", "--all-ops")),
    ],
    ids=["version.txt", "version.txt-with-library-version", "operator-name"],
)
def test_hostile_ref_data_is_refused_in_one_message_without_commands(
    tmp_path: Path,
    upstream: Upstream,
    fake: FakeGitHub,
    remote: Path,
    both: dict[str, str],
    files: dict[str, str | bytes] | str,
    more: tuple[str, ...],
) -> None:
    """A `HOSTILE` version.txt (with or without --library-version: it is written into
    library.properties either way) or operator name (an `op:` of functions.yaml, with a
    source and a codegen that registers it) is refused by the prepare child before anything
    is pushed, in a message that is no workflow command and holds no terminal escape. Before
    the fixes the version.txt with --library-version and the operator name were built into
    the library (the first refused only by publish's check of library.properties)."""
    hostile = _hostile_ops(upstream) if isinstance(files, str) else files
    upstream.commit_executorch(hostile, "data")
    result = _sync(tmp_path, fake, remote, both, *more)
    printed = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in printed, printed[-2000:]
    assert "sync --prepare) failed" in printed, printed[-2000:]
    assert not reattack.runner_commands(printed), printed
    assert "\x1b" not in printed and "\x07" not in printed
    assert set(branches(remote)) == {"main"} and not fake.pulls
