"""`check LIBRARY --sketch PATH`: a user's own sketch, anywhere, checked like an example
(compile, sizes in both link modes, emulated, Dynamic and host runs, its serial output);
`expected.yaml` optional, `--expect TEXT`, `--timeout`; bad input refused with exit code 2
before anything is written. And the host run's arena shortfall where the board's run passed,
reported as the host's limitation (for examples too).

Every library and sketch here is written by the test into tmp_path (check_fixtures.py); no
ExecuTorch sources are needed, except in the e2e test at the end (the real library).
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
from check_fixtures import HELLO_EXPECTED, HELLO_SKETCH, needs_tools, write_library
from sketches import EMPTY_SKETCH

from generator.check.arena import HOST_LIMIT, host_arena_limit
from generator.check.expected import DONE_LINE, Expected
from generator.check.run_sketch import RunOutput, judge_run
from generator.check.sketch import (
    BAD_INPUT_EXIT,
    DEFAULT_SKETCH_TIMEOUT_SECONDS,
    real_folder_paths,
    resolve_sketch,
    resolve_sketches,
    serial_output,
    sketch_expected,
    sketch_overlay,
)
from generator.check.stages import StageResult, Status
from generator.cli.main import main
from generator.pipeline.run import BuildResult
from generator.util.errors import FatalError

#: Prints its arena line on the 32-bit board, and ETModel's shortfall on the 64-bit host:
#: what a sketch whose arena fits the board but not the host's wider runtime objects shows.
HOST_SHORT_SKETCH = textwrap.dedent(
    """\
    #include <Tiny.h>
    #include <stdint.h>
    void setup() {
      Serial.begin(115200);
      Serial.print("twice(4) = ");
      Serial.println(twice(4));
    #if UINTPTR_MAX > 0xFFFFFFFFu
      Serial.println("ERROR: load_method failed (0x21): the 6144-byte arena is too small");
    #else
      Serial.println("Arena: used 5470 of 6144 bytes");
    #endif
      Serial.println("=== DONE ===");
    }
    void loop() { delay(100); }
    """
)
#: Falls short on the board too: the sketch's own error.
BOTH_SHORT_SKETCH = textwrap.dedent(
    """\
    void setup() {
      Serial.begin(115200);
      Serial.println("ERROR: load_method failed (0x21): the 512-byte arena is too small");
      Serial.println("=== DONE ===");
    }
    void loop() { delay(100); }
    """
)


def _sketch(folder: Path, code: str = EMPTY_SKETCH) -> Path:
    folder.mkdir(parents=True)
    (folder / f"{folder.name}.ino").write_text(code)
    return folder


# -- the sketch's path and name -------------------------------------------------------------


def test_a_sketch_is_its_folder_or_its_main_ino(tmp_path: Path) -> None:
    folder = _sketch(tmp_path / "Mine")
    (folder / "helper.ino").write_text("int helper() { return 1; }\n")
    assert resolve_sketch(folder) == folder.resolve()
    assert resolve_sketch(folder / "Mine.ino") == folder.resolve()
    # The same folder named twice is checked once.
    assert resolve_sketches([folder, folder / "Mine.ino"]) == [folder.resolve()]


def _bad_path(tmp: Path, case: str) -> Path:
    """A path `--sketch` must refuse, by case."""
    if case == "missing":
        return tmp / "Nope"
    if case == "missing file":
        return _sketch(tmp / "Mine") / "helper.cpp"
    if case == "empty folder":
        (tmp / "Empty").mkdir()
        return tmp / "Empty"
    if case == "other ino":
        _sketch(tmp / "Other").rename(tmp / "Folder")
        return tmp / "Folder"
    if case == "ino not named after its folder":
        (_sketch(tmp / "Folder") / "Folder.ino").rename(tmp / "Folder" / "Main.ino")
        return tmp / "Folder" / "Main.ino"
    if case == "not an ino":
        (_sketch(tmp / "Mine") / "notes.txt").write_text("x")
        return tmp / "Mine" / "notes.txt"
    return _sketch(tmp / case)  # a folder named `case`


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("missing", "no such file or folder"),
        ("missing file", "no such file or folder"),
        ("empty folder", "no Empty.ino in it (it holds no .ino file)"),
        ("other ino", "no Folder.ino in it (it holds Other.ino, none named after the folder)"),
        ("ino not named after its folder", "Main.ino is in the folder Folder/"),
        ("not an ino", "not an .ino file"),
        ("my sketch", "'my sketch' is not a valid sketch name"),
        ("Dot.", "'Dot.' is not a valid sketch name"),
        ("-dash", "'-dash' is not a valid sketch name"),
        ("L" * 64, "is not a valid sketch name"),
    ],
)
def test_a_path_that_is_no_sketch_is_refused_with_exit_code_2(
    tmp_path: Path, case: str, message: str
) -> None:
    with pytest.raises(FatalError, match="--sketch") as exc:
        resolve_sketch(_bad_path(tmp_path, case))
    assert message in str(exc.value)
    assert exc.value.exit_code == BAD_INPUT_EXIT == 2


def test_valid_names_of_the_specification_pass(tmp_path: Path) -> None:
    for name in ("_under", "9lives", "a.b-c_d", "L" * 63):
        assert resolve_sketch(_sketch(tmp_path / name)).name == name


def test_an_ino_that_is_not_utf8_is_refused_before_compiling(tmp_path: Path) -> None:
    folder = _sketch(tmp_path / "Mine")
    (folder / "extra.ino").write_bytes(b"// caf\xe9\n")
    with pytest.raises(FatalError, match="extra.ino is not UTF-8 text") as exc:
        resolve_sketch(folder)
    assert exc.value.exit_code == 2


def test_two_folders_of_one_name_are_refused(tmp_path: Path) -> None:
    a, b = _sketch(tmp_path / "a" / "Mine"), _sketch(tmp_path / "b" / "Mine")
    with pytest.raises(FatalError, match="are both named Mine") as exc:
        resolve_sketches([a, b])
    assert exc.value.exit_code == 2


# -- what a run must print --------------------------------------------------------------------


def test_without_expected_yaml_the_timeout_ends_the_run(tmp_path: Path) -> None:
    folder = _sketch(tmp_path / "Mine")
    expected = sketch_expected(folder, ["Inference:", "out[0]"])
    assert expected == Expected(
        must_print=(),
        must_not_print=("ERROR:",),
        timeout_seconds=DEFAULT_SKETCH_TIMEOUT_SECONDS,
        contains=("Inference:", "out[0]"),
        until_done=False,
    )
    assert sketch_expected(folder, timeout=2.5).timeout_seconds == 2.5


def test_an_expected_yaml_beside_the_sketch_is_read_and_expect_adds_to_it(tmp_path: Path) -> None:
    folder = _sketch(tmp_path / "Mine")
    (folder / "expected.yaml").write_text(HELLO_EXPECTED)
    expected = sketch_expected(folder, ["bump"], timeout=5)
    assert expected.until_done is True
    assert expected.must_print[-1] == DONE_LINE
    assert (expected.contains, expected.timeout_seconds) == (("bump",), 5)
    assert sketch_expected(folder).timeout_seconds == 30  # the file's


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"must_print: [\xff]\n", "is not UTF-8 text"),
        (b"must_print: [unclosed\n", "is not valid YAML"),
        (b"must_print: []\n", "must list at least one line"),
        (None, "is not a file"),
    ],
)
def test_a_bad_expected_yaml_is_refused_with_exit_code_2(
    tmp_path: Path, content: bytes | None, message: str
) -> None:
    folder = _sketch(tmp_path / "Mine")
    if content is None:
        (folder / "expected.yaml").mkdir()
    else:
        (folder / "expected.yaml").write_bytes(content)
    with pytest.raises(FatalError, match=message) as exc:
        sketch_expected(folder)
    assert exc.value.exit_code == 2


def _run(kind: str, lines: list[str], **kw: object) -> RunOutput:
    return RunOutput(kind, lines=lines, seconds=3.0, **kw)  # type: ignore[arg-type]


def test_a_sketch_run_without_expected_yaml_is_judged_by_faults_errors_and_expect() -> None:
    free = Expected(must_print=(), must_not_print=("ERROR:",), timeout_seconds=3, until_done=False)
    ticks = ["hello", "Inference: 74 us", "tick"]
    ok = judge_run(_run("emulated", ticks, timed_out=True), free, "run")
    assert ok.status is Status.PASS
    assert ok.summary.endswith("printed 3 lines in 3.0 s, no fault (ended by the timeout)")
    assert judge_run(_run("host", ticks, exit_code=0), free, "sanitize").passed
    # The same run judged as an example's: no DONE line, a failure.
    example = Expected(must_print=(), timeout_seconds=3)
    assert "timed out" in judge_run(_run("emulated", ticks, timed_out=True), example, "run").summary

    def fails(out: RunOutput, expected: Expected = free) -> str:
        result = judge_run(out, expected, "run")
        assert result.status is Status.FAIL
        return result.summary

    assert "printed nothing within 3 s" in fails(_run("emulated", [], timed_out=True))
    assert "printed 'ERROR:'" in fails(_run("emulated", [*ticks, "ERROR: run failed (0x12)"]))
    assert "crashed: HardFault" in fails(
        _run("emulated", ["hello", "@@arduino-core@@ fault: HardFault: PC=0x1"], exit_code=3)
    )
    assert "sanitizer report" in fails(
        _run("host", ticks, exit_code=1, stderr="==1==ERROR: AddressSanitizer: heap-overflow")
    )
    with_expect = Expected(must_print=(), timeout_seconds=3, until_done=False, contains=("out[",))
    assert "no line contains 'out['" in fails(_run("emulated", ticks, timed_out=True), with_expect)
    assert judge_run(_run("emulated", [*ticks, "out[0]=1.5"]), with_expect, "run").passed


# -- the host's arena shortfall --------------------------------------------------------------

_HOST_SHORT = "ERROR: load_method failed (0x21): the 6144-byte arena is too small"


def _judged_pair(
    host_lines: list[str], board_lines: list[str], **host_kw: object
) -> tuple[StageResult, StageResult]:
    expected = Expected(must_print=(DONE_LINE,), must_not_print=("ERROR:",))
    board = _run("emulated", board_lines, done=DONE_LINE in board_lines)
    host = _run("host", host_lines, done=DONE_LINE in host_lines, **host_kw)
    emulated_stage = judge_run(board, expected, "run")
    judged = judge_run(host, expected, "sanitize")
    return emulated_stage, host_arena_limit(host, judged, board, emulated_stage)


def test_a_host_that_falls_short_of_arena_where_the_board_did_not_is_the_hosts_limit() -> None:
    board_lines = ["Arena: used 5470 of 6144 bytes", DONE_LINE]
    run, sanitize = _judged_pair([_HOST_SHORT, DONE_LINE], board_lines)
    assert run.status is Status.PASS
    assert sanitize.status is Status.SKIP and sanitize.passed
    assert sanitize.summary.startswith(f"{HOST_LIMIT}: the 64-bit host needs more arena")
    assert _HOST_SHORT in sanitize.summary
    assert "(it used 5,470 of 6,144 B there)" in sanitize.summary
    # ETModel's other wording, and a sketch that stops after the error (timeout), too.
    short = "ERROR: arena too small: 96 bytes for the inputs, 6100 of 6144 used"
    _, sanitize = _judged_pair([short], board_lines, timed_out=True)
    assert sanitize.status is Status.SKIP and short in sanitize.summary


@pytest.mark.parametrize(
    ("host_lines", "board_lines", "host_kw"),
    [
        # The board fell short too: the sketch's arena is too small.
        ([_HOST_SHORT, DONE_LINE], [_HOST_SHORT, DONE_LINE], {}),
        # A sanitizer report beside the shortfall is a finding.
        (
            [_HOST_SHORT, DONE_LINE],
            [DONE_LINE],
            {"exit_code": 1, "stderr": "==1==ERROR: AddressSanitizer: stack-buffer-overflow"},
        ),
        # Another error on the host is the sketch's.
        (["ERROR: run failed (0x12)", DONE_LINE], [DONE_LINE], {}),
    ],
)
def test_any_other_host_failure_stays_a_failure(
    host_lines: list[str], board_lines: list[str], host_kw: dict[str, object]
) -> None:
    _, sanitize = _judged_pair(host_lines, board_lines, **host_kw)
    assert sanitize.status is Status.FAIL
    assert HOST_LIMIT not in sanitize.summary


# -- the overlay and the serial output ----------------------------------------------------------


def test_the_overlay_links_the_library_and_holds_only_the_sketches(tmp_path: Path) -> None:
    lib = tmp_path / "Lib"
    (lib / "src").mkdir(parents=True)
    (lib / "src" / "a.h").write_text("int a;\n")
    (lib / "library.properties").write_text("name=ExecuTorch\n")
    (lib / "examples" / "Theirs").mkdir(parents=True)
    mine = _sketch(tmp_path / "Mine")
    run = _sketch(tmp_path / "elsewhere" / "Run")
    (run / "expected.yaml").write_text('must_print: ["=== DONE ==="]\n')
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    assert sketch_overlay(lib, [mine, run], overlay) == ["Mine", "Run"]
    assert (overlay / "src").resolve() == (lib / "src").resolve()
    assert sorted(p.name for p in (overlay / "examples").iterdir()) == ["Mine", "Run"]
    assert (overlay / "examples/Run/expected.yaml").resolve() == run / "expected.yaml"
    assert sorted(p.name for p in mine.iterdir()) == ["Mine.ino"]  # nothing written there


def test_serial_output_shows_each_run_and_how_it_ended() -> None:
    from generator.check.report import ExampleReport

    example = ExampleReport("Mine")
    example.runs = [
        _run("emulated", ["hello", "tick"], timed_out=True),
        _run("host", [f"line {i}" for i in range(250)], done=True),
    ]
    text = serial_output(example).splitlines()
    assert text[0] == (
        "--- Serial output of Mine: emulated Cortex-M33 (QEMU mps2-an505), static link "
        "(2 lines, 3.0 s, ended by: timed out) ---"
    )
    assert text[1:3] == ["hello", "tick"]
    assert text[3].startswith("--- Serial output of Mine: host build") and "=== DONE ===" in text[3]
    assert text[4] == "[50 earlier lines not shown]"
    assert text[5] == "line 50" and text[-1] == "line 249"


# -- the command line -------------------------------------------------------------------------


def test_the_help_names_the_default_timeout(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["check", "--help"])
    assert exc.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"else {DEFAULT_SKETCH_TIMEOUT_SECONDS:g} s" in help_text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--sketch", "{mine}", "--example", "Hello"], "goes with neither --example"),
        (["--sketch", "{mine}", "--update-docs"], "goes with neither --example"),
        (["--expect", "hello"], "use them with --sketch PATH"),
        (["--timeout", "5"], "use them with --sketch PATH"),
        (["--sketch", "{mine}", "--expect", "x", "--no-run"], "--no-run runs nothing"),
        (["--sketch", "{tmp}/Nope"], "no such file or folder"),
        (["--sketch", "{mine},{tmp}/Nope"], "no such file or folder"),
        (["--sketch", "{bad}"], "is not valid YAML"),
    ],
)
def test_bad_sketch_options_exit_2_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    lib = write_library(tmp_path / "Tiny", {"Hello": (HELLO_SKETCH, HELLO_EXPECTED)})
    mine = _sketch(tmp_path / "Mine")
    bad = _sketch(tmp_path / "Bad")
    (bad / "expected.yaml").write_text("must_print: [\n")
    values = {"mine": str(mine), "tmp": str(tmp_path), "bad": str(bad)}
    out_json, keep = tmp_path / "report.json", tmp_path / "kept"
    argv = [a.format(**values) for a in argv]
    with pytest.raises(SystemExit) as exc:
        main(["check", str(lib), *argv, "--json", str(out_json), "--keep", str(keep)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not out_json.exists() and not keep.exists()


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_a_timeout_that_is_no_positive_number_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["check", str(tmp_path), "--sketch", str(tmp_path), "--timeout", value])
    assert exc.value.code == 2
    assert "--timeout" in capsys.readouterr().err


@needs_tools
def test_a_sketch_outside_the_library_is_checked_and_its_serial_output_printed(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lib = write_library(tmp_path / "Tiny", {"Hello": (HELLO_SKETCH, HELLO_EXPECTED)})
    mine = _sketch(tmp_path / "work" / "Mine", HOST_SHORT_SKETCH)
    (mine / "more.cpp").write_text("int more() { return 7; }\n")
    out_json = tmp_path / "report.json"
    common = ["--compiler", "gcc-arm", "--cache-dir", str(cache_dir), "--json", str(out_json)]

    assert main(["check", str(lib), "--sketch", str(mine / "Mine.ino"), *common]) == 0
    printed = capsys.readouterr().out
    assert "--- Serial output of Mine: emulated Cortex-M33 (QEMU mps2-an505), static link" in (
        printed
    )
    assert "twice(4) = 8\nArena: used 5470 of 6144 bytes\n=== DONE ===\n" in printed
    assert f"\n{_HOST_SHORT}\n" in printed  # the host's serial output
    data = json.loads(out_json.read_text())
    assert data["passed"] is True and data["library"] == str(lib.resolve())
    (entry,) = data["examples"]
    assert (entry["example"], entry["sketch"]) == ("Mine", str(mine.resolve()))
    status = {s["stage"]: s["status"] for s in entry["stages"]}
    assert status == {
        "compile": "pass",
        "sizes": "pass",
        "dynamic": "pass",
        "run": "pass",
        "dynamic-run": "pass",
        "sanitize": "skip",  # the host's limitation, not the sketch's error
        "arena": "pass",  # measured though no expected.yaml asks for it
    }
    assert {"flash", "ram", "dynamic_flash", "dynamic_ram"} <= set(entry["sizes"])
    assert (entry["sizes"]["arena_used"], entry["sizes"]["arena_size"]) == (5470, 6144)
    assert [r["kind"] for r in entry["runs"]] == ["emulated", "dynamic", "host"]
    sanitize = next(s for s in entry["stages"] if s["stage"] == "sanitize")
    assert sanitize["summary"].startswith(HOST_LIMIT)

    # --expect: a text no line contains fails the runs (exit 1); one that is there passes.
    argv = ["check", str(lib), "--sketch", str(mine), *common]
    assert main([*argv, "--expect", "twice(4) = 9", "--timeout", "5"]) == 1
    entry = json.loads(out_json.read_text())["examples"][0]
    run = next(s for s in entry["stages"] if s["stage"] == "run")
    assert run["status"] == "fail" and "no line contains 'twice(4) = 9'" in run["summary"]
    assert main([*argv, "--expect", "twice(4) = 8,Arena: used"]) == 0

    # With an expected.yaml beside it, that file judges the run (its lines are exact).
    (mine / "expected.yaml").write_text('must_print: ["twice(4) = 8", "=== DONE ==="]\n')
    assert main(argv) == 0
    (mine / "expected.yaml").write_text('must_print: ["twice(4) = 9", "=== DONE ==="]\n')
    assert main(argv) == 1


@needs_tools
def test_a_sketch_without_expected_yaml_runs_until_the_timeout(
    tmp_path: Path, cache_dir: Path
) -> None:
    lib = write_library(tmp_path / "Tiny", {"Hello": (HELLO_SKETCH, HELLO_EXPECTED)})
    ticks = _sketch(
        tmp_path / "Ticks",
        'void setup() { Serial.begin(115200); }\nvoid loop() { Serial.println("tick"); '
        "delay(500); }\n",
    )
    out_json = tmp_path / "report.json"
    argv = ["check", str(lib), "--sketch", str(ticks), "--timeout", "2", "--json", str(out_json)]
    assert main([*argv, "--compiler", "gcc-arm", "--cache-dir", str(cache_dir)]) == 0
    entry = json.loads(out_json.read_text())["examples"][0]
    for run in entry["runs"]:
        assert run["timed_out"] is True and 2.0 <= run["seconds"] < 4.0
        assert 3 <= len(run["last_lines"]) <= 6 and set(run["last_lines"]) == {"tick"}
    silent = _sketch(tmp_path / "Silent")
    argv = ["check", str(lib), "--sketch", str(silent), "--timeout", "1", "--json", str(out_json)]
    assert main([*argv, "--compiler", "gcc-arm", "--cache-dir", str(cache_dir)]) == 1
    stages = json.loads(out_json.read_text())["examples"][0]["stages"]
    run = next(s for s in stages if s["stage"] == "run")
    assert "printed nothing within 1 s" in run["summary"]


@needs_tools
def test_the_host_limit_applies_to_examples_and_a_board_shortfall_still_fails(
    tmp_path: Path, cache_dir: Path
) -> None:
    from generator.check.run import run_check

    expected = 'must_print: ["=== DONE ==="]\nmust_not_print: ["ERROR:"]\n'
    lib = write_library(
        tmp_path / "Tiny",
        {"HostShort": (HOST_SHORT_SKETCH, expected), "BothShort": (BOTH_SHORT_SKETCH, expected)},
    )
    report = run_check(lib, compiler="gcc-arm", cache_dir=cache_dir)
    by_name = {e.name: e for e in report.examples}
    host_short, both_short = by_name["HostShort"], by_name["BothShort"]
    assert host_short.passed
    sanitize = host_short.stage("sanitize")
    assert sanitize is not None and sanitize.status is Status.SKIP
    assert sanitize.summary.startswith(HOST_LIMIT)
    assert not both_short.passed
    for stage in ("run", "sanitize"):
        result = both_short.stage(stage)
        assert result is not None and result.status is Status.FAIL
        assert "printed 'ERROR:'" in result.summary
    assert not report.passed


@pytest.mark.e2e
def test_e2e_a_users_sketch_on_the_real_library(
    real_main: BuildResult, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The AddModel example copied out of the real library as the user's own sketch."""
    source = real_main.out / "examples" / "AddModel"
    mine = tmp_path / "sketches" / "MyAdd"
    shutil.copytree(source, mine)
    (mine / "AddModel.ino").rename(mine / "MyAdd.ino")
    expected_yaml = (mine / "expected.yaml").read_text()
    (mine / "expected.yaml").unlink()
    out_json = tmp_path / "report.json"
    argv = ["check", str(real_main.out), "--sketch", str(mine), "--json", str(out_json)]
    line = "[1,2,3] + 1 = [2.00, 3.00, 4.00]"

    # Without expected.yaml, with --expect: ends at its timeout or DONE, passes.
    assert main([*argv, "--compiler", "gcc-arm", "--expect", line, "--timeout", "20"]) == 0
    printed = capsys.readouterr().out
    assert "--- Serial output of MyAdd: emulated Cortex-M33" in printed
    assert f"\n{line}\n" in printed
    entry = json.loads(out_json.read_text())["examples"][0]
    assert entry["sketch"] == str(mine.resolve()) and entry["passed"] is True
    statuses = {s["stage"]: s["status"] for s in entry["stages"]}
    assert statuses["run"] == statuses["sanitize"] == statuses["dynamic-run"] == "pass"
    assert 0 < entry["sizes"]["flash"] < 786_432 and entry["sizes"]["dynamic_flash"] > 0
    assert 0 < entry["sizes"]["arena_used"] <= entry["sizes"]["arena_size"]
    # A text it does not print fails the check.
    assert main([*argv, "--compiler", "gcc-arm", "--expect", "[9,9,9]", "--timeout", "20"]) == 1

    # With the example's expected.yaml beside it: judged as the example is.
    (mine / "expected.yaml").write_text(expected_yaml)
    assert main([*argv, "--compiler", "gcc-arm"]) == 0
    assert json.loads(out_json.read_text())["examples"][0]["passed"] is True


def test_compiler_messages_name_the_users_folder_not_the_overlay(tmp_path: Path) -> None:
    overlay, mine = tmp_path / "check-x", tmp_path / "work" / "Mine"
    text = (
        f"{overlay}/examples/Mine/input.h:2:13: error: expected primary-expression\n"
        "examples/Mine/Mine.ino:3:1: note: in expansion\n"
        "In file included from examples/Mine/Mine.ino:1:\n"
        "examples/MineToo/x.h:1: error: other sketch\n"
        "src/examples/Mine/y.h:1: a library file of that path\n"
    )
    assert real_folder_paths(text, overlay, "Mine", mine) == (
        f"{mine}/input.h:2:13: error: expected primary-expression\n"
        f"{mine}/Mine.ino:3:1: note: in expansion\n"
        f"In file included from {mine}/Mine.ino:1:\n"
        "examples/MineToo/x.h:1: error: other sketch\n"
        "src/examples/Mine/y.h:1: a library file of that path\n"
    )


@needs_tools
def test_a_compile_error_in_a_sketchs_header_names_its_real_file(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lib = write_library(tmp_path / "Tiny", {"Hello": (HELLO_SKETCH, HELLO_EXPECTED)})
    mine = _sketch(
        tmp_path / "work" / "Mine",
        '#include "input.h"\nvoid setup() { Serial.println(value); }\nvoid loop() {}\n',
    )
    (mine / "input.h").write_text("// the model's input\nconst int value = ;\n")
    out_json = tmp_path / "report.json"
    argv = ["check", str(lib), "--sketch", str(mine), "--json", str(out_json)]
    assert main([*argv, "--compiler", "gcc-arm", "--cache-dir", str(cache_dir)]) == 1
    printed = capsys.readouterr().out
    compile_stage = json.loads(out_json.read_text())["examples"][0]["stages"][0]
    assert compile_stage["stage"] == "compile" and compile_stage["status"] == "fail"
    details = compile_stage["details"]
    assert f"{mine.resolve()}/input.h:2:" in details, details
    assert "examples/Mine/" not in details and "examples/Mine/" not in printed
