"""`lint`'s OS rules (OS001-OS006, `generator/library/install_paths.py`): names Windows refuses,
paths that differ only by case or Unicode normalization, and installed and object paths
too long for Windows; the longest paths in lint's output; `check` and `sync` refusing a
library that breaks one.

Each test builds a small library in tmp_path (`test_lint.valid_library`) and adds the
offending path; `test_lint.py` has one case per rule beside arduino-lint's.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from github_fake import FakeGitHub
from sync_fixtures import Runner, git, writes
from test_lint import flat, set_fields, valid_library, write

from generator.check.report import CheckReport
from generator.cli.main import main
from generator.library import install_paths as ip
from generator.lint.report import LintReport
from generator.lint.run import lint_library
from generator.util.errors import FatalError

#: The Windows paths as the issue gives them, with a user name of 20 characters.
INSTALLED = "C:\\Users\\User_Name_Of_20_Char\\Documents\\Arduino\\libraries\\ExecuTorch\\"
BUILT = (
    "C:\\Users\\User_Name_Of_20_Char\\AppData\\Local\\arduino\\sketches\\"
    "00000000000000000000000000000000\\libraries\\ExecuTorch\\"
)


def found(report: LintReport, prefix: str = "OS") -> list[tuple[str, str]]:
    return [(f.rule_id, f.path) for f in report.findings if f.rule_id.startswith(prefix)]


def library(tmp_path: Path, *files: str) -> Path:
    lib = valid_library(tmp_path / "ExecuTorch")
    for rel in files:
        write(lib, rel)
    return lib


# -- names -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("aux.h", "reserved"),
        ("AUX", "reserved"),
        ("con.cpp", "reserved"),
        ("Con.tar.gz", "reserved"),
        ("nul .txt", "reserved"),
        ("prn", "reserved"),
        ("com0.h", "reserved"),
        ("COM9", "reserved"),
        ("com\u00b9.h", "reserved"),  # COM¹
        ("lpt\u00b3", "reserved"),  # LPT³
        ("LPT0.c", "reserved"),
        ("conin$.h", "reserved"),
        ("auxiliary.h", None),
        ("aux_.h", None),
        ("com10.h", None),
        ("lpt.h", None),
        ("my.aux", None),  # only the part before the first dot counts
        ("console.h", None),
        ("a<b", "character"),
        ("a>b", "character"),
        ("time:zone.h", "character"),
        ('say"hi".h', "character"),
        ("back\\slash.h", "character"),
        ("pipe|.h", "character"),
        ("what?.h", "character"),
        ("star*.h", "character"),
        ("tab\there.h", "character"),
        ("nul\x00", "character"),
        ("unit\x1f.h", "character"),
        ("\udcff.h", "character"),  # the byte 0xff, not UTF-8, as os.listdir returns it
        ("notes.", "ending"),
        ("notes ", "ending"),
        ("caf\u00e9.h", None),
        ("a b.h", None),
        ("x\x7f.h", None),  # DEL (127) is not among Windows' forbidden characters
    ],
)
def test_windows_names(name: str, problem: str | None) -> None:
    assert ip.windows_name_problem(name) == problem


def test_each_name_problem_is_reported_on_its_own_path_not_below_it(tmp_path: Path) -> None:
    lib = library(
        tmp_path,
        "src/executorch/aux.h",
        "src/con/inner.h",  # a folder named CON: reported once, not for each file below
        "src/con/deeper/more.h",
        "extras/tools/run:me.py",
        "extras/trailing./notes.txt",
        "extras/space /notes.txt",
    )
    report = lint_library(lib)
    assert found(report) == [
        ("OS001", "src/con"),
        ("OS001", "src/executorch/aux.h"),
        ("OS002", "extras/tools/run:me.py"),
        ("OS003", "extras/space "),
        ("OS003", "extras/trailing."),
    ]
    (aux,) = [f for f in report.findings if f.path == "src/executorch/aux.h"]
    assert aux.level == "error"
    assert aux.message.startswith("aux.h is a Windows device name (aux), which no file")
    assert "data/vendored/*.yaml" in aux.message
    (colon,) = [f for f in report.findings if f.rule_id == "OS002"]
    assert colon.message.startswith("the name holds :, which Windows forbids")


def test_a_control_character_is_named_by_its_code(tmp_path: Path) -> None:
    report = lint_library(library(tmp_path, "extras/bell\x07.txt"))
    (finding,) = report.findings
    assert finding.rule_id == "OS002"
    assert finding.message.startswith("the name holds \\x07, which Windows forbids")


def test_a_name_that_is_not_utf8(tmp_path: Path) -> None:
    lib = library(tmp_path)
    with open(os.fsencode(lib / "src") + b"/\xff.c", "wb") as source:
        source.write(b"int x;\n")
    (finding,) = lint_library(lib).findings
    assert (finding.rule_id, finding.path) == ("OS002", "src/\udcff.c")
    assert "not UTF-8" in finding.message


# -- case and normalization --------------------------------------------------------------


def test_the_caseless_form() -> None:
    nfc, nfd = "caf\u00e9.h", "cafe\u0301.h"
    assert nfc != nfd and ip.caseless(nfc) == ip.caseless(nfd) == ip.caseless("CAF\u00c9.H")
    assert ip.caseless("Stra\u00dfe.h") == ip.caseless("STRASSE.H")  # casefold: ß is ss
    assert ip.caseless("a.h") != ip.caseless("b.h")


def test_paths_that_differ_only_by_case(tmp_path: Path) -> None:
    lib = library(tmp_path, "src/executorch/Core.h", "src/executorch/core.h")
    report = lint_library(lib)
    assert found(report) == [("OS004", "src/executorch/Core.h")]
    (finding,) = report.findings
    assert finding.message.startswith(
        "'src/executorch/Core.h' and 'src/executorch/core.h' (2 files) differ only by case"
    )


def test_nfc_and_nfd_spellings_collide_as_on_macos(tmp_path: Path) -> None:
    nfc = unicodedata.normalize("NFC", "caf\u00e9.h")
    nfd = unicodedata.normalize("NFD", nfc)
    lib = library(tmp_path, f"src/{nfc}", f"src/{nfd}")
    assert sorted(os.listdir(lib / "src")) == sorted(["ExecuTorch.h", "executorch", nfc, nfd])
    assert found(lint_library(lib)) == [("OS004", f"src/{sorted([nfc, nfd])[0]}")]


def test_a_file_and_a_folder_collide(tmp_path: Path) -> None:
    lib = library(tmp_path, "src/executorch/Runtime", "src/executorch/runtime/more.h")
    report = lint_library(lib)
    assert found(report) == [("OS004", "src/executorch/Runtime")]
    assert "(a file and a folder)" in report.findings[0].message


def test_colliding_folders_are_reported_once_not_for_each_file(tmp_path: Path) -> None:
    # FILES has src/executorch/runtime/core.cpp; Runtime/ repeats it and adds one more.
    lib = library(tmp_path, "src/executorch/Runtime/core.cpp", "src/executorch/Runtime/x.h")
    report = lint_library(lib)
    assert found(report) == [("OS004", "src/executorch/Runtime")]
    assert "(2 folders)" in report.findings[0].message
    assert ip.case_collisions(["A", "a", "A/x.h", "a/x.h", "b", "B"]) == [("A", "a"), ("B", "b")]


# -- path lengths ------------------------------------------------------------------------


def test_the_windows_layout_of_installed_and_object_paths() -> None:
    assert ip.installed_path("ExecuTorch", "src/a/b.h") == INSTALLED + "src\\a\\b.h"
    # arduino-cli drops the source folder (src/) and appends .o to the source's name
    assert ip.object_path("ExecuTorch", "a/b.cpp") == BUILT + "a\\b.cpp.o"
    assert len(INSTALLED) == 69 and len(BUILT) == 115
    assert (ip.MAX_PATH, ip.PATH_MARGIN, ip.PATH_BUDGET) == (260, 40, 220)
    assert ip.windows_length("\U0001f600") == 2  # UTF-16 code units, as Windows counts


def test_the_longest_paths_are_reported(tmp_path: Path) -> None:
    rel = f"src/executorch/{'k' * 40}.cpp"
    lib = library(tmp_path, rel, f"extras/{'e' * 60}.txt")
    report = lint_library(lib)
    assert report.passed
    assert report.longest_installed is not None and report.longest_object is not None
    assert report.longest_installed.rel == f"extras/{'e' * 60}.txt"
    assert report.longest_installed.path == INSTALLED + f"extras\\{'e' * 60}.txt"
    assert report.longest_installed.length == 69 + 7 + 64 == 140
    assert report.longest_object.rel == rel
    assert report.longest_object.path == BUILT + f"executorch\\{'k' * 40}.cpp.o"
    assert report.longest_object.length == 115 + 11 + 44 + 2 == 172
    line = (
        f"longest installed path: 140 of 220 characters (extras/{'e' * 60}.txt); "
        f"longest object path: 172 of 220 characters ({rel})"
    )
    assert report.path_lengths() == line
    markdown = report.to_markdown()
    assert (
        "On Windows (a 20-character user name, the default folders of the IDE and "
        f"arduino-cli): {line}."
    ) in markdown


@pytest.mark.parametrize(("extra", "expected"), [(0, []), (1, ["OS005"])])
def test_installed_path_limit(tmp_path: Path, extra: int, expected: list[str]) -> None:
    """220 characters pass, 221 fail (a file in extras/: installed, never compiled)."""
    rel = f"extras/{'d' * 70}/{'f' * (73 + extra)}"
    lib = library(tmp_path, rel)
    report = lint_library(lib)
    assert len(INSTALLED) + len(rel) == 220 + extra
    assert [f.rule_id for f in report.findings] == expected
    assert report.longest_installed is not None
    assert (report.longest_installed.rel, report.longest_installed.length) == (rel, 220 + extra)
    if expected:
        message = report.findings[0].message
        assert message.startswith("installed on Windows its path is 221 characters (C:\\Users\\")
        assert "over 220 (MAX_PATH 260 less a margin of 40)" in message


@pytest.mark.parametrize(("extra", "expected"), [(0, []), (1, ["OS006"])])
def test_object_path_limit(tmp_path: Path, extra: int, expected: list[str]) -> None:
    """The object path is the tighter one: 115 + the path below src/ + ".o"."""
    below = f"{'d' * 50}/{'f' * (48 + extra)}.cpp"
    lib = library(tmp_path, f"src/{below}")
    report = lint_library(lib)
    assert len(BUILT) + len(below) + 2 == 220 + extra
    assert [f.rule_id for f in report.findings] == expected
    assert report.longest_object is not None and report.longest_object.length == 220 + extra
    assert report.longest_installed is not None and report.longest_installed.length < 200


def test_a_folder_too_long_is_reported_once(tmp_path: Path) -> None:
    deep = f"extras/{'d' * 150}"
    lib = library(tmp_path, f"{deep}/a.txt", f"{deep}/b.txt")
    assert found(lint_library(lib)) == [("OS005", deep)]


def test_only_sources_arduino_cli_compiles_have_object_paths(tmp_path: Path) -> None:
    long = "g" * 110
    lib = library(
        tmp_path,
        f"src/{long}.h",  # a header: not compiled
        f"src/{long}.s",  # lower-case .s: not among arduino-cli's extensions
        f"src/.hidden/{long}.c",  # hidden folders are skipped
        f"src/CVS/{long}.c",  # and source-control ones
        f"extras/{long}.c",  # outside src/
    )
    report = lint_library(lib)
    assert found(report) == []
    assert report.longest_object is not None
    assert report.longest_object.rel == "src/executorch/runtime/core.cpp"
    write(lib, f"src/{long}S.S")  # (beside {long}.s it would collide on Windows)
    assert found(lint_library(lib)) == [("OS006", f"src/{long}S.S")]


def test_a_flat_library_compiles_its_root_and_utility(tmp_path: Path) -> None:
    """The 1.0 format: the root and utility/, not recursively; objects in utility\\."""
    lib = library(tmp_path)
    flat(lib)
    write(lib, f"utility/{'u' * 90}.c")
    write(lib, f"utility/deeper/{'v' * 120}.c")  # not compiled: flat is not recursive
    report = lint_library(lib)
    assert found(report) == []
    assert report.longest_object is not None
    assert report.longest_object.path == BUILT + f"utility\\{'u' * 90}.c.o"
    write(lib, f"{'r' * 102}.c")  # 115 + 104 + 2 in the root
    assert found(lint_library(lib)) == [("OS006", f"{'r' * 102}.c")]


def test_the_install_folder_is_the_sanitized_name(tmp_path: Path) -> None:
    """The Library Manager installs `name=Execu Torch` into `Execu_Torch`."""
    lib = library(tmp_path)
    set_fields(lib, name="Execu Torch")
    report = lint_library(lib, name="Execu Torch")
    assert report.longest_installed is not None
    assert report.longest_installed.path.startswith(
        "C:\\Users\\User_Name_Of_20_Char\\Documents\\Arduino\\libraries\\Execu_Torch\\"
    )
    assert report.longest_object is not None
    assert "\\libraries\\Execu_Torch\\executorch\\" in report.longest_object.path


def test_the_repository_git_folder_is_not_installed(tmp_path: Path) -> None:
    lib = library(tmp_path)
    git_dir = lib / ".git"
    write(lib, f".git/refs/heads/{'b' * 200}")
    write(lib, ".git/refs/heads/Topic")
    write(lib, ".git/refs/heads/topic")
    write(lib, ".git/aux")
    report = lint_library(lib)
    assert git_dir.is_dir() and found(report) == []
    assert report.longest_installed is not None
    assert not report.longest_installed.rel.startswith(".git")


# -- the commands ------------------------------------------------------------------------


def test_lint_prints_the_longest_paths_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lib = library(tmp_path)
    assert main(["lint", str(lib)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "lint: on Windows (a 20-character user name, the default folders of the IDE and "
        "arduino-cli): longest installed path: 100 of 220 characters "
        "(src/executorch/runtime/core.cpp); longest object path: 144 of 220 characters "
        "(src/executorch/runtime/core.cpp)"
    )
    write(lib, "src/executorch/nul.h")
    assert main(["lint", str(lib)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("OS001 error src/executorch/nul.h: nul.h is a Windows device name")
    assert lines[-1].startswith(f"lint: {lib} failed (1 error); the Library Manager would refuse")
    assert "(OS rules: generator/library/install_paths.py)" in lines[-1]


def test_check_refuses_a_library_windows_cannot_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The stages are replaced by a run_check that passes: only lint decides here."""

    def passing_check(library: Path, **options: Any) -> CheckReport:
        return CheckReport(library, "gcc-arm", "UNO Q")

    monkeypatch.setattr("generator.check.run.run_check", passing_check)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    lib = library(tmp_path, "src/executorch/Core.h", "src/executorch/core.h")
    report = tmp_path / "report.json"
    assert main(["check", str(lib), "--no-run", "--json", str(report)]) == 1
    out = capsys.readouterr().out
    assert "## Library check: ❌ failed" in out
    assert "- ❌ lint: OS004 error src/executorch/Core.h: 'src/executorch/Core.h' and" in out
    assert '"lint: OS004 error src/executorch/Core.h: ' in report.read_text()


def test_sync_refuses_a_library_windows_cannot_install(
    sync: Runner, fake: FakeGitHub, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sync.build.extra = {f"src/executorch/{'p' * 60}/{'q' * 60}.cpp": "int q;\n"}
    before = git("for-each-ref", cwd=remote)
    with pytest.raises(FatalError, match="fails 1 error of the Library Manager's rules"):
        sync()
    out = capsys.readouterr().out
    assert "**OS006** error `src/executorch/" in out
    # 115 up to the object folder's backslash, executorch\\ (11), 60, \\, 64, .o (2)
    assert "longest object path: 253 of 220 characters" in out
    assert sync.check.checked == []  # lint comes first
    assert git("for-each-ref", cwd=remote) == before and writes(fake) == []
