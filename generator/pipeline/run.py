"""The main job's runner, `build_library`: generate the library from an ExecuTorch ref
(`python -m generator build`, `generator/cli/build.py`; `sync` runs the same).

It runs the steps of `generator/pipeline/` in the order its docstring lists them, one module
each: sources (ExecuTorch at the ref, the third-party components it pins) -> program reader ->
op set -> codegen (kernel registration) -> vendor -> schema headers (flatc) -> patches ->
dtypes -> kernel selection -> examples -> pruning -> model check -> provenance rendered. Each
step returns a small frozen result; `render` takes one `Provenance` built from them. The
library is built in a staging folder beside `--out` and moved into place only when every step
succeeded (`output.py`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.boards.board_docs import unchecked_section
from generator.boards.linkmode_docs import BEGIN, END, link_modes_markdown
from generator.library.layout import CODEGEN_DIR, SCHEMA_HEADERS_DIR
from generator.library.version import check_explicit_version
from generator.pipeline.codegen import CodegenResult, kernel_registration
from generator.pipeline.components import load_component
from generator.pipeline.dtypes import (
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
from generator.pipeline.models import check_pte_size, model_check, ops_in_ptes
from generator.pipeline.opset import OpSetChoice, op_set_choice
from generator.pipeline.output import check_destination, move_into_place, staged, tree_stats
from generator.pipeline.patches import DTYPE_SELECTIVE_BUILD, apply_patches
from generator.pipeline.provenance import Provenance, gather_provenance
from generator.pipeline.prune import prune_unreachable
from generator.pipeline.reader import READER_DIR, ReaderPackage, program_reader
from generator.pipeline.render import render_metadata, write_pin
from generator.pipeline.selection import apply_kernel_selection
from generator.pipeline.sources import (
    ExecutorchSource,
    ThirdParty,
    check_out_third_party,
    read_executorch,
)
from generator.pipeline.vendor import VendoredSources, vendor_sources
from generator.util.cache import (
    StepCache,
    build_lock,
    check_cache_dir,
    create_cache_dir,
    default_cache_dir,
    objects_dir,
)
from generator.util.confine import confined_path
from generator.util.errors import FatalError
from generator.util.ui import QuietReporter, Reporter
from generator.util.urls import DEFAULT_EXECUTORCH_REPO, display_url, refuse_credentials
from generator.util.userpaths import input_file
from generator.vcs.checkout import checkout


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
    the program reader: `_sources`), the library's code (op set to kernel selection:
    `_library_code`), then the examples, the pruning, the model check and the metadata
    (`_finish`).
    """
    inputs = _sources(options, library, cache, examples, overrides, rep)
    # The pure steps' results are cached under what the tree is: the SHA and the paths.
    steps = StepCache(cache)
    code = _library_code(options, inputs, library, cache, steps, rep)
    return _finish(options, inputs, code, library, cache, steps, rep)


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
    """Steps 1 to 3: check out ExecuTorch and its components, write the program reader."""
    et = load_component("executorch")
    with rep.step(f"check out ExecuTorch {options.executorch_ref}"):
        co = checkout(options.executorch_repo, options.executorch_ref, et.checkout, cache)
        rep.note(f"{options.executorch_ref} -> {co.sha}")
        source = read_executorch(et, co, options.library_version)
        plans = plan_examples(source.root, examples, overrides)
    third_party = check_out_third_party(source, cache, rep)

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
    """Steps 4 to 10: the op set, the codegen, the vendored sources, the schema headers,
    the patches, the dtype selection and the kernel selection."""
    source, tree = inputs.source, inputs.tree
    with rep.step("select the op set"):
        hits = steps.hits
        chosen = op_set_choice(
            tree,
            source.root,
            ops=list(options.ops) if options.ops is not None else None,
            all_ops=options.all_ops,
            pte_ops=ops_in_ptes(options.ops_from_pte, inputs.reader.folder),
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
        vendored = vendor_sources(
            source, inputs.third_party, chosen.sources.values(), library, rep, tree, steps
        )
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
        choice = dtype_choice(options.dtypes, options.dtypes_from_pte, inputs.reader.folder)
        dtypes = write_dtype_selection(source.root, library, choice, chosen.sources)
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


def _finish(
    options: BuildOptions,
    inputs: _Inputs,
    code: _Code,
    library: Path,
    cache: Path,
    steps: StepCache,
    rep: Reporter,
) -> Provenance:
    """Steps 11 to 14: the examples, the pruning, the model check and the metadata; returns
    what the library records."""
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
        model_check(library, _unique(options.ops_from_pte + options.dtypes_from_pte), steps)

    with rep.step("render metadata"):
        write_pin(library, inputs.source.sha)
        provenance = gather_provenance(
            library,
            ref=options.executorch_ref,
            executorch_repo=options.executorch_repo,
            regenerate_args=_regenerate_args(options, inputs.source.library_version),
            source=inputs.source,
            third_party=inputs.third_party,
            plans=inputs.plans,
            chosen=code.chosen,
            kernel_count=len(code.generated.kernels),
            ref_files=code.vendored.ref_files,
            flatc_version=code.schema.flatc_version,
            applied=code.applied,
            dtypes=code.dtypes,
            tools=tools,
            pruning=pruning,
        )
        render_metadata(library, provenance, unchecked_link_modes(), unchecked_section())
    return provenance


def unchecked_link_modes() -> str:
    """The README's link-modes section before any check, between its markers."""
    return f"{BEGIN}\n{link_modes_markdown({})}{END}"


def _unique(paths: tuple[Path, ...]) -> tuple[Path, ...]:
    """`paths` without a file named twice (the first naming kept)."""
    seen: dict[Path, Path] = {}
    for path in paths:
        seen.setdefault(path.resolve(), path)
    return tuple(seen.values())


def _from_cache(steps: StepCache, hits_before: int) -> str:
    """What a step's note adds when its result came from the step cache."""
    return " (from the step cache)" if steps.hits > hits_before else ""


def _regenerate_args(options: BuildOptions, version: str) -> str:
    """The command line's options that regenerate what `options` built, the ref aside, with
    `version` as --library-version (PROVENANCE records it; .pte files by name)."""
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
