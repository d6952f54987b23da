"""Step 1 (and 2): check out a ref of a git repository into the cache, sparse and partial.

Each repository (ExecuTorch, FlatBuffers, flatcc, CMSIS-NN) gets one cached clone, keyed by
its URL (`clones.py`: made, repaired after a stopped run, reused across runs); the ref is
resolved and its commit fetched there (`resolve.py`), and only the paths the library needs
are checked out (sparse). The submodules an ExecuTorch tree pins are read from its commit
(`gitlink`, `submodule_url`).

Only canonical upstream URLs are used; git itself applies `url.<base>.insteadOf`, which is how
offline mirrors stand in for GitHub.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import git

from generator.util.cache import repos_lock
from generator.util.confine import confined_path
from generator.util.errors import FatalError
from generator.util.urls import display_url, refuse_transport
from generator.vcs.clones import (
    clone_path,
    forget,
    git_error,
    holds_objects,
    neutralize_attributes,
    open_clone,
)
from generator.vcs.resolve import resolve_and_fetch


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
    the run repairs what a stopped run left (`clones.open_clone`, said on stderr). A clone
    made by this run that fetched nothing (a URL git refuses or cannot reach) is removed
    again.

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
    repo_path = clone_path(url, cache_dir)
    with repos_lock(cache_dir):
        repo, created = open_clone(url, cache_dir)
        try:
            sha = resolve_and_fetch(repo, url, ref, pinned=pinned)
        except BaseException:
            if created and not holds_objects(repo_path):
                repo.close()
                forget(repo_path)
            raise
        patterns = sorted({"/" + p.strip("/") for p in paths})
        neutralize_attributes(repo)
        try:
            if not _checked_out(repo, sha, patterns):
                repo.git.sparse_checkout("set", "--no-cone", *patterns)
                repo.git.checkout("--force", "--detach", sha)
            # Files of the previous pin that the new one lacks must not linger, nor an empty
            # folder (which `git status` does not show).
            repo.git.clean("-ffdxq")
        except git.GitCommandError as e:
            raise FatalError(
                f"cannot check out {sha[:12]} of {display_url(url)}: {git_error(e)}\nThe "
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
