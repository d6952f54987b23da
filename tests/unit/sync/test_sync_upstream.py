"""The sync pull request's section on upstream's `examples/arduino/` (issue 17 §4): what
changed there since the previous pin, and for each file whether the library uses it or
replaces it with the generator's own.

Each case runs on a small ExecuTorch-shaped repository the test builds, served under the
canonical URL through `url.<base>.insteadOf` (a `file://` URL, so the build's cached clone
is shallow and blobless exactly as against GitHub), checked out the way the build checks
it out (`generator.vcs.checkout.checkout`).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from et_fixture import commit_all, git, init_repo, write_tree
from facts_fixture import pull_facts
from git import GitCommandError

from generator.library.layout import EXAMPLES
from generator.pipeline.components import load_component
from generator.pipeline.examples import EXAMPLE_DATA, REF_EXAMPLES, plan_examples
from generator.pipeline.vendor import apply_rule
from generator.sync.body import render_body
from generator.sync.upstream import (
    MAX_FILES,
    FileChange,
    UpstreamChanges,
    arduino_changes,
    compare_url,
    github_web_url,
    upstream_markdown,
)
from generator.sync.upstream_roles import RENAMED, Role, classify
from generator.util.urls import DEFAULT_EXECUTORCH_REPO
from generator.vcs.checkout import checkout
from generator.vcs.clones import cached_clone
from generator.vcs.resolve import fetch_commit

ET = DEFAULT_EXECUTORCH_REPO
A = "examples/arduino"
#: What the build checks out of ExecuTorch that matters here.
PATHS = ("version.txt", A)
#: A commit no repository has.
NOWHERE = "d" * 40

#: The previous pin's examples/arduino/ (path below it -> content).
BASE_FILES: dict[str, str | bytes] = {
    "README.md": "# Arduino\n",
    "export_model.py": "print('export')\n",
    "build_arduino_library.sh": "#!/bin/sh\necho build\n",
    "notes.txt": "one\ntwo\nthree\n",
    "examples/AddModel/AddModel.ino": "void setup() {}\nvoid loop() {}\n// old\n",
    "examples/AddModel/model.pte": b"PTE\x00\x01\x02old",
    "examples/KeywordSpotting/mfcc_yes.h": "const float yes[] = {1};\n",
}


@dataclass(frozen=True)
class Repo:
    """The fixture's upstream and its commits (full SHAs)."""

    path: Path
    empty: str  # no examples/arduino/
    empty2: str  # still none: only runtime/ changed
    base: str  # BASE_FILES, on a branch of its own
    head: str  # examples/arduino/ changed every way (see `upstream`)
    same: str  # after head, only runtime/ changed
    gone: str  # examples/arduino/ removed
    many: str  # after head: MAX_FILES + 5 more files


@pytest.fixture
def upstream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    et = init_repo(tmp_path / "executorch")
    write_tree(et, {"version.txt": "1.6.0\n", "runtime/core.h": "// 1\n"})
    empty = commit_all(et, "no arduino yet")
    write_tree(et, {"runtime/core.h": "// 2\n"})
    empty2 = commit_all(et, "still none")
    # The previous pin is on a release branch, so the history of the new commits lacks it.
    git(et, "checkout", "-q", "-b", "release")
    write_tree(et, {f"{A}/{rel}": text for rel, text in BASE_FILES.items()})
    base = commit_all(et, "arduino (release)")
    git(et, "checkout", "-q", "main")
    write_tree(et, {f"{A}/{rel}": text for rel, text in BASE_FILES.items()})
    commit_all(et, "arduino")
    write_tree(
        et,
        {
            f"{A}/ETModel.h": "#pragma once\nclass ETModel {};\n// helper\n",
            f"{A}/examples/AddModel/AddModel.ino": "#include <ETModel.h>\nvoid setup() {}\n",
            f"{A}/examples/AddModel/model.pte": b"PTE\x00\x01\x02new",
            f"{A}/export_model.py": "print('export')\nprint('more')\n",
            f"{A}/examples/Blink/Blink.ino": "void setup() {}\n",
            "runtime/core.h": "// 3\n",
        },
    )
    git(et, "rm", "-q", f"{A}/examples/KeywordSpotting/mfcc_yes.h")
    git(et, "mv", f"{A}/notes.txt", f"{A}/NOTES.md")
    head = commit_all(et, "arduino reworked")
    write_tree(et, {"runtime/core.h": "// 4\n"})
    same = commit_all(et, "runtime only")
    write_tree(et, {f"{A}/extra_{i:02}.txt": f"{i}\n" for i in range(MAX_FILES + 5)})
    many = commit_all(et, "many files")
    git(et, "checkout", "-q", "--detach", same)
    git(et, "rm", "-q", "-r", A)
    gone = commit_all(et, "arduino removed")
    config = tmp_path / "gitconfig"
    for key, value in (
        (f"url.file://{et}.insteadOf", ET),
        ("protocol.file.allow", "always"),
        ("uploadpack.allowFilter", "true"),
        ("uploadpack.allowAnySHA1InWant", "true"),
    ):
        subprocess.run(["git", "config", "--file", str(config), key, value], check=True)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return Repo(et, empty, empty2, base, head, same, gone, many)


def _link(old: str, new: str) -> str:
    return f"https://github.com/pytorch/executorch/compare/{old}...{new}"


def _built(cache: Path, *shas: str, url: str = ET) -> None:
    """Check out each of `shas` in turn into the cache, as builds of them would."""
    for sha in shas:
        checkout(url, sha, PATHS, cache)


def _has(cache: Path, sha: str) -> bool:
    """Whether the cached clone holds the commit `sha` (asked without fetching)."""
    repo = cached_clone(ET, cache)
    assert repo is not None
    try:
        repo.git.rev_list("--no-walk", "--missing=print", sha)
    except GitCommandError:
        return False
    finally:
        repo.close()
    return True


def _missing(cache: Path, url: str, sha: str) -> set[str]:
    """The objects of the commit `sha` that the cached clone lacks (asked without fetching)."""
    repo = cached_clone(url, cache)
    assert repo is not None
    out = repo.git.rev_list("--objects", "--no-walk", "--missing=print", sha)
    repo.close()
    return {line[1:] for line in str(out).splitlines() if line.startswith("?")}


def _blob(up: Repo, sha: str, path: str) -> str:
    return git(up.path, "rev-parse", f"{sha}:{path}")


HEAD_TABLE = [
    "| File | Change | Lines | In the library |",
    "|---|---|---:|---|",
    "| `ETModel.h` | added | +3 -0 | superseded by `data/library_template/src/ETModel.h` |",
    "| `NOTES.md` | renamed from `notes.txt` | +0 -0 | not used |",
    "| `examples/AddModel/AddModel.ino` | modified | +1 -2 | superseded by "
    "`data/library_template/examples/AddModel/AddModel.ino` |",
    "| `examples/AddModel/model.pte` | modified | binary | used: the `AddModel` example's "
    "model (its `model.h` is made from it) |",
    "| `examples/Blink/Blink.ino` | added | +1 -0 | not used: the library has no example `Blink` |",
    "| `examples/KeywordSpotting/mfcc_yes.h` | deleted | +0 -1 | used: copied into "
    "`examples/KeywordSpotting/` |",
    # The ref's KeywordSpotting recipe: not shipped, the library's export_model.py is ours.
    "| `export_model.py` | modified | +1 -0 | superseded by `data/extras/tools/export_model.py` |",
]


def _head_section(old: str, new: str, *, link: bool = True) -> str:
    shown = f"`{old[:12]}...{new[:12]}`"
    ranged = f"[{shown}]({_link(old, new)})" if link else shown
    return "\n".join(
        [
            "### Upstream `examples/arduino/` since the last sync",
            "",
            f"{ranged}: 7 files changed, +6 -3 lines.",
            "",
            "> [!IMPORTANT]",
            "> 3 of them never reach the library: they are files the library replaces with the "
            "generator's own (named below). Port an upstream fix that applies to the "
            "generator's file, in the generator's repository.",
            "",
            *HEAD_TABLE,
            "",
            "- [ ] Each superseded file above: its upstream change ported to the generator, "
            "or not needed there",
            "",
        ]
    )


# -- the comparisons -----------------------------------------------------------------------


def test_every_kind_of_change_listed_and_classified(upstream: Repo, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _built(cache, upstream.head)
    assert not _has(cache, upstream.base)  # the build's clone lacks the previous pin
    changes = arduino_changes(ET, upstream.base, upstream.head, cache)
    assert changes.outcome == "changed"
    assert upstream_markdown(changes) == _head_section(upstream.base, upstream.head)
    assert [f.status for f in changes.files] == [
        "added",
        "renamed",
        "modified",
        "modified",
        "added",
        "deleted",
        "modified",
    ]


def test_only_the_changed_files_blobs_are_fetched(upstream: Repo, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _built(cache, upstream.head)
    arduino_changes(ET, upstream.base, upstream.head, cache)
    missing = _missing(cache, ET, upstream.base)
    # Outside examples/arduino/ nothing was fetched; the old side of each changed file was.
    assert _blob(upstream, upstream.base, "runtime/core.h") in missing
    assert _blob(upstream, upstream.head, "runtime/core.h") in _missing(cache, ET, upstream.head)
    for changed in ("examples/AddModel/AddModel.ino", "export_model.py", "notes.txt"):
        assert _blob(upstream, upstream.base, f"{A}/{changed}") not in missing


def test_a_cache_that_built_both_gives_the_same_section(upstream: Repo, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _built(cache, upstream.base, upstream.head)
    changes = arduino_changes(ET, upstream.base, upstream.head, cache)
    assert upstream_markdown(changes) == _head_section(upstream.base, upstream.head)


def test_a_url_not_on_github_gets_no_link(upstream: Repo, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    url = f"file://{upstream.path}"
    _built(cache, upstream.head, url=url)
    changes = arduino_changes(url, upstream.base, upstream.head, cache)
    assert changes.compare_url is None
    assert upstream_markdown(changes) == _head_section(upstream.base, upstream.head, link=False)


def test_first_sync_says_so(tmp_path: Path) -> None:
    changes = arduino_changes(ET, None, "a" * 40, tmp_path / "cache")
    assert upstream_markdown(changes) == (
        "### Upstream `examples/arduino/` since the last sync\n\n"
        "First sync: there is no previous pin to compare `examples/arduino/` with.\n"
    )
    assert not (tmp_path / "cache").exists()


def test_the_same_pin_needs_no_git(tmp_path: Path) -> None:
    changes = arduino_changes(ET, "a" * 40, "a" * 40, tmp_path / "cache")
    assert upstream_markdown(changes) == (
        "### Upstream `examples/arduino/` since the last sync\n\n"
        "The previous pin is this commit (aaaaaaaaaaaa): nothing changed in `examples/arduino/`.\n"
    )


def test_nothing_changed_there_is_one_line(upstream: Repo, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _built(cache, upstream.same)
    changes = arduino_changes(ET, upstream.head, upstream.same, cache)
    old, new = upstream.head, upstream.same
    assert upstream_markdown(changes) == (
        "### Upstream `examples/arduino/` since the last sync\n\n"
        f"Nothing changed in `examples/arduino/` since the previous pin "
        f"([`{old[:12]}...{new[:12]}`]({_link(old, new)})).\n"
    )


def test_a_ref_without_the_folder(upstream: Repo, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _built(cache, upstream.empty2)
    neither = arduino_changes(ET, upstream.empty, upstream.empty2, cache)
    assert upstream_markdown(neither) == (
        "### Upstream `examples/arduino/` since the last sync\n\n"
        f"Neither the previous pin `{upstream.empty[:12]}` nor `{upstream.empty2[:12]}` has "
        "`examples/arduino/`: nothing to compare.\n"
    )
    _built(cache, upstream.gone)
    removed = upstream_markdown(arduino_changes(ET, upstream.same, upstream.gone, cache))
    lines = removed.splitlines()
    assert lines[2] == (
        f"[`{upstream.same[:12]}...{upstream.gone[:12]}`]"
        f"({_link(upstream.same, upstream.gone)}): 8 files changed, +0 -14 lines."
    )
    assert lines[3] == f"`{upstream.gone[:12]}` has no `examples/arduino/`: ExecuTorch removed it."
    assert (
        "| `ETModel.h` | deleted | +0 -3 | superseded by `data/library_template/src/ETModel.h` |"
        in lines
    )
    _built(cache, upstream.base)
    added = upstream_markdown(arduino_changes(ET, upstream.empty2, upstream.base, cache))
    assert (
        added.splitlines()[3]
        == f"The previous pin `{upstream.empty2[:12]}` had no `examples/arduino/`."
    )


def test_an_old_pin_the_remote_lacks_is_not_compared(upstream: Repo, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _built(cache, upstream.head)
    changes = arduino_changes(ET, NOWHERE, upstream.head, cache)
    assert changes.outcome == "not-compared"
    text = upstream_markdown(changes)
    assert text.startswith(
        "### Upstream `examples/arduino/` since the last sync\n\n"
        "Could not compare `examples/arduino/` with the previous pin `dddddddddddd`: the "
        "previous pin could not be fetched from https://github.com/pytorch/executorch.git: "
    )
    assert f"not our ref {NOWHERE}" in text
    assert text.endswith(
        f". Compare by hand: [`dddddddddddd...{upstream.head[:12]}`]"
        f"({_link(NOWHERE, upstream.head)}).\n"
    )


def test_without_the_builds_clone_it_says_so(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    changes = arduino_changes(ET, "b" * 40, "a" * 40, cache)
    assert upstream_markdown(changes) == (
        "### Upstream `examples/arduino/` since the last sync\n\n"
        "Could not compare `examples/arduino/` with the previous pin `bbbbbbbbbbbb`: the "
        f"build's clone of {ET} is not in the cache {cache.resolve()}. Compare by hand: "
        f"[`bbbbbbbbbbbb...aaaaaaaaaaaa`]({_link('b' * 40, 'a' * 40)}).\n"
    )
    assert not cache.exists()


def test_offline_without_the_blobs_names_and_statuses_still_show(
    upstream: Repo, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    _built(cache, upstream.head)
    repo = cached_clone(ET, cache)
    assert repo is not None
    fetch_commit(repo, upstream.base)  # trees, no blobs
    repo.close()
    shutil.move(upstream.path, tmp_path / "away")  # the remote is gone: no blob can be fetched
    changes = arduino_changes(ET, upstream.base, upstream.head, cache)
    lines = upstream_markdown(changes).splitlines()
    assert lines[2].startswith(
        f"[`{upstream.base[:12]}...{upstream.head[:12]}`]({_link(upstream.base, upstream.head)})"
        ": 8 files changed. Line counts are not known: "
    )
    rows = [line for line in lines if line.startswith("| `")]
    # Without blobs git detects no rename: the rename is a deletion and an addition.
    assert rows == [
        "| `ETModel.h` | added | n/a | superseded by `data/library_template/src/ETModel.h` |",
        "| `NOTES.md` | added | n/a | not used |",
        "| `examples/AddModel/AddModel.ino` | modified | n/a | superseded by "
        "`data/library_template/examples/AddModel/AddModel.ino` |",
        "| `examples/AddModel/model.pte` | modified | n/a | used: the `AddModel` example's "
        "model (its `model.h` is made from it) |",
        "| `examples/Blink/Blink.ino` | added | n/a | not used: the library has no example "
        "`Blink` |",
        "| `examples/KeywordSpotting/mfcc_yes.h` | deleted | n/a | used: copied into "
        "`examples/KeywordSpotting/` |",
        "| `export_model.py` | modified | n/a | superseded by "
        "`data/extras/tools/export_model.py` |",
        "| `notes.txt` | deleted | n/a | not used |",
    ]


def test_a_long_list_is_capped(upstream: Repo, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _built(cache, upstream.many)
    changes = arduino_changes(ET, upstream.base, upstream.many, cache)
    assert len(changes.files) == 7 + MAX_FILES + 5
    lines = upstream_markdown(changes).splitlines()
    assert sum(1 for line in lines if line.startswith("| `")) == MAX_FILES
    link = _link(upstream.base, upstream.many)
    assert (
        f"…and 12 more (12 unused) (see [`{upstream.base[:12]}...{upstream.many[:12]}`]({link}))."
        in lines
    )


def test_the_section_stays_small_however_many_files() -> None:
    long = f"{A}/" + "x" * 5000
    files = tuple(
        FileChange(
            f"{long}{i}", "renamed", Role("superseded", "`y`"), old_path=long, added=1, deleted=1
        )
        for i in range(10_000)
    )
    text = upstream_markdown(UpstreamChanges("a" * 40, "b" * 40, "changed", _link("a", "b"), files))
    assert len(text) < 12_000
    assert "…and 9,975 more" not in text and "…and 9975 more (9975 superseded)" in text


def test_the_pull_request_body_carries_the_section(upstream: Repo, tmp_path: Path) -> None:
    facts = pull_facts(
        ref="main",
        sha=upstream.head,
        base_pin=upstream.base,
        upstream_version="1.6.0",
        library_version="1.6.0",
        base_version="1.5.0",
    )
    without = render_body(facts)
    assert "examples/arduino" not in without
    cache = tmp_path / "cache"
    _built(cache, upstream.head)
    facts.upstream = arduino_changes(ET, upstream.base, upstream.head, cache)
    body = render_body(facts)
    section = _head_section(upstream.base, upstream.head)
    assert f"changed.\n\n{section}\n### Check: passed\n" in body
    assert body.replace(section + "\n", "") == without


# -- the roles come from the build's own tables ---------------------------------------------


def test_what_the_build_reads_of_examples_arduino_is_used(tmp_path: Path) -> None:
    """Every file the build takes from examples/arduino/ (the examples' models, found by
    `plan_examples`; their data, by `EXAMPLE_DATA`; the copy rules' files, by `apply_rule`)
    is classified as used, and nothing else is."""
    root = tmp_path / "et"
    files = {"export_model.py", "generate_test_input.py", "pte_to_header.py", "ETModel.h"}
    for name in EXAMPLES:
        files |= {f"examples/{name}/model.pte", f"examples/{name}/{name}.ino"}
        files |= {f"examples/{name}/{p.replace('*', 'x')}" for p in EXAMPLE_DATA.get(name, ())}
    write_tree(root, {f"{A}/{rel}": "x\n" for rel in files})
    read = {p.pte.relative_to(root).as_posix() for p in plan_examples(root, EXAMPLES, {})}
    for name, patterns in EXAMPLE_DATA.items():
        for pattern in patterns:
            read |= {
                p.relative_to(root).as_posix() for p in (root / REF_EXAMPLES / name).glob(pattern)
            }
    copied = tmp_path / "lib"
    for rule in load_component("executorch").files:
        if rule.source.startswith(A):
            for dest in apply_rule(rule, root, copied):
                read.add(f"{rule.source}/{dest.relative_to(copied / rule.dest).as_posix()}")
    assert len(read) == len(EXAMPLES) + sum(map(len, EXAMPLE_DATA.values())) + 1
    used = {f"{A}/{rel}" for rel in files if classify(f"{A}/{rel}").kind == "used"}
    assert used == read


def test_superseded_files_name_a_file_the_generator_has() -> None:
    assert classify(f"{A}/ETModel.h") == Role("superseded", "`data/library_template/src/ETModel.h`")
    assert classify(f"{A}/arduino_pal.cpp") == Role(
        "superseded",
        "`data/library_template/src/executorch/runtime/platform/default/arduino_pal.cpp`",
    )
    assert classify(f"{A}/library.properties") == Role(
        "superseded", "`data/library_template/library.properties.jinja`"
    )
    assert classify(f"{A}/README.md") == Role(
        "superseded", "`data/library_template/README.md.jinja`"
    )
    assert classify(f"{A}/pte_to_header.py") == Role(
        "superseded", "`data/extras/tools/pte_to_header.py`"
    )
    assert classify(f"{A}/examples/KeywordSpotting/KeywordSpotting.ino") == Role(
        "superseded", "`data/library_template/examples/KeywordSpotting/KeywordSpotting.ino`"
    )
    assert classify(f"{A}/examples/KeywordSpotting/model.pth") == Role("unused")
    assert classify(f"{A}/.gitignore") == Role("unused")
    assert classify("docs/source/index.md") == Role("unused")
    root = Path(__file__).resolve().parents[3]
    for ours in RENAMED.values():
        named = [part for part in ours.split("`")[1::2] if "/" in part]
        assert all((root / path).is_file() for path in named), ours


def test_github_web_urls() -> None:
    for url in (
        "https://github.com/pytorch/executorch.git",
        "https://github.com/pytorch/executorch",
        "https://github.com/pytorch/executorch/",
        "git@github.com:pytorch/executorch.git",
        "ssh://git@github.com/pytorch/executorch.git",
        "https://user@GitHub.com/pytorch/executorch.git",
    ):
        assert github_web_url(url) == "https://github.com/pytorch/executorch", url
    assert github_web_url("https://github.com/me/executorch-fork.git") == (
        "https://github.com/me/executorch-fork"
    )
    for url in (
        "https://gitlab.com/pytorch/executorch.git",
        "https://github.example.com/pytorch/executorch.git",
        "https://github.com/pytorch/executorch/tree/main",
        "/srv/mirrors/executorch",
        "file:///srv/mirrors/executorch",
    ):
        assert github_web_url(url) is None, url
    old, new = "a" * 40, "b" * 40
    assert (
        compare_url(ET, old, new) == f"https://github.com/pytorch/executorch/compare/{old}...{new}"
    )
    # a pin read from the base branch is any text until checked: no link from it
    for pin in ("a" * 39, "A" * 40, f"{old})](https://evil.example)", f"{old}\n# Heading"):
        assert compare_url(ET, pin, new) is None, pin
        assert compare_url(ET, new, pin) is None, pin


def test_a_new_commit_the_clone_lacks_is_not_compared(upstream: Repo, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _built(cache, upstream.head)
    changes = arduino_changes(ET, upstream.head, NOWHERE, cache)
    assert upstream_markdown(changes).splitlines()[2] == (
        f"Could not compare `examples/arduino/` with the previous pin `{upstream.head[:12]}`: "
        "the build's clone lacks the new commit dddddddddddd. Compare by hand: "
        f"[`{upstream.head[:12]}...dddddddddddd`]({_link(upstream.head, NOWHERE)})."
    )


# -- hostile input: a pin from the base branch, names from upstream --------------------------


def test_a_previous_pin_that_is_not_a_sha_never_reaches_git(upstream: Repo, tmp_path: Path) -> None:
    # the base branch's executorch_pin.txt is anyone's text: as an argument of `git fetch`,
    # "--upload-pack=CMD" would run CMD for this file:// remote
    cache, marker = tmp_path / "cache", tmp_path / "ran"
    _built(cache, upstream.head)
    for pin in (
        f"--upload-pack=touch {marker}; git-upload-pack",
        "abc)](https://evil.example) @octocat\n\n# Heading",
        upstream.base[:12],
        upstream.base.upper(),
    ):
        changes = arduino_changes(ET, pin, upstream.head, cache)
        assert (changes.outcome, changes.compare_url) == ("not-compared", None), pin
        assert not marker.exists()
        text = upstream_markdown(changes)
        assert text.endswith(
            ": the previous pin (the base branch's executorch_pin.txt or extras/library.json) "
            "is not a commit SHA (40 hex digits).\n"
        ), text
        assert len(text.splitlines()) == 3 and "Compare by hand" not in text, text
    text = upstream_markdown(arduino_changes(ET, "abc)](x)\n# H", upstream.head, cache))
    assert "with the previous pin `abc)](x)\\n# H`: the previous pin" in text


def test_fetch_commit_never_reads_its_argument_as_an_option(upstream: Repo, tmp_path: Path) -> None:
    cache, marker = tmp_path / "cache", tmp_path / "ran"
    _built(cache, upstream.head)
    repo = cached_clone(ET, cache)
    assert repo is not None
    with pytest.raises(GitCommandError, match="invalid refspec '--upload-pack"):
        fetch_commit(repo, f"--upload-pack=touch {marker}; git-upload-pack")
    repo.close()
    assert not marker.exists()


#: Names a contributor could give files under examples/arduino/ (below it).
HOSTILE = {
    "ok\n\n@octocat <img src=x> [click](javascript:alert)\n| a | b |": (
        "`ok\\n\\n@octocat <img src=x> [click](javascript:alert)\\n\\| a \\| b \\|`"
    ),
    "pipe|in|name.h": "`pipe\\|in\\|name.h`",
    "tick`s``in.h": "```tick`s``in.h```",
    "`lead.h": "`` `lead.h ``",
    "tab\tand\rcr\x7f.h": "`tab\\tand\\rcr\\x7f.h`",
    "line\u2028sep.h": "`line\\u2028sep.h`",
    "examples/KW`|x\n@here/f.h": "``examples/KW`\\|x\\n@here/f.h``",
}


def test_hostile_file_names_stay_inside_their_code_span_and_row(
    upstream: Repo, tmp_path: Path
) -> None:
    write_tree(upstream.path, {f"{A}/{name}": "x\n" for name in HOSTILE})
    new = commit_all(upstream.path, "hostile names")
    cache = tmp_path / "cache"
    _built(cache, new)
    changes = arduino_changes(ET, upstream.same, new, cache)
    assert changes.outcome == "changed"
    lines = upstream_markdown(changes).splitlines()
    start = lines.index("| File | Change | Lines | In the library |") + 2
    end = lines.index("", start)
    rows = lines[start:end]
    assert all(row.startswith("| ") and row.endswith(" |") for row in rows), rows
    cells = {row.split(" | ")[0].removeprefix("| "): row for row in rows}
    assert set(HOSTILE.values()) <= set(cells), rows
    assert len(rows) == len(changes.files) < MAX_FILES  # one line a file
    # an example folder's name reaches the role text through the same escaping
    assert cells[HOSTILE["examples/KW`|x\n@here/f.h"]].endswith(
        "| not used: the library has no example ``KW`\\|x\\n@here`` |"
    )


def test_bidirectional_controls_in_a_name_are_shown_as_escapes() -> None:
    """A right-to-left override would make a file name read otherwise than it is in the pull
    request (CVE-2021-42574): shown as its escape, as the other invisible characters are."""
    from generator.util.markdown import inline_code

    assert inline_code("evil\u202egnp.ino") == "`evil\\u202egnp.ino`"
    assert inline_code("a\u2066b\u200fc") == "`a\\u2066b\\u200fc`"
    assert inline_code("plain ü name") == "`plain ü name`"
