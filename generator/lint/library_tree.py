"""What a lint rule looks at and what it is: the library's facts, gathered once (arduino-lint's
projectdata), the listing helpers the rules share, and `Rule`.

Reading library.properties follows go-properties-orderedmap `LoadFromBytes` (UTF-8, else
ISO 8859-1; `key=value` lines, `#` comments, whitespace trimmed; a later key wins) and
arduino-cli `arduino/libraries/loader.go` (the 1.5 layout is "src/ exists"; without
library.properties a library is read as 1.0 "legacy", sources in the root). Which folders are
example sketches: arduino-lint `internal/project/project.go`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from generator.library.layout import PROPERTIES_FILE
from generator.library.properties import parse_properties

Level = Literal["error", "warning"]
#: (path relative to the library, "" for the library itself; message)
Problem = tuple[str, str]

PROPERTIES = PROPERTIES_FILE

# arduino-cli globals: MainFileValidExtensions, AdditionalFileValidExtensions; library
# headers: arduino-lint internal/project/library/library.go.
MAIN_SKETCH_EXTENSIONS = frozenset({".ino", ".pde"})
SKETCH_EXTENSIONS = MAIN_SKETCH_EXTENSIONS | {
    ".h",
    ".c",
    ".hpp",
    ".hh",
    ".cpp",
    ".S",
    ".adoc",
    ".md",
    ".json",
    ".tpp",
    ".ipp",
}
HEADER_EXTENSIONS = frozenset({".h", ".hpp", ".hh"})
# A file or folder name arduino-lint accepts (rulefunction.go / library.go).
VALID_BASE_NAME = re.compile(r"^[a-zA-Z0-9_][a-zA-Z0-9_.-]*$")


# --- reading the library --------------------------------------------------------------


def go_ext(name: str) -> str:
    """Go's filepath.Ext: from the last dot on (".ino" for ".ino"), "" without one."""
    dot = name.rfind(".")
    return name[dot:] if dot >= 0 else ""


@dataclass(frozen=True)
class Entry:
    """One path of the library: `rel` is relative with "/"; `is_dir` follows symlinks."""

    path: Path
    rel: str
    is_dir: bool
    is_link: bool


def list_dir(folder: Path, root: Path) -> list[Entry]:
    """The entries of `folder`, sorted by name like Go's os.ReadDir; [] if unreadable."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [
        Entry(
            folder / n,
            (folder / n).relative_to(root).as_posix(),
            (folder / n).is_dir(),
            (folder / n).is_symlink(),
        )
        for n in names
    ]


def walk(folder: Path, root: Path) -> Iterator[Entry]:
    """Every path below `folder`; symlinked folders are listed but not entered."""
    for entry in list_dir(folder, root):
        yield entry
        if entry.is_dir and not entry.is_link:
            yield from walk(entry.path, root)


def files_in(folder: Path, root: Path) -> list[Entry]:
    """The files (not folders) directly in `folder`, sorted by name."""
    return [e for e in list_dir(folder, root) if not e.is_dir]


def is_sketch(folder: Path, root: Path) -> bool:
    """A folder holding a file with a main sketch extension (.ino, .pde)."""
    return any(go_ext(e.path.name) in MAIN_SKETCH_EXTENSIONS for e in files_in(folder, root))


def _sketches_under(folder: Path, root: Path) -> list[Path]:
    """`folder` if it is a sketch, else the sketches below it (not through symlinks)."""
    if is_sketch(folder, root):
        return [folder]
    found: list[Path] = []
    for entry in list_dir(folder, root):
        if entry.is_dir and not entry.is_link:
            found += _sketches_under(entry.path, root)
    return found


@dataclass
class Library:
    """What the rules look at, gathered once (arduino-lint's projectdata).

    `properties` is {} for a library without library.properties (`legacy`) and None
    when the file cannot be read or parsed (`properties_error` says why); arduino-cli
    then does not load the library at all.
    """

    root: Path
    registered_name: str
    legacy: bool
    properties: dict[str, str] | None
    properties_error: str | None
    recursive: bool
    source_dir: Path
    source_headers: list[str]
    sketches: list[Path]
    tree: list[Entry] = field(default_factory=list)

    @property
    def loaded(self) -> bool:
        """arduino-cli's `libraries.Load` succeeded."""
        return self.properties_error is None

    def get(self, key: str) -> str | None:
        """The value of field `key`, None when absent or library.properties unreadable."""
        return None if self.properties is None else self.properties.get(key)

    def rel(self, path: Path) -> str:
        """`path` relative to the library root, with "/" separators."""
        return path.relative_to(self.root).as_posix()


def gather(root: Path, registered_name: str) -> Library:
    """The facts of the library at `root` (resolved), registered as `registered_name`.

    An unreadable or malformed library.properties is not an error here: `properties` is then
    None and `properties_error` says why (rules LS001 and LP005 report it).
    """
    properties_path = root / PROPERTIES
    legacy = not properties_path.exists()
    properties: dict[str, str] | None = {}
    error: str | None = None
    if not legacy:
        try:
            properties = parse_properties(properties_path.read_bytes())
        except OSError as e:
            properties, error = None, f"it cannot be read ({e.strerror or e})"
        except ValueError as e:
            properties, error = None, str(e)
    recursive = not legacy and (root / "src").exists()
    source_dir = root / "src" if recursive else root
    headers = (
        [
            e.path.name
            for e in files_in(source_dir, root)
            if go_ext(e.path.name) in HEADER_EXTENSIONS
        ]
        if source_dir.is_dir() and error is None
        else []
    )
    sketches: list[Path] = []
    for name in ("examples", "example"):
        folder = root / name
        if folder.is_dir():
            for entry in list_dir(folder, root):
                if entry.is_dir and not entry.is_link:
                    sketches += _sketches_under(entry.path, root)
    return Library(
        root=root,
        registered_name=registered_name,
        legacy=legacy,
        properties=properties,
        properties_error=error,
        recursive=recursive,
        source_dir=source_dir,
        source_headers=headers,
        sketches=sketches,
        tree=list(walk(root, root)),
    )


# --- helpers shared by rules ----------------------------------------------------------


def wrong_case(entries: list[Entry], correct: str) -> Entry | None:
    """The first entry named `correct` in another case, unless the exact name comes first.

    Source: rulefunction.go containsIncorrectPathBaseCase.
    """
    for entry in entries:
        if entry.path.name == correct:
            return None
        if entry.path.name.lower() == correct.lower():
            return entry
    return None


def misspelled(entries: list[Entry], correct: str, pattern: re.Pattern[str]) -> Entry | None:
    """The first entry whose name matches `pattern`, unless `correct` comes first.

    Source: rulefunction.go containsMisspelledPathBaseName.
    """
    for entry in entries:
        if entry.path.name == correct:
            return None
        if pattern.match(entry.path.name):
            return entry
    return None


def sanitize_name(name: str) -> str:
    """arduino-cli utils.SanitizeName: the install folder (and header) name of a library.

    Keeps 0-9 A-Z a-z, and - . past the first byte; anything else becomes _.
    """
    out = []
    byte_index = 0
    for c in name:
        keep = c.isascii() and (c.isalnum() or (byte_index > 0 and c in "-."))
        out.append(c if keep else "_")
        byte_index += len(c.encode("utf-8"))
    sanitized = "".join(out)
    return sanitized[:64] if len(sanitized) > 63 else sanitized


# --- a rule ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """One arduino-lint rule (or one of this generator's: OS, GH).

    Attributes:
        rule_id: arduino-lint's ID; level: its level under `table.ARDUINO_LINT`;
        brief: arduino-lint's short description; check: library facts -> problems.
    """

    rule_id: str
    level: Level
    brief: str
    check: Callable[[Library], list[Problem]]
