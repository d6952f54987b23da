"""Benchmark the check's object cache (generator/toolchain/objcache.py) against ccache (not a test).

    python benchmarks/bench_objcache.py [--library DIR] [--repeat N] [--modes M,...]
        [--skip-correctness]

Needs ccache (Debian: `apt-get install ccache`; the generator itself does not use it). The
numbers and the conclusion are recorded at the top of generator/toolchain/objcache.py.

The compiles are exactly the ones `check` runs: every example of the library, for the board
(gcc-arm) and for the host sanitizer build, as the toolchains list them (a recording cache
stands in for the object cache to collect them). Always of the TINY library of
tests/support/check_fixtures.py; with `--library` also of a real one
(`python -m generator build --out DIR`). Each back end compiles them example by example, as
check does (an example's build reuses the library objects the one before it compiled):

- `plain`: the compiler, no cache (the floor of a cold run);
- `ours`: `ObjectCache`;
- `ccache`: ccache in its default mode (direct mode, falling back to the preprocessor);
- `ccache-depend`: `CCACHE_DEPEND=1` (direct mode, never the preprocessor; needs `-MD`);
- `ccache-nodirect`: `CCACHE_NODIRECT=1` (the preprocessor mode only);
- `ccache-listing`: the depend mode with ours' guard against shadowing headers: a file of the
  `listing_hash` of each of the job's `-I` folders (the names of the files under it, not
  where it is), written once per include path, hashed into the key by `CCACHE_EXTRAFILES`.

Every ccache run has its own `CCACHE_DIR`, no configuration file, `hash_dir = false` (ours does
not hash the working directory either, so two copies of a library share objects; the host
build's `-g` would otherwise put the folder in the key) and compiles with `-MD -MF`, as ours
does. Times: cold (empty cache), warm (the same compiles again), warm-moved (the library copied
to another folder, same cache). Files are aged past ccache's "too new header" guard (2 s)
before each run, as a library built a while ago would be.

Correctness, on a tiny library whose sketch prints a header's macro, with a warm cache: a header
changed; a new header that shadows the old one on the include path (in the sketch folder, found
before `src/`); cached objects corrupted (truncated, and one byte flipped mid-file). A back end
is right when the build succeeds and every object equals a fresh compile's.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))  # TINY

from check_fixtures import HELLO_EXPECTED, HELLO_SKETCH, write_library

from generator.check.backends import GCC_ARM, HOST, GccToolchain
from generator.check.plan import library_examples, plan_build
from generator.toolchain.objcache import (
    CompileJob,
    CompileOutcome,
    ObjectCache,
    compiler_identity,
    include_dirs,
    listing_hash,
)

MODES = ("plain", "ours", "ccache", "ccache-depend", "ccache-nodirect", "ccache-listing")
CCACHE_ENV = {
    "plain": None,
    "ccache": {},
    "ccache-depend": {"CCACHE_DEPEND": "1"},
    "ccache-nodirect": {"CCACHE_NODIRECT": "1"},
    "ccache-listing": {"CCACHE_DEPEND": "1"},
}
#: ccache skips its direct mode for an include file changed in the second the compile starts.
AGE_SECONDS = 2.0

#: A batch: one example's compiles for one toolchain (what one `compile_all` gets).
Batch = list[CompileJob]


@dataclass
class _Recorder(ObjectCache):
    """Collects the jobs a toolchain's build hands the cache, compiles nothing."""

    batches: list[Batch] = field(default_factory=list)

    def compile_all(self, jobs: Sequence[CompileJob]) -> list[CompileOutcome]:
        self.batches.append(list(jobs))
        return [CompileOutcome(job, None, hit=False, log="recorded") for job in jobs]


def collect(library: Path, work: Path, toolchains: Sequence[GccToolchain]) -> list[Batch]:
    """The compiles `check` runs for `library` (every example, each toolchain), in order.

    The sketches' `.cpp` files land under `work/sketches` (their jobs point there)."""
    recorder = _Recorder(work)
    for toolchain in toolchains:
        for example in library_examples(library):
            toolchain.build(plan_build(library, example), work / "unused", recorder)
    return recorder.batches


def _job_name(job: CompileJob) -> str:
    return hashlib.sha256("\0".join((*job.argv, job.source, str(job.cwd))).encode()).hexdigest()


@dataclass
class Run:
    """One pass over the batches: wall seconds, CPU seconds (this process and its children:
    less sensitive than wall time to other load on the machine), the object of each job
    (None: failed), and the cache's hit count."""

    seconds: float
    cpu: float
    objects: list[Path | None]
    hits: int


def _cpu() -> float:
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class Backend:
    """A way to compile the batches: `plain`, `ours` or a ccache mode, with its own storage."""

    def __init__(self, mode: str, store: Path) -> None:
        self.mode = mode
        self.store = store
        self.builds = 0
        self._listings: dict[tuple[Path, ...], Path] = {}

    def run(self, batches: Sequence[Batch]) -> Run:
        self.builds += 1
        start, cpu = time.monotonic(), _cpu()
        if self.mode == "ours":
            compiler_identity.cache_clear()  # a check is a fresh process
            cache = ObjectCache(self.store / "objects")
            objects: list[Path | None] = []
            for batch in batches:
                objects += [o.object for o in cache.compile_all(batch)]
            return Run(time.monotonic() - start, _cpu() - cpu, objects, cache.stats.hits)
        before = self._ccache_hits()
        self._listings = {}
        objects = []
        workers = max(1, os.cpu_count() or 1)
        for b, batch in enumerate(batches):
            out = self.store / f"build{self.builds}" / str(b)  # check's per-example out_dir
            with ThreadPoolExecutor(max_workers=workers) as pool:
                objects += pool.map(lambda job, out=out: self._compile(job, out), batch)
        hits = self._ccache_hits() - before
        return Run(time.monotonic() - start, _cpu() - cpu, objects, hits)

    def _listing(self, job: CompileJob) -> Path:
        """A file naming every file under the job's include folders (one per include path,
        written once per run, as a wrapper would)."""
        dirs = tuple(include_dirs(job))
        path = self._listings.get(dirs)
        if path is None:
            text = "".join(f"{listing_hash(d)}\n" for d in dirs)  # names, not where
            path = self.store / "listings" / f"{hashlib.sha256(text.encode()).hexdigest()}.txt"
            if not path.is_file():  # an unchanged one keeps its age (ccache's too-new guard)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
            self._listings[dirs] = path
        return path

    def _env(self, job: CompileJob | None = None) -> dict[str, str]:
        extra = dict(CCACHE_ENV[self.mode] or {})
        if self.mode == "ccache-listing" and job is not None:
            extra["CCACHE_EXTRAFILES"] = str(self._listing(job))
        config = self.store / "ccache.conf"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.touch()
        return os.environ | {
            "CCACHE_DIR": str(self.store / "ccache"),
            "CCACHE_CONFIGPATH": str(config),
            "CCACHE_NOHASHDIR": "1",
            "CCACHE_MAXSIZE": "0",
            **extra,
        }

    def _compile(self, job: CompileJob, out: Path) -> Path | None:
        obj = out / f"{_job_name(job)}.o"
        obj.parent.mkdir(parents=True, exist_ok=True)
        argv = [*job.argv, "-MD", "-MF", str(obj.with_suffix(".d")), "-c", job.source]
        argv += ["-o", str(obj)]
        if self.mode != "plain":
            argv.insert(0, "ccache")
        env = self._env(job)
        proc = subprocess.run(argv, cwd=job.cwd, env=env, capture_output=True, check=False)
        return obj if proc.returncode == 0 and obj.is_file() else None

    def _ccache_hits(self) -> int:
        if self.mode == "plain":
            return 0
        proc = subprocess.run(
            ["ccache", "--print-stats"], env=self._env(), capture_output=True, text=True
        )
        stats = dict(line.split("\t", 1) for line in proc.stdout.splitlines() if "\t" in line)
        return int(stats.get("direct_cache_hit", 0)) + int(stats.get("preprocessed_cache_hit", 0))

    def stored_objects(self) -> list[Path]:
        """The cached objects (ours: `o/**.o`; ccache: its result files)."""
        if self.mode == "ours":
            return sorted((self.store / "objects" / "o").rglob("*.o"))
        return sorted(p for p in (self.store / "ccache").rglob("*R") if p.is_file())


def age() -> None:
    """Wait out ccache's too-new-file guard for the files written just now (their ctime
    cannot be set back, so only waiting does it)."""
    time.sleep(AGE_SECONDS)


# -- timing --------------------------------------------------------------------------------------


def time_library(
    name: str, library: Path, work: Path, repeat: int, modes: Sequence[str]
) -> list[list[str]]:
    """Rows: mode, then wall / CPU seconds cold, warm and warm-moved (each the best of
    `repeat`; the rounds go over every mode in turn, so load from elsewhere spreads over all),
    then the warm and warm-moved hits of all compiles."""
    batches = collect(library, work / "sketches", (GCC_ARM, HOST))
    count = sum(len(b) for b in batches)
    moved = work / "moved" / library.name
    shutil.copytree(library, moved)
    moved_batches = collect(moved, work / "sketches", (GCC_ARM, HOST))
    age()
    best: dict[tuple[str, str], tuple[float, float]] = {}
    hits: dict[tuple[str, str], int] = {}
    for r in range(repeat):
        for mode in modes:
            backend = Backend(mode, work / f"{mode}-{r}")
            for label, jobs in (("cold", batches), ("warm", batches), ("moved", moved_batches)):
                if mode == "plain" and label != "cold":
                    continue
                run = backend.run(jobs)
                failed = sum(1 for o in run.objects if o is None)
                if failed:
                    print(f"  {name} {mode} {label}: {failed} compiles FAILED", file=sys.stderr)
                old = best.get((mode, label), (run.seconds, run.cpu))
                best[mode, label] = (min(old[0], run.seconds), min(old[1], run.cpu))
                hits[mode, label] = run.hits
                print(
                    f"  {name} round {r + 1} {mode} {label}: {run.seconds:.2f} s wall, "
                    f"{run.cpu:.2f} s CPU, {run.hits} hits",
                    file=sys.stderr,
                    flush=True,
                )
            shutil.rmtree(work / f"{mode}-{r}", ignore_errors=True)

    def cell(mode: str, label: str) -> str:
        wall_cpu = best.get((mode, label))
        return f"{wall_cpu[0]:.2f} / {wall_cpu[1]:.2f}" if wall_cpu else "-"

    return [
        [
            mode,
            cell(mode, "cold"),
            cell(mode, "warm"),
            cell(mode, "moved"),
            f"{hits[mode, 'warm']}/{count}, {hits[mode, 'moved']}/{count}"
            if mode != "plain"
            else "-",
        ]
        for mode in modes
    ]


# -- correctness ---------------------------------------------------------------------------------

PROBE_SKETCH = textwrap.dedent(
    """\
    #include "probe.h"
    void setup() { Serial.print("probe "); Serial.println(PROBE); }
    void loop() {}
    """
)


def _reference(batches: Sequence[Batch], work: Path) -> list[bytes | None]:
    run = Backend("plain", work).run(batches)
    return [o.read_bytes() if o is not None else None for o in run.objects]


def _verdict(run: Run, reference: list[bytes | None]) -> str:
    failed = sum(1 for o in run.objects if o is None)
    stale = sum(
        1
        for o, ref in zip(run.objects, reference, strict=True)
        if o is not None and o.read_bytes() != ref
    )
    if failed:
        return f"BUILD FAILED ({failed} compiles)"
    if stale:
        return f"WRONG: {stale} object(s) differ"
    return f"right ({run.hits} hits)"


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 3])


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x40
    path.write_bytes(bytes(data))


def correctness(mode: str, work: Path) -> list[str]:
    """Verdicts of `mode` for: changed header, shadowing header, truncated, flipped objects."""
    library = write_library(work / "Probe", {"Probe": (PROBE_SKETCH, HELLO_EXPECTED)})
    (library / "src" / "probe.h").write_text("#define PROBE 1\n")
    batches = collect(library, work / "sketches", (GCC_ARM,))
    backend = Backend(mode, work / "store")
    age()
    backend.run(batches)  # cold
    verdicts: list[str] = []

    def case(change: Callable[[], object]) -> None:
        change()
        age()
        reference = _reference(batches, work / f"ref{len(verdicts)}")
        verdicts.append(_verdict(backend.run(batches), reference))

    case(lambda: (library / "src" / "probe.h").write_text("#define PROBE 3\n"))
    case(lambda: (library / "examples" / "Probe" / "probe.h").write_text("#define PROBE 2\n"))
    for damage in (_truncate, _flip):

        def corrupt(damage: Callable[[Path], None] = damage) -> None:
            for path in backend.stored_objects():
                damage(path)

        case(corrupt)
    return verdicts


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join([*lines, *("| " + " | ".join(r) + " |" for r in rows)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", type=Path, help="a generated library to time as well")
    parser.add_argument("--repeat", type=int, default=1, help="runs per back end (best kept)")
    parser.add_argument("--skip-correctness", action="store_true")
    parser.add_argument(
        "--modes", default=",".join(MODES), help=f"back ends, comma-separated (of {MODES})"
    )
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    unknown = set(modes) - set(MODES)
    if unknown:
        parser.error(f"unknown back ends: {sorted(unknown)}")
    if shutil.which("ccache") is None:
        print("ccache is not installed (Debian: apt-get install ccache)", file=sys.stderr)
        return 1
    version = subprocess.run(["ccache", "--version"], capture_output=True, text=True).stdout
    print(f"{version.splitlines()[0]}; {os.cpu_count()} CPUs\n")
    header = ["back end", "cold wall / CPU s", "warm", "warm-moved", "warm hits, moved hits"]
    with tempfile.TemporaryDirectory(prefix="bench-objcache-") as tmp:
        work = Path(tmp)
        tiny = write_library(work / "tiny" / "Tiny", {"Hello": (HELLO_SKETCH, HELLO_EXPECTED)})
        targets = [("TINY", tiny)]
        if args.library:
            targets.append((args.library.name, args.library.resolve()))
        for name, library in targets:
            count = sum(len(b) for b in collect(library, work / "count", (GCC_ARM, HOST)))
            print(f"## {name}: {count} compiles (gcc-arm and host, every example)\n")
            rows = time_library(name, library, work / f"time-{name}", args.repeat, modes)
            print(_table(header, rows) + "\n", flush=True)
        if not args.skip_correctness:
            rows = []
            for mode in (m for m in modes if m != "plain"):
                rows.append([mode, *correctness(mode, work / f"correct-{mode}")])
            print("## correctness (each object compared with a fresh compile)\n")
            cases = ["changed header", "shadowing header", "truncated objects", "flipped byte"]
            print(_table(["back end", *cases], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
