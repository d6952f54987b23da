"""The library's facts (`generator.library.facts`): written once by the build to
extras/library.json,
read by release and sync from it, and from an older library's other files when it has none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from et_fixture import FIXTURE_CORTEX_M_OPS, Upstream
from git import Repo
from sync_fixtures import git

from generator.library.facts import (
    ComponentPin,
    LibraryFacts,
    facts_in_folder,
    parse_facts,
    read_facts,
)
from generator.library.layout import (
    CODEGEN_DIR,
    LIBRARY_FACTS_FILE,
    PIN_FILE,
    PROPERTIES_FILE,
    PROVENANCE_FILE,
)
from generator.pipeline.default_ops import DEFAULT_ROOT_OPS
from generator.pipeline.run import BuildOptions, build_library
from generator.vcs.git import facts_at

PIN = "a" * 40
FACTS = LibraryFacts(
    library_version="0.3.0",
    pin=PIN,
    executorch_url="https://github.com/pytorch/executorch.git",
    ref="main",
    upstream_version="1.6.0a0",
    components=(ComponentPin("FlatBuffers", "https://github.com/google/flatbuffers", "b" * 40),),
    op_set="default",
    operators=("aten::add.out", "aten::mul.out"),
    kernels=("aten::mul.out", "aten::add.out", "aten::add.out"),
    prim_ops=("aten::sym_size.int",),
    examples=("HelloExecuTorch", "AddModel"),
    from_file=True,
)
#: An older generator's library: no extras/library.json.
OLD_FILES = {
    PROPERTIES_FILE: "name=ExecuTorch\nversion=0.2.0\n",
    PIN_FILE: f"{'c' * 40}\n",
    PROVENANCE_FILE: "executorch:       URL\nupstream version: 1.5.1\nlibrary version:  0.2.0\n",
    f"{CODEGEN_DIR}/RegisterB.cpp": 'Kernel("aten::mul.out", f),',
    f"{CODEGEN_DIR}/RegisterA.cpp": 'Kernel("aten::add.out", f), Kernel( "aten::relu.out" , g)',
    "src/other.cpp": 'Kernel("not::codegen", f)',
}
OLD_FACTS = LibraryFacts(
    library_version="0.2.0",
    pin="c" * 40,
    upstream_version="1.5.1",
    kernels=("aten::add.out", "aten::relu.out", "aten::mul.out"),
)


def _reader(files: dict[str, str]) -> LibraryFacts:
    return read_facts(
        files.get,
        lambda folder: {p: t for p, t in files.items() if p.startswith(folder + "/")},
    )


def test_the_facts_file_is_sorted_json_with_a_trailing_newline() -> None:
    text = FACTS.to_json()
    assert text.endswith("}\n") and not text.endswith("\n\n")
    data = json.loads(text)
    assert list(data) == sorted(data) and list(data["executorch"]) == sorted(data["executorch"])
    assert data["format"] == 1 and data["library"] == {"name": "ExecuTorch", "version": "0.3.0"}
    assert data["executorch"] == {
        "url": "https://github.com/pytorch/executorch.git",
        "sha": PIN,
        "ref": "main",
        "upstream_version": "1.6.0a0",
    }
    assert data["components"] == [
        {"name": "FlatBuffers", "url": "https://github.com/google/flatbuffers", "sha": "b" * 40}
    ]
    # kernels as registered: file order, one entry per kernel
    assert data["kernels"] == ["aten::mul.out", "aten::add.out", "aten::add.out"]
    assert parse_facts(text) == FACTS


#: The library of FACTS as its other files say it: the same pin and version (what users and
#: the Library Manager read), but other kernels and upstream version (PROVENANCE, codegen).
AGREEING = {**OLD_FILES, PIN_FILE: f"{PIN}\n", PROPERTIES_FILE: "name=ExecuTorch\nversion=0.3.0\n"}


def test_the_file_is_what_is_read_when_present() -> None:
    # the codegen and PROVENANCE say something else: the facts file wins
    facts = _reader({**AGREEING, LIBRARY_FACTS_FILE: FACTS.to_json()})
    assert facts == FACTS and facts.from_file


@pytest.mark.parametrize(
    "other",
    [{PIN_FILE: f"{'c' * 40}\n"}, {PROPERTIES_FILE: "name=ExecuTorch\nversion=0.2.0\n"}],
    ids=["pin", "version"],
)
def test_a_file_naming_another_pin_or_version_is_stale(other: dict[str, str]) -> None:
    """executorch_pin.txt and library.properties are what users and the Library Manager
    read: a facts file that disagrees with them (edited by hand, left behind) is not believed."""
    facts = _reader({**AGREEING, **other, LIBRARY_FACTS_FILE: FACTS.to_json()})
    assert not facts.from_file and facts.kernels == OLD_FACTS.kernels


def test_a_file_nested_past_the_parser_is_read_as_before() -> None:
    deep = '{"format": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    facts = _reader({**AGREEING, LIBRARY_FACTS_FILE: deep})
    assert not facts.from_file and facts.pin == PIN


def test_a_library_without_the_file_is_read_as_before() -> None:
    facts = _reader(OLD_FILES)
    assert facts == OLD_FACTS and not facts.from_file
    unknown = (facts.executorch_url, facts.ref, facts.op_set, facts.components, facts.examples)
    assert unknown == (None, None, None, (), ())


@pytest.mark.parametrize(
    "pin",
    [
        "--upload-pack=touch pwned",
        f"{'a' * 39}",
        f"{'g' * 40}",
        f"{'a' * 40})](javascript:x)",
        "main",
    ],
)
def test_a_pin_file_that_is_not_a_full_sha_gives_no_pin(pin: str) -> None:
    """Release, sync and the upstream section pass the pin to git and into links: anything
    but 40 hex digits is unknown, with or without a facts file naming it; upper case is read
    lower-cased, as git spells a SHA."""
    facts = _reader({**OLD_FILES, PIN_FILE: f"{pin}\n"})
    assert facts.pin is None and not facts.from_file
    assert _reader({**OLD_FILES, PIN_FILE: f"{'a' * 40}\n"}).pin == "a" * 40
    assert _reader({**OLD_FILES, PIN_FILE: f" {'A' * 40}\r\n"}).pin == "a" * 40


def test_an_empty_library_has_no_facts() -> None:
    assert _reader({}) == LibraryFacts(library_version=None, pin=None)
    assert _reader({PIN_FILE: "\n"}).pin is None


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{not json",
        "[]",
        json.dumps({**json.loads(FACTS.to_json()), "format": 2}),
        json.dumps({**json.loads(FACTS.to_json()), "kernels": "aten::add.out"}),
        json.dumps({**json.loads(FACTS.to_json()), "kernels": [1]}),
        json.dumps({k: v for k, v in json.loads(FACTS.to_json()).items() if k != "executorch"}),
    ],
    ids=["empty", "not-json", "list", "format-2", "kernels-a-string", "kernel-a-number", "no-et"],
)
def test_a_damaged_file_falls_back_to_the_other_files(text: str) -> None:
    assert parse_facts(text) is None
    assert _reader({**OLD_FILES, LIBRARY_FACTS_FILE: text}) == OLD_FACTS


def test_facts_of_a_folder_and_of_a_commit(tmp_path: Path) -> None:
    work = tmp_path / "lib"
    for path, text in OLD_FILES.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    assert facts_in_folder(work) == OLD_FACTS
    git("init", "--quiet", str(work), cwd=tmp_path)
    git("add", "-A", cwd=work)
    git("commit", "-qm", "old", cwd=work)
    old = git("rev-parse", "HEAD", cwd=work)
    for path, text in {**AGREEING, LIBRARY_FACTS_FILE: FACTS.to_json()}.items():
        (work / path).write_text(text)
    git("add", "-A", cwd=work)
    git("commit", "-qm", "new", cwd=work)
    repo = Repo(work)
    assert facts_at(repo, old) == OLD_FACTS
    assert facts_at(repo, "HEAD") == FACTS
    assert facts_in_folder(work) == FACTS


def test_the_build_writes_the_facts(tmp_path: Path, upstream: Upstream) -> None:
    lib = tmp_path / "out" / "ExecuTorch"
    result = build_library(BuildOptions(cache_dir=tmp_path / "cache"), lib)
    text = (lib / LIBRARY_FACTS_FILE).read_text()
    facts = parse_facts(text)
    assert facts is not None and facts.to_json() == text
    assert facts.pin == upstream.shas["executorch"] == result.sha
    assert (facts.ref, facts.upstream_version, facts.library_version) == ("main", "1.5.0", "1.5.0")
    assert [(c.name, c.sha) for c in facts.components] == [
        ("FlatBuffers", upstream.shas["flatbuffers"]),
        ("flatcc", upstream.shas["flatcc"]),
        ("CMSIS-NN", upstream.shas["cmsis"]),
    ]
    assert facts.operators == tuple(result.op_set) and facts.op_set
    assert len(facts.kernels) == len(DEFAULT_ROOT_OPS) + len(FIXTURE_CORTEX_M_OPS)
    assert len(facts.prim_ops) == 3
    assert facts.examples == ("HelloExecuTorch", "AddModel", "KeywordSpotting")
    # what an older generator's reader finds in the same library agrees with the file
    (lib / LIBRARY_FACTS_FILE).unlink()
    old = facts_in_folder(lib)
    assert not old.from_file
    assert (old.pin, old.library_version, old.upstream_version, old.kernels) == (
        facts.pin,
        facts.library_version,
        facts.upstream_version,
        facts.kernels,
    )
