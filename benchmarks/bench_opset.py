"""Benchmark what a wider default op set costs (issue 18; not a test).

    GIT_CONFIG_GLOBAL=/root/mirror.gitconfig python benchmarks/bench_opset.py \\
        [--ref main] [--work DIR] [--previous LIB] [--default LIB] [--example NAME]

Builds (or takes, with --previous/--default) two libraries of the same ref: one with the
previous default root ops (`build --ops` with
`generator.pipeline.default_ops.PREVIOUS_ROOT_OPS`) and one
with today's default (`DEFAULT_ROOT_OPS`). For each it reports:

- the library on disk: files, bytes, and the sources Arduino compiles (`.c`, `.cpp`, `.S` under
  `src/`);
- a sketch's cold first compile: `python -m generator check LIB --compiler gcc-arm --example
  NAME --no-run` with an empty object cache (`--cache-dir` a new folder), i.e. every library
  and core source compiled once at the UNO Q's flags, as the Arduino IDE does on a sketch's first
  build. Wall time and the CPU time of the compilers (user + sys of the child processes): on
  a shared machine the CPU time is the figure to compare, the wall time varies with the load;
- each example's flash and RAM from `check`'s JSON report (a second `check --no-run` of every
  example on the now warm cache).

The target (issue 18): the cold first compile no more than twice the previous one, and no
example's flash larger than with the previous op set. Kernel selection links only the kernels a
sketch's model.h selects; what still grows with the op set is the registry hook's table of
select functions (4 B of flash per operator of the library) and the registry's capacity (12 B
of RAM per kernel; generator/pipeline/selection.py says why). Measured 2026-12-02 (same tree,
`check --no-run`, UNO Q static link): AddModel 122,440 -> 122,592 B of flash, KeywordSpotting
153,360 -> 153,512, HelloExecuTorch 20,276 both; before the operator names got sections of
their own and the hook its table, the default op set's AddModel was 124,820 B (previous op set
123,604).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run as a script from anywhere

from generator.pipeline.default_ops import DEFAULT_ROOT_OPS, PREVIOUS_ROOT_OPS  # noqa: E402

SOURCE_SUFFIXES = (".c", ".cpp", ".S")


@dataclass(frozen=True)
class Cost:
    """What one library costs.

    Attributes:
        files, bytes: every file of the library; sources: files under src/ Arduino compiles.
        wall_s, cpu_s: the cold first compile (seconds; cpu = user + sys of the children).
        sizes: example -> check's `sizes` (flash, ram, dynamic_flash, dynamic_ram in bytes).
    """

    files: int
    bytes: int
    sources: int
    wall_s: float
    cpu_s: float
    sizes: dict[str, dict[str, int]]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")


def build(out: Path, ref: str, ops: tuple[str, ...] | None) -> Path:
    """`python -m generator build` of `ref` into `out` (with `--ops` when `ops` is given)."""
    cmd = [sys.executable, "-m", "generator", "build", "--executorch-ref", ref, "--out", str(out)]
    if ops is not None:
        cmd += ["--ops", ",".join(ops)]
    _run(cmd)
    return out


def measure(library: Path, example: str, work: Path) -> Cost:
    """The costs of `library` (see `Cost`); `work` holds the object cache and the reports."""
    files = [p for p in library.rglob("*") if p.is_file()]
    sources = [p for p in (library / "src").rglob("*") if p.suffix in SOURCE_SUFFIXES]
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=work))
    check = [sys.executable, "-m", "generator", "check", str(library), "--compiler", "gcc-arm"]
    check += ["--no-run", "--cache-dir", str(cache)]
    cpu, wall = _children_cpu(), time.monotonic()
    _run([*check, "--example", example, "--json", str(work / "cold.json")])
    wall_s, cpu_s = time.monotonic() - wall, _children_cpu() - cpu
    report = work / f"sizes-{library.parent.name}.json"
    _run([*check, "--json", str(report)])
    data: dict[str, Any] = json.loads(report.read_text())
    sizes = {e["example"]: e["sizes"] for e in data["examples"]}
    return Cost(
        len(files), sum(p.stat().st_size for p in files), len(sources), wall_s, cpu_s, sizes
    )


def table(previous: Cost, default: Cost, example: str) -> str:
    """The markdown table of both costs and their ratio."""

    def row(what: str, a: float, b: float, unit: str = "") -> str:
        ratio = f"{b / a:.2f}x" if a else "-"
        return f"| {what} | {a:,.1f}{unit} | {b:,.1f}{unit} | {ratio} |"

    lines = [
        f"| | previous ({len(PREVIOUS_ROOT_OPS)} root ops) | default "
        f"({len(DEFAULT_ROOT_OPS)} root ops) | ratio |",
        "|---|---:|---:|---:|",
        row("library files", previous.files, default.files),
        row("library bytes", previous.bytes, default.bytes),
        row("sources compiled", previous.sources, default.sources),
        row(f"cold first compile ({example}), CPU", previous.cpu_s, default.cpu_s, " s"),
        row(f"cold first compile ({example}), wall", previous.wall_s, default.wall_s, " s"),
    ]
    for name in sorted(previous.sizes):
        for key in ("flash", "ram", "dynamic_flash", "dynamic_ram"):
            a, b = previous.sizes[name].get(key), default.sizes.get(name, {}).get(key)
            if a is not None and b is not None:
                lines.append(row(f"{name} {key}", a, b, " B"))
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", default="main")
    parser.add_argument("--work", type=Path, help="work folder (default: a new temporary one)")
    parser.add_argument("--previous", type=Path, help="a library built with the previous ops")
    parser.add_argument("--default", type=Path, help="a library built with the default ops")
    parser.add_argument("--example", default="AddModel", help="the sketch compiled cold")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-opset-"))
    work.mkdir(parents=True, exist_ok=True)
    previous = args.previous or build(work / "previous" / "ExecuTorch", args.ref, PREVIOUS_ROOT_OPS)
    default = args.default or build(work / "default" / "ExecuTorch", args.ref, None)
    costs = [measure(lib, args.example, work) for lib in (previous, default)]
    print(table(costs[0], costs[1], args.example))
    flash_grew = [
        n
        for n, s in costs[0].sizes.items()
        if costs[1].sizes.get(n, {}).get("flash", 0) > s["flash"]
    ]
    print(
        f"\ncold first compile (CPU): {costs[1].cpu_s / costs[0].cpu_s:.2f}x the previous "
        f"(target: at most 2x); examples whose flash grew: {', '.join(flash_grew) or 'none'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
