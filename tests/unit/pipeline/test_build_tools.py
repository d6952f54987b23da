"""The tools a library ships in extras/tools: ours, and the ref's MFCC script.

The ref's `examples/arduino/generate_test_input.py` is copied from the checkout at build time
(an optional copy rule in data/vendored/executorch.yaml); a ref without it still builds, says so,
and records it in extras/PROVENANCE.txt. The ref's `export_model.py` (its KeywordSpotting
recipe) is not shipped: `extras/tools/export_model.py` is ours, the general exporter.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from et_fixture import REF_TOOLS, Upstream

from generator.pipeline.components import CopyRule, load_component
from generator.pipeline.run import BuildOptions, BuildResult, build_library
from generator.pipeline.vendor import apply_rule
from generator.util.errors import FatalError

REPO_ROOT = Path(__file__).resolve().parents[3]
OUR_TOOLS = sorted(p.name for p in (REPO_ROOT / "data" / "extras" / "tools").glob("*.py"))
#: The program reader generated from the ref's schema (generator/pipeline/reader.py).
READER = "pte_schema"
REF_SCRIPTS = ("generate_test_input.py",)


class NoteRecorder:
    """A build reporter that keeps the notes."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        yield

    def note(self, message: str) -> None:
        self.notes.append(message)


def build(tmp_path: Path, reporter: NoteRecorder | None = None) -> BuildResult:
    options = BuildOptions(cache_dir=tmp_path / "cache")
    return build_library(options, tmp_path / "out" / "ExecuTorch", reporter)


def test_ref_conversion_scripts_ship_beside_ours(tmp_path: Path, upstream: Upstream) -> None:
    lib = build(tmp_path).out
    tools = lib / "extras" / "tools"
    assert sorted(p.name for p in tools.iterdir()) == sorted([*OUR_TOOLS, *REF_SCRIPTS, READER])
    for name in REF_SCRIPTS:
        assert (tools / name).read_text() == REF_TOOLS[f"examples/arduino/{name}"]
    # The ref's pte_to_header.py and export_model.py do not ship: ours do (the ref's fixture
    # has both).
    assert "examples/arduino/export_model.py" in REF_TOOLS
    assert "MODULE:FACTORY" in (tools / "export_model.py").read_text()
    for name in OUR_TOOLS:
        assert (tools / name).read_bytes() == (
            REPO_ROOT / "data" / "extras" / "tools" / name
        ).read_bytes()
    provenance = (lib / "extras" / "PROVENANCE.txt").read_text()
    assert f"extras/tools:     {', '.join(OUR_TOOLS)} (the generator's)" in provenance
    assert (
        "  extras/tools/ from ExecuTorch examples/arduino/: generate_test_input.py\n" in provenance
    )


def test_ref_without_the_scripts_still_builds(tmp_path: Path, upstream: Upstream) -> None:
    upstream.commit_executorch(
        {}, "no conversion scripts", remove=tuple(f"examples/arduino/{n}" for n in REF_SCRIPTS)
    )
    reporter = NoteRecorder()
    lib = build(tmp_path, reporter).out
    tools = lib / "extras" / "tools"
    assert sorted(p.name for p in tools.iterdir()) == sorted([*OUR_TOOLS, READER])
    assert any(
        "has none of examples/arduino/{generate_test_input.py}" in note
        and "extras/tools/ ships without them" in note
        for note in reporter.notes
    ), reporter.notes
    provenance = (lib / "extras" / "PROVENANCE.txt").read_text()
    assert (
        "  extras/tools/ from ExecuTorch examples/arduino/: none (this ref has no "
        "generate_test_input.py)" in provenance
    )


def test_optional_rule_with_no_folder_copies_nothing(tmp_path: Path) -> None:
    rule = CopyRule("examples/arduino", "extras/tools", ("export_model.py",), optional=True)
    assert apply_rule(rule, tmp_path / "tree", tmp_path / "lib") == []
    with pytest.raises(FatalError, match="examples/arduino is missing"):
        apply_rule(replace(rule, optional=False), tmp_path / "tree", tmp_path / "lib")


def test_optional_must_be_a_boolean(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text(
        "name: X\nurl: u\npin: {kind: ref}\nlicense: MIT\nlicense_file: LICENSE\ncheckout: [a]\n"
        "files:\n  - {from: a, to: b, optional: 'yes'}\n"
    )
    with pytest.raises(FatalError, match="`optional` must be true or false"):
        load_component("x", tmp_path)
