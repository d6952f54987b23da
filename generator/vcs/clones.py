"""The cache's clones: one per repository URL under `<cache>/repos/`, made partial
(`--filter=blob:none`: only the blobs of checked-out paths are ever fetched) and sparse, and
reused across runs.

A run that was stopped (Ctrl-C, SIGTERM, SIGKILL) leaves nothing that breaks the next one:
the next run, holding the cache lock, removes git's stale lock files and half-made clones and
says so (`open_clone`). What is fetched into a clone is `resolve.py`'s; what is checked out of
it, `checkout.py`'s.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import time
from contextlib import suppress
from pathlib import Path

import git

from generator.util.cache import repos_dir, stderr_line
from generator.util.errors import FatalError
from generator.util.urls import REPO_OPTION, display_url
from generator.vcs.failures import git_reason, hint

#: A clone being made is named `.new-<slug>` until it is configured (then renamed).
NEW_PREFIX = ".new-"
#: git's lock files are `<file>.lock` (lockfile.c); a ref name cannot end so (check-ref-format).
LOCK_SUFFIX = ".lock"

#: `-c` options of every git run in a cached clone: gc and maintenance in the foreground (no
#: git of ours outlives its run), and no submodule recursion: the checkout holds gitlinks
#: (third-party/flatcc, ...) that git counts as submodules, and a fetch of every branch
#: (a short SHA's lookup) failed on "Could not access submodule 'third-party/flatcc'". The
#: components are cached clones of their own, pinned by those gitlinks. No reflogs: a cache
#: needs none, and a short SHA's fetch of every branch (8,387 on the ExecuTorch mirror) would
#: write one file per branch that every run's `_repair` walks.
#: Nor may a git run in a clone execute a program the clone holds (issue 29): a hook
#: (`post-checkout` runs on every checkout) or a `core.fsmonitor` (run by status and
#: checkout) that code of an earlier build wrote into the cache; the command line's `-c`
#: wins over the clone's own config.
_GIT_OPTIONS = [
    "core.logAllRefUpdates=false",
    "gc.autoDetach=false",
    "maintenance.autoDetach=false",
    "fetch.recurseSubmodules=false",
    "submodule.recurse=false",
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
]

#: `info/attributes` of every clone: it takes precedence over the tree's own `.gitattributes`
#: (gitattributes(5)), which are the ref's, untrusted. No `filter` (a smudge driver that any
#: config git reads defines, git-lfs's on many machines, would run for every file checked
#: out, and git-lfs would fetch from the URL a `.lfsconfig` of the ref names), and no
#: `text`, `eol`, `ident` or `working-tree-encoding` rewriting: the work tree holds the
#: commit's bytes, as PROVENANCE says.
NEUTRAL_ATTRIBUTES = "* -filter -text -eol -ident -working-tree-encoding\n"


def _slug(url: str) -> str:
    url = display_url(url)  # a folder name never carries credentials
    tail = re.sub(r"[^A-Za-z0-9]+", "-", url.rstrip("/").removesuffix(".git")).strip("-")[-60:]
    return f"{tail}-{hashlib.sha256(url.encode()).hexdigest()[:10]}"


def clone_path(url: str, cache_dir: Path) -> Path:
    """Where the cached clone of `url` lives under the cache root `cache_dir`."""
    return repos_dir(cache_dir) / _slug(url)


def git_error(e: git.GitCommandError) -> str:
    """git's own reason for the failure `e` (`failures.git_reason`: no credentials)."""
    return git_reason(str(e.stderr or e), e.status if isinstance(e.status, int) else None)


def _origin(repo: git.Repo) -> tuple[str | None, str | None]:
    """(the URL of `origin`, None) when git works in the cached clone `repo`, else (None,
    git's message): one `rev-parse` and one `config` (every run asks it of every clone)."""
    try:
        repo.git.rev_parse("--git-dir")
        return str(repo.git.config("--get", "remote.origin.url")), None
    except git.GitCommandError as e:
        return None, str(e.stderr or e)


def _usable(repo: git.Repo) -> str | None:
    """Why git will not work in the cached clone `repo` (its message), or None if it will."""
    return _origin(repo)[1]


def _discard(path: Path, why: str) -> None:
    """Delete the cached clone `path` that git refused (`why`: git's message).

    Raises:
        FatalError: it cannot be deleted; git's message, the folder and the fixes.
    """
    try:
        shutil.rmtree(path)
    except OSError as e:
        raise FatalError(
            f"git cannot use the cached clone {path}: {git_reason(why)}\nIt could not be "
            f"deleted either ({e.strerror or e}). "
            f"{hint(why, url_option=REPO_OPTION, folder=str(path))}"
            " (or delete the folder yourself)"
        ) from None


def _repair(repos: Path, path: Path) -> None:
    """Remove what a stopped run of ours left: the half-made clones (`.new-*`) in `repos`,
    and git's lock files (`<file>.lock`: index, HEAD, refs, config, shallow, sparse-checkout)
    in the cached clone `path`. Each repair is said on stderr.

    Called with the cache lock held: no run of ours is using a clone, and none runs git in
    the background after it ends (auto-gc is kept in the foreground, `_GIT_OPTIONS`). A git
    that a run killed alone left running is waited for (`_wait_for_orphans`); a lock file
    left after that is a dead git's, which git would refuse to work past ("Unable to create
    ….lock: File exists").

    Raises:
        FatalError: a lock file cannot be removed (the path, and to delete the clone).
    """
    for partial in sorted(repos.glob(f"{NEW_PREFIX}*")):
        stderr_line(f"removing {partial}, a clone that a stopped run left half made")
        shutil.rmtree(partial, ignore_errors=True)
    git_dir = path / ".git"
    if not git_dir.is_dir():
        return
    stale = _lock_files(git_dir)
    if stale:
        # A git still running there removes its own locks when it ends.
        _wait_for_orphans(path)
        stale = _lock_files(git_dir)
    for lock in stale:
        try:
            lock.unlink()
        except FileNotFoundError:
            pass
        except OSError as e:
            raise FatalError(
                f"the cached clone {path} holds {lock.relative_to(path)}, left by a run "
                f"that was stopped, and it cannot be removed ({e.strerror or e}): delete "
                f"the clone {path} and run again"
            ) from None
    if stale:
        names = ", ".join(p.relative_to(path).as_posix() for p in stale)
        stderr_line(
            f"the cached clone {path} held git's lock files of a run that was stopped; "
            f"removed {names}"
        )


#: A folder of loose objects (`objects/<2 hex digits>`): git writes no lock file there.
_LOOSE_OBJECTS = re.compile(r"[0-9a-f]{2}")


def _lock_files(git_dir: Path) -> list[Path]:
    """Every regular `*.lock` file under `git_dir`, sorted; the loose-object folders are not
    entered (git's lock files are its index, refs, config, packs' and graphs' indexes, never
    a loose object: lockfile.c users in git 2.39)."""
    found = []
    for folder, subfolders, files in os.walk(git_dir):
        if os.path.basename(folder) == "objects":
            subfolders[:] = [d for d in subfolders if not _LOOSE_OBJECTS.fullmatch(d)]
        for name in files:
            if name.endswith(LOCK_SUFFIX):
                lock = Path(folder, name)
                if lock.is_file():
                    found.append(lock)
    return sorted(found)


#: How long a run waits for a git that a stopped run left working in a clone (seconds).
ORPHAN_WAIT_SECONDS = 300.0


def processes_in(folder: Path) -> list[int]:
    """Pids of the processes, other than this one and its children (GitPython keeps
    `git cat-file --batch` running in a clone it opened), whose working folder is `folder` or
    below it (Linux `/proc`; elsewhere, and for other users' processes, none can be seen)."""
    folder = folder.resolve()
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            cwd = Path(os.readlink(entry / "cwd"))
            if not (cwd == folder or folder in cwd.parents):
                continue
            status = (entry / "status").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        ppid = re.search(r"^PPid:\s*(\d+)", status, re.M)
        if os.getpid() not in (int(entry.name), int(ppid.group(1)) if ppid else -1):
            found.append(int(entry.name))
    return sorted(found)


def _wait_for_orphans(path: Path) -> None:
    """Wait until no process works in the clone `path`.

    A run killed alone (SIGKILL to its process, not its group) leaves its git child running:
    that git still holds its lock files and will write past them, so removing them under it
    broke the next build ("unable to write new index file"). GitPython runs git with the
    clone as its working folder, which is how such a git is recognised.

    Raises:
        FatalError: a process still works there after `ORPHAN_WAIT_SECONDS`.
    """
    deadline = time.monotonic() + ORPHAN_WAIT_SECONDS
    said = False
    while pids := processes_in(path):
        if not said:
            stderr_line(
                f"waiting for process {', '.join(map(str, pids))}, left working in the cached "
                f"clone {path} by a run that was stopped"
            )
            said = True
        if time.monotonic() > deadline:
            raise FatalError(
                f"process {', '.join(map(str, pids))} still works in the cached clone {path} "
                f"after {ORPHAN_WAIT_SECONDS:.0f} s; wait for it to end, or stop it, then run "
                "again"
            )
        time.sleep(0.2)


def holds_objects(path: Path) -> bool:
    """Whether the clone `path` holds any object (loose or packed): something was fetched."""
    objects = path / ".git" / "objects"
    return any(objects.glob("pack/*.pack")) or any(objects.glob("[0-9a-f][0-9a-f]/*"))


def _opened(path: Path) -> git.Repo:
    repo = git.Repo(path)
    repo.git.set_persistent_git_options(c=_GIT_OPTIONS)
    return repo


def open_clone(url: str, cache_dir: Path) -> tuple[git.Repo, bool]:
    """The cached clone of `url` (repaired, or made anew), and whether it was made now.

    A new clone is made under a temporary name and renamed into place once configured, so a
    clone at its place is always a complete, configured (perhaps empty) repository.
    """
    repos = repos_dir(cache_dir)
    path = clone_path(url, cache_dir)
    _repair(repos, path)
    if path.exists():
        why: str | None
        try:
            repo = _opened(path)
            origin, why = _origin(repo)
        except (
            git.InvalidGitRepositoryError,
            git.NoSuchPathError,
            AttributeError,
            ValueError,
        ) as e:
            origin, why = None, f"not a git repository ({type(e).__name__})"
        if why is None:
            if origin != url:
                repo.git.remote("set-url", "--", "origin", url)
            return repo, False
        # A damaged or refused cached clone is only a cache: start it again.
        stderr_line(f"the cached clone {path} is unusable ({git_reason(why)}); cloning again")
        _discard(path, why)
    new = path.with_name(NEW_PREFIX + path.name)
    try:
        repo = git.Repo.init(new, initial_branch="cache")
        # `git remote add` itself: GitPython's own check is refuse_transport's.
        repo.git.remote("add", "--", "origin", url)
        with repo.config_writer() as cfg:
            cfg.set_value('remote "origin"', "promisor", "true")
            cfg.set_value('remote "origin"', "partialclonefilter", "blob:none")
            cfg.set_value("core", "sparseCheckout", "true")
            cfg.set_value("advice", "detachedHead", "false")
        repo.close()
        os.replace(new, path)
    except OSError as e:
        shutil.rmtree(new, ignore_errors=True)
        raise FatalError(f"cannot create the cached clone {path}: {e.strerror or e}") from None
    except git.GitCommandError as e:
        shutil.rmtree(new, ignore_errors=True)
        raise FatalError(f"cannot create the cached clone {path}: {git_error(e)}") from None
    return _opened(path), True


def neutralize_attributes(repo: git.Repo) -> None:
    """Write `NEUTRAL_ATTRIBUTES` to the clone's `info/attributes` when it holds anything else
    (made, or changed by code an earlier build ran): before every checkout.

    Raises:
        FatalError: the file cannot be written.
    """
    path = Path(repo.git_dir) / "info" / "attributes"
    try:
        if path.is_file() and not path.is_symlink() and path.read_text() == NEUTRAL_ATTRIBUTES:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        path.write_text(NEUTRAL_ATTRIBUTES, encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise FatalError(
            f"cannot write {path} of the cached clone: {getattr(e, 'strerror', None) or e}; "
            f"delete the clone {Path(repo.git_dir).parent} and run again"
        ) from None


def forget(path: Path) -> None:
    """Remove the clone `path` made by this run, which holds nothing (its first contact with
    the remote failed), and `repos/` if that leaves it empty: a bad URL leaves no trace."""
    shutil.rmtree(path, ignore_errors=True)
    with suppress(OSError):
        path.parent.rmdir()


def cached_clone(url: str, cache_dir: Path) -> git.Repo | None:
    """The cached clone of `url` under the cache root `cache_dir`, opened as the build opens
    it (`_GIT_OPTIONS`), or None when the cache holds none that git can use.

    Nothing is created or repaired (that is `checkout`'s, under the lock); hold
    `repos_lock(cache_dir)` while using the clone, as every user of the cache does.
    """
    path = clone_path(url, cache_dir)
    if not (path / ".git").is_dir():
        return None
    try:
        repo = _opened(path)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    if _usable(repo) is not None:
        repo.close()
        return None
    return repo
