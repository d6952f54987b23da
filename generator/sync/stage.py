"""The two phases of sync (issue 29): an unprivileged one that builds and checks the library
from an untrusted ExecuTorch ref, and a publish phase that holds the library repo's token.

The ExecuTorch ref is untrusted: building it runs its codegen (Python), and checking it
compiles its sources and runs them natively (host sanitizer run, QEMU). Whatever runs in the
process that holds GITHUB_TOKEN or SYNC_APP_PRIVATE_KEY can read them, even once removed from
`os.environ`: `/proc/<pid>/environ` keeps the initial environment (Linux proc(5)), readable by
the same user, and so does `/proc/<ppid>/environ` of a child. So:

- the prepare phase runs in a child process (`python -m generator sync --prepare DIR`) whose
  environment lacks the secrets (`child_env`), in its own session, whose whole process group
  is killed when it ends (`run_prepare_child`), started only after the parent made itself
  non-dumpable (`make_nondumpable`: proc(5), "PR_SET_DUMPABLE": the files of
  `/proc/<pid>/` then belong to root and ptrace-mode access checks fail for the same user);
- it leaves a staging folder (`write_stage`): `library/` (the generated tree), `report.json`
  and `report.md` (the check report) and `manifest.json` (the build's facts and the sha256
  digest of `library/`, `tree_digest`);
- the publish phase (`read_stage`) checks that digest (and the one the caller was given, e.g.
  a workflow job's output) before it uses the tree, and never executes anything in it.

A child run as root could read any process's memory (CAP_SYS_PTRACE): the child drops that
capability from its bounding set before it execs (`_drop_ptrace`), but root keeps others
(reading any file, for one), so as root only separate jobs (data/workflows/sync.yml: the prepare
job has no secret at all) keep the token away from upstream code.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import stat
import subprocess
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from generator.pipeline.run import BuildResult
from generator.util.cache import tree_hash
from generator.util.errors import FatalError

#: Environment variables that hold the library repo's credentials; never passed to the
#: unprivileged phase (SYNC_TOKEN: what the workflow names the token before it is exported).
SECRET_ENVS = ("GITHUB_TOKEN", "SYNC_APP_PRIVATE_KEY", "SYNC_TOKEN")
#: The staging folder's parts.
LIBRARY_DIR = "library"
MANIFEST_FILE = "manifest.json"
REPORT_JSON = "report.json"
REPORT_MD = "report.md"
#: The manifest's format; another one is refused.
MANIFEST_FORMAT = 1
#: Linux prctl(2) option: whether the process may be dumped (and its /proc files read).
PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3
#: prctl(2): drop a capability from the bounding set (then lost at execve, even by root).
PR_CAPBSET_DROP = 24
#: capabilities(7): what lets root read a non-dumpable process's /proc files and memory.
CAP_SYS_PTRACE = 19


#: Variables of an Actions step the unprivileged child of a plain `sync` does not get: the
#: files through which a step sets later steps' environment, PATH, outputs and summary, and
#: the runner's own tokens (GitHub Docs, "Workflow commands for GitHub Actions": environment
#: files; "Variables": default environment variables).
RUNNER_ENVS = (
    "GITHUB_ENV",
    "GITHUB_PATH",
    "GITHUB_OUTPUT",
    "GITHUB_STATE",
    "GITHUB_STEP_SUMMARY",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
)


#: How the prepare phase's child is started (its arguments follow); tests that stand in for
#: `python -m generator` (the workflow rehearsal's shim) put theirs here.
CHILD_COMMAND: list[str] = [sys.executable, "-m", "generator"]


def secrets_in_env(environ: Mapping[str, str]) -> list[str]:
    """The names of `SECRET_ENVS` that are set (non-empty) in `environ`."""
    return [name for name in SECRET_ENVS if environ.get(name)]


def child_env(environ: Mapping[str, str], secrets: Collection[str] = ()) -> dict[str, str]:
    """`environ` without `SECRET_ENVS`, `RUNNER_ENVS` and any variable whose value holds one
    of the secrets' values or one of `secrets` (a copy under another name, e.g. GH_TOKEN)."""
    values = {environ.get(name, "") for name in SECRET_ENVS} | set(secrets)
    values = {v for v in values if v}
    dropped = {*SECRET_ENVS, *RUNNER_ENVS}
    return {
        key: value
        for key, value in environ.items()
        if key not in dropped and not any(secret in value for secret in values)
    }


def make_nondumpable() -> bool:
    """Make this process non-dumpable (Linux `prctl(PR_SET_DUMPABLE, 0)`), so a process of the
    same user cannot read its `/proc/<pid>/environ` or `/proc/<pid>/mem` nor ptrace it
    (proc(5), ptrace(2) "Ptrace access mode checking"). Root (CAP_SYS_PTRACE) still can.

    Returns:
        Whether it is now non-dumpable (False off Linux, or where prctl is not available).
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return False
    if prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        return False
    return bool(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0)


def scrub_initial_environ(secrets: Collection[str]) -> bool:
    """Overwrite every occurrence of `secrets` in this process's initial environment (the
    strings `/proc/self/environ` shows: the memory from `env_start` to `env_end`, fields 50
    and 51 of `/proc/self/stat`, proc(5)) with `*`, so a child that can read
    `/proc/<ppid>/environ` regardless of `make_nondumpable` (root, on kernels where that does
    not stop it) finds no secret there. Call it after the secrets were taken out of
    `os.environ` (libc's `getenv` would return the overwritten text).

    Returns:
        Whether `/proc/self/environ` now holds none of them (False off Linux).
    """
    wanted = [s.encode() for s in secrets if s]
    if not sys.platform.startswith("linux"):
        return False
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        start, end = int(fields[47]), int(fields[48])  # fields[0] is field 3 (state)
        if not 0 < start < end:
            return False
        data = ctypes.string_at(start, end - start)
        for secret in wanted:
            at = data.find(secret)
            while at >= 0:
                ctypes.memset(start + at, ord("*"), len(secret))
                at = data.find(secret, at + len(secret))
        now = Path("/proc/self/environ").read_bytes()
    except (OSError, ValueError, IndexError):
        return False
    return not any(secret in now for secret in wanted)


def _drop_ptrace() -> None:
    """In the child before it execs (`preexec_fn`): drop CAP_SYS_PTRACE from the bounding
    set, so a child run as root does not get it back at execve (capabilities(7),
    "Transformation of capabilities during execve()") and cannot read the non-dumpable
    parent either. Without CAP_SETPCAP (an unprivileged user, who lacks CAP_SYS_PTRACE
    anyway) it fails, which is fine."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0)


def tree_digest(root: Path) -> str:
    """`sha256:` and `generator.util.cache.tree_hash` of `root` (every regular file's relative path
    and bytes; folders do not count, so an empty one that an artifact upload drops changes
    nothing).

    Raises:
        FatalError: `root` is not a folder, or holds a symbolic link or a special file (a link
            could make the publish phase read and publish its own files, e.g.
            `/proc/self/environ`).
    """
    if root.is_symlink() or not root.is_dir():
        raise FatalError(f"the staged library {root} is not a folder")
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            mode = (Path(dirpath) / name).lstat().st_mode
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                rel = (Path(dirpath) / name).relative_to(root).as_posix()
                raise FatalError(
                    f"the staged library holds {rel}, which is no regular file or folder "
                    "(a symbolic link or a special file): refusing to publish it"
                )
    return f"sha256:{tree_hash(root)}"


@dataclass(frozen=True)
class StagedReport:
    """The check report as the prepare phase staged it (`CheckReportLike`)."""

    passed: bool
    markdown: str
    data: dict[str, Any]

    def to_markdown(self) -> str:
        return self.markdown

    def to_dict(self) -> dict[str, Any]:
        return self.data


def write_stage(
    stage: Path, built: BuildResult, passed: bool, markdown: str, data: dict[str, Any]
) -> str:
    """Write the report and the manifest beside `built.out` (which must be
    `stage/library`); returns the tree's digest."""
    if built.out.resolve() != (stage / LIBRARY_DIR).resolve():
        raise FatalError(f"the build wrote {built.out}, not {stage / LIBRARY_DIR}")
    digest = tree_digest(built.out)
    facts = {k: v for k, v in asdict(built).items() if k != "out"}
    (stage / REPORT_JSON).write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    (stage / REPORT_MD).write_text(markdown)
    manifest = {"format": MANIFEST_FORMAT, "digest": digest, "passed": passed, "build": facts}
    (stage / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return digest


def read_stage(stage: Path, expected: str | None = None) -> tuple[BuildResult, StagedReport]:
    """The build and the check report a prepare phase staged in `stage`.

    Args:
        expected: the digest the caller was told (e.g. the prepare job's output); None: only
            the manifest's own is checked.
    Raises:
        FatalError: a part missing or malformed, a manifest of another format, or the tree's
            digest not the manifest's or not `expected` (the tree changed since it was
            prepared, or is not the one prepared).
    """
    try:
        manifest = json.loads((stage / MANIFEST_FILE).read_text())
        data = json.loads((stage / REPORT_JSON).read_text())
        markdown = (stage / REPORT_MD).read_text()
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise FatalError(
            f"{stage} is not a folder `sync --prepare` wrote ({type(e).__name__}: {e})"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise FatalError(f"{stage / MANIFEST_FILE} is not a manifest of format {MANIFEST_FORMAT}")
    digest = tree_digest(stage / LIBRARY_DIR)
    if digest != manifest.get("digest"):
        raise FatalError(
            f"the staged library in {stage} does not match its manifest's digest: it changed "
            "after it was prepared; run `sync --prepare` again"
        )
    if expected is not None and expected != digest:
        raise FatalError(
            f"the staged library in {stage} is {digest}, not the {expected} the prepare phase "
            "reported: refusing to publish it"
        )
    facts = manifest.get("build")
    if not isinstance(facts, dict) or not isinstance(data, dict):
        raise FatalError(f"{stage / MANIFEST_FILE} lacks the build's facts")
    try:
        built = BuildResult(out=stage / LIBRARY_DIR, **facts)
    except TypeError as e:
        raise FatalError(f"{stage / MANIFEST_FILE} has unexpected build facts: {e}") from None
    return built, StagedReport(bool(manifest.get("passed")), markdown, data)


def run_prepare_child(
    argv: Sequence[str], env: Mapping[str, str], say: Callable[[str], None]
) -> None:
    """Run `python -m generator <argv>` (the prepare phase; `CHILD_COMMAND`) with `env`, in a
    new session, and kill its whole process group when it ends (however it ends, Ctrl-C
    included), so no process the untrusted build or check left behind lives on while the
    token is used.

    Raises:
        FatalError: it exited non-zero (its own messages went to stderr before).
    """
    proc = subprocess.Popen(
        [*CHILD_COMMAND, *argv],
        env=dict(env),
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        preexec_fn=_drop_ptrace if sys.platform.startswith("linux") else None,
        stdout=2,  # its stdout (the digest) goes to our stderr: our stdout is the result's
    )
    try:
        code = proc.wait()
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        if proc.returncode is None:
            proc.wait()
    if code != 0:
        raise FatalError(
            f"the unprivileged build and check (sync --prepare) failed with exit code {code} "
            "(its messages are above); nothing was published",
            code if code > 0 else 1,
        )
    say("the unprivileged build and check finished; publishing from its staged library")
