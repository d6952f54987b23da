"""The example sketch rules (SS001-SS005, SC001): each sketch below examples/ named, spelled and
laid out as the Arduino tools want it.

Source: arduino-lint at commit f8104a9dd8ef, `internal/rule/rulefunction/sketch.go`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from generator.lint.code_docs import arduino_h_case
from generator.lint.library_tree import (
    MAIN_SKETCH_EXTENSIONS,
    SKETCH_EXTENSIONS,
    VALID_BASE_NAME,
    Entry,
    Library,
    Problem,
    Rule,
    files_in,
    go_ext,
    list_dir,
    walk,
    wrong_case,
)


def _ss001_name_mismatch(lib: Library) -> list[Problem]:
    problems = []
    for sketch in lib.sketches:
        names = {e.path.name for e in files_in(sketch, lib.root)}
        if any(sketch.name + ext in names for ext in MAIN_SKETCH_EXTENSIONS):
            continue
        inos = sorted(n for n in names if go_ext(n) in MAIN_SKETCH_EXTENSIONS)
        problems.append(
            (
                lib.rel(sketch),
                f"has no {sketch.name}.ino (it holds {', '.join(inos)}): the main sketch file "
                "must be named like its folder; rename it",
            )
        )
    return problems


def _sketch_files(lib: Library) -> Iterator[tuple[Path, list[Entry]]]:
    for sketch in lib.sketches:
        yield (
            sketch,
            [e for e in files_in(sketch, lib.root) if go_ext(e.path.name) in SKETCH_EXTENSIONS],
        )


def _ss002_file_name_characters(lib: Library) -> list[Problem]:
    return [
        (
            e.rel,
            "a sketch file name may only hold A-Z a-z 0-9 _ . - and not start with . or -; "
            "rename it",
        )
        for _, files in _sketch_files(lib)
        for e in files
        if not VALID_BASE_NAME.match(e.path.name)
    ]


def _ss003_file_name_too_long(lib: Library) -> list[Problem]:
    problems = []
    for _, files in _sketch_files(lib):
        for e in files:
            stem = len(e.path.name.encode()) - len(go_ext(e.path.name).encode())
            if stem > 63:
                problems.append(
                    (
                        e.rel,
                        f"the file name is {stem} bytes before its extension, over 63; shorten it",
                    )
                )
    return problems


def _ss004_pde(lib: Library) -> list[Problem]:
    return [
        (e.rel, ".pde is the deprecated sketch extension (Processing's); rename it to .ino")
        for sketch in lib.sketches
        for e in files_in(sketch, lib.root)
        if go_ext(e.path.name) == ".pde"
    ]


def _ss005_sketch_src_case(lib: Library) -> list[Problem]:
    problems = []
    for sketch in lib.sketches:
        found = wrong_case([e for e in list_dir(sketch, lib.root) if e.is_dir], "src")
        if found is not None:
            problems.append(
                (
                    found.rel,
                    f"a sketch's source folder must be named exactly src, not "
                    f"{found.path.name} (Linux does not compile it otherwise); rename it",
                )
            )
    return problems


def _sc001_arduino_h_case(lib: Library) -> list[Problem]:
    problems = []
    for sketch in lib.sketches:
        problems += arduino_h_case(list(walk(sketch, lib.root)))
    return problems


#: The sketch rules, in arduino-lint's order.
SKETCH_RULES: tuple[Rule, ...] = (
    Rule("SS001", "error", "name mismatch", _ss001_name_mismatch),
    Rule("SS002", "error", "prohibited character in filename", _ss002_file_name_characters),
    Rule("SS003", "error", "file name too long", _ss003_file_name_too_long),
    Rule("SS004", "error", ".pde extension", _ss004_pde),
    Rule("SS005", "error", "src folder case", _ss005_sketch_src_case),
    Rule("SC001", "error", "Arduino.h case", _sc001_arduino_h_case),
)
