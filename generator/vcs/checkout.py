"""Step 1 (and 2): check out a ref of a git repository into the cache, sparse and partial.

Each repository (ExecuTorch, FlatBuffers, flatcc, CMSIS-NN) gets one cached clone, keyed by
its URL, under `<cache>/repos/`. A clone is partial (`--filter=blob:none`: only the blobs of
checked-out paths are ever fetched) and sparse (only the paths the library needs are in the
work tree), and it is reused across runs: a commit already present is not fetched again.

What a ref means does not depend on the cache (`resolve_and_fetch`): a cold and a warm cache
resolve it against the same remote refs and history. A run that was stopped (Ctrl-C, SIGTERM,
SIGKILL) leaves nothing that breaks the next one: the next run, holding the cache lock,
removes git's stale lock files and half-made clones and says so.

Only canonical upstream URLs are used; git itself applies `url.<base>.insteadOf`, which is how
offline mirrors stand in for GitHub.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import time
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import git

from generator.util.cache import repos_dir, repos_lock, stderr_line
from generator.util.confine import confined_path
from generator.util.errors import FatalError
from generator.util.urls import REPO_OPTION, display_url, refuse_transport
from generator.vcs.failures import git_reason, hint, is_missing_ref

#: git accepts an abbreviated SHA of 4 digits or more.
HEX_SHA = re.compile(r"^[0-9a-fA-F]{4,40}$")
FULL_SHA = re.compile(r"^[0-9a-f]{40}$")
#: The options that name ExecuTorch's repository and ref (messages).
REF_OPTION = "--executorch-ref"
#: A clone being made is named `.new-<slug>` until it is configured (then renamed).
NEW_PREFIX = ".new-"
#: git's lock files are `<file>.lock` (lockfile.c); a ref name cannot end so (check-ref-format).
LOCK_SUFFIX = ".lock"
#: `-c` options of every git command in a cached clone: auto-gc stays in the foreground, so no
#: git of ours outlives the cache lock holding git's lock files.
#: `-c` options of every git run in a cached clone: gc and maintenance in the foreground (no
#: git of ours outlives its run), and no submodule recursion: the checkout holds gitlinks
#: (third-party/flatcc, ...) that git counts as submodules, and a fetch of every branch
#: (a short SHA's lookup) failed on "Could not access submodule 'third-party/flatcc'". The
#: components are cached clones of their own, pinned by those gitlinks.
_GIT_OPTIONS = [
    "gc.autoDetach=false",
    "maintenance.autoDetach=false",
    "fetch.recurseSubmodules=false",
    "submodule.recurse=false",
]


@dataclass(frozen=True)
class Checkout:
    """A work tree at one commit.

    Attributes:
        url: the repository URL as given (canonical upstream).
        ref: the ref asked for; sha: the full SHA it resolved to.
        path: the work tree (sparse: only `paths` are present).
    """

    url: str
    ref: str
    sha: str
    path: Path

    def read_text(self, relpath: str) -> str:
        """The text of a file of the commit (from the work tree).

        Raises:
            FileNotFoundError: when the path is not in the commit or not checked out.
            FatalError: when it is a symbolic link out of the work tree or a special file
                (`generator.util.confine`).
        """
        what = f"{display_url(self.url)} at {self.sha[:12]}"
        return confined_path(self.path, relpath, what).read_text(encoding="utf-8")


def _slug(url: str) -> str:
    url = display_url(url)  # a folder name never carries credentials
    tail = re.sub(r"[^A-Za-z0-9]+", "-", url.rstrip("/").removesuffix(".git")).strip("-")[-60:]
    return f"{tail}-{hashlib.sha256(url.encode()).hexdigest()[:10]}"


def _git_error(e: git.GitCommandError) -> str:
    return git_reason(str(e.stderr or e), e.status if isinstance(e.status, int) else None)


def _url_option(pinned: bool) -> str:
    """What the user checks when a URL fails: the option that named it, or for a pinned
    component (whose URL the ExecuTorch tree names) the mirrors git maps it to."""
    return "the mirrors of your git config (url.<base>.insteadOf)" if pinned else REPO_OPTION


def _failure(
    what: str, url: str, e: git.GitCommandError, folder: Path | None, *, pinned: bool
) -> FatalError:
    """A FatalError with git's own reason and the hint it calls for."""
    stderr = str(e.stderr or e)
    where = str(folder) if folder is not None else None
    return FatalError(
        f"{what} {display_url(url)}: {_git_error(e)}\n"
        f"{hint(stderr, url_option=_url_option(pinned), folder=where)}"
    )


def _usable(repo: git.Repo) -> str | None:
    """Why git will not work in the cached clone `repo` (its message), or None if it will."""
    try:
        repo.git.rev_parse("--git-dir")
        repo.git.config("--get", "remote.origin.url")
    except git.GitCommandError as e:
        return str(e.stderr or e)
    return None


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
    stale = sorted(p for p in git_dir.rglob(f"*{LOCK_SUFFIX}") if p.is_file())
    if stale:
        # A git still running there removes its own locks when it ends.
        _wait_for_orphans(path)
        stale = sorted(p for p in git_dir.rglob(f"*{LOCK_SUFFIX}") if p.is_file())
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


def _holds_objects(path: Path) -> bool:
    """Whether the clone `path` holds any object (loose or packed): something was fetched."""
    objects = path / ".git" / "objects"
    return any(objects.glob("pack/*.pack")) or any(objects.glob("[0-9a-f][0-9a-f]/*"))


def _opened(path: Path) -> git.Repo:
    repo = git.Repo(path)
    repo.git.set_persistent_git_options(c=_GIT_OPTIONS)
    return repo


def _open_clone(url: str, cache_dir: Path) -> tuple[git.Repo, bool]:
    """The cached clone of `url` (repaired, or made anew), and whether it was made now.

    A new clone is made under a temporary name and renamed into place once configured, so a
    clone at its place is always a complete, configured (perhaps empty) repository.
    """
    repos = repos_dir(cache_dir)
    path = repos / _slug(url)
    _repair(repos, path)
    if path.exists():
        why: str | None
        try:
            repo = _opened(path)
            why = _usable(repo)
        except (
            git.InvalidGitRepositoryError,
            git.NoSuchPathError,
            AttributeError,
            ValueError,
        ) as e:
            why = f"not a git repository ({type(e).__name__})"
        if why is None:
            if repo.git.config("--get", "remote.origin.url") != url:
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
        raise FatalError(f"cannot create the cached clone {path}: {_git_error(e)}") from None
    return _opened(path), True


def _forget(path: Path) -> None:
    """Remove the clone `path` made by this run, which holds nothing (its first contact with
    the remote failed), and `repos/` if that leaves it empty: a bad URL leaves no trace."""
    shutil.rmtree(path, ignore_errors=True)
    with suppress(OSError):
        path.parent.rmdir()


def _has_commit(repo: git.Repo, rev: str) -> str | None:
    """The commit `rev` names if the clone holds it, else None; never fetches.

    `rev-list --missing=print` turns off git's lazy fetch of a missing object, which a
    partial clone's `rev-parse` does: asked for a commit it lacks, `rev-parse` fetched the
    commit with its whole history (13,244 commits, a 23.75 MiB pack for ExecuTorch main on a
    cold cache), where `_fetch` takes one commit.
    """
    try:
        out = str(repo.git.rev_list("--no-walk", "--missing=print", f"{rev}^{{commit}}"))
    except git.GitCommandError:
        return None
    return out.split()[0] if out.strip() else None


def _is_shallow(repo: git.Repo) -> bool:
    return str(repo.git.rev_parse("--is-shallow-repository")).strip() == "true"


def _ls_remote(repo: git.Repo, names: Sequence[str]) -> dict[str, str]:
    """Map of remote ref name -> SHA (tags peeled to their commit), for the refs `names`.

    Only those are asked for: ExecuTorch has ~30,000 refs (pull request heads), and listing
    them all is most of what re-resolving a branch costs on every run.

    Raises:
        git.GitCommandError: the remote cannot be listed.
    """
    patterns = [p for name in names for p in (name, f"{name}^{{}}")]  # with the peeled tag
    out = str(repo.git.ls_remote("origin", *patterns))
    refs: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, name = line.partition("\t")
        if name.endswith("^{}"):
            refs[name[:-3]] = sha  # the peeled commit of an annotated tag wins
        else:
            refs.setdefault(name, sha)
    return refs


def _fetch(repo: git.Repo, what: str) -> None:
    """Fetch `what` (a ref name or a full SHA): commits and trees, no blobs.

    One commit deep while the clone is shallow or empty; a clone that holds full history
    (fetched for a short SHA) stays complete, since `--depth` would cut it again.

    Raises:
        git.GitCommandError: git's failure.
    """
    args = ["--filter=blob:none", "--no-tags"]
    if _is_shallow(repo) or not _holds_objects(Path(repo.working_dir)):
        args.insert(0, "--depth=1")
    # `what` may come from a file (the base branch's pin): never read as an option
    # (`--upload-pack=CMD` would run CMD for a local or ssh remote); git >= 2.24
    repo.git.fetch(*args, "--end-of-options", "origin", what)


def _unknown(url: str, ref: str, *, pinned: bool) -> FatalError:
    """The ref names nothing on the remote: for the user's ref, what a ref can be; for a pin,
    that the remote or its mirror lacks the pinned commit (the user cannot choose it)."""
    if pinned:
        what = "commit" if HEX_SHA.match(ref) else "tag, branch or commit"
        return FatalError(
            f"{display_url(url)} lacks it: the remote, or the mirror your git config maps it "
            f"to (url.<base>.insteadOf), has no such {what}. Update the mirror, or build "
            f"another {REF_OPTION} whose pins it has"
        )
    short = " (a short SHA: in the history of its branches)" if HEX_SHA.match(ref) else ""
    return FatalError(
        f"{display_url(url)} has no branch, tag or commit named {ref!r}{short}. Give a branch "
        "(e.g. main), a tag (e.g. v1.4.1) or a commit SHA that exists there; a commit on no "
        "branch needs its full SHA"
    )


def _describe(repo: git.Repo, shas: Sequence[str]) -> str:
    """One line per commit (SHA, date, subject), the first ten."""
    lines = []
    for sha in shas[:10]:
        with suppress(git.GitCommandError):
            lines.append(str(repo.git.log("-1", "--format=%H %cs %s", sha)))
    return "\n".join(f"  {line}" for line in lines)


def _full_sha(repo: git.Repo, url: str, sha: str, *, pinned: bool) -> str:
    """The commit `sha` (40 hex digits), fetched when the cache lacks it.

    A cached commit needs no remote: rebuilding a full SHA works offline.
    """
    if _has_commit(repo, sha) == sha:
        return sha
    try:
        _fetch(repo, sha)
    except git.GitCommandError as e:
        if not is_missing_ref(str(e.stderr or e)):
            raise _failure(
                f"cannot fetch {sha} from", url, e, Path(repo.working_dir), pinned=pinned
            ) from None
    if _has_commit(repo, sha) == sha:
        return sha
    raise _unknown(url, sha, pinned=pinned)


def _short_sha(repo: git.Repo, url: str, prefix: str, *, pinned: bool) -> str:
    """The one commit of the remote's branches' history whose SHA begins with `prefix`.

    The set looked in is the same whatever the cache holds: every branch of the remote now
    (fetched into `refs/remotes/origin/`, pruned, the history made complete), never the
    other commits the cache happens to hold (a tag's, a full SHA's, a deleted branch's).

    Raises:
        FatalError: no such commit; several (listed, asking for more digits); or the
            branches cannot be fetched, so uniqueness cannot be known (asking for the full
            SHA).
    """
    args = ["--filter=blob:none", "--no-tags", "--prune"]
    if _is_shallow(repo):
        args.append("--unshallow")
    try:
        repo.git.fetch(*args, "--end-of-options", "origin", "+refs/heads/*:refs/remotes/origin/*")
    except git.GitCommandError as e:
        stderr = str(e.stderr or e)
        folder = str(repo.working_dir)
        raise FatalError(
            f"cannot tell which commit {prefix!r} names: a short SHA means the one commit "
            f"of the branches of {display_url(url)} that begins with it, and they could not "
            f"be fetched: {_git_error(e)}\n"
            f"{hint(stderr, url_option=_url_option(pinned), folder=folder)}; or give the "
            "full 40-digit SHA (a commit the cache holds builds without the remote)"
        ) from None
    try:
        history = str(repo.git.rev_list("--remotes=origin")).split()
    except git.GitCommandError:
        history = []
    commits = [sha for sha in history if sha.startswith(prefix)]
    if len(commits) == 1:
        return commits[0]
    if not commits:
        raise _unknown(url, prefix, pinned=pinned)
    raise FatalError(
        f"{prefix!r} is ambiguous in {display_url(url)}: it begins {len(commits)} commits "
        f"of its branches:\n{_describe(repo, commits)}\ngive more digits of the SHA"
    )


def resolve_and_fetch(repo: git.Repo, url: str, ref: str, *, pinned: bool = False) -> str:
    """Resolve `ref` to a full SHA and make sure `repo` holds that commit.

    What a ref means never depends on what the cache holds, cold or warm:
    - 40 hex digits: that commit (a cached one needs no remote);
    - a branch or tag of the remote (`refs/heads/<ref>`, `refs/tags/<ref>`, or a full
      `refs/…` name), looked up on every run, so a moving branch moves;
    - else 4 to 39 hex digits: a short SHA, the one commit of the remote's branches'
      history that begins with it (`_short_sha`).

    Args:
        pinned: the ref is a pin of another repository's tree (a component's commit), not
            the user's: failures say the remote lacks it rather than what a ref can be.
    Raises:
        FatalError: an unknown ref, an ambiguous short SHA, a remote that fails.
    """
    folder = Path(repo.working_dir)
    lowered = ref.lower()
    if FULL_SHA.match(lowered):
        return _full_sha(repo, url, lowered, pinned=pinned)
    short = HEX_SHA.match(ref) is not None
    names = [ref] if ref.startswith("refs/") else [f"refs/heads/{ref}", f"refs/tags/{ref}"]
    try:
        remote = _ls_remote(repo, names)
    except git.GitCommandError as e:
        if short:
            remote = {}  # _short_sha says that uniqueness cannot be known, with git's words
        else:
            raise _failure("cannot list the refs of", url, e, folder, pinned=pinned) from None
    for name in names:
        if name not in remote:
            continue
        sha = remote[name]
        if _has_commit(repo, sha) != sha:
            try:
                _fetch(repo, name)
            except git.GitCommandError as e:
                raise _failure(f"cannot fetch {name} from", url, e, folder, pinned=pinned) from None
        found = _has_commit(repo, sha)
        if found:
            return found
        raise FatalError(
            f"{display_url(url)} lists {name} at {sha}, but fetching it did not bring that "
            "commit; run again (the branch may have just moved)"
        )
    if short:
        return _short_sha(repo, url, lowered, pinned=pinned)
    raise _unknown(url, ref, pinned=pinned)


def _checked_out(repo: git.Repo, sha: str, patterns: list[str]) -> bool:
    """True when the work tree of `repo` already is `sha` with exactly `patterns` checked out
    and nothing else: HEAD detached at `sha`, the sparse-checkout file holding `patterns` and
    non-cone sparse checkout on (what `git sparse-checkout set --no-cone` writes), and
    `git status` reporting no change, untracked or ignored file. Then sparse-checkout and
    checkout are skipped (the two that read the whole tree); `clean` still runs, as an empty
    folder shows in no `git status`."""
    git_dir = Path(repo.git_dir)
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        sparse = (git_dir / "info" / "sparse-checkout").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if head != sha or sparse.splitlines() != patterns:
        return False
    # `sparse-checkout set` writes its settings to config.worktree (extensions.worktreeConfig).
    config = git.GitConfigParser(str(git_dir / "config.worktree"), read_only=True)
    try:
        sparse_on = config.get_value("core", "sparseCheckout", False) is True
        cone = config.get_value("core", "sparseCheckoutCone", True)
    except (OSError, ValueError):
        return False
    if not sparse_on or cone is not False:
        return False
    status = repo.git.status("--porcelain", "--untracked-files=all", "--ignored")
    return not str(status).strip()


def checkout(
    url: str,
    ref: str,
    paths: Sequence[str],
    cache_dir: Path,
    *,
    pinned: bool = False,
) -> Checkout:
    """Check out `paths` of `ref` of `url` into the cached clone.

    Every clone of the cache is used under one lock (`<cache_dir>/repos.lock`); holding it,
    the run repairs what a stopped run left (`_repair`, said on stderr). A clone made by this
    run that fetched nothing (a URL git refuses or cannot reach) is removed again.

    Args:
        url: repository URL (canonical upstream; insteadOf applies).
        ref: branch, tag, full or short SHA (see `resolve_and_fetch`).
        paths: the paths the library needs (files or folders, relative to the repo root).
        cache_dir: cache root; the clone lives under `<cache_dir>/repos/`.
        pinned: `ref` is a commit another tree pins, not the user's choice (messages).
    Returns:
        The checkout; its work tree holds only `paths` (sparse, non-cone patterns).
    Raises:
        FatalError: unknown or ambiguous ref, a transport refused, unreachable URL, or a
            fetch that failed.
    """
    refuse_transport(url, pinned=pinned)
    repo_path = repos_dir(cache_dir) / _slug(url)
    with repos_lock(cache_dir):
        repo, created = _open_clone(url, cache_dir)
        try:
            sha = resolve_and_fetch(repo, url, ref, pinned=pinned)
        except BaseException:
            if created and not _holds_objects(repo_path):
                repo.close()
                _forget(repo_path)
            raise
        patterns = sorted({"/" + p.strip("/") for p in paths})
        try:
            if not _checked_out(repo, sha, patterns):
                repo.git.sparse_checkout("set", "--no-cone", *patterns)
                repo.git.checkout("--force", "--detach", sha)
            # Files of the previous pin that the new one lacks must not linger, nor an empty
            # folder (which `git status` does not show).
            repo.git.clean("-ffdxq")
        except git.GitCommandError as e:
            raise FatalError(
                f"cannot check out {sha[:12]} of {display_url(url)}: {_git_error(e)}\nThe "
                f"cached clone at {repo_path} may be damaged: delete it and run again"
            ) from None
        # Make sure the checked-out paths are exactly this commit's (checkout is incremental).
        tree_sha = repo.head.commit.hexsha
        if tree_sha != sha:
            raise FatalError(f"checkout of {display_url(url)} landed on {tree_sha}, expected {sha}")
        return Checkout(url=url, ref=ref, sha=sha, path=repo_path)


def gitlink(co: Checkout, path: str) -> str:
    """The commit a superproject pins for the submodule at `path` (its gitlink).

    Raises:
        FatalError: when the commit has no submodule at `path`.
    """
    repo = git.Repo(co.path)
    try:
        line = str(repo.git.ls_tree(co.sha, "--", path))
    except git.GitCommandError:
        line = ""
    parts = line.split()
    if len(parts) < 3 or parts[0] != "160000":
        raise FatalError(
            f"{display_url(co.url)} at {co.sha[:12]} has no submodule at {path}; this ref is not "
            "ExecuTorch-shaped (expected a gitlink there)"
        )
    return str(parts[2])


def submodule_url(co: Checkout, path: str) -> str:
    """The URL `.gitmodules` gives for the submodule at `path` (canonical upstream).

    Raises:
        FatalError: when `.gitmodules` does not name it.
    """
    repo = git.Repo(co.path)
    blob = f"--blob={co.sha}:.gitmodules"
    try:
        paths = str(repo.git.config(blob, "--get-regexp", r"^submodule\..*\.path$"))
    except git.GitCommandError:
        paths = ""
    for line in paths.splitlines():
        key, _, value = line.partition(" ")
        if value.strip() == path:
            name = key.removeprefix("submodule.").removesuffix(".path")
            try:
                return str(repo.git.config(blob, "--get", f"submodule.{name}.url")).strip()
            except git.GitCommandError:
                break
    raise FatalError(f".gitmodules of {display_url(co.url)} at {co.sha[:12]} does not list {path}")


def cached_clone(url: str, cache_dir: Path) -> git.Repo | None:
    """The cached clone of `url` under the cache root `cache_dir`, opened as the build opens
    it (`_GIT_OPTIONS`), or None when the cache holds none that git can use.

    Nothing is created or repaired (that is `checkout`'s, under the lock); hold
    `repos_lock(cache_dir)` while using the clone, as every user of the cache does.
    """
    path = repos_dir(cache_dir) / _slug(url)
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


def fetch_commit(repo: git.Repo, sha: str) -> None:
    """Fetch the commit `sha` into the cached clone `repo` as a build fetches one: with its
    trees, no blobs, one commit deep while the clone is shallow (`_fetch`).

    Raises:
        git.GitCommandError: git's failure (the remote lacks it, or cannot be reached).
    """
    _fetch(repo, sha)
