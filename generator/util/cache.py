"""The generator's cache folder: where it is, every folder in it, their locks, and the step
cache. Every other module gets its cache paths from here (pre-commit's `store.py` is the
model). Layout under the cache root (the user cache folder, or `--cache-dir`):

- `repos/<url slug>/`: the cached clones (`generator/vcs/clones.py`), every use of them
  under `repos.lock` (`repos_lock`);
- `steps/<step>/<key>.json`: the results of the pure, expensive build steps, `StepCache`:
  the op set choice (`opset`), the kernel-registration codegen (`codegen`), the include closure
  (`includes`), the pruning (`prune`), each example's model.h (`model-h`), the model check's pass
  (`model-check`), flatc's outputs and its version answers (`flatc`, `flatc-version`);
- `objects/`: objects compiled by content (`generator/toolchain/objcache.py`), shared by the
  build's pruning step and `check` (`objects_dir`);
- `flatc/<version>/flatc`: a flatc built from the pinned FlatBuffers
  (`generator/pipeline/flatc.py`, `flatc_path`);
- `build.lock`: one build at a time per cache (`build_lock`).

Not cache: `sync`'s and `release`'s work folders (`generator/util/tempdirs.py`).

A step entry is keyed by everything that determines the step's result (the ref's full SHA,
the step's options, the torch version, and `code_version` of the generator modules that
compute it) and holds the result and a SHA-256 of it. It is written atomically and checked
when read: a missing, unreadable or corrupt entry is a miss (the step runs and the entry is
rewritten), never a wrong library. `EXECUTORCH_ARDUINO_NO_STEP_CACHE=1` turns the step
cache off (the benchmark's cache-disabled run).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, TypeVar

import platformdirs

from generator.util.atomic import write_atomic
from generator.util.errors import FatalError

#: Set to 1 to run every step (no step cache read or written).
NO_STEP_CACHE_ENV = "EXECUTORCH_ARDUINO_NO_STEP_CACHE"
T = TypeVar("T")

#: Bumped when the entry format changes.
_FORMAT = 1


def default_cache_dir() -> Path:
    """The user cache folder of this tool (platformdirs), e.g. ~/.cache/executorch-arduino."""
    return Path(platformdirs.user_cache_dir("executorch-arduino"))


def check_cache_dir(cache: Path) -> Path:
    """The cache folder, absolute; nothing is created (see `create_cache_dir`).

    Raises:
        FatalError: when it exists and is not a folder.
    """
    cache = cache.expanduser().resolve()
    if cache.exists() and not cache.is_dir():
        raise FatalError(f"--cache-dir {cache} is a file; name a folder for the cache")
    return cache


def create_cache_dir(cache: Path) -> Path:
    """Create the (checked) cache folder `cache`; returns it.

    Raises:
        FatalError: when it cannot be created.
    """
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise FatalError(
            f"cannot use --cache-dir {cache}: {e.strerror or e}; choose a folder you can write"
        ) from None
    return cache


@contextmanager
def cache_lock(path: Path, say: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold an exclusive lock on `<path>.lock`; a second holder waits, and says so through
    `say` (default: a line on stderr) before it starts waiting."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.with_suffix(".lock")
    with open(lock, "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            (say or stderr_line)(
                f"waiting for the cache lock {lock}: another build is using the cache "
                f"{path.parent} (it continues when that one ends; pass another --cache-dir "
                "to run both at once)"
            )
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def repos_dir(cache: Path) -> Path:
    """The folder of the cached clones under the cache root `cache`."""
    return cache / "repos"


def repos_lock(cache: Path) -> AbstractContextManager[None]:
    """The lock every use of the cached clones of `cache` holds (`<cache>/repos.lock`)."""
    return cache_lock(repos_dir(cache))


def build_lock(cache: Path) -> AbstractContextManager[None]:
    """The lock a build holds on `cache` (`<cache>/build.lock`): the cached work trees are
    shared, and another run switching them to another commit mid-build would mix two commits
    in one library."""
    return cache_lock(cache / "build")


def objects_dir(cache: Path | None) -> Path:
    """The object cache under the cache root `cache` (None: the user cache folder's)."""
    return (cache if cache is not None else default_cache_dir()) / "objects"


def flatc_path(cache: Path, version: str) -> Path:
    """Where the flatc of FlatBuffers `version` built by the generator is kept under `cache`."""
    return cache / "flatc" / version / "flatc"


def stderr_line(text: str) -> None:
    """Say `text` on stderr at once (waits, cache trouble)."""
    print(text, file=sys.stderr, flush=True)


# --- the step cache ------------------------------------------------------------------------


def code_version(*modules: str) -> str:
    """A SHA-256 of the source files of `modules` (dotted names, under `generator/`): a change
    to the code that computes a step invalidates its cached results."""
    root = Path(__file__).resolve().parent.parent  # generator/
    digest = hashlib.sha256()
    for name in modules:
        path = root / (name.replace(".", "/") + ".py")
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def scan_tree(folder: Path) -> list[tuple[str, os.DirEntry[str]]]:
    """Every entry below `folder` that is not a real folder, as (POSIX path relative to
    `folder`, its `os.DirEntry`), sorted by path segments (the order of `sorted(rglob)`).
    Real folders are entered; a symbolic link to a folder is listed, not entered.

    One `os.scandir` per folder, no `Path` per entry: the warm build hashes its tree several
    times (the step cache's keys) and vendoring walks whole checkouts, and `rglob` with a
    `stat` per path was most of that time.
    """
    found: list[tuple[tuple[str, ...], str, os.DirEntry[str]]] = []
    pending = [("", os.fspath(folder))]
    while pending:
        prefix, path = pending.pop()
        with os.scandir(path) as entries:
            for entry in entries:
                rel = prefix + entry.name
                if entry.is_dir(follow_symlinks=False):
                    pending.append((rel + "/", entry.path))
                else:
                    found.append((tuple(rel.split("/")), rel, entry))
    found.sort(key=lambda item: item[0])
    return [(rel, entry) for _, rel, entry in found]


def tree_files(folder: Path) -> list[tuple[str, str]]:
    """Every file below `folder` as (POSIX path relative to it, absolute path), in the order
    of `sorted(folder.rglob("*"))`: by path segments. What `rglob` plus `is_file` selects:
    regular files and symbolic links to them; folders are entered, links to folders not
    (`scan_tree`)."""
    return [(rel, entry.path) for rel, entry in scan_tree(folder) if entry.is_file()]


def tree_hash(folder: Path) -> str:
    """sha256 over the sorted relative paths and contents of every file below `folder`
    (`tree_files`): each path's UTF-8 bytes, a NUL, then the sha256 digest of its content.

    Returns:
        64 hex digits; equal trees give equal hashes, whatever their timestamps.
    """
    digest = hashlib.sha256()
    for rel, path in tree_files(folder):
        digest.update(rel.encode() + b"\0")
        with open(path, "rb") as handle:
            digest.update(hashlib.sha256(handle.read()).digest())
    return digest.hexdigest()


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


class StepCache:
    """Results of pure build steps under `<cache>/steps/` (see the module docstring).

    `root` None (or the environment variable set) makes every lookup a miss and writes nothing.
    `hits` and `misses` count lookups, for the tests and the benchmark.
    """

    def __init__(self, root: Path | None) -> None:
        off = os.environ.get(NO_STEP_CACHE_ENV, "") not in ("", "0")
        self.root = None if root is None or off else root / "steps"
        self.hits = 0
        self.misses = 0

    def entry(self, step: str, key: Mapping[str, Any]) -> Path | None:
        """Where the result of `step` for `key` (JSON-able) is kept (None: cache off)."""
        if self.root is None:
            return None
        return self.root / step / f"{_digest({'format': _FORMAT, 'step': step, **key})}.json"

    def get(self, step: str, key: Mapping[str, Any], decode: Callable[[Any], T | None]) -> T | None:
        """The result of `step` for `key` (JSON-able), `decode`d from the stored JSON value, or
        None on a miss: no entry, or one that is unreadable, corrupt, made for another key, or
        that `decode` refuses (returns None for)."""
        path = self.entry(step, key)
        if path is None:
            return None
        found: T | None = None
        try:
            stored = json.loads(path.read_bytes())
            if (
                isinstance(stored, dict)
                and stored.get("key") == _digest(dict(key))
                and stored.get("sha256") == _digest(stored.get("result"))
            ):
                found = decode(stored["result"])
        except (OSError, ValueError):
            pass
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def put(self, step: str, key: Mapping[str, Any], result: Any) -> None:
        """Store `result` (JSON value) for `key`, atomically; a cache that cannot be written
        costs only the time saved next run."""
        path = self.entry(step, key)
        if path is None:
            return
        stored = {"key": _digest(dict(key)), "sha256": _digest(result), "result": result}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, json.dumps(stored, sort_keys=True))
        except OSError as e:
            stderr_line(f"cannot write the step cache entry {path}: {e.strerror or e}")
