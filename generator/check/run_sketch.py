"""Stage 4: run the sketch and compare what it prints with its `expected.yaml`.

Two runs per example, and a third of the Dynamic upload file (`dynamic_run.py`, kind
"dynamic": the emulated board's firmware with the sketch placed by our loader model):

- emulated: the `gcc-arm` firmware boots on `qemu-system-arm -M mps2-an505` (a
  Cortex-M33, 32-bit like the board); Serial is the CMSDK UART0, read from QEMU's
  stdout. Semihosting is on only so that a fault or `exit()` ends QEMU with an exit
  code (3: fault, 4: exit with an error; see data/emulated_core/board/mps2_an505.c). QEMU
  counts instructions (`QEMU_ICOUNT`): the core's `micros()` reads 1 µs per 1,000
  instructions executed, so what a sketch times is a count, the same on every run
  (`timing.py`).
- host: the same sketch built with `-fsanitize=address,undefined` runs once; any
  sanitizer report ends it (no recovery). Leak checking is off: the run is stopped
  from outside, so nothing is ever freed at exit.

How a run ends: after the line `=== DONE ===` the runner keeps reading for
`DONE_GRACE_SECONDS` (a fault or a banned line right after it still counts), then stops
the program (the core's loop() runs forever, as on a board); a crash, an early exit, the
example's `timeout_seconds` or more than `MAX_OUTPUT_BYTES` of output also end it.

What a run keeps is bounded: lines are cut at `MAX_LINE_CHARS` characters, output past
`MAX_OUTPUT_BYTES` stops the program and fails the run, and standard error is kept up to
`MAX_STDERR_BYTES`. Programs run in their own session (process group), which the runner
kills when it stops them, when `check` exits or when it is told to stop (`stop_children`).
"""

from __future__ import annotations

import atexit
import contextlib
import math
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from generator.boards.budgets import EMULATORS
from generator.check.expected import DONE_LINE, Expected
from generator.check.stages import StageResult, Status
from generator.util.errors import FatalError

QEMU = "qemu-system-arm"
QEMU_MACHINE = "mps2-an505"
#: Exit codes of the emulated firmware (set by the core through semihosting).
FAULT_EXIT = 3
ERROR_EXIT = 4
#: Start of the lines the emulated core prints on a fault or exit() (board/mps2_an505.c):
#: "@@arduino-core@@ fault: <kind>: PC=..." and "@@arduino-core@@ exit(0x<code>)".
CORE_MARKER = "@@arduino-core@@ "
#: Run kinds that boot on QEMU (the static firmware, the Dynamic one with its sketch).
EMULATED_KINDS = ("emulated", "dynamic")
#: QEMU's `-icount` for every emulated run. `shift=0`: the virtual clock (which SysTick, so
#: `micros()`, counts) advances 2**0 = 1 ns per instruction executed, not with the host's
#: time, so a sketch's timing is a deterministic instruction count (`timing.py`). `sleep=on`
#: (QEMU's default, spelled out): while the core sleeps in `wfi` (`delay()`), virtual time
#: catches up with the host's real time until the next timer deadline, as without -icount,
#: so `delay(1000)` still lasts about a second and a sketch printing in loop() prints no
#: faster than on a board. (QEMU 7.2's qemu-options.hx describes sleep=on and off the wrong
#: way round; the code, accel/tcg/icount-common.c `icount_start_warp_timer`, jumps to the
#: deadline at once only with sleep=off; fixed in the docs by the 2025 qemu-devel patch
#: "The documentation for the -icount option incorrectly describes the behavior".)
QEMU_ICOUNT = "shift=0,sleep=on"
_CORE_EXIT = re.compile(re.escape(CORE_MARKER) + r"exit\((0x[0-9a-fA-F]+)\)")
#: Lines shown when a run fails.
TAIL_LINES = 15
#: Lines of each run kept in the JSON report.
REPORT_LINES = 200
#: Output a run may print in total (bytes); more stops the program and fails the run.
MAX_OUTPUT_BYTES = 1 << 20
#: Longer lines are cut to this many characters.
MAX_LINE_CHARS = 500
#: Standard error kept per run (bytes); the rest is read and dropped.
MAX_STDERR_BYTES = 64 * 1024
#: How long the runner keeps reading after `=== DONE ===` before it stops the program.
DONE_GRACE_SECONDS = 1.0

HOST_ENV = {
    "ASAN_OPTIONS": "detect_leaks=0:halt_on_error=1:abort_on_error=0:color=never",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1:color=never",
}

_SANITIZER = re.compile(r"ERROR: (Address|Leak|Memory|Thread)Sanitizer|runtime error:")

#: Programs started by `run_program` and not yet stopped (their session ids = pids).
_LIVE: set[subprocess.Popen[bytes]] = set()
_LIVE_LOCK = threading.Lock()


@dataclass
class RunOutput:
    """What one run printed and how it ended.

    Attributes:
        kind: "emulated", "dynamic" (the Dynamic upload file, `dynamic_run.py`) or "host".
        lines: Serial output, one entry per line, without line endings, each cut at
            `MAX_LINE_CHARS` characters; at most `MAX_OUTPUT_BYTES` in all.
        done: True when `=== DONE ===` was printed.
        exit_code: the program's exit code (None when the runner stopped it; negative:
            killed by that signal).
        timed_out: True when the time limit ended it.
        overflowed: True when it printed more than `MAX_OUTPUT_BYTES` and was stopped.
        cut_hits: the watched strings (`run_program`'s `watch`) printed in the part of
            a line that was cut off, so not in `lines`.
        stderr: the program's (or QEMU's) error output: sanitizer reports, QEMU errors
            (the first `MAX_STDERR_BYTES`).
        seconds: wall time of the run.
        machine: the QEMU machine an emulated run booted on ("" for the host); not in the
            JSON (the entry's "board" says it).
    """

    kind: str
    lines: list[str] = field(default_factory=list)
    done: bool = False
    exit_code: int | None = None
    timed_out: bool = False
    overflowed: bool = False
    cut_hits: set[str] = field(default_factory=set)
    stderr: str = ""
    seconds: float = 0.0
    machine: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the last `REPORT_LINES` lines only)."""
        return {
            "kind": self.kind,
            "done": self.done,
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "overflowed": self.overflowed,
            "seconds": round(self.seconds, 2),
            "last_lines": self.lines[-REPORT_LINES:],
        }


def _line(raw: bytes, cut: bool, watch: tuple[bytes, ...], out: RunOutput) -> str:
    line = raw.decode("utf-8", errors="replace").rstrip("\r")
    if cut or len(line) > MAX_LINE_CHARS:
        out.cut_hits.update(w.decode() for w in watch if w in raw)
        line = line[:MAX_LINE_CHARS] + f" [line cut at {MAX_LINE_CHARS} characters]"
    return line


def _pump_lines(
    stream: IO[bytes],
    out: RunOutput,
    done: threading.Event,
    stop: threading.Event,
    watch: tuple[bytes, ...] = (),
) -> None:
    """Read `stream` to its end into `out.lines`, bounded (see the module docstring).

    The part of a line past the cut is dropped, but searched for the `watch` strings
    first (found ones go to `out.cut_hits`).
    """
    line_bytes = MAX_LINE_CHARS * 4  # enough for MAX_LINE_CHARS UTF-8 characters
    overlap = max((len(w) for w in watch), default=1) - 1
    pending = bytearray()
    cut = False
    dropped = b""  # the end of what was dropped of this line, for matches across reads
    total = 0
    read = getattr(stream, "read1", stream.read)
    while True:
        chunk = read(65536)
        if not chunk:
            break
        total += len(chunk)
        if total > MAX_OUTPUT_BYTES:
            out.overflowed = True
            stop.set()
            break
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            piece = chunk[start:] if nl < 0 else chunk[start:nl]
            room = line_bytes - len(pending)
            if len(piece) > room:
                if not cut:  # the kept head's end may start a match
                    head = bytes(pending) + piece[: max(room, 0)]
                    dropped = head[-overlap:] if overlap else b""
                cut = True
                if watch:
                    seen = dropped + piece[max(room, 0) :]
                    out.cut_hits.update(w.decode() for w in watch if w in seen)
                    dropped = seen[-overlap:] if overlap else b""
            pending += piece[: max(room, 0)]
            if nl < 0:
                break
            line = _line(bytes(pending), cut, watch, out)
            out.lines.append(line)
            if line.strip() == DONE_LINE:
                done.set()
            pending.clear()
            cut = False
            dropped = b""
            start = nl + 1
    if pending:
        out.lines.append(_line(bytes(pending), cut, watch, out))


def _pump_text(stream: IO[bytes], chunks: list[bytes]) -> None:
    kept = 0
    for chunk in iter(lambda: stream.read(4096), b""):
        if kept < MAX_STDERR_BYTES:
            chunks.append(chunk[: MAX_STDERR_BYTES - kept])
            kept += len(chunks[-1])


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill `proc` and everything in its session (it was started as a session leader)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def stop_children() -> None:
    """Kill every program `run_program` started that is still running (QEMU, host runs).

    Registered with `atexit`; `check` also calls it when it is told to stop (SIGTERM).
    """
    with _LIVE_LOCK:
        live = list(_LIVE)
        _LIVE.clear()
    for proc in live:
        _kill(proc)


atexit.register(stop_children)


def run_program(
    argv: list[str],
    kind: str,
    timeout: float,
    env: dict[str, str] | None = None,
    watch: Sequence[str] = (),
) -> RunOutput:
    """Run `argv`, reading its stdout as Serial until `=== DONE ===`, exit or `timeout` s.

    `watch`: strings to look for in the parts of lines cut at `MAX_LINE_CHARS` (an
    example's `must_not_print`), reported in `RunOutput.cut_hits`.

    After `=== DONE ===` it keeps reading for `DONE_GRACE_SECONDS`; more than
    `MAX_OUTPUT_BYTES` of output stops the program (`RunOutput.overflowed`). The program
    runs in its own session and is killed, with its children, whenever this returns or
    raises.

    Raises:
        FatalError: the program (or QEMU) cannot be started.
    """
    out = RunOutput(kind)
    done = threading.Event()
    stop = threading.Event()
    start = time.monotonic()
    proc = _start(argv, env)
    assert proc.stdout is not None and proc.stderr is not None
    err_chunks: list[bytes] = []
    watched = tuple(w.encode() for w in watch if w)
    readers = [
        threading.Thread(
            target=_pump_lines, args=(proc.stdout, out, done, stop, watched), daemon=True
        ),
        threading.Thread(target=_pump_text, args=(proc.stderr, err_chunks), daemon=True),
    ]
    try:
        for t in readers:
            t.start()
        _wait(proc, out, done, stop, deadline=start + timeout)
    finally:
        _reap(proc)
    for t in readers:
        t.join(timeout=5)
    proc.stdout.close()
    proc.stderr.close()
    out.done = done.is_set() or any(line.strip() == DONE_LINE for line in out.lines)
    out.stderr = b"".join(err_chunks).decode("utf-8", errors="replace")
    out.seconds = time.monotonic() - start
    return out


def _start(argv: list[str], env: dict[str, str] | None) -> subprocess.Popen[bytes]:
    """Start `argv` in a session of its own, stdout and stderr piped, with `env` over this
    process's environment, and count it among the live programs (`stop_children`).

    Raises:
        FatalError: the program cannot be started.
    """
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
    except OSError as e:
        raise FatalError(f"cannot start {argv[0]}: {e}") from None
    with _LIVE_LOCK:
        _LIVE.add(proc)
    return proc


def _wait(
    proc: subprocess.Popen[bytes],
    out: RunOutput,
    done: threading.Event,
    stop: threading.Event,
    deadline: float,
) -> None:
    """Wait, polling every 50 ms, for the first of: `proc` exits (its code in
    `out.exit_code`); `stop` is set; `DONE_GRACE_SECONDS` pass after `done` is set; or, while
    `done` is not set, `deadline` (a `time.monotonic()` time) passes (`out.timed_out`)."""
    grace_end: float | None = None
    while not stop.is_set():
        if done.is_set() and grace_end is None:
            grace_end = time.monotonic() + DONE_GRACE_SECONDS
        try:
            out.exit_code = proc.wait(timeout=0.05)
            break
        except subprocess.TimeoutExpired:
            now = time.monotonic()
            if grace_end is not None:
                if now > grace_end:
                    break
            elif now > deadline:
                out.timed_out = True
                break


def _reap(proc: subprocess.Popen[bytes]) -> None:
    """Kill `proc` and its session, wait for it, and drop it from the live programs."""
    if proc.returncode is None:
        _kill(proc)
    # The session may hold children that keep the pipes open; kill them too.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    with _LIVE_LOCK:
        _LIVE.discard(proc)


def run_emulated(
    elf: Path,
    timeout: float,
    watch: Sequence[str] = (),
    *,
    devices: Sequence[str] = (),
    kind: str = "emulated",
    machine: str = QEMU_MACHINE,
) -> RunOutput:
    """Boot `elf` on QEMU's `machine` (default mps2-an505; a board's is its
    `generator.boards.budgets.EMULATORS` entry), counting instructions (`QEMU_ICOUNT`), and capture
    its Serial (UART0) output.

    `watch`: see `run_program`; `devices`: more `-device` values (QEMU's generic loader
    writing files into memory before the core starts: `loader,file=F,addr=A,force-raw=on`);
    `kind`: the `RunOutput.kind` (one of `EMULATED_KINDS`).

    Raises:
        FatalError: qemu-system-arm is not installed.
    """
    argv = [
        QEMU,
        "-M",
        machine,
        "-nographic",
        "-icount",
        QEMU_ICOUNT,
        "-semihosting-config",
        "enable=on,target=native",
        "-kernel",
        str(elf),
    ]
    for device in devices:
        argv += ["-device", device]
    if shutil.which(QEMU) is None:
        raise FatalError(f"{QEMU} is not installed; install the Debian package qemu-system-arm")
    out = run_program(argv, kind, timeout, watch=watch)
    out.machine = machine
    return out


def run_host(exe: Path, timeout: float, watch: Sequence[str] = ()) -> RunOutput:
    """Run the sanitizer build `exe` once and capture its Serial (stdout) output.

    `watch`: see `run_program`.
    """
    return run_program([str(exe)], "host", timeout, env=HOST_ENV, watch=watch)


def _crash(out: RunOutput) -> str | None:
    if out.kind in EMULATED_KINDS:
        fault = next((line for line in out.lines if line.startswith(CORE_MARKER + "fault: ")), None)
        if fault:
            return f"crashed: {fault[len(CORE_MARKER) + len('fault: ') :]}"
        if out.exit_code == FAULT_EXIT:
            return (
                f"crashed: QEMU ended with exit code {FAULT_EXIT} (a fault) but no reason was read"
            )
        if out.exit_code == ERROR_EXIT:
            called = next((m for line in out.lines if (m := _CORE_EXIT.search(line))), None)
            code = f"exit({int(called.group(1), 16)})" if called else "exit() with an error"
            return f"the sketch called {code}"
        if out.exit_code not in (None, 0):
            reason = out.stderr.strip()[-300:] or "QEMU printed nothing on standard error"
            return f"QEMU ended with exit code {out.exit_code}: {reason}"
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
        elif math.isnan(found) or not abs(found - check.equals) <= check.tolerance:
            problems.append(
                f"value {found} (line {check.line_regex!r}) is not {check.equals} "
                f"± {check.tolerance}"
            )
    return problems


def judge_run(out: RunOutput, expected: Expected, stage: str) -> StageResult:
    """Compare a run with the example's expectations.

    Fails on: a crash or sanitizer report, a timeout, an exit before `=== DONE ===`, a
    `must_print` line missing, a `must_not_print` substring present, an `expected.contains`
    text in no line, a value out of tolerance or not a number, more than
    `MAX_OUTPUT_BYTES` printed. With `expected.until_done` False (a sketch without an
    expected.yaml) the timeout and an exit without `=== DONE ===` are normal ends, and a
    run that printed nothing fails instead. Everything read is judged, including what came
    in the grace period after `=== DONE ===`. The details show the problems and the last
    lines printed.
    """
    problems: list[str] = []
    if out.overflowed:
        problems.append(
            f"printed more than {MAX_OUTPUT_BYTES // (1 << 20)} MiB of output; the run was "
            "stopped (print less, or only once, not in loop())"
        )
    crash = _crash(out)
    if crash:
        problems.append(crash)
    if not expected.until_done:
        if not out.lines and not crash:
            problems.append(f"printed nothing within {expected.timeout_seconds:g} s")
    elif out.timed_out:
        problems.append(f"timed out: no {DONE_LINE!r} within {expected.timeout_seconds:g} s")
    elif not out.done and not crash and not out.overflowed:
        problems.append(f"ended before printing {DONE_LINE!r}")
    stripped = {line.rstrip() for line in out.lines}
    for want in expected.must_print:
        if want.rstrip() not in stripped:
            problems.append(f"missing line: {want!r}")
    for banned in expected.must_not_print:
        hit = next((line for line in out.lines if banned in line), None)
        if hit is not None:
            problems.append(f"printed {banned!r}: {hit!r}")
        elif banned in out.cut_hits:
            problems.append(
                f"printed {banned!r} in a line longer than {MAX_LINE_CHARS} characters "
                "(past the part kept)"
            )
    for text in expected.contains:
        if not any(text in line for line in out.lines):
            problems.append(f"no line contains {text!r}")
    problems += _value_problems(out.lines, expected)

    machine = out.machine or QEMU_MACHINE
    emulator = EMULATORS.get(machine)
    cpu = emulator.cpu.replace("cortex-m", "Cortex-M") if emulator else machine
    what = {
        "emulated": f"emulated {cpu} (QEMU {machine})",
        "dynamic": "Dynamic upload file placed by the loader model on QEMU mps2-an505",
    }.get(out.kind, "host build with AddressSanitizer + UBSan")
    if not problems and not expected.until_done:
        end = "the timeout" if out.timed_out else repr(DONE_LINE) if out.done else "its exit"
        return StageResult(
            stage,
            Status.PASS,
            f"{what}: printed {len(out.lines)} lines in {out.seconds:.1f} s, no fault "
            f"(ended by {end})",
        )
    if not problems:
        return StageResult(stage, Status.PASS, f"{what}: expected output in {out.seconds:.1f} s")
    tail = out.lines[-TAIL_LINES:]
    details = "\n".join(f"- {p}" for p in problems)
    details += "\nLast lines printed:\n" + ("\n".join(tail) if tail else "(nothing)")
    if out.kind == "host" and out.stderr.strip():
        details += "\nStandard error:\n" + "\n".join(out.stderr.strip().splitlines()[:40])
    # One line: the summary goes into a Markdown list item and a table.
    summary = " ".join(problems[0].split("\n"))
    return StageResult(stage, Status.FAIL, f"{what}: {summary}", details)
