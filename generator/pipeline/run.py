"""`python -m generator build`: generate the library from an ExecuTorch ref.

The pipeline runs the steps of `generator/pipeline/` in the order its docstring lists them,
one module each: sources (ExecuTorch at the ref, the third-party components it pins) ->
program reader -> op set -> codegen (kernel registration) -> vendor -> schema headers (flatc)
-> patches -> dtypes -> kernel selection -> examples -> pruning -> model check -> provenance
rendered. Each step returns a small frozen result; `render` takes one `Provenance` built from
them. The library is built in a staging folder beside `--out` and moved into place only when
every step succeeded (`staging.py`). `sync` runs the same `build_library`.
"""

from __future__ import annotations

import argparse
import hashlib
import platform
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from generator import data_dir
from generator.boards.board_docs import unchecked_section
from generator.boards.linkmode_docs import BEGIN, END, link_modes_markdown
from generator.library.layout import CODEGEN_DIR, SCHEMA_HEADERS_DIR
from generator.library.version import check_explicit_version
from generator.pipeline.board_check import write_board_check
from generator.pipeline.codegen import CodegenResult, kernel_registration, torch_version
from generator.pipeline.compact import write_compact_header
from generator.pipeline.components import THIRD_PARTY, Component, load_component, pinned_revision
from generator.pipeline.dtypes import (
    DtypeChoice,
    DtypeSelection,
    dtype_choice,
    parse_dtypes,
    write_dtype_selection,
)
from generator.pipeline.examples import (
    ExamplePlan,
    copy_tools,
    parse_example_pte,
    plan_examples,
    select_examples,
    write_examples,
)
from generator.pipeline.flatc import SchemaHeaders, schema_headers
from generator.pipeline.models import check_library_models, check_pte_size, ops_in_pte, read_pte
from generator.pipeline.opset import OpSetChoice, available_op_sources, op_set_choice, prim_ops
from generator.pipeline.output import check_destination, move_into_place, staged, tree_stats
from generator.pipeline.patches import (
    ALL_PATCHES,
    DTYPE_SELECTIVE_BUILD,
    TEMPLATE_PLATFORM,
    apply_patches,
)
from generator.pipeline.provenance import ComponentRecord, Provenance, RefFiles
from generator.pipeline.prune import Pruning, prune_unreachable
from generator.pipeline.reader import READER_DIR, ReaderPackage, program_reader
from generator.pipeline.render import render_metadata, write_pin
from generator.pipeline.selection import apply_kernel_selection
from generator.pipeline.sources import (
    ExecutorchSource,
    PinnedSource,
    ThirdParty,
    check_out_pinned,
    read_executorch,
)
from generator.pipeline.vendor import (
    follow_includes_cached,
    vendor_component,
    vendor_op_sources,
    write_cmake_macros,
)
from generator.util.cache import (
    StepCache,
    build_lock,
    check_cache_dir,
    code_version,
    create_cache_dir,
    default_cache_dir,
    objects_dir,
    tree_hash,
)
from generator.util.confine import confined_path
from generator.util.errors import FatalError
from generator.util.ui import ConsoleReporter, QuietReporter, Reporter
from generator.util.urls import DEFAULT_EXECUTORCH_REPO, display_url, refuse_credentials
from generator.util.userpaths import input_file
from generator.vcs.checkout import checkout

TEMPLATE_SRC = data_dir("library_template") / "src"


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
        dtypes: the dtypes every portable kernel keeps (None: all; see
        generator/pipeline/dtypes.py).
        dtypes_from_pte: keep for each portable kernel the dtypes these .pte files pass it.
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
    dtypes: tuple[str, ...] | None = None
    dtypes_from_pte: tuple[Path, ...] = ()


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
        dtypes: the dtype selection (`DtypeChoice.describe`).
        files, bytes: what was written under `out`.
        seconds: wall time of the build.
        prune_compiles: wall seconds of each compiler run of the pruning step (empty when
            its objects or its result came from the cache; `Pruning.compiles`).
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
    dtypes: str = ""
    files: int = 0
    bytes: int = 0
    seconds: float = 0.0
    prune_compiles: tuple[float, ...] = ()


@dataclass(frozen=True)
class VendoredSources:
    """What the vendor step copied beyond the copy rules' required files.

    Attributes:
        ref_files: what each optional copy rule found in the ref.
        headers_added: headers and helper sources found by following `#include`s.
        prunable: sources that ship only when linked (third-party and helper sources).
    """

    ref_files: tuple[RefFiles, ...]
    headers_added: int
    prunable: tuple[Path, ...] = ()


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
    examples, overrides = _check_inputs(options)
    # Every path is validated before anything is created.
    cache = check_cache_dir(options.cache_dir or default_cache_dir())
    out = check_destination(out, cache)
    create_cache_dir(cache)
    # One build at a time per cache (see `build_lock`).
    with build_lock(cache), staged(out) as library:
        provenance = _build_into(options, library, cache, examples, overrides, rep)
        files, size = tree_stats(library)
        with rep.step("move into place"):
            move_into_place(library, out)
        return BuildResult(
            out=out,
            ref=provenance.ref,
            sha=provenance.executorch.sha,
            upstream_version=provenance.upstream_version,
            library_version=provenance.library_version,
            op_set=list(provenance.ops),
            kernel_count=provenance.kernel_count,
            op_sources=provenance.op_sources,
            op_sources_available=provenance.op_sources_available,
            dtypes=provenance.dtypes_description,
            files=files,
            bytes=size,
            seconds=time.monotonic() - started,
            prune_compiles=provenance.pruning.compiles,
        )


def _check_inputs(options: BuildOptions) -> tuple[list[str], dict[str, Path]]:
    """The examples to ship and the models given for them, checked before any work.

    Raises:
        FatalError: a bad version, a URL with credentials, an unknown example, a model for
            an example left out, or a missing .pte or one over et_pte.MAX_PTE_BYTES.
    """
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
    for name, pte in overrides.items():
        check_pte_size(pte, f"--example-pte {name}")
    for pte in options.ops_from_pte:
        input_file(pte, "--ops-from-pte", "a .pte file")
        check_pte_size(pte, "--ops-from-pte")
    if options.dtypes is not None and options.dtypes_from_pte:
        raise FatalError("give --dtypes or --dtypes-from-pte, not both")
    if options.dtypes is not None:
        parse_dtypes(options.dtypes)  # the names, before any work
    for pte in options.dtypes_from_pte:
        input_file(pte, "--dtypes-from-pte", "a .pte file")
        check_pte_size(pte, "--dtypes-from-pte")
    return examples, overrides


def _build_into(
    options: BuildOptions,
    library: Path,
    cache: Path,
    examples: list[str],
    overrides: dict[str, Path],
    rep: Reporter,
) -> Provenance:
    """Run every step into the empty folder `library`; returns what the library records.

    Three phases, the steps of `generator/pipeline/` in their order: the sources (checkouts,
    the program reader), the library's code (op set to kernel selection), then the examples,
    the pruning, the model check and the metadata.
    """
    inputs = _sources(options, library, cache, examples, overrides, rep)
    # The pure steps' results are cached under what the tree is: the SHA and the paths.
    steps = StepCache(cache)
    code = _library_code(options, inputs, library, cache, steps, rep)

    with rep.step("write the examples"):
        write_examples(inputs.source.root, library, inputs.plans, inputs.reader.folder, steps)
        tools = copy_tools(library)

    with rep.step("ship only the sources the shipped code links"):
        hits = steps.hits
        pruning = prune_unreachable(
            library, code.vendored.prunable, objects_dir(cache), steps=steps
        )
        rep.note(pruning.summary + _from_cache(steps, hits))

    with rep.step("check the models against the library"):
        _check_models(library, _unique(options.ops_from_pte + options.dtypes_from_pte), steps)

    with rep.step("render metadata"):
        write_pin(library, inputs.source.sha)
        provenance = _provenance(options, library, inputs, code, tools, pruning)
        render_metadata(library, provenance, unchecked_link_modes(), unchecked_section())
    return provenance


@dataclass(frozen=True)
class _Inputs:
    """What the first phase found: the ExecuTorch tree, the examples' models, the third-party
    checkouts and the program reader (written into the library)."""

    source: ExecutorchSource
    tree: dict[str, Any]
    plans: list[ExamplePlan]
    third_party: ThirdParty
    reader: ReaderPackage


def _sources(
    options: BuildOptions,
    library: Path,
    cache: Path,
    examples: list[str],
    overrides: dict[str, Path],
    rep: Reporter,
) -> _Inputs:
    """Steps 1 and 2: check out ExecuTorch and its components, write the program reader."""
    et = load_component("executorch")
    with rep.step(f"check out ExecuTorch {options.executorch_ref}"):
        co = checkout(options.executorch_repo, options.executorch_ref, et.checkout, cache)
        rep.note(f"{options.executorch_ref} -> {co.sha}")
        source = read_executorch(et, co, options.library_version)
        plans = plan_examples(source.root, examples, overrides)
    third_party = _check_out_third_party(source, cache, rep)

    with rep.step("generate the program reader"):
        # The shipped tools and this build read .pte files with it (--ops-from-pte below,
        # the model check at the end).
        reader = program_reader(
            third_party.flatbuffers,
            confined_path(source.root, "schema", f"ExecuTorch at {source.sha[:12]}"),
            library / READER_DIR,
            cache,
        )
        rep.note(f"flatc {reader.flatc_version} -> {READER_DIR}")
    tree = {"sha": source.sha, "paths": list(et.checkout)}
    return _Inputs(source, tree, plans, third_party, reader)


@dataclass(frozen=True)
class _Code:
    """What the second phase wrote into the library (see `_library_code`)."""

    chosen: OpSetChoice
    generated: CodegenResult
    vendored: VendoredSources
    schema: SchemaHeaders
    applied: dict[str, list[str]]
    dtypes: DtypeSelection


def _library_code(
    options: BuildOptions,
    inputs: _Inputs,
    library: Path,
    cache: Path,
    steps: StepCache,
    rep: Reporter,
) -> _Code:
    """Steps 3 to 10: the op set, the codegen, the vendored sources, the schema headers,
    the patches, the dtype selection and the kernel selection."""
    source, tree = inputs.source, inputs.tree
    with rep.step("select the op set"):
        hits = steps.hits
        chosen = op_set_choice(
            tree,
            source.root,
            ops=list(options.ops) if options.ops is not None else None,
            all_ops=options.all_ops,
            pte_ops=_ops_in_ptes(options.ops_from_pte, inputs.reader.folder),
            steps=steps,
        )
        rep.note(
            f"{len(chosen.op_set.ops)} operators ({chosen.op_set.describe()})"
            + _from_cache(steps, hits)
        )

    with rep.step("run the kernel-registration codegen"):
        hits = steps.hits
        generated = kernel_registration(
            tree,
            source.root,
            chosen.op_set,
            library / CODEGEN_DIR,
            library / "src/executorch/runtime/kernel/selected_max_kernel_num.h",
            steps,
        )
        rep.note(f"{len(generated.kernels)} kernels registered" + _from_cache(steps, hits))

    with rep.step("vendor sources"):
        hits = steps.hits
        vendored = _vendor_sources(source, inputs.third_party, chosen, library, rep, tree, steps)
        rep.note(
            f"{vendored.headers_added} headers and helper sources found by following includes"
            + _from_cache(steps, hits)
        )

    with rep.step("generate the schema headers"):
        fb = inputs.third_party.flatbuffers
        schema_dir = library / SCHEMA_HEADERS_DIR
        schema = schema_headers(
            fb.path,
            fb.url,
            fb.sha,
            confined_path(source.root, "schema", f"ExecuTorch at {source.sha[:12]}"),
            schema_dir,
            cache,
        )
        rep.note(f"flatc {schema.flatc_version} ({schema.flatc})")

    with rep.step("apply the Arduino patches"):
        applied = apply_patches(library)

    with rep.step("select the kernels' dtypes"):
        dtypes = _select_dtypes(options, source.root, library, inputs.reader.folder, chosen)
        if dtypes.files:
            applied[DTYPE_SELECTIVE_BUILD.name] = DTYPE_SELECTIVE_BUILD.apply(library)
        rep.note(dtypes.description)

    with rep.step("split the kernel registration per operator"):
        selection = apply_kernel_selection(library)
        applied.update(selection.patches)
        rep.note(
            f"{len(selection.kernels)} kernels and {len(selection.prim)} prim ops, each "
            "linked only when a sketch's model.h selects it"
        )
    return _Code(chosen, generated, vendored, schema, applied, dtypes)


def unchecked_link_modes() -> str:
    """The README's link-modes section before any check, between its markers."""
    return f"{BEGIN}\n{link_modes_markdown({})}{END}"


def _select_dtypes(
    options: BuildOptions, root: Path, library: Path, reader: Path, chosen: OpSetChoice
) -> DtypeSelection:
    """The dtype-selective build asked for (none by default), written into `library`."""
    choice: DtypeChoice = dtype_choice(options.dtypes, options.dtypes_from_pte, reader)
    return write_dtype_selection(root, library, choice, chosen.sources)


def _unique(paths: tuple[Path, ...]) -> tuple[Path, ...]:
    """`paths` without a file named twice (the first naming kept)."""
    seen: dict[Path, Path] = {}
    for path in paths:
        seen.setdefault(path.resolve(), path)
    return tuple(seen.values())


def _from_cache(steps: StepCache, hits_before: int) -> str:
    """What a step's note adds when its result came from the step cache."""
    return " (from the step cache)" if steps.hits > hits_before else ""


def _check_out_third_party(source: ExecutorchSource, cache: Path, rep: Reporter) -> ThirdParty:
    """Check out each third-party component at the commit the ExecuTorch tree pins."""
    pinned: dict[str, PinnedSource] = {}
    for key in THIRD_PARTY:
        component = load_component(key)
        url, rev = pinned_revision(component, source.checkout)
        with rep.step(f"check out {component.name} {rev[:12]}"):
            pinned[key] = check_out_pinned(component, url, rev, source.checkout, cache)
    return ThirdParty(
        flatbuffers=pinned["flatbuffers"], flatcc=pinned["flatcc"], cmsis_nn=pinned["cmsis-nn"]
    )


def _ops_in_ptes(ptes: tuple[Path, ...], reader: Path) -> list[str] | None:
    """The operators the `--ops-from-pte` models call, sorted (None: no model given);
    `reader` is the program reader of the ref's schema."""
    if not ptes:
        return None
    found: set[str] = set()
    for pte in ptes:
        found |= ops_in_pte(pte, reader)
    return sorted(found)


def _vendor_sources(
    source: ExecutorchSource,
    third_party: ThirdParty,
    chosen: OpSetChoice,
    library: Path,
    rep: Reporter,
    et_tree: Mapping[str, Any],
    steps: StepCache,
) -> VendoredSources:
    """Copy every component's files, the op sources, our sources (data/library_template/src), the
    board check (`board_check.py`) and every header they include, into `library`; the include
    closure comes from the step cache (`steps`, keyed by `et_tree` and the tree so far) when it
    holds it."""
    ref_files: list[RefFiles] = []
    components: list[tuple[Component, Path, str]] = [(source.component, source.root, source.sha)]
    components += [(tp.component, tp.path, tp.sha) for tp in third_party.all]
    prunable: list[Path] = []
    for component, tree, sha in components:
        done = vendor_component(component, tree, library, sha)
        prunable += done.written if component is not source.component else []
        for rule, written in done.optional:
            names = tuple(p.relative_to(library / rule.dest).as_posix() for p in written)
            if not names:
                rep.note(
                    f"{component.name} at {source.sha[:12]} has none of {rule.source}/"
                    f"{{{','.join(rule.include)}}}; {rule.dest}/ ships without them"
                )
            ref_files.append(RefFiles(component.name, rule.source, rule.dest, rule.include, names))
    what = f"ExecuTorch at {source.sha[:12]}"
    vendor_op_sources(source.root, library, chosen.sources.values(), what)
    write_cmake_macros(library)
    shutil.copytree(
        TEMPLATE_SRC,
        library / "src",
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns(TEMPLATE_PLATFORM.name),
    )
    write_board_check(library)  # ExecuTorch.h includes it: a start of the include closure
    write_compact_header(library)  # compiler.h includes it (patch compact-runtime)
    starts = sorted(p for p in (library / "src").rglob("*") if p.suffix in (".h", ".cpp"))
    closure = follow_includes_cached(source.root, library, starts, et_tree, steps, what)
    prunable += [library / "src" / "executorch" / rel for rel in closure.added]
    return VendoredSources(tuple(ref_files), len(closure.added), tuple(prunable))


def _check_models(library: Path, ptes: tuple[Path, ...], steps: StepCache) -> None:
    """A library whose examples (or `--ops-from-pte` models) cannot run on it must not be
    written: kernels, prim ops and delegate backends are all checked.

    A pass is a step-cache entry (`steps`) keyed by everything the check reads: the whole
    library tree as it stands (its models, registration, prim ops, program reader and tools),
    the `.pte` files' bytes, and the code of `generator/pipeline/models.py`; a failure is never
    cached, so its messages always come from a fresh check.

    Raises:
        FatalError: naming each problem and the ways out.
    """
    key = _model_check_key(library, ptes) if steps.root is not None else None
    if key is not None and steps.get("model-check", key, lambda v: v if v is True else None):
        return
    models = check_library_models(library, ptes=ptes)
    if models.passed:
        if key is not None:
            steps.put("model-check", key, True)
        return
    problems = [f"  {r.name}: {p.message}" for r in models.results for p in r.problems] + [
        f"  {r.name}: {r.error}" for r in models.results if r.error
    ]
    # Not --all-ops: it builds, but twice over the UNO Q's flash.
    raise FatalError(
        "the models do not run on this library:\n"
        + "\n".join(problems)
        + "\nEach line ends with its likely cause. To build anyway: widen the op set "
        "for a missing operator (--ops-from-pte naming every model the library must "
        "run) or the dtypes for a dtype left out (--dtypes-from-pte naming them too), "
        "leave the example out (--examples), or give it a model that runs here "
        "(--example-pte NAME=FILE)"
    )


def _model_check_key(library: Path, ptes: tuple[Path, ...]) -> dict[str, Any] | None:
    """The model check's step-cache key, or None when a `.pte` cannot be read (the check
    itself then names it)."""
    try:
        digests = [hashlib.sha256(read_pte(p)).hexdigest() for p in ptes]
    except FatalError:
        return None
    return {
        "library": tree_hash(library),
        "ptes": digests,
        "code": code_version("pipeline.models", "library.layout"),
    }


def _provenance(
    options: BuildOptions,
    library: Path,
    inputs: _Inputs,
    code: _Code,
    tools: tuple[str, ...],
    pruning: Pruning,
) -> Provenance:
    """What the library records, from the steps' results (`library`: its finished src/)."""
    source, third_party, plans = inputs.source, inputs.third_party, inputs.plans
    chosen, generated, vendored, schema = code.chosen, code.generated, code.vendored, code.schema
    applied, dtypes = code.applied, code.dtypes
    et = source.component
    return Provenance(
        library_version=source.library_version,
        upstream_version=source.upstream_version,
        ref=options.executorch_ref,
        executorch=ComponentRecord(
            name=et.name,
            owner=et.owner,
            url=display_url(options.executorch_repo),
            sha=source.sha,
            location=et.location,
            license=et.license,
            license_file="LICENSE (library root)",
        ),
        third_party=tuple(
            ComponentRecord(
                name=tp.component.name,
                owner=tp.component.owner,
                url=tp.url,
                sha=tp.sha,
                location=tp.component.location,
                license=tp.component.license,
                license_file=Path(tp.component.license_dest).name,
            )
            for tp in third_party.all
        ),
        op_set_description=chosen.op_set.describe(),
        ops=chosen.op_set.ops,
        kernel_count=len(generated.kernels),
        prim_ops=tuple(sorted(prim_ops(source.root))),
        op_sources=chosen.portable_sources,
        op_sources_available=available_op_sources(source.root),
        cortex_m_sources=chosen.cortex_m_sources,
        example_models=tuple((p.name, p.origin) for p in plans),
        tools=tools,
        ref_files=vendored.ref_files,
        pruning=pruning,
        patches=tuple(p for p in ALL_PATCHES if p.name in applied),
        flatc_version=schema.flatc_version,
        torch_version=torch_version(),
        python_version=platform.python_version(),
        regenerate_args=_regenerate_args(options, source.library_version),
        src_hash=tree_hash(library / "src"),
        dtypes_description=dtypes.description,
        dtype_lines=dtypes.lines,
    )


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
    if options.dtypes is not None:
        args.append(f"--dtypes {','.join(options.dtypes)}")
    elif options.dtypes_from_pte:
        args.append(f"--dtypes-from-pte {','.join(p.name for p in options.dtypes_from_pte)}")
    if options.examples is not None:
        args.append(f"--examples {','.join(options.examples)}")
    for name, pte in options.example_pte:
        args.append(f"--example-pte {name}={pte.name}")
    return " ".join(args)


# --- the command line -------------------------------------------------------------------


def options_from_args(args: argparse.Namespace) -> BuildOptions:
    """The build options of a parsed `build` or `sync` command line."""
    return BuildOptions(
        executorch_ref=args.executorch_ref,
        executorch_repo=args.executorch_repo,
        library_version=args.library_version,
        ops=tuple(args.ops) if args.ops is not None else None,
        all_ops=args.all_ops,
        ops_from_pte=tuple(Path(p) for p in args.ops_from_pte or ()),
        examples=tuple(args.examples) if args.examples is not None else None,
        example_pte=tuple(parse_example_pte(args.example_pte or ()).items()),
        cache_dir=args.cache_dir,
        dtypes=tuple(args.dtypes) if args.dtypes is not None else None,
        dtypes_from_pte=tuple(Path(p) for p in args.dtypes_from_pte or ()),
    )


def summary_table(result: BuildResult) -> Table:
    """The end-of-run summary: what was built from what."""
    table = Table(title="ExecuTorch Arduino library", show_header=False)
    rows = [
        ("library", str(result.out)),
        ("ref", f"{result.ref} -> {result.sha}"),
        ("version", f"{result.library_version} (upstream {result.upstream_version})"),
        ("op set", f"{len(result.op_set)} operator{'s' if len(result.op_set) != 1 else ''}"),
        ("kernels registered", str(result.kernel_count)),
        ("op sources", f"{result.op_sources} of {result.op_sources_available} portable"),
        ("dtypes", result.dtypes),
        ("written", f"{result.files} files, {result.bytes:,} bytes"),
        ("time", f"{result.seconds:.1f} s"),
    ]
    for key, value in rows:
        table.add_row(key, value)
    return table


def build(args: argparse.Namespace) -> int:
    """Run the build for parsed arguments; returns the exit code (errors raise FatalError)."""
    console = Console(stderr=True, highlight=False)
    result = build_library(options_from_args(args), args.out, ConsoleReporter(console))
    console.print(summary_table(result))
    return 0
