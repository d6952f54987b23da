"""Stage 4: run the sketch and compare what it prints with its `expected.yaml`.

Two runs per example:

- emulated: the `gcc-arm` firmware boots on `qemu-system-arm -M mps2-an505` (a
  Cortex-M33, 32-bit like the board); Serial is the CMSDK UART0, read from QEMU's
  stdout. Semihosting is on only so that a fault or `exit()` ends QEMU with an exit
  code (3: fault, 4: exit with an error; see arduino_core/board/mps2_an505.c).
- host: the same sketch built with `-fsanitize=address,undefined` runs once; any
  sanitizer report ends it (no recovery). Leak checking is off: the run is stopped
  from outside, so nothing is ever freed at exit.

How a run ends: the runner stops reading at the line `=== DONE ===` and stops the
program (the core's loop() runs forever, as on a board); a crash, an early exit or the
example's `timeout_seconds` also end it.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from generator.check.expected import DONE_LINE, Expected
from generator.check.stages import StageResult, Status
from generator.errors import FatalError

QEMU = "qemu-system-arm"
QEMU_MACHINE = "mps2-an505"
#: Exit codes of the emulated firmware (set by the core through semihosting).
FAULT_EXIT = 3
ERROR_EXIT = 4
#: Lines shown when a run fails.
TAIL_LINES = 15

HOST_ENV = {
    "ASAN_OPTIONS": "detect_leaks=0:halt_on_error=1:abort_on_error=0:color=never",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1:color=never",
}

_SANITIZER = re.compile(r"ERROR: (Address|Leak|Memory|Thread)Sanitizer|runtime error:")


@dataclass
class RunOutput:
    """What one run printed and how it ended.

    Attributes:
        kind: "emulated" or "host".
        lines: Serial output, one entry per line, without line endings.
        done: True when `=== DONE ===` was printed.
        exit_code: the program's exit code (None when the runner stopped it; negative:
            killed by that signal).
        timed_out: True when the time limit ended it.
        stderr: the program's (or QEMU's) error output: sanitizer reports, QEMU errors.
        seconds: wall time of the run.
    """

    kind: str
    lines: list[str] = field(default_factory=list)
    done: bool = False
    exit_code: int | None = None
    timed_out: bool = False
    stderr: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the last lines only)."""
        return {
            "kind": self.kind,
            "done": self.done,
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "seconds": round(self.seconds, 2),
            "last_lines": self.lines[-TAIL_LINES:],
        }


def _pump_lines(stream: IO[bytes], out: RunOutput, done: threading.Event) -> None:
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n").rstrip("\r")
        out.lines.append(line)
        if line.strip() == DONE_LINE:
            done.set()
            return


def _pump_text(stream: IO[bytes], chunks: list[bytes]) -> None:
    for chunk in iter(lambda: stream.read(4096), b""):
        chunks.append(chunk)


def run_program(
    argv: list[str], kind: str, timeout: float, env: dict[str, str] | None = None
) -> RunOutput:
    """Run `argv`, reading its stdout as Serial until `=== DONE ===`, exit or `timeout` s.

    Raises:
        FatalError: the program (or QEMU) cannot be started.
    """
    out = RunOutput(kind)
    done = threading.Event()
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
    except OSError as e:
        raise FatalError(f"cannot start {argv[0]}: {e}") from None
    assert proc.stdout is not None and proc.stderr is not None
    err_chunks: list[bytes] = []
    readers = [
        threading.Thread(target=_pump_lines, args=(proc.stdout, out, done), daemon=True),
        threading.Thread(target=_pump_text, args=(proc.stderr, err_chunks), daemon=True),
    ]
    for t in readers:
        t.start()
    deadline = start + timeout
    while True:
        if done.is_set():
            break
        try:
            out.exit_code = proc.wait(timeout=0.05)
            break
        except subprocess.TimeoutExpired:
            if time.monotonic() > deadline:
                out.timed_out = True
                break
    if out.exit_code is None:
        proc.kill()
        proc.wait()
    for t in readers:
        t.join(timeout=5)
    # The stdout reader may still hold lines printed just before an exit.
    out.done = done.is_set() or any(line.strip() == DONE_LINE for line in out.lines)
    out.stderr = b"".join(err_chunks).decode("utf-8", errors="replace")
    out.seconds = time.monotonic() - start
    return out


def run_emulated(elf: Path, timeout: float) -> RunOutput:
    """Boot `elf` on QEMU's mps2-an505 and capture its Serial (UART0) output.

    Raises:
        FatalError: qemu-system-arm is not installed.
    """
    argv = [
        QEMU,
        "-M",
        QEMU_MACHINE,
        "-nographic",
        "-semihosting-config",
        "enable=on,target=native",
        "-kernel",
        str(elf),
    ]
    try:
        return run_program(argv, "emulated", timeout)
    except FatalError:
        raise FatalError(
            f"{QEMU} is not installed; install the Debian package qemu-system-arm"
        ) from None


def run_host(exe: Path, timeout: float) -> RunOutput:
    """Run the sanitizer build `exe` once and capture its Serial (stdout) output."""
    return run_program([str(exe)], "host", timeout, env=HOST_ENV)


def _crash(out: RunOutput) -> str | None:
    if out.kind == "emulated":
        fault = next((line for line in out.lines if line.startswith("*** ")), None)
        if fault:
            return f"crashed: {fault[4:]}"
        if out.exit_code not in (None, 0):
            return f"QEMU ended with exit code {out.exit_code}: {out.stderr.strip()[-300:]}"
    else:
        if _SANITIZER.search(out.stderr):
            first = next(line for line in out.stderr.splitlines() if _SANITIZER.search(line))
            return f"sanitizer report: {first.strip()}"
        if out.exit_code is not None and out.exit_code < 0:
            return f"killed by signal {-out.exit_code}"
        if out.exit_code not in (None, 0):
            return f"exited with code {out.exit_code}"
    return None


def _value_problems(lines: list[str], expected: Expected) -> list[str]:
    problems = []
    for check in expected.values:
        regex = re.compile(check.line_regex)
        found: float | None = None
        for line in lines:
            m = regex.search(line)
            if m:
                text = m.group(1) if regex.groups else m.group(0)
                try:
                    found = float(text)
                except ValueError:
                    continue
                break
        if found is None:
            problems.append(f"no line matches {check.line_regex!r}")
        elif abs(found - check.equals) > check.tolerance:
            problems.append(
                f"value {found} (line {check.line_regex!r}) is not {check.equals} "
                f"± {check.tolerance}"
            )
    return problems


def judge_run(out: RunOutput, expected: Expected, stage: str) -> StageResult:
    """Compare a run with the example's expectations.

    Fails on: a crash or sanitizer report, a timeout, an exit before `=== DONE ===`, a
    `must_print` line missing, a `must_not_print` substring present, a value out of
    tolerance. The details show the problems and the last lines printed.
    """
    problems: list[str] = []
    crash = _crash(out)
    if crash:
        problems.append(crash)
    if out.timed_out:
        problems.append(f"timed out: no {DONE_LINE!r} within {expected.timeout_seconds:g} s")
    elif not out.done and not crash:
        problems.append(f"ended before printing {DONE_LINE!r}")
    stripped = {line.rstrip() for line in out.lines}
    for want in expected.must_print:
        if want.rstrip() not in stripped:
            problems.append(f"missing line: {want!r}")
    for banned in expected.must_not_print:
        hit = next((line for line in out.lines if banned in line), None)
        if hit is not None:
            problems.append(f"printed {banned!r}: {hit!r}")
    problems += _value_problems(out.lines, expected)

    what = (
        "emulated Cortex-M33 (QEMU mps2-an505)"
        if out.kind == "emulated"
        else ("host build with AddressSanitizer + UBSan")
    )
    if not problems:
        return StageResult(stage, Status.PASS, f"{what}: expected output in {out.seconds:.1f} s")
    tail = out.lines[-TAIL_LINES:]
    details = "\n".join(f"- {p}" for p in problems)
    details += "\nLast lines printed:\n" + ("\n".join(tail) if tail else "(nothing)")
    if out.kind == "host" and out.stderr.strip():
        details += "\nStandard error:\n" + "\n".join(out.stderr.strip().splitlines()[:40])
    return StageResult(stage, Status.FAIL, f"{what}: {problems[0]}", details)
