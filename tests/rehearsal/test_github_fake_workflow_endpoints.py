"""The fake GitHub's endpoints for the workflows' `gh` calls (releases, contents, matching
refs, editing a comment, gh's --verify-tag GraphQL query) behave as GitHub's pages say and
pass GitHub's OpenAPI description (the fixture's `assert_clean`)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from github_fake import FakeGitHub, GitHubSpec
from sync_fixtures import git, isolate_git, make_library_remote

TOKEN = "ghp_FakeWorkflowEndpoints"
#: the query gh's `remoteTagExists` sends (cli/cli pkg/cmd/release/create/http.go), as
#: shurcooL/graphql writes it
FIND_REF = (
    "query RepositoryFindRef($name:String!$owner:String!$tagName:String!)"
    "{repository(owner: $owner, name: $name){ref(qualifiedName: $tagName){id}}}"
)


@pytest.fixture
def remote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key, value in isolate_git(tmp_path / "home").items():
        monkeypatch.setenv(key, value)
    bare = make_library_remote(tmp_path, {"executorch_pin.txt": "abc\n", "src/a/b.h": "//\n"})
    main = git("rev-parse", "main", cwd=bare)
    for branch in ("sync/executorch-0123456789ab", "sync/executorch-0123456789ab-2", "other"):
        git("update-ref", f"refs/heads/{branch}", main, cwd=bare)
    return bare


@pytest.fixture
def fake(spec: GitHubSpec, remote: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(spec, "acme", "lib", TOKEN, git_dir=remote) as server:
        yield server
        server.assert_clean()


def call(fake: FakeGitHub, method: str, path: str, **kwargs: Any) -> requests.Response:
    headers = {"Authorization": f"token {TOKEN}", "Accept": "application/vnd.github+json"}
    headers |= kwargs.pop("headers", {})
    return requests.request(method, f"{fake.url}/{path}", headers=headers, timeout=10, **kwargs)


def test_a_release_is_404_until_created_then_found_by_its_tag_and_edited(
    fake: FakeGitHub, remote: Path
) -> None:
    assert call(fake, "GET", "repos/acme/lib/releases/tags/v1.0.0").status_code == 404
    git("tag", "v1.0.0", "main", cwd=remote)
    made = call(
        fake,
        "POST",
        "repos/acme/lib/releases",
        json={"tag_name": "v1.0.0", "name": "v1.0.0", "body": "notes", "draft": False},
    )
    assert made.status_code == 201
    release = made.json()
    assert (release["tag_name"], release["body"], release["draft"]) == ("v1.0.0", "notes", False)
    found = call(fake, "GET", "repos/acme/lib/releases/tags/v1.0.0")
    assert found.status_code == 200 and found.json()["id"] == release["id"]
    again = call(fake, "POST", "repos/acme/lib/releases", json={"tag_name": "v1.0.0"})
    assert again.status_code == 422
    assert again.json()["errors"] == [
        {"resource": "Release", "code": "already_exists", "field": "tag_name"}
    ]
    edited = call(
        fake, "PATCH", f"repos/acme/lib/releases/{release['id']}", json={"body": "new notes"}
    )
    assert edited.status_code == 200 and edited.json()["body"] == "new notes"
    assert [(r.tag_name, r.body, r.updates) for r in fake.releases.values()] == [
        ("v1.0.0", "new notes", 1)
    ]
    assert call(fake, "PATCH", "repos/acme/lib/releases/99", json={}).status_code == 404


def test_a_draft_is_not_found_by_its_tag_and_a_new_tag_is_made_from_main(
    fake: FakeGitHub, remote: Path
) -> None:
    made = call(fake, "POST", "repos/acme/lib/releases", json={"tag_name": "v2.0.0", "draft": True})
    assert made.status_code == 201
    # "Unused if the Git tag already exists": GitHub made the tag from the default branch
    assert git("rev-parse", "v2.0.0", cwd=remote) == git("rev-parse", "main", cwd=remote)
    assert call(fake, "GET", "repos/acme/lib/releases/tags/v2.0.0").status_code == 404


def test_contents_raw_is_the_files_bytes_json_is_base64_and_absent_is_404(
    fake: FakeGitHub,
) -> None:
    raw = {"Accept": "application/vnd.github.raw+json"}
    answer = call(fake, "GET", "repos/acme/lib/contents/executorch_pin.txt", headers=raw)
    assert answer.status_code == 200 and answer.text == "abc\n"
    nested = call(fake, "GET", "repos/acme/lib/contents/src/a/b.h", headers=raw)
    assert nested.status_code == 200 and nested.text == "//\n"
    data = call(fake, "GET", "repos/acme/lib/contents/executorch_pin.txt").json()
    assert (data["type"], base64.b64decode(data["content"])) == ("file", b"abc\n")
    missing = call(fake, "GET", "repos/acme/lib/contents/library.properties", headers=raw)
    assert missing.status_code == 404


def test_matching_refs_is_a_plain_prefix_and_empty_when_none(fake: FakeGitHub) -> None:
    listed = call(fake, "GET", "repos/acme/lib/git/matching-refs/heads/sync/executorch-0123")
    assert listed.status_code == 200
    assert [r["ref"] for r in listed.json()] == [
        "refs/heads/sync/executorch-0123456789ab",
        "refs/heads/sync/executorch-0123456789ab-2",
    ]
    assert listed.json()[0]["object"]["type"] == "commit"
    none = call(fake, "GET", "repos/acme/lib/git/matching-refs/heads/sync/executorch-ffff")
    assert none.status_code == 200 and none.json() == []


def test_a_comment_is_edited_in_place(fake: FakeGitHub, remote: Path) -> None:
    pull = call(
        fake,
        "POST",
        "repos/acme/lib/pulls",
        json={"title": "t", "head": "other", "base": "main", "body": "b"},
    ).json()
    fake.logins[TOKEN] = "github-actions[bot]"
    posted = call(
        fake, "POST", f"repos/acme/lib/issues/{pull['number']}/comments", json={"body": "one"}
    ).json()
    assert posted["user"]["login"] == "github-actions[bot]"
    edited = call(
        fake, "PATCH", f"repos/acme/lib/issues/comments/{posted['id']}", json={"body": "two"}
    )
    assert edited.status_code == 200 and edited.json()["body"] == "two"
    assert fake.pulls[pull["number"]].comments == ["two"]
    assert (
        call(fake, "PATCH", "repos/acme/lib/issues/comments/9999", json={"body": "x"}).status_code
        == 404
    )


def test_gh_verify_tag_query_finds_a_tag_only_when_the_remote_has_it(
    fake: FakeGitHub, remote: Path
) -> None:
    def find(tag: str) -> Any:
        variables = {"owner": "acme", "name": "lib", "tagName": f"refs/tags/{tag}"}
        answer = call(fake, "POST", "graphql", json={"query": FIND_REF, "variables": variables})
        assert answer.status_code == 200
        return answer.json()["data"]["repository"]["ref"]

    assert find("v3.0.0") is None
    git("tag", "v3.0.0", "main", cwd=remote)
    assert find("v3.0.0")["id"]
    other = call(fake, "POST", "graphql", json={"query": "query{viewer{login}}"})
    assert "errors" in other.json()
    assert fake.violations and "not emulated" in fake.violations[0]
    fake.violations.clear()


@pytest.mark.parametrize(
    ("path", "template", "key"),
    [
        ("git/matching-refs/heads/sync", "/repos/{owner}/{repo}/git/matching-refs/{ref}", "ref"),
        ("contents/src/a/b.h", "/repos/{owner}/{repo}/contents/{path}", "size"),
    ],
)
def test_answers_on_multi_segment_paths_are_validated_too(
    fake: FakeGitHub, path: str, template: str, key: str
) -> None:
    def tamper(method: str, seen: str, payload: Any) -> Any:
        if seen != template:
            return payload
        if isinstance(payload, list):
            return [{**item, key: 7} for item in payload]
        return {**payload, key: "seven"}

    fake.tamper = tamper
    assert call(fake, "GET", f"repos/acme/lib/{path}").status_code == 200
    assert len(fake.violations) == 1 and key in fake.violations[0], fake.violations
    fake.violations.clear()
