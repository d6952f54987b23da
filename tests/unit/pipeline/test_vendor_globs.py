"""Copy rules' globs (data/vendored/*.yaml): shell globs with `**`, read by wcmatch."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.pipeline.components import CopyRule
from generator.pipeline.vendor import apply_rule
from generator.util.errors import FatalError

TREE = [
    "a.h",
    ".hidden.h",
    "a.hpp",
    "x/b.h",
    "x/y/c.h",
    "x/y/c_f16.c",
    "Bindings/d.c",
    "Bindings/z/e.c",
    "x/Bindings/f.c",
    "default/g.cpp",
    "default/z/h.cpp",
    "export_model.py/inner.py",
]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    for rel in TREE:
        (root / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "src" / rel).write_text(rel)
    return root


def copied(tree: Path, include: list[str], exclude: list[str] | None = None) -> list[str]:
    library = tree.parent / "library"
    rule = CopyRule("src", "out", tuple(include), tuple(exclude or ()), optional=True)
    return [p.relative_to(library / "out").as_posix() for p in apply_rule(rule, tree, library)]


@pytest.mark.parametrize(
    ("include", "exclude", "expected"),
    [
        # `*` stays in the rule's folder and matches dot-files
        (["*.h"], [], [".hidden.h", "a.h"]),
        # `**/` is any number of folders, none too
        (["**/*.h"], [], [".hidden.h", "a.h", "x/b.h", "x/y/c.h"]),
        (["default/*.cpp"], [], ["default/g.cpp"]),
        # a trailing `**` is everything below that folder only
        (
            ["**/*.c"],
            ["Bindings/**", "**/*_f16.c"],
            ["x/Bindings/f.c"],
        ),
        # a name is that file, not a folder of that name
        (["export_model.py"], [], []),
    ],
)
def test_globs_read_as_shell_globs_with_globstar(
    tree: Path, include: list[str], exclude: list[str], expected: list[str]
) -> None:
    assert copied(tree, include, exclude) == expected


def test_a_required_rule_that_matches_nothing_fails(tree: Path) -> None:
    rule = CopyRule("src", "out", ("*.nothing",))
    with pytest.raises(FatalError, match=r"no file of src matches \['\*\.nothing'\]"):
        apply_rule(rule, tree, tree.parent / "library")
