"""Where things are in a generated library (the contract between build, check and sync).

The one definition of each name. The tools shipped in every library (`extras/tools/`,
standard library only) cannot import this module and keep their own copies of the names
they need; `tests/unit/pipeline/test_one_source.py` checks that the copies agree.
"""

from __future__ import annotations

import re

#: The name the library is registered under in the Library Manager (`name=` of its
#: library.properties, which data/library_template/library.properties.jinja writes; a test checks).
LIBRARY_NAME = "ExecuTorch"
#: The Library Manager's metadata (its `version=` is the library version).
PROPERTIES_FILE = "library.properties"
#: The ExecuTorch commit the library is generated from: the full SHA and a newline.
PIN_FILE = "executorch_pin.txt"

#: Paths the generator owns at the library root. `sync` deletes every one of them before
#: writing a regenerated tree, so nothing stale survives (a stale platform file once shipped
#: beside its replacement). Everything else at the root (README.md, CHANGELOG.md, .github/)
#: belongs to the library repo and is kept.
GENERATED_PATHS: tuple[str, ...] = (
    "src",
    "examples",
    "extras",
    PROPERTIES_FILE,
    PIN_FILE,
    "LICENSE",
)

#: The examples every library ships, in order, unless `--examples` picks a subset.
EXAMPLES: tuple[str, ...] = ("HelloExecuTorch", "AddModel", "KeywordSpotting")

#: What the library records about itself, for people (extras/PROVENANCE.txt.jinja renders it).
PROVENANCE_FILE = "extras/PROVENANCE.txt"
#: The same facts for programs, JSON (`generator.library.facts.LibraryFacts.to_json`): ExecuTorch's
#: URL,
#: pin, ref and upstream version, the library version, the components and their pins, the op
#: set, the kernels as registered, the prim ops and the examples. Release and sync read it.
LIBRARY_FACTS_FILE = "extras/library.json"
#: The generated kernel registration sources live here, below src/.
CODEGEN_DIR = "src/executorch/codegen"
#: How a kernel registration source names its operator: `Kernel("aten::add.out", ...` (the
#: ref's codegen; also ExecuTorch's prim ops). Group `name`: the operator's full name.
#: Shipped copy: extras/tools/et_registration.py `KERNEL_REGISTRATION` (a test checks they agree).
KERNEL_REGISTRATION = re.compile(r'\bKernel\s*\(\s*"(?P<name>[^"]+)"')
#: The registration sources of CODEGEN_DIR (the codegen's `RegisterCodegenUnboxedKernels*.cpp`).
#: Shipped copy: extras/tools/et_registration.py `REGISTRATION_GLOB`.
REGISTRATION_GLOB = "Register*Kernels*.cpp"
#: ExecuTorch's prim ops registration (always shipped, not made by codegen; with kernel
#: selection its table registers only when a sketch's model.h selects a prim op, or with every
#: kernel through the fallback).
PRIM_OPS_SOURCE = "src/executorch/kernels/prim_ops/register_prim_ops.cpp"
#: The one platform layer the library ships (ours, from data/library_template/).
PLATFORM_DIR = "src/executorch/runtime/platform/default"
#: The ExecuTorch schema the library was generated with (program.fbs, scalar_type.fbs):
#: the model checker decodes .pte files against it.
SCHEMA_DIR = "extras/schema"
#: The C++ headers flatc generates from that schema, which the runtime includes.
SCHEMA_HEADERS_DIR = "src/executorch/schema"
#: Each example's expectations (what its run must print), shipped beside the sketch.
EXAMPLE_EXPECT_FILE = "expected.yaml"
#: The generated header holding an example's .pte, `examples/<Name>/model.h` ...
MODEL_HEADER = "model.h"
#: ... and the C array it declares (with `<array>_size`), the name every example sketch uses
#: (`ETModel model(model_pte, model_pte_size)`).
MODEL_ARRAY = "model_pte"
#: The check report of the library, as JSON, so a later sync can compare sizes without
#: rebuilding the base.
CHECK_REPORT_FILE = "extras/check_report.json"
#: The compact runtime's header (generator/pipeline/compact.py writes it), by its path in the
#: library and by the name ExecuTorch's compiler.h includes it as (patch compact-runtime).
COMPACT_HEADER = "src/executorch_compact.h"
COMPACT_INCLUDE = "executorch_compact.h"
