"""Step 7: the schema headers, `program_generated.h` and `scalar_type_generated.h`, made by a
flatc whose version equals the pinned FlatBuffers version exactly (step 3's program reader
uses the same flatc).

FlatBuffers' generated code checks the runtime headers' version with a static_assert, so a
flatc of another version makes headers that do not compile against the vendored runtime (or,
worse, compile and differ). Where flatc comes from, in order:
1. `$FLATC` (an explicit choice: a mismatched version is an error);
2. the flatc the `executorch` wheel ships (`executorch/data/bin/flatc`, a program), then
   `flatc` on PATH (often a script: the wheel's entry point, or pyenv's shim), each used only
   when its version matches (a program's answer is remembered in the step cache, a script's
   is asked each run: `known_flatc_version`);
3. a flatc built earlier from the pinned FlatBuffers, cached under `<cache>/flatc/<version>/`;
4. otherwise it is built now from the pinned FlatBuffers sources with CMake, and cached.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import posixpath
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from generator.util.cache import StepCache, flatc_path
from generator.util.confine import confined_file, confined_path
from generator.util.errors import FatalError
from generator.vcs.checkout import checkout

_VERSION_DEFINE = re.compile(r"#define\s+FLATBUFFERS_VERSION_(MAJOR|MINOR|REVISION)\s+(\d+)")
_FLATC_VERSION = re.compile(r"flatc version (\d+\.\d+\.\d+)")

#: What flatc needs of the FlatBuffers tree to build (sparse checkout).
BUILD_PATHS = ("CMakeLists.txt", "CMake", "include", "src", "grpc", "LICENSE", "reflection")

#: The flags ExecuTorch's own schema/CMakeLists.txt passes.
FLATC_FLAGS = ("--cpp", "--cpp-std", "c++11", "--gen-mutable", "--scoped-enums")


def pinned_flatbuffers_version(flatbuffers_root: Path) -> str:
    """The FlatBuffers version of a checkout, from include/flatbuffers/base.h (X.Y.Z).

    Raises:
        FatalError: when base.h does not define the three version numbers.
    """
    base = confined_path(flatbuffers_root, "include/flatbuffers/base.h", "FlatBuffers")
    try:
        found = dict(_VERSION_DEFINE.findall(base.read_text(encoding="utf-8")))
    except FileNotFoundError:
        found = {}
    if set(found) != {"MAJOR", "MINOR", "REVISION"}:
        raise FatalError(f"cannot read the FlatBuffers version from {base}")
    return f"{found['MAJOR']}.{found['MINOR']}.{found['REVISION']}"


def flatc_version(flatc: Path) -> str | None:
    """The X.Y.Z a flatc binary reports, or None when it does not run.

    Asked once a process per binary (the build looks for a flatc twice: ~40 ms a run of it);
    a binary changed meanwhile (its inode, size, mode, mtime or ctime) is asked again.
    """
    identity = _identity(flatc)
    return None if identity is None else _flatc_version(str(flatc), identity)


def _identity(flatc: Path) -> tuple[int, ...] | None:
    """What tells a binary changed: its inode, size, mode, mtime and ctime (None: no file)."""
    try:
        st = flatc.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mode, st.st_mtime_ns, st.st_ctime_ns)


def known_flatc_version(flatc: Path, steps: StepCache) -> str | None:
    """`flatc_version`, remembered across runs in the step cache `steps` under the binary's
    path and identity (`_identity`): a warm build starts no `flatc --version`.

    Only for a program file: a script (`#!`, e.g. pyenv's `flatc` shim) may run another flatc
    tomorrow without changing itself, so its answer is asked each run."""
    identity = _identity(flatc)
    if identity is None:
        return None
    if _is_script(flatc):
        return flatc_version(flatc)
    key = {"flatc": str(flatc), "identity": list(identity)}
    found = steps.get("flatc-version", key, lambda v: v if isinstance(v, str) else None)
    if found is None:
        found = _flatc_version(str(flatc), identity)
        if found is not None:
            steps.put("flatc-version", key, found)
    return found


def _is_script(path: Path) -> bool:
    """True when `path` starts with `#!` (or cannot be read: then it is asked, not trusted)."""
    try:
        with path.open("rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return True


def _sha256(path: Path) -> str:
    """sha256 of the bytes of `path`."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


_INCLUDE = re.compile(r'^\s*include\s+"([^"]*)"\s*;', re.MULTILINE)


def confined_includes(schema_dir: Path, schema: Path) -> list[Path]:
    """Every `.fbs` that `schema` includes, directly or not, checked to be a regular file
    inside `schema_dir` (flatc resolves an include itself, relative to the including file,
    and would read one that climbs out with `..`, or block on a FIFO).

    Returns:
        The included files, resolved, in the order first reached.
    Raises:
        FatalError: an include that is absolute, climbs out of `schema_dir`, is a symbolic
            link out of it, is missing from it, or is not a regular file
            (`generator.util.confine.confined_file`).
    """
    base = schema_dir.resolve()
    seen: list[Path] = []
    todo = [schema.resolve()]
    while todo:
        current = todo.pop()
        text = current.read_text(encoding="utf-8", errors="replace")
        for name in _INCLUDE.findall(text):
            if posixpath.isabs(name):
                raise FatalError(
                    f"the schema: include {name!r} is absolute; an upstream tree is "
                    "untrusted input, so the build refuses it (remove it upstream or build "
                    "another ref)"
                )
            # Relative to the including file, as flatc reads it; its folder is inside `base`.
            where = posixpath.dirname(current.relative_to(base).as_posix())
            included = confined_file(base, posixpath.join(where, name), "the schema")
            if included not in seen:
                seen.append(included)
                todo.append(included)
    return seen


def run_flatc(
    flatc: Path, flags: Sequence[str], schemas: Sequence[Path], out_dir: Path, steps: StepCache
) -> subprocess.CompletedProcess[str] | None:
    """Run `flatc FLAGS -o OUT_DIR SCHEMAS`, or write what it wrote last time.

    What flatc writes is a step-cache entry (`steps`) keyed by the binary (path and
    `_identity`), the flags and every `.fbs` of the schemas' folders and their subfolders (an
    include is read from there): a warm build starts no flatc. flatc writes into a fresh
    folder, whose files are then copied into `out_dir` (created), so the entry holds exactly
    what flatc made.

    Returns:
        None when the files are in place; flatc's completed process when it failed (the
        caller says so, in its words).
    """
    identity = _identity(flatc)
    for schema in schemas:
        confined_includes(schema.parent, schema)
    folders = sorted({s.parent for s in schemas})
    inputs = sorted({(d, f) for d in folders for f in d.rglob("*.fbs")})
    key = {
        "flatc": str(flatc),
        "identity": list(identity or ()),
        "flags": list(flags),
        "schemas": [s.name for s in schemas],
        "inputs": [
            [
                d.name,
                f.relative_to(d).as_posix(),
                _sha256(confined_file(d, f.relative_to(d), "the schema")),
            ]
            for d, f in inputs
        ],
    }
    cached = steps.get("flatc", key, _files_from) if identity is not None else None
    if cached is None:
        with tempfile.TemporaryDirectory(prefix="flatc-out-") as out:
            proc = subprocess.run(
                [str(flatc), *flags, "-o", out, *map(str, schemas)],
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode != 0:
                return proc
            made = {
                p.relative_to(out).as_posix(): p.read_bytes()
                for p in sorted(Path(out).rglob("*"))
                if p.is_file()
            }
        try:
            cached = {rel: data.decode("utf-8") for rel, data in made.items()}
        except UnicodeDecodeError:
            _write_files(out_dir, made)  # not text: written, never cached
            return None
        if identity is not None:
            steps.put("flatc", key, cached)
    _write_files(out_dir, {rel: text.encode("utf-8") for rel, text in cached.items()})
    return None


def _write_files(out_dir: Path, files: dict[str, bytes]) -> None:
    """Write `files` {relative path: bytes} under `out_dir` (folders created)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        (out_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (out_dir / rel).write_bytes(data)


def _files_from(value: object) -> dict[str, str] | None:
    """A `run_flatc` entry's files {relative path: text}, or None for anything else."""
    if not isinstance(value, dict) or not value:
        return None
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return None
    if any(k.startswith("/") or ".." in k.split("/") for k in value):
        return None
    return dict(value)


@functools.lru_cache(maxsize=16)
def _flatc_version(flatc: str, _stat: tuple[int, ...]) -> str | None:
    try:
        out = subprocess.run(
            [flatc, "--version"], capture_output=True, text=True, timeout=30, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = _FLATC_VERSION.search(out)
    return match.group(1) if match else None


def _wheel_flatc() -> Path | None:
    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "data" / "bin" / "flatc"
        if candidate.is_file():
            return candidate
    return None


def build_flatc(url: str, sha: str, version: str, cache_dir: Path) -> Path:
    """Build flatc from FlatBuffers `sha` with CMake; cached under `<cache>/flatc/<version>`.

    Raises:
        FatalError: when cmake is missing or the build fails.
    """
    dest = flatc_path(cache_dir, version)
    if dest.is_file() and flatc_version(dest) == version:
        return dest
    if shutil.which("cmake") is None:
        raise FatalError(
            f"no flatc {version} was found and cmake is not installed to build one; install "
            f"cmake, or set FLATC to a flatc {version}"
        )
    source = checkout(url, sha, BUILD_PATHS, cache_dir)
    with tempfile.TemporaryDirectory(prefix="flatc-build-") as build:
        steps = [
            [
                "cmake",
                "-S",
                str(source.path),
                "-B",
                build,
                "-DCMAKE_BUILD_TYPE=Release",
                "-DFLATBUFFERS_BUILD_TESTS=OFF",
                "-DFLATBUFFERS_BUILD_FLATLIB=OFF",
                "-DFLATBUFFERS_BUILD_FLATHASH=OFF",
                "-DFLATBUFFERS_BUILD_FLATC=ON",
            ],
            ["cmake", "--build", build, "--target", "flatc", "-j", str(os.cpu_count() or 2)],
        ]
        for step in steps:
            proc = subprocess.run(step, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-10:])
                raise FatalError(f"building flatc {version} failed:\n{tail}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_suffix(".tmp")
        shutil.copy2(Path(build) / "flatc", tmp)
        tmp.replace(dest)
    return dest


def find_flatc(version: str, url: str, sha: str, cache_dir: Path) -> Path:
    """A flatc of exactly `version` (see the module docstring for the order).

    Raises:
        FatalError: when $FLATC is set to a flatc of another version, or none can be built.
    """
    explicit = os.environ.get("FLATC")
    if explicit:
        found = flatc_version(Path(explicit))
        if found != version:
            raise FatalError(
                f"FLATC={explicit} is flatc {found or '(does not run)'}, but the pinned "
                f"FlatBuffers is {version}; schema headers must come from the same version. "
                f"Point FLATC at a flatc {version}, or unset it to have one built"
            )
        return Path(explicit)
    steps = StepCache(cache_dir)
    candidates = [_wheel_flatc(), shutil.which("flatc"), flatc_path(cache_dir, version)]
    for candidate in candidates:
        if candidate and known_flatc_version(Path(candidate), steps) == version:
            return Path(candidate)
    return build_flatc(url, sha, version, cache_dir)


def generate_schema_headers(
    flatc: Path, schema_dir: Path, out_dir: Path, steps: StepCache | None = None
) -> list[Path]:
    """Run flatc on program.fbs and scalar_type.fbs, writing the headers into `out_dir`
    (through `run_flatc`'s cache when `steps` is given).

    Returns:
        The generated header paths, sorted.
    Raises:
        FatalError: when flatc fails.
    """
    schemas = [
        confined_file(schema_dir, n, "the schema") for n in ("program.fbs", "scalar_type.fbs")
    ]
    proc = run_flatc(flatc, FLATC_FLAGS, schemas, out_dir, steps or StepCache(None))
    if proc is not None:
        raise FatalError(f"flatc failed on {schema_dir}: {proc.stderr.strip()}")
    return sorted(out_dir.glob("*_generated.h"))


@dataclass(frozen=True)
class SchemaHeaders:
    """What the schema step made.

    Attributes:
        flatc: the flatc used; flatc_version: its version, the pinned FlatBuffers' (X.Y.Z);
        headers: the generated headers, sorted.
    """

    flatc: Path
    flatc_version: str
    headers: tuple[Path, ...]


def schema_headers(
    flatbuffers: Path, url: str, sha: str, schema_dir: Path, out_dir: Path, cache_dir: Path
) -> SchemaHeaders:
    """Generate the schema headers of `schema_dir` into `out_dir` with a flatc of the version
    of the FlatBuffers checkout `flatbuffers` (`url` at `sha`, built from there if needed).

    Raises:
        FatalError: see `pinned_flatbuffers_version`, `find_flatc` and
            `generate_schema_headers`.
    """
    version = pinned_flatbuffers_version(flatbuffers)
    flatc = find_flatc(version, url, sha, cache_dir)
    headers = generate_schema_headers(flatc, schema_dir, out_dir, StepCache(cache_dir))
    return SchemaHeaders(flatc, version, tuple(headers))
