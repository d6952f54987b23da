"""Step 6: vendor sources into the library tree.

- Each component's copy rules (data/vendored/*.yaml) bring the runtime, c10/torch headers,
  FlatBuffers, flatcc and CMSIS-NN, and the ref's model-conversion scripts when it has them.
- Only the operator sources that are registered ship: the `op_*.cpp` of each selected
  operator, then whatever headers and helper sources they need, found by following their
  includes (not by a hand list). A helper source ships when a header it implements is used:
  the `.cpp` of the same stem beside the header, or a `.cpp` in the header's folder that
  includes it and has no header of its own (the `pattern/` sources work that way).
- Of these helper sources and the components' sources, only those the shipped code links stay:
  `generator/pipeline/prune.py` leaves out the rest once the tree is complete.

`vendor_sources` is the step: all of the above, our own sources (data/library_template/src),
the board check (`board_check.py`) and the compact runtime's header (`compact.py`).
"""

from __future__ import annotations

import re
import shutil
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wcmatch import glob

from generator import data_dir
from generator.pipeline.board_check import write_board_check
from generator.pipeline.compact import write_compact_header
from generator.pipeline.components import Component, CopyRule
from generator.pipeline.patches import TEMPLATE_PLATFORM
from generator.pipeline.provenance import RefFiles
from generator.pipeline.sources import ExecutorchSource, ThirdParty
from generator.util.cache import StepCache, code_version, scan_tree, tree_hash
from generator.util.confine import confined_dest, confined_file, confined_path, is_inside
from generator.util.errors import FatalError
from generator.util.ui import Reporter

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
#: Where helper sources live: a header used from here brings the sources implementing it.
HELPER_ROOTS = ("kernels/", "backends/")
SOURCE_SUFFIXES = (".c", ".cpp", ".cc")
OP_SOURCE_PREFIX = "op_"
HEADER_SUFFIXES = (".h", ".hpp")
#: How messages name the ExecuTorch checkout when the caller gives no ref.
ET = "ExecuTorch"
#: Our own sources, copied over the vendored tree.
TEMPLATE_SRC = data_dir("library_template") / "src"


#: How copy rules read their globs (wcmatch): `*` and `?` stay within a folder, `**` as a whole
#: segment is any number of folders (none too), and wildcards match dot-files.
GLOB_FLAGS = glob.GLOBSTAR | glob.DOTGLOB


def apply_rule(rule: CopyRule, tree: Path, library: Path, what: str = "the checkout") -> list[Path]:
    """Copy the files of `rule` from `tree` into `library`.

    Every file is read through `confined_file` (a symbolic link inside `tree` ships as a
    regular file with its target's content) and written through `confined_dest`.

    Returns:
        Destination paths written, sorted (empty only for an optional rule).
    Raises:
        FatalError: when the source folder of a rule that is not optional is missing or
            matches nothing; when the folder or a matched file leaves `tree` (a symbolic
            link out) or is a special file (`what` names the component in the message).
    """
    source = confined_path(tree, rule.source, what)
    if rule.optional and not source.is_dir():
        return []
    if not source.is_dir():
        raise FatalError(
            f"{rule.source} is missing from the checkout at {tree}; the component's layout "
            "changed (update its copy rules in data/vendored/)"
        )
    matcher = glob.compile(rule.include, flags=GLOB_FLAGS, exclude=rule.exclude or None)
    written: list[Path] = []
    made: set[Path] = set()
    for rel, regular in _files_below(source):
        if not matcher.match(rel):
            continue
        if regular:
            # Reached from the resolved `source` through real folders only (the walk enters
            # no link), so it is inside the checkout: no `resolve` per file.
            path = source / rel
        else:
            path = confined_path(tree, f"{rule.source}/{rel}", what)
            if not path.is_file():
                continue  # a link to a folder, or a dangling one, inside the checkout
        dest = confined_dest(library, f"{rule.dest}/{rel}", what)
        if dest.parent not in made:
            dest.parent.mkdir(parents=True, exist_ok=True)
            made.add(dest.parent)
        shutil.copyfile(path, dest)
        written.append(dest)
    if not written and not rule.optional:
        raise FatalError(f"no file of {rule.source} matches {list(rule.include)}")
    return written


def _files_below(folder: Path) -> list[tuple[str, bool]]:
    """Every entry below `folder` that is not a folder (regular files, symbolic links, and
    special files, which the caller refuses when a rule matches them), as sorted POSIX paths
    relative to it, each with whether it is a regular file (not a link, not special). One
    `os.scandir` per folder: the vendoring step walks whole checkouts, where `rglob` plus a
    `stat` per path was most of a warm build's copy time. Folders are entered only when they
    are real folders (never through a symbolic link)."""
    return [(rel, entry.is_file(follow_symlinks=False)) for rel, entry in scan_tree(folder)]


@dataclass
class Vendored:
    """What `vendor_component` copied.

    Attributes:
        written: destination paths, the license last.
        optional: each optional rule, with the destination paths it wrote (empty when the
            tree has none of its files).
    """

    written: list[Path] = field(default_factory=list)
    optional: list[tuple[CopyRule, list[Path]]] = field(default_factory=list)


def vendor_component(
    component: Component, tree: Path, library: Path, sha: str | None = None
) -> Vendored:
    """Apply every copy rule of `component` (checked out at `sha`) and copy its license.

    Raises:
        FatalError: when the component's LICENSE (or a required rule's folder) is missing, or
            a path read leaves the checkout or is a special file (`apply_rule`).
    """
    what = f"{component.name} at {sha[:12]}" if sha else component.name
    license_path = confined_path(tree, component.license_file, what)
    if not license_path.is_file():
        raise FatalError(
            f"{component.name} at {tree} has no {component.license_file}; it cannot be "
            "redistributed without its license (is the checkout complete?)"
        )
    result = Vendored()
    for rule in component.files:
        written = apply_rule(rule, tree, library, what)
        result.written += written
        if rule.optional:
            result.optional.append((rule, written))
    dest = library / component.license_dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(license_path, dest)
    result.written.append(dest)
    return result


@dataclass
class IncludeClosure:
    """What following includes from the operator sources added.

    Attributes:
        added: ExecuTorch paths (relative to its root) copied into src/executorch/.
        unresolved: includes found in no vendored tree (system headers, or ones behind
            preprocessor conditions that a device build does not take).
    """

    added: list[str] = field(default_factory=list)
    unresolved: set[str] = field(default_factory=set)


def _et_path(library: Path, file: Path) -> str | None:
    """The ExecuTorch-relative path of a library file under src/executorch/, else None."""
    try:
        return file.relative_to(library / "src" / "executorch").as_posix()
    except ValueError:
        return None


def _implementing_sources(root: Path, header: str, what: str = ET) -> list[str]:
    """Helper sources that implement `header` (ExecuTorch-relative paths).

    Raises:
        FatalError: when a source read leaves the checkout or is a special file.
    """
    folder_rel = Path(header).parent
    folder = confined_path(root, folder_rel, what)
    stem = Path(header).stem
    found: list[str] = []
    for name in sorted(p.name for p in folder.iterdir() if p.suffix in SOURCE_SUFFIXES):
        if name.startswith(OP_SOURCE_PREFIX):
            continue  # an operator ships only when it is registered, never as a helper
        rel = (folder_rel / name).as_posix()
        source = confined_path(root, rel, what)
        if not source.is_file():
            continue
        if source.stem == stem:
            found.append(rel)
            continue
        has_own_header = any((folder / (source.stem + s)).exists() for s in HEADER_SUFFIXES)
        if has_own_header:
            continue
        includes = {m.group(2) for m in INCLUDE.finditer(source.read_text(errors="replace"))}
        if f"executorch/{header}" in includes or Path(header).name in includes:
            found.append(rel)
    return found


def follow_includes(
    root: Path, library: Path, starts: Iterable[Path], what: str = ET
) -> IncludeClosure:
    """Copy into `library` every ExecuTorch header and helper source reachable from `starts`.

    An include is looked up in the library only below `library` (one that resolves elsewhere
    is not read); one looked up in the checkout goes through `confined_file`.

    Args:
        root: ExecuTorch checkout.
        library: library tree being built (ExecuTorch files go under src/executorch/).
        starts: library files whose includes are followed (recursively).
        what: the ref, for messages.
    Returns:
        What was added and what could not be resolved.
    Raises:
        FatalError: when an include climbs out of the checkout (`executorch/../../x.h`), or
            resolves to a symbolic link out of it or a special file.
    """
    src = library / "src"
    closure = IncludeClosure()
    queue = deque(starts)
    seen: set[Path] = set()
    while queue:
        file = queue.popleft()
        if file in seen or not file.is_file():
            continue
        seen.add(file)
        for match in INCLUDE.finditer(file.read_text(encoding="utf-8", errors="replace")):
            quoted, name = match.group(1) == '"', match.group(2)
            candidates: list[tuple[Path, str | None]] = []
            if quoted:
                local = (file.parent / name).resolve()
                et_local = _et_path(library, local)
                candidates.append((local, et_local))
            if name.startswith("executorch/"):
                et_rel = name.removeprefix("executorch/")
                confined_path(root, et_rel, f"{what}: #include <{name}>")  # no `..` out
                candidates.append((src / name, et_rel))
            candidates.append((src / name, None))
            resolved = False
            for dest, et_rel in candidates:
                if is_inside(library, dest) and dest.is_file():
                    queue.append(dest)
                    resolved = True
                    break
                if et_rel is not None and confined_path(root, et_rel, what).is_file():
                    _copy_et(root, library, et_rel, closure, queue, what)
                    resolved = True
                    break
            if not resolved:
                closure.unresolved.add(name)
    return closure


def follow_includes_cached(
    root: Path,
    library: Path,
    starts: Sequence[Path],
    tree: Mapping[str, Any],
    steps: StepCache,
    what: str = ET,
) -> IncludeClosure:
    """`follow_includes`, its result a step-cache entry.

    Keyed by the ExecuTorch tree (`tree`: the ref's full SHA and the checked-out paths), the
    content of every file under the library's src/ at this point (what the includes are read
    from and resolved against), the starts and this module's code. On a hit the same files
    are copied from `root` without reading a single include (each still confined).

    Raises:
        FatalError: as `follow_includes` (`what` names the ref).
    """
    src = library / "src"
    key = {
        **tree,
        "src": tree_hash(src),
        "starts": [p.relative_to(library).as_posix() for p in starts],
        "code": code_version("pipeline.vendor"),
    }
    cached = steps.get("includes", key, _closure_from)
    if cached is not None and all(confined_path(root, rel, what).is_file() for rel in cached.added):
        for rel in cached.added:
            dest = confined_dest(src / "executorch", rel, what)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(confined_file(root, rel, what), dest)
        return cached
    closure = follow_includes(root, library, starts, what)
    steps.put("includes", key, {"added": closure.added, "unresolved": sorted(closure.unresolved)})
    return closure


def _closure_from(value: Any) -> IncludeClosure | None:
    """The stored closure, or None for a value of another shape (a miss)."""
    if not isinstance(value, dict):
        return None
    added, unresolved = value.get("added"), value.get("unresolved")
    if not isinstance(added, list) or not isinstance(unresolved, list):
        return None
    return IncludeClosure(added=[str(a) for a in added], unresolved={str(u) for u in unresolved})


def _copy_et(
    root: Path,
    library: Path,
    rel: str,
    closure: IncludeClosure,
    queue: deque[Path],
    what: str = ET,
) -> None:
    """Copy ExecuTorch's `rel` (and the helper sources implementing it) to src/executorch/.

    Raises:
        FatalError: when `rel` leaves the checkout or the library, or is a special file.
    """
    dest = confined_dest(library / "src" / "executorch", rel, what)
    if dest.is_file():
        return
    source = confined_file(root, rel, what)
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, dest)
    closure.added.append(rel)
    queue.append(dest)
    if rel.startswith(HELPER_ROOTS) and Path(rel).suffix in HEADER_SUFFIXES:
        for helper in _implementing_sources(root, rel, what):
            if not (library / "src" / "executorch" / helper).is_file():
                _copy_et(root, library, helper, closure, queue, what)


#: Where c10's Macros.h and Export.h look for the CMake-generated macros header.
CMAKE_MACROS = "src/torch/headeronly/macros/cmake_macros.h"
CMAKE_MACROS_TEMPLATE = data_dir("templates") / "src" / "cmake_macros.h"


def write_cmake_macros(library: Path) -> Path:
    """Write the c10/torch `cmake_macros.h` that CMake would generate (all options off).

    Raises:
        FatalError: when the vendored torch headers no longer include it from there.
    """
    macros = library / "src" / "torch" / "headeronly" / "macros"
    users = [
        p for p in macros.glob("*.h") if "torch/headeronly/macros/cmake_macros.h" in p.read_text()
    ]
    if not users:
        raise FatalError(
            f"no header in {macros.relative_to(library)} includes cmake_macros.h any more; "
            "the c10/torch layout changed, update generator/pipeline/vendor.py"
        )
    dest = library / CMAKE_MACROS
    shutil.copyfile(CMAKE_MACROS_TEMPLATE, dest)
    return dest


def vendor_op_sources(
    root: Path, library: Path, sources: Iterable[str], what: str = ET
) -> list[Path]:
    """Copy the selected operator sources (ExecuTorch-relative) under src/executorch/.

    Raises:
        FatalError: when a source leaves the checkout (or the library), or is not a regular
            file.
    """
    written = []
    for rel in sorted(set(sources)):
        source = confined_file(root, rel, what)
        dest = confined_dest(library / "src" / "executorch", rel, what)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, dest)
        written.append(dest)
    return written


@dataclass(frozen=True)
class VendoredSources:
    """What the vendor step copied beyond the copy rules' required files.

    Attributes:
        ref_files: what each optional copy rule found in the ref.
        headers_added: headers and helper sources found by following `#include`s.
        prunable: sources that ship only when linked (third-party and helper sources).
    """

    ref_files: tuple[RefFiles, ...]
    headers_added: int
    prunable: tuple[Path, ...] = ()


def vendor_sources(
    source: ExecutorchSource,
    third_party: ThirdParty,
    op_sources: Iterable[str],
    library: Path,
    rep: Reporter,
    et_tree: Mapping[str, Any],
    steps: StepCache,
) -> VendoredSources:
    """Copy every component's files, the op sources (`op_sources`, ExecuTorch-relative), our
    sources (data/library_template/src), the board check (`board_check.py`) and every header
    they include, into `library`; the include closure comes from the step cache (`steps`,
    keyed by `et_tree` and the tree so far) when it holds it. An optional copy rule that finds
    nothing in the ref is said on `rep`.

    Raises:
        FatalError: a component or source that cannot be vendored (`vendor_component`,
            `vendor_op_sources`, `write_cmake_macros`, `follow_includes`).
    """
    ref_files: list[RefFiles] = []
    components: list[tuple[Component, Path, str]] = [(source.component, source.root, source.sha)]
    components += [(tp.component, tp.path, tp.sha) for tp in third_party.all]
    prunable: list[Path] = []
    for component, tree, sha in components:
        done = vendor_component(component, tree, library, sha)
        prunable += done.written if component is not source.component else []
        for rule, written in done.optional:
            names = tuple(p.relative_to(library / rule.dest).as_posix() for p in written)
            if not names:
                rep.note(
                    f"{component.name} at {source.sha[:12]} has none of {rule.source}/"
                    f"{{{','.join(rule.include)}}}; {rule.dest}/ ships without them"
                )
            ref_files.append(RefFiles(component.name, rule.source, rule.dest, rule.include, names))
    what = f"ExecuTorch at {source.sha[:12]}"
    vendor_op_sources(source.root, library, op_sources, what)
    write_cmake_macros(library)
    shutil.copytree(
        TEMPLATE_SRC,
        library / "src",
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns(TEMPLATE_PLATFORM.name),
    )
    write_board_check(library)  # ExecuTorch.h includes it: a start of the include closure
    write_compact_header(library)  # compiler.h includes it (patch compact-runtime)
    starts = sorted(p for p in (library / "src").rglob("*") if p.suffix in (".h", ".cpp"))
    closure = follow_includes_cached(source.root, library, starts, et_tree, steps, what)
    prunable += [library / "src" / "executorch" / rel for rel in closure.added]
    return VendoredSources(tuple(ref_files), len(closure.added), tuple(prunable))
