"""The upstream comparison (`generator.sync.upstream`) made in the prepare phase and staged
as data (`upstream.json`), so the publish phase, which holds the token, runs no git in the
build's cached ExecuTorch clone (issue 29): that clone, its `.git/config` included
(`remote.origin.uploadpack`, `core.sshCommand`, ...), is the untrusted build's to write.

The prepare phase reads the base branch's pin from the library repo without a token
(`base_pin`: the Library Manager indexes public repositories only), compares it with the new
commit in the cache, and stages the result. The publish phase checks the staged data (types,
bounds, the new commit its own, the old one the base branch's pin it reads from its own
clone) and recomputes what it can itself: each file's role (`classify`) and the compare link.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any, get_args

from git import Repo

from generator.sync.options import SyncOptions
from generator.sync.upstream import (
    _STATUS,
    FileChange,
    Outcome,
    UpstreamChanges,
    arduino_changes,
    compare_url,
    is_sha,
)
from generator.sync.upstream_roles import classify
from generator.util.errors import FatalError
from generator.vcs import git as g
from generator.vcs.failures import git_reason

#: The staging folder's part.
UPSTREAM_JSON = "upstream.json"
#: The most files, and the longest path and reason, taken from the staged comparison.
MAX_FILES = 10_000
MAX_PATH = 4096
MAX_REASON = 500
#: What a staged reason (git's message, from the untrusted phase) keeps: plain words and
#: punctuation that Markdown does not read (no `<`, `@`, `#`, backtick, bracket, `*`, line
#: break); anything else is shown as `?`.
_REASON_CHARS = re.compile(r"[^A-Za-z0-9 .,:;'()/=+_-]")


def base_pin(options: SyncOptions) -> tuple[str | None, str]:
    """The base branch's pin of the library repo (`executorch_pin.txt` or
    `extras/library.json`), read without a token, one commit deep, into a temporary
    repository: (pin or None, "") or (None, why it could not be read)."""
    remote = options.remote or f"https://github.com/{options.repo}.git"
    genv = g.GitEnv({"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "/bin/false"}, None)
    with tempfile.TemporaryDirectory(prefix="sync-base-") as tmp:
        try:
            genv.run(["init", "--quiet", tmp])
            ref = f"refs/heads/{options.base}"
            genv.run(["fetch", "--quiet", "--depth=1", "--no-tags", "--", remote, ref], Path(tmp))
            with Repo(tmp) as repo:
                return g.facts_at(repo, "FETCH_HEAD").pin, ""
        except g.GitFailure as e:
            return None, git_reason(e.stderr).replace("\n", "; ")


def prepare_comparison(options: SyncOptions, new: str) -> dict[str, Any]:
    """What the prepare phase stages: the comparison of `examples/arduino/` from the base
    branch's pin to `new` (`arduino_changes`, in the cache), or why there is none."""
    old, problem = base_pin(options)
    if problem:
        return {"error": f"the prepare phase could not read the base branch: {problem}"}
    changes = arduino_changes(options.build.executorch_repo, old, new, options.build.cache_dir)
    files = [
        {
            "path": f.path,
            "status": f.status,
            "old_path": f.old_path,
            "added": f.added,
            "deleted": f.deleted,
            "binary": f.binary,
        }
        for f in changes.files
    ]
    return {
        "old": changes.old,
        "new": changes.new,
        "outcome": changes.outcome,
        "files": files,
        "reason": changes.reason,
        "old_has": changes.old_has,
        "new_has": changes.new_has,
    }


def _bad(where: Path, what: str) -> FatalError:
    return FatalError(
        f"the staged {where} has {what}: it is not what `sync --prepare` writes; refusing "
        "to publish it"
    )


def _reason(value: object, where: Path) -> str:
    if not isinstance(value, str):
        raise _bad(where, "a reason that is not text")
    return _REASON_CHARS.sub("?", value[:MAX_REASON])


def _text(value: object, where: Path, name: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not 0 < len(value) <= MAX_PATH:
        raise _bad(where, f"a {name} that is not a path")
    return value


def _count(value: object, where: Path) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**63:
        raise _bad(where, "a line count that is not a count")
    return value


def _file(entry: object, where: Path) -> FileChange:
    if not isinstance(entry, dict):
        raise _bad(where, "a file entry that is not an object")
    path = _text(entry.get("path"), where, "file")
    status = entry.get("status")
    binary = entry.get("binary")
    if status not in _STATUS.values() or not isinstance(binary, bool) or path is None:
        raise _bad(where, "a file entry of another shape")
    return FileChange(
        path=path,
        status=str(status),
        role=classify(path),
        old_path=_text(entry.get("old_path"), where, "file", optional=True),
        added=_count(entry.get("added"), where),
        deleted=_count(entry.get("deleted"), where),
        binary=binary,
    )


def staged_comparison(data: object, where: Path) -> dict[str, Any]:
    """The staged comparison `data` (`upstream.json`), checked: an object, either
    `{"error": reason}` or the fields of `UpstreamChanges`. Returns it with its files as
    `FileChange`s (roles recomputed) and its reasons reduced to plain words.

    Raises:
        FatalError: naming what is wrong.
    """
    if not isinstance(data, dict):
        raise _bad(where, "no object")
    if "error" in data:
        return {"error": _reason(data["error"], where)}
    old, new, outcome = data.get("old"), data.get("new"), data.get("outcome")
    if old is not None and not (isinstance(old, str) and len(old) <= MAX_PATH):
        raise _bad(where, "an old pin that is not text")
    if not isinstance(new, str) or not is_sha(new) or outcome not in get_args(Outcome):
        raise _bad(where, "no new commit or outcome")
    files = data.get("files")
    if not isinstance(files, list) or len(files) > MAX_FILES:
        raise _bad(where, f"files that are not a list of at most {MAX_FILES}")
    has = (data.get("old_has"), data.get("new_has"))
    if not all(isinstance(h, bool) for h in has):
        raise _bad(where, "old_has or new_has that is not true or false")
    return {
        "old": old,
        "new": new,
        "outcome": outcome,
        "files": tuple(_file(f, where) for f in files),
        "reason": _reason(data.get("reason", ""), where),
        "old_has": has[0],
        "new_has": has[1],
    }


def comparison_for(
    staged: dict[str, Any] | None, pin: str | None, new: str, url: str
) -> UpstreamChanges | None:
    """The body's comparison from the checked staged one, for the base branch's `pin` as the
    publish phase read it and the staged build's commit `new`; None: nothing was staged
    (a back end that stages no comparison: the section is left out)."""
    if staged is None:
        return None
    if pin is None:
        return UpstreamChanges(None, new, "first-sync")
    link = compare_url(url, pin, new)
    if "error" in staged:
        return UpstreamChanges(pin, new, "not-compared", link, reason=staged["error"])
    if staged["old"] != pin or staged["new"] != new:
        reason = (
            f"the prepare phase compared {str(staged['old'])[:12]}...{staged['new'][:12]}, "
            f"but the base branch pins {pin[:12] if is_sha(pin) else 'no commit SHA'}"
        )
        return UpstreamChanges(pin, new, "not-compared", link, reason=reason)
    return UpstreamChanges(
        pin,
        new,
        staged["outcome"],
        link if staged["outcome"] not in ("first-sync", "same-pin") else None,
        files=staged["files"],
        reason=staged["reason"],
        old_has=staged["old_has"],
        new_has=staged["new_has"],
    )
