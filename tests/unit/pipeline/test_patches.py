"""The patch table (generator/pipeline/patches.py) holds every Arduino patch, and PROVENANCE lists
the ones a build applied, in the table's order."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from et_fixture import Upstream

from generator.pipeline import patches
from generator.pipeline.patches import ALL_PATCHES, DTYPE_SELECTIVE_BUILD, PATCHES, Patch
from generator.pipeline.run import BuildOptions, build_library
from generator.util.errors import FatalError


def test_all_patches_holds_every_patch_of_the_module_once() -> None:
    declared = {id(v): v for v in vars(patches).values() if isinstance(v, Patch)}
    for value in vars(patches).values():
        if isinstance(value, tuple) and value and all(isinstance(p, Patch) for p in value):
            declared.update({id(p): p for p in value})
    assert sorted(p.name for p in declared.values()) == sorted(p.name for p in ALL_PATCHES)
    names = [p.name for p in ALL_PATCHES]
    assert len(set(names)) == len(names) == len(PATCHES) + 3
    assert names[-2:] == ["prim-ops-on-selection", "registry-calls-kernel-selection"]


def test_provenance_lists_the_patches_applied_in_order(tmp_path: Path, upstream: Upstream) -> None:
    build_library(BuildOptions(cache_dir=tmp_path / "cache"), tmp_path / "out")
    text = (tmp_path / "out/extras/PROVENANCE.txt").read_text()
    section = text.split("patches applied:\n", 1)[1].split("\n\n", 1)[0]
    listed = re.findall(r"^  ([a-z-]+): ", section, flags=re.M)
    # Every patch but the dtype one (no --dtypes): the patch step's, then kernel selection's.
    assert listed == [p.name for p in ALL_PATCHES if p is not DTYPE_SELECTIVE_BUILD]
    assert (
        "  registry-calls-kernel-selection: The registry calls et_arduino_register_kernels() "
        "(KernelSelection.cpp) before its first lookup" in section
    )


# --- cortex-m-scratch-checks ---------------------------------------------------------------

_OP = """\
#include <executorch/backends/cortex_m/ops/cortex_m_ops_common.h>
void op() {
  ctx.size = scratch.nbytes();
#ifdef CORTEX_M_ENABLE_RUNTIME_CHECKS
  const int32_t runtime_buffer_bytes = arm_convolve_wrapper_s8_get_buffer_size(&p);
#if defined(EXTRA)
  extra();
#endif
  if (scratch.nbytes() != static_cast<size_t>(runtime_buffer_bytes)) {
    ET_LOG(Error, "conv: scratch buffer size incorrect - actual: (%d) needed: (%d)", a, b);
    context.fail(Error::Internal);
  }
#endif
  run(ctx);
}
"""


def _ops(tmp_path: Path, files: dict[str, str]) -> Path:
    folder = tmp_path / patches.CORTEX_M_OPS_DIR
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return tmp_path


def test_scratch_checks_are_unconditional_and_accept_a_larger_buffer(tmp_path: Path) -> None:
    library = _ops(tmp_path, {"op_conv.cpp": _OP, "op_add.cpp": "void add() {}\n"})
    touched = patches._cortex_m_scratch_checks(library)
    assert touched == [f"{patches.CORTEX_M_OPS_DIR}/op_conv.cpp"]
    text = (library / touched[0]).read_text()
    assert "CORTEX_M_ENABLE_RUNTIME_CHECKS" not in text
    assert "if (scratch.nbytes() < static_cast<size_t>(runtime_buffer_bytes)) {" in text
    assert '"conv: scratch buffer too small for this CPU - actual: (%d) needed: (%d)"' in text
    # The nested #if stays whole; only the macro's own #ifdef and #endif go.
    assert "#if defined(EXTRA)\n  extra();\n#endif\n" in text
    assert text.count("#endif") == 1
    assert len(text.splitlines()) == len(_OP.splitlines()) - 2
    assert (library / patches.CORTEX_M_OPS_DIR / "op_add.cpp").read_text() == "void add() {}\n"


def test_scratch_checks_skip_a_ref_without_the_cortex_m_backend(tmp_path: Path) -> None:
    assert patches._cortex_m_scratch_checks(tmp_path) == []


def test_scratch_checks_leave_ops_that_allocate_scratch_at_run_time(tmp_path: Path) -> None:
    # v1.1.0-v1.3.0: the ops size scratch with CMSIS-NN for the running CPU and allocate it.
    text = (
        "void op() {\n  auto scratch = context.allocate_temp(\n"
        "      arm_convolve_wrapper_s8_get_buffer_size(&p));\n  run(scratch);\n}\n"
    )
    library = _ops(tmp_path, {"op_conv.cpp": text})
    assert patches._cortex_m_scratch_checks(library) == []
    assert (library / patches.CORTEX_M_OPS_DIR / "op_conv.cpp").read_text() == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            _OP.replace("!= static_cast<size_t>(", "< static_cast<size_t>("),
            "compares no scratch size",
        ),
        (
            _OP.replace("#endif\n  run(ctx);", "#else\n  nocheck();\n#endif\n  run(ctx);"),
            "#else or #elif",
        ),
        (_OP.replace("#endif\n  run(ctx);", "  run(ctx);"), "has no #endif"),
        (_OP.replace("#ifdef CORTEX_M_ENABLE_RUNTIME_CHECKS", "#if 0"), "has no #ifdef"),
        (
            _OP.replace(
                "#endif\n  run(ctx);",
                "#endif\n#if defined(CORTEX_M_ENABLE_RUNTIME_CHECKS)\n#endif\n  run(ctx);",
            ),
            "otherwise than",
        ),
        (_OP.replace("  }\n#endif", "  }\n  if (a != b) {}\n#endif"), "does not know"),
    ],
    ids=["no-comparison", "else", "no-endif", "macro-renamed", "if-defined", "other-compare"],
)
def test_scratch_checks_that_moved_upstream_fail_naming_the_patch(
    tmp_path: Path, text: str, message: str
) -> None:
    library = _ops(tmp_path, {"op_conv.cpp": text})
    with pytest.raises(
        FatalError, match=rf"cortex-m-scratch-checks no longer applies: .*{message}"
    ):
        patches._cortex_m_scratch_checks(library)
