"""What changed upstream under `examples/arduino/` since the previous sync, and what the
library does with each file: a section of the sync pull request's body.

ExecuTorch keeps its own Arduino sources in `examples/arduino/` of the ref, and tells
contributors to fix things there. The library takes some of them (the examples' models and
MFCC inputs, the model-conversion tools) and replaces the rest with the generator's own
(`data/library_template/`: the sketches, `ETModel.h`, the platform layer), so an upstream fix to
a replaced file never reaches the library. This step lists every change there, so a reviewer
sees each one and where it would have to be ported.

Each file's role comes from `generator.sync.upstream_roles.classify`, which reads the tables
the build itself reads.

Git: the build's cached clone of ExecuTorch (`generator.vcs.clones.cached_clone`) holds
the new commit, which the build checked out. The previous pin is fetched when the clone lacks
it, with its trees and no blobs, one commit deep while the clone is shallow, as a build
fetches (never by git's lazy fetch of a missing commit, which brings the commit's whole
history). `git diff` then fetches in one batch just the blobs of the changed files that the
blobless clone lacks (measured on ExecuTorch PR #21995 through a local mirror: 7 objects in
one fetch, 0.03 s; the diff's other blobs were the checked-out ones). A comparison that cannot
be made (no clone, the old pin unreachable, git failing) says why: nothing here fails a sync.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import git

from generator.sync.upstream_roles import ARDUINO, Kind, Role, classify
from generator.util.cache import check_cache_dir, default_cache_dir, repos_lock
from generator.util.markdown import inline_code, table
from generator.util.urls import display_url
from generator.vcs.clones import cached_clone
from generator.vcs.failures import git_reason
from generator.vcs.resolve import fetch_commit

#: At most this many files are listed (the body stays far below GitHub's 65,536 characters).
MAX_FILES = 25
#: Paths longer than this are shortened in the list (characters).
MAX_PATH = 120

Outcome = Literal["first-sync", "same-pin", "not-compared", "unchanged", "changed", "absent"]

#: git's one-letter statuses (`git diff --name-status`) as the list names them.
_STATUS = {
    "A": "added",
    "M": "modified",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "T": "type changed",
}


@dataclass(frozen=True)
class FileChange:
    """One file changed under `ARDUINO` between the two commits.

    Attributes:
        path: its path in the new commit (the old one's when deleted), from the repo root.
        status: "added", "modified", "deleted", "renamed", "copied" or "type changed".
        old_path: the path it was renamed or copied from, else None.
        added, deleted: lines added and deleted; None when binary or not known.
        binary: git counts no lines for it (a .pte, a .pth).
        role: what the library does with it (of `path`).
    """

    path: str
    status: str
    role: Role
    old_path: str | None = None
    added: int | None = None
    deleted: int | None = None
    binary: bool = False


@dataclass(frozen=True)
class UpstreamChanges:
    """What changed under `ARDUINO` from the previous pin to the new commit.

    Attributes:
        old: the previous pin (the base branch's, full SHA) or None (first sync).
        new: the commit this sync builds (full SHA).
        outcome: "first-sync" (no previous pin), "same-pin", "not-compared" (see `reason`),
            "unchanged", "changed" (see `files`), "absent" (neither commit has `ARDUINO`).
        compare_url: the web page of the commits between them (GitHub only), or None.
        files: the changed files, in git's (path) order.
        reason: why there is no comparison ("not-compared"), or why line counts are
            missing ("changed"); "" otherwise.
        old_has, new_has: whether each commit has `ARDUINO` (True when not known).
    """

    old: str | None
    new: str
    outcome: Outcome
    compare_url: str | None = None
    files: tuple[FileChange, ...] = ()
    reason: str = ""
    old_has: bool = True
    new_has: bool = True

    def count(self, kind: Kind) -> int:
        """How many changed files have the role `kind`."""
        return sum(1 for f in self.files if f.role.kind == kind)


# -- where the web pages are ---------------------------------------------------------------

#: A GitHub repository URL as git takes it: https, ssh, git or scp-like (`git@github.com:`).
_GITHUB = re.compile(
    r"^(?:(?:https?|ssh|git)://(?:[^@/]*@)?github\.com(?::\d+)?/|[^@/:]+@github\.com:)"
    r"(?P<owner>[A-Za-z0-9-]+)/(?P<name>[A-Za-z0-9_.-]+?)(?:\.git)?/?$",
    re.IGNORECASE,
)


def github_web_url(url: str) -> str | None:
    """`https://github.com/OWNER/NAME` for a git URL of a repository on github.com, else None
    (another host, GitHub Enterprise included, or a path: their pages are not known)."""
    match = _GITHUB.match(display_url(url).strip())
    if match is None:
        return None
    return f"https://github.com/{match.group('owner')}/{match.group('name')}"


#: A full commit SHA as git writes it (SHA-1: 40 lowercase hex digits).
_SHA = re.compile(r"[0-9a-f]{40}")


def is_sha(text: str) -> bool:
    """Whether `text` is a full commit SHA (40 lowercase hex digits, nothing else)."""
    return _SHA.fullmatch(text) is not None


def compare_url(url: str, old: str, new: str) -> str | None:
    """GitHub's page of the commits `old...new` of the repository at `url`, or None when it is
    not on github.com (`github_web_url`) or `old` or `new` is not a full SHA (`is_sha`: a pin
    read from the base branch is any text until checked)."""
    web = github_web_url(url)
    return f"{web}/compare/{old}...{new}" if web and is_sha(old) and is_sha(new) else None


# -- git -----------------------------------------------------------------------------------


def _has_commit(repo: git.Repo, sha: str) -> bool:
    """Whether the clone holds the commit `sha`, asked without git's lazy fetch from the
    promisor remote (`rev-list --missing=print` turns it off; a lazy fetch of a commit would
    bring its whole history)."""
    try:
        repo.git.rev_list("--no-walk", "--missing=print", sha, "--")
    except git.GitCommandError:
        return False
    return True


def _has_folder(repo: git.Repo, sha: str) -> bool:
    """Whether the commit `sha` has the folder `ARDUINO` (its trees are in the clone)."""
    return bool(str(repo.git.ls_tree("-d", sha, "--", ARDUINO)).strip())


def _fields(out: str) -> list[str]:
    """The NUL-separated fields of a `-z` output (the trailing NUL's empty field dropped)."""
    fields = out.split("\0")
    return fields[:-1] if fields and fields[-1] == "" else fields


def _name_status(out: str) -> list[tuple[str, str, str | None]]:
    """(status letter, path, old path) of `git diff --name-status -z` output."""
    fields, i = _fields(out), 0
    found: list[tuple[str, str, str | None]] = []
    while i < len(fields):
        letter = fields[i][:1]
        if letter in ("R", "C"):
            found.append((letter, fields[i + 2], fields[i + 1]))
            i += 3
        else:
            found.append((letter, fields[i + 1], None))
            i += 2
    return found


def _numstat(out: str) -> dict[str, tuple[int | None, int | None]]:
    """path (the new one of a rename) -> (lines added, deleted), None for a binary file, of
    `git diff --numstat -z` output (a rename's counts are followed by both paths)."""
    fields, i = _fields(out), 0
    found: dict[str, tuple[int | None, int | None]] = {}
    while i < len(fields):
        added, deleted, path = fields[i].split("\t", 2)
        if path:
            i += 1
        else:
            path = fields[i + 2]
            i += 3
        found[path] = (
            int(added) if added.isdigit() else None,
            int(deleted) if deleted.isdigit() else None,
        )
    return found


def _diff(repo: git.Repo, old: str, new: str) -> tuple[list[FileChange], str]:
    """The changed files under `ARDUINO` from `old` to `new`, and why line counts are missing
    ("" when they are not).

    Raises:
        git.GitCommandError: git cannot compare the trees at all.
    """
    args = ["--no-ext-diff", "--no-textconv", "-z", old, new, "--", ARDUINO]
    reason = ""
    try:
        # Counting lines needs both sides' blobs: git fetches the missing ones in one batch.
        counts = _numstat(str(repo.git.diff("--numstat", "-M", *args)))
        statuses = _name_status(str(repo.git.diff("--name-status", "-M", *args)))
    except git.GitCommandError as e:
        # Names and statuses need only the trees, which the clone holds.
        reason = git_reason(str(e.stderr or e)).replace("\n", "; ")
        counts = {}
        statuses = _name_status(str(repo.git.diff("--name-status", "--no-renames", *args)))
    files = []
    for letter, path, old_path in statuses:
        added, deleted = counts.get(path, (None, None))
        binary = path in counts and added is None and deleted is None
        files.append(
            FileChange(
                path=path,
                status=_STATUS.get(letter, letter),
                role=classify(path),
                old_path=old_path,
                added=added,
                deleted=deleted,
                binary=binary,
            )
        )
    return files, reason


def arduino_changes(
    url: str, old: str | None, new: str, cache_dir: Path | None = None
) -> UpstreamChanges:
    """What changed under `examples/arduino/` of ExecuTorch from the previous pin `old` to the
    commit `new`, read in the build's cached clone of `url`.

    Args:
        url: the ExecuTorch URL the build used (`BuildOptions.executorch_repo`); it names the
            cached clone and, on github.com, the compare page.
        old: the base branch's pin (`generator.vcs.git.facts_at(...).pin`), None on a first sync.
        new: the commit the build checked out (`BuildResult.sha`).
        cache_dir: the build's cache root (`BuildOptions.cache_dir`; None: the default, as
            the build takes it).
    Returns:
        The comparison (see `UpstreamChanges`); never raises for git's or the cache's
        failures, which give outcome "not-compared" with git's reason.
    """
    if old is None:
        return UpstreamChanges(None, new, "first-sync")
    unchecked = _not_a_sha(old, new)
    if unchecked:
        return UpstreamChanges(old, new, "not-compared", None, reason=unchecked)
    link = compare_url(url, old, new)
    if old == new:
        return UpstreamChanges(old, new, "same-pin")
    cache = check_cache_dir(cache_dir or default_cache_dir())
    repo = cached_clone(url, cache)
    if repo is None:
        return UpstreamChanges(
            old,
            new,
            "not-compared",
            link,
            reason=f"the build's clone of {display_url(url)} is not in the cache {cache}",
        )
    try:
        with repos_lock(cache):
            return _compare(repo, url, old, new, link)
    except OSError as e:
        reason = f"the cache lock {cache}/repos.lock cannot be taken ({e.strerror or e})"
        return UpstreamChanges(old, new, "not-compared", link, reason=reason)
    finally:
        repo.close()


def _not_a_sha(old: str, new: str) -> str | None:
    """Why `old` (the base branch's pin: its `executorch_pin.txt` or `extras/library.json`,
    any text until checked) or `new` cannot be compared, or None when both are full SHAs.
    Nothing else reaches git as a revision."""
    if not is_sha(old):
        return (
            "the previous pin (the base branch's executorch_pin.txt or extras/library.json) "
            "is not a commit SHA (40 hex digits)"
        )
    if not is_sha(new):
        return "the new commit is not a commit SHA (40 hex digits)"
    return None


def _compare(repo: git.Repo, url: str, old: str, new: str, link: str | None) -> UpstreamChanges:
    """`arduino_changes` in the open clone `repo` (the cache lock held)."""

    def not_compared(reason: str) -> UpstreamChanges:
        return UpstreamChanges(old, new, "not-compared", link, reason=reason)

    unchecked = _not_a_sha(old, new)
    if unchecked:
        return not_compared(unchecked)
    if not _has_commit(repo, new):
        return not_compared(f"the build's clone lacks the new commit {new[:12]}")
    if not _has_commit(repo, old):
        try:
            # by URL: the URL the build was asked for, not what the clone's origin now says
            fetch_commit(repo, old, url)
        except git.GitCommandError as e:
            reason = git_reason(str(e.stderr or e)).replace("\n", "; ")
            return not_compared(
                f"the previous pin could not be fetched from {display_url(url)}: {reason}"
            )
        if not _has_commit(repo, old):
            return not_compared(f"fetching the previous pin did not bring {old[:12]}")
    try:
        old_has, new_has = _has_folder(repo, old), _has_folder(repo, new)
        if not old_has and not new_has:
            return UpstreamChanges(old, new, "absent", link, old_has=False, new_has=False)
        files, reason = _diff(repo, old, new)
    except git.GitCommandError as e:
        return not_compared(git_reason(str(e.stderr or e)).replace("\n", "; "))
    except UnicodeDecodeError:
        return not_compared("git names a file there that is not UTF-8")
    if not files:
        return UpstreamChanges(old, new, "unchanged", link)
    return UpstreamChanges(
        old,
        new,
        "changed",
        link,
        files=tuple(files),
        reason=reason,
        old_has=old_has,
        new_has=new_has,
    )


# -- Markdown ------------------------------------------------------------------------------

#: The section's heading in the pull request body.
HEADING = "### Upstream `examples/arduino/` since the last sync"


def _short(path: str) -> str:
    """`path` below `ARDUINO`, shortened to `MAX_PATH` characters (its end kept)."""
    rel = path.removeprefix(ARDUINO + "/")
    return rel if len(rel) <= MAX_PATH else "…" + rel[-(MAX_PATH - 1) :]


#: A URL that a Markdown link `[text](url)` holds as it is: https, no space, control,
#: bracket, parenthesis, angle bracket or backtick (a `)` or a line break would end it).
_LINKABLE = re.compile(r"https://[^\s()<>\[\]`\x00-\x1f\x7f]+")


def _range(changes: UpstreamChanges) -> str:
    """ "[`old12...new12`](link)", or without the link when there is none."""
    shown = inline_code(f"{(changes.old or '')[:12]}...{changes.new[:12]}")
    url = changes.compare_url
    return f"[{shown}]({url})" if url and _LINKABLE.fullmatch(url) else shown


def _lines(f: FileChange) -> str:
    if f.binary:
        return "binary"
    if f.added is None or f.deleted is None:
        return "n/a"
    return f"+{f.added:,} -{f.deleted:,}"


def _rows(files: Iterable[FileChange]) -> list[list[str]]:
    rows = []
    for f in files:
        status = f.status
        if f.old_path is not None:
            status = f"{f.status} from {inline_code(_short(f.old_path))}"
        rows.append([inline_code(_short(f.path)), status, _lines(f), f.role.describe()])
    return rows


def upstream_markdown(changes: UpstreamChanges) -> str:
    """The pull request body's section on `changes` (Markdown, ending in a newline): its
    heading, then one line, or the changed files (at most `MAX_FILES`; the rest counted) with
    what the library does with each, and what to do about a superseded one."""
    folder = f"`{ARDUINO}/`"
    out = [HEADING, ""]
    short_old, short_new = inline_code((changes.old or "")[:12]), inline_code(changes.new[:12])
    if changes.outcome == "first-sync":
        out.append(f"First sync: there is no previous pin to compare {folder} with.")
    elif changes.outcome == "same-pin":
        out.append(
            f"The previous pin is this commit ({changes.new[:12]}): nothing changed in {folder}."
        )
    elif changes.outcome == "not-compared":
        linkable = changes.compare_url and _LINKABLE.fullmatch(changes.compare_url)
        link = f" Compare by hand: {_range(changes)}." if linkable else ""
        out.append(
            f"Could not compare {folder} with the previous pin {short_old}: {changes.reason}.{link}"
        )
    elif changes.outcome == "absent":
        out.append(
            f"Neither the previous pin {short_old} nor {short_new} has {folder}: "
            "nothing to compare."
        )
    elif changes.outcome == "unchanged":
        out.append(f"Nothing changed in {folder} since the previous pin ({_range(changes)}).")
    else:
        out += _changed(changes)
    return "\n".join(out) + "\n"


def _changed(changes: UpstreamChanges) -> list[str]:
    """The lines of a "changed" section below its heading."""
    files = changes.files
    counted = [f for f in files if f.added is not None and f.deleted is not None]
    added = sum(f.added or 0 for f in counted)
    deleted = sum(f.deleted or 0 for f in counted)
    noun = "file" if len(files) == 1 else "files"
    lines = f", +{added:,} -{deleted:,} lines" if counted else ""
    out = [f"{_range(changes)}: {len(files)} {noun} changed{lines}."]
    if changes.reason:
        out[-1] += f" Line counts are not known: {changes.reason}."
    if not changes.new_has:
        out.append(f"{inline_code(changes.new[:12])} has no `{ARDUINO}/`: ExecuTorch removed it.")
    elif not changes.old_has:
        out.append(f"The previous pin {inline_code((changes.old or '')[:12])} had no `{ARDUINO}/`.")
    superseded = changes.count("superseded")
    if superseded:
        if superseded == 1:
            said = "1 of them never reaches the library: it is a file"
        else:
            said = f"{superseded} of them never reach the library: they are files"
        out += [
            "",
            "> [!IMPORTANT]",
            f"> {said} the library replaces "
            "with the generator's own (named below). Port an upstream fix that applies to "
            "the generator's file, in the generator's repository.",
        ]
    out += [
        "",
        *table(["File", "Change", "Lines", "In the library"], _rows(files[:MAX_FILES]), "llrl"),
    ]
    rest = files[MAX_FILES:]
    if rest:
        kinds = [
            f"{n} {k}"
            for k in ("used", "superseded", "unused")
            if (n := sum(1 for f in rest if f.role.kind == k))
        ]
        where = f" (see {_range(changes)})" if changes.compare_url else ""
        out += ["", f"…and {len(rest)} more ({', '.join(kinds)}){where}."]
    if superseded:
        out += [
            "",
            "- [ ] Each superseded file above: its upstream change ported to the generator, "
            "or not needed there",
        ]
    return out
