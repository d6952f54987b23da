"""GitHub's published OpenAPI description, pruned to the operations the sync bot and the
library repo's workflows use.

Source: the npm package `@octokit/openapi` (pinned in package.json; install with
`npm ci --ignore-scripts --no-audit --no-fund` at the repo root), file
`generated/api.github.com.json` (OpenAPI 3.0). The full description is 13 MB with ~800 paths;
we load it once per test session, keep only `OPERATIONS` and the components they reference
(transitively), and build one `openapi_core.OpenAPI` from that.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openapi_core import OpenAPI

REPO_ROOT = Path(__file__).resolve().parents[3]
PACKAGE_DIR = REPO_ROOT / "node_modules" / "@octokit" / "openapi"
SPEC_FILE = PACKAGE_DIR / "generated" / "api.github.com.json"
INSTALL_HINT = "npm ci --ignore-scripts --no-audit --no-fund (at the repo root)"

#: (path template, method) of every REST operation the fake serves: the sync bot's (through
#: PyGithub) and the workflows' (through `gh`).
OPERATIONS: tuple[tuple[str, str], ...] = (
    ("/repos/{owner}/{repo}", "get"),
    ("/repos/{owner}/{repo}/pulls", "get"),
    ("/repos/{owner}/{repo}/pulls", "post"),
    ("/repos/{owner}/{repo}/pulls/{pull_number}", "get"),
    ("/repos/{owner}/{repo}/pulls/{pull_number}", "patch"),
    ("/repos/{owner}/{repo}/issues/{issue_number}/labels", "post"),
    ("/repos/{owner}/{repo}/issues/{issue_number}", "get"),
    ("/repos/{owner}/{repo}/issues/{issue_number}/comments", "get"),
    ("/repos/{owner}/{repo}/issues/{issue_number}/comments", "post"),
    # a GitHub App's (`--app-id`): find its installation on the repo, mint a token (with a JWT)
    ("/repos/{owner}/{repo}/installation", "get"),
    ("/app/installations/{installation_id}/access_tokens", "post"),
    # the library repo's workflows, through `gh` (tests/rehearsal/workflow_rehearsal.py): ci.yml
    # edits
    # its size comment; release.yml views, creates or edits the GitHub Release; sync.yml's
    # schedule reads main's files and lists the sync branches of a release
    ("/repos/{owner}/{repo}/issues/comments/{comment_id}", "patch"),
    ("/repos/{owner}/{repo}/releases/tags/{tag}", "get"),
    ("/repos/{owner}/{repo}/releases", "post"),
    ("/repos/{owner}/{repo}/releases/{release_id}", "patch"),
    ("/repos/{owner}/{repo}/contents/{path}", "get"),
    ("/repos/{owner}/{repo}/git/matching-refs/{ref}", "get"),
)
#: Error shapes GitHub sends for statuses an operation does not document (401, 429, 5xx ...).
GENERIC_ERROR_SCHEMAS = ("basic-error", "validation-error")

_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
_REF = re.compile(r"^#/components/([^/]+)/(.+)$")


def missing_reason() -> str | None:
    """Why the description is unavailable (a pytest skip reason), or None if it is there."""
    if not SPEC_FILE.is_file():
        return f"GitHub's OpenAPI description is not installed ({SPEC_FILE}); run {INSTALL_HINT}"
    return None


def _refs(node: Any) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str):
                m = _REF.match(ref)
                if m:
                    found.add((m.group(1), m.group(2)))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def prune(full: dict[str, Any], operations: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """A copy of `full` with only `operations` and the components they need.

    Also keeps `GENERIC_ERROR_SCHEMAS`; drops webhooks and tags.
    """
    paths: dict[str, Any] = {}
    for template, method in operations:
        item = full["paths"][template]
        kept = paths.setdefault(template, {k: v for k, v in item.items() if k not in _METHODS})
        kept[method] = item[method]
    wanted = _refs(paths) | {("schemas", name) for name in GENERIC_ERROR_SCHEMAS}
    components: dict[str, dict[str, Any]] = {}
    todo = list(wanted)
    while todo:
        kind, name = todo.pop()
        if name in components.get(kind, {}):
            continue
        value = full["components"][kind][name]
        components.setdefault(kind, {})[name] = value
        todo.extend(_refs(value))
    return {
        "openapi": full["openapi"],
        "info": full["info"],
        # relative, so the local server (any host and port) matches
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": components,
    }


@dataclass(frozen=True)
class GitHubSpec:
    """The pruned description as a dict and as an openapi-core `OpenAPI`."""

    data: dict[str, Any]
    api: OpenAPI
    version: str

    def operation(self, template: str, method: str) -> dict[str, Any]:
        op: dict[str, Any] = self.data["paths"][template][method]
        return op

    def schema(self, name: str) -> dict[str, Any]:
        schema: dict[str, Any] = self.data["components"]["schemas"][name]
        return schema

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        """Follow `$ref`s (components only) until a concrete object."""
        while "$ref" in node:
            m = _REF.match(node["$ref"])
            assert m, node["$ref"]
            node = self.data["components"][m.group(1)][m.group(2)]
        return node


@functools.cache
def load() -> GitHubSpec:
    """Load, prune and compile the description (once per process).

    Raises:
        FileNotFoundError: the npm package is not installed (see `missing_reason`).
    """
    full = json.loads(SPEC_FILE.read_text())
    version = json.loads((PACKAGE_DIR / "package.json").read_text())["version"]
    data = prune(full, OPERATIONS)
    del full
    return GitHubSpec(data, OpenAPI.from_dict(data), str(version))
