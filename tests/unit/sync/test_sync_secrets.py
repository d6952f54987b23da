"""Issue 29: the ExecuTorch ref is untrusted, and building and checking it runs its code. The
CLI's sync runs that part in a child process that never sees the library repo's token: not in
its environment, not in `/proc/self/environ`, not in its parent's `/proc/<ppid>/environ`
(the parent is non-dumpable, and the child lacks CAP_SYS_PTRACE even as root).

`python -m generator sync` runs as a real subprocess, with GITHUB_TOKEN set (and a copy of it
under another name), against a bare library remote and the fake GitHub. A `sitecustomize`
on PYTHONPATH swaps the real build and check for the fakes of sync_fixtures in every Python
process of that run; the fake build plays hostile upstream code: it reads what it can of the
environment and writes it into the library tree, which sync then pushes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from github_fake import FakeGitHub
from sync_fixtures import NAME, OWNER, TOKEN, branches, git

from generator.sync import stage

ROOT = Path(__file__).resolve().parents[3]
LEAK_FILE = "extras/environ_seen.txt"

#: Runs first in every Python of the CLI run (parent and child): the fakes for the real build,
#: check and GitHub's throttle. The fake build reads the environment like upstream code could.
SITECUSTOMIZE = f"""
import os, sys
sys.path.insert(0, {str(ROOT / "tests" / "support")!r})
import functools
import generator.sync.defaults as backends
import generator.sync.run as command
from sync_fixtures import REFS, FakeBuild, FakeCheck

def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read().replace(b"\\0", b"\\n").decode("utf-8", "replace")
    except OSError as e:
        return "unreadable: %s" % type(e).__name__

def hostile_build(options, out):
    seen = {{
        "/proc/self/environ": _read("/proc/self/environ"),
        "/proc/ppid/environ": _read("/proc/%d/environ" % os.getppid()),
        "/proc/ppid/mem": _read("/proc/%d/mem" % os.getppid())[:40],
        "os.environ": "\\n".join("%s=%s" % kv for kv in sorted(os.environ.items())),
    }}
    with open(os.environ["LEAK_OUT"], "w") as f:
        f.write(repr(seen))
    text = "\\n".join("== %s\\n%s" % kv for kv in seen.items()) + "\\n"
    return FakeBuild(dict(REFS), extra={{{LEAK_FILE!r}: text}})(options, out)

def fake_check(library, options):
    return FakeCheck()(library, options)

backends.default_build = hostile_build
backends.default_check = fake_check
# an in-process run_sync (the code before issue 29) would take its defaults
command.run_sync.__kwdefaults__.update(build=hostile_build, check=fake_check)
backends.GitHubRepo = functools.partial(backends.GitHubRepo, throttle=False)
"""


def _cli(
    tmp_path: Path, args: list[str], env: dict[str, str], hook_vars: Sequence[str] = ()
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Run the CLI with the `SITECUSTOMIZE` hook; `hook_vars`: more variables of `env` the
    hook reads in the unprivileged child (`stage.CHILD_ENV_EXTRA` lets them through)."""
    hook = tmp_path / "hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE)
    leak = tmp_path / "leak.txt"
    full = {
        **os.environ,
        **env,
        "PYTHONPATH": os.pathsep.join([str(hook), str(ROOT)]),
        "LEAK_OUT": str(leak),
        stage.CHILD_ENV_EXTRA: ",".join(["LEAK_OUT", *hook_vars]),
    }
    result = subprocess.run(
        [sys.executable, "-m", "generator", *args],
        cwd=ROOT,
        env=full,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return result, leak


def test_the_build_never_sees_the_token_and_the_pull_request_still_opens(
    fake: FakeGitHub, remote: Path, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    args = ["sync", "--repo", f"{OWNER}/{NAME}", "--remote", str(remote)]
    args += ["--api-url", fake.url, "--executorch-ref", "v1.5.1", "--library-version", "0.2.0"]
    env = {**gitenv, "GITHUB_TOKEN": TOKEN, "COPY_OF_THE_TOKEN": TOKEN}
    result, leak = _cli(tmp_path, args, env)
    assert result.returncode == 0, result.stderr
    assert "opened pull request #1" in result.stdout
    seen = leak.read_text()
    assert "/proc/self/environ" in seen and "PATH=" in seen
    assert TOKEN not in seen
    assert TOKEN not in result.stdout + result.stderr
    branch = next(b for b in branches(remote) if b.startswith("sync/"))
    pushed = git("show", f"{branch}:{LEAK_FILE}", cwd=remote)
    assert "== /proc/self/environ" in pushed and "== /proc/ppid/environ" in pushed
    assert TOKEN not in pushed
    own = pushed.split("== /proc/ppid/environ")[0] + pushed.split("== os.environ")[1]
    assert "PATH=" in own and "COPY_OF_THE_TOKEN" not in own and "GITHUB_TOKEN" not in own
    if os.geteuid() != 0:
        # non-dumpable: same-user processes may not read it (root may, where the kernel lets
        # CAP_SYS_PTRACE-less root through: the parent scrubbed the token from it)
        assert "== /proc/ppid/environ\nunreadable: PermissionError" in pushed
    assert TOKEN not in git("log", "--all", "-p", "--format=%B", cwd=remote)
    assert all(TOKEN not in p.body + p.title for p in fake.pulls.values())


def test_prepare_refuses_a_token_and_publish_refuses_a_changed_tree(
    fake: FakeGitHub, remote: Path, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    staged = tmp_path / "staged"
    common = ["sync", "--repo", f"{OWNER}/{NAME}", "--remote", str(remote)]
    common += ["--api-url", fake.url, "--executorch-ref", "v1.5.1", "--library-version", "0.2.0"]
    refused, _ = _cli(tmp_path, [*common, "--prepare", str(staged)], {**gitenv, "SYNC_TOKEN": "x"})
    assert refused.returncode == 1 and "unset SYNC_TOKEN" in refused.stderr
    assert not staged.exists()

    prepared, _ = _cli(tmp_path, [*common, "--prepare", str(staged)], gitenv)
    assert prepared.returncode == 0, prepared.stderr
    digest = prepared.stdout.strip().splitlines()[-1]
    assert digest == stage.tree_digest(staged / "library")
    manifest = json.loads((staged / "manifest.json").read_text())
    assert manifest["digest"] == digest and manifest["build"]["library_version"] == "0.2.0"

    publish = [*common, "--publish", str(staged), "--digest", digest]
    with_token = {**gitenv, "GITHUB_TOKEN": TOKEN}
    wrong, _ = _cli(tmp_path, [*publish[:-1], "sha256:" + "0" * 64], with_token)
    assert wrong.returncode == 1 and "refusing to publish it" in wrong.stderr
    (staged / "library" / "src" / "ExecuTorch.h").write_text("#pragma once // changed\n")
    changed, _ = _cli(tmp_path, publish, with_token)
    assert changed.returncode == 1 and "changed after it was prepared" in changed.stderr
    (staged / "library" / "src" / "ExecuTorch.h").write_text("#pragma once\n")
    (staged / "library" / "src" / "link.h").symlink_to("/proc/self/environ")
    linked, _ = _cli(tmp_path, publish, with_token)
    assert linked.returncode == 1 and "no regular file or folder" in linked.stderr
    (staged / "library" / "src" / "link.h").unlink()
    assert fake.pulls == {}

    published, _ = _cli(tmp_path, publish, with_token)
    assert published.returncode == 0, published.stderr
    assert "opened pull request #1" in published.stdout


def test_child_env_drops_the_secrets_and_their_copies() -> None:
    env = {"GITHUB_TOKEN": "t0ken", "SYNC_APP_PRIVATE_KEY": "k3y", "GH": "t0ken", "PATH": "/bin"}
    assert stage.child_env(env, ["other"]) == {"PATH": "/bin"}
    assert stage.child_env({"LANG": "has other in it", "TERM": "y"}, ["other"]) == {"TERM": "y"}
    runner = {"GITHUB_ENV": "/f", "GITHUB_OUTPUT": "/o", "GITHUB_SHA": "abc"}
    assert stage.child_env(runner) == {"GITHUB_SHA": "abc"}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_make_nondumpable_in_a_child_process() -> None:
    code = (
        "import ctypes; from generator.sync.stage import make_nondumpable as m; "
        "print(m(), ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["True", "0"]


def test_the_digest_ignores_empty_folders_an_artifact_upload_drops(tmp_path: Path) -> None:
    tree = tmp_path / "library"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "a.h").write_text("int a;\n", encoding="utf-8")
    before = stage.tree_digest(tree)
    (tree / "examples" / "Empty").mkdir(parents=True)
    assert stage.tree_digest(tree) == before
    (tree / "src" / "a.h").write_text("int b;\n", encoding="utf-8")
    assert stage.tree_digest(tree) != before


@pytest.mark.parametrize(
    ("name", "value", "passed"),
    [
        ("https_proxy", "http://bot:pr0xy-pw@proxy.corp:3128", "http://proxy.corp:3128"),
        ("HTTP_PROXY", "http://bot:pr0xy-pw@proxy.corp:3128/", "http://proxy.corp:3128/"),
        ("HTTPS_PROXY", "bot:pr0xy-pw@proxy.corp:3128", "proxy.corp:3128"),
        ("http_proxy", "http://proxy.corp:3128", "http://proxy.corp:3128"),
        # an unencoded @, / or ? in the password (Python's urllib still reads it as one)
        ("https_proxy", "http://bot:pr0xy@pw@proxy.corp:3128", "http://proxy.corp:3128"),
        ("https_proxy", "http://bot:pr0xy/pw@proxy.corp:3128", "http://proxy.corp:3128"),
        ("HTTPS_PROXY", "HTTP://bot:pr0xy?pw@[::1]:3128", "HTTP://[::1]:3128"),
    ],
)
def test_child_env_gives_the_proxies_without_their_credentials(
    name: str, value: str, passed: str
) -> None:
    # issue 29: the prepare child runs the ref's code, which can read its environment; the
    # proxy stays usable, its password does not go there.
    assert stage.child_env({name: value}) == {name: passed}
    assert stage.child_env({"ALL_PROXY": "socks5://bot:pr0xy-pw@proxy.corp:1080"}) == {}


def test_child_env_gives_a_proxy_named_in_the_extra_list_without_its_credentials() -> None:
    # EXECUTORCH_SYNC_CHILD_ENV may let ALL_PROXY or ftp_proxy in; not their passwords.
    env = {
        stage.CHILD_ENV_EXTRA: "ALL_PROXY,ftp_proxy",
        "ALL_PROXY": "socks5h://bot:pr0xy-pw@proxy.corp:1080",
        "ftp_proxy": "bot:pr0xy-pw@proxy.corp:21",
    }
    kept = stage.child_env(env)
    assert (kept["ALL_PROXY"], kept["ftp_proxy"]) == ("socks5h://proxy.corp:1080", "proxy.corp:21")
