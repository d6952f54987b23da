"""Step 12: ship only the sources the shipped code links (after the examples are written,
when src/ is final).

Some translation units are vendored because a folder holds them, not because the library
calls them: every source of a third-party component (CMSIS-NN's `Source/**`, flatcc's runtime)
and the helper sources found by following includes (`kernels/portable/cpu/util/*.cpp`, ...).
These are the *candidates*. Every other source under `src/` is a *root*: ExecuTorch's runtime,
the operator and kernel-registration sources, the prim ops and our own sources
(data/library_template/src), whatever their names and however many there are.

A candidate ships when the linker could take it, found from the objects, not from a hand list:

1. every root and candidate is compiled for the UNO Q (the target compiler and CPU flags of
   the check's `gcc-arm` toolchain, at `-O0` so every call the source makes is still in the
   object, a superset of what any optimization level keeps), and the sources CMSIS-NN's CPU
   features change (`FEATURE_DEPENDENT`) again for each other capability tier
   (`FEATURE_TARGETS`: scalar, MVE), whose kernels call helpers the UNO Q's DSP path does not;
2. each object's global symbols are read with the toolchain's `nm` (mangled names, as the
   linker matches them) and its section names with `objdump -h`;
3. from the roots, to a fixed point, a candidate is kept when it defines a symbol a kept
   object references and no kept object defines (a strong definer is preferred; when only
   weak definitions exist, every weak definer is kept), when it defines strongly a symbol
   that a kept object defines weakly (Arduino links library objects directly, so such a
   definition would override the weak one), when it has static constructors
   (`.init_array`, `.ctors`, `.preinit_array`: they run whether or not anything calls
   them), or when it contributes to a section whose `__start_`/`__stop_` symbols a kept
   object references;
4. a candidate another shipped file `#include`s is a header in that role and is kept.

Headers are never pruned, only `.c`/`.cpp`/`.S` translation units.

Why the target compiler and no other: CMSIS-NN picks its code paths by the CPU's features
(`__ARM_FEATURE_DSP`, `__ARM_FEATURE_MVE`), so the host's GCC would read other branches and
could drop a source the Cortex-M33 build calls. When `arm-none-eabi-gcc` (or its `nm` or
`objdump`) is not installed, or a root does not compile for the board, nothing is pruned:
every source ships, the build says why, and extras/PROVENANCE.txt records it. A candidate that
does not compile is kept (what it would define cannot be known).
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from generator.boards.budgets import UNO_Q
from generator.toolchain.gcc import ARDUINO_DEFINES, CORE_INCLUDES, SOURCE_SUFFIXES, arm_gcc
from generator.toolchain.objcache import CompileJob, CompileOutcome, ObjectCache
from generator.util.cache import StepCache, code_version, tree_hash
from generator.util.errors import FatalError

#: Sections whose entries the start-up code runs: an object with one of them is never pruned.
CONSTRUCTOR_SECTIONS = (".init_array", ".ctors", ".preinit_array")
#: nm's types (POSIX format) of references: undefined, and weak undefined (object or not).
UNDEFINED_TYPES = frozenset("Uwv")
#: nm's types of weak definitions (`W`, `V`); other upper-case types but `U` are strong
#: global definitions, and `u` (GNU unique) and `i` (indirect function) are global too.
WEAK_TYPES = frozenset("WV")
_GLOBAL_EXTRA = frozenset("ui")
_LINKER_BOUNDS = re.compile(r"^__(?:start|stop)_([A-Za-z_][A-Za-z0-9_]*)$")
_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
#: Files whose `#include`s are read for step 4 (sources included as text).
_TEXT_SUFFIXES = (".h", ".hpp", ".hh", ".inc", ".c", ".cpp", ".cc", ".S", ".ino")


@dataclass(frozen=True)
class Target:
    """The compiler the sources are compiled with, and the binutils that read the objects.

    Attributes:
        cc, cxx: C and C++ compilers; nm, objdump: the same toolchain's binutils;
        common: flags for every source (CPU, optimization); c, cxx_flags, asm: per language;
        defines: preprocessor definitions; includes: `-I` folders beyond the library's src/.
    """

    cc: str
    cxx: str
    nm: str
    objdump: str
    common: tuple[str, ...]
    c: tuple[str, ...]
    cxx_flags: tuple[str, ...]
    asm: tuple[str, ...]
    defines: tuple[str, ...]
    includes: tuple[str, ...]

    def missing(self) -> list[str]:
        """The tools of this target not found on PATH (empty: all there)."""
        tools = (self.cc, self.cxx, self.nm, self.objdump)
        return [tool for tool in dict.fromkeys(tools) if shutil.which(tool) is None]

    def argv(self, source: str) -> tuple[str, ...]:
        """Compiler and flags for `source` (by its suffix), run from the library folder."""
        inc = tuple(f"-I{i}" for i in ("src", *self.includes))
        if source.endswith(".c"):
            return (self.cc, *self.common, *self.c, *self.defines, *inc)
        if source.endswith(".S"):
            return (self.cc, *self.common, *self.asm, *self.defines, *inc)
        return (self.cxx, *self.common, *self.cxx_flags, *self.defines, *inc)

    def version(self) -> str:
        """The first line of `cc --version` ("arm-none-eabi-gcc (15:12.2.rel1-1) 12.2.1 ...")."""
        out = subprocess.run(
            [self.cc, "--version"], capture_output=True, text=True, check=False
        ).stdout
        return out.splitlines()[0].strip() if out else self.cc


_ARM_GCC = arm_gcc(UNO_Q.cpu_flags)
#: The UNO Q: the check's gcc-arm compilers and language flags, the board's CPU flags, -O0.
UNO_Q_TARGET = Target(
    cc=_ARM_GCC.cc,
    cxx=_ARM_GCC.cxx,
    nm="arm-none-eabi-nm",
    objdump="arm-none-eabi-objdump",
    common=(*UNO_Q.cpu_flags, "-O0"),
    c=_ARM_GCC.c,
    cxx_flags=_ARM_GCC.cxx_flags,
    asm=_ARM_GCC.asm,
    defines=ARDUINO_DEFINES,
    includes=tuple(str(p) for p in CORE_INCLUDES),
)


def _with_cpu(cpu_flags: tuple[str, ...]) -> Target:
    return dataclasses.replace(UNO_Q_TARGET, common=(*cpu_flags, "-O0"))


#: The other CMSIS-NN capability tiers, each as a CPU the sources are also compiled for, by
#: name: CMSIS-NN picks its kernels by the CPU's features (`arm_nn_math_types.h`: `ARM_MATH_DSP`
#: when `__ARM_FEATURE_DSP`, `ARM_MATH_MVEI` when `__ARM_FEATURE_MVE & 1`), and each path calls
#: its own helpers (the MVE depthwise convolution `arm_depthwise_conv_s8_opt` calls
#: `arm_nn_depthwise_conv_nt_t_s8`, which the Cortex-M33's DSP path never does; pruned for
#: the UNO Q alone, a Helium build failed to link). The UNO Q is the DSP tier. Scalar: the
#: Nano RP2040 Connect's Cortex-M0+ (`generator.boards.budgets`); MVE: a Cortex-M55 with MVE, the
#: stand-in for a Helium Cortex-M85 (no board of the table has MVE today; Debian's GCC 12 has
#: no cortex-m85). A candidate ships when any tier links it.
FEATURE_TARGETS: dict[str, Target] = {
    "scalar (cortex-m0plus)": _with_cpu(("-mcpu=cortex-m0plus", "-mthumb", "-mfloat-abi=soft")),
    "MVE (cortex-m55)": _with_cpu(("-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard")),
}
#: The sources whose objects the CPU's features change, compiled again for each of
#: `FEATURE_TARGETS`: CMSIS-NN's sources and the Cortex-M backend's ops, which include
#: CMSIS-NN's headers and test `__ARM_FEATURE_MVE` themselves. No other
#: source of the library tests a CPU feature macro (`grep -E "__ARM_FEATURE_(MVE|DSP)|
#: ARM_MATH_(MVEI|DSP)"` over src/ at cff6f4dd finds only CMSIS-NN's headers and those ops);
#: their UNO Q objects stand for every tier.
FEATURE_DEPENDENT = re.compile(r"^src/(cmsis-nn|executorch/backends/cortex_m)/")


@dataclass(frozen=True)
class ObjectSymbols:
    """What the linker sees of one object.

    Attributes:
        strong: global symbols defined strongly; weak: global symbols defined weakly;
        undefined: symbols referenced and not defined (weak references too);
        sections: section names; constructors: True when a constructor section has bytes.
    """

    strong: frozenset[str] = frozenset()
    weak: frozenset[str] = frozenset()
    undefined: frozenset[str] = frozenset()
    sections: frozenset[str] = frozenset()
    constructors: bool = False

    @property
    def defined(self) -> frozenset[str]:
        """Every global symbol defined here, strong or weak."""
        return self.strong | self.weak


def parse_nm(text: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(strong, weak, undefined) global symbols of `nm -P` output for one object.

    Local symbols (lower-case types but `u`, `i`, `w`, `v`) are left out: the linker never
    resolves another object's reference with them.
    """
    strong: set[str] = set()
    weak: set[str] = set()
    undefined: set[str] = set()
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 2 or len(parts[1]) != 1:
            continue
        name, kind = parts[0], parts[1]
        if kind in UNDEFINED_TYPES:
            undefined.add(name)
        elif kind in WEAK_TYPES:
            weak.add(name)
        elif (kind.isupper() and kind != "N") or kind in _GLOBAL_EXTRA:
            strong.add(name)
    return frozenset(strong), frozenset(weak), frozenset(undefined)


def parse_sections(text: str) -> dict[str, int]:
    """Section name -> size in bytes, from `objdump -h -w` output for one object."""
    sections: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0].isdigit():
            try:
                sections[parts[1]] = int(parts[2], 16)
            except ValueError:
                continue
    return sections


def read_object(target: Target, obj: Path) -> ObjectSymbols:
    """Symbols and sections of the object `obj`, read with the target's nm and objdump.

    Raises:
        FatalError: nm or objdump cannot read it.
    """
    symbols = subprocess.run(
        [target.nm, "-P", str(obj)], capture_output=True, text=True, check=False
    )
    headers = subprocess.run(
        [target.objdump, "-h", "-w", str(obj)], capture_output=True, text=True, check=False
    )
    if symbols.returncode != 0 or headers.returncode != 0:
        raise FatalError(
            f"cannot read the object {obj}: {(symbols.stderr + headers.stderr).strip()}"
        )
    strong, weak, undefined = parse_nm(symbols.stdout)
    sections = parse_sections(headers.stdout)
    return ObjectSymbols(
        strong=strong,
        weak=weak,
        undefined=undefined,
        sections=frozenset(sections),
        constructors=any(sections.get(name, 0) > 0 for name in CONSTRUCTOR_SECTIONS),
    )


def reachable(
    roots: Mapping[str, ObjectSymbols], candidates: Mapping[str, ObjectSymbols]
) -> dict[str, str]:
    """The candidates the roots reach, to a fixed point (rules 3 of the module docstring).

    Args:
        roots: objects that always ship, by name; candidates: objects that ship only when
            reached, by name.
    Returns:
        each kept candidate -> why (the first symbol or rule that kept it).
    """
    kept: dict[str, str] = {}
    strong: set[str] = set()
    weak: set[str] = set()
    undefined: set[str] = set()

    def take(obj: ObjectSymbols) -> None:
        strong.update(obj.strong)
        weak.update(obj.weak)
        undefined.update(obj.undefined)

    for obj in roots.values():
        take(obj)
    pending = dict(sorted(candidates.items()))
    for name, obj in list(pending.items()):
        if obj.constructors:
            kept[name] = "has static constructors"
            take(pending.pop(name))
    changed = True
    while changed:
        changed = False
        needed = undefined - strong - weak
        bounds = {m.group(1) for s in needed if (m := _LINKER_BOUNDS.match(s))}
        strong_definers = {s for obj in pending.values() for s in obj.strong & needed}
        for name, obj in list(pending.items()):
            reason = _why(obj, needed, strong_definers, weak, bounds)
            if reason:
                kept[name] = reason
                take(pending.pop(name))
                changed = True
    return kept


def _why(
    obj: ObjectSymbols,
    needed: set[str],
    strong_definers: set[str],
    kept_weak: set[str],
    bounds: set[str],
) -> str:
    """Why the candidate `obj` must ship given what is kept so far ("" when it need not)."""
    hits = sorted(obj.strong & needed)
    if hits:
        return f"defines {hits[0]}"
    hits = sorted((obj.weak & needed) - strong_definers)
    if hits:
        return f"defines {hits[0]} (weak)"
    hits = sorted(obj.strong & kept_weak)
    if hits:
        return f"overrides the weak {hits[0]}"
    hits = sorted(obj.sections & bounds)
    if hits:
        return f"adds to section {hits[0]}"
    return ""


@dataclass(frozen=True)
class Pruning:
    """What `prune_unreachable` did.

    Attributes:
        compiler: the compiler's `--version` first line ("" when nothing was compiled).
        roots: translation units that always ship; candidates: those that ship when reached.
        pruned: candidates removed, library-relative, sorted.
        kept: candidates kept, library-relative, with why, sorted.
        fallback: why nothing was pruned ("" when the analysis ran).
        compiles: the wall seconds of each compiler run of the analysis (none when every
            object came from the object cache, or the result from the step cache); not
            stored, not part of the library (`benchmarks/bench_build.py` reads it).
    """

    compiler: str = ""
    roots: int = 0
    candidates: int = 0
    pruned: tuple[str, ...] = ()
    kept: tuple[tuple[str, str], ...] = ()
    fallback: str = ""
    compiles: tuple[float, ...] = field(default=(), compare=False)

    @property
    def summary(self) -> str:
        """One line: what was pruned and how, or why nothing was."""
        if self.fallback:
            return f"none pruned, every source ships: {self.fallback}"
        return (
            f"{len(self.pruned)} of {self.candidates} third-party and helper sources pruned: "
            f"nothing shipped links them (every source compiled with {self.compiler} at -O0 for "
            f"the {UNO_Q.name} and the CMSIS-NN sources again for its scalar and MVE tiers, "
            f"symbols read with nm and followed to a fixed point from the {self.roots} other "
            "sources)"
        )

    @property
    def pruned_by_folder(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The pruned files grouped by folder: (folder, file names), sorted."""
        groups: dict[str, list[str]] = {}
        for path in self.pruned:
            folder, _, name = path.rpartition("/")
            groups.setdefault(folder, []).append(name)
        return tuple((folder, tuple(names)) for folder, names in sorted(groups.items()))


@dataclass
class _Compiled:
    symbols: dict[str, ObjectSymbols] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)


def _compile(
    library: Path, batch: list[tuple[Target, str]], objects: Path
) -> tuple[dict[Target, _Compiled], tuple[float, ...]]:
    """Compile each (target, library-relative source) of `batch`, in its order, as one pool
    of jobs, and read each object as soon as it is compiled (while other compiles run).

    Returns:
        what each target compiled; the wall seconds of every compiler run (hits: none).
    """
    cache = ObjectCache(objects)
    jobs = {CompileJob(target.argv(src), src, library): target for target, src in batch}
    read: dict[CompileJob, ObjectSymbols] = {}

    def read_now(outcome: CompileOutcome) -> None:
        if outcome.object is not None:
            read[outcome.job] = read_object(jobs[outcome.job], outcome.object)

    outcomes = cache.compile_each(list(jobs), read_now)
    done = {target: _Compiled() for target in jobs.values()}
    for o in outcomes:
        if o.object is None:
            done[jobs[o.job]].failed[o.job.source] = o.log
        else:
            done[jobs[o.job]].symbols[o.job.source] = read[o.job]
    return done, tuple(o.seconds for o in outcomes if not o.hit)


def _included_as_text(library: Path, names: set[str]) -> dict[str, str]:
    """File names of `names` that a file under src/ `#include`s: name -> the including file."""
    found: dict[str, str] = {}
    for path in sorted((library / "src").rglob("*")):
        if path.suffix not in _TEXT_SUFFIXES or not path.is_file():
            continue
        for match in _INCLUDE.finditer(path.read_text(encoding="utf-8", errors="replace")):
            name = match.group(1).rpartition("/")[2]
            if name in names and name not in found:
                found[name] = path.relative_to(library).as_posix()
    return found


def translation_units(library: Path) -> list[str]:
    """Every source under the library's src/ that Arduino compiles, library-relative, sorted."""
    src = library / "src"
    return sorted(
        p.relative_to(library).as_posix()
        for p in src.rglob("*")
        if p.suffix in SOURCE_SUFFIXES
        and p.is_file()
        and not any(part.startswith(".") for part in p.relative_to(src).parts)
    )


def _first_error(log: str) -> str:
    for line in log.splitlines():
        if "error" in line:
            return line.strip()
    return log.strip().splitlines()[0] if log.strip() else "no output"


def prune_unreachable(
    library: Path,
    candidates: Iterable[Path],
    objects: Path,
    target: Target = UNO_Q_TARGET,
    steps: StepCache | None = None,
) -> Pruning:
    """Delete from `library` the candidate sources that nothing shipped links.

    The result is a step-cache entry (`steps`) keyed by everything the analysis reads: the
    content of every file under src/ (sources and the headers they include), the candidates,
    the target's tools, flags and compiler version, the core headers the sources include
    (`CORE_INCLUDES`) and this module's code. A warm build of an unchanged tree so deletes the
    same files without compiling or reading a single object.

    Args:
        library: the library tree, complete but for examples and metadata (patched, with
            the schema headers).
        candidates: sources that ship only when reached (absolute paths in `library`; the
            ones no longer there, and headers, are ignored).
        objects: the object cache folder (shared with `check`).
        target: the compiler and binutils.
        steps: the build's step cache (None: always analyse).
    Returns:
        what was pruned and kept, or the fallback reason when nothing was pruned.
    Raises:
        FatalError: an object cannot be read by the target's nm or objdump.
    """
    units = translation_units(library)
    wanted = {p.relative_to(library).as_posix() for p in candidates}
    pool = [u for u in units if u in wanted]
    roots = [u for u in units if u not in wanted]
    if not pool:
        return Pruning(roots=len(roots), fallback="no candidate source")
    missing = target.missing()
    if missing:
        return Pruning(
            roots=len(roots),
            candidates=len(pool),
            fallback=f"{', '.join(missing)} not found (scripts/install-deps installs it)",
        )
    key = _pruning_key(library, pool, target) if steps is not None else {}
    cached = steps.get("prune", key, _pruning_from) if steps is not None else None
    if cached is not None and all((library / rel).is_file() for rel in cached.pruned):
        _delete(library, cached.pruned)
        return cached
    result = _analyse(library, pool, roots, target, objects)
    if steps is not None and not result.fallback:
        steps.put("prune", key, _pruning_to(result))
    return result


def _analyse(
    library: Path, pool: list[str], roots: list[str], target: Target, objects: Path
) -> Pruning:
    """`prune_unreachable` without its cache: compile, read the objects, follow, delete."""
    # One batch, the UNO Q's and the other tiers' compiles together, the largest sources first
    # (longest-processing-time order): every core stays busy to the end, where a batch of
    # each tier after the UNO Q's left cores idle at the end of each.
    tiers = _tiers(target)
    batch = [(target, u) for u in [*roots, *pool]]
    batch += [
        (t, u) for t in tiers.values() for u in [*roots, *pool] if FEATURE_DEPENDENT.search(u)
    ]
    batch.sort(key=lambda job: -(library / job[1]).stat().st_size)
    by_target, compiles = _compile(library, batch, objects)
    compiled = by_target[target]
    broken = sorted(r for r in roots if r in compiled.failed)
    if broken:
        return Pruning(
            compiler=target.version(),
            roots=len(roots),
            candidates=len(pool),
            fallback=f"{broken[0]} does not compile for {UNO_Q.name}: "
            f"{_first_error(compiled.failed[broken[0]])}",
            compiles=compiles,
        )
    kept = reachable(
        {r: compiled.symbols[r] for r in roots},
        {c: compiled.symbols[c] for c in pool if c in compiled.symbols},
    )
    for tier, extra in tiers.items():
        for c, why in _tier_keeps(pool, roots, compiled, by_target.get(extra, _Compiled())).items():
            kept.setdefault(c, f"{why} (the {tier} tier)")
    for c in pool:
        if c in compiled.failed:
            kept[c] = f"does not compile for {UNO_Q.name}: {_first_error(compiled.failed[c])}"
    texts = _included_as_text(library, {c.rpartition("/")[2] for c in pool if c not in kept})
    for c in pool:
        name = c.rpartition("/")[2]
        if c not in kept and name in texts:
            kept[c] = f"included by {texts[name]}"
    pruned = sorted(c for c in pool if c not in kept)
    _delete(library, pruned)
    return Pruning(
        compiler=target.version(),
        roots=len(roots),
        candidates=len(pool),
        pruned=tuple(pruned),
        kept=tuple(sorted(kept.items())),
        compiles=compiles,
    )


def _tiers(target: Target) -> dict[str, Target]:
    """The tiers compiled beside `target`: `FEATURE_TARGETS` for the UNO Q's, none for
    another target (a test's host compiler has no CPU features to choose from)."""
    return FEATURE_TARGETS if target == UNO_Q_TARGET else {}


def _tier_keeps(
    pool: list[str], roots: list[str], compiled: _Compiled, tier: _Compiled
) -> dict[str, str]:
    """The candidates a tier's CPU reaches (`reachable`), with the objects of the
    `FEATURE_DEPENDENT` sources as `tier` compiled them for it and every other object as
    `compiled` (the UNO Q's) has it. A source that does not compile for the tier keeps its
    UNO Q object; one that did not compile for the UNO Q is not the tier's either."""
    again = {u: tier.symbols[u] for u in tier.symbols if u in compiled.symbols}
    if not again:
        return {}
    symbols = {**compiled.symbols, **again}
    return reachable(
        {r: symbols[r] for r in roots},
        {c: symbols[c] for c in pool if c in symbols},
    )


def _delete(library: Path, pruned: Iterable[str]) -> None:
    """Remove the library-relative `pruned` sources and the folders they leave empty."""
    for rel in pruned:
        path = library / rel
        path.unlink()
        _remove_empty_parents(path.parent, library / "src")


def _pruning_key(library: Path, pool: list[str], target: Target) -> dict[str, object]:
    """What the analysis of `prune_unreachable` reads, as a step-cache key."""
    return {
        "src": tree_hash(library / "src"),
        "candidates": pool,
        "target": [list(target.argv(s)) for s in ("a.c", "a.cpp", "a.S")]
        + [target.nm, target.objdump],
        "tiers": {name: list(t.argv("a.c")) for name, t in _tiers(target).items()},
        "compiler": target.version(),
        "core": [tree_hash(Path(i)) for i in target.includes],
        "code": code_version("pipeline.prune", "toolchain.objcache"),
    }


def _pruning_to(p: Pruning) -> dict[str, object]:
    return {
        "compiler": p.compiler,
        "roots": p.roots,
        "candidates": p.candidates,
        "pruned": list(p.pruned),
        "kept": [list(k) for k in p.kept],
    }


def _pruning_from(value: object) -> Pruning | None:
    """The stored `Pruning`, or None for a value of another shape (a miss)."""
    if not isinstance(value, dict):
        return None
    try:
        return Pruning(
            compiler=str(value["compiler"]),
            roots=int(value["roots"]),
            candidates=int(value["candidates"]),
            pruned=tuple(str(x) for x in value["pruned"]),
            kept=tuple((str(a), str(b)) for a, b in value["kept"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _remove_empty_parents(folder: Path, stop: Path) -> None:
    """Remove `folder` and its parents up to (not including) `stop` while they are empty."""
    while folder != stop and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent
