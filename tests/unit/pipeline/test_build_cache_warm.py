"""The warm build's step-cache entries: each example's model.h ("model-h"), the model check's
pass ("model-check"), flatc's outputs ("flatc") and its version ("flatc-version"), and the
cached clone a checkout leaves alone when it already is the commit and paths asked for
(`checkout._checked_out`). A rebuild hits each entry and gives the bytes of a build without
the step cache; a changed input misses; a failure or a corrupt entry is never a wrong library.
On the small fixture upstream (tests/support/et_fixture.py)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import git as gitpython
import pytest
from et_fixture import DYNAMIC_ADD, FIXTURE_PTE, Upstream, wheel_flatc

import generator.pipeline.examples
import generator.pipeline.flatc
import generator.pipeline.models
import generator.vcs.checkout
from generator.library.layout import MODEL_HEADER
from generator.pipeline.flatc import (
    _flatc_version,
    generate_schema_headers,
    known_flatc_version,
    run_flatc,
)
from generator.pipeline.run import BuildOptions, build_library
from generator.util.cache import NO_STEP_CACHE_ENV, StepCache, tree_hash
from generator.util.errors import FatalError
from generator.util.urls import DEFAULT_EXECUTORCH_REPO
from generator.vcs.checkout import _checked_out, checkout

#: What the ExecuTorch fixture's checkouts below ask for (a few of the build's paths).
PATHS = ["runtime", "schema", "kernels/portable"]


def executable(path: Path, script: str) -> Path:
    """Write the shell script `script` to `path`, executable."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


class Runs:
    """How often the steps behind the new entries really ran: model.h written, the model
    check, and flatc started for code (its first argument, "--python" or "--cpp", logged by
    a wrapper around the fixture's flatc that FLATC points at)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, upstream: Upstream):
        self.model_h = 0
        self.model_check = 0
        self.log = tmp_path / "flatc.log"
        # Replaced where the steps look them up: examples.py's import of write_model_header,
        # models.py's own check_library_models (its `model_check` calls it).
        write_model_header = generator.pipeline.models.write_model_header
        check_library_models = generator.pipeline.models.check_library_models

        def model_h(*args: Any, **kw: Any) -> Any:
            self.model_h += 1
            return write_model_header(*args, **kw)

        def model_check(*args: Any, **kw: Any) -> Any:
            self.model_check += 1
            return check_library_models(*args, **kw)

        monkeypatch.setattr(generator.pipeline.examples, "write_model_header", model_h)
        monkeypatch.setattr(generator.pipeline.models, "check_library_models", model_check)
        wrapper = executable(
            tmp_path / "bin" / "flatc",
            f'[ "$1" = --version ] || echo "$1" >> "{self.log}"\nexec "{upstream.flatc}" "$@"\n',
        )
        monkeypatch.setenv("FLATC", str(wrapper))

    @property
    def flatc(self) -> list[str]:
        return lines(self.log)

    @property
    def counts(self) -> tuple[int, int, int]:
        """(model.h written, model checks, flatc runs)."""
        return self.model_h, self.model_check, len(self.flatc)


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, upstream: Upstream) -> Runs:
    return Runs(monkeypatch, tmp_path, upstream)


class Builder:
    """Builds into fresh folders on one shared cache; `uncached` builds with the step cache
    off (the reference a warm build must equal)."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.tmp_path = tmp_path
        self.monkeypatch = monkeypatch
        self.count = 0
        self.cache = tmp_path / "cache"

    def out(self) -> Path:
        self.count += 1
        return self.tmp_path / f"out{self.count}" / "ExecuTorch"

    def __call__(self, **kw: Any) -> Path:
        out = self.out()
        build_library(BuildOptions(cache_dir=self.cache, **kw), out)
        return out

    def uncached(self, **kw: Any) -> str:
        with self.monkeypatch.context() as m:
            m.setenv(NO_STEP_CACHE_ENV, "1")
            return tree_hash(self(**kw))

    def entries(self, step: str) -> list[Path]:
        return sorted((self.cache / "steps" / step).glob("*.json"))


@pytest.fixture
def build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, upstream: Upstream) -> Builder:
    return Builder(tmp_path, monkeypatch)


def banner(library: Path, example: str) -> str:
    """The first line of an example's model.h (it names the .pte it came from)."""
    return (library / "examples" / example / MODEL_HEADER).read_text().splitlines()[0]


# --- a rebuild hits, a changed input misses ----------------------------------------------------


def test_a_rebuild_hits_each_new_entry_and_gives_the_uncached_bytes(
    build: Builder, runs: Runs
) -> None:
    cold = tree_hash(build())
    # The three examples ship the same model.pte: one model.h made, the others hit its entry.
    assert runs.counts == (1, 1, 2)
    assert runs.flatc == ["--python", "--cpp"]  # the program reader, then the schema headers
    entries = {s: len(build.entries(s)) for s in ("model-h", "model-check", "flatc")}
    assert entries == {"model-h": 1, "model-check": 1, "flatc": 2}
    warm = tree_hash(build())
    assert runs.counts == (1, 1, 2)  # nothing ran again
    assert warm == cold == build.uncached()
    assert runs.counts == (4, 2, 4)  # the uncached build ran every step (model.h for each)


def test_another_pte_for_an_example_misses_its_model_h_and_the_check(
    build: Builder, runs: Runs
) -> None:
    build()
    other = build(example_pte=(("AddModel", DYNAMIC_ADD),))
    assert runs.counts == (2, 2, 2)  # AddModel's model.h and the check ran; flatc did not
    assert banner(other, "AddModel").startswith("// Generated from DynamicAdd.pte ")
    assert banner(other, "HelloExecuTorch").startswith("// Generated from model.pte ")
    assert len(build.entries("model-h")) == len(build.entries("model-check")) == 2
    assert tree_hash(other) == build.uncached(example_pte=(("AddModel", DYNAMIC_ADD),))


def test_the_same_bytes_under_another_file_name_miss_the_model_h(
    build: Builder, runs: Runs, tmp_path: Path
) -> None:
    # model.h's banner names the .pte file: the ref's model.pte copied under another name
    # must not be given the text made for model.pte.
    renamed = tmp_path / "renamed.pte"
    shutil.copyfile(FIXTURE_PTE / "AddModel.pte", renamed)
    build()
    library = build(example_pte=(("AddModel", renamed),))
    assert banner(library, "AddModel").startswith("// Generated from renamed.pte ")
    assert runs.model_h == 2
    assert tree_hash(library) == build.uncached(example_pte=(("AddModel", renamed),))


def test_a_changed_schema_misses_flatc(build: Builder, runs: Runs, upstream: Upstream) -> None:
    build()
    scalar_type = (upstream.executorch / "schema" / "scalar_type.fbs").read_text()
    upstream.commit_executorch(
        {"schema/scalar_type.fbs": scalar_type + "// a comment\n"}, "schema comment"
    )
    changed = tree_hash(build())
    assert runs.flatc == ["--python", "--cpp"] * 2  # both ran again, on the new schema
    assert len(build.entries("flatc")) == 4
    assert changed == build.uncached()


def test_a_failing_model_check_is_not_cached(build: Builder, runs: Runs) -> None:
    build()  # the default library passes: its entry must not answer for another library
    (passed,) = build.entries("model-check")
    # Without add.out the examples' AddModel.pte cannot run on the library.
    said = []
    for _ in range(2):
        with pytest.raises(FatalError) as failed:
            build(ops=("aten::mul.out",))
        said.append(str(failed.value))
    assert runs.model_check == 3  # the second failing run checked again
    assert "aten::add.out" in said[0] and said[1] == said[0]
    assert build.entries("model-check") == [passed]


def _stored(result: object, key: str) -> str:
    """A step-cache entry holding `result`, with a checksum that matches it."""
    digest = hashlib.sha256(json.dumps(result, sort_keys=True).encode()).hexdigest()
    return json.dumps({"key": key, "sha256": digest, "result": result}, sort_keys=True)


@pytest.mark.parametrize(
    "damage",
    [
        lambda stored: _stored(123, stored["key"]),  # checksum right, result not a text
        lambda stored: _stored(None, stored["key"]),
        # The text changed, the checksum not.
        lambda stored: json.dumps({**stored, "result": stored["result"] + "// extra\n"}),
        lambda stored: "{",
    ],
    ids=["not-a-string", "null", "tampered", "truncated"],
)
def test_a_corrupt_model_h_entry_is_a_miss_and_the_tree_is_right(
    build: Builder, runs: Runs, damage: Callable[[dict[str, Any]], str]
) -> None:
    reference = tree_hash(build())
    (entry,) = build.entries("model-h")
    good = json.loads(entry.read_text())
    entry.write_text(damage(good))
    assert tree_hash(build()) == reference
    assert runs.model_h == 2
    assert json.loads(entry.read_text()) == good  # written again, whole


# --- the checkout: a clean cached clone is left alone -----------------------------------------


def _clone(tmp_path: Path) -> tuple[gitpython.Repo, str, list[str]]:
    co = checkout(DEFAULT_EXECUTORCH_REPO, "main", PATHS, tmp_path / "cache")
    return gitpython.Repo(co.path), co.sha, sorted("/" + p for p in PATHS)


def test_a_clean_checkout_is_checked_out(tmp_path: Path, upstream: Upstream) -> None:
    repo, sha, patterns = _clone(tmp_path)
    assert _checked_out(repo, sha, patterns)
    assert (Path(repo.working_dir) / "runtime" / "core" / "error.h").is_file()


def test_a_second_checkout_of_the_same_commit_and_paths_skips_the_commands(
    tmp_path: Path, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers: list[bool] = []
    checked_out = generator.vcs.checkout._checked_out

    def spy(*args: Any) -> bool:
        answers.append(checked_out(*args))
        return answers[-1]

    monkeypatch.setattr(generator.vcs.checkout, "_checked_out", spy)
    first = checkout(DEFAULT_EXECUTORCH_REPO, "main", PATHS, tmp_path / "cache")
    second = checkout(DEFAULT_EXECUTORCH_REPO, "main", PATHS, tmp_path / "cache")
    assert answers == [False, True]  # a new clone is checked out; then it is left alone
    assert second == first
    checkout(DEFAULT_EXECUTORCH_REPO, "main", [*PATHS, "codegen"], tmp_path / "cache")
    assert answers == [False, True, False]  # other paths: checked out again
    assert (first.path / "codegen" / "macros.h").is_file()


def _ignored(work: Path) -> None:
    (work / ".git" / "info").mkdir(exist_ok=True)
    (work / ".git" / "info" / "exclude").write_text("*.o\n")
    (work / "runtime" / "core" / "junk.o").write_text("junk\n")


def _cone(work: Path) -> None:
    gitpython.Repo(work).git.config("--worktree", "core.sparseCheckoutCone", "true")


def _sparse_off(work: Path) -> None:
    gitpython.Repo(work).git.config("--worktree", "core.sparseCheckout", "false")


@pytest.mark.parametrize(
    "spoil",
    [
        lambda work: (work / "runtime" / "core" / "junk.h").write_text("// junk\n"),
        _ignored,
        lambda work: (work / "runtime" / "core" / "error.h").write_text("// changed\n"),
        lambda work: (work / "runtime" / "core" / "error.h").unlink(),
        _cone,
        _sparse_off,
        lambda work: (work / ".git" / "info" / "sparse-checkout").write_text("/runtime\n"),
    ],
    ids=["untracked", "ignored", "modified", "deleted", "cone", "sparse-off", "other-file"],
)
def test_a_spoilt_checkout_is_not_checked_out(
    tmp_path: Path, upstream: Upstream, spoil: Callable[[Path], object]
) -> None:
    repo, sha, patterns = _clone(tmp_path)
    spoil(Path(repo.working_dir))
    assert not _checked_out(repo, sha, patterns)
    # A checkout puts it right again: the commands the check skipped ran.
    checkout(DEFAULT_EXECUTORCH_REPO, sha, PATHS, tmp_path / "cache")
    assert _checked_out(repo, sha, patterns)
    assert not (Path(repo.working_dir) / "runtime" / "core" / "junk.h").exists()


def test_an_ignored_file_is_seen_though_plain_status_hides_it(
    tmp_path: Path, upstream: Upstream
) -> None:
    repo, sha, patterns = _clone(tmp_path)
    _ignored(Path(repo.working_dir))
    assert str(repo.git.status("--porcelain")) == ""
    assert not _checked_out(repo, sha, patterns)


def test_other_patterns_or_another_head_are_not_checked_out(
    tmp_path: Path, upstream: Upstream
) -> None:
    repo, sha, patterns = _clone(tmp_path)
    assert not _checked_out(repo, sha, patterns[:-1])
    assert not _checked_out(repo, sha, [*patterns, "/codegen"])
    assert not _checked_out(repo, sha, list(reversed(patterns)))
    newer = upstream.commit_executorch({"runtime/NOTES.md": "new\n"}, "a new commit")
    checkout(DEFAULT_EXECUTORCH_REPO, newer, PATHS, tmp_path / "cache")
    assert not _checked_out(repo, sha, patterns)
    assert _checked_out(repo, newer, patterns)
    repo.git.checkout("-q", "-B", "local", newer)  # HEAD a branch at the commit, not detached
    assert not _checked_out(repo, newer, patterns)


def test_a_warm_build_after_junk_in_the_cached_clone_ships_no_junk(
    build: Builder, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = tree_hash(build())
    (clone,) = (build.cache / "repos").glob("*-pytorch-executorch-*")
    (clone / "runtime" / "core" / "junk.h").write_text("// junk\n")
    library = build()
    assert tree_hash(library) == reference
    assert not (library / "src" / "executorch" / "runtime" / "core" / "junk.h").exists()
    # A changed tracked file too: `git status` sees it, so the clone is checked out again;
    # had the checkout trusted the clone (clean restores no tracked file), it would ship.
    shipped = Path("src") / "executorch" / "runtime" / "core" / "evalue.cpp"
    (clone / "runtime" / "core" / "evalue.cpp").write_text("// changed\n")
    assert tree_hash(build()) == reference
    (clone / "runtime" / "core" / "evalue.cpp").write_text("// changed\n")
    monkeypatch.setattr(generator.vcs.checkout, "_checked_out", lambda *args: True)
    assert (build() / shipped).read_text() == "// changed\n"


# --- run_flatc and known_flatc_version, on stand-in binaries -----------------------------------


def _schemas(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "schema"
    folder.mkdir()
    (folder / "program.fbs").write_text('include "scalar_type.fbs";\ntable P {}\n')
    (folder / "scalar_type.fbs").write_text("enum S : byte { A }\n")
    return [folder / "program.fbs"]


def _flatc(tmp_path: Path, body: str) -> tuple[Path, Path]:
    """A stand-in flatc running `body` with $out set to its -o folder; it logs each run."""
    log = tmp_path / "runs.log"
    script = (
        f'echo run >> "{log}"\nout=""\n'
        'while [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift 2;; *) shift;; esac; done\n' + body
    )
    return executable(tmp_path / "bin" / "flatc", script), log


def test_run_flatc_caches_its_outputs_by_the_schemas_folder(tmp_path: Path) -> None:
    flatc, log = _flatc(tmp_path, 'mkdir -p "$out/sub"\necho made > "$out/sub/p.h"\n')
    schemas, steps = _schemas(tmp_path), StepCache(tmp_path / "cache")
    for out in ("a", "b"):
        assert run_flatc(flatc, ["--cpp"], schemas, tmp_path / out, steps) is None
        assert (tmp_path / out / "sub" / "p.h").read_text() == "made\n"
    assert len(lines(log)) == 1 and (steps.hits, steps.misses) == (1, 1)
    # An included schema beside the one asked for changed: flatc runs again.
    (schemas[0].parent / "scalar_type.fbs").write_text("enum S : byte { A, B }\n")
    run_flatc(flatc, ["--cpp"], schemas, tmp_path / "c", steps)
    run_flatc(flatc, ["--python"], schemas, tmp_path / "d", steps)  # other flags
    assert len(lines(log)) == 3


def test_a_failing_flatc_returns_its_process_and_caches_nothing(tmp_path: Path) -> None:
    flatc, log = _flatc(tmp_path, 'echo "bad schema" >&2\nexit 3\n')
    schemas, steps = _schemas(tmp_path), StepCache(tmp_path / "cache")
    for _ in range(2):
        proc = run_flatc(flatc, ["--cpp"], schemas, tmp_path / "out", steps)
        assert proc is not None and proc.returncode == 3 and proc.stderr == "bad schema\n"
    assert len(lines(log)) == 2
    assert not (tmp_path / "cache" / "steps" / "flatc").exists()
    with pytest.raises(FatalError, match=r"flatc failed on .*schema: bad schema$"):
        generate_schema_headers(flatc, schemas[0].parent, tmp_path / "headers", steps)


def test_a_non_utf8_output_is_written_but_not_cached(tmp_path: Path) -> None:
    flatc, log = _flatc(tmp_path, "printf '\\377\\376' > \"$out/p.bin\"\n")
    schemas, steps = _schemas(tmp_path), StepCache(tmp_path / "cache")
    for out in ("a", "b"):
        assert run_flatc(flatc, ["--binary"], schemas, tmp_path / out, steps) is None
        assert (tmp_path / out / "p.bin").read_bytes() == b"\xff\xfe"
    assert len(lines(log)) == 2
    assert not (tmp_path / "cache" / "steps" / "flatc").exists()


def test_known_flatc_version_is_asked_once_per_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = wheel_flatc()
    if real is None:
        pytest.skip("the executorch wheel (its flatc, a program) is not installed")
    flatc = tmp_path / "flatc"
    shutil.copy2(real, flatc)
    asked: list[str] = []
    ask = generator.pipeline.flatc._flatc_version

    def counting(path: str, identity: tuple[int, ...]) -> str | None:
        asked.append(path)
        return ask(path, identity)

    monkeypatch.setattr(generator.pipeline.flatc, "_flatc_version", counting)
    steps = StepCache(tmp_path / "cache")
    for _ in range(2):  # two runs: the step cache remembers the program's answer
        assert known_flatc_version(flatc, steps) == "24.3.25"
    assert len(asked) == 1
    stat_ = flatc.stat()
    os.utime(flatc, ns=(stat_.st_atime_ns, stat_.st_mtime_ns + 10**9))  # the binary changed
    assert known_flatc_version(flatc, steps) == "24.3.25"
    assert len(asked) == 2
    assert known_flatc_version(tmp_path / "missing", steps) is None


def test_a_script_flatc_is_asked_each_run(tmp_path: Path) -> None:
    """A script (pyenv's shim, the wheel's entry point) may run another flatc tomorrow
    without changing itself: its answer is never remembered."""
    log = tmp_path / "asked.log"
    target = tmp_path / "version.txt"
    target.write_text("24.3.25")
    flatc = executable(
        tmp_path / "flatc", f'echo asked >> "{log}"\necho "flatc version $(cat {target})"\n'
    )
    steps = StepCache(tmp_path / "cache")
    _flatc_version.cache_clear()
    assert known_flatc_version(flatc, steps) == "24.3.25"
    target.write_text("23.5.26")  # the script now runs another flatc; the script is unchanged
    _flatc_version.cache_clear()  # a new process
    assert known_flatc_version(flatc, steps) == "23.5.26"
    assert len(lines(log)) == 2
    assert not (tmp_path / "cache" / "steps" / "flatc-version").exists()


def test_a_binary_without_a_version_is_not_remembered(tmp_path: Path) -> None:
    log = tmp_path / "asked.log"
    flatc = executable(tmp_path / "flatc", f'echo asked >> "{log}"\necho "no idea"\n')
    steps = StepCache(tmp_path / "cache")
    for _ in range(2):
        _flatc_version.cache_clear()
        assert known_flatc_version(flatc, steps) is None
    assert len(lines(log)) == 2
    assert not (tmp_path / "cache" / "steps" / "flatc-version").exists()


def test_an_empty_folder_left_in_a_clean_checkout_is_removed(
    tmp_path: Path, upstream: Upstream
) -> None:
    """`git status` shows no empty folder, so the skip cannot see one: `clean` always runs
    (a folder named like a source, e.g. `op_zzz.cpp/`, would otherwise be counted or copied)."""
    repo, sha, patterns = _clone(tmp_path)
    empty = Path(repo.working_dir) / "kernels" / "portable" / "op_zzz.cpp"
    empty.mkdir(parents=True)
    assert _checked_out(repo, sha, patterns)  # what the skip sees: nothing to do
    checkout(DEFAULT_EXECUTORCH_REPO, sha, PATHS, tmp_path / "cache")
    assert not empty.exists()
