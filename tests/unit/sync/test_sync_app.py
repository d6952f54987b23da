"""Scenario tests of `sync` with a GitHub App (`--app-id`, the key in SYNC_APP_PRIVATE_KEY) and
of GitHub's refusal to let the workflow's GITHUB_TOKEN open a pull request (issue 17, §1).

The App: the fake GitHub knows its public key (generated here with `cryptography`), checks
each JWT, and mints installation tokens that live an hour on a clock the test shares with sync
and advances ("the check took two hours"); an expired token gets 401 from the API and from
the git remote (`GitHttpRemote(accept=fake.token_valid)`), as on github.com. So a sync that
kept its first token would fail at the push: these tests show it mints a second one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from github.InstallationAuthorization import InstallationAuthorization
from github_fake import FakeGitHub, GitHubSpec
from github_fake.git_http import GitHttpRemote
from github_fake.server import FakeApp
from sync_fixtures import (
    NAME,
    OWNER,
    PULLS,
    REFS,
    SHA_OLD,
    TOKEN,
    FakeBuild,
    FakeCheck,
    Runner,
    branch_of,
    branches,
)
from werkzeug.wrappers import Request, Response

from generator.cli.main import main
from generator.pipeline.run import BuildOptions
from generator.sync.app import AppCredentials
from generator.sync.github import GitHubRepo
from generator.sync.run import SyncOptions, SyncResult, run_sync
from generator.util.errors import FatalError

APP_ID = 987654
#: GitHub's answer to the workflow token (danielroe/uppt issue #11 quotes this body).
ACTIONS_REFUSAL = {
    "message": "GitHub Actions is not permitted to create or approve pull requests.",
    "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
    "status": "403",
}


def _pem(key: Any) -> str:
    return str(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        ).decode()
    )


@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def key_pem(rsa_key: rsa.RSAPrivateKey) -> str:
    return _pem(rsa_key)


def _key_lines(pem: str) -> list[str]:
    """The base64 lines of a PEM key: none of them may ever be printed."""
    return [line for line in pem.splitlines() if line and not line.startswith("-----")]


class Clock:
    """The time the fake GitHub and sync share; `advance` stands for a long build or check."""

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, by: timedelta) -> None:
        self.offset += by


class SlowCheck(FakeCheck):
    """A check that takes `hours` on the shared clock (a cold run's compile and QEMU)."""

    def __init__(self, clock: Clock, hours: float) -> None:
        super().__init__()
        self.clock = clock
        self.hours = hours

    def __call__(self, library: Path, options: Any) -> Any:
        self.clock.advance(timedelta(hours=self.hours))
        return super().__call__(library, options)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def app_fake(
    spec: GitHubSpec, remote: Path, rsa_key: rsa.RSAPrivateKey, clock: Clock
) -> Iterator[FakeGitHub]:
    public = rsa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    app = FakeApp(APP_ID, public)
    with FakeGitHub(spec, OWNER, NAME, TOKEN, git_dir=remote, app=app, clock=clock) as server:
        yield server
        server.assert_clean()


@pytest.fixture
def http(app_fake: FakeGitHub, remote: Path) -> Iterator[GitHttpRemote]:
    """The library remote over authenticated HTTP, taking what the fake API takes."""
    with GitHttpRemote(remote.parent, TOKEN, accept=app_fake.token_valid) as server:
        yield server


def run_app(
    fake: FakeGitHub,
    http: GitHttpRemote,
    tmp_path: Path,
    clock: Clock | None,
    key: str | None,
    *,
    token: str | None = None,
    check: FakeCheck | None = None,
    app_id: str = str(APP_ID),
    say: list[str] | None = None,
    **options: Any,
) -> SyncResult:
    """Run sync as the App against the fake and the HTTP remote; `clock` None: sync keeps the
    real time (as if it did not share the fake's)."""
    said = say if say is not None else []
    opts = SyncOptions(
        build=_build_options(),
        repo=f"{OWNER}/{NAME}",
        remote=options.pop("remote", f"{http.url}/library.git"),
        api_url=fake.url,
        app_id=app_id,
        **options,
    )

    def connect(url: str, repo: str, credentials: str | AppCredentials) -> GitHubRepo:
        extra: dict[str, Any] = {"clock": clock} if clock is not None else {}
        return GitHubRepo(
            url, repo, credentials, sleep=lambda s: None, throttle=False, say=said.append, **extra
        )

    return run_sync(
        opts,
        token,
        app_key=key,
        build=FakeBuild(dict(REFS)),
        check=check or FakeCheck(),
        connect=connect,
        say=said.append,
    )


def _build_options() -> BuildOptions:
    return BuildOptions(executorch_ref="v1.5.1", library_version="0.2.0")


# -- the App's tokens outlive none of a long sync's steps ----------------------------------------


def test_a_token_that_expires_during_the_check_is_replaced_before_the_push_and_the_pr(
    app_fake: FakeGitHub,
    http: GitHttpRemote,
    remote: Path,
    tmp_path: Path,
    clock: Clock,
    key_pem: str,
    capfd: pytest.CaptureFixture[str],
) -> None:
    said: list[str] = []
    summary = tmp_path / "summary.md"
    result = run_app(
        app_fake,
        http,
        tmp_path,
        clock,
        key_pem,
        token=TOKEN,  # GITHUB_TOKEN set as well: the App wins
        check=SlowCheck(clock, hours=2),
        say=said,
        step_summary=summary,
    )
    assert result.status == "opened"
    branch = branch_of(SHA_OLD)
    assert branches(remote)[branch] == result.commit
    first, second = list(app_fake.minted)  # two tokens, in the order minted
    # the first served the preflight, the listings and the clone; the second the push and PR
    used = [(m, p, c) for m, p, c in app_fake.used if not c.startswith("jwt:")]
    assert ("GET", f"/repos/{OWNER}/{NAME}", first) in used
    assert ("POST", f"/repos/{OWNER}/{NAME}/pulls", second) in used
    assert all(c == second for m, p, c in used if m == "POST")
    assert {c for _, _, c in used} == {first, second}
    passwords = [password for _, password in http.offered]
    assert passwords[0] == first and passwords[-1] == second  # clone, then push
    assert TOKEN not in passwords and TOKEN not in {c for _, _, c in app_fake.used}
    assert all(status != 401 for _, _, status in app_fake.requests)
    assert app_fake.pulls[1].head == branch and app_fake.pulls[1].labels == ["sync"]
    assert (
        f"--app-id {APP_ID} is given and GITHUB_TOKEN is set: sync uses the GitHub App's "
        "installation tokens, not GITHUB_TOKEN"
    ) in said
    assert sum(line.startswith("minted a GitHub App installation token") for line in said) == 2
    # nothing secret anywhere
    out, err = capfd.readouterr()
    shown = "\n".join([out, err, *said, summary.read_text(), result.body or ""])
    shown += "".join(p.body + p.title for p in app_fake.pulls.values())
    for secret in [first, second, *_key_lines(key_pem)]:
        assert secret not in shown


def test_without_the_shared_clock_the_first_token_dies_at_the_push(
    app_fake: FakeGitHub,
    http: GitHttpRemote,
    remote: Path,
    tmp_path: Path,
    clock: Clock,
    key_pem: str,
) -> None:
    # the control: a sync that keeps its first token (its clock says it is still fresh) is
    # refused by the git remote, as github.com refuses an expired token; nothing is left behind
    with pytest.raises(FatalError) as info:
        run_app(app_fake, http, tmp_path, None, key_pem, check=SlowCheck(clock, hours=2))
    message = str(info.value)
    assert f"could not push {branch_of(SHA_OLD)} to the library repo" in message
    assert "check that the GitHub App's installation token is valid" in message
    assert len(app_fake.minted) == 1 and app_fake.pulls == {}
    assert branch_of(SHA_OLD) not in branches(remote)


def test_an_app_that_is_not_installed_on_the_repo_is_a_clear_error(
    app_fake: FakeGitHub, http: GitHttpRemote, tmp_path: Path, clock: Clock, key_pem: str
) -> None:
    assert app_fake.app is not None
    app_fake.app.installed = False
    with pytest.raises(FatalError) as info:
        run_app(app_fake, http, tmp_path, clock, key_pem)
    message = str(info.value)
    assert message.startswith(
        f"could not find the GitHub App {APP_ID}'s installation on {OWNER}/{NAME}: GitHub "
        "answered 404: Not Found"
    )
    assert f"the GitHub App {APP_ID} is not installed on {OWNER}/{NAME}" in message
    assert app_fake.minted == {} and http.offered == []


def test_a_key_of_another_app_is_refused_with_what_to_check(
    app_fake: FakeGitHub, http: GitHttpRemote, tmp_path: Path, clock: Clock
) -> None:
    other = _pem(rsa.generate_private_key(public_exponent=65537, key_size=2048))
    with pytest.raises(FatalError) as info:
        run_app(app_fake, http, tmp_path, clock, other)
    message = str(info.value)
    assert "GitHub answered 401: A JSON web token could not be decoded" in message
    assert f"GitHub refused the App's JWT: --app-id {APP_ID} and SYNC_APP_PRIVATE_KEY" in message
    assert not any(line in message for line in _key_lines(other))
    assert app_fake.minted == {}


def test_the_client_id_works_as_the_app_id(
    app_fake: FakeGitHub, http: GitHttpRemote, tmp_path: Path, clock: Clock, key_pem: str
) -> None:
    assert app_fake.app is not None
    result = run_app(app_fake, http, tmp_path, clock, key_pem, app_id=app_fake.app.client_id)
    assert result.status == "opened"
    assert ("GET", f"/repos/{OWNER}/{NAME}/installation", f"jwt:{app_fake.app.client_id}") in (
        app_fake.used
    )


def test_a_minted_token_in_an_error_message_is_redacted_everywhere(
    spec: GitHubSpec,
    remote: Path,
    rsa_key: rsa.RSAPrivateKey,
    tmp_path: Path,
    clock: Clock,
    key_pem: str,
    capfd: pytest.CaptureFixture[str],
) -> None:
    class Echoing(FakeGitHub):
        """Answers the pull request with a 422 that quotes the token it was sent."""

        def _handle(self, request: Request) -> Response:
            if request.method == "POST" and re.search(PULLS, request.path):
                sent = request.headers.get("Authorization", "").partition(" ")[2]
                self.fail("POST", PULLS, 422, body=_echo(sent))
            return super()._handle(request)

    public = rsa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    summary = tmp_path / "summary.md"
    with (
        Echoing(
            spec, OWNER, NAME, TOKEN, git_dir=remote, app=FakeApp(APP_ID, public), clock=clock
        ) as fake,
        GitHttpRemote(remote.parent, TOKEN, accept=fake.token_valid) as http,
    ):
        with pytest.raises(FatalError) as info:
            run_app(fake, http, tmp_path, clock, key_pem, step_summary=summary)
        fake.assert_clean()
    (minted,) = fake.minted
    message = str(info.value)
    assert "GitHub answered 422: Validation Failed (token *** is not welcome)" in message
    written = summary.read_text()
    assert written.startswith("### Sync failed\n\n```text\ncould not open the pull request")
    assert "(token *** is not welcome)" in written
    out, err = capfd.readouterr()
    for secret in [minted, *_key_lines(key_pem)]:
        assert secret not in message + written + out + err
    assert branch_of(SHA_OLD) not in branches(remote)  # the push was undone


def _echo(token: str) -> dict[str, Any]:
    return {
        "message": "Validation Failed",
        "errors": [
            {
                "resource": "PullRequest",
                "code": "custom",
                "message": f"token {token} is not welcome",
            }
        ],
        "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
        "status": "422",
    }


# -- the key: only from the environment, checked before anything ---------------------------------


@pytest.mark.parametrize("key", [None, "", "  \n"])
def test_app_id_without_the_key_is_refused_before_anything(
    sync: Runner, fake: FakeGitHub, key: str | None
) -> None:
    opts = SyncOptions(
        build=_build_options(), repo=f"{OWNER}/{NAME}", api_url=fake.url, app_id=str(APP_ID)
    )
    with pytest.raises(FatalError) as info:
        run_sync(opts, TOKEN, app_key=key, build=sync.build, check=sync.check)
    assert str(info.value).startswith(
        "--app-id is given but SYNC_APP_PRIVATE_KEY is not set or empty: give it the App's "
        "private key"
    )
    assert fake.requests == [] and sync.build.calls == []


def test_a_key_that_is_not_pem_or_not_rsa_is_refused_without_showing_it(
    sync: Runner, fake: FakeGitHub
) -> None:
    opts = SyncOptions(
        build=_build_options(), repo=f"{OWNER}/{NAME}", api_url=fake.url, app_id=str(APP_ID)
    )
    garbage = "ghp_NotAKeyButASecretAnyway0123456789"
    broken = (
        "-----BEGIN RSA PRIVATE KEY-----\nTm90IGEga2V5SecretPart\n-----END RSA PRIVATE KEY-----"
    )
    for bad, said in [
        (garbage, "SYNC_APP_PRIVATE_KEY is not an unencrypted PEM private key"),
        (broken, "SYNC_APP_PRIVATE_KEY is not an unencrypted PEM private key"),
        (_pem(ec.generate_private_key(ec.SECP256R1())), "holds a PEM private key that is not RSA"),
    ]:
        with pytest.raises(FatalError) as info:
            run_sync(opts, None, app_key=bad, build=sync.build, check=sync.check)
        message = str(info.value)
        assert said in message and "the value is not shown" in message
        assert not any(part in message for part in [garbage, "SecretPart", *_key_lines(bad)])
    assert fake.requests == [] and sync.build.calls == []


def test_a_key_pasted_on_one_line_with_backslash_n_is_read(
    app_fake: FakeGitHub, http: GitHttpRemote, tmp_path: Path, clock: Clock, key_pem: str
) -> None:
    one_line = key_pem.strip().replace("\n", "\\n")
    assert run_app(app_fake, http, tmp_path, clock, one_line).status == "opened"


def test_an_app_id_that_is_no_id_is_refused_without_showing_it(
    sync: Runner, fake: FakeGitHub, key_pem: str
) -> None:
    pasted = key_pem.splitlines()[1]  # a line of the key pasted into --app-id by mistake
    opts = SyncOptions(
        build=_build_options(), repo=f"{OWNER}/{NAME}", api_url=fake.url, app_id=pasted
    )
    with pytest.raises(FatalError) as info:
        run_sync(opts, None, app_key=key_pem, build=sync.build, check=sync.check)
    assert "--app-id is not a GitHub App's App ID (digits" in str(info.value)
    assert pasted not in str(info.value) and fake.requests == []


def test_a_dry_run_with_an_app_mints_nothing(
    app_fake: FakeGitHub, http: GitHttpRemote, remote: Path, tmp_path: Path, key_pem: str
) -> None:
    # without a token the authenticated remote cannot be cloned, so clone the bare repo
    said: list[str] = []
    result = run_app(
        app_fake, http, tmp_path, None, key_pem, dry_run=True, remote=str(remote), say=said
    )
    assert result.status == "dry-run"
    assert app_fake.requests == [] and app_fake.minted == {}
    assert any("dry run: no GitHub App token is minted" in line for line in said)


def test_cli_reads_the_key_from_the_environment_only_and_takes_it_out(
    gitenv: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SYNC_APP_PRIVATE_KEY", "not-a-key-SecretPart")
    with pytest.raises(SystemExit) as exit_info:
        main(["sync", "--repo", "acme/ExecuTorch", "--app-id", str(APP_ID)])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "error: SYNC_APP_PRIVATE_KEY is not an unencrypted PEM private key" in err
    assert "Traceback" not in err and "SecretPart" not in err
    assert "SYNC_APP_PRIVATE_KEY" not in os.environ  # the build's subprocesses never see it


def test_cli_help_names_the_variable_and_no_key_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["sync", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--app-id ID" in text and "SYNC_APP_PRIVATE_KEY (never from the command line)" in text
    assert "--private-key" not in text and "--app-key" not in text


# -- the workflow token's refusal -----------------------------------------------------------------


def test_the_actions_refusal_names_the_setting_puts_the_branch_back_and_reaches_the_summary(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("### Earlier step\n\n")
    fake.fail("POST", PULLS, 403, body=ACTIONS_REFUSAL)
    with pytest.raises(FatalError) as info:
        sync("v1.5.1", "0.2.0", workflow_token=True, step_summary=summary)
    message = str(info.value)
    assert message.startswith(
        "could not open the pull request: GitHub answered 403: GitHub Actions is not permitted "
        "to create or approve pull requests."
    )
    for part in [
        'Settings → Actions → General → Workflow permissions → "Allow GitHub Actions to create '
        'and approve pull requests" on the repository',
        "on the organisation: Organisation settings → Actions → General",
        "--app-id with SYNC_APP_PRIVATE_KEY",
        "SYNC_TOKEN",
        f"the branch {branch_of(SHA_OLD)} pushed for it was deleted again",
    ]:
        assert part in message
    assert "the token has no permission" not in message  # not the generic 403 hint
    assert branch_of(SHA_OLD) not in branches(remote)
    assert fake.pulls == {}
    written = summary.read_text()
    assert written == f"### Earlier step\n\n### Sync failed\n\n```text\n{message}\n```\n"
    assert TOKEN not in written


def test_the_actions_refusal_puts_an_existing_branch_back_at_its_old_tip(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    sync("v1.5.1", "0.2.0")
    branch = branch_of(SHA_OLD)
    old_tip = branches(remote)[branch]
    fake.pulls.clear()  # a branch left without its pull request
    sync.build.extra = {"src/more.h": "// more\n"}
    fake.fail("POST", PULLS, 403, body=ACTIONS_REFUSAL)
    with pytest.raises(FatalError) as info:
        sync("v1.5.1", "0.2.0")
    assert (
        f"the branch {branch} pushed for it was put back at its previous commit {old_tip[:12]}"
    ) in str(info.value)
    assert branches(remote)[branch] == old_tip


def test_another_403_keeps_the_permission_hint(sync: Runner, fake: FakeGitHub) -> None:
    fake.fail("POST", PULLS, 403)
    with pytest.raises(FatalError) as info:
        sync("v1.5.1", "0.2.0")
    message = str(info.value)
    assert "the token has no permission for this" in message
    assert "Allow GitHub Actions" not in message


def test_cli_says_when_the_key_is_set_without_app_id(
    gitenv: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SYNC_APP_PRIVATE_KEY", "SecretPart")
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    with pytest.raises(SystemExit):
        main(["sync", "--repo", "acme/ExecuTorch", "--api-url", "ftp://example.invalid"])
    err = capsys.readouterr().err
    assert "SYNC_APP_PRIVATE_KEY is set but --app-id is not given: the key is not used" in err
    assert "SecretPart" not in err and "SYNC_APP_PRIVATE_KEY" not in os.environ


def test_an_empty_app_id_is_refused_not_taken_for_no_app(
    sync: Runner, fake: FakeGitHub, key_pem: str
) -> None:
    # a workflow passing `--app-id "$SYNC_APP_ID"` with the variable unset must not fall back
    opts = SyncOptions(build=_build_options(), repo=f"{OWNER}/{NAME}", api_url=fake.url, app_id="")
    with pytest.raises(FatalError, match="--app-id is not a GitHub App's App ID"):
        run_sync(opts, TOKEN, app_key=key_pem, build=sync.build, check=sync.check)
    assert fake.requests == []


#: The installation token answer's `expires_at` as a broken server might send it
#: (None: the key left out) -> what the error says of it.
EXPIRIES: dict[str, tuple[Any, str]] = {
    "missing": (None, "no expires_at"),
    "null": ("null", "expires_at null"),
    "not-a-time": ("soon", "expires_at 'soon'"),
    "naive": ("2026-01-01T00:00:00", "expires_at '2026-01-01T00:00:00'"),
}


@pytest.mark.parametrize("case", EXPIRIES)
def test_a_token_answer_without_a_usable_expiry_is_a_clear_error_before_anything(
    case: str,
    app_fake: FakeGitHub,
    http: GitHttpRemote,
    tmp_path: Path,
    clock: Clock,
    key_pem: str,
    remote: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GitHub's schema requires expires_at (installation-token); the fake validates its own
    # answers against it, so the client side is given the broken answer
    sent, said = EXPIRIES[case]
    init = InstallationAuthorization.__init__

    def broken(self: Any, requester: Any, headers: Any, attributes: dict[str, Any]) -> None:
        attributes = dict(attributes)
        if sent is None:
            attributes.pop("expires_at")
        else:
            attributes["expires_at"] = None if sent == "null" else sent
        init(self, requester, headers, attributes)

    monkeypatch.setattr(InstallationAuthorization, "__init__", broken)
    refs_before = branches(remote)
    with pytest.raises(FatalError) as info:
        run_app(app_fake, http, tmp_path, clock, key_pem)
    (minted,) = app_fake.minted
    message = str(info.value)
    assert message.startswith(
        "GitHub's answer to minting an installation token (POST /app/installations/"
        f"{app_fake.app.installation_id if app_fake.app else '?'}/access_tokens) has {said}, "
        "not a time with its UTC offset"
    ), message
    assert minted not in message
    assert branches(remote) == refs_before and app_fake.pulls == {}


def test_a_403_to_the_app_names_the_apps_permissions_and_installation(
    app_fake: FakeGitHub, http: GitHttpRemote, tmp_path: Path, clock: Clock, key_pem: str
) -> None:
    app_fake.fail("POST", PULLS, 403)  # GitHub's "Resource not accessible by integration"
    with pytest.raises(FatalError) as info:
        run_app(app_fake, http, tmp_path, clock, key_pem)
    message = str(info.value)
    assert "could not open the pull request: GitHub answered 403: " in message
    assert (
        f"the GitHub App {APP_ID} may not do this on {OWNER}/{NAME}: give the App the "
        "repository permissions Contents and Pull requests, both Read and write"
    ) in message
    assert f"check that its installation includes {OWNER}/{NAME}" in message
    assert "the token has no permission" not in message and "fine-grained" not in message
