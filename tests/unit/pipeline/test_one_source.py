"""One source of truth for names: each is defined once in `generator/` (`layout.py`, `boards.py`,
`urls.py`, `git.py`, `build_reader.py`); the copies that cannot import it (the standard-library
tools shipped in every library's `extras/tools/`, the emulated board's linker script, the
library repo's CI workflow, the vendored components' YAML) are checked against it here.
"""

from __future__ import annotations

import fnmatch
import json
import re
import sys
from pathlib import Path, PurePosixPath

import pytest
import yaml

from generator import data_dir
from generator.boards import budgets as boards
from generator.library import layout
from generator.pipeline import opset
from generator.pipeline import reader as build_reader
from generator.pipeline.components import load_component
from generator.pipeline.examples import TEMPLATE_EXAMPLES
from generator.sync.run import sync_branch
from generator.util import urls
from generator.vcs.git import SYNC_PREFIX

ROOT = Path(__file__).resolve().parents[3]
TOOLS = ROOT / "data" / "extras" / "tools"
sys.path.insert(0, str(TOOLS))

import et_checks  # noqa: E402  (extras/tools, on sys.path above)
import et_model_h  # noqa: E402
import et_pte  # noqa: E402
import et_registration  # noqa: E402
import pte_to_header  # noqa: E402

# --- the shipped tools' copies -----------------------------------------------------------


@pytest.mark.parametrize(
    ("copy", "source"),
    [
        (et_pte.LIBRARY_READER_DIR, build_reader.READER_DIR),
        (et_registration.LIBRARY_CODEGEN_DIR, layout.CODEGEN_DIR),
        (et_registration.LIBRARY_PRIM_OPS, layout.PRIM_OPS_SOURCE),
        (et_model_h.MODEL_HEADER, layout.MODEL_HEADER),
        (et_model_h.MODEL_ARRAY, layout.MODEL_ARRAY),
        (et_registration.REGISTRATION_GLOB, layout.REGISTRATION_GLOB),
    ],
)
def test_the_tools_names_match_the_generator(copy: str, source: str) -> None:
    assert copy == source


def test_the_examples_folder_is_a_generated_path() -> None:
    assert et_checks.LIBRARY_EXAMPLES_DIR in layout.GENERATED_PATHS


def test_each_tool_name_is_defined_in_one_module() -> None:
    # et_pte.py was split by concern: no name lives in two of the modules (no re-exports).
    modules = (et_pte, et_registration, et_model_h, et_checks)
    owners: dict[str, list[str]] = {}
    for module in modules:
        for name in module.__all__:
            assert hasattr(module, name), (module.__name__, name)
            owners.setdefault(name, []).append(module.__name__)
    assert {n: o for n, o in owners.items() if len(o) > 1} == {}
    assert "kernel_symbol" in et_registration.__all__ and "model_h" in et_model_h.__all__
    assert not hasattr(et_pte, "kernel_symbol") and not hasattr(et_pte, "check_library")


def test_one_kernel_registration_pattern() -> None:
    assert et_registration.KERNEL_REGISTRATION.pattern == layout.KERNEL_REGISTRATION.pattern
    assert et_registration.KERNEL_REGISTRATION.flags == layout.KERNEL_REGISTRATION.flags
    # What the ref's codegen writes (codegen/templates/RegisterCodegenUnboxedKernels.cpp).
    text = 'Kernel(\n    "aten::add.out",\n    [](KernelRuntimeContext& c, Span<EValue*> s) {'
    assert layout.KERNEL_REGISTRATION.findall(text) == ["aten::add.out"]


def test_the_registration_glob_takes_what_the_codegen_writes() -> None:
    for name in (
        "RegisterCodegenUnboxedKernelsEverything.cpp",
        "RegisterCodegenUnboxedKernels_0.cpp",
        "RegisterKernelsByOperator.cpp",  # generator/pipeline/selection.py splits it per operator
    ):
        assert fnmatch.fnmatch(name, layout.REGISTRATION_GLOB)


def test_pte_to_header_defaults_are_the_layout_names(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        pte_to_header.main(["--help"])
    usage = " ".join(capsys.readouterr().out.split())
    assert f"stdout ({layout.MODEL_HEADER})" in usage
    assert f"C array name ({layout.MODEL_ARRAY})" in usage
    # The reader it validates with by default: pte_schema beside it, i.e. READER_DIR.
    reader = PurePosixPath(build_reader.READER_DIR)
    assert pte_to_header.DEFAULT_READER.parent == TOOLS
    assert str(reader.parent) == "extras/tools"
    assert pte_to_header.DEFAULT_READER.name == reader.name


# --- the library layout --------------------------------------------------------------------


def test_every_generated_file_is_under_a_generated_path() -> None:
    # sync replaces GENERATED_PATHS wholesale: whatever the build writes must be below one.
    for path in (
        layout.PIN_FILE,
        layout.PROPERTIES_FILE,
        layout.PROVENANCE_FILE,
        layout.CODEGEN_DIR,
        layout.PRIM_OPS_SOURCE,
        layout.PLATFORM_DIR,
        layout.SCHEMA_DIR,
        layout.SCHEMA_HEADERS_DIR,
        layout.CHECK_REPORT_FILE,
        build_reader.READER_DIR,
    ):
        assert PurePosixPath(path).parts[0] in layout.GENERATED_PATHS, path


def test_the_vendored_executorch_rules_write_the_layout_folders() -> None:
    rules = {(r.source, r.dest) for r in load_component("executorch").files}
    assert ("schema", layout.SCHEMA_DIR) in rules
    assert ("schema", layout.SCHEMA_HEADERS_DIR) in rules
    prim_ops = PurePosixPath(opset.PRIM_OPS_SOURCE)
    assert (str(prim_ops.parent), str(PurePosixPath(layout.PRIM_OPS_SOURCE).parent)) in rules
    assert PurePosixPath(layout.PRIM_OPS_SOURCE).name == prim_ops.name


@pytest.mark.parametrize("example", layout.EXAMPLES)
def test_each_sketch_includes_the_model_header_by_its_names(example: str) -> None:
    sketch = (TEMPLATE_EXAMPLES / example / f"{example}.ino").read_text(encoding="utf-8")
    assert f'#include "{layout.MODEL_HEADER}"' in sketch
    assert re.search(rf"\b{layout.MODEL_ARRAY}\b", sketch)


# --- ExecuTorch's upstream and the sync branch ---------------------------------------------


def test_the_default_executorch_repo_is_the_vendored_url() -> None:
    assert load_component("executorch").url == urls.DEFAULT_EXECUTORCH_REPO
    assert urls.UPSTREAM_COMMIT.format(sha="0" * 40).startswith("https://github.com/")


def test_the_sync_branch_starts_with_the_prefix() -> None:
    assert sync_branch("0123456789ab" + "0" * 28) == f"{SYNC_PREFIX}executorch-0123456789ab"


# --- the board ----------------------------------------------------------------------------


def test_the_emulated_boards_memory_is_the_board_budget() -> None:
    script = ROOT / "data" / "emulated_core" / "board" / "mps2_an505.ld"
    lengths = dict(
        re.findall(r"^\s*(\w+)\s*\([rwx]+\)\s*:.*LENGTH\s*=.*?(\d+)$", script.read_text(), re.M)
    )
    assert int(lengths["FLASH"]) == boards.UNO_Q.flash_bytes
    assert int(lengths["RAM"]) == boards.UNO_Q.ram_bytes


def test_the_library_ci_compiles_every_board_of_the_table_by_its_key() -> None:
    """CI's matrix is the board table's keys and each job's check gets its board by key, so
    the FQBN arduino-cli compiles for is the table's (`check --board`), written nowhere else."""
    from generator.workflows.render import render_workflows

    text = render_workflows("https://example.com/gen.git", "1" * 40)["ci.yml"]
    example = yaml.safe_load(text)["jobs"]["example"]
    # A pull request's and a push's matrix is BOARDS, the nightly's every board check takes.
    matrix = example["strategy"]["matrix"]["board"]
    assert json.dumps(list(boards.BOARDS)) in matrix
    assert json.dumps(list(boards.check_boards())) in matrix
    checks = [s for s in example["steps"] if "generator check" in s.get("run", "")]
    assert checks and all('--board "$BOARD"' in s["run"] for s in checks)
    assert all(s["env"]["BOARD"] == "${{ matrix.board }}" for s in checks)
    assert boards.UNO_Q.fqbn not in text


def test_the_library_readme_names_the_boards_fqbn() -> None:
    # The template of the README every library ships (its place is moving to
    # data/library_template/).
    templates = [
        ROOT / "data" / "library_template" / "README.md.jinja",
        ROOT / "data" / "templates" / "src" / "README.md.j2",
    ]
    template = next((t for t in templates if t.is_file()), None)
    assert template is not None, templates
    assert boards.UNO_Q.fqbn in template.read_text(encoding="utf-8")


def test_the_properties_template_names_the_library() -> None:
    template = data_dir("library_template") / f"{layout.PROPERTIES_FILE}.jinja"
    names = re.findall(r"^name=(.*)$", template.read_text(encoding="utf-8"), re.M)
    assert names == [layout.LIBRARY_NAME]
