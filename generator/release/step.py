"""The release step: tag a commit of the library repo's `main` as `v<version>` and say what
changed since the previous release.

The Arduino Library Manager indexes the library repo's tags; it silently drops a version it
has already seen, and one lower than a version it has published (SemVer 2.0 precedence). So a
release must be a new, greater `v<version>` on a commit of `main` whose `library.properties`
says that version.

Steps (each a function of explicit inputs; `generator.release.run` runs them in order):
`generator.util.urls.refuse_credentials` on `--remote` (before anything), `resolve_commit` and
`check_on_branch` (which commit), `plan` (the version rules: refuse, create, move, or already
released), `gather_facts` and `render_notes` (release notes from the commit and the previous
release tag), `create_tag` and `push_tag` (git, through `generator.vcs.git`'s askpass
environment), `write_notes`.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from git import Repo

from generator.library.compare import (
    INSTRUCTIONS_NOTE,
    UPSTREAM_COMMIT,
    UPSTREAM_COMPARE,
    SizeRow,
    instruction_rows,
    instruction_table,
    kernels_only_in,
    size_rows,
    size_table,
)
from generator.library.layout import CHECK_REPORT_FILE, PIN_FILE, PROPERTIES_FILE
from generator.library.properties import properties_version
from generator.library.version import highest, is_greater, parse, suggest_next, tag_versions
from generator.util.atomic import write_atomic
from generator.util.errors import FatalError
from generator.util.markdown import code_list
from generator.util.templates import render
from generator.vcs import git as g

#: Release tags are `v` + the library.properties version (what the Library Manager indexes).
TAG_PREFIX = "v"
#: The release notes' template (in data/templates/github/).
NOTES_TEMPLATE = "release_notes.md.jinja"
_HEX = re.compile(r"^[0-9a-fA-F]{4,40}$")


@dataclass(frozen=True)
class ReleaseOptions:
    """What `python -m generator release` was asked to do.

    Attributes:
        repo: the library repo on GitHub, OWNER/NAME.
        remote: git URL to clone and push (None: https://github.com/OWNER/NAME.git).
        ref: the branch, tag or SHA of the library repo to release (default: main); it must
            be on `main`.
        retag: move an existing `v<version>` on another commit to this one.
        identity: the tagger of the annotated tag (never the machine's git identity).
        notes: also write the release notes (Markdown) to this file.
        work_dir: where the clone goes and stays (for inspection); None: a temporary folder.
    """

    repo: str
    remote: str | None = None
    ref: str = "main"
    retag: bool = False
    identity: g.Identity = field(
        default_factory=lambda: g.Identity(g.DEFAULT_BOT_NAME, g.DEFAULT_BOT_EMAIL)
    )
    notes: Path | None = None
    work_dir: Path | None = None


@dataclass
class ReleaseResult:
    """What release did.

    Attributes:
        status: "released" (a new tag), "retagged" (an existing tag moved here), or
            "already-released" (the tag was on this commit; nothing pushed).
        tag: `v<version>`; version: library.properties' version=; commit: the full SHA tagged.
        previous_tag: the release the notes compare with (None for the first release).
        moved_from: with "retagged", the commit the tag was on before.
        notes: the release notes (Markdown).
    """

    status: Literal["released", "retagged", "already-released"]
    tag: str
    version: str
    commit: str
    previous_tag: str | None
    moved_from: str | None = None
    notes: str = ""


@dataclass(frozen=True)
class TagRef:
    """A tag of the library repo: `obj` is what refs/tags/<name> holds (the tag object of an
    annotated tag), `commit` what it peels to."""

    obj: str
    commit: str


@dataclass(frozen=True)
class Plan:
    """What `plan` decided.

    Attributes:
        action: "create" the tag, "move" it from `old` (with --retag), or "none" (already
            released at this commit).
        tag: `v<version>`; previous_tag: the greatest published release below `version`.
        old: the tag as it is on the remote (only for "move"; the push leases on it).
    """

    action: Literal["create", "move", "none"]
    tag: str
    previous_tag: str | None
    old: TagRef | None = None


# -- inputs ------------------------------------------------------------------------------------


def check_notes_path(path: Path) -> Path:
    """The notes path, checked before anything is pushed: a file in a folder we may write
    (created through a temporary file there), or an existing special file such as
    /dev/stdout or a pipe (written directly). Absolute, unless it is a special file (those
    are kept as given: /dev/stdout resolves to a path only this process can open).

    Raises:
        FatalError: it is a folder, its folder does not exist or cannot be written, or the
            special file cannot be opened for writing.
    """
    if path.exists() and not path.is_dir() and not path.is_file():
        # Not opened here: opening a pipe would hand its reader an end of file.
        if not os.access(path, os.W_OK):
            raise FatalError(f"--notes {path}: this user cannot write it")
        return path
    path = path.resolve()
    if path.is_dir():
        raise FatalError(f"--notes {path} is a folder; pass a file name")
    if not path.parent.is_dir():
        raise FatalError(f"--notes {path}: folder {path.parent} does not exist; create it first")
    try:
        # The notes go through a temporary file beside them: prove that works before pushing.
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}."):
            pass
    except OSError as e:
        raise FatalError(
            f"--notes {path}: cannot write in {path.parent} ({e.strerror or e}); pass a file "
            "in a folder you can write"
        ) from None
    return path


# -- which commit ------------------------------------------------------------------------------


def resolve_commit(repo: Repo, ref: str, genv: g.GitEnv) -> str:
    """The full SHA `ref` names in the clone: a branch of origin, a tag, or a (short) SHA.

    Raises:
        FatalError: no such branch, tag or commit.
    """
    candidates = [f"refs/remotes/origin/{ref}", f"refs/tags/{ref}"]
    if _HEX.match(ref):
        candidates.append(ref)
    for candidate in candidates:
        try:
            return genv.run(
                ["rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}"],
                cwd=Path(repo.working_dir),
            )
        except g.GitFailure:
            continue
    raise FatalError(
        f"--ref {ref!r} is not a branch, tag or commit of the library repo: give e.g. main, "
        "a tag, or a SHA of main"
    )


def check_on_branch(repo: Repo, commit: str, ref: str, branch: str, genv: g.GitEnv) -> None:
    """Refuse a commit that `origin/<branch>` does not contain: the Library Manager serves
    what is tagged, and only `main` is reviewed and checked by sync.

    Raises:
        FatalError: the remote has no `branch`, or `commit` is not reachable from it.
    """
    tip = g.remote_branch_sha(repo, branch)
    if tip is None:
        raise FatalError(
            f"the library repo has no branch {branch!r}: merge a sync pull request into it "
            "first, then release"
        )
    try:
        genv.run(["merge-base", "--is-ancestor", commit, tip], cwd=Path(repo.working_dir))
    except g.GitFailure as e:
        if e.status != 1:
            raise
        raise FatalError(
            f"--ref {ref!r} is commit {commit[:12]}, which is not on {branch} (origin/{branch} "
            f"is {tip[:12]}): merge it into {branch} first (through the sync pull request), "
            f"then release {branch}"
        ) from None


def tag_refs(repo: Repo) -> dict[str, TagRef]:
    """Every tag of the clone (the remote's tags at clone time): name -> TagRef."""
    out = repo.git.for_each_ref(
        "--format=%(refname:strip=2) %(objectname) %(*objectname)", "refs/tags"
    )
    found: dict[str, TagRef] = {}
    for line in out.splitlines():
        name, obj, *peeled = line.split(" ")
        found[name] = TagRef(obj, peeled[0] if peeled and peeled[0] else obj)
    return found


def read_version(repo: Repo, commit: str, ref: str) -> str:
    """library.properties' `version=` at `commit`, checked to be SemVer 2.0.

    Raises:
        FatalError: no library.properties, no version= line, or a version that is not SemVer.
    """
    where = f"--ref {ref!r} ({commit[:12]})"
    text = g.file_at(repo, commit, PROPERTIES_FILE)
    if text is None:
        raise FatalError(
            f"{where} has no {PROPERTIES_FILE}: it is not a generated library; release a "
            "commit of main that a sync pull request brought in"
        )
    version = properties_version(text)
    if version is None:
        raise FatalError(
            f"{PROPERTIES_FILE} at {where} has no version= line: regenerate it with "
            "`python -m generator sync --library-version X.Y.Z`, merge, then release"
        )
    try:
        parse(version)
    except ValueError:
        raise FatalError(
            f"version={version} in {PROPERTIES_FILE} at {where} is not a Semantic Version "
            "(X.Y.Z, optionally -prerelease), so the Library Manager would not index it: "
            "regenerate with `python -m generator sync --library-version X.Y.Z`, merge, then "
            "release"
        ) from None
    return version


# -- the version rules -------------------------------------------------------------------------


def plan(
    version: str,
    commit: str,
    tags: Mapping[str, TagRef],
    retag: bool,
    published: Mapping[str, str] | None = None,
) -> Plan:
    """Decide what releasing `commit` as `version` means, given the published `tags`.

    Args:
        version: library.properties' version= (SemVer 2.0); commit: its full SHA.
        tags: the library repo's tags (name -> TagRef).
        retag: whether an existing `v<version>` on another commit may be moved.
        published: tag name -> the version the Library Manager indexes from it
            (`generator.vcs.versions.published_versions`: library.properties at the tag, else
            the tag's name); None: from the tags' names alone.
    Returns:
        "none" when `v<version>` already tags `commit`; "move" (only with `retag`) when it
        tags another; else "create". `previous_tag` is the greatest release below `version`.
    Raises:
        FatalError: `v<version>` tags another commit (without `retag`), or `version` is not
            greater, by SemVer precedence, than what every other tag publishes.
    """
    tag = TAG_PREFIX + version
    published = dict(published) if published is not None else tag_versions(tags)
    below = {t: v for t, v in published.items() if t != tag and is_greater(version, v)}
    previous_version = highest(below.values())
    previous_tag = (
        min(t for t, v in below.items() if v == previous_version)
        if previous_version is not None
        else None
    )
    existing = tags.get(tag)
    if existing is not None and existing.commit == commit:
        return Plan("none", tag, previous_tag)
    if existing is not None and not retag:
        raise FatalError(
            f"{tag} already tags commit {existing.commit[:12]}, not {commit[:12]}: bump the "
            "version (`python -m generator sync --library-version X.Y.Z`, merge, release), "
            f"or pass --retag to move {tag} here (only useful before the Library Manager has "
            "indexed it: it never reads a version it has seen again)"
        )
    others = {t: v for t, v in published.items() if t != tag}
    top = highest(others.values())
    if top is not None and not is_greater(version, top):
        top_tags = ", ".join(sorted(t for t, v in others.items() if v == top))
        raise FatalError(
            f"version {version} is not greater than {top}, published by tag {top_tags} (the "
            "Library Manager reads library.properties at every tag; SemVer precedence), so "
            "it would drop this one: regenerate with "
            f"`python -m generator sync --library-version {suggest_next(version, top)}` "
            "(or greater), merge, then release"
        )
    if existing is not None:
        return Plan("move", tag, previous_tag, existing)
    return Plan("create", tag, previous_tag)


# -- release notes -----------------------------------------------------------------------------


@dataclass
class ReleaseFacts:
    """Everything the release notes say.

    Attributes:
        version, tag, commit: this release; previous_tag: the one it is compared with (None
            for the first release).
        pin / previous_pin: the ExecuTorch pin (full SHA) here and at the previous tag.
        upstream_version / previous_upstream: ExecuTorch's version.txt (None when unknown).
        kernels / previous_kernels: operators of the kernel registration.
        (Each from the library's facts, `generator.library.facts`: extras/library.json, or an older
        library's executorch_pin.txt, extras/PROVENANCE.txt and codegen sources.)
        sizes: per board, example and metric, bytes here and at the previous tag (None: not
            measured there; `compare.size_rows`, a Board column for more than one board);
            instructions: per example, instructions per inference on the
            emulated Cortex-M33 here and at the previous tag (`compare.instruction_rows`);
            has_report / previous_has_report: whether
            extras/check_report.json exists at each.
    """

    version: str
    tag: str
    commit: str
    previous_tag: str | None
    pin: str | None
    previous_pin: str | None
    upstream_version: str | None
    previous_upstream: str | None
    kernels: list[str]
    previous_kernels: list[str]
    sizes: list[SizeRow] = field(default_factory=list)
    instructions: list[SizeRow] = field(default_factory=list)
    has_report: bool = False
    previous_has_report: bool = False

    @property
    def ops_added(self) -> list[str]:
        return kernels_only_in(self.kernels, self.previous_kernels)

    @property
    def ops_removed(self) -> list[str]:
        return kernels_only_in(self.previous_kernels, self.kernels)


def _report_at(repo: Repo, rev: str) -> dict[str, Any] | None:
    """extras/check_report.json at `rev` (None: absent or not a JSON object)."""
    text = g.file_at(repo, rev, CHECK_REPORT_FILE)
    if not text:
        return None
    try:
        loaded = json.loads(text)
    except json.JSONDecodeError:
        return None
    return loaded if isinstance(loaded, dict) else None


def gather_facts(
    repo: Repo, version: str, tag: str, commit: str, previous_tag: str | None
) -> ReleaseFacts:
    """Read what the notes need from `commit` and from `refs/tags/<previous_tag>`: each one's
    library facts (`generator.vcs.git.facts_at`) and check report."""
    previous = f"refs/tags/{previous_tag}^{{commit}}" if previous_tag else None
    here = g.facts_at(repo, commit)
    before = g.facts_at(repo, previous) if previous else None
    report = _report_at(repo, commit)
    previous_report = _report_at(repo, previous) if previous else None
    return ReleaseFacts(
        version=version,
        tag=tag,
        commit=commit,
        previous_tag=previous_tag,
        pin=here.pin,
        previous_pin=before.pin if before else None,
        upstream_version=here.upstream_version,
        previous_upstream=before.upstream_version if before else None,
        kernels=list(here.kernels),
        previous_kernels=list(before.kernels) if before else [],
        sizes=size_rows(report, previous_report) if report else [],
        instructions=instruction_rows(report, previous_report) if report else [],
        has_report=report is not None,
        previous_has_report=previous_report is not None,
    )


def render_notes(f: ReleaseFacts) -> str:
    """The release notes (Markdown): Upgrading, ExecuTorch pin, operators, sizes, instructions
    per inference (when the check report has them); the template `NOTES_TEMPLATE`, in
    `generator.pipeline.render`'s environment."""
    compare = (
        UPSTREAM_COMPARE.format(old=f.previous_pin, new=f.pin)
        if f.previous_tag is not None and f.pin and f.previous_pin and f.pin != f.previous_pin
        else ""
    )
    previous = f.previous_tag or "previous"
    return render(
        NOTES_TEMPLATE,
        f=f,
        pin_file=PIN_FILE,
        report_file=CHECK_REPORT_FILE,
        commit_url=UPSTREAM_COMMIT.format(sha=f.pin) if f.pin else "",
        compare_url=compare,
        code_list=code_list,
        sizes="\n".join(size_table(f.sizes, f.version, previous)),
        instructions="\n".join(instruction_table(f.instructions, f.version, previous)),
        instructions_note=INSTRUCTIONS_NOTE,
        instructions_base=any(row.base is not None for row in f.instructions),
    )


def tag_message(facts: ReleaseFacts) -> str:
    """The annotated tag's message: the version and the ExecuTorch pin."""
    return (
        f"ExecuTorch Arduino library {facts.version}\n\n"
        f"ExecuTorch pin: {facts.pin or 'unknown'}\n"
        f"Upstream version: {facts.upstream_version or 'unknown'}\n"
    )


# -- git -----------------------------------------------------------------------------------------


def create_tag(
    repo: Repo, tag: str, commit: str, message: str, identity: g.Identity, genv: g.GitEnv
) -> str:
    """Create (or, moving it, replace) the annotated `tag` on `commit` in the clone, with
    `identity` as the tagger (GIT_COMMITTER_* override the machine's user.name/email).

    Returns:
        The new tag object's SHA.
    """
    env = {
        **genv.env,
        "GIT_AUTHOR_NAME": identity.name,
        "GIT_AUTHOR_EMAIL": identity.email,
        "GIT_COMMITTER_NAME": identity.name,
        "GIT_COMMITTER_EMAIL": identity.email,
    }
    tagger = g.GitEnv(env, genv.token)
    cwd = Path(repo.working_dir)
    tagger.run(
        ["-c", "tag.gpgSign=false", "tag", "--annotate", "--force", "-m", message, tag, commit],
        cwd=cwd,
    )
    return tagger.run(["rev-parse", "--verify", f"refs/tags/{tag}"], cwd=cwd)


def push_tag(repo: Repo, tag: str, old: TagRef | None, genv: g.GitEnv) -> None:
    """Push `refs/tags/<tag>` (and nothing else) to origin. A new tag is pushed plainly (the
    remote refuses it if the tag appeared meanwhile); a moved one with a lease on its old
    value `old.obj`.

    Raises:
        FatalError: rejected (the tag appeared or moved meanwhile, rules, hooks),
            unauthenticated, or the remote unreachable; the message says which.
    """
    ref = f"refs/tags/{tag}"
    args = ["push", "--no-verify", "origin", f"{ref}:{ref}"]
    if old is not None:
        args.insert(1, f"--force-with-lease={ref}:{old.obj}")
    try:
        genv.run(args, cwd=Path(repo.working_dir))
    except g.GitFailure as e:
        low = f"{e.stdout}\n{e.stderr}".lower()
        if "stale info" in low or "already exists" in low or "fetch first" in low:
            raise FatalError(
                f"could not push {tag}: someone created or moved {tag} on the library repo "
                "since it was fetched; nothing was changed. Run release again to see where it "
                "points now"
            ) from None
        raise g.describe_git_failure(e, genv, f"push {tag} to the library repo") from None


def write_notes(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same folder (os.replace), so a
    reader never sees half the notes.

    Raises:
        FatalError: it cannot be written (no temporary file is left behind).
    """
    try:
        if path.exists() and not path.is_file():  # /dev/stdout, a pipe: no rename there
            with open(path, "a", encoding="utf-8") as f:
                f.write(text)
        else:
            write_atomic(path, text)
    except OSError as e:
        raise FatalError(f"--notes {path}: cannot write it ({e})") from None
