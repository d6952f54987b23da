"""What users read about the boards (`generator/boards/board_docs.py`): one table made from a
multi-board check report, every other board "not checked", written into the README between
its markers by `check --update-docs` and carried into the sync pull request's body.

The reports are synthetic (the JSON shape `check` writes, `board_data`); nothing is compiled.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from check_fixtures import HELLO_EXPECTED, HELLO_SKETCH, write_library
from facts_fixture import pull_facts
from github_fake import FakeGitHub
from sync_fixtures import FakeReport, Runner

from generator.boards import board_docs as boardsdoc
from generator.boards import linkmode_docs as linkmodes
from generator.boards.board_docs import BEGIN, END, boards_markdown, checked_boards
from generator.boards.budgets import ZEPHYR_BOARDS, check_boards
from generator.check import run as check_command
from generator.check.report import CheckReport, ExampleReport, board_data
from generator.check.run_sketch import RunOutput
from generator.check.sizes import CoreVerdict, DynamicSizes, Sizes
from generator.check.stages import StageResult, Status
from generator.cli.main import main
from generator.sync.body import render_body
from generator.util.errors import FatalError

PINNED = "main@177dcef6"


def _stages(**status: tuple[str, str]) -> list[dict[str, str]]:
    return [
        {"stage": name.replace("_", "-"), "status": s, "summary": summary, "details": ""}
        for name, (s, summary) in status.items()
    ]


def _verdict(loaded: bool, heap: int, peak: int | None, errno: int = 0) -> dict[str, Any]:
    return {"core": PINNED, "pinned": True, "loaded": loaded, "heap_bytes": heap,
            "peak_bytes": peak, "errno": errno, "log": [], "short_branches": 0}  # fmt: skip


PASS_RUN = ("pass", "emulated Cortex-M33 (QEMU mps2-an505): expected output in 3.3 s")

#: `board_data`'s shape: the UNO Q (both examples run, Dynamic too), the UNO R4 WiFi (one
#: example over its flash, as the real run of /tmp/b19/r4.json was), the Giga (a run that
#: failed, a loader that refuses).
REPORT: dict[str, Any] = {
    "board": "Arduino UNO Q, Arduino UNO R4 WiFi, Arduino Giga R1",
    "boards": [
        {"key": "unoq", "name": "Arduino UNO Q", "fqbn": "arduino:zephyr:unoq:link_mode=static",
         "emulator": "mps2-an505", "cpu": "cortex-m33"},
        {"key": "unor4wifi", "name": "Arduino UNO R4 WiFi",
         "fqbn": "arduino:zephyr:unor4wifi:link_mode=static", "emulator": "mps2-an386",
         "cpu": "cortex-m4"},
        {"key": "giga", "name": "Arduino Giga R1", "fqbn": "arduino:zephyr:giga:link_mode=static",
         "emulator": "mps2-an500", "cpu": "cortex-m7"},
    ],
    "examples": [
        {"example": "HelloExecuTorch", "board": "unoq",
         "stages": _stages(compile=("pass", "x"), sizes=("pass", "x"), dynamic=("pass", "x"),
                           run=PASS_RUN, dynamic_run=("pass", "x")),
         "sizes": {"flash": 20_180, "ram": 176, "dynamic_flash": 46_400, "dynamic_ram": 13_864},
         "budget": {"flash_max": 786_432, "ram_max": 262_144},
         "dynamic": {"flash_bytes": 46_400, "flash_max_bytes": 786_432, "ram_bytes": 13_864,
                     "verdicts": [_verdict(True, 262_144, 13_864)]}},
        {"example": "AddModel", "board": "unoq",
         "stages": _stages(compile=("pass", "x"), sizes=("pass", "x"), dynamic=("pass", "x"),
                           run=PASS_RUN, dynamic_run=("pass", "x")),
         "sizes": {"flash": 160_000, "ram": 9_000},
         "budget": {"flash_max": 786_432, "ram_max": 262_144},
         "dynamic": {"flash_bytes": 200_000, "flash_max_bytes": 786_432, "ram_bytes": 140_032,
                     "verdicts": [_verdict(True, 262_144, 140_032)]}},
        {"example": "HelloExecuTorch", "board": "unor4wifi",
         "stages": _stages(
             compile=("pass", "x"), sizes=("pass", "x"), dynamic=("pass", "x"), run=PASS_RUN,
             dynamic_run=("skip", "not run for Arduino UNO R4 WiFi: the loader model's "
                                  "firmware is the UNO Q's")),
         "sizes": {"flash": 20_260, "ram": 176},
         "budget": {"flash_max": 122_880, "ram_max": 16_384},
         "dynamic": {"flash_bytes": 46_428, "flash_max_bytes": 122_880, "ram_bytes": 13_800,
                     "verdicts": [_verdict(True, 16_384, 13_800)]}},
        {"example": "AddModel", "board": "unor4wifi",
         "stages": _stages(
             compile=("fail", "gcc-arm: does not fit the board: FLASH overflowed by 37,264 bytes"),
             sizes=("fail", "does not fit Arduino UNO R4 WiFi: FLASH by 37,264 bytes"),
             dynamic=("skip", "no gcc-arm objects to link"),
             run=("fail", "no firmware to run: the gcc-arm build failed")),
         "sizes": {}, "budget": None, "dynamic": None},
        {"example": "HelloExecuTorch", "board": "giga",
         "stages": _stages(
             compile=("pass", "x"), sizes=("pass", "x"),
             dynamic=("fail", "upload file ...; core main@177dcef6: refused"),
             run=("fail", "emulated Cortex-M7 (QEMU mps2-an500): missing line: 'done'")),
         "sizes": {"flash": 21_000, "ram": 300},
         "budget": {"flash_max": 1_179_648, "ram_max": 262_144},
         "dynamic": {"flash_bytes": 47_000, "flash_max_bytes": 1_179_648, "ram_bytes": 0,
                     "verdicts": [_verdict(False, 262_144, 300_000, errno=12)]}},
    ],
}  # fmt: skip


def test_each_checked_board_has_its_rows_by_link_mode_with_sizes_against_its_budget() -> None:
    text = boards_markdown(REPORT)
    assert text.startswith("## Boards\n\nChecked: Arduino UNO Q (`unoq`, Cortex-M33 on QEMU "
                           "mps2-an505), Arduino UNO R4 WiFi (`unor4wifi`, Cortex-M4 on QEMU "
                           "mps2-an386), Arduino Giga R1 (`giga`, Cortex-M7 on QEMU "
                           "mps2-an500).")  # fmt: skip
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert rows[0] == "| board | link mode | example | flash | RAM |"
    assert rows[1:9] == [
        "| Arduino UNO Q (`unoq`) | Static | ✅ HelloExecuTorch | 20,180 B of 786,432 (2%) "
        "| 176 B of 262,144 (0%) |",
        "| | | ✅ AddModel | 160,000 B of 786,432 (20%) | 9,000 B of 262,144 (3%) |",
        "| | Dynamic | ✅ HelloExecuTorch | 46,400 B of 786,432 (5%) "
        "| heap 13,864 B of 262,144 (5%) |",
        "| | | ✅ AddModel | 200,000 B of 786,432 (25%) | heap 140,032 B of 262,144 (53%) |",
        "| Arduino UNO R4 WiFi (`unor4wifi`) | Static | ✅ HelloExecuTorch "
        "| 20,260 B of 122,880 (16%) | 176 B of 16,384 (1%) |",
        "| | | ❌ AddModel: flash over by 37,264 B | 37,264 B over 122,880 | - |",
        "| | Dynamic | ➖ HelloExecuTorch: the loader takes it, not run (the loader model's "
        "firmware is the UNO Q's) | 46,428 B of 122,880 (37%) | heap 13,800 B of 16,384 (84%) |",
        "| | | ➖ AddModel: not linked: the build failed | - | - |",
    ]
    assert rows[9:11] == [
        "| Arduino Giga R1 (`giga`) | Static | ❌ HelloExecuTorch: run failed: missing line: "
        "'done' | 21,000 B of 1,179,648 (1%) | 300 B of 262,144 (0%) |",
        "| | Dynamic | ❌ HelloExecuTorch: loader refused: rc -12, needs 300,000 B of 256 KiB "
        "(37,856 B over) | 47,000 B of 1,179,648 (3%) | heap 300,000 B of 262,144 (114%) |",
    ]
    assert checked_boards(REPORT) == ["unoq", "unor4wifi", "giga"]


def test_every_other_board_is_not_checked_never_supported() -> None:
    text = boards_markdown(REPORT)
    unchecked = [k for k in ZEPHYR_BOARDS if k not in ("unoq", "unor4wifi", "giga")]
    for key in unchecked:
        row = next(line for line in text.splitlines() if f"(`{key}`)" in line)
        assert row.startswith(f"| {ZEPHYR_BOARDS[key].name} (`{key}`) | | not checked")
        assert "✅" not in row
    assert len([line for line in text.splitlines() if "| not checked" in line]) == 12


def test_the_other_boards_sentence_is_only_there_while_a_board_is_unchecked() -> None:
    assert "On the other boards of the `arduino:zephyr` core nothing was checked" in (
        boards_markdown(REPORT)
    )
    every = {
        **REPORT,
        "boards": [
            {"key": b.key, "name": b.name, "fqbn": b.fqbn(), "emulator": b.emulator, "cpu": b.cpu}
            for b in ZEPHYR_BOARDS.values()
        ],
        "examples": [{**REPORT["examples"][0], "board": b.key} for b in ZEPHYR_BOARDS.values()],
    }
    text = boards_markdown(every)
    assert "nothing was checked" not in text and "| not checked" not in text
    assert "That is every board of the `arduino:zephyr` core's table." in text


def test_without_a_report_no_board_is_checked_and_the_section_says_how_to_fill_it() -> None:
    text = boards_markdown({})
    assert "Checked: none." in text and "✅" not in text and "|" not in text
    assert "`python -m generator check . --board all --update-docs`" in text
    assert all(f"(`{key}`)" in text for key in ZEPHYR_BOARDS)
    assert boardsdoc.unchecked_section() == f"{BEGIN}\n{text}{END}"


def test_a_one_board_report_without_boards_is_the_board_it_names() -> None:
    """Sync's report is one `CheckReport.to_dict()`: no "boards", no "board" per entry."""
    one = {"board": "Arduino UNO Q",
           "examples": [{k: v for k, v in e.items() if k != "board"}
                        for e in REPORT["examples"] if e["board"] == "unoq"]}  # fmt: skip
    text = boards_markdown(one)
    assert checked_boards(one) == ["unoq"]
    assert "| Arduino UNO Q (`unoq`) | Static | ✅ HelloExecuTorch |" in text
    assert "| Arduino UNO R4 WiFi (`unor4wifi`) | | not checked | | |" in text


def test_a_check_without_runs_or_emulator_shows_nothing_as_working() -> None:
    entry = {"example": "Hello", "board": "unoq",
             "stages": _stages(compile=("pass", "x"), sizes=("pass", "x"), dynamic=("pass", "x")),
             "sizes": {"flash": 1_000, "ram": 10},
             "budget": {"flash_max": 786_432, "ram_max": 262_144},
             "dynamic": {"flash_bytes": 2_000, "flash_max_bytes": 786_432,
                         "verdicts": [_verdict(True, 262_144, 1_500)]}}  # fmt: skip
    report = {**REPORT, "boards": REPORT["boards"][:1], "examples": [entry]}
    text = boards_markdown(report)
    assert "| Arduino UNO Q (`unoq`) | Static | ➖ Hello: fits, not run (`--no-run`) |" in text
    assert "| | Dynamic | ➖ Hello: the loader takes it, not run (`--no-run`) |" in text
    skipped = {**entry, "stages": _stages(
        compile=("pass", "x"), sizes=("pass", "x"), dynamic=("pass", "x"),
        run=("skip", "not run: Arduino Nano RP2040 Connect (Cortex-M0+) has no emulator (QEMU "
                     "7.2 has none for the Cortex-M0+): compiled and sized only"))}  # fmt: skip
    text = boards_markdown({**report, "examples": [skipped]})
    assert "➖ Hello: fits, no emulator: compiled and sized only" in text
    assert "✅" not in text.split("\n\n✅:")[0]


def test_a_sketch_that_refuses_the_board_by_its_own_error_does_not_fit() -> None:
    later = "not built: the sketch does not fit the Arduino UNO R4 WiFi (see compile)"
    entry: dict[str, Any] = {
        "example": "KeywordSpotting", "board": "unoq",
        "stages": _stages(
            compile=("pass", "does not fit: refused at compile time by its own #error "
                             "(as intended)"),
            sizes=("skip", later), dynamic=("skip", later), run=("skip", later)),
        "sizes": {}, "budget": None, "dynamic": None,
    }  # fmt: skip
    text = boards_markdown({**REPORT, "boards": REPORT["boards"][:1], "examples": [entry]})
    refused = "⛔ KeywordSpotting: does not fit (its own #error refuses the board at compile time)"
    assert f"| Static | {refused} | - | - |" in text
    assert f"| Dynamic | {refused} | - | - |" in text


# --- the README -------------------------------------------------------------------------------

README = (
    f"# Tiny\n\nIntro.\n\n{boardsdoc.unchecked_section()}\n\n## Examples\n\n"
    f"{linkmodes.BEGIN}\n{linkmodes.link_modes_markdown({})}{linkmodes.END}\n\n## After\n"
)


def test_the_readme_section_is_replaced_between_its_markers(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(README, encoding="utf-8")
    boardsdoc.update_readme(readme, REPORT)
    text = readme.read_text(encoding="utf-8")
    assert text.startswith(f"# Tiny\n\nIntro.\n\n{BEGIN}\n## Boards\n\nChecked: Arduino UNO Q")
    assert f"{END}\n\n## Examples\n\n{linkmodes.BEGIN}\n" in text and "Checked: none" not in text
    boardsdoc.update_readme(readme, REPORT)  # twice gives the same file
    assert readme.read_text(encoding="utf-8") == text
    readme.write_text(f"{END}\n{BEGIN}\n", encoding="utf-8")  # wrong order
    with pytest.raises(FatalError, match="has no boards section"):
        boardsdoc.update_readme(readme, REPORT)
    # Nested in the link-modes section: refused before anything is written (it was an
    # AssertionError after the whole check had run).
    nested = f"{linkmodes.BEGIN}\n{BEGIN}\n{END}\n{linkmodes.END}\n"
    readme.write_text(nested, encoding="utf-8")
    with pytest.raises(FatalError, match="boards section and link-modes section overlap"):
        boardsdoc.check_readme(readme)
    assert readme.read_text(encoding="utf-8") == nested
    readme.write_text(f"{BEGIN}\n{END}\n{BEGIN}\n{END}\n", encoding="utf-8")
    with pytest.raises(FatalError, match=r"has the line .* 2 times; keep one"):
        boardsdoc.check_readme(readme)


def _report(key: str, verdict: CoreVerdict) -> CheckReport:
    """A check report of one example on the board `key` that fits and ran, Static and
    Dynamic (the Dynamic run on the UNO Q only, as `check` runs it)."""
    board = check_boards()[key]
    example = ExampleReport("Hello")
    dynamic_run = (Status.PASS, "x") if key == "unoq" else (Status.SKIP, "not run for X: y")
    for stage, (status, summary) in {
        "compile": (Status.PASS, "x"), "sizes": (Status.PASS, "x"), "dynamic": (Status.PASS, "x"),
        "run": (Status.PASS, "emulated: expected output"), "dynamic-run": dynamic_run,
    }.items():  # fmt: skip
        example.stages.append(StageResult(stage, status, summary))
    example.sizes = Sizes(4_000, 100, board.flash_bytes, board.ram_bytes)
    example.dynamic = DynamicSizes(9_000, verdict.peak_bytes or 0, board.flash_bytes, (verdict,))
    report = CheckReport(Path("/lib"), "gcc-arm", board.name, examples=[example],
                         emulator=board.emulator)  # fmt: skip
    return report


def _library(tmp_path: Path) -> Path:
    lib = write_library(tmp_path / "Tiny", {"Hello": (HELLO_SKETCH, HELLO_EXPECTED)})
    sketch = lib / "examples/Hello/Hello.ino"
    sketch.write_text(
        f"{linkmodes.SKETCH_BEGIN}\n// old\n{linkmodes.SKETCH_END}\n" + sketch.read_text()
    )
    (lib / "README.md").write_text(README, encoding="utf-8")
    return lib


def test_update_docs_writes_every_boards_rows_and_the_uno_qs_link_modes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lib = _library(tmp_path)
    verdicts = {
        "unoq": CoreVerdict(PINNED, True, True, 262_144, 12_000),
        "unor4wifi": CoreVerdict(PINNED, True, False, 16_384, 20_000, errno=12),
    }

    def fake_run_check(library: Path, **kw: Any) -> CheckReport:
        return _report(kw["board"].key, verdicts[kw["board"].key])

    monkeypatch.setattr(check_command, "run_check", fake_run_check)
    argv = ["check", str(lib), "--board", "unor4wifi,unoq", "--update-docs", "--no-run"]
    assert main(argv) == 0, capsys.readouterr()
    text = (lib / "README.md").read_text(encoding="utf-8")
    boards = text[text.index(BEGIN) : text.index(END)]
    r4 = "| Arduino UNO R4 WiFi (`unor4wifi`) | Static | ✅ Hello | 4,000 B of 122,880 (3%) |"
    assert r4 in boards
    assert "| Arduino UNO Q (`unoq`) | Static | ✅ Hello | 4,000 B of 786,432 (0%) |" in boards
    assert "| Arduino Giga R1 (`giga`) | | not checked | | |" in boards
    # The link-modes section and the sketch's header: the UNO Q's verdicts only.
    modes = text[text.index(linkmodes.BEGIN) : text.index(linkmodes.END)]
    assert "| Hello | ✅ 12,000 B of 256 KiB |" in modes and "20,000" not in modes
    sketch = (lib / "examples/Hello/Hello.ino").read_text()
    assert "//   main@177dcef6 (pinned): loads, 12,000 B of its 256 KiB heap\n" in sketch


def test_update_docs_needs_the_uno_q_and_both_sections_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lib = _library(tmp_path)

    def must_not_run(library: Path, **kw: Any) -> CheckReport:
        raise AssertionError("the check ran")

    monkeypatch.setattr(check_command, "run_check", must_not_run)
    before = (lib / "README.md").read_text(encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["check", str(lib), "--board", "giga", "--update-docs", "--no-run"])
    err = capsys.readouterr().err
    assert "add unoq to --board (e.g. --board unoq,giga, or all)" in err
    assert "Traceback" not in err
    (lib / "README.md").write_text(before.replace(BEGIN, ""), encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["check", str(lib), "--update-docs", "--no-run"])
    assert "has no boards section" in capsys.readouterr().err


def test_board_data_of_real_reports_gives_the_table() -> None:
    """`board_data` (what `check` writes) and the table agree on the shape."""
    verdict = CoreVerdict(PINNED, True, True, 262_144, 12_000)
    data = board_data([("giga", _report("giga", verdict))], check_boards())
    text = boards_markdown(data)
    assert "Checked: Arduino Giga R1 (`giga`, Cortex-M7 on QEMU mps2-an500)." in text
    assert "| Arduino Giga R1 (`giga`) | Static | ✅ Hello | 4,000 B of 1,179,648 (0%) |" in text
    assert "| Arduino UNO Q (`unoq`) | | not checked | | |" in text


# --- the sync pull request ------------------------------------------------------------------


def test_the_pr_body_carries_the_section_for_the_readme() -> None:
    section = boards_markdown(REPORT)
    body = render_body(pull_facts(boards=section))
    assert "### Boards: the README section to carry over" in body
    assert "replace its boards section with this one" in body
    assert "| | | ❌ AddModel: flash over by 37,264 B | 37,264 B over 122,880 | - |" in body
    assert "```markdown\n" + section + "```" in body  # its source, to paste


@dataclass
class _UnoQReport(FakeReport):
    """The fake check's report, named for the board sync checks (the UNO Q)."""

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "board": "Arduino UNO Q"}


def test_sync_puts_the_uno_qs_rows_in_the_pr_body(sync: Runner, fake: FakeGitHub) -> None:
    sync.check = cast(Any, lambda library, options: _UnoQReport(True, 100_000, 20_000))
    sync("v1.5.1", "0.2.0")
    body = fake.pulls[1].body
    assert body is not None and "### Boards: the README section to carry over" in body
    assert "Checked: Arduino UNO Q (`unoq`, Cortex-M33 on QEMU mps2-an505)." in body
    assert "| Arduino UNO R4 WiFi (`unor4wifi`) | | not checked | | |" in body


def test_the_check_report_names_the_boards_emulated_cpu() -> None:
    example = ExampleReport("M", runs=[RunOutput("emulated", ["Inference: 74 us"], done=True)])
    giga = check_boards()["giga"]
    report = CheckReport(Path("/lib"), "gcc-arm", giga.name, examples=[example],
                         emulator=giga.emulator)  # fmt: skip
    assert "### Inference (instructions on the emulated Cortex-M7)" in report.to_markdown()
    report.emulator = None
    assert "### Inference (instructions on the emulator)" in report.to_markdown()
