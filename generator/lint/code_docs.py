"""The code rule (LC001: Arduino.h in the right case) and the documentation rules (LD001-LD006:
README, license, examples/).

Source: arduino-lint at commit f8104a9dd8ef, `internal/rule/rulefunction/library.go` and
`rulefunction.go`; which folders are example sketches: `internal/project/project.go`.
"""

from __future__ import annotations

import re

from generator.lint.library_tree import (
    SKETCH_EXTENSIONS,
    Entry,
    Library,
    Problem,
    Rule,
    files_in,
    go_ext,
    is_sketch,
    list_dir,
    misspelled,
    walk,
    wrong_case,
)

_README = re.compile(
    r"(?i)^readme\.((markdown)|(mdown)|(mkdn)|(md)|(textile)|(rdoc)|(org)|(creole)|"
    r"(mediawiki)|(wiki)|(rst)|(asciidoc)|(adoc)|(asc)|(pod)|(txt))$"
)
_LICENSE = re.compile(
    r"(?i)^(((un)?licen[sc]e)|(copy(ing|right))|(ofl)|(patents))(\.((md)|(markdown)|(txt)|(html)))?$"
)
_MISSPELLED_EXAMPLES = re.compile(r"(?i)^e((x)|(xs)|(s))((am)|(ma))p((le)|(el))s?$")
# `#include <arduino.h>` and other wrong cases (Go: `a((?i)rduino)|(ARDUINO)`); a line's
# leading blanks are Go's \s without the newline.
_ARDUINO_H_CASE = re.compile(
    rb'^[\t\f\r ]*#[\t\f\r ]*include[\t\f\r ]*["<](a(?i:rduino)|ARDUINO)\.[hH][">]',
    re.MULTILINE,
)


def arduino_h_case(files: list[Entry]) -> list[Problem]:
    """One problem per file (its first such line) including Arduino.h in a wrong case."""
    problems = []
    for entry in files:
        if entry.is_dir or go_ext(entry.path.name) not in SKETCH_EXTENSIONS:
            continue
        try:
            data = entry.path.read_bytes()
        except OSError:
            continue
        match = _ARDUINO_H_CASE.search(data)
        if match:
            line_no = data.count(b"\n", 0, match.start()) + 1
            line = match.group(0).decode("utf-8", "replace").strip()
            problems.append(
                (
                    entry.rel,
                    f"line {line_no}: `{line}`: the core header is Arduino.h, and file "
                    "names are case-sensitive on Linux; write #include <Arduino.h>",
                )
            )
    return problems


def _lc001_arduino_h_case(lib: Library) -> list[Problem]:
    return arduino_h_case(lib.tree)


def _ld001_readme(lib: Library) -> list[Problem]:
    for folder in (lib.root, lib.root / "docs", lib.root / ".github"):
        if folder.is_dir() and any(_README.match(e.path.name) for e in files_in(folder, lib.root)):
            return []
    return [
        (
            "",
            "no README (README.md, README.txt, ...) in the library root, docs/ or .github/; "
            "add one documenting the library",
        )
    ]


def _ld002_license(lib: Library) -> list[Problem]:
    if any(_LICENSE.match(e.path.name) for e in files_in(lib.root, lib.root)):
        return []
    return [
        (
            "",
            "no license file (LICENSE, LICENSE.txt, LICENSE.md, COPYING, ...) in the "
            "library root; add the library's license there",
        )
    ]


def _ld003_stray_sketch(lib: Library) -> list[Problem]:
    stray = [""] if is_sketch(lib.root, lib.root) else []
    for top in list_dir(lib.root, lib.root):
        if not top.is_dir or top.is_link or top.path.name in ("examples", "extras"):
            continue
        stray += [
            e.rel for e in walk(top.path, lib.root) if e.is_dir and is_sketch(e.path, lib.root)
        ]
    return [
        (
            rel,
            "holds a sketch (.ino/.pde) outside examples/ and extras/; move example "
            "sketches to examples/<Name>/<Name>.ino",
        )
        for rel in stray
    ]


def _ld004_no_examples(lib: Library) -> list[Problem]:
    for name in ("examples", "example"):
        folder = lib.root / name
        if folder.is_dir() and any(
            e.is_dir and is_sketch(e.path, lib.root) for e in walk(folder, lib.root)
        ):
            return []
    return [("", "no example sketch; add examples/<Name>/<Name>.ino")]


def _ld005_misspelled_examples(lib: Library) -> list[Problem]:
    dirs = [e for e in list_dir(lib.root, lib.root) if e.is_dir]
    found = misspelled(dirs, "examples", _MISSPELLED_EXAMPLES)
    if found is None:
        return []
    return [(found.rel, f"{found.path.name} looks like a misspelled examples; rename it")]


def _ld006_examples_case(lib: Library) -> list[Problem]:
    found = wrong_case([e for e in list_dir(lib.root, lib.root) if e.is_dir], "examples")
    if found is None:
        return []
    return [(found.rel, f"the folder must be named exactly examples; rename {found.path.name}")]


#: The code and documentation rules, in arduino-lint's order.
CODE_DOCS_RULES: tuple[Rule, ...] = (
    Rule("LC001", "error", "Arduino.h case", _lc001_arduino_h_case),
    Rule("LD001", "error", "no readme", _ld001_readme),
    Rule("LD002", "error", "no license file", _ld002_license),
    Rule("LD003", "error", "stray sketch", _ld003_stray_sketch),
    Rule("LD004", "warning", "no examples", _ld004_no_examples),
    Rule("LD005", "error", "incorrect examples folder name", _ld005_misspelled_examples),
    Rule("LD006", "error", "examples folder name case", _ld006_examples_case),
)
