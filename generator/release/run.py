"""The runner of `python -m generator release` (`run_release`): tag `v<version>` on the library
repo's `main` and print the release notes.

Order: options checked -> clone -> commit resolved and checked to be on main -> version read
-> `plan` (refuse, create, move, or already released) -> notes -> annotated tag -> push of the
tag alone -> notes written. Nothing is pushed before every check has passed; a branch is never
pushed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from generator.release.step import ReleaseOptions, ReleaseResult
    from generator.vcs.git import GitEnv


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _stdout(text: str) -> None:
    print(text, end="" if text.endswith("\n") else "\n", flush=True)


def run_release(
    options: ReleaseOptions,
    token: str | None,
    *,
    say: Callable[[str], None] = _stderr,
    emit: Callable[[str], None] = _stdout,
) -> ReleaseResult:
    """Tag the commit `options.ref` of the library repo as `v<version>` and push the tag.

    Args:
        options: see `ReleaseOptions`.
        token: GitHub token (from GITHUB_TOKEN; surrounding whitespace dropped), or None for
            a remote that needs none. Never printed, never in a URL, config or file.
        say: progress and what was done (stderr); emit: the release notes (stdout).
    Returns:
        What was done (see `ReleaseResult`).
    Raises:
        FatalError: a bad --repo, --remote with credentials, a token with spaces or control
            characters, an unusable --notes path; a commit not on main; no library.properties
            or version=, or a version that is not SemVer; `v<version>` on another commit
            (without --retag); a version not greater than every published `v*`; git failures
            (unreachable, credentials refused, push rejected); a tagger name or email git would
            store changed; a URL the token may not go to (--remote, git's rewriting of it, a
            redirect: `generator.util.urls.token_url_problem`). Nothing is pushed then.

    Temporary folders are removed however the run ends (SIGTERM and SIGHUP included); those
    of earlier runs that were killed are removed first and named on `say`.
    """
    from generator.util.tempdirs import exit_cleanly_on_signals, remove_stale, work_folder
    from generator.vcs import git as g
    from generator.vcs.repo_inputs import check_repo, clean_token

    token = clean_token(token)
    check_repo(options.repo)
    if options.remote is not None:
        from generator.util.urls import refuse_credentials

        refuse_credentials(options.remote, "--remote")
    g.check_identity(options.identity)
    notes_path = None
    if options.notes is not None:
        from generator.release.step import check_notes_path

        notes_path = check_notes_path(options.notes)
    remote = options.remote or f"https://github.com/{options.repo}.git"
    source = "--remote" if options.remote else "the default remote"
    with exit_cleanly_on_signals(say):
        remove_stale(say)
        with work_folder(options.work_dir, "release") as work, g.git_env(token) as genv:
            try:
                result = _release_in(options, work, genv, remote, source, say, emit)
            except g.GitFailure as e:
                raise g.describe_git_failure(
                    e, genv, "work in the clone of the library repo"
                ) from None
    if notes_path is not None:
        from generator.release.step import write_notes

        write_notes(notes_path, result.notes)
        say(f"release notes written to {notes_path}")
    return result


def _release_in(
    options: ReleaseOptions,
    work: Path,
    genv: GitEnv,
    remote: str,
    source: str,
    say: Callable[[str], None],
    emit: Callable[[str], None],
) -> ReleaseResult:
    """The part of `run_release` that works in the folder `work` (see there); `source` says
    where `remote` came from."""
    from generator.library.layout import PROPERTIES_FILE
    from generator.release import step as r
    from generator.vcs import git as g
    from generator.vcs.versions import published_versions

    say(f"cloning the library repo {genv.redact(remote)}")
    lib = g.clone(remote, work / "library", genv, source)
    commit = r.resolve_commit(lib, options.ref, genv)
    r.check_on_branch(lib, commit, options.ref, "main", genv)
    version = r.read_version(lib, commit, options.ref)
    tags = r.tag_refs(lib)
    published = published_versions(lib, PROPERTIES_FILE)
    decided = r.plan(version, commit, tags, options.retag, published)
    facts = r.gather_facts(lib, version, decided.tag, commit, decided.previous_tag)
    notes = r.render_notes(facts)

    if decided.action == "none":
        say(f"already released: {decided.tag} tags {commit} ({options.ref}); nothing pushed")
        emit(notes)
        return r.ReleaseResult(
            "already-released", decided.tag, version, commit, decided.previous_tag, notes=notes
        )
    r.create_tag(lib, decided.tag, commit, r.tag_message(facts), options.identity, genv)
    say(f"pushing {decided.tag} ({commit[:12]}) to the library repo")
    r.push_tag(lib, decided.tag, decided.old, genv)
    if decided.old is not None:
        say(f"moved {decided.tag}: {decided.old.commit} -> {commit}")
        status: Literal["released", "retagged"] = "retagged"
    else:
        say(f"released {decided.tag} at {commit}")
        status = "released"
    emit(notes)
    return r.ReleaseResult(
        status,
        decided.tag,
        version,
        commit,
        decided.previous_tag,
        moved_from=decided.old.commit if decided.old else None,
        notes=notes,
    )
