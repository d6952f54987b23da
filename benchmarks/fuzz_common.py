"""What the fuzz harnesses (`benchmarks/fuzz_*.py`) share: run one target for a given time.

    python benchmarks/fuzz_pte.py [--seconds 600] [--work DIR] [--memory-mb 1024]
    python benchmarks/fuzz_pte.py --replay FILE...     (no atheris needed)

Not tests (CI runs none of this): coverage-guided fuzzing with atheris (libFuzzer for
Python; `pip install atheris`), seeded with the repository's fixtures. A target is a function
of one input (bytes) and the exception types that are its own clear errors (`PteError`,
`RegistrationError`, `FatalError`...); anything else escaping is a finding, and so is an input
that takes longer than `--slow` seconds (1 s) or more memory than `--memory-mb` above what the
process held before fuzzing (`RLIMIT_AS`, so the allocation fails with MemoryError: a
finding like any other).

The run is two processes: this one starts the fuzzer as a child (`--child`), writes its log to
`WORK/fuzz.log` and prints the summary at the end: executions, coverage (libFuzzer's `cov`,
edges of the instrumented Python, and `ft`, features), corpus size and findings. The child
keeps going after a finding: each distinct one (exception type and the line it came from, or
"slow") is saved once as `WORK/findings/<kind>-<hash>.bin` with its traceback beside it
(`.txt`), so a 10-minute run reports every finding it reached, not the first. Replay a saved
input with `--replay`; fixed ones become cases of tests/tools/test_fuzz_regressions.py.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere
sys.path.insert(0, str(ROOT / "tests" / "support"))  # the fixtures' program reader

#: libFuzzer stops a run whose input takes this long (a hang, or a regex that never ends);
#: inputs slower than `--slow` but below it are findings recorded without stopping.
HARD_TIMEOUT_S = 10


@dataclass
class Target:
    """One fuzz target.

    Attributes:
        name: short name ("pte"); the default work folder is /tmp/fuzz-<name>.
        setup: called once in the fuzzing process with the parsed options, before
            instrumenting: loads what `run` needs and returns `run` (one input; returns
            normally or raises an `allowed` error).
        allowed: the target's own clear errors.
        seeds: the seed inputs (name -> bytes) for the parsed options, copied into the
            corpus before the run.
        max_len: the longest input libFuzzer makes (bytes).
        instrument: the modules whose code coverage guides the fuzzer (names, each with
            its submodules).
        options: adds the target's own options to the parser.
    """

    name: str
    setup: Callable[[argparse.Namespace], Callable[[bytes], None]]
    allowed: Callable[[], tuple[type[BaseException], ...]]
    seeds: Callable[[argparse.Namespace], dict[str, bytes]]
    max_len: int = 8192
    instrument: tuple[str, ...] = ()
    options: Callable[[argparse.ArgumentParser], None] | None = None


@dataclass
class _Recorder:
    """Runs inputs, keeps the distinct findings (see the module docstring)."""

    run: Callable[[bytes], None]
    allowed: tuple[type[BaseException], ...]
    findings_dir: Path
    slow_s: float
    seen: dict[str, int] = field(default_factory=dict)
    executions: int = 0

    def one(self, data: bytes) -> str | None:
        """Run `data`; the finding's signature, or None when it passed."""
        self.executions += 1
        start = time.perf_counter()
        try:
            self.run(data)
        except self.allowed:
            pass
        except Exception as e:  # RecursionError and MemoryError too: findings like any
            return self._record(data, _signature(e), traceback.format_exc())
        elapsed = time.perf_counter() - start
        if elapsed > self.slow_s:
            # The machine is shared: count it only when a second run is slow too.
            start = time.perf_counter()
            with contextlib.suppress(Exception):  # its exception was judged above
                self.run(data)
            again = time.perf_counter() - start
            if again > self.slow_s:
                return self._record(
                    data, "slow", f"{len(data)} bytes took {elapsed:.2f} s, then {again:.2f} s\n"
                )
        return None

    def _record(self, data: bytes, signature: str, text: str) -> str:
        count = self.seen.get(signature, 0)
        self.seen[signature] = count + 1
        if count == 0:
            digest = hashlib.sha256(signature.encode()).hexdigest()[:12]
            kind = signature.split(" ", 1)[0]
            stem = self.findings_dir / f"{kind}-{digest}"
            stem.with_suffix(".bin").write_bytes(data)
            stem.with_suffix(".txt").write_text(f"{signature}\n\n{text}", encoding="utf-8")
            print(f"FINDING {signature} ({len(data)} bytes) -> {stem}.bin", file=sys.stderr)
            print(text, file=sys.stderr, flush=True)
        (self.findings_dir / "counts.json").write_text(json.dumps(self.seen, indent=1))
        return signature


def _signature(e: BaseException) -> str:
    """Exception type and the innermost frame of the repository's code it passed."""
    frames = traceback.extract_tb(e.__traceback__)
    ours = [f for f in frames if str(ROOT) in f.filename and "benchmarks" not in f.filename]
    chosen = ours or frames
    where = f"{Path(chosen[-1].filename).name}:{chosen[-1].lineno}" if chosen else "?"
    return f"{type(e).__name__} at {where}"


def _limit_memory(extra_mb: int) -> None:
    """Cap the address space at what the process maps now plus `extra_mb`."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[0])
    now = pages * os.sysconf("SC_PAGE_SIZE")
    cap = now + extra_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def _instrument(atheris: Any, prefixes: tuple[str, ...]) -> None:
    """Instrument, for coverage, the functions of the loaded modules named `prefixes` (and
    their submodules); `atheris.instrument_all` would take minutes over everything loaded."""
    done: set[int] = set()

    def visit(value: Any, module: str) -> None:
        if id(value) in done:
            return
        done.add(id(value))
        if isinstance(value, type) and value.__module__ == module:
            for member in vars(value).values():
                visit(getattr(member, "__func__", member), module)
        elif callable(value) and hasattr(value, "__code__") and value.__module__ == module:
            atheris.instrument_func(value)

    for name, module in list(sys.modules.items()):
        if any(name == p or name.startswith((p + ".", p + "_")) for p in prefixes):
            for value in list(vars(module).values()):
                visit(getattr(value, "fget", value), name)
    print(f"instrumented {len(done)} objects of {', '.join(prefixes)}", file=sys.stderr)


def _atheris() -> ModuleType | None:
    try:
        return importlib.import_module("atheris")
    except ImportError:
        return None


def _child(target: Target, args: argparse.Namespace) -> int:
    atheris = _atheris()
    if atheris is None:
        print("atheris is not installed: pip install atheris", file=sys.stderr)
        return 2
    run = target.setup(args)
    allowed = target.allowed()
    findings = args.work / "findings"
    findings.mkdir(parents=True, exist_ok=True)
    recorder = _Recorder(run, allowed, findings, args.slow)
    _instrument(atheris, target.instrument)
    _limit_memory(args.memory_mb)

    def test_one_input(data: bytes) -> None:
        recorder.one(data)

    libfuzzer = [
        sys.argv[0],
        f"-max_total_time={args.seconds}",
        f"-timeout={HARD_TIMEOUT_S}",
        f"-max_len={target.max_len}",
        "-rss_limit_mb=0",  # RLIMIT_AS caps memory; libFuzzer's own limit would stop the run
        "-print_final_stats=1",
        str(args.work / "corpus"),
    ]
    atheris.Setup(libfuzzer, test_one_input)
    atheris.Fuzz()
    return 0  # not reached: libFuzzer exits the process


#: libFuzzer's status lines: `#1936 DONE cov: 600 ft: 1201 corp: 48/630Kb ...`.
_STATUS = re.compile(
    r"^#(?P<n>\d+)\s+(?P<what>\w+)\s+cov: (?P<cov>\d+) ft: (?P<ft>\d+)"
    r"(?: corp: (?P<corp>\d+)/(?P<corp_size>\S+))?",
    re.M,
)
#: The files libFuzzer writes when it stops on an input (in its working folder).
_LIBFUZZER_STOPS = ("crash-", "timeout-", "oom-", "leak-", "slow-unit-")
_DONE = re.compile(r"^Done (?P<n>\d+) runs in (?P<s>\d+) second", re.M)


def summary(work: Path, seconds: float) -> dict[str, Any]:
    """The figures of a finished run in `work`: from libFuzzer's log and the findings."""
    log = (work / "fuzz.log").read_text(encoding="utf-8", errors="replace")
    status = list(_STATUS.finditer(log))
    last = status[-1] if status else None
    inited = next((m for m in status if m.group("what") == "INITED"), None)
    done = _DONE.search(log)
    counts_file = work / "findings" / "counts.json"
    counts = json.loads(counts_file.read_text()) if counts_file.is_file() else {}
    stops = sorted(p.name for p in work.iterdir() if p.name.startswith(_LIBFUZZER_STOPS))
    return {
        "seconds": seconds,
        "executions": int(done.group("n")) if done else (int(last.group("n")) if last else 0),
        "cov_after_seeds": int(inited.group("cov")) if inited else None,
        "cov": int(last.group("cov")) if last else None,
        "ft": int(last.group("ft")) if last else None,
        "corpus": int(last.group("corp")) if last and last.group("corp") else None,
        "findings": counts,
        "libfuzzer_stops": stops,  # crash-/timeout-/oom- files libFuzzer wrote itself
    }


def _parent(target: Target, args: argparse.Namespace) -> int:
    if _atheris() is None:
        print("atheris is not installed: pip install atheris (or use --replay)", file=sys.stderr)
        return 2
    corpus = args.work / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    for name, data in target.seeds(args).items():
        (corpus / f"seed-{name}").write_bytes(data)
    # The same options (the target's own too), and the resolved work folder.
    command = [sys.executable, str(Path(sys.argv[0]).resolve()), *sys.argv[1:]]
    command += ["--child", f"--work={args.work}"]
    start = time.monotonic()
    with open(args.work / "fuzz.log", "w") as log:
        # libFuzzer writes crash files into the working folder: the work folder.
        proc = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, cwd=args.work)
    figures = summary(args.work, round(time.monotonic() - start))
    figures["target"] = target.name
    figures["exit"] = proc.returncode
    print(json.dumps(figures, indent=1))
    (args.work / "summary.json").write_text(json.dumps(figures, indent=1))
    return 0 if not figures["findings"] and not figures["libfuzzer_stops"] else 1


def _replay(target: Target, args: argparse.Namespace, files: Iterable[Path]) -> int:
    run = target.setup(args)
    with tempfile.TemporaryDirectory() as tmp:
        recorder = _Recorder(run, target.allowed(), Path(tmp), args.slow)
        bad = 0
        for path in files:
            start = time.perf_counter()
            found = recorder.one(path.read_bytes())
            took = time.perf_counter() - start
            print(f"{path}: {found or 'ok'} ({took:.3f} s)")
            bad += found is not None
    return 1 if bad else 0


def main(target: Target) -> int:
    """The command line of a harness (see the module docstring); returns the exit code:
    0 no finding, 1 findings (or an input libFuzzer stopped on), 2 atheris missing."""
    parser = argparse.ArgumentParser(description=f"Fuzz the {target.name} target.")
    parser.add_argument("--seconds", type=int, default=600, help="how long to fuzz (600)")
    work = Path(f"/tmp/fuzz-{target.name}")
    parser.add_argument("--work", type=Path, default=work, help=f"work folder ({work})")
    parser.add_argument(
        "--memory-mb", type=int, default=1024, help="address space allowed above the start (MiB)"
    )
    parser.add_argument("--slow", type=float, default=1.0, help="seconds one input may take")
    parser.add_argument("--fresh", action="store_true", help="start from the seeds only")
    parser.add_argument("--replay", type=Path, nargs="+", help="run these inputs, no fuzzing")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    if target.options is not None:
        target.options(parser)
    args = parser.parse_args()
    args.work = args.work.resolve()
    if args.replay:
        return _replay(target, args, args.replay)
    if args.child:
        return _child(target, args)
    if args.fresh and args.work.exists():
        shutil.rmtree(args.work)
    return _parent(target, args)
