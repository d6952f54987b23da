"""A git remote over smart HTTP that demands a token, like github.com: `git http-backend`
(git's own CGI server) behind HTTP Basic authentication.

It lets the tests see how sync hands the token to git: the server records the credentials it
was offered, and the tests check that no credential helper stored them.
"""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from werkzeug.wrappers import Request, Response

from .local_server import LocalServer


class GitHttpRemote(LocalServer):
    """Serves every bare repo under `root` at http://127.0.0.1:PORT/<name>.git.

    Args:
        root: folder holding bare repositories.
        token: the password (any user name) a request must carry; others get 401.
        accept: instead of `token`, which passwords pass (e.g. `FakeGitHub.token_valid`: a
            GitHub App's installation tokens until they expire, as github.com's git side).
    Attributes:
        offered: (user, password) of every request that carried credentials.
    """

    def __init__(
        self, root: Path, token: str, *, accept: Callable[[str], bool] | None = None
    ) -> None:
        super().__init__()
        self.root = root
        self.token = token
        self.accept = accept
        self.offered: list[tuple[str, str]] = []

    def _wsgi(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        response = self._handle(request)
        return response(environ, start_response)

    def _handle(self, request: Request) -> Response:
        auth = request.headers.get("Authorization", "")
        user = password = ""
        if auth.startswith("Basic "):
            user, _, password = base64.b64decode(auth[6:]).decode().partition(":")
            self.offered.append((user, password))
        valid = self.accept(password) if self.accept is not None else password == self.token
        if not valid:
            return Response(
                "Authentication required\n",
                status=401,
                headers={"WWW-Authenticate": 'Basic realm="fake GitHub"'},
            )
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "REQUEST_METHOD": request.method,
            "PATH_INFO": request.path,
            "QUERY_STRING": request.query_string.decode(),
            "CONTENT_TYPE": request.headers.get("Content-Type", ""),
            "REMOTE_USER": user,
            "REMOTE_ADDR": "127.0.0.1",
        }
        if request.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = request.headers["Content-Encoding"]
        if request.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = request.headers["Git-Protocol"]
        body = request.get_data()
        env["CONTENT_LENGTH"] = str(len(body))
        result = subprocess.run(
            ["git", "http-backend"], input=body, env=env, capture_output=True, check=False
        )
        head, _, payload = result.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = result.stdout.partition(b"\n\n")
        status = 200
        headers: dict[str, str] = {}
        for line in head.decode(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.strip().split()[0])
            elif key:
                headers[key.strip()] = value.strip()
        return Response(payload, status=status, headers=headers)
