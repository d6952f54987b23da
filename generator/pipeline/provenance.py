"""Step 14, with `render.py`: what a generated library records about itself, one typed object,
`Provenance`, that the templates render (`render.py`: library.properties, README.md,
extras/PROVENANCE.txt and the third-party licenses table) and whose facts for programs
(`Provenance.facts`, `generator.library.facts.LibraryFacts`) `render.py` writes to
extras/library.json.
`gather_provenance` assembles it from the steps' results.
PROVENANCE.md describes the rendered files.
"""

from __future__ import annotations

import platform
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from generator.library.facts import ComponentPin, LibraryFacts
from generator.pipeline.codegen import torch_version
from generator.pipeline.dtypes import DtypeSelection
from generator.pipeline.examples import ExamplePlan
from generator.pipeline.opset import OpSetChoice, available_op_sources, prim_ops
from generator.pipeline.patches import ALL_PATCHES, Patch
from generator.pipeline.prune import Pruning
from generator.pipeline.sources import ExecutorchSource, ThirdParty
from generator.util.cache import tree_hash
from generator.util.urls import display_url


@dataclass(frozen=True)
class ComponentRecord:
    """One source the library redistributes, as the licenses table and PROVENANCE name it.

    Attributes:
        name, owner: e.g. "FlatBuffers", "Google"; url: where it came from (no user-info);
        sha: the full SHA; location: where it lands in the library; license: SPDX id;
        license_file: the license text's file in the library.
    """

    name: str
    owner: str
    url: str
    sha: str
    location: str
    license: str
    license_file: str


@dataclass(frozen=True)
class RefFiles:
    """What an optional copy rule found in the ref (files only some refs have).

    Attributes:
        component: the component's name; source: the rule's folder in its tree;
        dest: the folder in the library; include: the rule's globs;
        files: what was copied, relative to `dest` (empty: the ref has none).
    """

    component: str
    source: str
    dest: str
    include: tuple[str, ...]
    files: tuple[str, ...]


@dataclass(frozen=True)
class Provenance:
    """Everything the rendered metadata says, gathered from the build's steps.

    Attributes:
        library_version: library.properties' version=; upstream_version: the ref's
            version.txt.
        ref: the ref asked for; executorch: ExecuTorch at the SHA it resolved to;
        third_party: the other components, at the commits ExecuTorch pins.
        op_set_description, ops: the op set; kernel_count: kernels the codegen registered;
        prim_ops: the prim ops the ref registers (always shipped, no part of the op set).
        op_sources, op_sources_available: portable op sources shipped, and the ref's;
        cortex_m_sources: Cortex-M op sources shipped.
        example_models: (example, where its model.h came from), in the library's order.
        tools: the generator's tools in extras/tools/; ref_files: what the optional copy
            rules found; patches: the Arduino patches applied.
        pruning: the third-party and helper sources left out because nothing links them.
        flatc_version, torch_version, python_version: the tools that made the library.
        regenerate_args: the build options that regenerate it, but the ref.
        src_hash: sha256 of src/ (`generator.util.cache.tree_hash`).
        dtypes_description: the dtypes the portable kernels keep (`DtypeChoice.describe`);
        dtype_lines: one line per portable operator of a dtype-selective build (else empty).
    """

    library_version: str
    upstream_version: str
    ref: str
    executorch: ComponentRecord
    third_party: tuple[ComponentRecord, ...]
    op_set_description: str
    ops: tuple[str, ...]
    kernel_count: int
    prim_ops: tuple[str, ...]
    op_sources: int
    op_sources_available: int
    cortex_m_sources: int
    example_models: tuple[tuple[str, str], ...]
    tools: tuple[str, ...]
    ref_files: tuple[RefFiles, ...]
    pruning: Pruning
    patches: tuple[Patch, ...]
    flatc_version: str
    torch_version: str
    python_version: str
    regenerate_args: str
    src_hash: str
    dtypes_description: str = "all dtypes (no dtype-selective build)"
    dtype_lines: tuple[str, ...] = ()

    @property
    def examples(self) -> tuple[str, ...]:
        """The examples shipped, in the library's order."""
        return tuple(name for name, _ in self.example_models)

    @property
    def components(self) -> tuple[ComponentRecord, ...]:
        """ExecuTorch, then the third-party components (the licenses table's rows)."""
        return (self.executorch, *self.third_party)

    def facts(self, kernels: Sequence[str]) -> LibraryFacts:
        """The facts extras/library.json holds, with `kernels`: the operator of each kernel
        the library's codegen sources register (`generator.library.facts.kernel_names`)."""
        return LibraryFacts(
            library_version=self.library_version,
            pin=self.executorch.sha,
            executorch_url=self.executorch.url,
            ref=self.ref,
            upstream_version=self.upstream_version,
            components=tuple(ComponentPin(c.name, c.url, c.sha) for c in self.third_party),
            op_set=self.op_set_description,
            operators=self.ops,
            kernels=tuple(kernels),
            prim_ops=self.prim_ops,
            examples=self.examples,
            from_file=True,
        )


def gather_provenance(
    library: Path,
    *,
    ref: str,
    executorch_repo: str,
    regenerate_args: str,
    source: ExecutorchSource,
    third_party: ThirdParty,
    plans: Sequence[ExamplePlan],
    chosen: OpSetChoice,
    kernel_count: int,
    ref_files: tuple[RefFiles, ...],
    flatc_version: str,
    applied: Collection[str],
    dtypes: DtypeSelection,
    tools: tuple[str, ...],
    pruning: Pruning,
) -> Provenance:
    """What the library records, from the steps' results.

    Args:
        library: the library folder, its src/ finished (`src_hash`).
        ref: the ref asked for; executorch_repo: ExecuTorch's URL as given (recorded without
            user-info); regenerate_args: the build options that regenerate the library.
        source, third_party: the checkouts (steps 1 and 2); plans: the examples' models;
        chosen: the op set; kernel_count: kernels the codegen registered; ref_files: what
        the optional copy rules found (vendor); flatc_version: the schema headers' flatc;
        applied: the names of the patches applied; dtypes: the dtype selection; tools: the
        tools in extras/tools/; pruning: the sources the pruning left out.
    """
    return Provenance(
        library_version=source.library_version,
        upstream_version=source.upstream_version,
        ref=ref,
        executorch=_executorch_record(source, executorch_repo),
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
        kernel_count=kernel_count,
        prim_ops=tuple(sorted(prim_ops(source.root))),
        op_sources=chosen.portable_sources,
        op_sources_available=available_op_sources(source.root),
        cortex_m_sources=chosen.cortex_m_sources,
        example_models=tuple((p.name, p.origin) for p in plans),
        tools=tools,
        ref_files=ref_files,
        pruning=pruning,
        patches=tuple(p for p in ALL_PATCHES if p.name in applied),
        flatc_version=flatc_version,
        torch_version=torch_version(),
        python_version=platform.python_version(),
        regenerate_args=regenerate_args,
        src_hash=tree_hash(library / "src"),
        dtypes_description=dtypes.description,
        dtype_lines=dtypes.lines,
    )


def _executorch_record(source: ExecutorchSource, url: str) -> ComponentRecord:
    """ExecuTorch's row of the licenses table: `source` checked out from `url`."""
    et = source.component
    return ComponentRecord(
        name=et.name,
        owner=et.owner,
        url=display_url(url),
        sha=source.sha,
        location=et.location,
        license=et.license,
        license_file="LICENSE (library root)",
    )
