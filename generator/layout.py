"""Where things are in a generated library (the contract between build, check and sync)."""

from __future__ import annotations

#: Paths the generator owns at the library root. `sync` deletes every one of them before
#: writing a regenerated tree, so nothing stale survives (a stale platform file once shipped
#: beside its replacement). Everything else at the root (README.md, CHANGELOG.md, .github/)
#: belongs to the library repo and is kept.
GENERATED_PATHS: tuple[str, ...] = (
    "src",
    "examples",
    "extras",
    "library.properties",
    "executorch_pin.txt",
    "LICENSE",
)

#: The examples every library ships, in order, unless `--examples` picks a subset.
EXAMPLES: tuple[str, ...] = ("HelloExecuTorch", "AddModel", "KeywordSpotting")

PIN_FILE = "executorch_pin.txt"
#: The Library Manager's metadata (its `version=` is the library version).
PROPERTIES_FILE = "library.properties"
PROVENANCE_FILE = "extras/PROVENANCE.txt"
#: The generated kernel registration sources live here, below src/.
CODEGEN_DIR = "src/executorch/codegen"
#: ExecuTorch's prim ops registration (always shipped; registers at start-up, not by codegen).
PRIM_OPS_SOURCE = "src/executorch/kernels/prim_ops/register_prim_ops.cpp"
#: The one platform layer the library ships (ours, from library_template/).
PLATFORM_DIR = "src/executorch/runtime/platform/default"
#: The ExecuTorch schema the library was generated with (program.fbs, scalar_type.fbs):
#: the model checker decodes .pte files against it.
SCHEMA_DIR = "extras/schema"
#: Each example's expectations (what its run must print), shipped beside the sketch.
EXAMPLE_EXPECT_FILE = "expected.yaml"
#: The check report of the library, as JSON, so a later sync can compare sizes without
#: rebuilding the base.
CHECK_REPORT_FILE = "extras/check_report.json"
