"""A local HTTP server that behaves like the GitHub REST endpoints the sync bot uses, keeps
state, and validates every request it gets and every response it sends against GitHub's
published OpenAPI description (`spec.py`).

- Endpoints: GET /repos/{o}/{r}; GET, POST /repos/{o}/{r}/pulls; GET, PATCH
  /repos/{o}/{r}/pulls/{n}; POST /repos/{o}/{r}/issues/{n}/labels; GET
  /repos/{o}/{r}/issues/{n}; GET, POST /repos/{o}/{r}/issues/{n}/comments; PATCH
  /repos/{o}/{r}/issues/comments/{id}; and for a GitHub App (`FakeApp`): GET
  /repos/{o}/{r}/installation and POST /app/installations/{id}/access_tokens, with the App's
  JWT. For the workflows' `gh` calls: GET /repos/{o}/{r}/releases/tags/{tag}, POST
  /repos/{o}/{r}/releases, PATCH /repos/{o}/{r}/releases/{id}, GET
  /repos/{o}/{r}/contents/{path}, GET /repos/{o}/{r}/git/matching-refs/{ref}, and POST
  /graphql for the one query `gh release create --verify-tag` sends. Anything else is
  recorded as a violation (the bot called something we did not expect) and answered 404.
- Releases (`releases`), as GitHub's REST pages say
  (https://docs.github.com/rest/releases/releases): "Get a release by tag name" finds a
  *published* release (a draft is 404, as is no release); "Create a release" is 422
  `already_exists` for a tag that has a release and, for a tag not on the git remote, creates
  the tag from `target_commitish` (default: the default branch; "Unused if the Git tag
  already exists"); "Update a release" changes the fields given, 404 for an unknown id.
- `gh release create --verify-tag` does not ask REST: cli/cli's
  pkg/cmd/release/create/create.go (`createRun`) calls `remoteTagExists` (http.go), the
  GraphQL query `RepositoryFindRef`, `repository(owner: $owner, name: $name) { ref(
  qualifiedName: "refs/tags/TAG") { id } }`, and aborts when the id is empty. GraphQL is
  outside the OpenAPI description, so POST /graphql answers that query only (`ref` null when
  the git remote has no such tag), and records any other query as a violation.
- Contents (https://docs.github.com/rest/repos/contents#get-repository-content): a file of
  the git remote at `ref` (default: the default branch, main), 404 when absent; with
  `Accept: application/vnd.github.raw+json` ("Returns the raw file contents") the body is the
  file's bytes: the JSON answer is built and validated all the same, then its content sent
  raw (the Content-Type github.com sends with it was not read; the fake sends
  text/plain). Directories are not emulated (a violation, 404).
- Matching refs (https://docs.github.com/rest/git/refs#list-matching-references): the git
  remote's refs whose name starts with `refs/{ref}` ("If the :ref doesn't exist ... but
  existing refs start with :ref, they will be returned"), a plain prefix; `[]` when none.
- Issue comments (https://docs.github.com/rest/issues/comments#update-an-issue-comment):
  comment `id` is 100 * PR number + its index from 1 (so at most 99 a pull request); PATCH
  replaces its body; the author (`user.login`) is who posted it: `logins[token]`, else
  `login`.
- A GitHub App: the JWT must be RS256, signed by the App's key (the test generates one with
  `cryptography`), `iss` its App ID or client ID, `exp` at most 10 minutes ahead and not past
  (GitHub docs, "Generating a JSON Web Token (JWT) for a GitHub App"; these times are checked
  against the real clock, which PyGithub signs with); else 401. An installation token lives
  `FakeApp.token_lifetime` on `clock` (one hour on github.com, GitHub docs "Generating an
  installation access token for a GitHub App"); once expired, the API answers it 401 "Bad
  credentials", and `token_valid` (which the git side, `GitHttpRemote(accept=...)`, asks)
  refuses it.
- Behaviour copied from GitHub: the token must match (else 401 "Bad credentials"); creating a
  second open PR for the same head and base is 422 "A pull request already exists"; a head
  branch that does not exist on the git remote is 422; `head=OWNER:BRANCH` filters lists;
  `state=open|closed|all` too; a PR whose head is merged into its base is closed as merged,
  one whose head branch was deleted is closed; closing through PATCH records who closed it
  (the token's user, `closed_by` of the issue).
- Scenarios: `fail(method, path_regex, status, times, headers)` answers the next `times`
  matching requests with `status` (GitHub's error bodies; 429/403 rate limits carry
  Retry-After).
- Validation: each request with openapi-core (path, query, body); each response with
  openapi-core when the operation documents its status, else against GitHub's generic
  `basic-error`/`validation-error` schema (GitHub answers 401/429/5xx on every operation but
  documents them per operation only sometimes). Failures land in `violations`;
  `assert_clean()` (called by the fixture after each test) fails the test on any.
- Response objects: the fields the bot and PyGithub read (number, state, title, body, head,
  base, labels, urls, permissions, ...) come from the state; the other required fields of
  GitHub's schemas are filled from the schema with neutral values (so the server follows the
  description as it evolves without hand-copying ~150 fields).
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jwt
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest, WerkzeugOpenAPIResponse
from openapi_core.datatypes import RequestParameters
from openapi_schema_validator import OAS30Validator
from werkzeug.datastructures import Headers, ImmutableMultiDict
from werkzeug.wrappers import Request, Response

from .local_server import LocalServer
from .spec import GitHubSpec

DOCS = "https://docs.github.com/rest"
_NOW = "2026-01-01T00:00:00Z"

_DEFAULT_ERRORS: dict[int, dict[str, Any]] = {
    401: {"message": "Bad credentials", "documentation_url": DOCS, "status": "401"},
    403: {
        "message": "Resource not accessible by personal access token",
        "documentation_url": f"{DOCS}/pulls/pulls#create-a-pull-request",
        "status": "403",
    },
    404: {"message": "Not Found", "documentation_url": DOCS, "status": "404"},
    422: {
        "message": "Validation Failed",
        "errors": [{"resource": "PullRequest", "code": "custom", "message": "base is invalid"}],
        "documentation_url": f"{DOCS}/pulls/pulls#create-a-pull-request",
        "status": "422",
    },
    429: {
        "message": "You have exceeded a secondary rate limit. Please wait a few minutes "
        "before you try again.",
        "documentation_url": f"{DOCS}/using-the-rest-api/rate-limits-for-the-rest-api",
        "status": "429",
    },
    500: {"message": "Server Error", "documentation_url": DOCS, "status": "500"},
    502: {"message": "Server Error", "documentation_url": DOCS, "status": "502"},
    503: {"message": "Service Unavailable", "documentation_url": DOCS, "status": "503"},
}


@dataclass
class Pull:
    """A pull request the fake holds."""

    number: int
    title: str
    body: str
    head: str
    base: str
    state: str = "open"
    labels: list[str] = field(default_factory=list)
    updates: int = 0
    merged: bool = False
    #: login of who closed it (GET .../issues/{n} reports it as `closed_by`)
    closed_by: str | None = None
    comments: list[str] = field(default_factory=list)
    #: who posted each of `comments` (the login of the token it came with)
    comment_authors: list[str] = field(default_factory=list)
    #: how often each comment (by index) was edited through PATCH
    comment_edits: dict[int, int] = field(default_factory=dict)


@dataclass
class Release:
    """A GitHub Release the fake holds (https://docs.github.com/rest/releases/releases)."""

    id: int
    tag_name: str
    name: str
    body: str
    draft: bool = False
    prerelease: bool = False
    target_commitish: str = "main"
    #: how often it was changed through PATCH
    updates: int = 0


@dataclass
class FakeApp:
    """A GitHub App installed on the fake's repository.

    Attributes:
        app_id: its App ID; client_id: its client ID (GitHub takes either as the JWT's `iss`).
        public_key: PEM of the key its JWTs must be signed with.
        installation_id: its installation on the repository; installed: whether it is.
        token_lifetime: how long an installation token lives on the fake's clock.
    """

    app_id: int
    public_key: bytes
    client_id: str = "Iv23liFakeClient0001"
    installation_id: int = 4242
    installed: bool = True
    token_lifetime: timedelta = timedelta(hours=1)


#: The operations that take the App's JWT instead of a token.
_JWT_OPERATIONS = frozenset(
    {
        ("/repos/{owner}/{repo}/installation", "get"),
        ("/app/installations/{installation_id}/access_tokens", "post"),
    }
)


@dataclass
class Failure:
    """An injected answer: the next `times` requests matching method + path regex."""

    method: str
    path: re.Pattern[str]
    status: int
    times: int
    headers: dict[str, str]
    body: dict[str, Any]


class FakeGitHub(LocalServer):
    """The fake server. Use as a context manager (starts on port 0, stops on exit).

    Args:
        spec: the pruned description (`spec.load()`).
        owner, name: the one repository it serves.
        token: the token requests must carry.
        git_dir: the bare repository standing for the repo's git remote; when given, a PR's
            head branch must exist there (as GitHub requires).
        can_push: the `permissions.push` GitHub reports for the token.
        app: a GitHub App installed on the repository (None: none).
        clock: the fake's time (UTC), for installation tokens' expiry; tests advance it.
    Attributes:
        minted: every installation token issued -> when it expires.
        used: (method, path, credential) of each request: the token it carried, or
            "jwt:<iss>" for a valid JWT (tests check which token each call used).
    """

    def __init__(
        self,
        spec: GitHubSpec,
        owner: str,
        name: str,
        token: str,
        *,
        git_dir: Path | None = None,
        can_push: bool = True,
        app: FakeApp | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        super().__init__()
        self.app = app
        self.clock: Callable[[], datetime] = clock or (lambda: datetime.now(UTC))
        self.minted: dict[str, datetime] = {}
        self.used: list[tuple[str, str, str]] = []
        self.spec = spec
        self.owner = owner
        self.name = name
        self.token = token
        self.git_dir = git_dir
        self.can_push = can_push
        self.pulls: dict[int, Pull] = {}
        self.releases: dict[int, Release] = {}
        #: the login each token belongs to, where it is not `login` (e.g. the workflow
        #: token's "github-actions[bot]"); comments record it as their author
        self.logins: dict[str, str] = {}
        #: every GraphQL query asked (POST /graphql), as (operation name, variables)
        self.graphql: list[tuple[str, dict[str, Any]]] = []
        self.requests: list[tuple[str, str, int]] = []
        self.violations: list[str] = []
        self.failures: list[Failure] = []
        #: test hook: change a response payload before it is validated and sent
        self.tamper: Callable[[str, str, Any], Any] | None = None
        self._next_number = 1
        self._lock = threading.Lock()
        #: the login the token belongs to (who closes what the bot closes)
        self.login = "executorch-arduino-bot"

    # -- lifecycle ------------------------------------------------------------------------

    def fail(
        self,
        method: str,
        path: str,
        status: int,
        *,
        times: int = 1,
        headers: dict[str, str] | None = None,
        body: dict[str, Any] | None = None,
    ) -> None:
        """Answer the next `times` requests `method` on a path matching regex `path` with
        `status` (and GitHub's usual error body for it unless `body` is given)."""
        self.failures.append(
            Failure(
                method.upper(),
                re.compile(path),
                status,
                times,
                headers or {},
                body or _DEFAULT_ERRORS[status],
            )
        )

    def assert_clean(self) -> None:
        """Fail if any request or response broke GitHub's description."""
        assert not self.violations, "GitHub OpenAPI violations:\n" + "\n".join(self.violations)

    def token_valid(self, token: str) -> bool:
        """Whether `token` is accepted now: the fixed token, or an installation token the
        fake minted that has not expired on `clock`."""
        if token == self.token:
            return True
        expires = self.minted.get(token)
        return expires is not None and self.clock() < expires

    def open_pulls(self) -> list[Pull]:
        return [p for p in self.pulls.values() if p.state == "open"]

    def close(self, number: int, by: str = "a-maintainer") -> None:
        """Close pull request `number` without merging it, as `by` would on github.com."""
        self.pulls[number].state = "closed"
        self.pulls[number].closed_by = by

    # -- WSGI -----------------------------------------------------------------------------

    def _wsgi(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        with self._lock:
            response = self._handle(request)
        self.requests.append((request.method, request.path, response.status_code))
        return response(environ, start_response)

    def _handle(self, request: Request) -> Response:
        if request.path == "/graphql" and request.method == "POST":
            return self._graphql(request)
        route = self._route(request.method, request.path)
        if route is None:
            self.violations.append(f"unexpected request {request.method} {request.path}")
            return self._error(None, 404)
        template, method, params = route
        try:
            self.spec.api.validate_request(self._openapi_request(request))
        except Exception as e:
            self.violations.append(f"request {request.method} {request.path}: {_why(e)}")
            return self._send(
                request,
                template,
                method,
                400,
                _DEFAULT_ERRORS[404] | {"message": f"fake GitHub: invalid request: {_why(e)}"},
            )
        for failure in self.failures:
            if (
                failure.times > 0
                and failure.method == request.method
                and failure.path.search(request.path)
            ):
                failure.times -= 1
                return self._send(
                    request, template, method, failure.status, failure.body, failure.headers
                )
        auth = request.headers.get("Authorization", "")
        kind, _, credential = auth.partition(" ")
        if (template, method) in _JWT_OPERATIONS:
            issuer = self._jwt_issuer(credential) if kind == "Bearer" else None
            if issuer is None:
                body = _DEFAULT_ERRORS[401] | {"message": "A JSON web token could not be decoded"}
                return self._send(request, template, method, 401, body)
            self.used.append((request.method, request.path, f"jwt:{issuer}"))
        else:
            if kind not in ("token", "Bearer") or not self.token_valid(credential):
                return self._send(request, template, method, 401, _DEFAULT_ERRORS[401])
            self.used.append((request.method, request.path, credential))
        if "owner" in params and (params["owner"], params["repo"]) != (self.owner, self.name):
            return self._send(request, template, method, 404, _DEFAULT_ERRORS[404])
        status, payload = self._operate(request, template, method, params)
        return self._send(request, template, method, status, payload)

    def _route(self, method: str, path: str) -> tuple[str, str, dict[str, str]] | None:
        for template, op_method in self._operations():
            if op_method != method.lower():
                continue
            multi = self._multi_segment(template, op_method)

            def group(m: re.Match[str], multi: frozenset[str] = multi) -> str:
                name = m.group(1)
                return f"(?P<{name}>{'.+' if name in multi else '[^/]+'})"

            pattern = "^" + re.sub(r"\\\{(\w+)\\\}", group, re.escape(template)) + "$"
            m = re.match(pattern, path)
            if m:
                return template, op_method, m.groupdict()
        return None

    def _openapi_request(self, request: Request) -> WerkzeugOpenAPIRequest:
        """`request` for openapi-core. Its path finder takes no slash in a parameter, so a
        path with an `x-multi-segment` parameter (contents/src/a.h) is handed over already
        matched: the template as `path_pattern`, the parameters from `_route`."""
        wrapped = WerkzeugOpenAPIRequest(request)
        route = self._route(request.method, request.path)
        if route is not None and self._multi_segment(route[0], route[1]):
            wrapped = _MatchedRequest(request, route[0], route[2])
        return wrapped

    def _multi_segment(self, template: str, method: str) -> frozenset[str]:
        """The path parameters GitHub's description marks `x-multi-segment` (they may hold
        slashes: a file's path, a ref such as heads/sync/x)."""
        item = self.spec.data["paths"][template]
        params = [*item.get("parameters", []), *item[method].get("parameters", [])]
        return frozenset(
            p["name"]
            for p in map(self.spec.resolve, params)
            if p.get("in") == "path" and p.get("x-multi-segment")
        )

    def _operations(self) -> list[tuple[str, str]]:
        return [
            (template, method)
            for template, item in self.spec.data["paths"].items()
            for method in item
            if method in {"get", "post", "patch", "put", "delete"}
        ]

    # -- state ----------------------------------------------------------------------------

    def _close_merged(self) -> None:
        """Like GitHub: a pull request whose head is merged into its base is closed (merged);
        one whose head branch is gone is closed (not merged)."""
        if self.git_dir is None:
            return
        for pull in self.open_pulls():
            if not _branch_exists(self.git_dir, pull.head):
                pull.state = "closed"
                pull.closed_by = self.login
            elif _is_ancestor(self.git_dir, pull.head, pull.base):
                pull.state = "closed"
                pull.merged = True

    def _operate(
        self, request: Request, template: str, method: str, params: dict[str, str]
    ) -> tuple[int, Any]:
        self._close_merged()
        if template == "/repos/{owner}/{repo}":
            return 200, self._repository()
        if template == "/repos/{owner}/{repo}/installation":
            if self.app is None or not self.app.installed:
                return 404, _DEFAULT_ERRORS[404]
            return 200, self._installation(self.app)
        if template == "/app/installations/{installation_id}/access_tokens":
            app = self.app
            if (
                app is None
                or not app.installed
                or params["installation_id"] != str(app.installation_id)
            ):
                return 404, _DEFAULT_ERRORS[404]
            token = f"ghs_{secrets.token_urlsafe(27)}"
            expires = (self.clock() + app.token_lifetime).replace(microsecond=0)
            self.minted[token] = expires
            return 201, self._fill(
                "installation-token",
                {
                    "token": token,
                    "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "permissions": {"contents": "write", "pull_requests": "write"},
                    "repository_selection": "selected",
                },
            )
        if template == "/repos/{owner}/{repo}/pulls" and method == "get":
            pulls = list(self.pulls.values())
            state = request.args.get("state", "open")
            if state != "all":
                pulls = [p for p in pulls if p.state == state]
            head = request.args.get("head")
            if head:
                owner, _, branch = head.partition(":")
                pulls = [p for p in pulls if owner == self.owner and p.head == branch]
            base = request.args.get("base")
            if base:
                pulls = [p for p in pulls if p.base == base]
            return 200, [self._pull(p, simple=True) for p in pulls]
        if template == "/repos/{owner}/{repo}/pulls":
            data = request.get_json()
            head, base = data["head"], data["base"]
            if ":" in head:
                head = head.partition(":")[2]
            for p in self.open_pulls():
                if p.head == head and p.base == base:
                    return 422, _validation(
                        f"A pull request already exists for {self.owner}:{head}."
                    )
            if self.git_dir is not None and not _branch_exists(self.git_dir, head):
                return 422, _validation("head invalid", field_name="head")
            if self.git_dir is not None and not _branch_exists(self.git_dir, base):
                return 422, _validation("base invalid", field_name="base")
            pull = Pull(
                self._next_number, data.get("title", ""), data.get("body") or "", head, base
            )
            self._next_number += 1
            self.pulls[pull.number] = pull
            return 201, self._pull(pull)
        credential = request.headers.get("Authorization", "").partition(" ")[2]
        if template.startswith("/repos/{owner}/{repo}/releases"):
            return self._release_operation(request, template, params)
        if template == "/repos/{owner}/{repo}/contents/{path}":
            return self._contents(request, params["path"])
        if template == "/repos/{owner}/{repo}/git/matching-refs/{ref}":
            return 200, [self._git_ref(*ref) for ref in self._refs(f"refs/{params['ref']}")]
        if template == "/repos/{owner}/{repo}/issues/comments/{comment_id}":
            comment_id = int(params["comment_id"])
            found = self.pulls.get(comment_id // 100)
            index = comment_id % 100
            if found is None or not 1 <= index <= len(found.comments):
                return 404, _DEFAULT_ERRORS[404]
            found.comments[index - 1] = request.get_json()["body"]
            found.comment_edits[index] = found.comment_edits.get(index, 0) + 1
            return 200, self._comment(found, index)
        number = int(params.get("pull_number") or params.get("issue_number") or 0)
        pull_or_none = self.pulls.get(number)
        if pull_or_none is None:
            return 404, _DEFAULT_ERRORS[404]
        pull = pull_or_none
        if template.endswith("/comments"):
            if method == "post":
                pull.comments.append(request.get_json()["body"])
                pull.comment_authors.append(self.logins.get(credential, self.login))
                return 201, self._comment(pull, len(pull.comments))
            return 200, [self._comment(pull, i + 1) for i in range(len(pull.comments))]
        if template == "/repos/{owner}/{repo}/issues/{issue_number}":
            return 200, self._issue(pull)
        if template.endswith("/labels"):
            data = request.get_json()
            names = data if isinstance(data, list) else data.get("labels", [])
            for item in names:
                label = item if isinstance(item, str) else item["name"]
                if label not in pull.labels:
                    pull.labels.append(label)
            return 200, [self._label(lb) for lb in pull.labels]
        if method == "patch":
            data = request.get_json() or {}
            for key in ("title", "body", "state"):
                if key in data:
                    setattr(pull, key, data[key])
            if data.get("state") == "closed":
                pull.closed_by = self.login
            pull.updates += 1
        return 200, self._pull(pull)

    def _release_operation(
        self, request: Request, template: str, params: dict[str, str]
    ) -> tuple[int, Any]:
        """GET .../releases/tags/{tag}, POST .../releases, PATCH .../releases/{id}."""
        if template == "/repos/{owner}/{repo}/releases/tags/{tag}":
            for release in self.releases.values():
                if release.tag_name == params["tag"] and not release.draft:
                    return 200, self._release(release)
            return 404, _DEFAULT_ERRORS[404]
        data = request.get_json() or {}
        if template == "/repos/{owner}/{repo}/releases":
            tag = data["tag_name"]
            if any(r.tag_name == tag for r in self.releases.values()):
                return 422, _validation(
                    "", resource="Release", code="already_exists", field_name="tag_name"
                )
            target = data.get("target_commitish") or "main"
            if self.git_dir is not None and not self._refs(f"refs/tags/{tag}", exact=True):
                made = _git(self.git_dir, "update-ref", f"refs/tags/{tag}", target)
                if made.returncode != 0:
                    return 422, _validation(
                        "", resource="Release", code="invalid", field_name="target_commitish"
                    )
            release = Release(
                id=len(self.releases) + 1,
                tag_name=tag,
                name=data.get("name") or tag,
                body=data.get("body") or "",
                draft=bool(data.get("draft", False)),
                prerelease=bool(data.get("prerelease", False)),
                target_commitish=target,
            )
            self.releases[release.id] = release
            return 201, self._release(release)
        found = self.releases.get(int(params["release_id"]))
        if found is None:
            return 404, _DEFAULT_ERRORS[404]
        for key in ("tag_name", "name", "body", "draft", "prerelease", "target_commitish"):
            if key in data:
                setattr(found, key, data[key])
        found.updates += 1
        return 200, self._release(found)

    def _contents(self, request: Request, path: str) -> tuple[int, Any]:
        """GET .../contents/{path}: a file of the git remote at `ref` (or main)."""
        ref = request.args.get("ref") or "main"
        if self.git_dir is None:
            return 404, _DEFAULT_ERRORS[404]
        kind = _git(self.git_dir, "cat-file", "-t", f"{ref}:{path}")
        if kind.returncode != 0:
            return 404, _DEFAULT_ERRORS[404]
        if kind.stdout.strip() != b"blob":
            self.violations.append(f"fake GitHub: contents of a {kind.stdout!r} not emulated")
            return 404, _DEFAULT_ERRORS[404]
        blob = _git(self.git_dir, "rev-parse", f"{ref}:{path}").stdout.decode().strip()
        content = _git(self.git_dir, "cat-file", "blob", blob).stdout
        full = f"{self.owner}/{self.name}"
        api = self._api(f"/repos/{full}")
        html = f"https://github.example/{full}/blob/{ref}/{path}"
        return 200, self._fill(
            "content-file",
            {
                "type": "file",
                "encoding": "base64",
                "size": len(content),
                "name": path.rsplit("/", 1)[-1],
                "path": path,
                "content": base64.b64encode(content).decode(),
                "sha": blob,
                "url": f"{api}/contents/{path}?ref={ref}",
                "git_url": f"{api}/git/blobs/{blob}",
                "html_url": html,
                "download_url": f"https://raw.example/{full}/{ref}/{path}",
                "_links": {"self": f"{api}/contents/{path}", "git": None, "html": html},
            },
        )

    def _refs(self, prefix: str, *, exact: bool = False) -> list[tuple[str, str, str]]:
        """(name, object SHA, object type) of the git remote's refs starting with `prefix`
        (or named `prefix`, with `exact`)."""
        if self.git_dir is None:
            return []
        listed = _git(
            self.git_dir, "for-each-ref", "--format=%(refname) %(objectname) %(objecttype)"
        )
        refs = [tuple(line.split(" ")) for line in listed.stdout.decode().splitlines()]
        return [
            (name, sha, kind)
            for name, sha, kind in refs
            if (name == prefix if exact else name.startswith(prefix))
        ]

    def _graphql(self, request: Request) -> Response:
        """POST /graphql: only gh's `RepositoryFindRef` (see the module docstring)."""
        kind, _, credential = request.headers.get("Authorization", "").partition(" ")
        if kind not in ("token", "Bearer") or not self.token_valid(credential):
            return Response(
                json.dumps(_DEFAULT_ERRORS[401]), status=401, mimetype="application/json"
            )
        data = request.get_json(silent=True) or {}
        query = re.sub(r"\s+", "", str(data.get("query", "")))
        variables = data.get("variables") or {}
        find_ref = re.fullmatch(
            r"queryRepositoryFindRef\(([^)]*)\)"
            r"\{repository\(owner:\$owner,name:\$name\)\{ref\(qualifiedName:\$tagName\)\{id\}\}\}",
            query,
        )
        if find_ref is None or set(variables) != {"owner", "name", "tagName"}:
            self.violations.append(f"fake GitHub: GraphQL query not emulated: {query[:200]}")
            body: dict[str, Any] = {"errors": [{"message": "fake GitHub: query not emulated"}]}
            return Response(json.dumps(body), status=200, mimetype="application/json")
        self.graphql.append(("RepositoryFindRef", dict(variables)))
        self.used.append(("POST", "/graphql", credential))
        if (variables["owner"], variables["name"]) != (self.owner, self.name):
            body = {
                "data": {"repository": None},
                "errors": [
                    {
                        "type": "NOT_FOUND",
                        "path": ["repository"],
                        "message": "Could not resolve to a Repository with the name "
                        f"'{variables['owner']}/{variables['name']}'.",
                    }
                ],
            }
            return Response(json.dumps(body), status=200, mimetype="application/json")
        found = self._refs(str(variables["tagName"]), exact=True)
        ref = {"id": f"REF_{found[0][1][:12]}"} if found else None
        body = {"data": {"repository": {"ref": ref}}}
        return Response(json.dumps(body), status=200, mimetype="application/json")

    def _jwt_issuer(self, token: str) -> str | None:
        """The `iss` of a JWT the App signed and GitHub would take now (None: refused)."""
        app = self.app
        if app is None:
            return None
        try:
            claims = jwt.decode(
                token,
                app.public_key,
                algorithms=["RS256"],
                options={"require": ["iat", "exp", "iss"], "verify_iss": False},
            )
        except jwt.PyJWTError:
            return None
        issuer = str(claims["iss"])
        if issuer not in (str(app.app_id), app.client_id):
            return None
        if int(claims["exp"]) > time.time() + 600 + 5:  # "no more than 10 minutes" ahead
            return None
        return issuer

    # -- response objects -----------------------------------------------------------------

    def _installation(self, app: FakeApp) -> dict[str, Any]:
        """GET /repos/{o}/{r}/installation: the App's installation on the repository."""
        return self._fill(
            "installation",
            {
                "id": app.installation_id,
                "app_id": app.app_id,
                "app_slug": "executorch-arduino-sync",
                "client_id": app.client_id,
                "target_id": 1,
                "target_type": "Organization",
                "account": self._user(self.owner),
                "repository_selection": "selected",
                "access_tokens_url": self._api(
                    f"/app/installations/{app.installation_id}/access_tokens"
                ),
                "repositories_url": self._api("/installation/repositories"),
                "html_url": f"https://github.example/settings/installations/{app.installation_id}",
                "permissions": {"contents": "write", "pull_requests": "write"},
                "events": [],
                "created_at": _NOW,
                "updated_at": _NOW,
                "single_file_name": None,
                "suspended_by": None,
                "suspended_at": None,
            },
        )

    def _api(self, path: str) -> str:
        return f"{self.url}{path}"

    def _user(self, login: str) -> dict[str, Any]:
        return self._fill(
            "simple-user",
            {
                "login": login,
                "id": 1,
                "type": "Organization",
                "url": self._api(f"/users/{login}"),
                "html_url": f"https://github.example/{login}",
                "site_admin": False,
            },
        )

    def _repo_fields(self) -> dict[str, Any]:
        full = f"{self.owner}/{self.name}"
        return {
            "id": 42,
            "name": self.name,
            "full_name": full,
            "owner": self._user(self.owner),
            "private": False,
            "fork": False,
            "url": self._api(f"/repos/{full}"),
            "html_url": f"https://github.example/{full}",
            "clone_url": f"https://github.example/{full}.git",
            "default_branch": "main",
            "permissions": {
                "admin": False,
                "maintain": False,
                "push": self.can_push,
                "triage": self.can_push,
                "pull": True,
            },
        }

    def _repository(self) -> dict[str, Any]:
        return self._fill("full-repository", self._repo_fields())

    def _label(self, name: str) -> dict[str, Any]:
        full = f"{self.owner}/{self.name}"
        return self._fill(
            "label",
            {
                "id": sum(map(ord, name)),
                "name": name,
                "url": self._api(f"/repos/{full}/labels/{name}"),
                "color": "ededed",
                "default": False,
                "description": "pull requests opened by the sync bot",
            },
        )

    def _pull(self, pull: Pull, *, simple: bool = False) -> dict[str, Any]:
        full = f"{self.owner}/{self.name}"
        api = self._api(f"/repos/{full}")
        repo = self._fill("repository", self._repo_fields())

        def end(ref: str) -> dict[str, Any]:
            return {
                "label": f"{self.owner}:{ref}",
                "ref": ref,
                "sha": "0" * 40,
                "repo": repo,
                "user": self._user(self.owner),
            }

        fields = {
            "id": 1000 + pull.number,
            "number": pull.number,
            "state": pull.state,
            "locked": False,
            "title": pull.title,
            "body": pull.body,
            "url": f"{api}/pulls/{pull.number}",
            "html_url": f"https://github.example/{full}/pull/{pull.number}",
            "issue_url": f"{api}/issues/{pull.number}",
            "labels": [self._label(lb) for lb in pull.labels],
            "head": end(pull.head),
            "base": end(pull.base),
            "user": self._user("executorch-arduino-bot"),
            "created_at": _NOW,
            "updated_at": _NOW,
            "closed_at": _NOW if pull.state == "closed" else None,
            "merged_at": _NOW if pull.merged else None,
            "merge_commit_sha": None,
            "assignee": None,
            "milestone": None,
            "auto_merge": None,
            "draft": False,
            "author_association": "CONTRIBUTOR",
        }
        if not simple:
            fields |= {"merged": pull.merged, "mergeable": None, "merged_by": None}
        return self._fill("pull-request-simple" if simple else "pull-request", fields)

    def _issue(self, pull: Pull) -> dict[str, Any]:
        """The issue side of a pull request (GET .../issues/{n})."""
        full = f"{self.owner}/{self.name}"
        api = self._api(f"/repos/{full}")
        return self._fill(
            "issue",
            {
                "id": 2000 + pull.number,
                "number": pull.number,
                "state": pull.state,
                "title": pull.title,
                "body": pull.body,
                "url": f"{api}/issues/{pull.number}",
                "html_url": f"https://github.example/{full}/pull/{pull.number}",
                "repository_url": api,
                "labels": [self._label(lb) for lb in pull.labels],
                "user": self._user("executorch-arduino-bot"),
                "comments": len(pull.comments),
                "created_at": _NOW,
                "updated_at": _NOW,
                "closed_at": _NOW if pull.state == "closed" else None,
                "closed_by": self._user(pull.closed_by) if pull.closed_by else None,
                "assignee": None,
                "milestone": None,
                "locked": False,
                "pull_request": {
                    "url": f"{api}/pulls/{pull.number}",
                    "html_url": f"https://github.example/{full}/pull/{pull.number}",
                    "diff_url": f"https://github.example/{full}/pull/{pull.number}.diff",
                    "patch_url": f"https://github.example/{full}/pull/{pull.number}.patch",
                    "merged_at": _NOW if pull.merged else None,
                },
            },
        )

    def _release(self, release: Release) -> dict[str, Any]:
        """A GitHub Release as the releases endpoints answer it."""
        full = f"{self.owner}/{self.name}"
        api = self._api(f"/repos/{full}/releases/{release.id}")
        return self._fill(
            "release",
            {
                "id": release.id,
                "node_id": f"RE_{release.id}",
                "tag_name": release.tag_name,
                "name": release.name,
                "body": release.body,
                "draft": release.draft,
                "prerelease": release.prerelease,
                "target_commitish": release.target_commitish,
                "url": api,
                "html_url": f"https://github.example/{full}/releases/tag/{release.tag_name}",
                "assets_url": f"{api}/assets",
                "upload_url": f"https://uploads.github.example/repos/{full}/releases/"
                f"{release.id}/assets{{?name,label}}",
                "tarball_url": self._api(f"/repos/{full}/tarball/{release.tag_name}"),
                "zipball_url": self._api(f"/repos/{full}/zipball/{release.tag_name}"),
                "created_at": _NOW,
                "published_at": None if release.draft else _NOW,
                "author": self._user(self.login),
                "assets": [],
            },
        )

    def _git_ref(self, name: str, sha: str, kind: str) -> dict[str, Any]:
        """A ref as the git refs endpoints answer it."""
        api = self._api(f"/repos/{self.owner}/{self.name}/git")
        plural = {"commit": "commits", "tag": "tags"}.get(kind, f"{kind}s")
        return self._fill(
            "git-ref",
            {
                "ref": name,
                "node_id": f"REF_{sha[:12]}",
                "url": f"{api}/{name}",
                "object": {"type": kind, "sha": sha, "url": f"{api}/{plural}/{sha}"},
            },
        )

    def _comment(self, pull: Pull, index: int) -> dict[str, Any]:
        """Comment number `index` (from 1) of a pull request."""
        full = f"{self.owner}/{self.name}"
        api = self._api(f"/repos/{full}")
        comment_id = 100 * pull.number + index
        return self._fill(
            "issue-comment",
            {
                "id": comment_id,
                "body": pull.comments[index - 1],
                "url": f"{api}/issues/comments/{comment_id}",
                "html_url": f"https://github.example/{full}/pull/{pull.number}"
                f"#issuecomment-{comment_id}",
                "issue_url": f"{api}/issues/{pull.number}",
                "user": self._user(
                    pull.comment_authors[index - 1]
                    if index <= len(pull.comment_authors)
                    else self.login
                ),
                "created_at": _NOW,
                "updated_at": _NOW,
                "author_association": "CONTRIBUTOR",
            },
        )

    def _fill(self, schema_name: str, fields: dict[str, Any]) -> dict[str, Any]:
        value = _fill(self.spec, self.spec.schema(schema_name), f"{self.url}/x")
        assert isinstance(value, dict)
        return value | fields

    # -- sending --------------------------------------------------------------------------

    def _error(self, template: str | None, status: int) -> Response:
        return Response(
            json.dumps(_DEFAULT_ERRORS[status]), status=status, mimetype="application/json"
        )

    def _send(
        self,
        request: Request,
        template: str,
        method: str,
        status: int,
        payload: Any,
        headers: dict[str, str] | None = None,
    ) -> Response:
        if self.tamper is not None:
            payload = self.tamper(method, template, payload)
        response = Response(json.dumps(payload), status=status, mimetype="application/json")
        response.headers["X-GitHub-Media-Type"] = "github.v3; format=json"
        for key, value in (headers or {}).items():
            response.headers[key] = value
        documented = self.spec.operation(template, method)["responses"]
        where = f"response {status} to {request.method} {request.path}"
        if str(status) in documented or "default" in documented:
            try:
                self.spec.api.validate_response(
                    self._openapi_request(request), WerkzeugOpenAPIResponse(response)
                )
            except Exception as e:
                self.violations.append(f"{where}: {_why(e)}")
        elif status < 400:
            self.violations.append(f"{where}: status not in GitHub's description")
        else:
            name = "validation-error" if status == 422 else "basic-error"
            errors = list(OAS30Validator(self.spec.schema(name)).iter_errors(payload))
            if errors:
                self.violations.append(f"{where}: {name}: {errors[0].message}")
        raw = "raw" in request.headers.get("Accept", "")
        if raw and status == 200 and template == "/repos/{owner}/{repo}/contents/{path}":
            # validated as JSON above; sent as the file's bytes (the raw media type)
            response = Response(
                base64.b64decode(payload["content"]), status=200, mimetype="text/plain"
            )
            response.headers["X-GitHub-Media-Type"] = "github.v3; param=raw"
        return response


class _MatchedRequest(WerkzeugOpenAPIRequest):
    """A request whose path template and parameters are known (openapi-core's protocol
    `SupportsPathPattern`, as its Flask and Django adapters use)."""

    def __init__(self, request: Request, template: str, params: dict[str, str]) -> None:
        super().__init__(request)
        self._template = template
        self.parameters = RequestParameters(
            path=params,
            query=ImmutableMultiDict(request.args),
            header=Headers(request.headers),
            cookie=request.cookies,
        )

    @property
    def path_pattern(self) -> str:
        return self._template


def _validation(
    message: str,
    field_name: str | None = None,
    *,
    resource: str = "PullRequest",
    code: str = "invalid",
) -> dict[str, Any]:
    error: dict[str, Any] = {"resource": resource, "code": "custom", "message": message}
    if field_name:
        error = {"resource": resource, "code": code, "field": field_name}
    page = {
        "PullRequest": "pulls/pulls#create-a-pull-request",
        "Release": "releases/releases#create-a-release",
    }[resource]
    return {
        "message": "Validation Failed",
        "errors": [error],
        "documentation_url": f"{DOCS}/{page}",
        "status": "422",
    }


def _git(git_dir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """`git --git-dir GIT_DIR ARGS` (output captured, not checked)."""
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), *args], capture_output=True, check=False
    )


def _branch_exists(git_dir: Path, branch: str) -> bool:
    result = subprocess.run(
        [
            "git",
            "--git-dir",
            str(git_dir),
            "rev-parse",
            "--verify",
            "--quiet",
            f"refs/heads/{branch}",
        ],
        capture_output=True,
        check=False,
    )
    return result.returncode == 0


def _is_ancestor(git_dir: Path, head: str, base: str) -> bool:
    result = subprocess.run(
        [
            "git",
            "--git-dir",
            str(git_dir),
            "merge-base",
            "--is-ancestor",
            f"refs/heads/{head}",
            f"refs/heads/{base}",
        ],
        capture_output=True,
        check=False,
    )
    return result.returncode == 0


def _why(error: Exception) -> str:
    """The schema errors behind an openapi-core exception (path in the document: message)."""
    details: list[str] = []
    current: BaseException | None = error
    while current is not None:
        for sub in getattr(current, "schema_errors", None) or []:
            details.append(f"at {list(sub.absolute_path)}: {sub.message}"[:300])
        current = current.__cause__ or current.__context__
    head = type(error).__name__
    if not details:
        details.append(str(error)[:500])
    return f"{head}: " + "; ".join(details)


def _fill(spec: GitHubSpec, schema: dict[str, Any], url: str, depth: int = 0) -> Any:
    """A neutral instance of `schema`: required properties only, simplest valid values."""
    schema = spec.resolve(schema)
    if "allOf" in schema:
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            value = _fill(spec, part, url, depth + 1)
            if isinstance(value, dict):
                merged |= value
        return merged
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return _fill(spec, schema[key][0], url, depth + 1)
    if schema.get("nullable") and depth > 0:
        return None
    if "enum" in schema:
        return next((v for v in schema["enum"] if v is not None), None)
    kind = schema.get("type", "object")
    if kind == "object":
        props = schema.get("properties", {})
        return {
            name: _fill(spec, props[name], url, depth + 1)
            for name in schema.get("required", [])
            if name in props
        }
    if kind == "array":
        return []
    if kind == "integer":
        return max(0, int(schema.get("minimum", 0)))
    if kind == "number":
        return 0
    if kind == "boolean":
        return False
    fmt = schema.get("format")
    if fmt == "date-time":
        return _NOW
    if fmt in ("uri", "uri-template", "url"):
        return url
    if fmt == "email":
        return "bot@example.com"
    return ""
