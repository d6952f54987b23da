"""Benchmark: time a cold and a warm regeneration of the library (not a test).

    python benchmarks/bench_build.py [--executorch-ref REF] [--executorch-repo URL]

Cold: an empty cache (every checkout fetched). Warm: the same cache again (nothing to fetch).
Prints the wall times, files and bytes written, kernels registered, and the operator sources
shipped against every portable operator source of the ref.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generator.pipeline import DEFAULT_EXECUTORCH_REPO, BuildOptions, build_library


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executorch-ref", default="main")
    parser.add_argument("--executorch-repo", default=DEFAULT_EXECUTORCH_REPO)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-build-") as tmp:
        options = BuildOptions(
            executorch_ref=args.executorch_ref,
            executorch_repo=args.executorch_repo,
            cache_dir=Path(tmp) / "cache",
        )
        rows = []
        for label in ("cold", "warm"):
            result = build_library(options, Path(tmp) / label / "ExecuTorch")
            rows.append((label, result))
    print(f"ExecuTorch {args.executorch_ref} -> {rows[0][1].sha}")
    print(f"{'run':<6}{'seconds':>9}{'files':>8}{'bytes':>12}{'kernels':>9}{'op sources':>14}")
    for label, r in rows:
        print(
            f"{label:<6}{r.seconds:>9.1f}{r.files:>8}{r.bytes:>12,}{r.kernel_count:>9}"
            f"{f'{r.op_sources}/{r.op_sources_available}':>14}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
