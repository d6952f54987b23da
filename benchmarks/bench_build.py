"""Benchmark: time a cold and warm regenerations of the library against their targets (not a
test).

    python benchmarks/bench_build.py [--executorch-ref REF] [--executorch-repo URL] [--runs N]
        [--all-ops] [--cache-dir DIR] [--max-ratio R] [--max-warm SECONDS]
        [--max-cold SECONDS]

Cold: an empty cache (every checkout fetched, every step run, every object compiled). Then, on
that cache, `--runs` warm rebuilds (median shown) of the same ref into the same `--out`, each
kind side by side:

- warm: the step cache on (the op set choice, the codegen, the pruning read from it);
- warm, no step cache: `EXECUTORCH_ARDUINO_NO_STEP_CACHE=1` (every step runs; the clones and
  the objects are still reused);
- warm, by SHA: the ref given as its full SHA, so the difference with `warm` is what
  re-resolving a branch (`git ls-remote`, which every run of a branch does) costs.

The cache is a new temporary folder, or `--cache-dir` (it must be missing or empty: the
benchmark never empties a cache someone else uses, such as the user cache folder).

Targets (issues 16 and 30), measured in the same run on the machine it runs on:

- cold within `--max-ratio` (1.15) times the pruning compile's critical path. That floor is
  `max(longest, total / cores)`: `total` the sum of the wall seconds of every compiler run of
  the cold build's pruning step (`BuildResult.prune_compiles`: each source for the UNO Q and
  the CMSIS-NN sources again for each other tier, `generator/pipeline/prune.py`), `longest`
  the longest one, `cores` `os.cpu_count()` (the object cache's pool runs one compile per
  core). Why it is the floor: a cold build must run every one of those compiles (the
  pruning reads their objects, and nothing cached them), they are independent (no compile
  waits for another's output, so the longest chain of compiles that must run one after
  another is one compile), and `cores` workers cannot finish `total` seconds of work sooner
  than `total / cores`, nor any schedule sooner than its longest job. The rest of the build
  (checkouts, op set, codegen, reading the objects, metadata) is what the ratio charges. Wall
  seconds, not CPU seconds, so the floor and the build see the same load of a shared
  machine (the ratio holds under load; the absolute times do not);
- warm: the median of `--runs` (5) under `--max-warm` (1.0 s);
- optionally, cold under `--max-cold` seconds (absolute: only on an otherwise idle machine).

Every run's tree must be byte-identical to the cold one (`generator.util.cache.tree_hash`);
the SHA runs' trees byte-identical to each other, and to the cold one but for the four files
that record the ref as given (`REF_RECORDS`: extras/PROVENANCE.txt, extras/library.json,
README.md and library.properties, which say "commit X of `main`" for a branch and "commit X"
for a SHA). The script exits 1 when a tree differs or a target is missed. Prints the wall
times (in-process: `build_library`, not interpreter start-up), the pruning step's and the
floor, files and bytes written, kernels registered, and the operator sources shipped against
every portable operator source of the ref.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generator.library.layout import LIBRARY_FACTS_FILE, PROPERTIES_FILE, PROVENANCE_FILE
from generator.pipeline.run import (
    BuildOptions,
    BuildResult,
    build_library,
)
from generator.util.cache import NO_STEP_CACHE_ENV, tree_hash
from generator.util.urls import DEFAULT_EXECUTORCH_REPO

#: The files that record the ref as given (a branch, or the SHA it names): the provenance
#: records, and the README's and library.properties' "at commit X of `REF`"
#: (data/library_template/README.md.jinja, library.properties.jinja).
REF_RECORDS = (PROVENANCE_FILE, LIBRARY_FACTS_FILE, "README.md", PROPERTIES_FILE)
#: The build's step that compiles every source (`generator/pipeline/run.py`).
PRUNE_STEP = "ship only the sources the shipped code links"
#: The targets (issue 30): cold over the floor, warm median in seconds.
MAX_RATIO = 1.15
MAX_WARM = 1.0


@dataclass
class StepTimes:
    """A `generator.util.ui.Reporter` that keeps each step's wall seconds, by name."""

    seconds: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        started = time.monotonic()
        yield
        self.seconds[name] = time.monotonic() - started

    def note(self, message: str) -> None:
        pass


def floor(compiles: tuple[float, ...], cores: int) -> float:
    """The pruning compile's critical path: `max(longest, total / cores)` seconds of the
    compiler runs' wall seconds `compiles` (see the module docstring); 0.0 for none."""
    if not compiles:
        return 0.0
    return max(max(compiles), sum(compiles) / cores)


def _tree(out: Path, *, provenance: bool = True) -> str:
    """`tree_hash` of `out`; without `provenance`, of all but the files that record the ref as
    given (`REF_RECORDS`)."""
    if provenance:
        return tree_hash(out)
    records = {out / name: (out / name).read_bytes() for name in REF_RECORDS}
    for path in records:
        path.unlink()
    try:
        return tree_hash(out)
    finally:
        for path, data in records.items():
            path.write_bytes(data)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executorch-ref", default="main")
    parser.add_argument("--executorch-repo", default=DEFAULT_EXECUTORCH_REPO)
    parser.add_argument("--runs", type=int, default=5, help="warm runs of each kind (median)")
    parser.add_argument("--all-ops", action="store_true", help="every portable operator")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="cache folder for the runs, missing or empty (default: a temporary one)",
    )
    parser.add_argument(
        "--max-ratio",
        type=float,
        default=MAX_RATIO,
        help=f"fail when cold exceeds this many times the floor (default {MAX_RATIO})",
    )
    parser.add_argument(
        "--max-warm",
        type=float,
        default=MAX_WARM,
        help=f"fail when the warm median is slower, seconds (default {MAX_WARM})",
    )
    parser.add_argument("--max-cold", type=float, default=None, help="fail when cold is slower")
    args = parser.parse_args()
    if args.cache_dir is not None and args.cache_dir.exists() and any(args.cache_dir.iterdir()):
        parser.error(f"--cache-dir {args.cache_dir} is not empty: the cold run needs an empty one")
    os.environ.pop(NO_STEP_CACHE_ENV, None)
    with tempfile.TemporaryDirectory(prefix="bench-build-") as tmp:
        options = BuildOptions(
            executorch_ref=args.executorch_ref,
            executorch_repo=args.executorch_repo,
            cache_dir=args.cache_dir or Path(tmp) / "cache",
            all_ops=args.all_ops,
        )
        out = Path(tmp) / "ExecuTorch"
        steps = StepTimes()
        cold = build_library(options, out, steps)
        reference = {True: _tree(out), False: _tree(out, provenance=False)}
        kinds: list[tuple[str, list[BuildResult]]] = [("cold", [cold])]
        different: list[str] = []

        def run(label: str, opts: BuildOptions, no_cache: bool) -> None:
            same_ref = opts.executorch_ref == options.executorch_ref
            if no_cache:
                os.environ[NO_STEP_CACHE_ENV] = "1"
            try:
                results: list[BuildResult] = []
                whole: set[str] = set()
                for _ in range(args.runs):
                    results.append(build_library(opts, out))
                    whole.add(_tree(out))
                    if _tree(out, provenance=same_ref) != reference[same_ref]:
                        different.append(label)
                if len(whole) > 1:
                    different.append(f"{label} (its runs differ from each other)")
            finally:
                os.environ.pop(NO_STEP_CACHE_ENV, None)
            kinds.append((label, results))

        run("warm", options, no_cache=False)
        run("warm, no step cache", options, no_cache=True)
        run("warm, by SHA", replace(options, executorch_ref=cold.sha), no_cache=False)

    print(f"ExecuTorch {args.executorch_ref} -> {cold.sha}")
    print(
        f"{'run':<22}{'median s':>9}{'min s':>7}{'max s':>7}{'files':>7}{'bytes':>12}"
        f"{'kernels':>9}{'op sources':>12}"
    )
    for label, results in kinds:
        times = [r.seconds for r in results]
        r = results[-1]
        print(
            f"{label:<22}{statistics.median(times):>9.2f}{min(times):>7.2f}{max(times):>7.2f}"
            f"{r.files:>7}{r.bytes:>12,}{r.kernel_count:>9}"
            f"{f'{r.op_sources}/{r.op_sources_available}':>12}"
        )
    if different:
        print(f"NOT byte-identical to the cold build: {', '.join(sorted(set(different)))}")
        return 1
    print(f"every tree byte-identical to the cold build (tree_hash {reference[True][:16]})")
    warm = statistics.median(r.seconds for r in dict(kinds)["warm"])
    branch = warm - statistics.median(r.seconds for r in dict(kinds)["warm, by SHA"])
    print(f"re-resolving {args.executorch_ref!r} each run costs about {branch:.2f} s")
    return _verdict(args, cold, steps, warm)


def _verdict(args: argparse.Namespace, cold: BuildResult, steps: StepTimes, warm: float) -> int:
    """Print the cold run against its floor and the warm median against its target; 1 when a
    target is missed, else 0."""
    cores = max(1, os.cpu_count() or 1)
    compiles = cold.prune_compiles
    bound = floor(compiles, cores)
    prune = steps.seconds.get(PRUNE_STEP, 0.0)
    print(
        f"pruning compile: {len(compiles)} compiler runs, {sum(compiles):.1f} s in all, the "
        f"longest {max(compiles, default=0.0):.1f} s, on {cores} cores; the step took "
        f"{prune:.1f} s, the rest of the cold build {cold.seconds - prune:.1f} s"
    )
    if bound <= 0:
        print("no compiler ran in the cold build: no floor to measure (toolchain missing?)")
        return 1
    ratio = cold.seconds / bound
    print(
        f"cold {cold.seconds:.1f} s = {ratio:.3f} x the floor {bound:.1f} s "
        f"(target <= {args.max_ratio:.2f}): {'met' if ratio <= args.max_ratio else 'MISSED'}"
    )
    print(
        f"warm median {warm:.2f} s (target <= {args.max_warm:.2f} s): "
        f"{'met' if warm <= args.max_warm else 'MISSED'}"
    )
    missed = ratio > args.max_ratio or warm > args.max_warm
    if args.max_cold is not None and cold.seconds > args.max_cold:
        print(f"cold {cold.seconds:.2f} s exceeds --max-cold {args.max_cold:.2f} s")
        missed = True
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
