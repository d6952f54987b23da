"""The patch table (generator/build/patches.py) holds every Arduino patch, and PROVENANCE lists
the ones a build applied, in the table's order."""

from __future__ import annotations

import re
from pathlib import Path

from et_fixture import Upstream

from generator.build import patches
from generator.build.patches import ALL_PATCHES, DTYPE_SELECTIVE_BUILD, PATCHES, Patch
from generator.commands.build import BuildOptions, build_library


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
