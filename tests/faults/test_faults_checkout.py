"""Trust under faults (issue 15), the checkout's part: a ref means the same cold or warm, a
stopped run's leftovers are repaired, a component pin the remote lacks says so, and a URL
whose transport is refused gives a clear error and leaves nothing in the cache.

Everything runs on the small repositories of et_fixture, served under the upstream URLs.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from et_fixture import Upstream, git, make_upstream

from generator.pipeline.run import BuildOptions, build_library
from generator.util.errors import FatalError
from generator.util.urls import DEFAULT_EXECUTORCH_REPO
from generator.vcs.checkout import checkout

ET = DEFAULT_EXECUTORCH_REPO
PATHS = ("version.txt",)


# -- the upstream: main moved on past a tag, a side branch with two commits sharing a prefix,
# -- a commit of a deleted branch ------------------------------------------------------------


@dataclass(frozen=True)
class Refs:
    """The fixture's commits of interest (full SHAs)."""

    main: str  # main's tip
    tagged: str  # what the annotated tag v1.6.0 points at (main's parent)
    prefix: str  # a 4-digit prefix two commits of the side branch begin
    colliding: tuple[str, str]
    gone: str  # the tip of a branch deleted upstream (the object stays there)
    absent: str  # a 4-digit prefix no commit of any branch begins


def _side_branch(repo: Path, parent: str) -> list[str]:
    """1,500 commits on `side` (deterministic: fixed dates), for a 4-digit collision."""
    stream = [
        f"commit refs/heads/side\ncommitter Fixture <f@example.invalid> {1700000000 + i} "
        f"+0000\ndata {len(str(i))}\n{i}\n" + (f"from {parent}\n" if i == 0 else "")
        for i in range(1500)
    ]
    subprocess.run(
        ["git", "-C", str(repo), "fast-import", "--quiet"],
        input="\n".join(stream),
        text=True,
        check=True,
    )
    return git(repo, "rev-list", "refs/heads/side").split()


@pytest.fixture(scope="module")
def shaped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Upstream, Refs]:
    up = make_upstream(tmp_path_factory.mktemp("faults"))
    repo = up.executorch
    tagged = up.shas["executorch"]
    git(repo, "tag", "-a", "-m", "annotated", "v1.6.0", tagged)
    main_tip = up.commit_executorch({"version.txt": "1.6.0\n"}, "bump")
    side = _side_branch(repo, tagged)
    history = set(side) | {main_tip, tagged}
    seen: dict[str, str] = {}
    colliding: tuple[str, str] | None = None
    for sha in sorted(history):
        if sha[:4] in seen:
            colliding = (seen[sha[:4]], sha)
            break
        seen[sha[:4]] = sha
    assert colliding is not None, "no 4-digit collision among 1,500 commits"
    git(repo, "checkout", "-q", "-b", "gone", tagged)
    gone = up.commit_executorch({"version.txt": "0.0.1\n"}, "on a branch deleted later")
    git(repo, "checkout", "-q", "main")
    git(repo, "branch", "-q", "-D", "gone")
    assert not any(sha.startswith(gone[:7]) for sha in history)
    prefixes = {sha[:4] for sha in history | {gone}}
    absent = next(p for p in (f"{i:04x}" for i in range(0x10000)) if p not in prefixes)
    refs = Refs(main_tip, tagged, colliding[0][:4], colliding, gone, absent)
    return up, refs


@pytest.fixture
def up(shaped: tuple[Upstream, Refs], monkeypatch: pytest.MonkeyPatch) -> Upstream:
    for key, value in shaped[0].env().items():
        monkeypatch.setenv(key, value)
    return shaped[0]


@pytest.fixture
def refs(shaped: tuple[Upstream, Refs]) -> Refs:
    return shaped[1]


def _warm(cache: Path, refs: Refs) -> None:
    """A cache as earlier runs leave it: main (one commit deep), the tag, one of the two
    colliding commits and the deleted branch's commit, each fetched by itself."""
    for ref in ("main", "v1.6.0", refs.colliding[0], refs.gone):
        checkout(ET, ref, PATHS, cache)


def _outcome(cache: Path, ref: str) -> str:
    """The SHA `ref` checks out as, or the error (the cache's path taken out)."""
    try:
        return checkout(ET, ref, PATHS, cache).sha
    except FatalError as e:
        return "error: " + str(e).replace(str(cache), "<cache>")


# -- §3: what a ref means does not depend on what the cache holds ----------------------------

CASES: dict[str, tuple[Callable[[Refs], str], Callable[[Refs], str]]] = {
    # form: (ref, what it must mean)
    "branch": (lambda r: "main", lambda r: r.main),
    "annotated tag": (lambda r: "v1.6.0", lambda r: r.tagged),
    "full SHA": (lambda r: r.colliding[1], lambda r: r.colliding[1]),
    "full SHA, upper case": (lambda r: r.main.upper(), lambda r: r.main),
    "short SHA, unique": (lambda r: r.main[:8], lambda r: r.main),
    "short SHA, ambiguous": (lambda r: r.prefix, lambda r: f"error: {r.prefix!r} is ambiguous"),
    "short SHA of no branch": (lambda r: r.gone[:10], lambda r: "error: "),
    "short SHA, unknown": (lambda r: r.absent, lambda r: "error: "),
    "unknown name": (lambda r: "nope", lambda r: "error: "),
}


@pytest.mark.parametrize("form", list(CASES))
def test_a_ref_means_the_same_cold_and_warm(
    form: str, tmp_path: Path, up: Upstream, refs: Refs
) -> None:
    ref_of, meaning_of = CASES[form]
    ref, meaning = ref_of(refs), meaning_of(refs)
    cold = _outcome(tmp_path / "cold", ref)
    warm_cache = tmp_path / "warm"
    _warm(warm_cache, refs)
    warm = _outcome(warm_cache, ref)
    assert cold == warm
    assert cold.startswith(meaning)
    if form == "short SHA, ambiguous":
        assert all(sha in cold for sha in refs.colliding) and "give more digits" in cold
    elif cold.startswith("error: "):
        assert f"no branch, tag or commit named {ref!r}" in cold
        assert "Give a branch" in cold  # the user's ref: what a ref can be


def test_the_issue_case_a_prefix_the_warm_cache_holds_once_is_still_ambiguous(
    tmp_path: Path, up: Upstream, refs: Refs
) -> None:
    cache = tmp_path / "cache"
    assert checkout(ET, refs.colliding[0], PATHS, cache).sha == refs.colliding[0]
    with pytest.raises(FatalError, match=f"{refs.prefix!r} is ambiguous"):
        checkout(ET, refs.prefix, PATHS, cache)
    # More digits name one commit, cold or warm.
    assert checkout(ET, refs.colliding[1][:12], PATHS, cache).sha == refs.colliding[1]


def test_a_moving_branch_after_full_history_keeps_the_clone_complete(
    tmp_path: Path, up: Upstream, refs: Refs
) -> None:
    cache = tmp_path / "cache"
    checkout(ET, refs.main[:8], PATHS, cache)  # fetches every branch's history
    clone = next((cache / "repos").iterdir())
    assert git(clone, "rev-parse", "--is-shallow-repository") == "false"
    checkout(ET, "v1.6.0", PATHS, cache)
    checkout(ET, "main", PATHS, cache)
    assert git(clone, "rev-parse", "--is-shallow-repository") == "false"


def test_without_the_remote_a_short_sha_asks_for_the_full_one(
    tmp_path: Path, up: Upstream, refs: Refs, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    checkout(ET, refs.main, PATHS, cache)
    # The remote is gone: whether a prefix names one commit cannot be known any more.
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-mirrors"))
    (tmp_path / "no-mirrors").write_text(f'[url "{tmp_path / "nowhere"}"]\n\tinsteadOf = {ET}\n')
    with pytest.raises(FatalError) as info:
        checkout(ET, refs.main[:8], PATHS, cache)
    message = str(info.value)
    assert f"cannot tell which commit {refs.main[:8]!r} names" in message
    assert "give the full 40-digit SHA" in message
    assert "does not appear to be a git repository" in message  # git's own words
    # The full SHA the cache holds still builds offline.
    assert checkout(ET, refs.main, PATHS, cache).sha == refs.main


# -- §2: what a stopped run left in the cache is repaired, and said -------------------------


def test_stale_git_locks_are_removed_and_named(
    tmp_path: Path, up: Upstream, refs: Refs, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    checkout(ET, "main", PATHS, cache)
    clone = next((cache / "repos").iterdir())
    left = [".git/index.lock", ".git/HEAD.lock", ".git/config.lock", ".git/shallow.lock"]
    for rel in left:
        (clone / rel).write_text("")
    probe = subprocess.run(
        ["git", "-C", str(clone), "checkout", "--force", "--detach", refs.main],
        capture_output=True,
        text=True,
    )
    assert "index.lock': File exists" in probe.stderr  # what every later build met
    capsys.readouterr()
    assert checkout(ET, "v1.6.0", PATHS, cache).sha == refs.tagged
    err = capsys.readouterr().err
    assert f"the cached clone {clone} held git's lock files of a run that was stopped" in err
    assert all(rel in err for rel in left)
    assert not list(clone.glob(".git/**/*.lock"))


def test_stale_locks_in_refs_and_packs_are_removed_but_loose_objects_are_not_walked(
    tmp_path: Path, up: Upstream, refs: Refs, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    checkout(ET, "main", PATHS, cache)
    clone = next((cache / "repos").iterdir())
    left = [".git/refs/heads/topic.lock", ".git/objects/pack/multi-pack-index.lock"]
    for rel in left:
        (clone / rel).parent.mkdir(parents=True, exist_ok=True)
        (clone / rel).write_text("")
    # Not a lock of git's (no loose object is locked): the walk does not enter these folders.
    loose = clone / ".git/objects/ab/not-a-lock.lock"
    loose.parent.mkdir(parents=True, exist_ok=True)
    loose.write_text("")
    capsys.readouterr()
    assert checkout(ET, "v1.6.0", PATHS, cache).sha == refs.tagged
    err = capsys.readouterr().err
    assert all(rel in err for rel in left) and "not-a-lock" not in err
    assert not any((clone / rel).exists() for rel in left)
    assert loose.exists()


def test_a_short_sha_leaves_packed_refs_and_no_reflogs(
    tmp_path: Path, up: Upstream, refs: Refs
) -> None:
    # Every branch is fetched to look a short SHA up: one loose ref and one reflog per
    # branch would be walked by every later run's repair.
    cache = tmp_path / "cache"
    assert checkout(ET, refs.main[:10], PATHS, cache).sha == refs.main
    git_dir = next((cache / "repos").iterdir()) / ".git"
    assert "refs/remotes/origin/main" in (git_dir / "packed-refs").read_text()
    assert not [p for p in (git_dir / "refs").rglob("*") if p.is_file()]
    assert not (git_dir / "logs").exists() or not [
        p for p in (git_dir / "logs").rglob("*") if p.is_file()
    ]


def test_a_git_left_running_by_a_run_killed_alone_is_waited_for(
    tmp_path: Path, up: Upstream, refs: Refs, capsys: pytest.CaptureFixture[str]
) -> None:
    # SIGKILL to the Python process alone leaves its git child running (an orphan, no longer
    # our child), holding index.lock; removing the lock under it broke the next build
    # ("unable to write new index file"). Here the orphan removes its own lock when it ends
    # and says so: had we removed it first, it would fail and say nothing.
    cache = tmp_path / "cache"
    checkout(ET, "main", PATHS, cache)
    clone = next((cache / "repos").iterdir())
    (clone / ".git/index.lock").write_text("")
    said = tmp_path / "orphan-said"
    script = (
        "import os, sys, time; print(os.getpid(), flush=True); os.close(1); "
        "time.sleep(1.5); os.remove('.git/index.lock'); open(sys.argv[1], 'w').write('done')"
    )
    # `sh` starts it in the background and exits: the orphan is re-parented, as after a kill.
    started = subprocess.run(
        ["sh", "-c", '"$0" -c "$1" "$2" &', sys.executable, script, str(said)],
        cwd=clone,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        check=True,
    )
    pid = int(started.stdout.split()[0])
    capsys.readouterr()
    assert checkout(ET, "v1.6.0", PATHS, cache).sha == refs.tagged
    assert said.read_text() == "done"  # it ended, with its own lock, before we went on
    err = capsys.readouterr().err
    assert f"waiting for process {pid}, left working in the cached clone {clone}" in err
    assert "held git's lock files" not in err


def test_a_half_made_clone_is_removed_and_named(
    tmp_path: Path, up: Upstream, refs: Refs, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    half = cache / "repos" / ".new-github-com-pytorch-executorch-0123456789"
    (half / ".git").mkdir(parents=True)
    assert checkout(ET, "main", PATHS, cache).sha == refs.main
    assert f"removing {half}, a clone that a stopped run left half made" in capsys.readouterr().err
    assert not half.exists()
    assert [p.name for p in (cache / "repos").iterdir() if p.name.startswith(".")] == []


# -- §4: a component pin that the remote or mirror lacks ---------------------------------------


def _build(tmp_path: Path, **kw: object) -> Path:
    options = BuildOptions(cache_dir=tmp_path / "cache", **kw)  # type: ignore[arg-type]
    return build_library(options, tmp_path / "out" / "ExecuTorch").out


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Upstream:
    """An upstream of this test's own (the test changes it)."""
    new = make_upstream(tmp_path / "own")
    for key, value in new.env().items():
        monkeypatch.setenv(key, value)
    return new


def _pin_error(tmp_path: Path) -> str:
    with pytest.raises(FatalError) as info:
        _build(tmp_path)
    return str(info.value)


def test_a_gitlink_pin_the_mirror_lacks_names_component_pin_and_url(
    tmp_path: Path, fresh: Upstream
) -> None:
    bogus = "1234567890abcdef1234567890abcdef12345678"
    repo = fresh.executorch
    git(repo, "update-index", "--cacheinfo", f"160000,{bogus},third-party/flatcc")
    git(repo, "commit", "-q", "-m", "pin a commit flatcc does not have")
    message = _pin_error(tmp_path)
    et = git(repo, "rev-parse", "HEAD")[:12]
    assert message.startswith(f"ExecuTorch at {et} pins flatcc at {bogus}, which cannot be")
    assert "https://github.com/dvidelabs/flatcc.git lacks it" in message
    assert "has no such commit" in message and "Update the mirror" in message
    assert "Give a branch" not in message and "named" not in message


def test_a_cmake_pin_the_mirror_lacks_names_component_pin_and_url(
    tmp_path: Path, fresh: Upstream
) -> None:
    fresh.commit_executorch(
        {"backends/cortex_m/CMakeLists.txt": 'set(CMSIS_NN_VERSION "v99.0.0")\n'}, "pin a tag"
    )
    message = _pin_error(tmp_path)
    assert " pins CMSIS-NN at v99.0.0, which cannot be checked out" in message
    assert "https://github.com/ARM-software/CMSIS-NN.git lacks it" in message
    assert "no such tag, branch or commit" in message and "Give a branch" not in message


def test_an_unreachable_component_mirror_is_not_blamed_on_executorch_repo(
    tmp_path: Path, fresh: Upstream
) -> None:
    fresh.cmsis.rename(fresh.cmsis.with_name("cmsis.moved"))
    message = _pin_error(tmp_path)
    assert " pins CMSIS-NN at " in message and "does not appear to be a git repository" in message
    assert "check the mirrors of your git config" in message
    assert "--executorch-repo" not in message


# -- §5: URLs whose transport is refused: a clear error, nothing left --------------------------


def _cache_entries(cache: Path) -> list[str]:
    return (
        sorted(p.relative_to(cache).as_posix() for p in cache.rglob("*")) if cache.exists() else []
    )


def _cli(tmp_path: Path, *args: str) -> tuple[int, str]:
    """Run `python -m generator build` as a user would; (exit code, stderr)."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "generator",
            "build",
            "--out",
            str(tmp_path / "out" / "ExecuTorch"),
            "--cache-dir",
            str(tmp_path / "cache"),
            *args,
        ],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    return proc.returncode, proc.stderr


REFUSED = {
    # URL, (what the error says, git's or ours)
    "ext::git-upload-pack": "names git's remote helper ext::",
    "fd::3": "names git's remote helper fd::",
    "::x": "names git's remote helper ::",
    "foo://example.invalid/x": "git has no transport for foo URLs",
    "foo::bar": "names git's remote helper foo::",
    "ext://example.invalid/x": "names git's remote helper ext::",
    "file-never": "refuses the file transport",
}


@pytest.mark.parametrize("kind", list(REFUSED))
def test_a_refused_transport_is_a_clear_error_that_leaves_nothing(
    kind: str, tmp_path: Path, up: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = kind
    if kind == "file-never":
        url = f"file://{up.executorch}"
        monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
        monkeypatch.setenv("GIT_CONFIG_KEY_0", "protocol.file.allow")
        monkeypatch.setenv("GIT_CONFIG_VALUE_0", "never")
    code, err = _cli(tmp_path, "--executorch-repo", url)
    assert code == 1
    assert "Traceback" not in err and err.count("error: ") == 1
    assert REFUSED[kind] in err
    # No clone, no lock of that URL: the build's lock and the clones' one lock at most.
    assert set(_cache_entries(tmp_path / "cache")) <= {"build.lock", "repos.lock"}
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("ref", ["main", "full", "short"])
def test_a_cached_clone_whose_transport_is_refused_later_is_a_clear_error(
    ref: str, tmp_path: Path, up: Upstream, refs: Refs, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    checkout(ET, "main", PATHS, cache)
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "protocol.file.allow")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "never")
    asked = {"main": "main", "full": refs.colliding[1], "short": refs.colliding[1][:9]}[ref]
    with pytest.raises(FatalError) as info:
        checkout(ET, asked, PATHS, cache)
    message = str(info.value)
    assert "transport 'file' not allowed" in message  # git's words
    assert "git's configuration refuses the file transport" in message
    if ref == "short":
        assert "give the full 40-digit SHA" in message


def test_a_component_url_of_a_helper_transport_is_refused_before_any_git(
    tmp_path: Path, fresh: Upstream
) -> None:
    gitmodules = (fresh.executorch / ".gitmodules").read_text()
    fresh.commit_executorch(
        {
            ".gitmodules": gitmodules.replace(
                "https://github.com/dvidelabs/flatcc.git", "ext::sh -c touch% /tmp/pwned"
            )
        },
        "a hostile submodule URL",
    )
    message = _pin_error(tmp_path)
    # Refused as a URL that is not flatcc's canonical one (issue 29), before refuse_transport.
    assert re.search(r"^\.gitmodules of ExecuTorch at [0-9a-f]{12} gives 'ext::sh ", message)
    assert "'ext::sh -c touch% /tmp/pwned' for flatcc, not its canonical https://" in message
    assert not any("flatcc" in p.name for p in (tmp_path / "cache" / "repos").iterdir())
