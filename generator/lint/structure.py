"""The structure rules (LS001-LS012): the library's folders and files, and their names.

Source: arduino-lint at commit f8104a9dd8ef, `internal/rule/rulefunction/library.go` and
`rulefunction.go`; IDs, briefs and levels: `internal/rule/ruleconfiguration/ruleconfiguration.go`
(see `generator.lint.table`).
"""

from __future__ import annotations

import re

from generator.lint.library_tree import (
    HEADER_EXTENSIONS,
    PROPERTIES,
    VALID_BASE_NAME,
    Library,
    Problem,
    Rule,
    go_ext,
    list_dir,
    misspelled,
    sanitize_name,
    wrong_case,
)

_MISSPELLED_EXTRAS = re.compile(r"(?i)^extra$")


def _ls001_invalid_library(lib: Library) -> list[Problem]:
    if not lib.loaded:
        return [
            (
                PROPERTIES,
                "arduino-cli cannot load the library because library.properties does not "
                "parse (see LP005); fix that file",
            )
        ]
    if lib.source_dir.is_dir() and any(
        not e.is_dir and go_ext(e.path.name) in HEADER_EXTENSIONS
        for e in list_dir(lib.source_dir, lib.root)
    ):
        return []
    if lib.legacy and (lib.root / "src").exists():
        where = (
            "without library.properties the library is read in the 1.0 (flat) format, "
            "whose headers must be in the root, and there is none; add library.properties"
        )
    else:
        folder = "src/" if lib.recursive else "the library root"
        where = f"no header (.h, .hpp, .hh) directly in {folder}; put the main header there"
    return [("src" if lib.recursive else "", f"not a valid Arduino library: {where}")]


def _ls002_folder_name_too_long(lib: Library) -> list[Problem]:
    name = lib.root.name
    if len(name.encode()) <= 63:
        return []
    return [
        (
            "",
            f"the library folder name {name} is {len(name.encode())} bytes, more than the 63 "
            "the Arduino tools support; rename the folder (the repository) shorter",
        )
    ]


def _ls003_folder_name_characters(lib: Library) -> list[Problem]:
    if VALID_BASE_NAME.match(lib.root.name):
        return []
    return [
        (
            "",
            f"the library folder name {lib.root.name!r} may only hold A-Z a-z 0-9 _ . - and "
            "not start with . or -; rename the folder (the repository)",
        )
    ]


def _ls004_submodule(lib: Library) -> list[Problem]:
    gitmodules = lib.root / ".gitmodules"
    if not gitmodules.exists() or gitmodules.is_dir():
        return []
    return [
        (
            ".gitmodules",
            "the library uses git submodules: Library Manager installs (and GitHub's "
            "Download ZIP) get an empty folder in their place; commit the files instead",
        )
    ]


def _ls005_symlinks(lib: Library) -> list[Problem]:
    return [
        (
            e.rel,
            "is a symlink: the Library Manager refuses libraries holding symlinks (Windows "
            "users cannot use them); replace it with a copy of its target",
        )
        for e in lib.tree
        if e.is_link
    ]


def _ls006_development_file(lib: Library) -> list[Problem]:
    flag = lib.root / ".development"
    if not flag.exists() or flag.is_dir():
        return []
    return [
        (
            ".development",
            "the .development flag file makes the Library Manager refuse the library (it "
            "lets users edit examples in place); delete it",
        )
    ]


def _ls007_exe(lib: Library) -> list[Problem]:
    return [
        (
            e.rel,
            "is an .exe file: the Library Manager refuses libraries holding one; remove it "
            "(ship the tool's sources, or download it at use)",
        )
        for e in lib.tree
        if not e.is_dir and go_ext(e.path.name) == ".exe"
    ]


def _ls008_name_header_mismatch(lib: Library) -> list[Problem]:
    name = lib.get("name")
    if name is None or not lib.loaded:
        return []
    sanitized = sanitize_name(name)
    if any(h[: len(h) - len(go_ext(h))] == sanitized for h in lib.source_headers):
        return []
    folder = "src/" if lib.recursive else "the library root"
    return [
        (
            "src" if lib.recursive else "",
            f"no header {sanitized}.h in {folder} matches name={name}: a header named like "
            f"the library wins the IDE's dependency resolution; add {sanitized}.h (it may "
            "just include the others)",
        )
    ]


def _ls009_src_folder_case(lib: Library) -> list[Problem]:
    root_entries = list_dir(lib.root, lib.root)
    has_header = any(
        not e.is_dir and go_ext(e.path.name) in HEADER_EXTENSIONS for e in root_entries
    )
    if (lib.root / PROPERTIES).is_file() and has_header:
        return []  # the flat layout: src/ has no special meaning
    wrong = wrong_case([e for e in root_entries if e.is_dir], "src")
    if wrong is None:
        return []
    return [
        (
            wrong.rel,
            f"the sources folder must be named exactly src, not {wrong.path.name}: on "
            "case-sensitive file systems (Linux) the library is not found; rename it",
        )
    ]


def _ls010_utility_folder(lib: Library) -> list[Problem]:
    if not lib.loaded or not lib.recursive or not (lib.root / "utility").exists():
        return []
    return [
        (
            "utility",
            "a 1.5-format library (one with src/) must not have a utility folder in its "
            "root: only 1.0-format (flat) libraries compile it; move it under src/",
        )
    ]


def _ls011_misspelled_extras(lib: Library) -> list[Problem]:
    dirs = [e for e in list_dir(lib.root, lib.root) if e.is_dir]
    found = misspelled(dirs, "extras", _MISSPELLED_EXTRAS)
    if found is None:
        return []
    return [(found.rel, f"{found.path.name} looks like a misspelled extras; rename it extras")]


def _ls012_extras_case(lib: Library) -> list[Problem]:
    found = wrong_case([e for e in list_dir(lib.root, lib.root) if e.is_dir], "extras")
    if found is None:
        return []
    return [(found.rel, f"the folder must be named exactly extras; rename {found.path.name}")]


#: The structure rules, in arduino-lint's order.
STRUCTURE_RULES: tuple[Rule, ...] = (
    Rule("LS001", "error", "invalid library", _ls001_invalid_library),
    Rule("LS002", "error", "folder name too long", _ls002_folder_name_too_long),
    Rule("LS003", "error", "prohibited character in folder name", _ls003_folder_name_characters),
    Rule("LS004", "warning", "submodule", _ls004_submodule),
    Rule("LS005", "error", "symlink", _ls005_symlinks),
    Rule("LS006", "error", ".development file", _ls006_development_file),
    Rule("LS007", "error", ".exe file", _ls007_exe),
    Rule("LS008", "warning", "name-header mismatch", _ls008_name_header_mismatch),
    Rule("LS009", "error", "src folder case", _ls009_src_folder_case),
    Rule("LS010", "error", "recursive with utility folder", _ls010_utility_folder),
    Rule("LS011", "error", "incorrect extras folder name", _ls011_misspelled_extras),
    Rule("LS012", "error", "extras folder name case", _ls012_extras_case),
)
