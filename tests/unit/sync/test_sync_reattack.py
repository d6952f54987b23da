"""Issue 29, the second review's attacks on the fixes: each test fails on today's code because
of the hole its docstring names (the attack, its impact, a severity and the fix suggested),
and asserts the protection itself, with a check that the attack really ran.

The hostile builds play the untrusted prepare phase of a plain `sync` (the CLI's child,
`generator.sync.phases.ChildPhase`) through `test_sync_secrets.SITECUSTOMIZE`; the hostile
staged folders play a prepare job whose code changed what it staged.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import time
from pathlib import Path

import pytest
import test_sync_attacks as attacks
import test_sync_secrets as secrets_tests
from github_fake import FakeGitHub
from sync_fixtures import NAME, OWNER, SHA_OLD, TOKEN, Runner, branches, git, ls_tree

from generator.sync import stage
from generator.sync.body import PullRequestFacts, commit_message, render_body
from generator.sync.verify import no_workflow_commands
from generator.util.errors import FatalError

#: The sync command line of these tests (`--publish` or nothing added).
ARGS = ["sync", "--repo", f"{OWNER}/{NAME}", "--executorch-ref", "v1.5.1"]
ARGS += ["--library-version", "0.2.0"]


def _sync_args(fake: FakeGitHub, remote: Path, *more: str) -> list[str]:
    return [*ARGS, "--remote", str(remote), "--api-url", fake.url, *more]


def _hooked(code: str, wrap: str) -> str:
    """`test_sync_secrets.SITECUSTOMIZE` whose build is `wrap` (an expression of `options`
    and `_orig_build(options, out)`'s result `built`), after `code`."""
    return (
        f"{secrets_tests.SITECUSTOMIZE}\n{code}\n"
        "_orig_build = hostile_build\n"
        "def hostile_build(options, out):\n"
        "    built = _orig_build(options, out)\n"
        f"    return {wrap}\n"
        "backends.default_build = hostile_build\n"
    )


def _pin_on_main(remote: Path, tmp_path: Path, pin: str) -> None:
    """Give the library repo's main an executorch_pin.txt (a previous sync's pin)."""
    work = tmp_path / "pin-seed"
    git("clone", "--quiet", str(remote), str(work))
    (work / "executorch_pin.txt").write_text(pin + "\n")
    git("add", "executorch_pin.txt", cwd=work)
    git("commit", "--quiet", "-m", "Previous sync", cwd=work)
    git("push", "--quiet", "origin", "main", cwd=work)


# -- HIGH: the publish phase runs git in the ExecuTorch clone the child wrote ---------------

#: A hostile build that plants the build's cached clone of ExecuTorch (it may: the cache is
#: the build's) with a commit of its own, reports that commit as the pin, and sets the clone's
#: `remote.origin.uploadpack`: a shell command git runs for a fetch from a local remote. The
#: command notes that it ran and starts `test_sync_attacks.DAEMON`, which reads the token from
#: `/proc/<git pid>/environ` of the parent's later git commands.
CACHE_CLONE = f"""
DAEMON = {attacks.DAEMON!r}

def _poison_cache(options, built):
    import dataclasses, subprocess
    from pathlib import Path
    from generator.util.cache import default_cache_dir
    from generator.vcs.clones import clone_path
    leak = os.environ["CACHE_LEAK"]
    clone = clone_path(options.executorch_repo, options.cache_dir or default_cache_dir())
    clone.mkdir(parents=True, exist_ok=True)
    who = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")
    env = dict(os.environ, **dict.fromkeys(who, "u@x"))
    def run(*args):
        done = subprocess.run(["git", *args], cwd=clone, env=env, check=True,
                              capture_output=True, text=True)
        return done.stdout.strip()
    run("init", "-q", ".")
    (clone / "version.txt").write_text("1.5.1\\n")
    run("add", "version.txt")
    run("commit", "-qm", "upstream")
    sha = run("rev-parse", "HEAD")
    Path(leak + ".daemon.py").write_text(DAEMON + "\\n_daemon()\\n")
    Path(leak + ".sh").write_text(
        "echo ran >> %s\\n%s %s.daemon.py </dev/null >/dev/null 2>&1\\n"
        % (leak, sys.executable, leak)
    )
    run("config", "remote.origin.url", str(clone))
    run("config", "remote.origin.uploadpack", "sh %s.sh; git-upload-pack" % leak)
    (Path(built.out) / "executorch_pin.txt").write_text(sha + "\\n")
    return dataclasses.replace(built, sha=sha)
"""


def test_publish_runs_the_uploadpack_of_the_cached_executorch_clone_the_child_wrote(
    fake: FakeGitHub,
    remote: Path,
    tmp_path: Path,
    gitenv: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HIGH (plain `sync`, and `--prepare`/`--publish` on one machine; not the workflow,
    whose publish job restores no cache). The publish side's `pull_request_facts` calls
    `generator.sync.upstream.arduino_changes`, which opens the build's cached ExecuTorch clone
    (`<cache>/repos/...`, written by the untrusted child) with GitPython and runs git there:
    rev-list, ls-tree, diff (a promisor fetch of missing blobs) and, when the base branch's
    pin is missing, `git fetch origin <pin>`. That git reads the clone's own `.git/config`,
    which neither the global-config snapshot nor `_SAFE_CONFIG` covers (GitPython's
    `repo.git` does not even add `_SAFE_CONFIG`): `remote.origin.uploadpack`, `core.sshCommand`,
    `protocol.ext.allow` + an `ext::` URL, ... run a program of the ref's choosing after the
    subreaper swept the child's processes and while the askpass folder exists. Here it starts
    a daemon that reads EXECUTORCH_SYNC_GIT_TOKEN from `/proc/<pid>/environ` of the git push
    that follows (git processes are dumpable). Fix: run nothing in the cache from the publish
    side: compute the upstream comparison in the prepare phase and stage it as data (checked
    like report.json, rendered with `inline_code`), or, at least, run those git commands with
    the snapshot config, `GIT_CONFIG_NOSYSTEM`, `-c protocol.allow=never` and no fetch. (In the
    workflow the publish job has no cache, so its body never carries the comparison today.)"""
    _pin_on_main(remote, tmp_path, SHA_OLD)
    leak = tmp_path / "cache_leak.txt"
    daemon_out = tmp_path / "cache_daemon.txt"
    hook = _hooked(CACHE_CLONE, "_poison_cache(options, built)")
    monkeypatch.setattr(secrets_tests, "SITECUSTOMIZE", hook)
    args = _sync_args(fake, remote, "--cache-dir", str(tmp_path / "cache"))
    env = {**gitenv, "GITHUB_TOKEN": TOKEN, "CACHE_LEAK": str(leak), "DAEMON_OUT": str(daemon_out)}
    try:
        result, _ = secrets_tests._cli(tmp_path, args, env, ["CACHE_LEAK"])
        assert Path(f"{leak}.sh").exists(), "the hostile build did not run: " + result.stderr
        assert "opened pull request #1" in result.stdout, result.stderr  # the push happened
        time.sleep(0.5)
        seen = daemon_out.read_text() if daemon_out.exists() else ""
        assert TOKEN not in seen, f"a program the child's clone config named got it: {seen!r}"
        ran = leak.read_text() if leak.exists() else ""
        assert not ran, "the publish side ran the uploadpack of the child's ExecuTorch clone"
    finally:
        pidfile = Path(f"{daemon_out}.pid")
        if pidfile.exists():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)


# -- LOW: git's XDG ignore file, which the snapshot does not cover ---------------------------

#: A hostile build that writes git's per-user ignore file ($XDG_CONFIG_HOME/git/ignore, the
#: default `core.excludesFile`, read whatever `GIT_CONFIG_GLOBAL` names).
XDG_IGNORE = """
def _poison_ignore(built):
    from pathlib import Path
    ignore = Path(os.environ["XDG_CONFIG_HOME"]) / "git" / "ignore"
    ignore.parent.mkdir(parents=True, exist_ok=True)
    ignore.write_text("*.h\\n")
    return built
"""


def test_the_child_writes_gits_xdg_ignore_file_and_publish_pushes_a_tree_without_headers(
    fake: FakeGitHub,
    remote: Path,
    tmp_path: Path,
    gitenv: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """LOW (plain `sync`; the class of the previous review's staged .gitignore, by another
    door). `generator.vcs.git_config` snapshots the global config, but git also reads
    per-user files that are not config: `$XDG_CONFIG_HOME/git/ignore` (or
    `~/.config/git/ignore`, the default `core.excludesFile`) and `.../git/attributes` (the
    default `core.attributesFile`: eol/text conversion, `working-tree-encoding`, `ident`, or a
    `filter=lfs` that the user's own git-lfs config then applies). The child writes them;
    the parent's `git add -A` then leaves out or rewrites files the digest covered, so the
    pushed tree is not the checked one (here every header is dropped). Fix: in the parent's
    git set `core.excludesFile` and `core.attributesFile` (in the snapshot, or `-c` in
    `_SAFE_CONFIG`) to /dev/null or to copies read before the child, and compare the
    committed tree with the staged digest before the push."""
    xdg = tmp_path / "xdg"
    xdg.mkdir()
    hook = _hooked(XDG_IGNORE, "_poison_ignore(built)")
    monkeypatch.setattr(secrets_tests, "SITECUSTOMIZE", hook)
    env = {**gitenv, "GITHUB_TOKEN": TOKEN, "XDG_CONFIG_HOME": str(xdg)}
    result, _ = secrets_tests._cli(tmp_path, _sync_args(fake, remote), env)
    assert (xdg / "git" / "ignore").read_text() == "*.h\n"  # the attack ran
    assert "opened pull request #1" in result.stdout, result.stderr
    branch = next(b for b in branches(remote) if b.startswith("sync/"))
    pushed = ls_tree(remote, branch)
    assert "src/ExecuTorch.h" in pushed, f"the pushed tree lacks the staged headers: {pushed}"


# -- LOW: workflow commands the escaping misses ---------------------------------------------

#: The commands the Actions runner registers (actions/runner at 079cdb1d,
#: src/Runner.Worker/ActionCommandManager.cs: its command extensions and stop-commands).
RUNNER_COMMANDS = (
    "set-env|set-output|save-state|add-mask|add-path|add-matcher|remove-matcher|debug|"
    "warning|error|notice|group|endgroup|echo|stop-commands"
)
#: What .NET's `string.TrimStart()` strips (`char.IsWhiteSpace`), which the runner applies
#: before it looks for `::` (src/Runner.Common/ActionCommand.cs, TryParseV2).
DOTNET_SPACE = (
    " \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
#: The runner's two forms, per line: `::cmd ...::data` after leading white space (TryParseV2),
#: and `##[cmd ...]data` anywhere in the line (TryParse, the legacy form it still accepts).
_V2 = re.compile(rf"^::(?:{RUNNER_COMMANDS})[ :]")
_V1 = re.compile(rf"##\[(?:{RUNNER_COMMANDS})[ \]]")


def runner_commands(text: str) -> list[str]:
    """The lines of `text` (as the runner splits a log: at "\\n") it takes for commands."""
    return [
        line
        for line in text.split("\n")
        if _V2.match(line.lstrip(DOTNET_SPACE)) or _V1.search(line)
    ]


def test_runner_commands_reads_lines_as_the_runner_does() -> None:
    assert runner_commands("a\n  ::error::x\nok ##[add-mask]y\n\\::error::z\n::nothing::") == [
        "  ::error::x",
        "ok ##[add-mask]y",
    ]


@pytest.mark.parametrize(
    "line",
    [
        "checked ##[stop-commands]t0ken",  # legacy form, mid-line
        "##[add-mask]AddModel",  # legacy form, at the start
        "\u00a0::error title=Sync::all good, merge it",  # no-break space before ::
        "\u3000::warning::forged",  # ideographic space before ::
    ],
)
def test_no_workflow_commands_leaves_forms_the_runner_still_reads(line: str) -> None:
    """LOW. `generator.sync.verify.no_workflow_commands` escapes `::` after spaces and tabs
    only, but the runner strips every .NET white space first (TryParseV2's `TrimStart()`:
    U+00A0, U+2000..U+200A, U+3000, ...) and still takes the legacy `##[command]data`
    anywhere in a line (TryParse). A staged report.md (printed when the check failed, and the
    dry run's body) thus issues `##[stop-commands]`, `##[add-mask]` or forged error annotations
    in the job that holds the token. Fix: escape `##[` everywhere (e.g. `#\\#[`) and test the
    `::` prefix after `str.lstrip()` with no argument plus U+FEFF/U+200B, or indent every
    printed line of staged text with a visible prefix."""
    out = no_workflow_commands(f"# Check\n{line}\n")
    assert runner_commands(f"# Check\n{line}\n"), "the line is no runner command"
    assert not runner_commands(out), f"printed as a workflow command: {out!r}"


def test_publish_prints_a_manifest_version_as_workflow_commands_in_its_error(
    fake: FakeGitHub, remote: Path, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    """LOW. The escaping covers what publish emits, not its error messages: read_stage's
    `_check_own_facts` puts the manifest's library_version (any JSON string; the manifest
    is not digested) unquoted into the FatalError that the CLI prints to stderr, which the
    runner parses too. A version of "0.2.0\\n::error ...::..." gives a forged annotation, and
    "::stop-commands::" or "::add-mask::" lines, in the publish job. Fix: `!r` (as for the
    pin) for every staged value in a message, or one `no_workflow_commands` (fixed as above)
    in `error_handler` for every message."""
    staged, _ = attacks._prepared(tmp_path, fake, remote, gitenv)
    manifest = json.loads((staged / "manifest.json").read_text())
    manifest["build"]["library_version"] = (
        "0.2.0\n::error title=Sync::the check passed, merge it\n::stop-commands::t0k"
    )
    (staged / "manifest.json").write_text(json.dumps(manifest))
    publish = _sync_args(fake, remote, "--publish", str(staged), "--digest", manifest["digest"])
    result, _ = secrets_tests._cli(tmp_path, publish, {**gitenv, "GITHUB_TOKEN": TOKEN})
    assert result.returncode == 1 and "the staged manifest says library" in result.stderr
    commands = runner_commands(result.stdout + result.stderr)
    assert not commands, f"publish printed workflow commands of the manifest: {commands}"


# -- MEDIUM: the pull request body takes staged text as Markdown -----------------------------


def _facts(**hostile: object) -> PullRequestFacts:
    base: dict[str, object] = {
        "ref": "v1.5.1",
        "sha": "b" * 40,
        "base_pin": "a" * 40,
        "upstream_version": "1.5.1",
        "library_version": "1.5.1",
        "base_version": "1.5.0",
        "op_set": ["aten::add.out"],
        "kernels": ["aten::add.out"],
        "base_kernels": ["aten::add.out"],
        "added": [],
        "removed": [],
        "changed": ["src/a.h"],
        "check_markdown": "**check passed**",
        "runs": [("AddModel", ["ok"])],
        **hostile,
    }
    return PullRequestFacts(**base)  # type: ignore[arg-type]


def _outside_code(markdown: str) -> str:
    """`markdown` without its fenced blocks and code spans (CommonMark: a backtick run closes
    only a span opened by a run of the same length)."""
    text = re.sub(r"^(`{3,})[^\n]*\n.*?^\1[ \t]*$", "", markdown, flags=re.M | re.S)
    return re.sub(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)", "", text, flags=re.S)


#: A staged string that closes the code span it is put in, then opens an HTML block (a line
#: starting with `<!--`: CommonMark, HTML blocks, type 2) that runs to the end of the body.
INJECTED = "x`\n\n<!-- @acme/owners Fixes #1"


def test_outside_code_keeps_only_what_markdown_renders() -> None:
    assert _outside_code("a `b <!--` c\n```\n<!-- @x\n```\n``d ` e`` f") == "a  c\n\n f"
    assert "@acme" not in _outside_code(render_body(_facts()))


@pytest.mark.parametrize(
    "hostile",
    [
        {"upstream_version": INJECTED},
        {"op_set": [INJECTED]},
        {"runs": [("AddModel (x)**\n\n<!-- @acme/owners Fixes #1", ["ok"])]},
        {"check_markdown": "</details>\n\n@acme/owners Fixes #1 merge it\n\n<!--"},
    ],
    ids=["upstream_version", "op_set", "board_name", "report_md"],
)
def test_the_pr_body_renders_staged_text_as_markdown(hostile: dict[str, object]) -> None:
    """MEDIUM (review deception, from the bot's account). The body escapes upstream file
    names with `inline_code`, but other staged text reaches it raw: the manifest's
    upstream_version (the ref's version.txt, verbatim) and op_set inside single backticks,
    a board's name from report.json in `**name**` (`emulated_runs`), and report.md (the
    untrusted check's Markdown) whole. A backtick ends the span, and then `<!--` hides the
    rest of the body from the reviewer (file counts, the upstream section's superseded-file
    warning, "Left to do by hand"), `@org/team` notifies anyone, and `Fixes #1` closes an
    issue when the pull request is merged. Fix: every staged string through `inline_code`
    (or a fence); render the full check report in publish from report.json (validated)
    instead of taking report.md, or show it in a fenced block."""
    body = render_body(_facts(**hostile))
    rendered = _outside_code(body)
    assert "<!--" not in rendered, "staged text opens an HTML comment that hides the body"
    assert "@acme/owners" not in rendered, "staged text @mentions in the body"
    assert "### Left to do by hand" in rendered


# -- LOW: credentials whose names lack the listed words --------------------------------------


def test_child_env_passes_credentials_the_name_rule_does_not_know() -> None:
    """LOW. `child_env` drops names matching TOKEN|SECRET|PASSWORD|PASSWD|PRIVATE_KEY|
    CREDENTIAL|_PAT$, case-insensitively (GITHUB_TOKEN_X, gh_token and GH_TOKEN are dropped:
    that held), but lets through every name with an allowed prefix otherwise: a second PAT
    named GITHUB_PAT_RW (`_PAT` anchored at the end), GITHUB_APP_KEY, ARDUINO_API_KEY or
    EXECUTORCH_ARDUINO_SIGNING_KEY reach the untrusted build. Fix: add `_PAT(_|$)`, `KEY`,
    `AUTH` and `PASS` to `SECRET_NAME`, or narrow the prefixes to the names the build reads."""
    env = {
        "GITHUB_PAT_RW": "github_pat_11AAAA",
        "GITHUB_APP_KEY": "-----BEGIN RSA KEY-----",
        "ARDUINO_API_KEY": "ak_live_1",
        "EXECUTORCH_ARDUINO_SIGNING_KEY": "sk_1",
        "GITHUB_TOKEN_X": "dropped",
        "gh_token": "dropped",
        "PATH": "/bin",
    }
    kept = sorted(k for k in stage.child_env(env) if k != "PATH")
    assert not kept, f"the prepare child gets {kept}"


# -- LOW: a manifest fact of the wrong type is a traceback -----------------------------------


def test_publish_ends_in_a_traceback_on_a_manifest_fact_of_another_type(
    fake: FakeGitHub, remote: Path, tmp_path: Path, gitenv: dict[str, str]
) -> None:
    """LOW ("bad input gets a clear error, no traceback"). read_stage checks the manifest's
    version, pin and ref, but builds `BuildResult(**facts)` without checking the other facts'
    types: `"op_set": 7` passes every check, and publish, after cloning the library repo
    with the token, dies in `pull_request_facts` (`list(7)`) with a Python traceback. Fix:
    check every staged fact's type in read_stage (str, list of str, int) and refuse the
    manifest with a FatalError naming the field."""
    staged, _ = attacks._prepared(tmp_path, fake, remote, gitenv)
    manifest = json.loads((staged / "manifest.json").read_text())
    manifest["build"]["op_set"] = 7
    (staged / "manifest.json").write_text(json.dumps(manifest))
    publish = _sync_args(fake, remote, "--publish", str(staged), "--digest", manifest["digest"])
    result, _ = secrets_tests._cli(tmp_path, publish, {**gitenv, "GITHUB_TOKEN": TOKEN})
    assert result.returncode != 0 and fake.pulls == {}
    assert "Traceback" not in result.stderr, result.stderr[-600:]
    assert "op_set" in result.stderr


# -- MEDIUM: the token in the environment of git's ssh -------------------------------------


def test_a_git_over_ssh_gets_the_token_in_its_environment(
    sync: Runner, tmp_path: Path, gitenv: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """MEDIUM (plain `sync` with an ssh `--remote`, which `token_url_problem` lets pass as
    carrying no token). `GitEnv.run` puts EXECUTORCH_SYNC_GIT_TOKEN into the environment of
    every clone, fetch, push and ls-remote, whatever the URL, so the ssh that git starts for
    an ssh remote inherits it, and so does every program ssh runs from its config:
    `ProxyCommand`, `LocalCommand`, `KnownHostsCommand`, `Match exec`. That config is
    `~/.ssh/config`, which the untrusted child (the same user) may write: the snapshot
    covers git's config only. Here a stand-in for ssh (`GIT_SSH_COMMAND`, since OpenSSH reads
    the passwd entry's home, not $HOME, and a test may not write there) records the
    environment it was given. Fix: give the token variable only to a git whose URL
    `token_url_problem` says carries the token (https, loopback http), and run ssh as
    `ssh -F /dev/null -o BatchMode=yes` (or with a config read before the child)."""
    leak = tmp_path / "ssh_env.txt"
    stand_in = tmp_path / "ssh.sh"
    stand_in.write_text(f"#!/bin/sh\nenv > {leak}\nexit 1\n")
    stand_in.chmod(0o755)
    monkeypatch.setenv("GIT_SSH_COMMAND", str(stand_in))
    with pytest.raises(FatalError):
        sync(remote="ssh://git@example.invalid/acme/ExecuTorch.git")
    seen = leak.read_text()  # git did run its ssh
    assert "GIT_ASKPASS=" in seen
    assert TOKEN not in seen, "the ssh transport (and what its config runs) got the token"


# -- LOW: names that a case-insensitive or HFS+ file system reads as git's own ----------------


@pytest.mark.parametrize(
    "name",
    [
        ".gitattribute\u017f",  # LONG S: case-folds to "s" (.gitattributes)
        ".gitmodule\u017f",  # the same for .gitmodules
        ".g\u200cit",  # ZERO WIDTH NON-JOINER: HFS+ ignores it (.git; git's protectHFS)
        ".git\ufeff",  # BYTE ORDER MARK: ignored by HFS+ too
    ],
)
def test_the_digest_accepts_names_other_file_systems_read_as_gits(
    tmp_path: Path, name: str
) -> None:
    """LOW (a publish on macOS or Windows: a plain `sync` there, or `--publish` run by hand).
    `_staged_files` compares `name.lower().rstrip(". ")` with GIT_NAMES; `str.lower` keeps
    U+017F (Unicode CaseFolding.txt folds it to "s", and its upper case is "S": a volume that
    compares names case-insensitively by Unicode may take it for "s"), and the code points
    HFS+ ignores in names (git/git `utf8.c`, `next_hfs_char`, the CVE-2014-9390 fix:
    U+200C..U+200F, U+202A..U+202E, U+206A..U+206F, U+FEFF) are kept. On such a file system
    the copied folder is git's `.git` (a nested repository whose config runs: the first
    review's critical) or its `.gitattributes` / `.gitmodules`. Fix: compare
    `unicodedata.normalize("NFC", name).casefold()` with the HFS-ignorable code points
    removed (as git's `is_hfs_dotgit`), or refuse every name outside `[A-Za-z0-9._+-]`."""
    tree = tmp_path / "library"
    (tree / "src" / name).mkdir(parents=True)
    (tree / "src" / name / "config").write_text("[core]\n\tfsmonitor = touch /tmp/x\n")
    with pytest.raises(FatalError, match="a name git interprets"):
        stage.tree_digest(tree)


# -- LOW: trailers in the sync commit's message ----------------------------------------------


def test_the_commit_message_takes_trailers_from_the_staged_upstream_version() -> None:
    """LOW. `commit_message` writes the manifest's upstream_version (the ref's version.txt,
    any JSON string) as it is: its line breaks add lines to the sync commit's message, so a
    ref chooses trailers the bot's commit carries, e.g. `Co-authored-by:` (GitHub then shows
    that person as an author of the commit) or `Signed-off-by:`. Fix: refuse a staged
    upstream_version with control characters (read_stage), or write it with `!r`."""
    message = commit_message(
        "v1.5.1",
        "b" * 40,
        "1.5.1",
        "1.5.1\n\nCo-authored-by: Someone Else <someone@example.invalid>",
    )
    forged = [line for line in message.splitlines() if line.startswith("Co-authored-by:")]
    assert not forged, f"the staged version adds trailers to the commit: {forged}"


# -- LOW: the runner's file commands are found without their variables -----------------------


def test_child_env_hides_the_runner_file_command_variables_not_their_folder(
    tmp_path: Path,
) -> None:
    """LOW (a plain `sync` run inside an Actions step; the workflow does not, and the
    threat model says such a step's shell holds the token anyway). `RUNNER_ENVS` keeps
    GITHUB_ENV, GITHUB_PATH, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY from the child "so a step
    cannot set later steps' environment", but `RUNNER_TEMP` passes (the `RUNNER_` prefix),
    and the runner keeps those files in `$RUNNER_TEMP/_runner_file_commands/` (actions/runner,
    `FileCommandManager`): the child lists that folder and appends `BASH_ENV=` or
    `NODE_OPTIONS=--require ...` to set_env_<id>, running its code in every later step of the
    job, whatever secrets those hold. Fix: refuse a plain `sync` when GITHUB_ACTIONS=true
    (use the two jobs), or give the child no RUNNER_*/GITHUB_WORKSPACE paths."""
    commands = tmp_path / "_temp" / "_runner_file_commands"
    commands.mkdir(parents=True)
    set_env = commands / "set_env_0f1e2d3c"
    set_env.write_text("")
    env = {
        "GITHUB_ENV": str(set_env),
        "RUNNER_TEMP": str(tmp_path / "_temp"),
        "GITHUB_ACTIONS": "true",
        "PATH": "/bin",
    }
    kept = stage.child_env(env)
    assert "GITHUB_ENV" not in kept  # the variable is withheld
    reachable = [
        name for name, value in kept.items() if value and set_env.is_relative_to(Path(value))
    ]
    assert not reachable, f"the child finds {set_env.name} below {reachable}"


# -- LOW: a deep staged tree is a traceback --------------------------------------------------

#: Folders deep: past Python's recursion limit (1000), with a path of 2,200 characters,
#: within PATH_MAX (4096).
DEPTH = 1100


def test_the_digest_of_a_very_deep_staged_tree_is_no_traceback(tmp_path: Path) -> None:
    """LOW (no traceback on bad input; publish dies before anything is cloned). `tree_digest`
    walks the staged tree with `os.walk`, which recurses once per folder level in Python 3.11
    (the version the workflows install): a staged library nested 1,100 folders deep (a path
    of 2,200 characters, well within PATH_MAX) raises RecursionError, which `error_handler`
    does not turn into a message. Fix: walk with an explicit stack (or `os.fwalk` with a depth
    count) and refuse a tree deeper, or with more files, than a generated library can be
    (a FatalError naming the limit)."""
    tree = tmp_path / "library"
    tree.mkdir()
    fds = [os.open(tree, os.O_RDONLY)]
    try:
        for _ in range(DEPTH):
            os.mkdir("a", dir_fd=fds[-1])
            fds.append(os.open("a", os.O_RDONLY, dir_fd=fds[-1]))
        os.close(os.open("x.h", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fds[-1]))
        try:
            stage.tree_digest(tree)  # a digest, or a refusal with a message: both are fine
        except FatalError:
            pass
        except RecursionError:
            pytest.fail("tree_digest raised RecursionError: a traceback in publish", False)
    finally:
        os.unlink("x.h", dir_fd=fds[-1])
        for parent in reversed(fds[:-1]):
            os.close(fds.pop())
            os.rmdir("a", dir_fd=parent)
        os.close(fds.pop())


# -- LOW: a deeply nested staged JSON file is a traceback ----------------------------------


@pytest.mark.parametrize("name", ["manifest.json", "report.json", "upstream.json"])
def test_a_staged_json_nested_past_the_parsers_stack_is_a_message(
    tmp_path: Path, name: str
) -> None:
    """LOW (no traceback on bad input; publish dies before anything is cloned). json.loads
    raises RecursionError, not JSONDecodeError, on arrays nested deeper than its stack: 200,000
    levels (400 kB, far under MAX_REPORT_BYTES) in any staged JSON file ended publish in a
    Python traceback. Fix: read_stage turns it into the "not a folder `sync --prepare`
    wrote" refusal."""
    for part in ("manifest.json", "report.json", "upstream.json", "report.md"):
        (tmp_path / part).write_text("{}")
    (tmp_path / name).write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(FatalError, match=r"is not a folder `sync --prepare` wrote \(Recursion"):
        stage.read_stage(tmp_path)


# -- checked, holds: hostile file names in the staged tree -----------------------------------


@pytest.mark.parametrize(
    "name",
    ["src/x\n::error title=Sync::the check passed, merge it\n.h", "src/##[add-mask]y.h"],
)
def test_publish_prints_no_workflow_command_of_a_staged_file_name(
    fake: FakeGitHub, remote: Path, tmp_path: Path, gitenv: dict[str, str], name: str
) -> None:
    """A staged file whose name holds a newline and `::error`, or `##[add-mask]`, under a
    consistent (restamped) manifest: publish's lint and messages print no workflow command of
    it (the first is refused by the OS rules, the second is pushed)."""
    staged, _ = attacks._prepared(tmp_path, fake, remote, gitenv)
    (staged / "library" / name).write_text("int x;\n")
    digest = attacks._restamp(staged)
    publish = _sync_args(fake, remote, "--publish", str(staged), "--digest", digest)
    result, _ = secrets_tests._cli(tmp_path, publish, {**gitenv, "GITHUB_TOKEN": TOKEN})
    assert result.returncode == (1 if "\n" in name else 0), result.stderr[-600:]
    commands = runner_commands(result.stdout + result.stderr)
    assert not commands, f"publish printed workflow commands of a file name: {commands}"


@pytest.mark.parametrize(
    "name", [".github/workflows/evil.yml", "README.md", "CHANGELOG.md", "other/x.txt"]
)
def test_publish_pushes_no_staged_file_outside_the_generated_paths(
    fake: FakeGitHub, remote: Path, tmp_path: Path, gitenv: dict[str, str], name: str
) -> None:
    """A staged library with a file outside `GENERATED_PATHS` (a workflow, the repo's own
    README, any other folder), under a consistent (restamped) manifest: publish pushes only the
    generated paths, so the sync branch never holds it."""
    staged, _ = attacks._prepared(tmp_path, fake, remote, gitenv)
    (staged / "library" / name).parent.mkdir(parents=True, exist_ok=True)
    (staged / "library" / name).write_text("on: push # planted\n")
    digest = attacks._restamp(staged)
    publish = _sync_args(fake, remote, "--publish", str(staged), "--digest", digest)
    result, _ = secrets_tests._cli(tmp_path, publish, {**gitenv, "GITHUB_TOKEN": TOKEN})
    pushed = {b: sha for b, sha in branches(remote).items() if b != "main"}
    assert result.returncode == 0 and len(pushed) == 1, result.stderr[-600:]
    for sha in pushed.values():
        assert name not in ls_tree(remote, sha) or "planted" not in git(
            "show", f"{sha}:{name}", cwd=remote
        )


# -- LOW: a staged file name that is not UTF-8 is a traceback --------------------------------


def test_a_staged_name_that_is_not_utf8_is_a_message(tmp_path: Path) -> None:
    """LOW (no traceback on bad input; publish dies before anything is cloned). A staged file
    named with bytes that are not UTF-8 (`src/\\xff\\xfe.h`, which Linux allows) reached
    `rel.encode()` in `tree_digest` as lone surrogates: a UnicodeEncodeError traceback. Fix:
    `_check_name` refuses the name with a message."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "ok\u00e9.h").write_text("int x;\n")
    plain = stage.tree_digest(tmp_path)
    bad = os.path.join(os.fsencode(tmp_path / "src"), b"\xff\xfe.h")
    with open(bad, "w") as f:
        f.write("int y;\n")
    with pytest.raises(FatalError, match=r"holds 'src/\\udcff\\udcfe.h', a name that is not UTF-8"):
        stage.tree_digest(tmp_path)
    os.unlink(bad)
    assert stage.tree_digest(tmp_path) == plain


@pytest.mark.parametrize("name", ["manifest.json", "report.json", "report.md", "upstream.json"])
def test_a_staged_part_that_is_a_folder_is_a_message(tmp_path: Path, name: str) -> None:
    """LOW (no traceback on bad input; publish dies before anything is cloned). A staged
    `manifest.json` (or report) that is a folder opened fine with O_RDONLY, and `os.fdopen`
    then raised IsADirectoryError before the regular-file check: a traceback. Fix: the check
    comes before fdopen."""
    for part in ("manifest.json", "report.json", "upstream.json", "report.md"):
        (tmp_path / part).write_text("{}")
    (tmp_path / name).unlink()
    (tmp_path / name).mkdir()
    with pytest.raises(FatalError, match=rf"the staged .*{name} is not a regular file"):
        stage.read_stage(tmp_path)
