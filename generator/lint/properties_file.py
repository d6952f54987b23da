"""The rules on library.properties as a file (LP001-LP006): present, named right, in the root,
parsable, with no misspelled field name.

Source: arduino-lint at commit f8104a9dd8ef, `internal/rule/rulefunction/library.go` and
`rulefunction.go`; the misspelled field names: `generator.lint.properties_schema`.
"""

from __future__ import annotations

import re

from generator.lint.library_tree import (
    PROPERTIES,
    Library,
    Problem,
    Rule,
    files_in,
    misspelled,
    wrong_case,
)
from generator.lint.properties_schema import MISSPELLED_FIELDS

_MISSPELLED_PROPERTIES_FILE = re.compile(r"(?i)^librar((y)|(ie))s?[.-_]?propert((y)|(ie))s?$")


def _lp001_missing(lib: Library) -> list[Problem]:
    if not lib.legacy:
        return []
    return [
        (
            PROPERTIES,
            "library.properties is missing; the Library Manager requires it: add one with "
            "name, version, author, maintainer, sentence, paragraph, category, url and "
            "architectures",
        )
    ]


def _lp002_misspelled_file(lib: Library) -> list[Problem]:
    found = misspelled(files_in(lib.root, lib.root), PROPERTIES, _MISSPELLED_PROPERTIES_FILE)
    if found is None:
        return []
    return [(found.rel, f"looks like a misspelled {PROPERTIES}; rename it {PROPERTIES}")]


def _lp003_file_case(lib: Library) -> list[Problem]:
    found = wrong_case(files_in(lib.root, lib.root), PROPERTIES)
    if found is None:
        return []
    return [
        (
            found.rel,
            f"must be named exactly {PROPERTIES} (names are case-sensitive on Linux); rename it",
        )
    ]


def _lp004_redundant(lib: Library) -> list[Problem]:
    if not (lib.root / "src" / PROPERTIES).exists():
        return []
    return [
        (
            f"src/{PROPERTIES}",
            "only the library.properties at the library root is read; delete this copy",
        )
    ]


def _lp005_format(lib: Library) -> list[Problem]:
    if lib.properties_error is None:
        return []
    return [
        (
            PROPERTIES,
            f"library.properties does not parse: {lib.properties_error}; every line must "
            "be key=value, a comment starting with #, or blank",
        )
    ]


def _lp006_misspelled_field(lib: Library) -> list[Problem]:
    problems = []
    for key in lib.properties or {}:
        for pattern, meant in MISSPELLED_FIELDS:
            if pattern.match(key):
                problems.append(
                    (PROPERTIES, f"field {key}= looks like a misspelled {meant}=; rename it")
                )
                break
    return problems


#: The rules on the file, in arduino-lint's order.
PROPERTIES_FILE_RULES: tuple[Rule, ...] = (
    Rule("LP001", "error", "missing library.properties", _lp001_missing),
    Rule("LP002", "error", "incorrect library.properties file name", _lp002_misspelled_file),
    Rule("LP003", "error", "library.properties file name case", _lp003_file_case),
    Rule("LP004", "error", "redundant library.properties", _lp004_redundant),
    Rule("LP005", "error", "library.properties format", _lp005_format),
    Rule("LP006", "error", "misspelled library.properties field", _lp006_misspelled_field),
)
