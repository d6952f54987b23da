"""What a ref means, and fetching its commit into a cached clone (`clones.py`).

What a ref means does not depend on the cache (`resolve_and_fetch`): a cold and a warm cache
resolve it against the same remote refs and history, and a commit already present is not
fetched again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path

import git

from generator.util.errors import FatalError
from generator.util.urls import REPO_OPTION, display_url
from generator.vcs.clones import git_error, holds_objects
from generator.vcs.failures import hint, is_missing_ref

#: git accepts an abbreviated SHA of 4 digits or more.
HEX_SHA = re.compile(r"^[0-9a-fA-F]{4,40}$")


FULL_SHA = re.compile(r"^[0-9a-f]{40}$")


#: The options that name ExecuTorch's repository and ref (messages).
REF_OPTION = "--executorch-ref"


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
        f"{what} {display_url(url)}: {git_error(e)}\n"
        f"{hint(stderr, url_option=_url_option(pinned), folder=where)}"
    )


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


def _fetch(repo: git.Repo, what: str, remote: str = "origin") -> None:
    """Fetch `what` (a ref name or a full SHA): commits and trees, no blobs.

    One commit deep while the clone is shallow or empty; a clone that holds full history
    (fetched for a short SHA) stays complete, since `--depth` would cut it again.

    Raises:
        git.GitCommandError: git's failure.
    """
    args = ["--filter=blob:none", "--no-tags"]
    if _is_shallow(repo) or not holds_objects(Path(repo.working_dir)):
        args.insert(0, "--depth=1")
    # `what` may come from a file (the base branch's pin): never read as an option
    # (`--upload-pack=CMD` would run CMD for a local or ssh remote); git >= 2.24
    repo.git.fetch(*args, "--end-of-options", remote, what)


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
        # One file for every branch otherwise, which every later run's repair walks.
        repo.git.pack_refs("--all", "--prune")
    except git.GitCommandError as e:
        stderr = str(e.stderr or e)
        folder = str(repo.working_dir)
        raise FatalError(
            f"cannot tell which commit {prefix!r} names: a short SHA means the one commit "
            f"of the branches of {display_url(url)} that begins with it, and they could not "
            f"be fetched: {git_error(e)}\n"
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


def fetch_commit(repo: git.Repo, sha: str, remote: str = "origin") -> None:
    """Fetch the commit `sha` into the cached clone `repo` as a build fetches one: with its
    trees, no blobs, one commit deep while the clone is shallow (`_fetch`), from `remote`
    (a remote's name, or a URL: then no `remote.<name>.*` setting of the clone applies).

    Raises:
        git.GitCommandError: git's failure (the remote lacks it, or cannot be reached).
    """
    _fetch(repo, sha, remote)
