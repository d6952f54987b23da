"""`lint`: one small library per arduino-lint rule, built in tmp_path, breaking that rule.

`valid_library` passes every rule; each case of `CASES` changes it so that exactly the
rule under test fails, and asserts the whole set of rule IDs found: when arduino-lint
itself reports a second rule for the same defect (an empty sentence is also a prefix of
the paragraph: LP032 and LP036), the case says so.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from generator.check.report import CheckReport
from generator.cli.main import main
from generator.library.properties import parse_properties
from generator.lint.push import GITHUB_FILE_LIMIT_BYTES
from generator.lint.report import LintReport
from generator.lint.run import lint_library
from generator.lint.table import RULES
from generator.util.errors import FatalError
from generator.util.templates import render

REPO = Path(__file__).resolve().parents[3]

PROPERTIES = {
    "name": "ExecuTorch",
    "version": "1.2.0",
    "author": "Meta Platforms",
    "maintainer": "ExecuTorch Team <executorch@meta.com>",
    "sentence": "Run PyTorch models on Arduino microcontrollers with ExecuTorch.",
    "paragraph": "Packages the ExecuTorch runtime with CMSIS-NN kernels for Cortex-M boards.",
    "category": "Data Processing",
    "url": "https://github.com/meta-pytorch/executorch-arduino",
    "architectures": "zephyr",
    "includes": "ExecuTorch.h",
    "depends": "Arduino_RouterBridge (>=0.1.0)",
}

FILES = {
    "src/ExecuTorch.h": "#pragma once\n#include <Arduino.h>\n",
    "src/executorch/runtime/core.cpp": '#include "Arduino.h"\nint et_core() { return 0; }\n',
    "examples/Hello/Hello.ino": "#include <ExecuTorch.h>\nvoid setup() {}\nvoid loop() {}\n",
    "extras/PROVENANCE.txt": "generated\n",
    "LICENSE": "BSD License\n",
    "README.md": "# ExecuTorch\n",
}


def write(root: Path, rel: str, text: str = "x\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def write_properties(root: Path, fields: dict[str, str]) -> None:
    (root / "library.properties").write_text("".join(f"{k}={v}\n" for k, v in fields.items()))


def valid_library(root: Path) -> Path:
    """A library at `root` (a folder named like the library) that passes every rule."""
    for rel, text in FILES.items():
        write(root, rel, text)
    write_properties(root, PROPERTIES)
    return root


def set_fields(root: Path, **changes: str | None) -> None:
    """Change fields of the library's library.properties; None removes one."""
    fields = parse_properties((root / "library.properties").read_bytes())
    for key, value in changes.items():
        if value is None:
            fields.pop(key, None)
        else:
            fields[key] = value
    write_properties(root, fields)


def flat(root: Path) -> None:
    """Turn the library into the 1.0 (flat) format: sources in the root, no src/."""
    (root / "src/ExecuTorch.h").rename(root / "ExecuTorch.h")
    shutil.rmtree(root / "src")


def ids(report: LintReport) -> set[str]:
    return {f.rule_id for f in report.findings}


Mutation = Callable[[Path], Any]


def renamed(name: str) -> Mutation:
    """name= becomes `name`, with the header arduino-cli expects for it."""

    def mutate(root: Path) -> None:
        set_fields(root, name=name)
        header = "".join(c if c.isascii() and c.isalnum() else "_" for c in name)
        write(root, f"src/{header}.h")

    return mutate


def fields(**changes: str | None) -> Mutation:
    """Change fields of library.properties (None removes one)."""
    return lambda root: set_fields(root, **changes)


def add(rel: str, text: str = "x\n") -> Mutation:
    """Write the file `rel` (folders created)."""
    return lambda root: write(root, rel, text)


def sparse(rel: str, size: int) -> Mutation:
    """Make `rel` a sparse file of `size` bytes (costs no disk)."""

    def mutate(root: Path) -> None:
        with write(root, rel, "").open("wb") as f:
            f.truncate(size)

    return mutate


def move(old: str, new: str) -> Mutation:
    return lambda root: (root / old).rename(root / new)


def remove(rel: str) -> Mutation:
    return lambda root: (
        shutil.rmtree(root / rel) if (root / rel).is_dir() else (root / rel).unlink()
    )


def then(*mutations: Mutation) -> Mutation:
    def mutate(root: Path) -> None:
        for mutation in mutations:
            mutation(root)

    return mutate


def case(rule_id: str, mutate: Mutation, *also: str, name: str = "ExecuTorch") -> Any:
    """Break `rule_id` with `mutate`; `also`: rules arduino-lint reports with it."""
    return pytest.param(rule_id, mutate, {rule_id, *also}, name, id=rule_id)


def nothing(root: Path) -> None:
    pass


CASES = [
    case("LS001", move("src/ExecuTorch.h", "src/executorch/ExecuTorch.h"), "LS008", "LP052"),
    case("LS002", nothing),  # the folder's name: FOLDER
    case("LS003", nothing),
    case("LS004", add(".gitmodules", '[submodule "x"]\n')),
    case("LS005", lambda r: os.symlink("../LICENSE", r / "extras/LICENSE")),
    case("LS006", add(".development", "")),
    case("LS007", add("extras/tools/flash.exe")),
    case("LS008", then(move("src/ExecuTorch.h", "src/Runtime.h"), fields(includes="Runtime.h"))),
    # Without an exact src/ the library is flat, and has no header in its root either.
    case("LS009", move("src", "Src"), "LS001", "LS008", "LP052"),
    case("LS010", add("utility/util.c")),
    case("LS011", add("extra/notes.txt")),
    # Windows and macOS cannot hold Extras beside extras either.
    case("LS012", add("Extras/notes.txt"), "OS004"),
    # Without library.properties the library is 1.0 format: its headers must be in the root.
    case("LP001", remove("library.properties"), "LS001"),
    case("LP002", add("libraries.properties")),
    # Library.properties sorts first, so it is also taken for a misspelling.
    case("LP003", add("Library.properties"), "LP002", "OS004"),
    case("LP004", add("src/library.properties", "name=ExecuTorch\n")),
    # arduino-cli then does not load the library at all.
    case("LP005", lambda r: write(r, "library.properties", "name=A\njust words\n"), "LS001"),
    case("LP006", fields(include="ExecuTorch.h")),
    case("LP007", fields(name=None)),
    case("LP008", fields(name=""), "LP018", "LS008"),
    case("LP009", renamed("E" * 64), "LP010", name="E" * 64),
    case("LP010", renamed("E" * 33), name="E" * 33),
    case("LP011", renamed("Execu/Torch"), name="Execu/Torch"),
    case("LP012", renamed("ArduinoTorch"), name="ArduinoTorch"),
    case("LP014", renamed("TorchArduino"), name="TorchArduino"),
    case("LP015", renamed("Execu Torch"), name="Execu Torch"),
    case("LP016", renamed("TorchLibrary"), name="TorchLibrary"),
    case("LP018", nothing, name="ExecuTorchRuntime"),
    case("LP019", fields(version=None)),
    case("LP020", fields(version="v1.2.0"), "LP021"),
    case("LP021", fields(version="1.2")),
    case("LP023", fields(author=None)),
    case("LP024", fields(author="")),
    case("LP025", fields(maintainer=None)),
    case("LP026", fields(maintainer="")),
    case("LP027", fields(maintainer="Arduino Team")),
    case("LP057", fields(maintainer="Team Arduino")),
    # email= in place of maintainer=: the schema still wants maintainer (LP025).
    case("LP028", fields(maintainer=None, email="a@b.c"), "LP025"),
    case("LP029", fields(maintainer=None, email=""), "LP025", "LP028"),
    case("LP030", fields(maintainer=None, email="arduino@b.c"), "LP025", "LP028"),
    case("LP031", fields(sentence=None)),
    # An empty sentence is a prefix of any paragraph.
    case("LP032", fields(sentence=""), "LP036"),
    case("LP034", fields(paragraph=None)),
    case("LP036", fields(paragraph=PROPERTIES["sentence"] + " And more.")),
    case("LP037", fields(category=None)),
    case("LP038", fields(category="Machine Learning")),
    # Uncategorized is not in the schema's list either.
    case("LP039", fields(category="Uncategorized"), "LP038"),
    case("LP040", fields(url=None)),
    # An empty URL is not an absolute one either.
    case("LP056", fields(url=""), "LP041"),
    case("LP041", fields(url="github.com/meta-pytorch/executorch-arduino")),
    case("LP043", fields(architectures=None)),
    case("LP044", fields(architectures="")),
    case("LP045", fields(architectures="zephyr, atmelavr")),
    case("LP046", fields(architectures="zephyr,AVR")),
    case("LP047", fields(depends="Arduino_RouterBridge,,Servo")),
    case("LP058", fields(depends="Arduino_RouterBridge (0.1.0)")),
    case("LP049", fields(dot_a_linkage="yes")),
    case("LP050", then(flat, fields(dot_a_linkage="true"))),
    case("LP051", fields(includes="")),
    case("LP052", fields(includes="ExecuTorch.h, Servo.h")),
    case("LP053", fields(precompiled="yes")),
    case("LP054", then(flat, fields(precompiled="full"))),
    case("LP055", fields(ldflags="-l")),
    case("LC001", add("src/executorch/pal.cpp", "  #  include <arduino.h>\n")),
    case("LD001", remove("README.md")),
    case("LD002", remove("LICENSE")),
    case("LD003", add("src/demo/Demo.ino")),
    case("LD004", remove("examples")),
    # (a misspelling is reported only when it sorts before the right name)
    case("LD005", add("exampel/notes.txt")),
    # Examples sorts before examples, and also looks like a misspelling.
    case("LD006", add("Examples/notes.txt"), "LD005", "OS004"),
    case("SS001", move("examples/Hello/Hello.ino", "examples/Hello/Main.ino")),
    case("SS002", add("examples/Hello/model data.h")),
    case("SS003", add(f"examples/Hello/{'m' * 64}.h")),
    case("SS004", move("examples/Hello/Hello.ino", "examples/Hello/Hello.pde")),
    case("SS005", add("examples/Hello/SRC/model.cpp")),
    # A sketch's code is also the library's code.
    case("SC001", add("examples/Hello/Hello.ino", "#include <ARDUINO.h>\n"), "LC001"),
    # The OS rules (generator/library/install_paths.py); tests/unit/lint/test_lint_os_paths.py has
    # the rest.
    case("OS001", add("src/executorch/aux.h")),
    case("OS002", add("src/executorch/time:zone.h")),
    case("OS003", add("extras/notes.")),
    case("OS004", add("src/executorch/Runtime/platform.cpp")),
    # 69 characters up to the library folder's backslash, then 152: 221 in all.
    case("OS005", add(f"extras/{'d' * 70}/{'f' * 74}")),
    # 115 up to the object folder's backslash, 104 below src/, ".o": 221; installed, 177.
    case("OS006", add(f"src/{'d' * 50}/{'f' * 51}.c")),
    # GitHub's push limit (a sparse file: no disk); tests/unit/lint/test_lint.py has the boundary.
    case("GH001", sparse("examples/Hello/model.h", GITHUB_FILE_LIMIT_BYTES + 1)),
]

#: Library folder names (the library is normally in a folder named like itself).
FOLDER = {"LS002": "E" * 64, "LS003": "Execu Torch"}


@pytest.mark.parametrize(("rule_id", "mutate", "expected", "name"), CASES)
def test_each_rule_fails_alone(
    tmp_path: Path, rule_id: str, mutate: Mutation, expected: set[str], name: str
) -> None:
    lib = valid_library(tmp_path / FOLDER.get(rule_id, "ExecuTorch"))
    mutate(lib)
    report = lint_library(lib, name=name)
    assert ids(report) == expected, "\n".join(map(str, report.findings))
    assert not report.passed
    (finding,) = [f for f in report.findings if f.rule_id == rule_id]
    assert finding.level == next(r.level for r in RULES if r.rule_id == rule_id)
    assert finding.message and not finding.path.startswith("/")


def test_every_rule_has_a_case_and_the_table_matches_arduino_lint() -> None:
    rule_ids = [r.rule_id for r in RULES]
    assert len(rule_ids) == len(set(rule_ids))
    assert set(rule_ids) == {c.values[0] for c in CASES}
    # Under --library-manager update --compliance strict, only these are warnings.
    assert {r.rule_id for r in RULES if r.level == "warning"} == {"LS004", "LS008", "LD004"}
    assert [r.rule_id for r in RULES][-7:] == [*(f"OS00{n}" for n in range(1, 7)), "GH001"]
    assert {r.level for r in RULES} == {"error", "warning"}


def test_a_file_of_exactly_githubs_limit_passes_and_one_byte_more_fails(tmp_path: Path) -> None:
    assert GITHUB_FILE_LIMIT_BYTES == 104_857_600  # 100 MiB
    lib = valid_library(tmp_path / "ExecuTorch")
    sparse("extras/big.bin", GITHUB_FILE_LIMIT_BYTES)(lib)
    assert lint_library(lib).passed
    sparse("extras/big.bin", GITHUB_FILE_LIMIT_BYTES + 1)(lib)
    (finding,) = lint_library(lib).findings
    assert (finding.rule_id, finding.path) == ("GH001", "extras/big.bin")
    assert "104,857,601 bytes, over GitHub's limit of 104,857,600" in finding.message
    # The repository's own .git is not pushed as a file.
    (lib / "extras/big.bin").rename(write(lib, ".git/objects/pack/x.pack", "").parent / "y.pack")
    assert lint_library(lib).passed


def test_the_valid_library_passes(tmp_path: Path) -> None:
    lib = valid_library(tmp_path / "ExecuTorch")
    report = lint_library(lib)
    assert report.passed, "\n".join(map(str, report.findings))
    assert report.findings == ()
    assert report.library == lib.resolve()
    assert report.to_markdown().startswith("## Library Manager lint: ✅ passed\n")


def test_findings_name_the_path_and_say_what_to_do(tmp_path: Path) -> None:
    lib = valid_library(tmp_path / "ExecuTorch")
    write(lib, "extras/a.exe")
    write(lib, "extras/tools/b.exe")
    set_fields(lib, name="ArduinoTorch")
    report = lint_library(lib)
    exes = [f for f in report.findings if f.rule_id == "LS007"]
    assert [f.path for f in exes] == ["extras/a.exe", "extras/tools/b.exe"]
    lp012 = next(f for f in report.findings if f.rule_id == "LP012")
    assert str(lp012) == (
        'LP012 error library.properties: name=ArduinoTorch starts with "Arduino", reserved '
        "for official Arduino libraries; rename the library"
    )
    lp018 = next(f for f in report.findings if f.rule_id == "LP018")
    assert "set name=ExecuTorch" in lp018.message
    markdown = report.to_markdown()
    assert markdown.startswith("## Library Manager lint: ❌ failed\n")
    assert "- ❌ **LS007** error `extras/a.exe`: " in markdown
    assert "https://arduino.github.io/arduino-lint/latest/rules/" in markdown


def test_a_folder_symlink_is_reported_not_followed(tmp_path: Path) -> None:
    lib = valid_library(tmp_path / "ExecuTorch")
    os.symlink("..", lib / "extras/loop")  # would recurse forever if followed
    report = lint_library(lib)
    assert [(f.rule_id, f.path) for f in report.findings] == [("LS005", "extras/loop")]


def test_nested_example_sketches_are_found(tmp_path: Path) -> None:
    lib = valid_library(tmp_path / "ExecuTorch")
    write(lib, "examples/Audio/Keyword/Spot.ino")
    report = lint_library(lib)
    assert [(f.rule_id, f.path) for f in report.findings] == [("SS001", "examples/Audio/Keyword")]


def test_depends_constraints() -> None:
    good = ["", ">=1.2.0", "=1.0.0 || ^2", "(>1 && <2) || !=3.0.0", "<=1.0.0-rc.1"]
    bad = ["1.0.0", ">=", ">=01.0", "(>1", ">1 | <2", ">1 & <2"]
    for depends, expected in [(g, set()) for g in good] + [(b, {"LP058"}) for b in bad]:
        props = dict(PROPERTIES, depends=f"Servo ({depends})" if depends else "Servo")
        assert _lp_ids(props) == expected, depends


def test_names_the_schema_allows() -> None:
    for name in ("1Sheeld", "Adafruit_GFX", "ESP8266-Audio.v2", "Ab Cd"):
        assert "LP011" not in _lp_ids(dict(PROPERTIES, name=name)), name
    for name in ("_Under", "123", "Über", "-dash"):
        assert "LP011" in _lp_ids(dict(PROPERTIES, name=name)), name


def _lp_ids(fields: dict[str, str]) -> set[str]:
    from generator.lint import library_tree as lint

    facts = lint.Library(
        root=Path("/nonexistent"),
        registered_name=fields.get("name", ""),
        legacy=False,
        properties=fields,
        properties_error=None,
        recursive=True,
        source_dir=Path("/nonexistent/src"),
        source_headers=["ExecuTorch.h"],
        sketches=[],
    )
    rules = [r for r in RULES if r.rule_id.startswith("LP") and r.rule_id != "LP001"]
    return {r.rule_id for r in rules if r.check(facts)} - {"LS008"}


def test_parse_properties_like_the_arduino_tools() -> None:
    text = "# comment\r\n  name = A B \r\n\r\nversion=1.0\rname=C=D\n\tparagraph=\n"
    assert parse_properties(text.encode()) == {"version": "1.0", "name": "C=D", "paragraph": ""}
    assert parse_properties("author=J\xfcrgen\n".encode("latin-1")) == {"author": "Jürgen"}
    with pytest.raises(ValueError, match="line 2"):
        parse_properties(b"name=A\nno equals sign\n")


def test_an_unreadable_library_is_a_fatal_error(tmp_path: Path) -> None:
    with pytest.raises(FatalError, match="does not exist"):
        lint_library(tmp_path / "nope")
    (tmp_path / "file").write_text("x")
    with pytest.raises(FatalError, match="is not a folder"):
        lint_library(tmp_path / "file")


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lib = valid_library(tmp_path / "ExecuTorch")
    assert main(["lint", str(lib)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("lint: on Windows (a 20-character user name")
    assert out.splitlines()[1].startswith(
        f"lint: {lib} passed the {len(RULES) - 7} rules of arduino-lint"
    )
    assert out.splitlines()[1].endswith(
        "and the 6 rules for installing on Windows, macOS and Linux, and GitHub's file size limit"
    )

    assert main(["lint", str(lib), "--name", "Other"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("LP018 error library.properties: name=ExecuTorch is not the name")
    assert lines[-1].startswith(f"lint: {lib} failed (1 error); the Library Manager would refuse")

    (lib / "README.md").unlink()
    write(lib, ".gitmodules")
    assert main(["lint", str(lib)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines[:-1]] == [
        "LS004 warning .gitmodules",
        "LD001 error .",
        "lint",
    ]
    assert "(1 error, 1 warning)" in lines[-1]

    with pytest.raises(SystemExit) as exc:
        main(["lint", str(tmp_path / "nope")])
    assert exc.value.code == 1
    assert "does not exist; pass the library's root folder" in capsys.readouterr().err


def test_check_refuses_a_library_that_fails_lint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The stages are replaced by a run_check that passes: only lint decides here."""
    checked: list[Path] = []

    def passing_check(library: Path, **options: Any) -> CheckReport:
        checked.append(library)
        return CheckReport(library, "gcc-arm", "UNO Q")

    monkeypatch.setattr("generator.check.run.run_check", passing_check)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    lib = valid_library(tmp_path / "ExecuTorch")
    assert main(["check", str(lib), "--no-run"]) == 0
    assert "## Library check: ✅ passed" in capsys.readouterr().out

    (lib / "LICENSE").unlink()
    report = tmp_path / "report.json"
    assert main(["check", str(lib), "--no-run", "--json", str(report)]) == 1
    out = capsys.readouterr().out
    assert "## Library check: ❌ failed" in out
    assert "- ❌ lint: LD002 error .: no license file" in out
    assert '"lint: LD002 error .: no license file' in report.read_text()
    assert checked == [lib.resolve(), lib.resolve()]  # the other stages still ran


def test_the_template_passes_but_for_the_readme_the_library_repo_owns(tmp_path: Path) -> None:
    """data/library_template/ (its library.properties rendered) + LICENSE: what every build writes.

    README.md is not generated (sync keeps the library repo's), so a freshly built library
    fails LD001 until it sits in the repo.
    """
    lib = tmp_path / "ExecuTorch"
    shutil.copytree(
        REPO / "data" / "library_template", lib, ignore=shutil.ignore_patterns("*.jinja")
    )
    (lib / "library.properties").write_text(
        render(
            "library.properties.jinja",
            p=SimpleNamespace(library_version="1.5.0", upstream_version="1.5.0", ref="v1.5.0"),
        )
    )
    (lib / "LICENSE").write_text("BSD License\n")
    report = lint_library(lib)
    assert ids(report) == {"LD001"}, "\n".join(map(str, report.findings))
