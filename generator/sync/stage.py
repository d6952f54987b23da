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
  a workflow job's output) before it uses the tree, and never executes anything in it: no
  link is followed, no name git interprets (`GIT_NAMES`) is accepted, the version and pin
  are the tree's own, and the report may name only the tree's examples.

A child of the same user can still change what the parent later runs or reads outside the
files named here (the generator's own sources, a `git` earlier on PATH, Python's user site,
a process started outside its process tree: `generator.sync.subreaper`); plain `sync` narrows
that, only the workflow's separate jobs close it.

A child run as root could read any process's memory (CAP_SYS_PTRACE): the child drops that
capability from its bounding set before it execs (`_drop_ptrace`), but root keeps others
(reading any file, for one), so as root only separate jobs (data/workflows/sync.yml: the prepare
job has no secret at all) keep the token away from upstream code.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import os
import re
import signal
import stat
import subprocess
import sys
import unicodedata
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from generator.library.layout import PIN_FILE, PROPERTIES_FILE
from generator.library.properties import properties_version
from generator.pipeline.run import BuildResult
from generator.sync import subreaper
from generator.sync.staged_facts import check_versions, staged_build
from generator.sync.upstream_stage import UPSTREAM_JSON, staged_comparison
from generator.util.errors import FatalError
from generator.util.urls import proxy_without_credentials

#: Environment variables that hold the library repo's credentials; never passed to the
#: unprivileged phase (SYNC_TOKEN: what the workflow names the token before it is exported).
SECRET_ENVS = ("GITHUB_TOKEN", "SYNC_APP_PRIVATE_KEY", "SYNC_TOKEN")
#: The staging folder's parts.
LIBRARY_DIR = "library"
MANIFEST_FILE = "manifest.json"
REPORT_JSON = "report.json"
REPORT_MD = "report.md"
#: The manifest's format; another one is refused (2: the digest covers the executable bit,
#: and the manifest lists the executable files).
MANIFEST_FORMAT = 2
#: Path components (any case) the staged library may not hold: git interprets them.
GIT_NAMES = frozenset({".git", ".gitignore", ".gitattributes", ".gitmodules"})
#: The most bytes read of one staged file: the manifest and the reports, a library file.
MAX_REPORT_BYTES = 64 * 1024 * 1024
MAX_TREE_FILE_BYTES = 512 * 1024 * 1024
#: The deepest and largest staged tree taken: the generated library of
#: cff6f4dd32e6 (1.5.0) is 7 folders deep with 519 files and folders.
MAX_TREE_DEPTH = 64
MAX_TREE_ENTRIES = 200_000
#: Linux prctl(2) option: whether the process may be dumped (and its /proc files read).
PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3
#: prctl(2): drop a capability from the bounding set (then lost at execve, even by root).
PR_CAPBSET_DROP = 24
#: capabilities(7): what lets root read a non-dumpable process's /proc files and memory.
CAP_SYS_PTRACE = 19


#: Variables of an Actions step the unprivileged child of a plain `sync` does not get: the
#: files through which a step sets later steps' environment, PATH, outputs and summary
#: (GitHub Docs, "Workflow commands for GitHub Actions": environment files), the runner's
#: temporary folder, which holds those files (`$RUNNER_TEMP/_runner_file_commands/`:
#: actions/runner, src/Runner.Worker/FileCommandManager.cs), and the runner's own tokens
#: ("Variables": default environment variables). This hides the folder's name only: the
#: same user may still find it (below `$HOME`, in `/proc`), so inside an Actions job only
#: the two phases in separate jobs keep the ref's code from the later steps.
RUNNER_ENVS = (
    "GITHUB_ENV",
    "GITHUB_PATH",
    "GITHUB_OUTPUT",
    "GITHUB_STATE",
    "GITHUB_STEP_SUMMARY",
    "RUNNER_TEMP",
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


#: What the unprivileged child may get of the environment (`child_env`): exact names, then
#: prefixes. What the build, the check and their toolchains read: the locale, temporary
#: folders, Python's and the generator's settings, git's global config (the mirrors it
#: names), Arduino's folders, proxies, and the runner's descriptive variables.
CHILD_ENV_NAMES = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM",
        "TMPDIR", "TEMP", "TMP", "COLUMNS", "NO_COLOR", "FORCE_COLOR", "VIRTUAL_ENV",
        "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "FLATC", "CC", "CXX",
        "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
        "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CI",
    }
)  # fmt: skip
CHILD_ENV_PREFIXES = (
    "LC_",
    "PYTHON",
    "EXECUTORCH_ARDUINO_",
    "ARDUINO_",
    "XDG_",
    "GITHUB_",
    "RUNNER_",
)
#: Names that never go to the child, whatever the lists say: credentials by their name
#: (a token, a personal access token as a word of the name, a key of any kind, a secret, a
#: password or passphrase, a credential, an auth value).
SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|AUTH|KEY|(?:^|_)PAT(?:_|$)", re.I
)
#: A variable naming more variables for the child (comma-separated; those matching
#: `SECRET_NAME` are still dropped), e.g. what a test harness passes its hooks.
CHILD_ENV_EXTRA = "EXECUTORCH_SYNC_CHILD_ENV"


def _is_proxy(name: str) -> bool:
    """Whether `name` is a proxy setting (`http_proxy`, `ALL_PROXY`, `ftp_proxy`, ...; not
    `no_proxy`): whichever list lets it into the child, it goes without user-info."""
    lower = name.lower()
    return lower.endswith("_proxy") and lower != "no_proxy"


def child_env(environ: Mapping[str, str], secrets: Collection[str] = ()) -> dict[str, str]:
    """What of `environ` the unprivileged child gets: only `CHILD_ENV_NAMES`, names starting
    with `CHILD_ENV_PREFIXES` and those `$EXECUTORCH_SYNC_CHILD_ENV` lists; never
    `SECRET_ENVS`, `RUNNER_ENVS`, a name matching `SECRET_NAME` (GH_TOKEN, GITHUB_PAT, ...),
    nor any variable whose value holds one of the secrets' values or one of `secrets`. So
    SSH_AUTH_SOCK, GIT_ASKPASS, GIT_CONFIG_COUNT/KEY_n/VALUE_n and the like stay out, and
    every proxy setting (`_is_proxy`) loses its user-info (`proxy_without_credentials`);
    ALL_PROXY is not passed unless `$EXECUTORCH_SYNC_CHILD_ENV` names it."""
    values = {environ.get(name, "") for name in SECRET_ENVS} | set(secrets)
    values = {v for v in values if v}
    dropped = {*SECRET_ENVS, *RUNNER_ENVS}
    extra = {n.strip() for n in environ.get(CHILD_ENV_EXTRA, "").split(",") if n.strip()}

    def allowed(key: str) -> bool:
        if key in dropped or SECRET_NAME.search(key):
            return False
        return key in CHILD_ENV_NAMES or key in extra or key.startswith(CHILD_ENV_PREFIXES)

    return {
        key: proxy_without_credentials(value) if _is_proxy(key) else value
        for key, value in environ.items()
        if allowed(key) and not any(secret in value for secret in values)
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


def tree_digest(root: Path, executable: Collection[str] | None = None) -> str:
    """`sha256:` and a sha256 over every regular file below `root`, sorted by relative path:
    its path, whether it is executable (the one mode bit git records: 100755 or 100644) and
    the sha256 of its bytes. Folders do not count, so an empty one that an artifact upload
    drops changes nothing.

    Args:
        executable: the relative paths to take as executable (the manifest's list, since an
            artifact upload and download drops modes); None: the files' own modes.
    Raises:
        FatalError: `root` is not a folder, or holds a symbolic link or a special file (a link
            could make the publish phase read and publish its own files, e.g.
            `/proc/self/environ`), or a path component git would interpret
            (`GIT_NAMES`: a `.git` folder's config runs programs, e.g. core.fsmonitor, in the
            publishing git; .gitignore, .gitattributes and .gitmodules change what is pushed).
    """
    digest = hashlib.sha256()
    for rel, path, mode in _staged_files(root):
        runs = bool(mode & 0o111) if executable is None else rel in executable
        digest.update(rel.encode() + b"\0" + (b"x" if runs else b"-"))
        digest.update(hashlib.sha256(_read_regular(path, MAX_TREE_FILE_BYTES)).digest())
    return f"sha256:{digest.hexdigest()}"


def executable_files(root: Path) -> list[str]:
    """The relative paths of the files below `root` that have an executable bit (sorted)."""
    return sorted(rel for rel, _, mode in _staged_files(root) if mode & 0o111)


def _staged_files(root: Path) -> list[tuple[str, Path, int]]:
    """(relative path, path, st_mode) of every regular file below `root`, sorted by path,
    walked with an explicit stack (`os.walk` recurses once per folder level in Python 3.11,
    so a deep tree would be a RecursionError), at most `MAX_TREE_DEPTH` folders deep and
    `MAX_TREE_ENTRIES` entries.

    Raises:
        FatalError: see `tree_digest`; a tree deeper or bigger than those limits.
    """
    if root.is_symlink() or not root.is_dir():
        raise FatalError(f"the staged library {root} is not a folder")
    found = []
    entries = 0
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        if depth > MAX_TREE_DEPTH:
            rel = folder.relative_to(root).as_posix()
            raise FatalError(
                f"the staged library is over {MAX_TREE_DEPTH} folders deep (at "
                f"{rel[:200]!r}...), deeper than a generated library: refusing to publish it"
            )
        with os.scandir(folder) as listing:
            names = sorted(entry.name for entry in listing)
        entries += len(names)
        if entries > MAX_TREE_ENTRIES:
            raise FatalError(
                f"the staged library holds over {MAX_TREE_ENTRIES} files and folders, more "
                "than a generated library: refusing to publish it"
            )
        for name in names:
            path = folder / name
            rel = path.relative_to(root).as_posix()
            _check_name(name, rel)
            info = path.lstat()
            mode = info.st_mode
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise FatalError(
                    f"the staged library holds {rel!r}, which is no regular file or folder "
                    "(a symbolic link or a special file): refusing to publish it"
                )
            if stat.S_ISREG(mode) and info.st_nlink > 1:
                # a file outside the stage under a second name: giving it its mode would
                # change that file
                raise FatalError(
                    f"the staged library holds {rel!r}, a hard link: refusing to publish it"
                )
            if stat.S_ISDIR(mode):
                stack.append((path, depth + 1))
            else:
                found.append((rel, path, mode))
    return sorted(found)


#: Default_Ignorable_Code_Point (Unicode 15.1, DerivedCoreProperties.txt): code points a
#: file system or a renderer may drop from a name. They include every one git's `utf8.c`
#: (`next_hfs_char`, the CVE-2014-9390 fix, git/git v2.2.1) says HFS+ ignores:
#: U+200C..U+200F, U+202A..U+202E, U+206A..U+206F, U+FEFF.
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)


def git_name(name: str) -> str:
    """`name` as a file system that folds case by Unicode, normalises it or ignores
    invisible code points (HFS+, APFS, NTFS, and NTFS's dropping of trailing dots and
    spaces) may take it: NFKC, case-folded (U+017F LONG S is "s"), default-ignorable code
    points removed, trailing dots and spaces dropped. `_check_name` compares this with
    `GIT_NAMES`."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return unicodedata.normalize("NFKC", _IGNORABLE.sub("", folded)).rstrip(". ")


def _check_name(name: str, rel: str) -> None:
    """Refuse a path component that git, on some file system, takes for one of its own.

    Raises:
        FatalError: `name` is not UTF-8 (the digest, git and GitHub take paths as UTF-8), or
            `git_name(name)` is in `GIT_NAMES`.
    """
    try:
        name.encode("utf-8")  # os.scandir gives undecodable bytes as lone surrogates
    except UnicodeEncodeError:
        raise FatalError(
            f"the staged library holds {rel!r}, a name that is not UTF-8: refusing to publish it"
        ) from None
    if git_name(name) in GIT_NAMES:
        raise FatalError(
            f"the staged library holds {rel if rel.isascii() and rel.isprintable() else repr(rel)}"
            ", a name git interprets (a repository, or "
            "its ignore, attribute or submodule rules, on some file system): refusing to "
            "publish it"
        )


def _read_regular(path: Path, limit: int) -> bytes:
    """The bytes of the regular file `path`, not following a symbolic link (`O_NOFOLLOW`) and
    not blocking on a FIFO (`O_NONBLOCK`).

    Raises:
        FatalError: `path` is a link, a special file, unreadable or over `limit` bytes.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise FatalError(
            f"cannot read the staged {path} ({type(e).__name__}: {e}): it must be a regular "
            "file, not a symbolic link"
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # before fdopen, which refuses a folder itself
        os.close(fd)
        raise FatalError(f"the staged {path} is not a regular file: refusing to read it")
    with os.fdopen(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise FatalError(f"the staged {path} is over {limit} bytes: refusing to read it")
    return data


@dataclass(frozen=True)
class StagedReport:
    """The check report as the prepare phase staged it (`CheckReportLike`), and its
    comparison of upstream's `examples/arduino/` (`upstream_stage.staged_comparison`,
    checked; None: none staged)."""

    passed: bool
    markdown: str
    data: dict[str, Any]
    upstream: dict[str, Any] | None = None

    def to_markdown(self) -> str:
        return self.markdown

    def to_dict(self) -> dict[str, Any]:
        return self.data


def write_stage(
    stage: Path,
    built: BuildResult,
    passed: bool,
    markdown: str,
    data: dict[str, Any],
    upstream: dict[str, Any],
) -> str:
    """Write the report, the upstream comparison (`upstream_stage.prepare_comparison`) and
    the manifest beside `built.out` (which must be `stage/library`); returns the tree's
    digest."""
    if built.out.resolve() != (stage / LIBRARY_DIR).resolve():
        raise FatalError(f"the build wrote {built.out}, not {stage / LIBRARY_DIR}")
    digest = tree_digest(built.out)
    facts = {k: v for k, v in asdict(built).items() if k != "out"}
    (stage / REPORT_JSON).write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    (stage / REPORT_MD).write_text(markdown)
    (stage / UPSTREAM_JSON).write_text(json.dumps(upstream, indent=2, sort_keys=True) + "\n")
    manifest = {
        "format": MANIFEST_FORMAT,
        "digest": digest,
        "executable": executable_files(built.out),
        "passed": passed,
        "build": facts,
    }
    (stage / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return digest


def read_stage(stage: Path, expected: str | None = None) -> tuple[BuildResult, StagedReport]:
    """The build and the check report a prepare phase staged in `stage`, checked: the staged
    files are regular files (no link is followed), the tree's digest is the manifest's (and
    `expected`), the version and pin are the staged library's own (library.properties,
    executorch_pin.txt), and the report names only examples the staged library has. The
    staged files then get the modes the digest covered (an artifact download drops them).

    Args:
        expected: the digest the caller was told (e.g. the prepare job's output); None: only
            the manifest's own is checked.
    Raises:
        FatalError: a part missing, not a regular file, too big or malformed, a manifest of
            another format, the tree's digest not the manifest's or not `expected` (the tree
            changed since it was prepared, or is not the one prepared), a version or pin the
            staged library does not hold, or a report naming another example.
    """
    try:
        manifest = json.loads(_read_regular(stage / MANIFEST_FILE, MAX_REPORT_BYTES))
        data = json.loads(_read_regular(stage / REPORT_JSON, MAX_REPORT_BYTES))
        markdown = _read_regular(stage / REPORT_MD, MAX_REPORT_BYTES).decode()
        upstream = json.loads(_read_regular(stage / UPSTREAM_JSON, MAX_REPORT_BYTES))
    # nesting deeper than json's parser stack is RecursionError, not JSONDecodeError
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise FatalError(
            f"{stage} is not a folder `sync --prepare` wrote ({type(e).__name__}: {e})"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise FatalError(f"{stage / MANIFEST_FILE} is not a manifest of format {MANIFEST_FORMAT}")
    library = stage / LIBRARY_DIR
    executable = manifest.get("executable")
    if not isinstance(executable, list) or not all(isinstance(p, str) for p in executable):
        raise FatalError(f"{stage / MANIFEST_FILE} lacks the list of executable files")
    digest = tree_digest(library, set(executable))
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
    built = staged_build(facts, library, stage / MANIFEST_FILE)
    _check_own_facts(built)
    check_versions(built, stage / MANIFEST_FILE)
    _check_report_examples(data, library)
    for rel, path, mode in _staged_files(library):
        if bool(mode & 0o111) != (rel in executable):
            path.chmod(0o755 if rel in executable else 0o644)
    compared = staged_comparison(upstream, stage / UPSTREAM_JSON)
    return built, StagedReport(manifest.get("passed") is True, markdown, data, compared)


def _check_own_facts(built: BuildResult) -> None:
    """Refuse a manifest whose version or pin is not the staged library's own: the version
    checks, the branch and the pull request use the manifest's, the push the tree's.

    Raises:
        FatalError: naming both.
    """
    props = built.out / PROPERTIES_FILE
    pin = built.out / PIN_FILE
    version = properties_version(_read_regular(props, MAX_REPORT_BYTES) if props.exists() else None)
    sha = (
        _read_regular(pin, MAX_REPORT_BYTES).decode(errors="replace").strip()
        if pin.exists()
        else None
    )
    if version != built.library_version or sha != built.sha:
        raise FatalError(
            f"the staged manifest says library {built.library_version[:100]!r} with ExecuTorch "
            f"{built.sha[:100]!r}, but the staged library holds version {version!r} "
            f"({PROPERTIES_FILE}) and pin {sha and sha[:100]!r} ({PIN_FILE}): refusing to "
            "publish it"
        )


#: What an example's name may be: one plain path component.
_EXAMPLE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


def _check_report_examples(data: dict[str, Any], library: Path) -> None:
    """Refuse a report whose example entries name anything but an example folder of the
    staged library (the publish phase rewrites `examples/<name>/<name>.ino` by them).

    Raises:
        FatalError: naming the entry.
    """
    entries = data.get("examples") or []
    if not isinstance(entries, list):
        raise FatalError(f"the staged {REPORT_JSON} has examples that are not a list")
    for entry in entries:
        name = entry.get("example") if isinstance(entry, dict) else None
        if (
            not isinstance(name, str)
            or not _EXAMPLE_NAME.match(name)
            or not (library / "examples" / name).is_dir()
        ):
            raise FatalError(
                f"the staged {REPORT_JSON} names the example {name!r}, which is no example "
                "folder of the staged library: refusing to publish it"
            )


def run_prepare_child(
    argv: Sequence[str], env: Mapping[str, str], say: Callable[[str], None]
) -> None:
    """Run `python -m generator <argv>` (the prepare phase; `CHILD_COMMAND`) with `env`, in a
    new session, kill its whole process group when it ends (however it ends, Ctrl-C
    included), then every process it left behind that escaped the group (this process is
    their subreaper: `generator.sync.subreaper`), so none the untrusted build or check started
    lives on while the token is used. Call it before anything holds or writes what git will
    use with the token (the clone, the askpass program, a private git config).

    Raises:
        FatalError: it exited non-zero (its own messages went to stderr before), or what it
            left behind could not be ended.
    """
    if not subreaper.make_subreaper():
        say(
            "warning: could not make sync a child subreaper (not Linux?): a process the "
            "build leaves outside its process group is not ended"
        )
    keep = subreaper.children()
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
        ended = subreaper.end_orphans(keep)
    if ended:
        say(f"ended {len(ended)} process(es) the unprivileged build left behind")
    if code != 0:
        raise FatalError(
            f"the unprivileged build and check (sync --prepare) failed with exit code {code} "
            "(its messages are above); nothing was published",
            code if code > 0 else 1,
        )
    say("the unprivileged build and check finished; publishing from its staged library")
