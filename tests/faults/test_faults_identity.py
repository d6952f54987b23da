"""Faults of trust, the bot's identity (issue 15, §6): a bot name or email that git would store
changed (`Acme Inc.` becomes `Acme Inc`; a newline is dropped) is refused before anything is
done, and the bot's own commits are recognised as git stored them, so the next sync does not
take its own branch for someone else's."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from github_fake import FakeGitHub
from sync_fixtures import NAME, OWNER, SHA_OLD, TOKEN, Runner, branch_of, branches, git

from generator.util.errors import FatalError
from generator.vcs import git as g

BOT_EMAIL = "acme-bot@users.noreply.github.com"

#: Values git keeps as they are, and values it changes (with what it stores).
KEPT = ["Acme Inc", "executorch-arduino-bot", "José Ñandú", "a.b", "O'Brien", "x (bot)", "a:b"]
CHANGED = {
    "Acme Inc.": "Acme Inc",
    " Acme": "Acme",
    "Acme\t": "Acme",
    "<Acme>": "Acme",
    "Ac<me>": "Acme",
    "'Acme'": "Acme",
    '"Acme"': "Acme",
    "Acme;": "Acme",
    "\\Acme\\": "Acme",
    "Bot\nSigned-off-by: Evil <evil@example.invalid>": (
        "BotSigned-off-by: Evil evil@example.invalid"
    ),
}


@pytest.mark.parametrize("value", [*KEPT, *CHANGED])
def test_git_stored_is_what_git_stores(value: str, tmp_path: Path, gitenv: dict[str, str]) -> None:
    # the model of git's ident sanitising, against git itself
    repo = tmp_path / "r"
    git("init", "--quiet", str(repo))
    env = {"GIT_AUTHOR_NAME": value, "GIT_AUTHOR_EMAIL": f"{value}@example.invalid"}
    git("commit", "--quiet", "--allow-empty", "-m", "m", cwd=repo, env=env)
    name, email = git("log", "-1", "--format=%an%x00%ae", cwd=repo).split("\0")
    assert name == g.git_stored(value)
    assert email == g.git_stored(f"{value}@example.invalid")
    assert g.git_stored(value) == CHANGED.get(value, value)


@pytest.mark.parametrize("name", KEPT)
def test_names_git_keeps_are_accepted(name: str) -> None:
    identity = g.Identity(name, BOT_EMAIL)
    assert g.check_identity(identity) is identity


@pytest.mark.parametrize(("name", "stored"), CHANGED.items())
def test_names_git_would_change_are_refused_saying_how(name: str, stored: str) -> None:
    with pytest.raises(FatalError) as info:
        g.check_identity(g.Identity(name, BOT_EMAIL))
    assert str(info.value).startswith(
        f"--bot-name {name!r} would be stored by git as {stored!r} (git strips space, "
    )


@pytest.mark.parametrize("name", ["", " ", "...", "<>", "\n"])
def test_names_git_would_store_empty_are_refused(name: str) -> None:
    with pytest.raises(FatalError) as info:
        g.check_identity(g.Identity(name, BOT_EMAIL))
    assert str(info.value).startswith(f"--bot-name {name!r} is empty once git strips")


@pytest.mark.parametrize(
    "email", ["bot@example.org.", "<bot@example.org>", " bot@example.org", "bot@ex\nample.org"]
)
def test_emails_git_would_change_are_refused(email: str) -> None:
    with pytest.raises(FatalError, match=r"^--bot-email .* would be stored by git as"):
        g.check_identity(g.Identity("Acme Inc", email))


def test_inner_control_characters_are_refused() -> None:
    # git keeps an inner tab or escape, but no bot name needs one and a terminal shows
    # them as something else
    with pytest.raises(FatalError, match="would be stored by git as"):
        g.check_identity(g.Identity("Acme\x1b[31mInc", BOT_EMAIL))


def test_sync_refuses_a_changed_name_before_anything(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    before = branches(remote)
    with pytest.raises(FatalError, match=r"--bot-name 'Acme Inc\.' would be stored by git as"):
        sync("v1.5.1", "0.2.0", identity=g.Identity("Acme Inc.", BOT_EMAIL))
    assert fake.requests == [] and sync.build.calls == [] and branches(remote) == before


def test_a_second_sync_recognises_its_own_commits(
    sync: Runner, fake: FakeGitHub, remote: Path
) -> None:
    identity = g.Identity("Acme Inc", BOT_EMAIL)
    first = sync("v1.5.1", "0.2.0", identity=identity)
    assert first.status == "opened" and first.pull is not None
    author = git("log", "-1", "--format=%an <%ae>|%cn <%ce>", first.branch, cwd=remote)
    assert author == f"Acme Inc <{BOT_EMAIL}>|Acme Inc <{BOT_EMAIL}>"
    # the next sync of the same ref replaces its own branch (a new provenance note)
    sync.build.provenance_note = "rebuilt"
    second = sync("v1.5.1", "0.2.0", identity=identity)
    assert second.status == "updated" and second.pull and second.pull.number == first.pull.number
    assert branches(remote)[branch_of(SHA_OLD)] == second.commit != first.commit


def test_commits_by_the_same_name_with_another_email_are_someone_elses(
    sync: Runner, fake: FakeGitHub, remote: Path, tmp_path: Path
) -> None:
    identity = g.Identity("Acme Inc", BOT_EMAIL)
    first = sync("v1.5.1", "0.2.0", identity=identity)
    work = tmp_path / "maintainer"
    git("clone", "--quiet", "--branch", first.branch, str(remote), str(work))
    (work / "NOTES.md").write_text("a maintainer's change\n")
    git("add", "NOTES.md", cwd=work)
    env = {"GIT_AUTHOR_NAME": "Acme Inc", "GIT_AUTHOR_EMAIL": BOT_EMAIL.upper()}
    git("commit", "--quiet", "-m", "notes", cwd=work, env=env)
    git("push", "--quiet", "origin", first.branch, cwd=work)
    sync.build.provenance_note = "rebuilt"
    with pytest.raises(FatalError, match="has commits by someone other than the bot"):
        sync("v1.5.1", "0.2.0", identity=identity)


def test_cli_sync_and_release_refuse_a_name_with_a_newline(
    gitenv: dict[str, str], tmp_path: Path
) -> None:
    forged = "Bot\nSigned-off-by: Evil <evil@example.invalid>"
    env = {**os.environ, "GITHUB_TOKEN": TOKEN}
    for verb in (
        ["sync", "--executorch-ref", "v1.5.1", "--api-url", "http://127.0.0.1:9"],
        ["release"],
    ):
        result = subprocess.run(
            [
                *("python", "-m", "generator", *verb),
                *("--repo", f"{OWNER}/{NAME}", "--bot-name", forged),
                *("--bot-email", BOT_EMAIL),
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=Path(__file__).resolve().parents[2],
            check=False,
            timeout=120,
        )
        assert result.returncode == 1, result.stderr
        assert result.stderr.startswith(f"error: --bot-name {forged!r} would be stored by git as")
        assert "Traceback" not in result.stderr and TOKEN not in result.stderr
