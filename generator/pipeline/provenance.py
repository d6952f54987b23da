"""Step 14, with `render.py`: what a generated library records about itself, one typed object,
`Provenance`, that the templates render (`render.py`: library.properties, README.md,
extras/PROVENANCE.txt and the third-party licenses table) and whose facts for programs
(`Provenance.facts`, `generator.library.facts.LibraryFacts`) `render.py` writes to
extras/library.json.
PROVENANCE.md describes the rendered files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from generator.library.facts import ComponentPin, LibraryFacts
from generator.pipeline.patches import Patch
from generator.pipeline.prune import Pruning


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
