"""An example too big for a board is "does not fit" (`Status.MISFIT`), no failure, never a
pass; on the UNO Q, the board every example is promised on, it stays a failure. The figures
are those of the real all-board run of 2026-12-02 (its JSON: AddModel on the Renesas RA8D1
EK, 57,344 B of flash and a 32 KiB LLEXT heap; on the NXP FRDM RW612, whose flash holds it
but not its heap); nothing is compiled: `_check_example`'s compiles and runs are stubbed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

import generator.check.run as check_command
from generator.boards.board_docs import boards_markdown
from generator.boards.budgets import UNO_Q, Board, check_boards
from generator.check.backends import GCC_ARM, Build
from generator.check.compile import CompileResult, overflows
from generator.check.compile import compile_example as real_compile
from generator.check.dynamic import judge_dynamic
from generator.check.expected import Expected
from generator.check.plan import BuildPlan
from generator.check.report import CheckReport, ExampleReport
from generator.check.run_sketch import RunOutput
from generator.check.sizes import CoreVerdict, DynamicSizes, Sizes, sizes_stage
from generator.check.stages import StageResult, Status

PINNED = "main@177dcef6"
RA8D1 = check_boards()["ek_ra8d1"]  # 57,344 B flash, 32 KiB RAM and LLEXT heap
RW612 = check_boards()["frdm_rw612"]  # 3,133,440 B flash, 32 KiB LLEXT heap

#: The pinned core's verdicts of AddModel's upload file in that run (its JSON's "dynamic").
ENOMEM_RA8D1 = CoreVerdict(PINNED, True, False, 32_768, 71_056, 12, (
    "llext: Failed allocating 65600 bytes 8-aligned for region 0",
    "llext: Failed to copy regions, ret -12"))  # fmt: skip
ENOMEM_RW612 = CoreVerdict(PINNED, True, False, 32_768, 71_880, 12, (
    "llext: Failed allocating 66304 bytes 8-aligned for region 0",
    "llext: Failed to copy regions, ret -12"))  # fmt: skip
#: A symbol the firmware does not export (llext.py's message for rc -61, ENOENT... ENODATA).
UNEXPORTED = CoreVerdict(PINNED, True, False, 32_768, None, 61, (
    "llext: Undefined symbol with no entry in symbol table sqrtf, offset 1234, link section 4",
    "llext: Failed to link, ret -61"))  # fmt: skip


def test_a_static_link_over_the_boards_flash_does_not_fit_it_and_fails_nothing() -> None:
    stage = sizes_stage(Sizes(122_228, 2_552, RA8D1.flash_bytes, RA8D1.ram_bytes), {}, RA8D1)
    assert stage.status is Status.MISFIT and stage.passed
    assert stage.summary == (
        "does not fit Renesas RA8D1 EK: flash 122,228 B (213% of 57,344), RAM 2,552 B (7% of "
        "32,768)"
    )
    assert stage.to_dict()["status"] == "misfit"
    # RAM over alone, and a link the linker itself overflowed, are misfits too.
    ram = sizes_stage(Sizes(20_260, 40_000, RA8D1.flash_bytes, RA8D1.ram_bytes), {}, RA8D1)
    assert ram.status is Status.MISFIT
    over = sizes_stage(None, {"FLASH": 37_264}, RA8D1)
    assert over.status is Status.MISFIT
    assert over.summary == "does not fit Renesas RA8D1 EK: FLASH by 37,264 bytes"
    fits = sizes_stage(Sizes(20_276, 176, RA8D1.flash_bytes, RA8D1.ram_bytes), {}, RA8D1)
    assert fits.status is Status.PASS


def test_on_the_uno_q_an_example_too_big_is_a_failure() -> None:
    stage = sizes_stage(Sizes(900_000, 2_552, UNO_Q.flash_bytes, UNO_Q.ram_bytes), {}, UNO_Q)
    assert stage.status is Status.FAIL and not stage.passed
    assert stage.summary.startswith("does not fit Arduino UNO Q: flash 900,000 B (114% of ")
    assert sizes_stage(None, {"RAM": 100}, UNO_Q).status is Status.FAIL
    uno_q = dataclasses.replace(ENOMEM_RW612, heap_bytes=65_536)
    dynamic = judge_dynamic(DynamicSizes(242_440, 71_880, UNO_Q.flash_bytes, (uno_q,)), UNO_Q)
    assert dynamic.status is Status.FAIL


def test_an_upload_file_over_the_flash_or_a_heap_too_small_does_not_fit() -> None:
    over = judge_dynamic(DynamicSizes(240_040, 71_056, 57_344, (ENOMEM_RA8D1,)), RA8D1)
    assert over.status is Status.MISFIT and over.passed
    assert over.summary == (
        "does not fit Renesas RA8D1 EK when linked Dynamic: flash overflowed by 182,696 bytes "
        "(upload file 240,040 B (418% of 57,344); core main@177dcef6: refused, rc -12 (llext: "
        "Failed allocating 65600 bytes 8-aligned for region 0); needs 71,056 B of the 32 KiB "
        "heap, 38,288 B over)"
    )
    heap = judge_dynamic(DynamicSizes(242_440, 71_880, 3_133_440, (ENOMEM_RW612,)), RW612)
    assert heap.status is Status.MISFIT
    assert heap.summary == (
        "does not fit NXP FRDM RW612 when linked Dynamic: LLEXT heap (32 KiB) too small "
        "(upload file 242,440 B (7% of 3,133,440); core main@177dcef6: refused, rc -12 "
        "(llext: Failed allocating 66304 bytes 8-aligned for region 0); needs 71,880 B of the "
        "32 KiB heap, 39,112 B over)"
    )
    loads = dataclasses.replace(ENOMEM_RW612, loaded=True, errno=0, peak_bytes=13_800, log=())
    fits = judge_dynamic(DynamicSizes(46_428, 13_800, 3_133_440, (loads,)), RW612)
    assert fits.status is Status.PASS


@pytest.mark.parametrize("flash", [242_440, 4_000_000])
def test_a_loader_that_cannot_link_it_fails_even_where_it_is_too_big(flash: int) -> None:
    stage = judge_dynamic(DynamicSizes(flash, 0, UNO_Q.flash_bytes, (UNEXPORTED,)), UNO_Q)
    assert stage.status is Status.FAIL and not stage.passed
    assert "refused, rc -61" in stage.summary
    # On another board a symbol the UNO Q's table lacks is no verdict: its table was not read.
    other = judge_dynamic(DynamicSizes(flash, 0, 3_133_440, (UNEXPORTED,)), RW612)
    assert other.status is Status.SKIP and other.passed
    assert other.summary.startswith("unknown for NXP FRDM RW612: ")
    assert other.summary.endswith(
        "; that is the UNO Q firmware's export table, the only one read: NXP FRDM RW612's "
        "was not read"
    )
    relocation = dataclasses.replace(UNEXPORTED, errno=8, log=("llext: bad relocation",))
    assert judge_dynamic(DynamicSizes(flash, 0, 3_133_440, (relocation,)), RW612).status is (
        Status.FAIL
    )


ADD = "[1,2,3] + 1 = [2.00, 3.00, 4.00]"


def _check(
    board: Board, sizes: Sizes, dynamic: DynamicSizes, monkeypatch: pytest.MonkeyPatch, tmp: Path
) -> tuple[ExampleReport, list[str]]:
    """`_check_example` of AddModel on `board` with runs, its static link sized as `sizes` and
    its Dynamic link as `dynamic`; the emulated run misses the sum's line (as on the real
    Nicla Sense ME, whose emulator has more memory than the board), the host prints it."""
    ran: list[str] = []

    def compile_example(toolchain: Any, plan: Any, out: Path, cache: Any, refusal: Any = None):  # type: ignore[no-untyped-def]
        return CompileResult(StageResult("compile", Status.PASS, "built"), Build(True, tmp, ""), {})

    def run_emulated(binary: Path, timeout: float, must_not: Any, machine: str) -> RunOutput:
        ran.append("emulated")
        return RunOutput("emulated", ["=== DONE ==="], done=True, exit_code=0)

    def run_host(binary: Path, timeout: float, must_not: Any) -> RunOutput:
        ran.append("host")
        return RunOutput("host", [ADD, "=== DONE ==="], done=True, exit_code=0)

    plan = BuildPlan(tmp, "AddModel", Path("x"), (), (), ())
    monkeypatch.setattr(check_command, "plan_build", lambda library, name: plan)
    monkeypatch.setattr(check_command, "compile_example", compile_example)
    monkeypatch.setattr(check_command, "measure_elf", lambda binary, b: sizes)
    monkeypatch.setattr(
        check_command, "dynamic_stage", lambda *a: (judge_dynamic(dynamic, board), dynamic)
    )
    monkeypatch.setattr(check_command, "run_emulated", run_emulated)
    monkeypatch.setattr(check_command, "run_host", run_host)
    expected = Expected(must_print=(ADD,))
    cache: Any = None  # the compiles are stubbed
    check = check_command._check_example
    report = check(tmp, "AddModel", GCC_ARM, board, True, cache, tmp, expected)
    return report, ran


def test_the_run_of_a_link_that_does_not_fit_is_skipped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    sizes = Sizes(122_228, 2_552, RA8D1.flash_bytes, RA8D1.ram_bytes)
    dynamic = DynamicSizes(240_040, 71_056, 57_344, (ENOMEM_RA8D1,))
    report, ran = _check(RA8D1, sizes, dynamic, monkeypatch, tmp_path)
    status = {s.stage: (s.status, s.summary) for s in report.stages}
    assert status["sizes"][0] is Status.MISFIT and status["dynamic"][0] is Status.MISFIT
    assert status["run"] == (Status.SKIP, "not run: does not fit Renesas RA8D1 EK (see sizes)")
    assert status["dynamic-run"] == (
        Status.SKIP,
        "not run: does not fit Renesas RA8D1 EK (see dynamic)",
    )
    assert status["sanitize"][0] is Status.PASS and status["arena"][0] is Status.SKIP
    assert ran == ["host"] and report.passed and report.misfit


def test_a_run_that_fails_where_the_example_fits_still_fails(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The RW612's flash holds AddModel's static link; only its Dynamic one is too big.
    sizes = Sizes(122_756, 2_552, RW612.flash_bytes, RW612.ram_bytes)
    dynamic = DynamicSizes(242_440, 71_880, 3_133_440, (ENOMEM_RW612,))
    report, ran = _check(RW612, sizes, dynamic, monkeypatch, tmp_path)
    run = report.stage("run")
    assert run is not None and run.status is Status.FAIL
    assert run.summary.endswith(f"missing line: {ADD!r}")
    dynamic_run = report.stage("dynamic-run")
    assert dynamic_run is not None
    assert dynamic_run.summary == "not run: does not fit NXP FRDM RW612 (see dynamic)"
    assert ran == ["emulated", "host"] and not report.passed


def _ra8d1_report() -> CheckReport:
    add = ExampleReport(
        "AddModel",
        [
            StageResult("compile", Status.PASS, "gcc-arm: 1 compiled, 161 reused from the cache"),
            sizes_stage(Sizes(122_228, 2_552, 57_344, 32_768), {}, RA8D1),
            judge_dynamic(DynamicSizes(240_040, 71_056, 57_344, (ENOMEM_RA8D1,)), RA8D1),
            StageResult("run", Status.SKIP, "not run: does not fit Renesas RA8D1 EK (see sizes)"),
        ],
        sizes=Sizes(122_228, 2_552, 57_344, 32_768),
        dynamic=DynamicSizes(240_040, 71_056, 57_344, (ENOMEM_RA8D1,)),
    )
    hello = ExampleReport(
        "HelloExecuTorch",
        [StageResult(s, Status.PASS, "ok") for s in ("compile", "sizes", "dynamic", "run")],
        sizes=Sizes(20_276, 176, 57_344, 32_768),
    )
    return CheckReport(Path("/tmp/ExecuTorch"), "gcc-arm", RA8D1.name, examples=[hello, add])


def test_the_report_marks_it_as_not_fitting_neither_pass_nor_failure() -> None:
    report = _ra8d1_report()
    assert report.passed
    text = report.to_markdown()
    assert text.startswith("## Library check: ✅ passed (⛔ AddModel does not fit the board)\n")
    assert "| AddModel | ✅ | ⛔ | ⛔ | ➖ | ➖ | ➖ | ➖ |" in text
    assert "| HelloExecuTorch | ✅ | ✅ | ✅ | ✅ | ➖ | ➖ | ➖ |" in text
    assert (
        "- sizes: ⛔ does not fit Renesas RA8D1 EK: flash 122,228 B (213% of 57,344), "
        "RAM 2,552 B (7% of 32,768)"
    ) in text
    assert "\n⛔: does not fit Renesas RA8D1 EK (" in text
    statuses = [s["status"] for s in report.to_dict()["examples"][1]["stages"]]
    assert statuses == ["pass", "misfit", "misfit", "skip"]


def test_the_boards_table_says_what_does_not_fit_and_by_how_much() -> None:
    data = {**_ra8d1_report().to_dict(), "board": RA8D1.name}
    rows = [line for line in boards_markdown(data).splitlines() if "AddModel" in line]
    assert rows == [
        "| | | ⛔ AddModel: does not fit: flash over by 64,884 B | 122,228 B of 57,344 (213%) "
        "| 2,552 B of 32,768 (7%) |",
        "| | | ⛔ AddModel: does not fit: upload file over flash by 182,696 B "
        "| 240,040 B of 57,344 (418%) | heap 71,056 B of 32,768 (216%) |",
    ]
    # The heap alone (the RW612's): the loader's need against its heap.
    heap = judge_dynamic(DynamicSizes(242_440, 71_880, 3_133_440, (ENOMEM_RW612,)), RW612)
    entry = {
        "example": "AddModel",
        "stages": [heap.to_dict()],
        "dynamic": DynamicSizes(242_440, 71_880, 3_133_440, (ENOMEM_RW612,)).to_dict(),
    }
    text = boards_markdown({"board": RW612.name, "examples": [entry]})
    assert (
        "⛔ AddModel: does not fit: the loader's heap: needs 71,880 B of 32 KiB (39,112 B over)"
    ) in text
    # A refusal of another kind stays a failure; a symbol only the UNO Q's table was read
    # for is unknown.
    relocation = dataclasses.replace(UNEXPORTED, errno=8, log=("llext: bad relocation",))
    entry["stages"] = [
        judge_dynamic(DynamicSizes(242_440, 0, 3_133_440, (relocation,)), RW612).to_dict()
    ]
    entry["dynamic"] = DynamicSizes(242_440, 0, 3_133_440, (relocation,)).to_dict()
    text = boards_markdown({"board": RW612.name, "examples": [entry]})
    assert "❌ AddModel: loader refused: rc -8" in text
    entry["stages"] = [
        judge_dynamic(DynamicSizes(242_440, 0, 3_133_440, (UNEXPORTED,)), RW612).to_dict()
    ]
    entry["dynamic"] = DynamicSizes(242_440, 0, 3_133_440, (UNEXPORTED,)).to_dict()
    text = boards_markdown({"board": RW612.name, "examples": [entry]})
    row = next(line for line in text.splitlines() if "AddModel" in line and "Dynamic" in line)
    assert "✅" not in row and "❌" not in row, row


#: arduino-cli's output for AddModel on the RA8D1, as its size check prints it
#: (internal/arduino/builder/sizer.go `checkSize` at 30dd6b20), with the real run's figures.
ARDUINO_CLI_TOO_BIG = (
    "Sketch uses 122228 bytes (213%) of program storage space. Maximum is 57344 bytes.\n"
    "Global variables use 2552 bytes (7%) of dynamic memory, leaving 30216 bytes for local "
    "variables. Maximum is 32768 bytes.\n"
    "Sketch too big; see https://support.arduino.cc/hc/en-us/articles/360013825179 for tips "
    "on reducing it.\n"
    "Error during build: text section exceeds available space in board\n"
)


def test_arduino_clis_size_check_gives_the_bytes_over() -> None:
    assert overflows(ARDUINO_CLI_TOO_BIG) == {"FLASH": 122_228 - 57_344}
    ram = (
        "Sketch uses 20260 bytes (35%) of program storage space. Maximum is 57344 bytes.\n"
        "Global variables use 40000 bytes (122%) of dynamic memory, leaving -7232 bytes for "
        "local variables. Maximum is 32768 bytes.\n"
        "Error during build: data section exceeds available space in board\n"
    )
    assert overflows(ram) == {"RAM": 7_232}
    # The sizes alone (a build that fit) are no overflow.
    assert overflows(ARDUINO_CLI_TOO_BIG.split("Sketch too big")[0]) == {}


class _Failed:
    ok, binary, size_report, line, objects = False, None, None, None, ()
    log = ARDUINO_CLI_TOO_BIG


class _TooBig:
    """arduino-cli whose build fails its size check (`ARDUINO_CLI_TOO_BIG`)."""

    name = "arduino-cli"

    def build(self, plan: Any, out: Path, cache: Any) -> Any:
        return _Failed()


@pytest.mark.parametrize(
    ("board", "status"), [(RA8D1, Status.MISFIT), (UNO_Q, Status.FAIL)], ids=["ra8d1", "unoq"]
)
def test_a_compile_over_the_boards_budget_does_not_fit_it_but_the_uno_q(
    board: Board, status: Status, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def compile_example(toolchain: Any, plan: Any, out: Path, cache: Any, refusal: Any = None):  # type: ignore[no-untyped-def]
        return real_compile(_TooBig(), plan, out, cache, refusal)  # type: ignore[arg-type]

    plan = BuildPlan(tmp_path, "AddModel", Path("x"), (), (), ())
    monkeypatch.setattr(check_command, "plan_build", lambda library, name: plan)
    monkeypatch.setattr(check_command, "compile_example", compile_example)
    monkeypatch.setattr(check_command, "expected_refusal", lambda *a: None)
    cache: Any = None
    check = check_command._check_example
    report = check(tmp_path, "AddModel", GCC_ARM, board, False, cache, tmp_path, Expected(("x",)))
    compiled, sized = report.stage("compile"), report.stage("sizes")
    assert compiled is not None and sized is not None
    assert (
        compiled.summary == "arduino-cli: does not fit the board: FLASH overflowed by 64,884 bytes"
    )
    assert (compiled.status, sized.status) == (status, status)
    assert sized.summary == f"does not fit {board.name}: FLASH by 64,884 bytes"
    assert report.passed is (status is Status.MISFIT)
