"""`tree_hash` and `tree_files` (generator/util/cache.py): the walk with one `os.scandir` per
folder selects and orders the files as `sorted(rglob("*"))` with `is_file` does, so the step
cache's keys and the benchmark's byte-identity check keep their values."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from generator.util.cache import tree_files, tree_hash


def rglob_hash(folder: Path) -> str:
    """The hash as it was computed with `rglob` (the reference)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def tricky_tree(root: Path) -> Path:
    """Names whose string order is not their segment order ("a-b" < "a/b" as text, "a" <
    "a-b" as segments), a dot-file, an empty folder, links to a file and to a folder."""
    for rel, text in {
        "a/b": "1",
        "a-b": "2",
        "a/c/d.h": "3",
        ".hidden": "4",
        "z/y/x.cpp": "5",
        "a.txt": "6",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "empty").mkdir()
    os.symlink("a.txt", root / "link.txt")
    os.symlink("a", root / "linked-folder")
    return root


def test_the_walk_orders_by_segments_like_sorted_rglob(tmp_path: Path) -> None:
    tree = tricky_tree(tmp_path / "t")
    assert [rel for rel, _ in tree_files(tree)] == [
        ".hidden",
        "a/b",
        "a/c/d.h",
        "a-b",
        "a.txt",
        "link.txt",
        "z/y/x.cpp",
    ]
    assert tree_files(tree)[0][1] == str(tree / ".hidden")


def test_the_hash_is_the_rglob_one(tmp_path: Path) -> None:
    tree = tricky_tree(tmp_path / "t")
    assert tree_hash(tree) == rglob_hash(tree)


def test_a_changed_byte_or_name_changes_the_hash(tmp_path: Path) -> None:
    tree = tricky_tree(tmp_path / "t")
    before = tree_hash(tree)
    (tree / "a/c/d.h").write_text("4")
    changed = tree_hash(tree)
    assert changed != before
    (tree / "a/c/d.h").rename(tree / "a/c/e.h")
    assert tree_hash(tree) not in (before, changed)
    assert tree_hash(tree) == rglob_hash(tree)
