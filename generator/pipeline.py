"""The build pipeline: ref -> checkout -> op set -> codegen -> vendor -> patches -> render.

`build_library` is what `python -m generator build` and `sync` call. Each step lives in its
own module and is a function from explicit inputs to files in a work folder.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import tempfile
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from generator import PROJECT_ROOT
from generator.checkout import cache_lock, checkout, default_cache_dir
from generator.codegen import run_codegen
from generator.components import THIRD_PARTY, Component, load_component, pinned_revision
from generator.errors import FatalError
from generator.examples import parse_example_pte, plan_examples, select_examples, write_examples
from generator.flatc import find_flatc, generate_schema_headers, pinned_flatbuffers_version
from generator.layout import CODEGEN_DIR, PIN_FILE, PROVENANCE_FILE
from generator.models import TOOLS_DIR, check_library_models, ops_in_pte
from generator.opset import available_op_sources, kernel_sources, prim_ops, select_op_set
from generator.patches import PATCHES, TEMPLATE_PLATFORM, apply_patches
from generator.render import render_metadata, write_pin
from generator.urls import display_url, refuse_credentials
from generator.vendor import (
    follow_includes,
    vendor_component,
    vendor_op_sources,
    write_cmake_macros,
)
from generator.version import check_explicit_version, library_version

TEMPLATE_SRC = PROJECT_ROOT / "library_template" / "src"

DEFAULT_EXECUTORCH_REPO = "https://github.com/pytorch/executorch.git"


@dataclass(frozen=True)
class BuildOptions:
    """What a build is asked to do (the `build` options, also passed on by `sync`).

    Attributes:
        executorch_ref: branch, tag or full/short SHA.
        executorch_repo: git URL; canonical upstream by default (insteadOf applies).
        library_version: a SemVer 2.0 version, or None to derive it from the ref's version.txt.
        ops: portable root ops replacing the default set, or None.
        all_ops: register every portable op.
        ops_from_pte: register exactly the operators these .pte files call.
        examples: ship only these examples (None: all).
        example_pte: example name -> .pte file overriding the one the ref ships.
        cache_dir: cache root (None: platformdirs user cache).
    """

    executorch_ref: str = "main"
    executorch_repo: str = DEFAULT_EXECUTORCH_REPO
    library_version: str | None = None
    ops: tuple[str, ...] | None = None
    all_ops: bool = False
    ops_from_pte: tuple[Path, ...] = ()
    examples: tuple[str, ...] | None = None
    example_pte: tuple[tuple[str, Path], ...] = ()
    cache_dir: Path | None = None


@dataclass
class BuildResult:
    """What a build produced.

    Attributes:
        out: the library folder (moved into place).
        ref: the ref asked for; sha: the full 40-hex SHA it resolved to.
        upstream_version: the ref's version.txt, verbatim.
        library_version: the Library Manager version written to library.properties.
        op_set: the selected operators (kernel registration), sorted.
        kernel_count: kernels registered in the generated registration sources.
        op_sources: `op_*.cpp` files shipped, and available: all portable op sources.
        files, bytes: what was written under `out`.
        seconds: wall time of the build.
    """

    out: Path
    ref: str
    sha: str
    upstream_version: str
    library_version: str
    op_set: list[str] = field(default_factory=list)
    kernel_count: int = 0
    op_sources: int = 0
    op_sources_available: int = 0
    files: int = 0
    bytes: int = 0
    seconds: float = 0.0


class Reporter(Protocol):
    """Progress sink: `step` wraps one pipeline step; `note` adds a detail line."""

    def step(self, name: str) -> AbstractContextManager[None]: ...

    def note(self, message: str) -> None: ...


class QuietReporter:
    """A reporter that prints nothing (tests, and callers with their own output)."""

    def step(self, name: str) -> AbstractContextManager[None]:
        return nullcontext()

    def note(self, message: str) -> None:
        pass


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale(out: Path) -> None:
    """Remove staging and old folders that a killed run left beside `out`."""
    pattern = re.compile(rf"^\.{re.escape(out.name)}\.(?:staging|old)-(\d+)(?:-.*)?$")
    for sibling in out.parent.glob(f".{out.name}.*"):
        match = pattern.match(sibling.name)
        if match and sibling.is_dir() and not _pid_alive(int(match.group(1))):
            shutil.rmtree(sibling, ignore_errors=True)


def is_generated_library(folder: Path) -> bool:
    """True when `folder` looks like a library this tool generated (pin and provenance)."""
    return (folder / PIN_FILE).is_file() and (folder / PROVENANCE_FILE).is_file()


def check_destination(out: Path, cache: Path) -> Path:
    """Validate `--out` before any work; returns it absolute.

    Raises:
        FatalError: `out` is a file, the file system root, a non-empty folder that is not a
            library this tool generated (it would be replaced), or overlaps the cache.
    """
    out = out.expanduser().resolve()
    if out == out.parent:
        raise FatalError(f"--out {out} is the file system root; name a folder for the library")
    if out.exists() and not out.is_dir():
        raise FatalError(f"--out {out} is a file; name a folder for the library")
    if out.is_dir() and any(out.iterdir()) and not is_generated_library(out):
        raise FatalError(
            f"--out {out} is a folder with other content; it would be replaced by the library. "
            "Name a new or empty folder, or the folder of a library this tool generated"
        )
    if out == cache or out in cache.parents or cache in out.parents:
        raise FatalError(
            f"--out {out} and the cache {cache} overlap; replacing one would destroy the "
            "other. Choose another --out or --cache-dir"
        )
    return out


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


def _staging_dir(out: Path) -> Path:
    """A fresh folder beside `out`, so the final move is a rename on one file system."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale(out)
        return Path(tempfile.mkdtemp(prefix=f".{out.name}.staging-{os.getpid()}-", dir=out.parent))
    except OSError as e:
        raise FatalError(
            f"cannot write next to --out {out}: {e.strerror or e}. Choose an --out in a "
            "folder you can write to"
        ) from None


def _move_into_place(staged: Path, out: Path) -> None:
    """Replace `out` by `staged`; the previous `out` survives until the new one is in place."""
    old: Path | None = None
    if out.exists():
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(out, old)
    try:
        os.replace(staged, out)
    except OSError as e:
        if old is not None:
            os.replace(old, out)
        raise FatalError(f"cannot move the library into {out}: {e.strerror or e}") from None
    if old is not None:
        shutil.rmtree(old)


def _tree_stats(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def build_library(
    options: BuildOptions, out: Path, reporter: Reporter | None = None
) -> BuildResult:
    """Generate the library for `options` into `out`.

    The tree is built in a staging folder beside `out` and moved into place only when every
    step succeeded; on any error `out` is left exactly as it was.

    Raises:
        FatalError: bad input (ref, version, op names, example models) or a step that failed.
    """
    rep = reporter or QuietReporter()
    started = time.monotonic()
    if options.library_version is not None:
        check_explicit_version(options.library_version)
    refuse_credentials(options.executorch_repo, "--executorch-repo")
    examples = select_examples(options.examples)
    overrides = parse_example_pte([f"{n}={p}" for n, p in options.example_pte])
    unused = sorted(set(overrides) - set(examples))
    if unused:
        raise FatalError(
            f"--example-pte gives a model for {', '.join(unused)}, which --examples leaves out; "
            "drop it or add the example"
        )
    for pte in options.ops_from_pte:
        if not pte.is_file():
            raise FatalError(f"--ops-from-pte {pte}: no such file")
    # Every path is validated before anything is created.
    cache = check_cache_dir(options.cache_dir or default_cache_dir())
    out = check_destination(out, cache)
    create_cache_dir(cache)
    # One build at a time per cache: the cached work trees are shared, and another run
    # switching them to another commit mid-build would mix two commits in one library.
    with cache_lock(cache / "build"):
        staging = _staging_dir(out)
        try:
            library = staging / out.name
            library.mkdir()
            result = _build_into(options, library, cache, examples, overrides, rep)
            result.files, result.bytes = _tree_stats(library)
            with rep.step("move into place"):
                _move_into_place(library, out)
            result.out = out
            result.seconds = time.monotonic() - started
            return result
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def _build_into(
    options: BuildOptions,
    library: Path,
    cache: Path,
    examples: list[str],
    overrides: dict[str, Path],
    rep: Reporter,
) -> BuildResult:
    et = load_component("executorch")
    with rep.step(f"check out ExecuTorch {options.executorch_ref}"):
        co = checkout(options.executorch_repo, options.executorch_ref, et.checkout, cache)
        rep.note(f"{options.executorch_ref} -> {co.sha}")
        root = co.path
        try:
            upstream_version = co.read_text("version.txt").strip()
        except FileNotFoundError:
            raise FatalError(
                f"{display_url(options.executorch_repo)} at {co.sha[:12]} has no version.txt; is "
                "this an ExecuTorch repository?"
            ) from None
        version = library_version(upstream_version, options.library_version, options.executorch_ref)
        if not (root / "backends" / "cortex_m").is_dir():
            raise FatalError(
                f"ExecuTorch at {co.sha[:12]} has no backends/cortex_m; the Arduino library needs "
                "the Cortex-M backend, which this ref predates: pick a newer ref"
            )
        plans = plan_examples(root, examples, overrides)

    third_party: list[dict[str, str]] = []
    vendored: list[tuple[Component, Path]] = [(et, root)]
    trees: dict[str, Path] = {}
    for key in THIRD_PARTY:
        component = load_component(key)
        url, rev = pinned_revision(component, co)
        with rep.step(f"check out {component.name} {rev[:12]}"):
            try:
                tp = checkout(url, rev, component.checkout, cache)
            except FatalError as e:
                raise FatalError(
                    f"ExecuTorch at {co.sha[:12]} pins {component.name} at {rev}, which cannot "
                    f"be checked out: {e}"
                ) from None
        trees[key] = tp.path
        vendored.append((component, tp.path))
        third_party.append(
            {
                "key": key,
                "name": component.name,
                "owner": component.owner,
                "url": display_url(url),
                "sha": tp.sha,
                "location": component.location,
                "license": component.license,
                "license_file": Path(component.license_dest).name,
            }
        )

    with rep.step("select the op set"):
        pte_ops: list[str] | None = None
        if options.ops_from_pte:
            found: set[str] = set()
            for pte in options.ops_from_pte:
                found |= ops_in_pte(pte, root / "schema")
            pte_ops = sorted(found)
        op_set = select_op_set(
            root,
            ops=list(options.ops) if options.ops is not None else None,
            all_ops=options.all_ops,
            pte_ops=pte_ops,
        )
        sources = kernel_sources(root, op_set)
        rep.note(f"{len(op_set.ops)} operators ({op_set.describe()})")

    with rep.step("run the kernel-registration codegen"):
        generated = run_codegen(
            root,
            op_set,
            library / CODEGEN_DIR,
            library / "src/executorch/runtime/kernel/selected_max_kernel_num.h",
        )
        rep.note(f"{len(generated.kernels)} kernels registered")

    ref_files: list[dict[str, object]] = []
    with rep.step("vendor sources"):
        for component, tree in vendored:
            done = vendor_component(component, tree, library)
            for rule, written in done.optional:
                names = [p.relative_to(library / rule.dest).as_posix() for p in written]
                if not names:
                    rep.note(
                        f"{component.name} at {co.sha[:12]} has none of {rule.source}/"
                        f"{{{','.join(rule.include)}}}; {rule.dest}/ ships without them"
                    )
                ref_files.append(
                    {
                        "component": component.name,
                        "source": rule.source,
                        "dest": rule.dest,
                        "include": list(rule.include),
                        "files": names,
                    }
                )
        vendor_op_sources(root, library, sources.values())
        write_cmake_macros(library)
        shutil.copytree(
            TEMPLATE_SRC,
            library / "src",
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns(TEMPLATE_PLATFORM.name),
        )
        starts = sorted(p for p in (library / "src").rglob("*") if p.suffix in (".h", ".cpp"))
        closure = follow_includes(root, library, starts)
        rep.note(f"{len(closure.added)} headers and helper sources found by following includes")

    with rep.step("generate the schema headers"):
        fb_version = pinned_flatbuffers_version(trees["flatbuffers"])
        fb = next(t for t in third_party if t["key"] == "flatbuffers")
        flatc = find_flatc(fb_version, fb["url"], fb["sha"], cache)
        generate_schema_headers(flatc, root / "schema", library / "src/executorch/schema")
        rep.note(f"flatc {fb_version} ({flatc})")

    with rep.step("apply the Arduino patches"):
        applied = apply_patches(library)

    with rep.step("write the examples"):
        write_examples(root, library, plans)
        tools = library / "extras" / "tools"
        tools.mkdir(parents=True, exist_ok=True)
        for tool in sorted(TOOLS_DIR.glob("*.py")):
            shutil.copyfile(tool, tools / tool.name)

    with rep.step("check the models against the library"):
        # A library whose examples (or --ops-from-pte models) cannot run on it must not be
        # written: kernels, prim ops and delegate backends are all checked.
        models = check_library_models(library, ptes=options.ops_from_pte)
        if not models.passed:
            problems = [f"  {r.name}: {p.message}" for r in models.results for p in r.problems] + [
                f"  {r.name}: {r.error}" for r in models.results if r.error
            ]
            # Not --all-ops: it builds, but twice over the UNO Q's flash.
            raise FatalError(
                "the models do not run on this library:\n"
                + "\n".join(problems)
                + "\nEach line ends with its likely cause. To build anyway: widen the op set "
                "for a missing operator (--ops-from-pte naming every model the library must "
                "run), leave the example out (--examples), or give it a model that runs here "
                "(--example-pte NAME=FILE)"
            )

    op_files = sorted(set(sources.values()))
    available = available_op_sources(root)
    portable_sources = [s for s in op_files if s.startswith("kernels/")]
    with rep.step("render metadata"):
        write_pin(library, co.sha)
        render_metadata(
            library,
            {
                "version": version,
                "library_version": version,
                "upstream_version": upstream_version,
                "executorch": {
                    "url": display_url(options.executorch_repo),
                    "sha": co.sha,
                    "ref": options.executorch_ref,
                },
                "third_party": third_party,
                "components": [
                    {
                        "name": et.name,
                        "owner": et.owner,
                        "sha": co.sha,
                        "location": et.location,
                        "license": et.license,
                        "license_file": "LICENSE (library root)",
                    },
                    *third_party,
                ],
                "op_set_description": op_set.describe(),
                "ops": list(op_set.ops),
                "kernel_count": len(generated.kernels),
                "prim_ops": sorted(prim_ops(root)),
                "op_sources": len(portable_sources),
                "op_sources_available": available,
                "cortex_m_sources": len(op_files) - len(portable_sources),
                "examples": [p.name for p in plans],
                "example_models": [(p.name, p.origin) for p in plans],
                "tools": sorted(t.name for t in TOOLS_DIR.glob("*.py")),
                "ref_files": ref_files,
                "patches": [p for p in PATCHES if p.name in applied],
                "flatc_version": fb_version,
                "torch_version": _torch_version(),
                "python_version": platform.python_version(),
                "regenerate_args": _regenerate_args(options, version),
            },
        )
    return BuildResult(
        out=library,
        ref=options.executorch_ref,
        sha=co.sha,
        upstream_version=upstream_version,
        library_version=version,
        op_set=list(op_set.ops),
        kernel_count=len(generated.kernels),
        op_sources=len(portable_sources),
        op_sources_available=available,
    )


def _torch_version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("torch")
    except PackageNotFoundError:
        return "unknown"


def _regenerate_args(options: BuildOptions, version: str) -> str:
    args = [f"--library-version {version}"]
    if options.executorch_repo != DEFAULT_EXECUTORCH_REPO:
        args.append(f"--executorch-repo {display_url(options.executorch_repo)}")
    if options.all_ops:
        args.append("--all-ops")
    elif options.ops is not None:
        args.append(f"--ops {','.join(options.ops)}")
    elif options.ops_from_pte:
        args.append(f"--ops-from-pte {','.join(p.name for p in options.ops_from_pte)}")
    if options.examples is not None:
        args.append(f"--examples {','.join(options.examples)}")
    for name, pte in options.example_pte:
        args.append(f"--example-pte {name}={pte.name}")
    return " ".join(args)
