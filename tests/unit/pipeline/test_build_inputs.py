"""Bad inputs to `build` and the git failures behind them: credentials in URLs, cached clones
git refuses, ambiguous short SHAs, overlapping paths, a busy cache, operating-system errors.

Each test runs the real pipeline on the small ExecuTorch-shaped repositories of `et_fixture`.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from et_fixture import Upstream, git

from generator.cli.main import main
from generator.pipeline.run import BuildOptions, build_library
from generator.util.cache import cache_lock
from generator.util.errors import FatalError, error_handler
from generator.util.urls import display_url, refuse_credentials
from generator.vcs.failures import git_reason, hint, redact_urls

SECRET = "s3cr3t-TOKEN-value"
ET_URL = "https://github.com/pytorch/executorch.git"


def build(tmp_path: Path, **kw: object) -> Path:
    options = BuildOptions(cache_dir=tmp_path / "cache", **kw)  # type: ignore[arg-type]
    out = tmp_path / "out" / "ExecuTorch"
    build_library(options, out)
    return out


def cached_clones(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache" / "repos").iterdir())


# -- 1. credentials in URLs --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"https://user:{SECRET}@github.com/o/r.git", "https://github.com/o/r.git"),
        (f"https://{SECRET}@host:8443/o/r", "https://host:8443/o/r"),
        ("ssh://git@host/o/r.git", "ssh://host/o/r.git"),
        ("git@github.com:o/r.git", "git@github.com:o/r.git"),
        ("/srv/mirrors/executorch", "/srv/mirrors/executorch"),
        ("https://github.com/o/r.git", "https://github.com/o/r.git"),
    ],
)
def test_display_url_drops_user_info(url: str, shown: str) -> None:
    assert display_url(url) == shown


@pytest.mark.parametrize(
    "url",
    [
        f"https://user:{SECRET}@github.com/o/r.git",
        f"https://{SECRET}@github.com/o/r.git",  # GitHub takes a token as the user name
        f"http://x:{SECRET}@127.0.0.1/r.git",
        f"ssh://git:{SECRET}@host/r.git",
    ],
)
def test_urls_with_credentials_are_refused(url: str) -> None:
    with pytest.raises(FatalError) as info:
        refuse_credentials(url, "--executorch-repo")
    message = str(info.value)
    assert SECRET not in message
    assert "--executorch-repo" in message and "GITHUB_TOKEN" in message


def test_urls_without_credentials_pass() -> None:
    for url in ("ssh://git@host/r.git", "git@github.com:o/r.git", ET_URL, "/local/path"):
        assert refuse_credentials(url, "--remote") == url


def test_git_messages_lose_credentials() -> None:
    text = f"fatal: unable to access 'https://u:{SECRET}@host/r.git/': 403"
    assert SECRET not in redact_urls(text)
    assert SECRET not in git_reason(text)
    assert "https://host/r.git/" in git_reason(text)


def test_build_refuses_a_credential_url_before_any_work(
    tmp_path: Path, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"https://user:{SECRET}@github.com/pytorch/executorch.git"
    with pytest.raises(SystemExit) as info:
        main(["build", "--executorch-repo", url, "--cache-dir", str(tmp_path / "cache"),
              "--out", str(tmp_path / "out")])  # fmt: skip
    assert info.value.code == 1
    captured = capsys.readouterr()
    assert SECRET not in captured.out + captured.err
    assert "credentials in the URL" in captured.err
    assert not (tmp_path / "cache").exists() and not (tmp_path / "out").exists()


def test_user_only_ssh_url_is_recorded_without_the_user(tmp_path: Path, upstream: Upstream) -> None:
    # The fixture serves the canonical URL; an ssh:// alias of it is mapped by insteadOf too.
    alias = "ssh://builder@example.invalid/executorch.git"
    git(upstream.root, "config", "--file", str(upstream.gitconfig), "--add",
        f"url.{upstream.executorch}.insteadOf", alias)  # fmt: skip
    lib = build(tmp_path, executorch_repo=alias)
    provenance = (lib / "extras/PROVENANCE.txt").read_text()
    assert "ssh://example.invalid/executorch.git" in provenance
    assert "builder" not in provenance
    assert all("builder" not in p.name for p in cached_clones(tmp_path))


# -- 4. git's own reason reaches the user ------------------------------------------------------


def test_hints_follow_gits_message() -> None:
    dubious = (
        "fatal: detected dubious ownership in repository at '/c/repos/x'\n"
        "To add an exception for this directory, call:\n"
    )
    assert "safe.directory /c/repos/x" in hint(dubious, url_option="--u", folder="/c/repos/x")
    assert "network" not in hint(dubious, url_option="--u", folder="/c/repos/x")
    assert "network" in hint("fatal: Could not resolve host: github.com", url_option="--u")
    assert "no repository at that URL: check --u" in hint(
        "fatal: repository 'https://h/x/' not found", url_option="--u"
    )
    assert "credential helper" in hint(
        "fatal: could not read Username for 'https://h': terminal prompts disabled",
        url_option="--u",
    )


def _give_away(path: Path) -> None:
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), 4242, 4242)
    os.chown(path, 4242, 4242)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the clone to another user")
def test_a_cached_clone_git_refuses_is_cloned_again(
    tmp_path: Path, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    build(tmp_path, library_version="0.1.0")
    clone = next(p for p in cached_clones(tmp_path) if "executorch" in p.name)
    _give_away(clone)
    probe = subprocess.run(["git", "-C", str(clone), "status"], capture_output=True, text=True)
    assert "dubious ownership" in probe.stderr  # what a user sees from git itself
    build(tmp_path, library_version="0.1.0")
    err = capsys.readouterr().err
    assert f"the cached clone {clone} is unusable" in err and "dubious ownership" in err
    assert clone.stat().st_uid == os.geteuid()  # recreated, ours


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the clone to another user")
def test_a_refused_clone_that_cannot_be_deleted_names_the_fix(
    tmp_path: Path, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    build(tmp_path, library_version="0.1.0")
    clone = next(p for p in cached_clones(tmp_path) if "executorch" in p.name)
    _give_away(clone)

    real_rmtree = shutil.rmtree

    def refuse(path: Any, *a: Any, **k: Any) -> None:
        if Path(str(path)) == clone:
            raise PermissionError(13, "Permission denied", str(path))
        real_rmtree(path, *a, **k)

    monkeypatch.setattr(shutil, "rmtree", refuse)
    with pytest.raises(FatalError) as info:
        build(tmp_path, library_version="0.1.0")
    message = str(info.value)
    assert "dubious ownership" in message  # git's own words
    assert f"safe.directory {clone}" in message and "--cache-dir" in message
    assert "network" not in message


def test_an_unreachable_url_says_so_with_gits_words(tmp_path: Path, upstream: Upstream) -> None:
    with pytest.raises(FatalError) as info:
        build(tmp_path, executorch_repo=str(tmp_path / "nowhere" / "executorch.git"))
    message = str(info.value)
    assert "does not appear to be a git repository" in message
    assert "no repository at that URL: check --executorch-repo" in message


# -- 8. ambiguous short SHAs, paths, the cache lock, OS errors ---------------------------------


def _colliding_commits(upstream: Upstream) -> tuple[str, list[str]]:
    """Add commits on a side branch of the ExecuTorch fixture until two share a 4-digit
    prefix (deterministic: fixed dates and identity). Returns the prefix and the two SHAs."""
    repo = upstream.executorch
    parent = git(repo, "rev-parse", "HEAD")
    stream = []
    for i in range(1500):
        stream.append(
            f"commit refs/heads/side\ncommitter Fixture <f@example.invalid> {1700000000 + i} "
            f"+0000\ndata {len(str(i))}\n{i}\n" + (f"from {parent}\n" if i == 0 else "")
        )
    subprocess.run(
        ["git", "-C", str(repo), "fast-import", "--quiet"],
        input="\n".join(stream),
        text=True,
        check=True,
    )
    shas = git(repo, "rev-list", "refs/heads/side", "HEAD").split()
    seen: dict[str, str] = {}
    for sha in shas:
        if sha[:4] in seen:
            return sha[:4], [seen[sha[:4]], sha]
        seen[sha[:4]] = sha
    raise AssertionError("no 4-digit collision among 1,500 commits")


def test_an_ambiguous_short_sha_lists_the_candidates(tmp_path: Path, upstream: Upstream) -> None:
    prefix, both = _colliding_commits(upstream)
    with pytest.raises(FatalError) as info:
        build(tmp_path, executorch_ref=prefix, library_version="0.1.0")
    message = str(info.value)
    assert f"{prefix!r} is ambiguous" in message and "give more digits" in message
    assert all(sha in message for sha in both)
    # More digits resolve it.
    lib = build(tmp_path, executorch_ref=both[0][:12], library_version="0.1.0")
    assert (lib / "executorch_pin.txt").read_text().strip() == both[0]


def test_cache_inside_out_is_refused_before_anything_is_created(
    tmp_path: Path, upstream: Upstream
) -> None:
    out = tmp_path / "lib"
    with pytest.raises(FatalError, match="overlap"):
        build_library(BuildOptions(cache_dir=out / ".cache"), out)
    assert not out.exists()


def test_a_waiting_build_says_it_waits(tmp_path: Path) -> None:
    target = tmp_path / "cache" / "build"
    target.parent.mkdir(parents=True)
    said: list[str] = []
    with open(target.with_suffix(".lock"), "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)

        def second() -> None:
            with cache_lock(target, said.append):
                said.append("got it")

        waiter = threading.Thread(target=second)
        waiter.start()
        for _ in range(200):
            if said:
                break
            time.sleep(0.01)
        assert said and said[0].startswith("waiting for the cache lock")
        assert "--cache-dir" in said[0]
        fcntl.flock(held, fcntl.LOCK_UN)
    waiter.join(5)
    assert said[-1] == "got it"


def test_an_os_error_at_the_final_move_is_a_clear_error(
    tmp_path: Path, upstream: Upstream, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    lib = build(tmp_path, library_version="0.1.0")
    before = sorted(p.relative_to(lib) for p in lib.rglob("*"))
    real_replace = os.replace

    def full_disk(src: object, dst: object) -> None:
        if Path(str(dst)).name.startswith(".ExecuTorch.old"):
            raise OSError(28, "No space left on device", str(dst))
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(SystemExit) as info, error_handler():
        build(tmp_path, library_version="0.1.0")
    assert info.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: No space left on device") and "Traceback" not in err
    assert sorted(p.relative_to(lib) for p in lib.rglob("*")) == before  # untouched


@pytest.mark.parametrize(
    ("url", "option"),
    [
        (f" https://u:{SECRET}@github.com/pytorch/executorch.git", "--executorch-repo"),
        (f"https://u:{SECRET}@github.com/x.git\n", "--remote"),
        (f"\thttps://{SECRET}@github.com/x.git", "--remote"),
    ],
)
def test_white_space_does_not_smuggle_credentials(url: str, option: str) -> None:
    with pytest.raises(FatalError) as info:
        refuse_credentials(url, option)
    assert SECRET not in str(info.value) and option in str(info.value)


def test_every_url_message_drops_credentials() -> None:
    from generator.vcs.remote_inputs import check_api_url
    from generator.workflows.render import check_generator_repo

    bad: list[tuple[Callable[[str], object], str]] = [
        (check_api_url, f"ftp://u:{SECRET}@example.com"),
        (check_api_url, f"https://u:{SECRET}@/api"),
        (check_api_url, f" https://u:{SECRET}@example.com/api"),
        (check_api_url, f"http://u:{SECRET}@example.com/api"),
        (check_generator_repo, f"http://u:{SECRET}@example.com/x.git"),
        (check_generator_repo, f"ssh://u:{SECRET}@example.com/x.git"),
        (check_generator_repo, f" https://u:{SECRET}@example.com/x.git"),
    ]
    for check, url in bad:
        with pytest.raises(FatalError) as info:
            check(url)
        assert SECRET not in str(info.value), (check.__name__, url, str(info.value))
    assert display_url(f" https://u:{SECRET}@h/x") == " https://h/x"
    assert display_url(f"clone https://{SECRET}@h/x failed") == "clone https://h/x failed"


def test_a_checkout_of_the_library_repo_is_never_replaced(
    tmp_path: Path, upstream: Upstream
) -> None:
    out = build(tmp_path, library_version="0.1.0")
    # A maintainer's clone of the published repo: the generated paths plus its own files.
    git(out, "init", "-q")
    (out / ".github" / "workflows").mkdir(parents=True)
    (out / ".github" / "workflows" / "ci.yml").write_text("name: ci\n")
    (out / "CHANGELOG.md").write_text("# Changelog\n")
    with pytest.raises(FatalError) as info:
        build(tmp_path, library_version="0.1.0")
    message = str(info.value)
    assert "(.git, .github, CHANGELOG.md)" in message and "generator sync" in message
    assert (out / ".git").is_dir() and (out / "CHANGELOG.md").is_file()
    # The same folder as the build left it is replaced as before.
    for extra in (".git", ".github"):
        shutil.rmtree(out / extra)
    (out / "CHANGELOG.md").unlink()
    build(tmp_path, library_version="0.1.0")


def test_generated_model_headers_are_not_private(tmp_path: Path, upstream: Upstream) -> None:
    old = os.umask(0o022)
    try:
        out = build(tmp_path, library_version="0.1.0")
    finally:
        os.umask(old)
    headers = sorted(out.glob("examples/*/model.h"))
    assert headers
    assert {oct(stat.S_IMODE(h.stat().st_mode)) for h in headers} == {oct(0o644)}
