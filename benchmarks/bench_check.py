"""Benchmark `check` on a library: per-example sizes and arena, wall time cold and warm.

    python benchmarks/bench_check.py LIBRARY_DIR [--compiler gcc-arm] [--no-run]

Cold: an empty object cache (a temporary folder), so every source is compiled (for the
board and for the host sanitizer build). Warm: the same check again on that cache, so
only linking, the runs and the sizes are left. Prints one table per run, then the times.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from generator.check.report import CheckReport
from generator.check.run import run_check


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def print_figures(report: CheckReport) -> None:
    """One Markdown table: flash, RAM, Dynamic-link bytes, arena, seconds per example."""
    print(
        _row(["example", "passed", "flash B", "RAM B", "Dynamic-link B", "arena used/size B", "s"])
    )
    print(_row(["---"] * 7))
    for e in report.examples:
        print(
            _row(
                [
                    e.name,
                    "yes" if e.passed else "NO",
                    f"{e.sizes.flash:,} ({e.sizes.flash_percent}%)" if e.sizes else "-",
                    f"{e.sizes.ram:,} ({e.sizes.ram_percent}%)" if e.sizes else "-",
                    f"{e.dynamic.flash:,}" if e.dynamic else "-",
                    f"{e.arena.used:,} / {e.arena.size:,}" if e.arena else "-",
                    f"{e.seconds:.1f}",
                ]
            )
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library", type=Path)
    parser.add_argument("--compiler", default="gcc-arm")
    parser.add_argument("--no-run", action="store_true")
    args = parser.parse_args()

    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-check-") as cache:
        for label in ("cold", "warm"):
            start = time.monotonic()
            report = run_check(
                args.library, compiler=args.compiler, run=not args.no_run, cache_dir=Path(cache)
            )
            times[label] = time.monotonic() - start
            print(
                f"\n## {label}: {times[label]:.1f} s, object cache {report.cache.hits} reused, "
                f"{report.cache.misses} compiled, check {'passed' if report.passed else 'FAILED'}"
            )
            print_figures(report)
    print(f"\nwall time: cold {times['cold']:.1f} s, warm {times['warm']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
