"""Step 1: check out a ref of a git repository into the cache, sparse and partial.

Each repository (ExecuTorch, FlatBuffers, flatcc, CMSIS-NN) gets one cached clone, keyed by
its URL, under `<cache>/repos/`. A clone is partial (`--filter=blob:none`: only the blobs of
checked-out paths are ever fetched) and sparse (only the paths the library needs are in the
work tree), and it is reused across runs: a commit already present is not fetched again.

Only canonical upstream URLs are used; git itself applies `url.<base>.insteadOf`, which is how
offline mirrors stand in for GitHub.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import git

# The cache folder and its lock are cache.py's; named here too for the callers that had them.
from generator.cache import cache_lock as cache_lock
from generator.cache import check_cache_dir as check_cache_dir
from generator.cache import create_cache_dir as create_cache_dir
from generator.cache import default_cache_dir as default_cache_dir
from generator.cache import stderr_line
from generator.errors import FatalError
from generator.gitfail import git_reason, hint
from generator.urls import display_url

#: git accepts an abbreviated SHA of 4 digits or more.
HEX_SHA = re.compile(r"^[0-9a-fA-F]{4,40}$")
FULL_SHA = re.compile(r"^[0-9a-f]{40}$")


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
        """
        return (self.path / relpath).read_text(encoding="utf-8")


def _slug(url: str) -> str:
    url = display_url(url)  # a folder name never carries credentials
    tail = re.sub(r"[^A-Za-z0-9]+", "-", url.rstrip("/").removesuffix(".git")).strip("-")[-60:]
    return f"{tail}-{hashlib.sha256(url.encode()).hexdigest()[:10]}"


def _git_error(e: git.GitCommandError) -> str:
    return git_reason(str(e.stderr or e), e.status if isinstance(e.status, int) else None)


def _failure(what: str, url: str, e: git.GitCommandError, folder: Path | None = None) -> FatalError:
    """A FatalError with git's own reason and the hint it calls for."""
    stderr = str(e.stderr or e)
    where = str(folder) if folder is not None else None
    return FatalError(
        f"{what} {display_url(url)}: {_git_error(e)}\n"
        f"{hint(stderr, url_option='--executorch-repo', folder=where)}"
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
            f"{hint(why, url_option='--executorch-repo', folder=str(path))}"
            " (or delete the folder yourself)"
        ) from None


def _open_clone(url: str, cache_dir: Path) -> git.Repo:
    path = cache_dir / "repos" / _slug(url)
    if path.exists():
        why: str | None
        try:
            repo = git.Repo(path)
            why = _usable(repo)
        except (
            git.InvalidGitRepositoryError,
            git.NoSuchPathError,
            AttributeError,
            ValueError,
        ) as e:
            why = f"not a git repository ({type(e).__name__})"
        if why is None:
            if repo.remotes.origin.url != url:
                repo.remotes.origin.set_url(url)
            return repo
        # A damaged or refused cached clone is only a cache: start it again.
        stderr_line(f"the cached clone {path} is unusable ({git_reason(why)}); cloning again")
        _discard(path, why)
    try:
        repo = git.Repo.init(path, initial_branch="cache")
    except OSError as e:
        raise FatalError(f"cannot create the cached clone {path}: {e.strerror or e}") from None
    repo.create_remote("origin", url)
    with repo.config_writer() as cfg:
        cfg.set_value('remote "origin"', "promisor", "true")
        cfg.set_value('remote "origin"', "partialclonefilter", "blob:none")
        cfg.set_value("core", "sparseCheckout", "true")
        cfg.set_value("advice", "detachedHead", "false")
    return repo


def _has_commit(repo: git.Repo, rev: str) -> str | None:
    try:
        return str(repo.git.rev_parse("--verify", "--quiet", f"{rev}^{{commit}}"))
    except git.GitCommandError:
        return None


def _ls_remote(repo: git.Repo, url: str, names: Sequence[str]) -> dict[str, str]:
    """Map of remote ref name -> SHA (tags peeled to their commit), for the refs `names`.

    Only those are asked for: ExecuTorch has ~30,000 refs (pull request heads), and listing
    them all is most of what re-resolving a branch costs on every run.
    """
    patterns = [p for name in names for p in (name, f"{name}^{{}}")]  # with the peeled tag
    try:
        out = str(repo.git.ls_remote("origin", *patterns))
    except git.GitCommandError as e:
        raise _failure("cannot list the refs of", url, e, Path(repo.working_dir)) from None
    refs: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, name = line.partition("\t")
        if name.endswith("^{}"):
            refs[name[:-3]] = sha  # the peeled commit of an annotated tag wins
        else:
            refs.setdefault(name, sha)
    return refs


def _fetch(repo: git.Repo, url: str, what: str, *, depth: int | None = 1) -> None:
    args = ["--filter=blob:none", "--no-tags", "origin", what]
    if depth is not None:
        args.insert(0, f"--depth={depth}")
    try:
        repo.git.fetch(*args)
    except git.GitCommandError as e:
        raise _failure(f"cannot fetch {what} from", url, e, Path(repo.working_dir)) from None


def _refuse_ambiguous(repo: git.Repo, url: str, prefix: str) -> None:
    """Raise when the abbreviated SHA `prefix` names several commits of the clone.

    Raises:
        FatalError: listing each candidate (SHA, date, subject) and asking for more digits.
    """
    try:
        listed = str(repo.git.rev_parse(f"--disambiguate={prefix}")).split()
    except git.GitCommandError:
        return
    commits = []
    for sha in listed:
        with suppress(git.GitCommandError):
            if str(repo.git.cat_file("-t", sha)).strip() == "commit":
                commits.append(str(repo.git.log("-1", "--format=%H %cs %s", sha)))
    if len(commits) > 1:
        shown = "\n".join(f"  {line}" for line in commits[:10])
        raise FatalError(
            f"{prefix!r} is ambiguous in {display_url(url)}: it begins {len(commits)} "
            f"commits:\n{shown}\ngive more digits of the SHA"
        )


def resolve_and_fetch(repo: git.Repo, url: str, ref: str) -> str:
    """Resolve `ref` (branch, tag, full or short SHA) to a full SHA present in `repo`.

    Branch and tag names are looked up on the remote (so a moving branch is re-resolved on
    every run); SHAs are used as given and fetched only when missing. A short SHA unknown to
    the cache needs history: the remote's branches are fetched (commits and trees only).

    Raises:
        FatalError: when the ref exists neither as a branch, a tag nor a commit.
    """
    candidates = [ref] if ref.startswith("refs/") else [f"refs/heads/{ref}", f"refs/tags/{ref}"]
    if HEX_SHA.match(ref):
        # A SHA the cache already has needs no remote at all (offline rebuilds).
        found = _has_commit(repo, ref.lower())
        if found and found.startswith(ref.lower()):
            return found
    if not (FULL_SHA.match(ref) and _has_commit(repo, ref)):
        remote = _ls_remote(repo, url, candidates)
        for name in candidates:
            if name in remote:
                sha = remote[name]
                if not _has_commit(repo, sha):
                    _fetch(repo, url, name)
                found = _has_commit(repo, sha)
                if found:
                    return found
    if HEX_SHA.match(ref):
        sha = ref.lower()
        found = _has_commit(repo, sha)
        if found:
            return found
        if FULL_SHA.match(sha):
            with suppress(FatalError):
                _fetch(repo, url, sha)
        else:
            # A short SHA cannot be asked for by name: bring the branches' history.
            with suppress(git.GitCommandError):
                repo.git.fetch(
                    "--filter=blob:none",
                    "--no-tags",
                    "origin",
                    "+refs/heads/*:refs/remotes/origin/*",
                )
        found = _has_commit(repo, sha)
        if found:
            return found
        _refuse_ambiguous(repo, url, sha)
    raise FatalError(
        f"{display_url(url)} has no branch, tag or commit named {ref!r}. Give a branch "
        "(e.g. main), a tag (e.g. v1.4.1) or a commit SHA that exists there"
    )


def checkout(
    url: str,
    ref: str,
    paths: Sequence[str],
    cache_dir: Path,
) -> Checkout:
    """Check out `paths` of `ref` of `url` into the cached clone.

    Args:
        url: repository URL (canonical upstream; insteadOf applies).
        ref: branch, tag, full or short SHA.
        paths: the paths the library needs (files or folders, relative to the repo root).
        cache_dir: cache root; the clone lives under `<cache_dir>/repos/`.
    Returns:
        The checkout; its work tree holds only `paths` (sparse, non-cone patterns).
    Raises:
        FatalError: unknown ref, unreachable URL, or a fetch that failed.
    """
    repo_path = cache_dir / "repos" / _slug(url)
    with cache_lock(repo_path):
        repo = _open_clone(url, cache_dir)
        sha = resolve_and_fetch(repo, url, ref)
        patterns = sorted({"/" + p.strip("/") for p in paths})
        try:
            repo.git.sparse_checkout("set", "--no-cone", *patterns)
            repo.git.checkout("--force", "--detach", sha)
            # Files of the previous pin that the new one lacks must not linger.
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
