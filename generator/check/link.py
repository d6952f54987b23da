"""What goes on the link line, the way arduino-cli puts it there, for both link modes.

Sources (arduino-cli, `internal/arduino/builder/`):

- `libraries.go` `compileLibrary`: a library in the 1.5 (recursive `src/`) layout whose
  library.properties says `dot_a_linkage=true` is archived into one
  `libraries/<DirName>/<DirName>.a` (`archiveCompiledFiles`, one `ar rcs ARCHIVE OBJECT`
  per object, in the order `compileFiles` sorted them); otherwise every object of the
  library goes on the link line. `loader.go` reads the flag with `GetBoolean`: true only
  when the trimmed value is exactly `true`.
- `compilation.go` `compileFileWithRecipe`: an object lands at `<build>/<folder>/<path of
  the source relative to the compiled folder>.o` (sketch: `sketch/`, library:
  `libraries/<DirName>/`, relative to its `src/`, core and variant: `core/`);
  `compileFiles` sorts each folder's objects by path.
- `core.go` `compileCore`: the core's objects go into `core/core.a` (`{archive_file}` of
  the link recipe, after the object list); the variant's objects go on the object list.
- `linker.go` `link`: the object list is the sketch's objects, then the libraries' (or
  their archives), then the variant's. When that list, each path in double quotes and
  joined by spaces, is longer than 30,000 characters, every object is archived into an
  `objs.a` of its own folder (archives already on the list stay apart, first) and the
  list becomes `-Wl,--whole-archive <archives> -Wl,--no-whole-archive`.
- `sketch.go` / `commands/service_compile.go`: the default build folder is
  `<user cache>/arduino/sketches/<MD5 of the sketch path, upper-case hex>`; the 30,000
  rule measures absolute paths there (`MODEL_BUILD_ROOT`).

`ar` matches members by file name only, so two objects of one archive with the same name
(`a/x.cpp.o`, `b/x.cpp.o`) leave only the later one; `LinkLine.lost` names them.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from generator.library.properties import parse_properties
from generator.util.errors import FatalError

#: arduino-cli's limit on the quoted object list (characters), `linker.go`.
MAX_OBJECT_LIST_CHARS = 30_000
#: The build root the 30,000-character rule is measured against: arduino-cli's default
#: build cache (`os.UserCacheDir()/arduino`, `configuration.go getDefaultBuildCacheDir`)
#: for the UNO Q's own Linux user `arduino`, where App Lab builds sketches.
MODEL_BUILD_ROOT = "/home/arduino/.cache/arduino/sketches"


def sanitize_name(name: str) -> str:
    """A library's folder name as the Library Manager installs it: characters other than
    0-9, A-Z, a-z (and `-` or `.` after the first) become `_`.

    Source: arduino-cli `internal/arduino/utils/filenames.go` `SanitizeName`.
    """
    return "".join(
        c
        if ("0" <= c <= "9" or "a" <= c <= "z" or "A" <= c <= "Z" or (i > 0 and c in "-."))
        else "_"
        for i, c in enumerate(name)
    )


@dataclass(frozen=True)
class LibraryLinkage:
    """How arduino-cli links a library.

    Attributes:
        dir_name: its folder name when installed (`SanitizeName` of its `name=`, else the
            folder's own name); names its build folder and archive.
        dot_a_linkage: True when library.properties says `dot_a_linkage=true`.
    """

    dir_name: str
    dot_a_linkage: bool


def library_linkage(library: Path) -> LibraryLinkage:
    """Read `library/library.properties` as arduino-cli's library loader does.

    A missing or unreadable file means no archive and the folder's own name.

    Source: arduino-cli `internal/arduino/libraries/loader.go` (`dot_a_linkage` through
    go-properties-orderedmap `GetBoolean`: the trimmed value equals `true`).
    """
    try:
        props = parse_properties((library / "library.properties").read_bytes())
    except (OSError, ValueError):
        props = {}
    name = props.get("name", "").strip()
    return LibraryLinkage(
        dir_name=sanitize_name(name) if name else library.name,
        dot_a_linkage=props.get("dot_a_linkage", "").strip() == "true",
    )


@dataclass(frozen=True)
class LinkObject:
    """One compiled object and where arduino-cli's build folder would hold it.

    Attributes:
        path: the object file (in the object cache).
        build_path: its path under the build folder, e.g. `sketch/Add.ino.cpp.o`,
            `libraries/ExecuTorch/executorch/a.cpp.o`, `core/api/String.cpp.o`.
    """

    path: Path
    build_path: PurePosixPath


@dataclass(frozen=True)
class LinkInputs:
    """Everything one example's link takes, grouped as arduino-cli groups it.

    Attributes:
        sketch: the sketch's objects; library: the library's objects; linkage: how the
        library is linked; variant: core objects that go on the object list (arduino-cli's
        variant objects); core: objects archived into `core/core.a`.
    """

    sketch: tuple[LinkObject, ...]
    library: tuple[LinkObject, ...]
    linkage: LibraryLinkage
    variant: tuple[LinkObject, ...] = ()
    core: tuple[LinkObject, ...] = ()


@dataclass
class LinkLine:
    """The object part of a link command, staged in a build folder.

    Attributes:
        object_files: arguments for `{object_files}` (objects, archives, whole-archive
            flags), in arduino-cli's order.
        core_archive: `core/core.a` (`{archive_file}`), None when there is no core.
        list_chars: length of arduino-cli's quoted object list, measured with paths under
            `MODEL_BUILD_ROOT` (before the 30,000 rule).
        by_folder: True when the list was over `MAX_OBJECT_LIST_CHARS` and the objects were
            archived folder by folder.
        lost: `archive: member` for each object `ar` replaced by a later one of the same
            name (it is not linked).
    """

    object_files: list[str]
    core_archive: Path | None
    list_chars: int
    by_folder: bool = False
    lost: list[str] = field(default_factory=list)


def source_object(source: str | PurePosixPath, base: str | PurePosixPath) -> PurePosixPath:
    """The object name arduino-cli gives `source`, relative to the folder it compiles from.

    E.g. `src/a/b.cpp` from `src` is `a/b.cpp.o`.

    Raises:
        ValueError: `source` is not under `base`.
    """
    rel = PurePosixPath(source).relative_to(PurePosixPath(base))
    return rel.with_name(rel.name + ".o")


def model_build_folder(sketch_dir: Path) -> str:
    """The build folder arduino-cli would use for the sketch at `sketch_dir`:
    `MODEL_BUILD_ROOT/<MD5 of its path, upper-case hex>` (`sketch.Hash`)."""
    digest = hashlib.md5(str(sketch_dir).encode(), usedforsecurity=False).hexdigest()
    return f"{MODEL_BUILD_ROOT}/{digest.upper()}"


def quoted_list_chars(paths: Sequence[str]) -> int:
    """Length of `"p1" "p2" ...`, as `linker.go` measures the object list (characters)."""
    return sum(len(p) + 2 for p in paths) + max(len(paths) - 1, 0)


def _stage(obj: LinkObject, build: Path) -> Path:
    """Put `obj` at its arduino-cli path under `build` (a symbolic link to the object)."""
    target = build / obj.build_path
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink() or target.exists():
        target.unlink()
    os.symlink(obj.path.resolve(), target)
    return target


def _archive(ar: str, archive: Path, objects: Sequence[Path]) -> list[str]:
    """`ar rcs ARCHIVE OBJECT` for each object in order, as `archiveCompiledFiles` does.

    Returns:
        the objects whose member a later object of the same file name replaced.

    Raises:
        FatalError: ar fails.
    """
    if archive.exists():
        archive.unlink()
    archive.parent.mkdir(parents=True, exist_ok=True)
    seen: dict[str, Path] = {}
    lost: list[str] = []
    for obj in objects:
        if obj.name in seen:
            lost.append(str(seen[obj.name]))
        seen[obj.name] = obj
        proc = subprocess.run(
            [ar, "rcs", str(archive), str(obj)], capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            raise FatalError(f"{ar} rcs {archive} {obj} failed: {proc.stderr.strip()}")
    return lost


def stage_link(inputs: LinkInputs, build: Path, ar: str, model_root: str) -> LinkLine:
    """Stage `inputs` in `build` as arduino-cli's build folder and give the link's object part.

    Args:
        inputs: the objects, grouped; build: an empty or reusable folder (created);
        ar: the archiver (`arm-none-eabi-ar`, `ar`); model_root: the build folder the
        30,000-character rule measures paths in (`model_build_folder`).

    Returns:
        the object list (or library archive, or per-folder archives in
        `--whole-archive`), the core archive, and the measured list length.

    Raises:
        FatalError: `ar` fails.
    """
    build.mkdir(parents=True, exist_ok=True)
    lost: list[str] = []
    # (object or archive on the list, its path under the build folder)
    listed: list[tuple[Path, PurePosixPath]] = []
    for obj in inputs.sketch:
        listed.append((_stage(obj, build), obj.build_path))
    lib_staged = [(_stage(obj, build), obj.build_path) for obj in inputs.library]
    if inputs.linkage.dot_a_linkage and lib_staged:
        name = inputs.linkage.dir_name
        rel = PurePosixPath("libraries", name, f"{name}.a")
        lost += [
            f"{rel}: {Path(p).relative_to(build)}"
            for p in _archive(ar, build / rel, [p for p, _ in lib_staged])
        ]
        listed.append((build / rel, rel))
    else:
        listed += lib_staged
    for obj in inputs.variant:
        listed.append((_stage(obj, build), obj.build_path))

    core_archive: Path | None = None
    if inputs.core:
        core_archive = build / "core" / "core.a"
        core_objects = [_stage(obj, build) for obj in inputs.core]
        lost += [
            f"core/core.a: {Path(p).relative_to(build)}"
            for p in _archive(ar, core_archive, core_objects)
        ]

    chars = quoted_list_chars([f"{model_root}/{rel}" for _, rel in listed])
    if chars <= MAX_OBJECT_LIST_CHARS:
        return LinkLine([str(p) for p, _ in listed], core_archive, chars, False, lost)

    # linker.go: archives stay apart, first; one objs.a per folder of the other objects,
    # in the order the folders first appear; all of them inside --whole-archive.
    existing = [p for p, rel in listed if rel.suffix == ".a"]
    objects = [(p, rel) for p, rel in listed if rel.suffix != ".a"]
    folders: dict[PurePosixPath, list[Path]] = {}
    for p, rel in objects:
        folders.setdefault(rel.parent, []).append(p)
    archives = []
    for folder, members in folders.items():
        archive = build / folder / "objs.a"
        lost += [
            f"{folder}/objs.a: {Path(p).relative_to(build)}" for p in _archive(ar, archive, members)
        ]
        archives.append(archive)
    return LinkLine(
        [
            "-Wl,--whole-archive",
            *(str(a) for a in existing + archives),
            "-Wl,--no-whole-archive",
        ],
        core_archive,
        chars,
        True,
        lost,
    )
