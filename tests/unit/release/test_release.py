"""Scenario tests of `release`: a real bare git repo is the library remote; maintainers'
commits (library.properties, pin, provenance, kernel registration, check report) are pushed to
its `main` by the test, then `release` tags them."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from github_fake.git_http import GitHttpRemote
from sync_fixtures import MACHINE_EMAIL, MACHINE_NAME, git

from generator.cli.main import main
from generator.library.facts import LibraryFacts, upstream_version_of
from generator.library.layout import (
    CHECK_REPORT_FILE,
    CODEGEN_DIR,
    LIBRARY_FACTS_FILE,
    PIN_FILE,
    PROVENANCE_FILE,
)
from generator.release.run import run_release
from generator.release.step import (
    ReleaseOptions,
    ReleaseResult,
    TagRef,
    plan,
    push_tag,
)
from generator.util.errors import FatalError
from generator.util.urls import refuse_credentials
from generator.vcs import git as g
from generator.vcs.git import DEFAULT_BOT_EMAIL, DEFAULT_BOT_NAME

TOKEN = "ghp_ReleaseTestToken0123456789abcdefABCD"
REPO = "acme/ExecuTorch"
PIN_OLD = "d756e7d8c2" + "0" * 30
PIN_NEW = "5f3e2a1b0c" + "1" * 30


class Library:
    """A maintainer's clone of the library repo: each `commit` writes a generated library's
    release-relevant files and pushes them to a branch of the bare remote."""

    def __init__(self, remote: Path, work: Path) -> None:
        self.remote = remote
        self.work = work
        git("clone", "--quiet", str(remote), str(work))

    def commit(
        self,
        version: str | None = "0.2.0",
        *,
        pin: str = PIN_OLD,
        upstream: str = "1.5.1",
        kernels: tuple[str, ...] = ("aten::add.out", "aten::mul.out"),
        flash: int | None = 100_000,
        ram: int = 20_000,
        branch: str = "main",
        properties: bool = True,
        note: str = "",
        facts_file: bool = False,
    ) -> str:
        """Commit the files on `branch` (created from main if new), push it; returns the SHA.

        `facts_file`: also extras/library.json, as today's generator writes it (without it,
        the library is an older generator's)."""
        if branch != "main" and branch not in git("branch", "--list", branch, cwd=self.work):
            git("checkout", "--quiet", "-b", branch, "origin/main", cwd=self.work)
        else:
            git("checkout", "--quiet", branch, cwd=self.work)
        registration = "\n".join(
            f'  Kernel("{op}", [](KernelRuntimeContext& ctx, Span<EValue*> stack) {{}}),'
            for op in kernels
        )
        files: dict[str, str | None] = {
            "library.properties": (
                (f"name=ExecuTorch\nversion={version}\n" if version else "name=ExecuTorch\n")
                + "architectures=*\n"
                if properties
                else None
            ),
            PIN_FILE: f"{pin}\n",
            PROVENANCE_FILE: (
                "executorch:       https://github.com/pytorch/executorch.git\n"
                f"commit:           {pin}\n"
                "ref:              main\n"
                f"upstream version: {upstream}\n"
                f"library version:  {version}\n"
            ),
            f"{CODEGEN_DIR}/RegisterCodegenUnboxedKernelsEverything.cpp": (
                f"static Kernel kernels[] = {{\n{registration}\n}};\n"
            ),
            CHECK_REPORT_FILE: (
                json.dumps(
                    {
                        "passed": True,
                        "examples": [
                            {"example": "AddModel", "sizes": {"flash": flash, "ram": ram}},
                            {"example": "HelloExecuTorch", "sizes": {"flash": flash // 2}},
                        ],
                    },
                    indent=2,
                )
                if flash is not None
                else None
            ),
            "NOTE.md": note or None,
            LIBRARY_FACTS_FILE: (
                LibraryFacts(version, pin, upstream_version=upstream, kernels=kernels).to_json()
                if facts_file
                else None
            ),
        }
        for path, text in files.items():
            target = self.work / path
            if text is None:
                if target.exists():
                    git("rm", "--quiet", path, cwd=self.work)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            git("add", path, cwd=self.work)
        git("commit", "--quiet", "--allow-empty", "-m", f"Library {version}", cwd=self.work)
        git("push", "--quiet", "origin", branch, cwd=self.work)
        return git("rev-parse", "HEAD", cwd=self.work)


@pytest.fixture
def lib(remote: Path, tmp_path: Path) -> Library:
    return Library(remote, tmp_path / "maintainer")


def refs(bare: Path) -> dict[str, str]:
    """Every ref of the bare repo: name -> object SHA (branches and tags)."""
    out = git("for-each-ref", "--format=%(refname) %(objectname)", cwd=bare)
    return dict(line.split(" ", 1) for line in out.splitlines() if line)


def tagged(bare: Path, tag: str) -> str:
    """The commit `tag` points to on the remote."""
    return git("rev-parse", f"refs/tags/{tag}^{{commit}}", cwd=bare)


class Out:
    """Collects what release says (stderr) and emits (stdout)."""

    def __init__(self) -> None:
        self.said: list[str] = []
        self.emitted: list[str] = []

    @property
    def text(self) -> str:
        return "\n".join(self.said + self.emitted)


def release(
    remote: Path | str, out: Out | None = None, token: str | None = None, **options: object
) -> ReleaseResult:
    """run_release against `remote` with `options` (ReleaseOptions fields)."""
    out = out if out is not None else Out()
    opts = ReleaseOptions(repo=REPO, remote=str(remote), **options)  # type: ignore[arg-type]
    return run_release(opts, token, say=out.said.append, emit=out.emitted.append)


# -- the main flow -------------------------------------------------------------------------------


def test_first_release_tags_main_with_an_annotated_bot_tag_and_pushes_only_the_tag(
    lib: Library, remote: Path
) -> None:
    first = lib.commit("0.2.0")
    before = refs(remote)
    out = Out()
    result = release(remote, out)
    assert result.status == "released"
    assert (result.tag, result.version, result.commit) == ("v0.2.0", "0.2.0", first)
    assert result.previous_tag is None
    after = refs(remote)
    assert set(after) - set(before) == {"refs/tags/v0.2.0"}
    assert {k: v for k, v in after.items() if k != "refs/tags/v0.2.0"} == before
    assert tagged(remote, "v0.2.0") == first
    assert git("cat-file", "-t", "refs/tags/v0.2.0", cwd=remote) == "tag"  # annotated
    tagger = git(
        "for-each-ref", "--format=%(taggername) %(taggeremail)", "refs/tags/v0.2.0", cwd=remote
    )
    assert tagger == f"{DEFAULT_BOT_NAME} <{DEFAULT_BOT_EMAIL}>"
    assert MACHINE_NAME not in tagger and MACHINE_EMAIL not in tagger
    message = git("for-each-ref", "--format=%(contents)", "refs/tags/v0.2.0", cwd=remote)
    assert f"ExecuTorch pin: {PIN_OLD}" in message
    assert f"released v0.2.0 at {first}" in out.said
    notes = result.notes
    assert out.emitted == [notes]
    assert notes.startswith("# ExecuTorch Arduino library 0.2.0\n\n## Upgrading\n")
    assert f"First release: export your `.pte` files with ExecuTorch `{PIN_OLD}`" in notes
    assert "InvalidProgram` (0x23)" in notes
    assert "| Upstream version | `1.5.1` |" in notes
    assert "Kernels registered: **2** (first release)." in notes
    assert "| AddModel | flash (static) | 100,000 B | n/a | n/a |" in notes


def test_next_release_notes_upgrading_first_then_pin_ops_and_size_deltas(
    lib: Library, remote: Path, tmp_path: Path
) -> None:
    lib.commit("0.2.0")
    release(remote)
    second = lib.commit(
        "0.3.0",
        pin=PIN_NEW,
        upstream="1.6.0a0",
        kernels=("aten::add.out", "aten::relu.out", "cortex_m::quantize_per_tensor.out"),
        flash=101_500,
        ram=19_000,
    )
    notes_file = tmp_path / "notes" / "RELEASE.md"
    notes_file.parent.mkdir()
    result = release(remote, notes=notes_file)
    assert result.status == "released" and result.previous_tag == "v0.2.0"
    assert tagged(remote, "v0.3.0") == second
    notes = result.notes
    assert notes_file.read_text() == notes
    assert [p.name for p in notes_file.parent.iterdir()] == ["RELEASE.md"]  # no temp file left

    sections = [line for line in notes.splitlines() if line.startswith("## ")]
    assert sections == ["## Upgrading", "## ExecuTorch", "## Operators", "## Sizes"]
    upgrading = notes.split("## Upgrading", 1)[1].split("## ExecuTorch", 1)[0]
    assert f"**Re-export every `.pte`** with ExecuTorch `{PIN_NEW}`" in upgrading
    assert f"(was `{PIN_OLD}` in v0.2.0)" in upgrading
    assert "`Method::execute` fails with `InvalidProgram` (0x23)" in upgrading
    assert "Operators removed since v0.2.0: `aten::mul.out`." in upgrading
    assert "`OperatorMissing`, 0x14" in upgrading and "stay on v0.2.0" in upgrading

    commit_url = f"https://github.com/pytorch/executorch/commit/{PIN_NEW}"
    assert f"| Pin | [`{PIN_NEW}`]({commit_url}) |" in notes
    assert "| Upstream version | `1.6.0a0` |" in notes
    assert f"| Pin of v0.2.0 | `{PIN_OLD}` |" in notes
    assert f"compare/{PIN_OLD}...{PIN_NEW}" in notes
    assert f"| Library commit | `{second}` |" in notes

    assert "Kernels registered: **3** (v0.2.0: 2)." in notes
    assert "- added: `aten::relu.out`, `cortex_m::quantize_per_tensor.out`" in notes
    assert "- removed: `aten::mul.out`" in notes

    assert "| Example | Size | 0.3.0 | v0.2.0 | Delta |" in notes
    assert "| AddModel | flash (static) | 101,500 B | 100,000 B | +1,500 |" in notes
    assert "| AddModel | RAM (static) | 19,000 B | 20,000 B | -1,000 |" in notes
    assert "| HelloExecuTorch | flash (static) | 50,750 B | 50,000 B | +750 |" in notes


def test_a_release_with_the_facts_file_is_compared_with_an_older_generators(
    lib: Library, remote: Path
) -> None:
    """v0.2.0 was generated before extras/library.json existed: its facts are read from its
    pin file, PROVENANCE.txt and codegen sources; 0.3.0's from its facts file."""
    lib.commit("0.2.0")
    release(remote)
    lib.commit(
        "0.3.0",
        pin=PIN_NEW,
        upstream="1.6.0a0",
        kernels=("aten::add.out", "aten::relu.out"),
        facts_file=True,
    )
    notes = release(remote).notes
    assert f"| Pin | [`{PIN_NEW}`]" in notes and f"| Pin of v0.2.0 | `{PIN_OLD}` |" in notes
    assert "| Upstream version | `1.6.0a0` |" in notes
    assert "Kernels registered: **2** (v0.2.0: 2)." in notes
    assert "- added: `aten::relu.out`" in notes and "- removed: `aten::mul.out`" in notes
    # and the next release compares two facts files
    lib.commit("0.4.0", pin=PIN_NEW, upstream="1.6.0a0", facts_file=True)
    notes = release(remote).notes
    assert "Kernels registered: **2** (v0.3.0: 2)." in notes
    assert "- added: `aten::mul.out`" in notes and "- removed: `aten::relu.out`" in notes
    assert "The ExecuTorch pin is unchanged since v0.3.0" in notes


def test_unchanged_pin_and_ops_say_so(lib: Library, remote: Path) -> None:
    lib.commit("0.2.0")
    release(remote)
    lib.commit("0.2.1", note="a README fix")
    notes = release(remote).notes
    assert f"The ExecuTorch pin is unchanged since v0.2.0 (`{PIN_OLD}`)" in notes
    assert "Re-export" not in notes
    assert "No operator was removed since v0.2.0." in notes
    assert "- no change since v0.2.0" in notes
    assert "| AddModel | flash (static) | 100,000 B | 100,000 B | ±0 |" in notes


def test_second_attempt_at_the_same_commit_says_already_released_and_pushes_nothing(
    lib: Library, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lib.commit("0.2.0")
    assert main(["release", "--repo", REPO, "--remote", str(remote)]) == 0
    capsys.readouterr()
    before = refs(remote)
    assert main(["release", "--repo", REPO, "--remote", str(remote)]) == 0
    out, err = capsys.readouterr()
    assert "already released: v0.2.0 tags" in err and "nothing pushed" in err
    assert out.startswith("# ExecuTorch Arduino library 0.2.0")  # the notes, for a rerun
    assert refs(remote) == before


def test_already_released_compares_with_the_release_below_not_a_later_one(
    lib: Library, remote: Path
) -> None:
    lib.commit("0.2.0")
    release(remote)
    first = lib.commit("0.3.0", kernels=("aten::add.out",))
    release(remote)
    lib.commit("0.4.0")
    release(remote)
    result = release(remote, ref=first)
    assert result.status == "already-released" and result.previous_tag == "v0.2.0"


# -- refusals --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "suggested"),
    [
        ("0.2.5", "0.3.1"),  # lower
        ("0.3.0+build.7", "0.3.1"),  # equal by SemVer precedence (build metadata ignored)
        ("0.3.0-rc.1", "0.3.1"),  # a pre-release ranks below its release
    ],
)
def test_version_not_greater_than_a_published_tag_is_refused_naming_it_and_the_next(
    lib: Library, remote: Path, version: str, suggested: str
) -> None:
    lib.commit("0.2.0")
    release(remote)
    lib.commit("0.3.0")
    release(remote)
    lib.commit(version)
    before = refs(remote)
    with pytest.raises(FatalError) as info:
        release(remote)
    message = str(info.value)
    assert f"version {version} is not greater than 0.3.0, published by tag v0.3.0" in message
    assert f"--library-version {suggested}" in message
    assert refs(remote) == before


def test_cli_refusal_exits_1_with_a_clean_message(
    lib: Library, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lib.commit("0.3.0")
    release(remote)
    lib.commit("0.2.0")
    with pytest.raises(SystemExit) as exit_info:
        main(["release", "--repo", REPO, "--remote", str(remote)])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "error: version 0.2.0 is not greater than 0.3.0, published by tag v0.3.0" in err
    assert "0.3.1" in err and "Traceback" not in err


def test_tag_on_another_commit_is_refused_then_moved_with_retag(
    lib: Library, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = lib.commit("0.2.0")
    release(remote)
    new = lib.commit("0.2.0", note="fixed after tagging")
    before = refs(remote)
    with pytest.raises(FatalError) as info:
        release(remote)
    message = str(info.value)
    assert f"v0.2.0 already tags commit {old[:12]}, not {new[:12]}" in message
    assert "--retag" in message and "--library-version" in message
    assert refs(remote) == before

    assert main(["release", "--repo", REPO, "--remote", str(remote), "--retag"]) == 0
    err = capsys.readouterr().err
    assert f"moved v0.2.0: {old} -> {new}" in err
    assert tagged(remote, "v0.2.0") == new
    tagger = git("for-each-ref", "--format=%(taggername)", "refs/tags/v0.2.0", cwd=remote)
    assert tagger == DEFAULT_BOT_NAME
    after = refs(remote)
    assert {k: v for k, v in after.items() if k != "refs/tags/v0.2.0"} == {
        k: v for k, v in before.items() if k != "refs/tags/v0.2.0"
    }


def test_retag_still_refuses_a_version_below_another_release(lib: Library, remote: Path) -> None:
    lib.commit("0.2.0")
    release(remote)
    lib.commit("0.3.0")
    release(remote)
    lib.commit("0.2.0")
    with pytest.raises(FatalError, match="not greater than 0.3.0, published by tag v0.3.0"):
        release(remote, retag=True)


def test_retag_push_leases_on_the_old_tag(lib: Library, remote: Path, tmp_path: Path) -> None:
    old = lib.commit("0.2.0")
    release(remote)
    new = lib.commit("0.2.0", note="second")
    clone_dir = tmp_path / "clone"
    with g.git_env(None) as genv:
        repo = g.clone(str(remote), clone_dir, genv)
        stale = TagRef("0" * 40, old)  # not what the remote holds: someone moved it meanwhile
        git("tag", "-f", "-a", "-m", "moved", "v0.2.0", new, cwd=clone_dir)
        with pytest.raises(FatalError, match="someone created or moved v0.2.0"):
            push_tag(repo, "v0.2.0", stale, genv)
    assert tagged(remote, "v0.2.0") == old


@pytest.mark.parametrize("by_sha", [False, True])
def test_commit_not_on_main_is_refused(lib: Library, remote: Path, by_sha: bool) -> None:
    lib.commit("0.2.0")
    side = lib.commit("0.3.0", branch="feature")
    before = refs(remote)
    ref = side[:10] if by_sha else "feature"
    with pytest.raises(FatalError) as info:
        release(remote, ref=ref)
    message = str(info.value)
    assert f"--ref {ref!r} is commit {side[:12]}, which is not on main" in message
    assert "merge it into main first" in message
    assert refs(remote) == before


def test_branch_merged_into_main_may_be_released_by_name(lib: Library, remote: Path) -> None:
    side = lib.commit("0.2.0", branch="release-0.2")
    git("checkout", "--quiet", "main", cwd=lib.work)
    git("merge", "--quiet", "--ff-only", "release-0.2", cwd=lib.work)
    git("push", "--quiet", "origin", "main", cwd=lib.work)
    assert release(remote, ref="release-0.2").commit == side


def test_unknown_ref_is_refused(lib: Library, remote: Path) -> None:
    lib.commit("0.2.0")
    with pytest.raises(FatalError, match="--ref 'nope' is not a branch, tag or commit"):
        release(remote, ref="nope")


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"properties": False}, "has no library.properties: it is not a generated library"),
        ({"version": None}, "library.properties at --ref 'main' .* has no version= line"),
        ({"version": "1.2"}, r"version=1\.2 in library.properties .* is not a Semantic Version"),
        ({"version": "v1.2.3"}, "is not a Semantic Version"),
    ],
)
def test_missing_or_bad_version_is_refused(
    lib: Library, remote: Path, kwargs: dict[str, object], expected: str
) -> None:
    lib.commit(**kwargs)  # type: ignore[arg-type]
    before = refs(remote)
    with pytest.raises(FatalError, match=expected):
        release(remote)
    assert refs(remote) == before


def test_repo_without_main_is_refused(remote: Path, tmp_path: Path) -> None:
    git("branch", "-m", "main", "trunk", cwd=remote)
    git("symbolic-ref", "HEAD", "refs/heads/trunk", cwd=remote)
    with pytest.raises(FatalError, match="has no branch 'main'"):
        release(remote, ref="trunk")


@pytest.mark.parametrize(
    "url",
    [
        "https://user:secret@github.com/acme/ExecuTorch.git",
        f"https://{TOKEN}@github.com/acme/ExecuTorch.git",
        "ssh://git:secret@github.com/acme/ExecuTorch.git",
    ],
)
def test_remote_with_credentials_is_refused_without_showing_them(
    gitenv: dict[str, str], url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["release", "--repo", REPO, "--remote", url])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "credentials in the URL" in err and "GITHUB_TOKEN" in err
    assert "secret" not in err and TOKEN not in err


@pytest.mark.parametrize(
    "url", ["ssh://git@github.com/acme/ExecuTorch.git", "git@github.com:acme/ExecuTorch.git"]
)
def test_ssh_user_names_are_not_credentials(url: str) -> None:
    assert refuse_credentials(url, "--remote") == url


def test_cli_rejects_a_repo_that_is_not_owner_name(
    gitenv: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["release", "--repo", "just-a-name"])
    assert exit_info.value.code == 1
    assert "is not OWNER/NAME" in capsys.readouterr().err


def test_notes_path_in_a_missing_folder_is_refused_before_anything(
    lib: Library, remote: Path, tmp_path: Path
) -> None:
    lib.commit("0.2.0")
    before = refs(remote)
    with pytest.raises(FatalError, match="does not exist; create it first"):
        release(remote, notes=tmp_path / "missing" / "notes.md")
    assert refs(remote) == before


# -- the token -------------------------------------------------------------------------------------


def test_token_reaches_git_only_through_askpass_and_is_never_stored(
    lib: Library,
    remote: Path,
    tmp_path: Path,
    gitenv: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    first = lib.commit("0.2.0")
    notes = tmp_path / "notes.md"
    work = tmp_path / "work"
    with GitHttpRemote(remote.parent, TOKEN) as http:
        url = f"{http.url}/library.git"
        monkeypatch.setenv("GITHUB_TOKEN", f"{TOKEN}\n")
        assert main(["release", "--repo", REPO, "--remote", url, "--notes", str(notes)]) == 0
        # the CLI took the token out of the environment for everything it starts
        assert "GITHUB_TOKEN" not in os.environ
        # the clone it worked in, kept for inspection
        result = release(url, token=TOKEN, work_dir=work, notes=None)
    assert result.status == "already-released"
    assert tagged(remote, "v0.2.0") == first
    assert ("x-access-token", TOKEN) in http.offered
    assert set(http.offered) == {("x-access-token", TOKEN)}
    store = Path(gitenv["GIT_CONFIG_GLOBAL"]).parent / "credentials"
    assert not store.exists() or TOKEN not in store.read_text()
    config = (work / "library" / ".git" / "config").read_text()
    assert f"url = {url}" in config and TOKEN not in config
    assert TOKEN not in notes.read_text()
    out, err = capfd.readouterr()
    assert TOKEN not in out + err


def test_wrong_token_is_a_clear_error_without_the_token(lib: Library, remote: Path) -> None:
    lib.commit("0.2.0")
    with (
        GitHttpRemote(remote.parent, "the-right-token") as http,
        pytest.raises(FatalError, match="refused the credentials") as info,
    ):
        release(f"{http.url}/library.git", token=TOKEN)
    assert TOKEN not in str(info.value)
    assert "refs/tags/v0.2.0" not in refs(remote)


# -- the pure steps --------------------------------------------------------------------------------


def test_plan_ignores_tags_that_are_not_releases() -> None:
    tags = {
        "v0.2.0": TagRef("a" * 40, "b" * 40),
        "nightly": TagRef("c" * 40, "d" * 40),
        "v9": TagRef("e" * 40, "f" * 40),  # not SemVer: not a Library Manager release
    }
    decided = plan("0.3.0", "1" * 40, tags, retag=False)
    assert (decided.action, decided.tag, decided.previous_tag) == ("create", "v0.3.0", "v0.2.0")


def test_plan_counts_what_each_tag_publishes_whatever_its_name() -> None:
    tags = {"v0.2.0": TagRef("a" * 40, "b" * 40), "latest": TagRef("c" * 40, "d" * 40)}
    # The Library Manager reads library.properties at every tag: "latest" published 1.9.0.
    published = {"v0.2.0": "0.2.0", "latest": "1.9.0"}
    with pytest.raises(FatalError, match=r"not greater than 1\.9\.0, published by tag latest"):
        plan("1.7.0", "1" * 40, tags, retag=False, published=published)
    decided = plan("2.0.0", "1" * 40, tags, retag=False, published=published)
    assert (decided.action, decided.previous_tag) == ("create", "latest")


def test_provenance_upstream_version() -> None:
    text = "executorch:       URL\nupstream version: 1.6.0a0\nlibrary version:  1.6.0-alpha.0\n"
    assert upstream_version_of(text) == "1.6.0a0"
    assert upstream_version_of("nothing here\n") is None
    assert upstream_version_of(None) is None


def test_a_tag_publishes_the_version_its_library_properties_says(
    lib: Library, remote: Path
) -> None:
    """The Library Manager reads library.properties at each tag, whatever the tag is named:
    a 1.9.0 behind the tags `latest` and `1.9.0` keeps 1.7.0 from being released."""
    old = lib.commit("1.9.0")
    for name in ("latest", "1.9.0"):
        git("tag", name, old, cwd=lib.work)
    git("push", "--quiet", "origin", "--tags", cwd=lib.work)
    lib.commit("1.7.0")
    before = refs(remote)
    with pytest.raises(
        FatalError, match=r"not greater than 1\.9\.0, published by tag 1\.9\.0, latest"
    ):
        release(remote)
    assert refs(remote) == before
    lib.commit("1.9.1")
    assert release(remote).tag == "v1.9.1"


def test_release_reads_the_last_version_line_as_the_arduino_tools_do(
    lib: Library, remote: Path
) -> None:
    lib.commit("0.2.0")
    assert release(remote).tag == "v0.2.0"
    props = lib.work / "library.properties"
    props.write_text(props.read_text() + "version=0.3.0\n")  # the last one wins
    git("commit", "--quiet", "-am", "second version line", cwd=lib.work)
    git("push", "--quiet", "origin", "main", cwd=lib.work)
    assert release(remote).tag == "v0.3.0"


def test_notes_in_a_folder_we_cannot_write_are_refused_before_the_push(
    lib: Library, remote: Path, tmp_path: Path
) -> None:
    lib.commit("0.2.0")
    before = refs(remote)
    with pytest.raises(FatalError, match="cannot write in /proc"):
        release(remote, notes=Path("/proc/notes.md"))
    assert refs(remote) == before  # nothing pushed


def test_notes_to_a_pipe_are_written_directly(lib: Library, remote: Path, tmp_path: Path) -> None:
    lib.commit("0.2.0")
    fifo = tmp_path / "notes.fifo"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    release(remote, notes=fifo)
    reader.join(10)
    assert received and received[0].startswith("# ExecuTorch Arduino library 0.2.0")
