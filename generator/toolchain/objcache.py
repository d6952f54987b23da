"""Objects cached by content, shared by every example, library and ref that compiles them.

An object's key is the SHA-256 of: the compiler's identity (its resolved path and
`--version`), the full flag list, the source path as given to the compiler, the source's
bytes and the bytes of every header it included. Headers are known only after a compile,
so each compile also writes a manifest (keyed without the headers) listing the headers
from its `-MD` dependency file with their hashes; a later lookup re-hashes those headers
and, when they all match, reuses the object without running the compiler (ccache's
"direct mode").

Direct mode alone misses a header added to an include folder that shadows one found
later on the include path (the old header still matches its hash). So the manifest key
also holds the names (not contents) of every file under every `-I` folder of the job,
listed once per `ObjectCache`: adding, removing or renaming a file anywhere on the
include path is a miss. A cached object is checked before use against the SHA-256 its
manifest entry recorded when it was compiled; a truncated or corrupt one is a miss and is
compiled again.

Compiles run with the library folder as working directory and relative paths (`src/...`,
`-Isrc`), so `__FILE__` and the dependency lists do not depend on where a library sits:
two copies of one ref share every object.

Layout under the cache root: `o/<2 hex>/<key>.o`, `m/<2 hex>/<key>.json`. Writes go to a
temporary name first and are renamed, so concurrent runs never see half an object.
"""

# Why this cache and not ccache: benchmarks/bench_objcache.py, ccache 4.7.5 (Debian 12), 2 CPUs
# shared with other work (2026-11-30). The compiles of one check (each example for gcc-arm and
# the host, as the toolchains list them), wall / CPU seconds, best of 2 rounds (1 where marked):
#
#   real library (main, 3 examples: 1,206 compiles, 406 distinct)  cold       warm     moved
#     ours                                                       181 / 211  5.1 / 4.6  5.4 / 4.9
#     ccache, depend mode (CCACHE_DEPEND=1)                      146 / 215  5.1 / 6.5  6.0 / 6.4
#     ccache, depend mode + our include listing (EXTRAFILES)     183 / 221  5.3 / 6.5  5.7 / 6.7
#     ccache, default (direct, else preprocessor; 1 round)       252 / -    4.1 / -    3.9 / -
#     ccache, preprocessor mode only (CCACHE_NODIRECT; 1 round)  182 / -   38.1 / -   42.2 / -
#     no cache (1 round)                                         573 / -
#   TINY library (tests/support/check_fixtures.py: 28 compiles), best of 3:
#     ours 2.0 / 3.2 cold, 0.06 / 0.06 warm; ccache depend 2.4 / 3.3, 0.07 / 0.11;
#     ccache default 3.0 / 3.9, 0.10 / 0.11; ccache preprocessor mode 2.8 / 3.9, 0.45 / 0.73
#
# Wall times swing with the other load (ccache's depend mode cold: 115 to 238 s over three
# runs); CPU times agree within a few per cent: the same cold, ours less warm. "moved": the
# library copied to another folder (ccache with hash_dir = false, as this cache ignores it).
# Correctness, warm cache, each object compared with a fresh compile: a changed header, cached
# objects truncated or with one byte flipped: every back end right. A new header that shadows an
# older one on the include path (the sketch folder is searched before src/): ccache's direct and
# depend modes hand back the old object (its manual says so, "The direct mode"); only its
# preprocessor mode is right, at 7 times our warm time. ccache made right with this cache's
# include-folder listing is no faster. So this cache stays. (The benchmark caught this cache
# taking objects cut short or with a byte flipped mid-file, which its ELF-magic check let
# through; it now checks a SHA-256 taken at compile time.)

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from generator.util.atomic import write_atomic
from generator.util.errors import FatalError


@cache
def compiler_identity(compiler: str) -> str:
    """Resolved path and `--version` output of `compiler`.

    Raises:
        FatalError: the compiler is not installed.
    """
    path = shutil.which(compiler)
    if path is None:
        raise FatalError(f"{compiler} is not installed (it is on no folder of PATH)")
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False).stdout
    return f"{os.path.realpath(path)}\n{out}"


def file_digest(path: Path) -> str | None:
    """SHA-256 (hex) of the bytes of `path`, or None when it cannot be read."""
    try:
        with path.open("rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return None


def include_dirs(job: CompileJob) -> list[Path]:
    """The `-I` folders of `job`, absolute (relative ones are taken from `job.cwd`)."""
    dirs = []
    args = list(job.argv[1:])
    for i, arg in enumerate(args):
        if arg == "-I" and i + 1 < len(args):
            dirs.append(job.cwd / args[i + 1])
        elif arg.startswith("-I") and len(arg) > 2:
            dirs.append(job.cwd / arg[2:])
    return [d.resolve() for d in dirs]


def listing_hash(folder: Path) -> str:
    """SHA-256 of the sorted relative paths of every file under `folder` (names only).

    A missing folder hashes as empty.
    """
    names = []
    for root, _dirs, files in os.walk(folder):
        rel = Path(root).relative_to(folder)
        names += [(rel / f).as_posix() for f in files]
    h = hashlib.sha256()
    for name in sorted(names):
        h.update(name.encode("utf-8", errors="surrogateescape"))
        h.update(b"\0")
    return h.hexdigest()


def parse_depfile(text: str) -> list[str]:
    """Dependencies listed in a make-style `.d` file written by GCC's `-MD`.

    Returns:
        paths as GCC wrote them (relative to its working directory, or absolute), in
        order, without the target; escaped spaces (`\\ `) are unescaped.
    """
    joined = text.replace("\\\n", " ")
    deps: list[str] = []
    for line in joined.splitlines():
        if ":" not in line or line.startswith(" "):
            continue
        _, _, rest = line.partition(": ")
        token = ""
        i = 0
        while i < len(rest):
            ch = rest[i]
            if ch == "\\" and i + 1 < len(rest) and rest[i + 1] == " ":
                token += " "
                i += 2
                continue
            if ch.isspace():
                if token:
                    deps.append(token)
                token = ""
            else:
                token += ch
            i += 1
        if token:
            deps.append(token)
        # GCC writes the object's rule first; later rules (-MP) are phony headers.
        break
    return deps


@dataclass(frozen=True)
class CompileJob:
    """One translation unit to compile.

    Attributes:
        argv: compiler and flags, without `-c`, the source or outputs.
        source: the source as passed to the compiler (relative to `cwd` when inside it).
        cwd: working directory of the compiler.
    """

    argv: tuple[str, ...]
    source: str
    cwd: Path


@dataclass
class CompileOutcome:
    """Result of one `CompileJob`.

    Attributes:
        job: the job; object: the cached object file (None when compiling failed);
        hit: True when the object came from the cache; log: compiler diagnostics;
        seconds: wall time of the compiler's run (0.0 for a hit).
    """

    job: CompileJob
    object: Path | None
    hit: bool
    log: str = ""
    seconds: float = 0.0


@dataclass
class CacheStats:
    """Counts of one or more `compile_all` calls."""

    hits: int = 0
    misses: int = 0
    failures: int = 0


@dataclass
class ObjectCache:
    """The object cache rooted at `root` (created on first use)."""

    root: Path
    stats: CacheStats = field(default_factory=CacheStats)
    _file_hashes: dict[Path, str] = field(default_factory=dict)
    _listings: dict[Path, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _listing(self, folder: Path) -> str:
        with self._lock:
            cached = self._listings.get(folder)
            if cached is None:
                cached = self._listings[folder] = listing_hash(folder)
            return cached

    def _hash_file(self, path: Path) -> str | None:
        cached = self._file_hashes.get(path)
        if cached is not None:
            return cached
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            return None
        self._file_hashes[path] = digest
        return digest

    def _manifest_key(self, job: CompileJob) -> str | None:
        source_hash = self._hash_file((job.cwd / job.source).resolve())
        if source_hash is None:
            return None
        listings = [self._listing(d) for d in include_dirs(job)]
        h = hashlib.sha256()
        parts = (compiler_identity(job.argv[0]), *job.argv[1:], job.source, source_hash, *listings)
        for part in parts:
            h.update(part.encode())
            h.update(b"\0")
        return h.hexdigest()

    @staticmethod
    def _object_key(manifest_key: str, deps: dict[str, str]) -> str:
        h = hashlib.sha256(manifest_key.encode())
        for path in sorted(deps):
            h.update(f"\0{path}\0{deps[path]}".encode())
        return h.hexdigest()

    def _path(self, kind: str, key: str, suffix: str) -> Path:
        return self.root / kind / key[:2] / f"{key}{suffix}"

    def _lookup(self, job: CompileJob, manifest_key: str) -> Path | None:
        manifest = self._path("m", manifest_key, ".json")
        try:
            entries = json.loads(manifest.read_text())
        except (OSError, ValueError):
            return None
        for entry in entries:
            deps: dict[str, str] = entry["deps"]
            if all(self._hash_file((job.cwd / p).resolve()) == h for p, h in deps.items()):
                obj = self._path("o", self._object_key(manifest_key, deps), ".o")
                if file_digest(obj) == entry.get("object"):
                    return obj
        return None

    def _compile(self, job: CompileJob, manifest_key: str) -> CompileOutcome:
        tmpdir = self.root / "tmp"
        tmpdir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=tmpdir) as work:
            obj = Path(work) / "out.o"
            dep = Path(work) / "out.d"
            argv = [*job.argv, "-MD", "-MF", str(dep), "-c", job.source, "-o", str(obj)]
            started = time.monotonic()
            proc = subprocess.run(argv, cwd=job.cwd, capture_output=True, text=True, check=False)
            seconds = time.monotonic() - started
            log = (proc.stdout + proc.stderr).strip()
            if proc.returncode != 0 or not obj.is_file():
                failed = log or f"exit {proc.returncode}"
                return CompileOutcome(job, None, hit=False, log=failed, seconds=seconds)
            deps: dict[str, str] = {}
            for p in parse_depfile(dep.read_text()):
                digest = self._hash_file((job.cwd / p).resolve())
                if digest is not None:
                    deps[p] = digest
            digest = file_digest(obj)
            target = self._path("o", self._object_key(manifest_key, deps), ".o")
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(obj, target)
        with self._lock:
            manifest = self._path("m", manifest_key, ".json")
            try:
                entries = json.loads(manifest.read_text())
            except (OSError, ValueError):
                entries = []
            entries = [
                *[e for e in entries if e["deps"] != deps][-7:],
                {"deps": deps, "object": digest},
            ]
            manifest.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(manifest, json.dumps(entries))
        return CompileOutcome(job, target, hit=False, log=log, seconds=seconds)

    def compile_one(self, job: CompileJob) -> CompileOutcome:
        """Return the object of `job`, from the cache or by running the compiler.

        Raises:
            FatalError: the compiler is not installed.
        """
        manifest_key = self._manifest_key(job)
        if manifest_key is None:
            return CompileOutcome(job, None, hit=False, log=f"{job.source}: cannot read it")
        obj = self._lookup(job, manifest_key)
        if obj is not None:
            with self._lock:
                self.stats.hits += 1
            return CompileOutcome(job, obj, hit=True)
        outcome = self._compile(job, manifest_key)
        with self._lock:
            if outcome.object is None:
                self.stats.failures += 1
            else:
                self.stats.misses += 1
        return outcome

    def compile_all(self, jobs: Sequence[CompileJob]) -> list[CompileOutcome]:
        """Compile `jobs` in parallel (one thread per CPU), in the order given.

        Returns:
            one outcome per job, same order.

        Raises:
            FatalError: a compiler is not installed.
        """
        return self.compile_each(jobs, None)

    def compile_each(
        self, jobs: Sequence[CompileJob], then: Callable[[CompileOutcome], None] | None
    ) -> list[CompileOutcome]:
        """`compile_all`, and `then` called with each outcome in its compiling thread as soon
        as it is ready (to read an object while the other compiles run); what `then` raises
        is raised here."""
        for argv0 in {job.argv[0] for job in jobs}:
            compiler_identity(argv0)  # fail once, clearly, before starting threads

        def one(job: CompileJob) -> CompileOutcome:
            outcome = self.compile_one(job)
            if then is not None:
                then(outcome)
            return outcome

        workers = max(1, os.cpu_count() or 1)
        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            return list(pool.map(one, jobs))
        finally:
            # Interrupted (Ctrl-C, SIGTERM): do not start the compiles still queued.
            pool.shutdown(wait=True, cancel_futures=True)

    #: A compile folder untouched this long (seconds) is a leftover of an interrupted run;
    #: younger ones may belong to another check sharing the cache right now.
    STALE_TEMPORARY_SECONDS = 3600

    def clear_temporaries(self, now: float | None = None) -> None:
        """Remove leftovers of interrupted compiles: folders under `tmp/` untouched for
        `STALE_TEMPORARY_SECONDS`. Each compile removes its own folder when it ends, so
        nothing younger is touched (another check may be compiling into it)."""
        limit = (time.time() if now is None else now) - self.STALE_TEMPORARY_SECONDS
        with contextlib.suppress(OSError):
            for leftover in (self.root / "tmp").iterdir():
                with contextlib.suppress(OSError):
                    if leftover.lstat().st_mtime < limit:
                        shutil.rmtree(leftover)
