"""A WSGI app served on a free loopback port for the duration of a `with` block."""

from __future__ import annotations

import threading
from typing import Any, Self

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server


class _QuietHandler(WSGIRequestHandler):
    """No access log on stderr (tests read stderr)."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


class LocalServer:
    """Base of the test servers: `with` starts `self._wsgi` on 127.0.0.1:<free port>.

    Attributes:
        url: http://127.0.0.1:PORT while the server runs.
    """

    def __init__(self) -> None:
        self.url = ""
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None

    def _wsgi(self, environ: dict[str, Any], start_response: Any) -> Any:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self._server = make_server(
            "127.0.0.1", 0, self._wsgi, threaded=True, request_handler=_QuietHandler
        )
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join()
