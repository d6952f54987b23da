"""Scenario tests of `sync`: its inputs (--repo, --api-url, --base, --remote) are checked up
front, before the network or the repo is touched (`generator.vcs.repo_inputs` and
`generator.vcs.remote_inputs`).

A real bare git repo is the library remote, a local fake GitHub (validated against GitHub's
OpenAPI description) answers the API, a fake build writes a small library with the real
layout, and a fake check reports sizes (conftest.py, sync_fixtures.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from github_fake import FakeGitHub
from sync_fixtures import Runner, branches

from generator.cli.main import main
from generator.util.errors import FatalError


@pytest.mark.parametrize(
    ("option", "value", "expected"),
    [
        ("repo", "../..", r"--repo '\.\./\.\.' is not OWNER/NAME"),
        ("repo", "acme/..", "is not OWNER/NAME"),
        ("repo", "acme/.", "is not OWNER/NAME"),
        ("repo", "acme/Exec Torch", "is not OWNER/NAME"),
        ("repo", "-acme/ExecuTorch", "is not OWNER/NAME"),
        ("repo", "acme/ExecuTorch/x", "is not OWNER/NAME"),
        ("repo", "acme/ExecuTorch.git", "ends in .git"),
        ("api_url", "ftp://example.invalid", r"--api-url .* is not an http\(s\) URL with a host"),
        ("api_url", "api.github.com", r"is not an http\(s\) URL with a host"),
        ("api_url", "https://", r"is not an http\(s\) URL with a host"),
        ("api_url", "https://host:notaport/api/v3", "invalid port"),
        ("api_url", "https://me:pw@host/api/v3", "must not carry credentials"),
        ("api_url", "https://host/api/v3 ", "whitespace"),
        ("base", "HEAD", "--base 'HEAD' is not a branch name"),
        ("base", "refs/heads/main", "is not a branch name"),
        ("base", "@{-1}", "is not a branch name"),
        ("base", "a..b", "is not a valid git branch name"),
        ("base", "-main", "is not a valid git branch name"),
        ("base", "main.lock", "is not a valid git branch name"),
        ("base", "sync/executorch-d756e7d8c200", "is a sync branch"),
    ],
)
def test_bad_repo_api_url_or_base_is_refused_before_anything(
    sync: Runner, fake: FakeGitHub, remote: Path, option: str, value: str, expected: str
) -> None:
    refs_before = branches(remote)
    with pytest.raises(FatalError, match=expected):
        sync("v1.5.1", "0.2.0", **{option: value})
    assert fake.requests == [] and sync.build.calls == []
    assert branches(remote) == refs_before


def test_base_head_is_refused_even_though_the_clone_has_origin_head(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    with pytest.raises(FatalError, match="is not a branch name"):
        sync("v1.5.1", "0.2.0", token=None, dry_run=True, base="HEAD")
    assert sync.build.calls == []


@pytest.mark.parametrize(
    ("api_url", "refused"),
    [
        ("http://ghe.example.com/api/v3", True),
        ("http://10.0.0.7/api/v3", True),
        ("http://127.0.0.1:8080/api/v3", False),
        ("http://[::1]:8080/api/v3", True),  # PyGithub cannot parse IPv6 literals
        ("http://localhost/api/v3", False),
        ("https://ghe.example.com/api/v3", False),
    ],
)
def test_plain_http_api_url_only_on_loopback(api_url: str, refused: bool) -> None:
    from generator.vcs.remote_inputs import check_api_url

    if refused:
        with pytest.raises(FatalError, match="clear text.*Use https"):
            check_api_url(api_url)
    else:
        check_api_url(api_url)


def test_remote_with_credentials_is_refused_and_never_shown(
    gitenv: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    secret = "pw-Secret-4711"
    for remote in (f"https://user:{secret}@example.invalid/acme/ExecuTorch.git",
                   f"https://{secret}@example.invalid/acme/ExecuTorch.git"):  # fmt: skip
        with pytest.raises(SystemExit) as exit_info:
            main(["sync", "--repo", "acme/ExecuTorch", "--dry-run", "--remote", remote])
        assert exit_info.value.code == 1
        captured = capsys.readouterr()
        assert secret not in captured.out + captured.err
        assert "--remote https://example.invalid/acme/ExecuTorch.git" in captured.err
        assert "GITHUB_TOKEN" in captured.err


def test_cli_rejects_a_repo_that_is_not_owner_name(
    gitenv: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["sync", "--repo", "just-a-name", "--dry-run"])
    assert exit_info.value.code == 1
    assert "is not OWNER/NAME" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("env", "flag", "expected"),
    [
        (None, None, "https://api.github.com"),
        ("https://ghe.example/api/v3", None, "https://ghe.example/api/v3"),
        ("", None, "https://api.github.com"),
        (
            "https://ghe.example/api/v3",
            "https://other.example/api/v3",
            "https://other.example/api/v3",
        ),
    ],
    ids=["default", "runner", "empty", "flag-wins"],
)
def test_the_api_url_defaults_to_the_runners_github_api_url(
    monkeypatch: pytest.MonkeyPatch, env: str | None, flag: str | None, expected: str
) -> None:
    """An Actions runner sets GITHUB_API_URL (GitHub Enterprise's own API on its hosts):
    sync uses it unless --api-url is given."""
    import generator.sync.run as sync_command
    from generator.cli.main import main

    seen: list[str] = []
    monkeypatch.setattr(
        sync_command, "run_sync", lambda options, *a, **k: seen.append(options.api_url)
    )
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    if env is None:
        monkeypatch.delenv("GITHUB_API_URL", raising=False)
    else:
        monkeypatch.setenv("GITHUB_API_URL", env)
    argv = ["sync", "--repo", "acme/lib", "--executorch-ref", "main"]
    assert main([*argv, *(["--api-url", flag] if flag else [])]) == 0
    assert seen == [expected]
