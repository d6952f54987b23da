"""`gh` inside a workflow rehearsal: the GitHub CLI commands the library repo's workflows use,
answered by the fake GitHub at $GITHUB_API_URL with $GH_TOKEN, as gh sends them (REST, token
auth). The `gh` stub in bin/ records the call and runs this file with the real interpreter.

- `gh api [-X|--method M] [--paginate] [-H H]... [-f k=v]... [-F k=v|k=@file]... [--jq E] PATH`:
  the request (fields as a JSON body; `-F` converts true, false, null and integers and reads
  `@file`; GET without fields, POST with them unless a method is given); `--paginate`
  follows `Link: rel="next"` and joins the pages; `--jq` runs the `jq` program on the
  answer (gh embeds gojq; jq's dialect is the same for the filters used); an
  `Accept: ...raw...` header prints the body as it came. An HTTP error prints
  `gh: MESSAGE (HTTP STATUS)` on stderr and exits 1, as gh does.
- `gh release view TAG`, `gh release create TAG [--verify-tag] [--title T] [--notes-file F]
  [--notes N] [--prerelease] [--draft]`, `gh release edit TAG [same flags]`: the REST calls
  GET /repos/{r}/releases/tags/{tag}, POST /repos/{r}/releases, PATCH
  /repos/{r}/releases/{id} (that view and edit find the release by GET .../releases/tags/{tag}
  is how cli/cli's test stubs `shared.StubFetchRelease` have it; its `FetchRelease` itself
  was not read here). `--verify-tag` asks as gh does (cli/cli
  pkg/cmd/release/create/create.go `createRun` -> http.go `remoteTagExists`): the GraphQL
  query `RepositoryFindRef` at $GITHUB_API_URL/graphql, and aborts with gh's message when the
  ref's id is empty.
- the repository: `-R/--repo`, else $GH_REPO, else $GITHUB_REPOSITORY.

Anything else exits 2 with "gh stub: ... is not emulated", so a workflow that starts using
another command fails its rehearsal instead of passing unseen.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import requests

#: gh's `remoteTagExists` query as shurcooL/graphql writes it from the Go struct (its
#: variables sorted, no separators: recalled from that library, not re-read here)
#: (cli/cli pkg/cmd/release/create/http.go)
FIND_REF = (
    "query RepositoryFindRef($name:String!$owner:String!$tagName:String!)"
    "{repository(owner: $owner, name: $name){ref(qualifiedName: $tagName){id}}}"
)


def _fail(message: str, code: int = 1) -> int:
    print(message, file=sys.stderr)
    return code


def _value(raw: str) -> Any:
    if raw.startswith("@"):
        return Path(raw[1:]).read_text(encoding="utf-8")
    if raw in ("true", "false"):
        return raw == "true"
    if raw == "null":
        return None
    try:
        return int(raw)
    except ValueError:
        return raw


def _request(
    method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> requests.Response:
    url = path if path.startswith("http") else f"{os.environ['GITHUB_API_URL']}/{path.lstrip('/')}"
    token = os.environ.get("GH_TOKEN") or os.environ.get("GITHUB_TOKEN") or ""
    sent = {"Accept": "application/vnd.github+json", **(headers or {})}
    if token:
        sent["Authorization"] = f"token {token}"
    return requests.request(method, url, json=body, headers=sent, timeout=30)


def _error(response: requests.Response) -> int:
    try:
        message = response.json().get("message", response.reason)
    except ValueError:
        message = response.reason
    return _fail(f"gh: {message} (HTTP {response.status_code})")


def _api(args: list[str]) -> int:
    method, paginate, jq = "", False, None
    headers: dict[str, str] = {}
    fields: dict[str, Any] = {}
    path = ""
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-X", "--method"):
            method, i = args[i + 1], i + 2
        elif a == "--paginate":
            paginate, i = True, i + 1
        elif a in ("-H", "--header"):
            key, _, value = args[i + 1].partition(":")
            headers[key.strip()] = value.strip()
            i += 2
        elif a in ("-f", "--raw-field", "-F", "--field"):
            key, _, value = args[i + 1].partition("=")
            fields[key] = value if a in ("-f", "--raw-field") else _value(value)
            i += 2
        elif a in ("-q", "--jq"):
            jq, i = args[i + 1], i + 2
        elif a.startswith("-"):
            return _fail(f"gh stub: gh api {a} is not emulated", 2)
        else:
            path, i = a, i + 1
    repo = os.environ.get("GH_REPO") or os.environ.get("GITHUB_REPOSITORY", "")
    owner, _, name = repo.partition("/")
    path = path.replace("{owner}", owner).replace("{repo}", name)
    method = method or ("POST" if fields else "GET")
    response = _request(method, path, fields or None, headers)
    if response.status_code >= 400:
        return _error(response)
    if "raw" in headers.get("Accept", ""):
        sys.stdout.write(response.text)
        return 0
    data: Any = response.json() if response.text else None
    while paginate and "next" in response.links:
        response = _request(method, response.links["next"]["url"], None, headers)
        if response.status_code >= 400:
            return _error(response)
        data = [*data, *response.json()]
    text = json.dumps(data)
    if jq is not None:
        # gh applies --jq to each page; on arrays joined here the result is the same.
        done = subprocess.run(
            ["jq", "-r", jq], input=text, capture_output=True, text=True, check=False
        )
        sys.stdout.write(done.stdout)
        if done.returncode != 0:
            return _fail(done.stderr.strip())
        return 0
    print(text)
    return 0


def _release(args: list[str]) -> int:
    if not args:
        return _fail("gh stub: gh release needs a command", 2)
    command, rest = args[0], args[1:]
    repo = os.environ.get("GH_REPO") or os.environ.get("GITHUB_REPOSITORY", "")
    tag, flags = "", {"prerelease": False, "draft": False, "verify": False}
    body: dict[str, Any] = {}
    i = 0
    while i < len(rest):
        a = rest[i]
        if a in ("-R", "--repo"):
            repo, i = rest[i + 1], i + 2
        elif a in ("-t", "--title"):
            body["name"], i = rest[i + 1], i + 2
        elif a in ("-F", "--notes-file"):
            body["body"], i = Path(rest[i + 1]).read_text(encoding="utf-8"), i + 2
        elif a in ("-n", "--notes"):
            body["body"], i = rest[i + 1], i + 2
        elif a == "--prerelease":
            flags["prerelease"], i = True, i + 1
        elif a in ("-d", "--draft"):
            flags["draft"], i = True, i + 1
        elif a == "--verify-tag":
            flags["verify"], i = True, i + 1
        elif a.startswith("-"):
            return _fail(f"gh stub: gh release {command} {a} is not emulated", 2)
        else:
            tag, i = a, i + 1
    if not tag:
        return _fail(f"gh stub: gh release {command} without a tag is not emulated", 2)
    found = _request("GET", f"repos/{repo}/releases/tags/{tag}")
    if command == "view":
        if found.status_code == 404:
            return _fail("release not found")
        if found.status_code >= 400:
            return _error(found)
        print(json.dumps(found.json()))
        return 0
    if command == "create":
        body |= {"prerelease": flags["prerelease"], "draft": flags["draft"]}
        if flags["verify"]:
            owner, _, name = repo.partition("/")
            asked = _request(
                "POST",
                "graphql",
                {
                    "query": FIND_REF,
                    "variables": {"owner": owner, "name": name, "tagName": f"refs/tags/{tag}"},
                },
            )
            if asked.status_code >= 400:
                return _error(asked)
            answer = asked.json()
            if answer.get("errors"):
                return _fail(f"gh: {answer['errors'][0].get('message', 'GraphQL error')}")
            ref = (answer.get("data") or {}).get("repository", {}).get("ref") or {}
            if not ref.get("id"):
                return _fail(
                    f"tag {tag} doesn't exist in the repo {repo}, aborting due to --verify-tag flag"
                )
        made = _request("POST", f"repos/{repo}/releases", {"tag_name": tag, **body})
        if made.status_code >= 400:
            return _error(made)
        print(made.json().get("html_url", ""))
        return 0
    if command == "edit":
        if found.status_code >= 400:
            return _error(found)
        # as gh's editRun (pkg/cmd/release/edit/edit.go): only the flags given, and the
        # release's tag_name ("If we don't provide any tag name, the API will remove the
        # current tag from the release")
        body |= {key: True for key in ("prerelease", "draft") if flags[key]}
        body.setdefault("tag_name", found.json()["tag_name"])
        edited = _request("PATCH", f"repos/{repo}/releases/{found.json()['id']}", body)
        if edited.status_code >= 400:
            return _error(edited)
        print(edited.json().get("html_url", ""))
        return 0
    return _fail(f"gh stub: gh release {command} is not emulated", 2)


def main(argv: list[str]) -> int:
    """Run `gh argv` against the fake; returns gh's exit code."""
    if argv[:1] == ["api"]:
        return _api(argv[1:])
    if argv[:1] == ["release"]:
        return _release(argv[1:])
    return _fail(f"gh stub: gh {' '.join(argv[:2])} is not emulated", 2)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
