"""Thin git helpers for `sync` and `release` (GitPython): clone, read files at a revision,
commit and tag as the bot, push with a lease (the versions a clone publishes:
`generator.vcs.versions`).

The token never reaches git's argv, a remote URL or any config: commands that may talk to a
remote run with `GIT_ASKPASS` pointing at a throw-away script that prints the token from an
environment variable set only for that process, and with `-c credential.helper=` so no
configured helper (e.g. `store`) is asked to save the credentials git used.

The token comes from a `TokenSource`, asked again for each git command that talks to the
remote (clone, fetch, push, pull, ls-remote): a fixed token (`StaticToken`) answers the same
each time; a GitHub App's installation tokens (`generator.sync.app`) expire after an hour, so
that source mints a new one when the one it holds is near its end, and a push at the end of
a three-hour sync gets a token that is valid then.

The token goes only where `generator.util.urls.token_url_problem` allows (https; plain http only to
loopback): `clone` checks the URL git will really fetch from (`git ls-remote --get-url`, which
applies `url.<base>.insteadOf`) before it connects, and the clone's fetch and push URLs
(`git remote get-url --all [--push] origin`: insteadOf, pushInsteadOf, `pushurl`) before
anything is pushed; and the askpass script answers only prompts for an allowed URL, which
covers a redirect (git names the URL it was redirected to when it asks).

Plain http (loopback only) bypasses any proxy: git runs with `no_proxy` naming loopback
(`generator.util.urls.no_proxy_with_loopback`), or `http_proxy` / `http.proxy` would send the
request, Basic auth and all, to the proxy's machine.

The bot's identity is checked as git stores it (`check_identity`): git strips leading and
trailing "crud" and drops `<`, `>` and newlines (git `ident.c`, `strbuf_addstr_without_crud`),
so a name it would change is refused up front instead of committed changed, which would make
the next sync take its own commits for someone else's.
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from git import Blob, Git, GitCommandError, Repo
from git.exc import BadName

from generator.library.facts import LibraryFacts, read_facts
from generator.util.errors import FatalError
from generator.util.tempdirs import owned_temp_dir
from generator.util.urls import (
    REFUSAL,
    carries_token,
    check_token_url,
    no_proxy_with_loopback,
    refuse_transport,
)
from generator.vcs.failures import redact_urls

# The bot's identity lives in vcs/identity.py; these names stay importable from here.
from generator.vcs.identity import DEFAULT_BOT_EMAIL as DEFAULT_BOT_EMAIL
from generator.vcs.identity import DEFAULT_BOT_NAME as DEFAULT_BOT_NAME
from generator.vcs.identity import Identity as Identity
from generator.vcs.identity import check_identity as check_identity
from generator.vcs.identity import git_stored as git_stored

#: The environment variable the askpass script reads the token from (set for git only).
TOKEN_ENV = "EXECUTORCH_SYNC_GIT_TOKEN"
#: GitHub accepts any user name with a token as the password; this is the documented one.
TOKEN_USER = "x-access-token"
#: Every sync branch starts with this (`sync/executorch-<sha12>`); other open sync pull
#: requests (heads under it) are superseded, and `--base` may not be one.
SYNC_PREFIX = "sync/"

#: Options put before every git command: no credential helper may store (or offer) a
#: password, no signing prompt, no hooks of the machine, no file-system monitor (a
#: `core.fsmonitor` of any config git reads is a program git runs in status, add, commit),
#: and no per-user ignore or attribute rules (their defaults, `$XDG_CONFIG_HOME/git/ignore`
#: and `.../git/attributes` (git-config(1), core.excludesFile, core.attributesFile), are
#: files an untrusted build of the same user may write: they would leave out or rewrite what
#: is committed).
_SAFE_CONFIG = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.excludesFile=/dev/null",
    "-c",
    "core.attributesFile=/dev/null",
    "-c",
    "credential.helper=",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "core.hooksPath=/dev/null",
)

#: The askpass script: the interpreter running sync, on `_ASKPASS_PY` (no secret in either).
_ASKPASS_SH = """#!/bin/sh
exec {python} -I {script} "$@"
"""
#: It answers through `generator.util.urls.askpass_reply` (the one rule for where the token goes),
#: imported from the folder this generator runs from; the token comes from the environment.
_ASKPASS_PY = """import os, sys
sys.path.insert(0, {root!r})
from generator.util.urls import askpass_reply
answer, refusal = askpass_reply(" ".join(sys.argv[1:]), {user!r}, os.environ.get({env!r}, ""))
if answer is None:
    print(refusal, file=sys.stderr)
    sys.exit(1)
print(answer)
"""
#: The folder holding the `generator` package (a checkout's root, or site-packages).
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]


class TokenSource(Protocol):
    """Where git commands (and GitHub API calls) get their token from."""

    @property
    def name(self) -> str:
        """How messages name the credential ("GITHUB_TOKEN", "the GitHub App's installation
        token"); never the secret itself."""
        ...

    def current(self) -> str:
        """A token that is valid now and for a while yet (a source that mints tokens mints
        one when it holds none or the one it holds is near its end).

        Raises:
            FatalError: a new token could not be had (the message says why).
        """
        ...

    def secrets(self) -> Collection[str]:
        """Every secret this source has held or used so far (tokens, keys), to redact."""
        ...


@dataclass(frozen=True)
class StaticToken:
    """A token that stays the same for the whole run (GITHUB_TOKEN, a SYNC_TOKEN)."""

    token: str = field(repr=False)
    name: str = "GITHUB_TOKEN"

    def current(self) -> str:
        """The token."""
        return self.token

    def secrets(self) -> Collection[str]:
        """The token."""
        return (self.token,)


#: git verbs that talk to the remote, and so get the token (others run without it).
_REMOTE_VERBS = frozenset({"clone", "fetch", "push", "pull", "ls-remote"})


def _talks_to_remote(args: Sequence[str]) -> bool:
    """Whether `git args...` connects to a remote (`ls-remote --get-url` only prints a URL)."""
    rest = list(args)
    while rest and rest[0] in ("-c", "-C"):  # git's own options before the verb
        rest = rest[2:]
    return bool(rest) and rest[0] in _REMOTE_VERBS and "--get-url" not in rest


def _as_source(token: str | TokenSource | None) -> TokenSource | None:
    """A string token as a `StaticToken` (an empty one as None); a source as it is."""
    if isinstance(token, str):
        return StaticToken(token) if token else None
    return token


class GitEnv:
    """Environment for git commands: askpass + token, no prompts, the machine identity masked.

    Args:
        env: variables added to the environment of each git process.
        token: the token (a string, made a `StaticToken`), a `TokenSource` asked for each git
            command that talks to the remote, or None (no token).
    Attributes:
        env: as given; token: the `TokenSource` (None without a token).
    """

    def __init__(self, env: dict[str, str], token: str | TokenSource | None) -> None:
        self.env = env
        self.token: TokenSource | None = _as_source(token)

    def redact(self, text: str) -> str:
        """`text` with every secret of the token source replaced by `***` and no URL's
        user-info."""
        text = redact_urls(text)
        if self.token is None:
            return text
        for secret in sorted(set(self.token.secrets()), key=len, reverse=True):
            if secret:
                text = text.replace(secret, "***")
        return text

    def run(self, args: Sequence[str], cwd: Path | None = None) -> str:
        """Run `git <safe config> args...` in `cwd`; returns stdout (stripped). A command that
        talks to the remote gets the token source's current token (in the askpass variable).

        Raises:
            GitFailure: git exited non-zero (callers turn it into a FatalError).
            FatalError: the token source could not give a token.
        """
        env = {**self.env, TOKEN_ENV: ""}
        if self.token is not None and _talks_to_remote(args) and self._carries(args, cwd):
            env[TOKEN_ENV] = self.token.current()
        status, out, err = Git(str(cwd) if cwd else None).execute(
            ["git", *_SAFE_CONFIG, *args],
            env=env,
            with_extended_output=True,
            with_exceptions=False,
        )
        if status != 0:
            raise GitFailure(args[0], int(status), str(out), str(err))
        return str(out).strip()

    def _carries(self, args: Sequence[str], cwd: Path | None) -> bool:
        """Whether the remote of `git args...` (a remote-talking verb) is a URL the token goes
        over (`carries_token`: https, loopback http), as git resolves it: a remote's fetch
        or push URL, or a URL after insteadOf. Any other (ssh, a path, one not resolved)
        gets no token in its environment: git's ssh runs what `~/.ssh/config` says
        (ProxyCommand, LocalCommand, Match exec), which the untrusted build may write."""
        operand = _remote_operand(args)
        if operand is None:
            return False
        plain = GitEnv(self.env, None)
        push = ["--push"] if args[0] == "push" else []
        queries = (
            ["remote", "get-url", "--all", *push, "--", operand],
            ["ls-remote", "--get-url", "--", operand],
        )
        for query in queries:
            try:
                urls = plain.run(query, cwd=cwd).splitlines()
            except GitFailure:
                continue
            return bool(urls) and all(carries_token(url) for url in urls)
        return False


def _remote_operand(args: Sequence[str]) -> str | None:
    """The remote (a name or a URL) `git args...` talks to: the first operand after the verb
    (after `--` for clone), or None."""
    rest = list(args[1:])
    if "--" in rest and args[0] == "clone":
        rest = rest[rest.index("--") + 1 :]
    for i, arg in enumerate(rest):
        if arg in ("--", "--end-of-options"):
            return rest[i + 1] if i + 1 < len(rest) else None
        if not arg.startswith("-"):
            return arg
    return None


class GitFailure(Exception):
    """A git command exited non-zero (internal; turned into FatalError by the caller)."""

    def __init__(self, verb: str, status: int, stdout: str, stderr: str) -> None:
        super().__init__(f"git {verb} exited with {status}")
        self.status = status
        self.stdout = stdout
        self.stderr = stderr


@contextmanager
def git_env(token: str | TokenSource | None, global_config: str | None = None) -> Iterator[GitEnv]:
    """Yield a `GitEnv` whose askpass script answers with `token`; the script is removed after.

    The script holds no secret (it prints `$EXECUTORCH_SYNC_GIT_TOKEN`), so nothing written to
    disk contains the token; it answers only prompts for a URL the token may go to
    (`generator.util.urls.askpass_reply`). Its folder is an `owned_temp_dir`. A fixed token is in
    the environment from the start; a `TokenSource` is asked for each command that talks to the
    remote (`GitEnv.run`).

    Args:
        global_config: config text (`generator.vcs.git_config.snapshot_global_config`) that
            every git of this block reads as its global config instead of the user's files
            (written into the askpass folder; `GIT_CONFIG_GLOBAL` names it, in `os.environ`
            too for GitPython's own git, and is restored after); None: the user's.
    """
    with owned_temp_dir("sync-askpass") as tmp, _global_config(tmp, global_config) as config:
        program = tmp / "askpass.py"
        program.write_text(
            _ASKPASS_PY.format(root=str(_PACKAGE_ROOT), user=TOKEN_USER, env=TOKEN_ENV)
        )
        script = tmp / "askpass.sh"
        script.write_text(
            _ASKPASS_SH.format(python=shlex.quote(sys.executable), script=shlex.quote(str(program)))
        )
        script.chmod(stat.S_IRWXU)
        env = {
            "GIT_ASKPASS": str(script),
            "GIT_TERMINAL_PROMPT": "0",
            # an ssh remote must fail instead of prompting
            "GIT_SSH_COMMAND": os.environ.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes"),
            # set per command, for a remote the token goes to only (`GitEnv.run`)
            TOKEN_ENV: "",
        }
        # plain http (loopback only) must not go through a proxy to another machine
        no_proxy = no_proxy_with_loopback(os.environ.get("no_proxy") or os.environ.get("NO_PROXY"))
        env |= {"no_proxy": no_proxy, "NO_PROXY": no_proxy}
        if config is not None:
            env["GIT_CONFIG_GLOBAL"] = str(config)
        yield GitEnv(env, token)


@contextmanager
def _global_config(folder: Path, text: str | None) -> Iterator[Path | None]:
    """With `text`: write it to `folder/gitconfig` and name it in `os.environ`'s
    `GIT_CONFIG_GLOBAL` for the block (restored after); yields its path, or None."""
    if text is None:
        yield None
        return
    path = folder / "gitconfig"
    path.write_text(text)
    before = os.environ.get("GIT_CONFIG_GLOBAL")
    os.environ["GIT_CONFIG_GLOBAL"] = str(path)
    try:
        yield path
    finally:
        if before is None:
            os.environ.pop("GIT_CONFIG_GLOBAL", None)
        else:
            os.environ["GIT_CONFIG_GLOBAL"] = before


def describe_git_failure(error: GitFailure, genv: GitEnv, what: str) -> FatalError:
    """Turn a failed git command into a FatalError that says what to do (token redacted).

    Args:
        error: the failure; its stderr is matched against git's and GitHub's messages.
        what: what we were doing, e.g. "push sync/executorch-0123456789ab to origin".
    """
    stderr = genv.redact(f"{error.stdout}\n{error.stderr}").strip()
    lines = [
        line.strip()
        for line in stderr.splitlines()
        if line.strip().startswith(("remote:", "!", "error:", "fatal:"))
    ]
    detail = "\n".join(lines[-6:]) if lines else f"git exited with {error.status}"
    low = stderr.lower()
    if REFUSAL.lower() in low:
        hint = (
            "git was sent (by a redirect or by git's own config) to a URL the token may not go "
            "to, and was not given it: use the https URL of the library repo (plain http only "
            "to this machine)"
        )
    elif "protected branch" in low or "gh006" in low:
        hint = (
            f"a branch protection rule covers the sync branch: exempt {SYNC_PREFIX}* from it (sync "
            "pushes only there, never to the base branch) or let the bot push to it"
        )
    elif "stale info" in low:
        hint = (
            "someone else pushed to the sync branch since it was fetched; run sync again to "
            "regenerate on top of the current state"
        )
    elif "[rejected]" in low or "[remote rejected]" in low or "pre-receive hook declined" in low:
        hint = "the remote rejected the push; see its message above and check the repo's rules"
    elif (
        "authentication failed" in low
        or "could not read username" in low
        or "could not read password" in low
        or "returned error: 401" in low
    ):
        name = genv.token.name if genv.token is not None else "GITHUB_TOKEN"
        hint = f"the remote refused the credentials: check that {name} is valid"
    elif "returned error: 403" in low or "permission to" in low:
        hint = "the token may not push to this repo: give it contents: write"
    elif (
        "could not resolve host" in low
        or "connection refused" in low
        or "failed to connect" in low
        or "timed out" in low
        or "network is unreachable" in low
    ):
        hint = "the remote cannot be reached: check the network and --remote"
    elif "does not appear to be a git repository" in low or "not found" in low:
        hint = "the remote does not exist or the token cannot see it: check --repo / --remote"
    else:
        hint = "see git's message"
    return FatalError(f"could not {what}: {detail}\n{hint}")


def clone(remote: str, dest: Path, genv: GitEnv, source: str = "--remote") -> Repo:
    """Clone `remote` (all branches and tags, full history) into `dest`.

    With a token, the URL git will fetch from (after its insteadOf rewriting) is checked
    before git connects, and the clone's fetch and push URLs before it returns: see
    `check_remote_urls`.

    Args:
        source: where `remote` came from, for messages ("--remote", "the GitHub API ...").
    Raises:
        FatalError: the token may not go to a URL git would use (nothing was sent); the
            remote is unreachable, unknown or refuses the credentials.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    check_fetch_url(remote, genv, source, dest.parent)
    try:
        genv.run(["clone", "--quiet", "--no-checkout", "--", remote, str(dest)])
    except GitFailure as e:
        raise describe_git_failure(e, genv, f"clone the library repo {remote}") from None
    repo = Repo(dest)
    check_remote_urls(repo, genv, source, remote)
    return repo


def check_fetch_url(remote: str, genv: GitEnv, source: str, cwd: Path) -> None:
    """Refuse `remote` before anything connects: an option-like one, a remote helper
    (`fd::`, `ext::`: a program, not a server; `git clone fd::3` waits forever), given or
    reached by git's insteadOf rewriting (`git ls-remote --get-url`, run in `cwd`), and, with
    a token, a URL the token may not go to.

    Raises:
        FatalError: naming `source` and the URL.
    """
    if remote.startswith("-"):
        raise FatalError(f"{source} {remote!r} starts with '-': give a git URL or path")
    refuse_transport(remote, option=source)
    fetch_url = genv.run(["ls-remote", "--get-url", remote], cwd=cwd)
    refuse_transport(fetch_url, option=f"{source} (as git's config rewrites it)")
    if genv.token:
        check_token_url(fetch_url, source, given=remote)


def check_remote_urls(repo: Repo, genv: GitEnv, source: str, given: str) -> None:
    """Refuse (with a token) when a URL git uses for `origin` is one the token may not go to:
    every fetch URL and every push URL, as git resolves them (`git remote get-url --all` and
    `--all --push`: `url.<base>.insteadOf`, `pushInsteadOf`, a configured `pushurl`).

    Args:
        source, given: where the remote came from and what it said, for the message.
    Raises:
        FatalError: naming the URL (no user-info) and how it came about; nothing was pushed.
    """
    if not genv.token:
        return
    cwd = Path(repo.working_dir)
    for flags in (["--all"], ["--all", "--push"]):
        for url in genv.run(["remote", "get-url", *flags, "origin"], cwd=cwd).splitlines():
            check_token_url(url.strip(), source, given=given)


def remote_branch_sha(repo: Repo, branch: str) -> str | None:
    """The SHA of `origin/<branch>` as cloned, or None if the remote has no such branch."""
    ref = f"refs/remotes/origin/{branch}"
    try:
        return str(repo.commit(ref).hexsha)
    except (ValueError, GitCommandError, BadName):
        return None


def file_at(repo: Repo, rev: str, path: str) -> str | None:
    """The text of `path` at `rev`, or None if it does not exist there."""
    try:
        blob = repo.commit(rev).tree / path
    except KeyError:
        return None
    data: bytes = blob.data_stream.read()
    return data.decode("utf-8", errors="replace")


def files_under(repo: Repo, rev: str, folder: str) -> dict[str, str]:
    """Text of every file below `folder` at `rev`, keyed by path relative to the repo root."""
    try:
        tree = repo.commit(rev).tree / folder
    except KeyError:
        return {}
    result: dict[str, str] = {}
    for item in tree.traverse():
        if isinstance(item, Blob):
            result[str(item.path)] = item.data_stream.read().decode("utf-8", errors="replace")
    return result


def facts_at(repo: Repo, rev: str) -> LibraryFacts:
    """The facts of the library at `rev` (`generator.library.facts.read_facts`: extras/library.json,
    else what an older generator's library says in its other files)."""
    return read_facts(
        lambda path: file_at(repo, rev, path), lambda folder: files_under(repo, rev, folder)
    )


def remote_branches(repo: Repo, prefix: str) -> list[str]:
    """Names of the remote's branches (as cloned) that start with `prefix`, sorted."""
    start = "refs/remotes/origin/"
    out = repo.git.for_each_ref("--format=%(refname)", start + prefix.rstrip("/"))
    names = (line[len(start) :] for line in out.splitlines() if line.startswith(start))
    return sorted(name for name in names if name.startswith(prefix))


def foreign_commits(repo: Repo, tip: str, base_rev: str, identity: Identity) -> list[str]:
    """Commits on `tip` that `base_rev` lacks whose author is not `identity` (a maintainer's
    work on the sync branch), as "<short sha> <author name> <email>: <subject>" lines.

    Name and email are compared as git stores them (`git_stored`), byte for byte."""
    found: list[str] = []
    bot = (git_stored(identity.name), git_stored(identity.email))
    for commit in repo.iter_commits(f"{base_rev}..{tip}"):
        author = commit.author
        if (author.name, author.email) == bot:
            continue
        subject = str(commit.summary)
        found.append(f"{commit.hexsha[:12]} {author.name} <{author.email}>: {subject}")
    return found


def checkout_branch(repo: Repo, branch: str, start: str, genv: GitEnv) -> None:
    """Create (or reset) local `branch` at `start` and check it out into the work tree."""
    genv.run(["checkout", "--quiet", "-B", branch, start], cwd=Path(repo.working_dir))


def stage(repo: Repo, paths: Sequence[str], genv: GitEnv) -> None:
    """Stage additions, changes and deletions under `paths` (`git add -A -- paths`)."""
    genv.run(["add", "-A", "--", *paths], cwd=Path(repo.working_dir))


def staged_changes(
    repo: Repo, rev: str, paths: Sequence[str], genv: GitEnv
) -> list[tuple[str, str]]:
    """What the index changes against `rev` under `paths`.

    Returns:
        [(status, path)] with status A (added), D (deleted) or M (changed); renames are
        reported as a deletion and an addition.
    """
    out = genv.run(
        ["diff", "--cached", "--name-status", "--no-renames", rev, "--", *paths],
        cwd=Path(repo.working_dir),
    )
    changes: list[tuple[str, str]] = []
    for line in out.splitlines():
        status, _, path = line.partition("\t")
        changes.append((status[:1], path))
    return changes


def commit(repo: Repo, message: str, identity: Identity, genv: GitEnv) -> str:
    """Commit the index as `identity` (author and committer); returns the new SHA.

    The identity goes in through GIT_AUTHOR_* / GIT_COMMITTER_*, which override any user.name /
    user.email of the machine.
    """
    env = {
        **genv.env,
        "GIT_AUTHOR_NAME": identity.name,
        "GIT_AUTHOR_EMAIL": identity.email,
        "GIT_COMMITTER_NAME": identity.name,
        "GIT_COMMITTER_EMAIL": identity.email,
    }
    GitEnv(env, genv.token).run(
        ["commit", "--quiet", "--no-verify", "-m", message], cwd=Path(repo.working_dir)
    )
    return str(repo.head.commit.hexsha)


def push_with_lease(
    repo: Repo, local: str, branch: str, expected: str | None, genv: GitEnv, what: str
) -> None:
    """Push `local` (a SHA, or "" to delete) to `refs/heads/<branch>` on origin, by force but
    only if the remote branch still is `expected` (None: it must not exist).

    Raises:
        FatalError: the push was rejected (lease, protection, hooks), unauthenticated or the
            remote unreachable; the message says which.
    """
    ref = f"refs/heads/{branch}"
    try:
        genv.run(
            [
                "push",
                f"--force-with-lease={ref}:{expected or ''}",
                "origin",
                f"{local}:{ref}",
            ],
            cwd=Path(repo.working_dir),
        )
    except GitFailure as e:
        raise describe_git_failure(e, genv, what) from None
