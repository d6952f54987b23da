"""What `check` builds: the library's examples, and for one example the sources the Arduino
build rules compile.

Rules (as arduino-cli applies them to a sketch using a library in the 1.5 format):

- every `.c`, `.cpp` and `.S` under the library's `src/`, recursively, is compiled with
  only `src/` and the core's headers on the include path;
- the sketch's `.ino` files (the one named after the folder first, then the others in
  name order) become one `.cpp` with `#include <Arduino.h>` prepended; it and any `.c`,
  `.cpp`, `.S` beside it or under the sketch's own `src/` are compiled with the sketch
  folder, the library's `src/` and the core's headers on the include path;
- files and folders whose name starts with `.`, and version-control folders (`CVS`,
  `RCS`, `.git`, `.svn`, `.hg`, `.bzr`), are skipped everywhere, as the Arduino
  builder does (`IsSCCSOrHiddenFile`);
- everything is linked into one firmware with `--gc-sections`, the objects grouped as
  arduino-cli groups them (`link.py`: the library's objects or, with `dot_a_linkage=true`,
  its archive; the core as `core.a`).

The compilers, flags and link are the toolchain's (`backends.py`); the compile stage is
`compile.py`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from generator.library.layout import EXAMPLES
from generator.toolchain.gcc import SOURCE_SUFFIXES
from generator.toolchain.objcache import ObjectCache
from generator.util.atomic import write_atomic
from generator.util.errors import FatalError

#: Version-control folders the Arduino builder never looks into (the builder's
#: SOURCE_CONTROL_FOLDERS: CVS, RCS, .git, .svn, .hg, .bzr).
VCS_FOLDERS = frozenset({"CVS", "RCS", ".git", ".svn", ".hg", ".bzr"})


@dataclass(frozen=True)
class BuildPlan:
    """What one example's build compiles.

    Attributes:
        library: the library folder (the compilers run there).
        example: the example's name; sketch_dir: `examples/<name>` relative to library.
        library_sources: `src/...` sources, relative to library, sorted.
        sketch_sources: `.c/.cpp/.S` of the sketch folder, relative to library, sorted.
        ino_files: the sketch's `.ino` files in Arduino's order, relative to library.
    """

    library: Path
    example: str
    sketch_dir: Path
    library_sources: tuple[Path, ...]
    sketch_sources: tuple[Path, ...]
    ino_files: tuple[Path, ...]


def _ignored(path: Path, root: Path) -> bool:
    """True when `path` (under `root`) or a folder between them is hidden or version control."""
    return any(part.startswith(".") or part in VCS_FOLDERS for part in path.relative_to(root).parts)


def _sources_under(root: Path, base: Path) -> list[Path]:
    return sorted(
        p.relative_to(base)
        for p in root.rglob("*")
        if p.suffix in SOURCE_SUFFIXES and p.is_file() and not _ignored(p, root)
    )


def plan_build(library: Path, example: str) -> BuildPlan:
    """Collect the sources of `examples/<example>` and of the library.

    Raises:
        FatalError: the library has no `src/`, or the example no `<example>.ino`.
    """
    library = library.resolve()
    if not (library / "src").is_dir():
        raise FatalError(f"{library} has no src/ folder: is it an Arduino library?")
    sketch_dir = Path("examples") / example
    main_ino = library / sketch_dir / f"{example}.ino"
    if not main_ino.is_file():
        raise FatalError(
            f"{main_ino} does not exist; the library's examples are: "
            + ", ".join(sorted(p.name for p in (library / "examples").glob("*") if p.is_dir()))
        )
    others = sorted(
        p.relative_to(library)
        for p in (library / sketch_dir).glob("*.ino")
        if p != main_ino and not p.name.startswith(".")
    )
    inos = [main_ino.relative_to(library), *others]
    sketch_sources = [
        p.relative_to(library)
        for p in sorted((library / sketch_dir).iterdir())
        if p.suffix in SOURCE_SUFFIXES and p.is_file() and not p.name.startswith(".")
    ]
    if (library / sketch_dir / "src").is_dir():
        sketch_sources += _sources_under(library / sketch_dir / "src", library)
    return BuildPlan(
        library=library,
        example=example,
        sketch_dir=sketch_dir,
        library_sources=tuple(_sources_under(library / "src", library)),
        sketch_sources=tuple(sketch_sources),
        ino_files=tuple(inos),
    )


def sketch_cpp(plan: BuildPlan, cache: ObjectCache) -> Path:
    """Write the sketch's `.ino` files as one `.cpp`, as the Arduino builder does.

    The file lands at a path named by its content inside the cache, so an unchanged
    sketch keeps the same path and its object is reused.

    Returns:
        absolute path of `<Name>.ino.cpp`.

    Raises:
        FatalError: an `.ino` file is not UTF-8 text (the Arduino IDE saves UTF-8).
    """
    parts = ["#include <Arduino.h>\n"]
    for ino in plan.ino_files:
        parts.append(f'#line 1 "{ino.as_posix()}"\n')
        try:
            text = (plan.library / ino).read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            raise FatalError(
                f"{plan.library / ino} is not UTF-8 text ({e}); save the sketch as UTF-8"
            ) from None
        parts.append(text if text.endswith("\n") else text + "\n")
    content = "".join(parts)
    digest = hashlib.sha256(content.encode()).hexdigest()
    path = cache.root / "sketches" / digest[:16] / f"{plan.example}.ino.cpp"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        # A temporary file of its own: another check sharing the cache may write this too.
        write_atomic(path, content)
    return path


def library_examples(library: Path) -> list[str]:
    """Example folders of the library at `library`: the standard ones first, in their order.

    Every folder of `examples/` counts (hidden ones and version-control folders do not),
    whether or not it holds its `<Name>.ino`; `missing_sketches` names those that do not.

    Raises:
        FatalError: the library has no examples/ folder, or no example in it.
    """
    folder = library / "examples"
    if not folder.is_dir():
        raise FatalError(f"{library} has no examples/ folder: is it a generated library?")
    present = sorted(
        p.name
        for p in folder.iterdir()
        if p.is_dir() and not p.name.startswith(".") and p.name not in VCS_FOLDERS
    )
    if not present:
        raise FatalError(
            f"{folder} holds no example: nothing would be checked; add examples/<Name>/"
            "<Name>.ino (or regenerate the library)"
        )
    return [e for e in EXAMPLES if e in present] + [e for e in present if e not in EXAMPLES]


def missing_sketches(library: Path, examples: Sequence[str]) -> list[str]:
    """One message per example of `examples` whose folder lacks `<Name>/<Name>.ino`."""
    problems = []
    for name in examples:
        folder = library / "examples" / name
        if not (folder / f"{name}.ino").is_file():
            inos = sorted(p.name for p in folder.glob("*.ino"))
            found = f" (it holds {', '.join(inos)})" if inos else ""
            problems.append(
                f"examples/{name} has no {name}.ino{found}: the Arduino IDE and arduino-cli "
                "open a sketch by its folder's name; rename the main .ino to it"
            )
    return problems
