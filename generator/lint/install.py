"""The OS rules (OS001-OS006), this generator's own, not arduino-lint's: whether Windows, macOS
and Linux can all hold the library once the Library Manager installs it (names Windows reserves
or refuses, paths that differ only by case or Unicode normalization, installed and object paths
within Windows' MAX_PATH with a margin), and the longest installed and object paths the report
gives. Their facts and sources: `generator.library.install_paths`.
"""

from __future__ import annotations

from collections.abc import Iterator

from generator.library import install_paths as ip
from generator.lint.library_tree import Entry, Library, Problem, Rule, sanitize_name

_VENDORED_FIX = (
    "a vendored file keeps its upstream path: exclude it in its data/vendored/*.yaml copy rule, "
    "or ship it under another path"
)


def _install_folder(lib: Library) -> str:
    """The folder the Library Manager installs the library into: SanitizeName of `name=`
    (the registered name without a readable one)."""
    return sanitize_name(lib.get("name") or lib.registered_name)


def installed(lib: Library) -> list[Entry]:
    """What an install holds: the tree without the repository's own `.git`."""
    return [e for e in lib.tree if e.rel != ".git" and not e.rel.startswith(".git/")]


def _compiled_sources(lib: Library) -> list[tuple[Entry, str]]:
    """Each source arduino-cli compiles, with its path relative to the source folder.

    The 1.5 layout: src/ recursively; the flat one: the root and utility/, not recursively.
    Names starting with "." and source-control folders are skipped (see install_paths).
    """
    if lib.recursive:
        folders = [("src/", True, "")]
    else:
        folders = [("", False, ""), ("utility/", False, "utility/")]
    found = []
    for entry in lib.tree:
        if entry.is_dir or not entry.path.name.endswith(ip.SOURCE_EXTENSIONS):
            continue
        for prefix, recursive, target in folders:
            if not entry.rel.startswith(prefix):
                continue
            below = entry.rel[len(prefix) :]
            parts = below.split("/")
            if not recursive and len(parts) > 1:
                continue
            if any(p.startswith(".") or p in ip.SOURCE_CONTROL_FOLDERS for p in parts):
                continue
            found.append((entry, target + below))
    return found


def installed_paths(lib: Library) -> list[ip.LongPath]:
    folder = _install_folder(lib)
    return [ip.LongPath(e.rel, ip.installed_path(folder, e.rel)) for e in installed(lib)]


def object_paths(lib: Library) -> list[ip.LongPath]:
    folder = _install_folder(lib)
    return [ip.LongPath(e.rel, ip.object_path(folder, rel)) for e, rel in _compiled_sources(lib)]


def longest(paths: list[ip.LongPath]) -> ip.LongPath | None:
    """The longest path (the first by name among equals), None for none."""
    return max(sorted(paths, key=lambda p: p.rel), key=lambda p: p.length, default=None)


def _windows_names(lib: Library, kind: str) -> Iterator[Entry]:
    return (e for e in installed(lib) if ip.windows_name_problem(e.path.name) == kind)


def _os001_reserved_name(lib: Library) -> list[Problem]:
    return [
        (
            e.rel,
            f"{e.path.name} is a Windows device name "
            f"({e.path.name.partition('.')[0].rstrip(' ')}), which no file or folder may "
            f"have, with any extension: Windows cannot install the library; rename it "
            f"({_VENDORED_FIX})",
        )
        for e in _windows_names(lib, "reserved")
    ]


def _os002_forbidden_character(lib: Library) -> list[Problem]:
    problems = []
    for e in _windows_names(lib, "character"):
        if ip.not_utf8(e.path.name):
            why = (
                "the name is not UTF-8, so neither Windows nor macOS can hold it: the "
                "library cannot be installed there"
            )
        else:
            bad = sorted({c for c in e.path.name if c in ip.FORBIDDEN_CHARACTERS or c < " "})
            shown = " ".join(c if c >= " " else f"\\x{ord(c):02x}" for c in bad)
            why = (
                f'the name holds {shown}, which Windows forbids in a name (< > : " / \\ | '
                "? * and characters 0-31): Windows cannot install the library"
            )
        problems.append((e.rel, f"{why}; rename it ({_VENDORED_FIX})"))
    return problems


def _os003_trailing_space_or_period(lib: Library) -> list[Problem]:
    return [
        (
            e.rel,
            "the name ends in a space or a period, which Windows drops (two names become "
            f"one, or the file cannot be opened); rename it ({_VENDORED_FIX})",
        )
        for e in _windows_names(lib, "ending")
    ]


def _os004_case_collision(lib: Library) -> list[Problem]:
    entries = {e.rel: e for e in installed(lib)}
    problems = []
    for group in ip.case_collisions(entries):
        kinds = {"folder" if entries[rel].is_dir else "file" for rel in group}
        what = "a file and a folder" if len(kinds) == 2 else f"{len(group)} {kinds.pop()}s"
        problems.append(
            (
                group[0],
                f"{' and '.join(map(repr, group))} ({what}) differ only by case or Unicode "
                "normalization: Windows and macOS take them for one path, so one overwrites "
                f"the other at install; rename one ({_VENDORED_FIX})",
            )
        )
    return problems


def _too_long(paths: list[ip.LongPath]) -> list[ip.LongPath]:
    """The paths over the budget whose parent folder is not already over it."""
    over = {p.rel for p in paths if not p.fits}
    return [p for p in paths if p.rel in over and p.rel.rpartition("/")[0] not in over]


def _os005_installed_path_too_long(lib: Library) -> list[Problem]:
    return [
        (
            p.rel,
            f"installed on Windows its path is {p.length} characters ({p.path}), over "
            f"{ip.PATH_BUDGET} (MAX_PATH {ip.MAX_PATH} less a margin of {ip.PATH_MARGIN}): "
            f"Windows users cannot install or build it; shorten the path ({_VENDORED_FIX})",
        )
        for p in _too_long(installed_paths(lib))
    ]


def _os006_object_path_too_long(lib: Library) -> list[Problem]:
    return [
        (
            p.rel,
            f"arduino-cli builds its object at a path of {p.length} characters on Windows "
            f"({p.path}), over {ip.PATH_BUDGET} (MAX_PATH {ip.MAX_PATH} less a margin of "
            f"{ip.PATH_MARGIN}): the compile fails there; shorten the path below src/ "
            f"({_VENDORED_FIX})",
        )
        for p in _too_long(object_paths(lib))
    ]


#: This generator's rules for installing on every OS (generator.library.install_paths).
OS_RULES: tuple[Rule, ...] = (
    Rule("OS001", "error", "Windows reserved name", _os001_reserved_name),
    Rule("OS002", "error", "character Windows forbids", _os002_forbidden_character),
    Rule("OS003", "error", "name ends in a space or period", _os003_trailing_space_or_period),
    Rule("OS004", "error", "paths differ only by case", _os004_case_collision),
    Rule("OS005", "error", "installed path too long", _os005_installed_path_too_long),
    Rule("OS006", "error", "object path too long", _os006_object_path_too_long),
)
