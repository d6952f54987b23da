"""The step cache: a rebuild of the same ref reads the op set and the codegen from the cache,
gives the same bytes, and misses on a new commit, another op set, torch version or code; a
corrupt entry is a miss and is written again. On the small fixture upstream."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from et_fixture import Upstream, git

import generator.pipeline.codegen
import generator.pipeline.opset
from generator.pipeline.run import BuildOptions, BuildResult, build_library
from generator.util.cache import NO_STEP_CACHE_ENV, tree_hash
from generator.util.ui import QuietReporter


class Calls:
    """How often the cached steps really ran (codegen and op set selection)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.codegen = 0
        self.opset = 0
        run_codegen = generator.pipeline.codegen.run_codegen
        choose_op_set = generator.pipeline.opset.choose_op_set

        def codegen(*args: Any, **kw: Any) -> Any:
            self.codegen += 1
            return run_codegen(*args, **kw)

        def opset(*args: Any, **kw: Any) -> Any:
            self.opset += 1
            return choose_op_set(*args, **kw)

        monkeypatch.setattr(generator.pipeline.codegen, "run_codegen", codegen)
        monkeypatch.setattr(generator.pipeline.opset, "choose_op_set", opset)

    @property
    def both(self) -> tuple[int, int]:
        return self.opset, self.codegen


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Calls:
    return Calls(monkeypatch)


def make_builder(tmp_path: Path) -> Callable[..., tuple[BuildResult, str]]:
    """A build into a fresh folder on one shared cache; returns the result and its tree hash."""
    count = 0

    def build(**kw: Any) -> tuple[BuildResult, str]:
        nonlocal count
        count += 1
        out = tmp_path / f"out{count}" / "ExecuTorch"
        result = build_library(BuildOptions(cache_dir=tmp_path / "cache", **kw), out)
        return result, tree_hash(out)

    return build


def entries(tmp_path: Path, step: str) -> list[Path]:
    return sorted((tmp_path / "cache" / "steps" / step).glob("*.json"))


def test_a_rebuild_reads_the_cache_and_gives_the_same_bytes(
    tmp_path: Path, upstream: Upstream, calls: Calls
) -> None:
    build = make_builder(tmp_path)
    first, first_hash = build()
    assert calls.both == (1, 1)
    second, second_hash = build()
    assert calls.both == (1, 1)  # neither step ran again
    assert second_hash == first_hash
    assert second.op_set == first.op_set and second.kernel_count == first.kernel_count
    assert len(entries(tmp_path, "opset")) == len(entries(tmp_path, "codegen")) == 1


def test_a_new_commit_on_main_misses(tmp_path: Path, upstream: Upstream, calls: Calls) -> None:
    build = make_builder(tmp_path)
    first, _ = build()
    sha = upstream.commit_executorch({"NOTES.md": "a new commit\n"}, "a new commit")
    second, _ = build()
    assert second.sha == sha != first.sha
    assert calls.both == (2, 2)
    build(executorch_ref=first.sha)  # the old commit is still cached
    assert calls.both == (2, 2)


def test_another_op_set_misses(tmp_path: Path, upstream: Upstream, calls: Calls) -> None:
    build = make_builder(tmp_path)
    build()
    small, _ = build(ops=("aten::add.out",))
    assert calls.both == (2, 2)
    assert "aten::add.out" in small.op_set and "aten::mul.out" not in small.op_set
    build(ops=("aten::add.out",))
    assert calls.both == (2, 2)


def test_the_include_closure_is_cached_by_the_tree_it_reads(
    tmp_path: Path, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    build = make_builder(tmp_path)
    _, full = build()
    _, small = build(ops=("aten::add.out",))  # other op sources: the closure must miss
    monkeypatch.setenv(NO_STEP_CACHE_ENV, "1")
    _, small_uncached = build(ops=("aten::add.out",))
    _, full_uncached = build()
    assert (small, full) == (small_uncached, full_uncached) and small != full
    assert len(entries(tmp_path, "includes")) == 2


def test_another_torch_version_or_generator_code_misses(
    tmp_path: Path, upstream: Upstream, calls: Calls, monkeypatch: pytest.MonkeyPatch
) -> None:
    build = make_builder(tmp_path)
    _, reference = build()
    monkeypatch.setattr(generator.pipeline.codegen, "torch_version", lambda: "0.0.1")
    _, other_torch = build()
    assert calls.both == (1, 2)  # the op set does not depend on torch
    monkeypatch.setattr(generator.pipeline.codegen, "code_version", lambda *modules: "changed")
    monkeypatch.setattr(generator.pipeline.opset, "code_version", lambda *modules: "changed")
    _, other_code = build()
    assert calls.both == (2, 3)
    assert reference == other_torch == other_code


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # cut short
        lambda text: "",
        lambda text: "[1, 2]",
        # Valid JSON, but the result no longer matches its checksum.
        lambda text: text.replace("aten::add.out", "aten::sub.out"),
    ],
    ids=["truncated", "empty", "not-an-entry", "tampered"],
)
def test_a_corrupt_entry_is_a_miss_and_is_rewritten(
    tmp_path: Path, upstream: Upstream, calls: Calls, damage: Callable[[str], str]
) -> None:
    build = make_builder(tmp_path)
    _, reference = build()
    good = {p: p.read_text() for step in ("opset", "codegen") for p in entries(tmp_path, step)}
    for path, text in good.items():
        path.write_text(damage(text))
    _, rebuilt = build()
    assert calls.both == (2, 2)
    assert rebuilt == reference
    for path, text in good.items():
        assert json.loads(path.read_text()) == json.loads(text)  # written again, whole
    build()
    assert calls.both == (2, 2)


def test_the_cache_can_be_turned_off(
    tmp_path: Path, upstream: Upstream, calls: Calls, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(NO_STEP_CACHE_ENV, "1")
    build = make_builder(tmp_path)
    _, first = build()
    _, second = build()
    assert calls.both == (2, 2) and first == second
    assert not (tmp_path / "cache" / "steps").exists()


def test_an_annotated_tag_resolves_to_its_commit(tmp_path: Path, upstream: Upstream) -> None:
    # The checkout asks the remote for the ref's names only; the peeled commit must come too.
    git(upstream.executorch, "tag", "-a", "v9.0.0", "-m", "an annotated tag")
    result, _ = make_builder(tmp_path)(executorch_ref="v9.0.0")
    assert result.sha == upstream.shas["executorch"]


class Notes(QuietReporter):
    def __init__(self) -> None:
        self.notes: list[str] = []

    def note(self, message: str) -> None:
        self.notes.append(message)


def test_the_notes_say_what_came_from_the_cache(tmp_path: Path, upstream: Upstream) -> None:
    said = []
    for out in ("a", "b"):
        notes = Notes()
        build_library(BuildOptions(cache_dir=tmp_path / "cache"), tmp_path / out, notes)
        said.append([n for n in notes.notes if "from the step cache" in n])
    assert said[0] == []
    assert [n.split(" ", 1)[1] for n in said[1]] == [
        "operators (every Cortex-M op + default root ops) (from the step cache)",
        "kernels registered (from the step cache)",
        "headers and helper sources found by following includes (from the step cache)",
    ]
