"""`sync --board`: sync checks the boards given, as `check --board` takes them (issue 19).

The pull request's boards table, sizes and emulated runs hold every board, the committed
report every board's entries; the link-modes section and the examples' header comments only
the UNO Q's loader verdicts, so `unoq` must be among the boards (refused before building
otherwise). The check is faked with real `CheckReport`s of two boards (nothing compiled); the
library remote is a real bare repo and GitHub the OpenAPI-validated fake (conftest.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from facts_fixture import pull_facts
from github_fake import FakeGitHub
from sync_fixtures import (
    SHA_OLD,
    TOKEN,
    Runner,
    branch_of,
    branches,
    report_in,
    show,
    with_fakes,
)

from generator.boards.budgets import check_boards
from generator.boards.cores import PINNED_CORE
from generator.boards.linkmode_docs import SKETCH_BEGIN, SKETCH_END
from generator.check.report import CheckReport, ExampleReport, board_part
from generator.check.run_sketch import RunOutput
from generator.check.sizes import CoreVerdict, DynamicSizes, Sizes
from generator.check.stages import StageResult, Status
from generator.cli.main import main
from generator.sync import defaults
from generator.sync import run as command
from generator.sync.body import MAX_BODY, fitting_body, too_long_note
from generator.sync.defaults import BoardsReport, sync_board_keys
from generator.sync.run import SyncOptions
from generator.util.errors import FatalError

#: What each board's loader does with AddModel: the UNO Q's loads it, the Giga's refuses it.
VERDICTS = {
    "unoq": CoreVerdict(PINNED_CORE, True, True, 262_144, 12_000),
    "giga": CoreVerdict(PINNED_CORE, True, False, 262_144, 300_000, errno=12),
}
#: Static flash of AddModel per board (bytes), so each board's row is told apart.
FLASH = {"unoq": 122_756, "giga": 122_052}


def _report(key: str, passed: bool = True) -> CheckReport:
    """One board's check report of AddModel (the fake build's one example): compiled, sized,
    linked Dynamic with `VERDICTS[key]`, run emulated (or, `passed` False, a failed run)."""
    board = check_boards()[key]
    example = ExampleReport("AddModel")
    run = (Status.PASS, "emulated: expected output") if passed else (Status.FAIL, "no output")
    for stage, (status, summary) in {
        "compile": (Status.PASS, "compiled"), "sizes": (Status.PASS, "fits"),
        "dynamic": (Status.PASS, "linked"), "run": run,
    }.items():  # fmt: skip
        example.stages.append(StageResult(stage, status, summary))
    example.sizes = Sizes(FLASH[key], 2_552, board.flash_bytes, board.ram_bytes)
    verdict = VERDICTS[key]
    example.dynamic = DynamicSizes(240_000, 70_000, board.flash_bytes, (verdict,))
    example.runs.append(
        RunOutput("emulated", [f"=== AddModel on {key} ===", "[2, 3, 4]", "=== DONE ==="], True)
    )
    return CheckReport(Path("/lib"), "gcc-arm", board.name, examples=[example],
                       emulator=board.emulator)  # fmt: skip


class TwoBoards:
    """Stands in for sync's check of the UNO Q and the Giga; records the options."""

    def __init__(self, giga_passes: bool = True) -> None:
        self.giga_passes = giga_passes
        self.options: list[SyncOptions] = []

    def __call__(self, library: Path, options: SyncOptions) -> BoardsReport:
        self.options.append(options)
        return BoardsReport(
            [("unoq", _report("unoq")), ("giga", _report("giga", self.giga_passes))]
        )


def _sketch_with_markers() -> str:
    return (
        f"{SKETCH_BEGIN}\n// not checked yet\n{SKETCH_END}\nvoid setup() {{}}\nvoid loop() {{}}\n"
    )


# --- the option ----------------------------------------------------------------------------


def _parsed_boards(monkeypatch: pytest.MonkeyPatch, *board: str) -> list[tuple[str, ...]]:
    """The `SyncOptions.boards` `python -m generator sync ... *board` hands to run_sync."""
    seen: list[tuple[str, ...]] = []
    monkeypatch.setattr(command, "run_sync", lambda options, *a, **k: seen.append(options.boards))
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    assert main(["sync", "--repo", "acme/lib", "--dry-run", *board]) == 0
    return seen


@pytest.mark.parametrize(
    ("argv", "boards"),
    [
        ([], ("unoq",)),
        (["--board", "unoq,giga"], ("unoq", "giga")),
        (["--board", "unoq", "--board", "giga,unoq"], ("unoq", "giga")),
        (["--board", "all"], ("all",)),
    ],
)
def test_sync_takes_board_as_check_does(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], boards: tuple[str, ...]
) -> None:
    assert _parsed_boards(monkeypatch, *argv) == [boards]


def test_all_is_every_board_check_takes_and_unoq_must_be_among_them() -> None:
    assert sync_board_keys(["all"]) == list(check_boards())
    assert sync_board_keys(["giga", "unoq"]) == ["giga", "unoq"]
    with pytest.raises(
        FatalError, match=r"add unoq to --board \(e\.g\. --board unoq,giga, or all\)"
    ):
        sync_board_keys(["giga"])
    with pytest.raises(FatalError, match="no board 'nope'"):
        sync_board_keys(["unoq", "nope"])


def test_an_unknown_board_exits_2_like_check(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(command, "run_sync", lambda *a, **k: pytest.fail("sync ran"))
    with pytest.raises(SystemExit) as exit_info:
        main(["sync", "--repo", "acme/lib", "--board", "unoq,nope"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--board: invalid choice: 'nope' (choose from " in err and "unoq, or all)" in err


def test_boards_without_unoq_are_refused_before_building(
    sync: Runner,
    fake: FakeGitHub,
    remote: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    refs = branches(remote)

    monkeypatch.setattr(command, "run_sync", with_fakes(sync))
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    argv = ["sync", "--repo", "acme/ExecuTorch", "--remote", str(remote), "--api-url", fake.url]
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--executorch-ref", "v1.5.1", "--board", "giga,unor4wifi"])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "the UNO Q's check: add unoq to --board (e.g. --board unoq,giga, or all)" in err
    assert sync.build.calls == [] and sync.check.checked == []
    assert fake.requests == [] and branches(remote) == refs


# --- the pull request and the committed report ----------------------------------------------


def _section(body: str, heading: str) -> str:
    """The part of `body` from `heading` to the next `### ` heading."""
    start = body.index(heading)
    end = body.find("\n### ", start + len(heading))
    return body[start : end if end >= 0 else len(body)]


def test_two_boards_give_both_boards_rows_and_the_uno_qs_link_modes(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    check = TwoBoards()
    sync.check = cast(Any, check)
    sync.build.extra = {"examples/AddModel/AddModel.ino": _sketch_with_markers()}
    result = sync("v1.5.1", "0.2.0", boards=("unoq", "giga"))

    assert result.status == "opened"
    assert [o.boards for o in check.options] == [("unoq", "giga")]
    body = fake.pulls[1].body
    assert body is not None and body == result.body
    boards = _section(body, "### Boards: the README section to carry over")
    assert (
        "Checked: Arduino UNO Q (`unoq`, Cortex-M33 on QEMU mps2-an505), Arduino Giga R1 "
        "(`giga`, Cortex-M7 on QEMU mps2-an500)."
    ) in boards
    assert (
        "| Arduino UNO Q (`unoq`) | Static | ✅ AddModel | 122,756 B of 786,432 (15%) |" in boards
    )
    assert "| Arduino Giga R1 (`giga`) | Static | ✅ AddModel | 122,052 B of 1,179,648 (10%) |" in (
        boards
    )
    # The loader verdicts: the UNO Q's row only (the Giga's refuses AddModel: rc -12).
    link_modes = _section(body, "### Link modes: the README section to carry over")
    assert "| AddModel | ✅ 12,000 B of 256 KiB |" in link_modes
    assert link_modes.count("| AddModel |") == 2  # the table, and its Markdown source
    assert "rc -12" not in link_modes and "300,000" not in link_modes
    # Sizes: a Board column, a row per board; runs named with their board.
    check_part = _section(body, "### Check: passed")
    assert "| Board | Example | Size | This PR | `main` | Delta |" in check_part
    assert "| Arduino UNO Q | AddModel | flash (static) | 122,756 B | n/a | n/a |" in check_part
    assert "| Arduino Giga R1 | AddModel | flash (static) | 122,052 B | n/a | n/a |" in check_part
    assert "**`AddModel (Arduino UNO Q)`**" in check_part and "=== AddModel on unoq ===" in body
    assert "**`AddModel (Arduino Giga R1)`**" in check_part and "=== AddModel on giga ===" in body
    # The full check report: both boards'.
    assert body.count("## Library check: ✅ passed") == 2

    branch = branch_of(SHA_OLD)
    committed = report_in(remote, branch)
    assert [b["key"] for b in committed["boards"]] == ["unoq", "giga"]
    assert [(e["board"], e["example"]) for e in committed["examples"]] == [
        ("unoq", "AddModel"),
        ("giga", "AddModel"),
    ]
    assert committed["board"] == "Arduino UNO Q, Arduino Giga R1" and committed["library"] == "."
    # The sketch's header comment: the UNO Q's loader.
    sketch = show(remote, branch, "examples/AddModel/AddModel.ino")
    assert f"//   {PINNED_CORE} (pinned): loads, 12,000 B of its 256 KiB heap" in sketch
    assert "refused (rc" not in sketch and "not checked yet" not in sketch


def test_a_failing_board_opens_no_pull_request(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    refs = branches(remote)
    sync.check = cast(Any, TwoBoards(giga_passes=False))
    with pytest.raises(FatalError, match="check failed for ExecuTorch v1.5.1"):
        sync("v1.5.1", "0.2.0", boards=("unoq", "giga"))
    assert fake.pulls == {} and branches(remote) == refs


def test_the_default_check_runs_each_board_with_one_host_run(
    sync: Runner, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sync's own check (not faked): `run_check` per board with one shared host-run dict,
    `all` in the table's order; the default runs it once, as before `--board`."""
    calls: list[tuple[str | None, int | None]] = []

    def fake_run_check(library: Path, **kw: Any) -> CheckReport:
        board = kw.get("board")
        calls.append((board.key if board else None, id(kw["host_runs"]) if board else None))
        return _report(board.key if board and board.key in FLASH else "unoq")

    monkeypatch.setattr(defaults, "run_check", fake_run_check)
    sync.check = cast(Any, defaults.default_check)
    sync("v1.5.1", "0.2.0", dry_run=True)
    assert calls == [(None, None)]
    calls.clear()
    result = sync("v1.5.1", "0.2.0", dry_run=True, boards=("all",))
    assert [key for key, _ in calls] == list(check_boards())
    assert len({host for _, host in calls}) == 1
    body = result.body or ""
    assert "| Arduino Nano RP2040 Connect (`nano_connect`) | Static | ✅ AddModel |" in body
    assert "| Arduino Ventuno Q (`ventunoq`) | Static | ✅ AddModel |" in body
    assert "| not checked |" not in body


# --- the body within GitHub's limit --------------------------------------------------------


def test_a_body_too_long_for_github_leaves_out_the_full_report_then_other_boards_runs() -> None:
    runs = [
        (f"AddModel ({name})", ["x" * 199] * 40) for name in ("Arduino UNO Q", "Arduino Giga R1")
    ]
    body, left_out = fitting_body(pull_facts(check_markdown="short", runs=runs), "Arduino UNO Q")
    assert left_out == [] and "short" in body
    long = "y" * 70_000
    body, left_out = fitting_body(pull_facts(check_markdown=long, runs=runs), "Arduino UNO Q")
    assert left_out == ["the full check report"]
    assert too_long_note(long) in body and "70,000 characters" in body and long not in body
    assert "**`AddModel (Arduino Giga R1)`**" in body
    many = runs * 4  # 8 runs of 40 lines of 200 characters: over 64 KiB on their own
    body, left_out = fitting_body(pull_facts(check_markdown=long, runs=many), "Arduino UNO Q")
    assert left_out == [
        "the full check report",
        "the emulated run output of every board but the Arduino UNO Q",
    ]
    assert (
        "**`AddModel (Arduino Giga R1)`**" not in body and "**`AddModel (Arduino UNO Q)`**" in body
    )
    assert len(body.encode("utf-8")) <= MAX_BODY
    uno_q_only = [runs[0]] * 10
    with pytest.raises(FatalError, match=r"body would be [\d,]+ bytes even without the full"):
        fitting_body(pull_facts(check_markdown=long, runs=uno_q_only), "Arduino UNO Q")


def test_board_part_keeps_one_boards_entries() -> None:
    data = TwoBoards()(Path("/lib"), cast(SyncOptions, None)).to_dict()
    part = board_part(data, "giga")
    assert [e["board"] for e in part["examples"]] == ["giga"]
    assert [b["key"] for b in part["boards"]] == ["giga"]
    assert [e["board"] for e in data["examples"]] == ["unoq", "giga"]  # not changed
    one = _report("unoq").to_dict()
    assert board_part(one, "unoq") == one  # one board's report has no "boards": all of it
