"""Benchmark: time a cold and warm regenerations of the library (not a test).

    python benchmarks/bench_build.py [--executorch-ref REF] [--executorch-repo URL] [--runs N]
        [--all-ops] [--max-warm SECONDS] [--max-cold SECONDS]

Cold: an empty cache (every checkout fetched, every step run). Then, on that cache, `--runs`
warm rebuilds (median shown) of the same ref into the same `--out`, each kind side by side:

- warm: the step cache on (the op set choice and the codegen read from it);
- warm, no step cache: `EXECUTORCH_ARDUINO_NO_STEP_CACHE=1` (every step runs; the clones are
  still reused);
- warm, by SHA: the ref given as its full SHA, so the difference with `warm` is what
  re-resolving a branch (`git ls-remote`, which every run of a branch does) costs.

`--all-ops` builds every portable operator (the `build --all-ops` library) in every run.
Targets (issue 16): warm under 1.0 s, cold default under 30 s, cold `--all-ops` under 180 s, on
an otherwise idle machine with local mirrors; `--max-warm`/`--max-cold` make the script exit 1
when a median (warm) or the cold run is slower.

Every run's tree must be byte-identical to the cold one (`generator.util.cache.tree_hash`;
extras/PROVENANCE.txt and extras/library.json aside for the SHA run, as they record the ref
as given): the script exits 1 otherwise, or when the warm median exceeds `--max-warm`. Prints
the wall times (in-process: `build_library`, not interpreter start-up), files and bytes
written, kernels registered, and the operator sources shipped against every portable operator
source of the ref.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generator.library.layout import LIBRARY_FACTS_FILE, PROVENANCE_FILE
from generator.pipeline.run import (
    BuildOptions,
    BuildResult,
    build_library,
)
from generator.util.cache import NO_STEP_CACHE_ENV, tree_hash
from generator.util.urls import DEFAULT_EXECUTORCH_REPO

#: The files that record the ref as given (a branch, or the SHA it names).
REF_RECORDS = (PROVENANCE_FILE, LIBRARY_FACTS_FILE)


def _tree(out: Path, *, provenance: bool = True) -> str:
    """`tree_hash` of `out`; without `provenance`, of all but the two files that record the
    ref as given (extras/PROVENANCE.txt and extras/library.json)."""
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
        "--max-warm", type=float, default=None, help="fail when the warm median is slower"
    )
    parser.add_argument("--max-cold", type=float, default=None, help="fail when cold is slower")
    args = parser.parse_args()
    os.environ.pop(NO_STEP_CACHE_ENV, None)
    with tempfile.TemporaryDirectory(prefix="bench-build-") as tmp:
        options = BuildOptions(
            executorch_ref=args.executorch_ref,
            executorch_repo=args.executorch_repo,
            cache_dir=Path(tmp) / "cache",
            all_ops=args.all_ops,
        )
        out = Path(tmp) / "ExecuTorch"
        cold = build_library(options, out)
        reference = {True: _tree(out), False: _tree(out, provenance=False)}
        kinds: list[tuple[str, list[BuildResult]]] = [("cold", [cold])]
        different: list[str] = []

        def run(label: str, opts: BuildOptions, no_cache: bool) -> None:
            same_ref = opts.executorch_ref == options.executorch_ref
            if no_cache:
                os.environ[NO_STEP_CACHE_ENV] = "1"
            try:
                results: list[BuildResult] = []
                for _ in range(args.runs):
                    results.append(build_library(opts, out))
                    if _tree(out, provenance=same_ref) != reference[same_ref]:
                        different.append(label)
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
    if args.max_warm is not None and warm > args.max_warm:
        print(f"warm median {warm:.2f} s exceeds --max-warm {args.max_warm:.2f} s")
        return 1
    if args.max_cold is not None and cold.seconds > args.max_cold:
        print(f"cold {cold.seconds:.2f} s exceeds --max-cold {args.max_cold:.2f} s")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
