"""Issue 29, the third pass over sync's GitHub answers: pagination links that leave the
configured API (another host, another port, plain http), a loop of two pages, a huge page,
a body that is not JSON, and refusals with Retry-After. The token must reach no server but the
`--api-url` one; every answer ends in one message, never a traceback or a hang.

The hostile API is a small WSGI server (`_Hostile`): it answers the repository, then the pull
requests' listing as each test says; `_Witness` is another server that records every
Authorization header it is sent.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from github_fake.local_server import LocalServer
from werkzeug.wrappers import Request, Response

from generator.sync.github import GitHubRepo
from generator.util.errors import FatalError

TOKEN = "ghp_HostileApiTest0123456789abcdefABCD"
ROOT = Path(__file__).resolve().parents[3]

Page = Callable[[Request, str], Response]


class _Witness(LocalServer):
    """Records the Authorization header of every request; answers an empty listing."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def _wsgi(self, environ: dict[str, Any], start_response: Any) -> Any:
        self.seen.append(Request(environ).headers.get("Authorization", ""))
        return Response("[]", content_type="application/json")(environ, start_response)


class _Hostile(LocalServer):
    """The repository, then `page(request, own_url)` for every other request."""

    def __init__(self, page: Page) -> None:
        super().__init__()
        self.page = page
        self.requests = 0

    def _wsgi(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        self.requests += 1
        if request.path == "/repos/acme/lib":
            body: Any = {"full_name": "acme/lib", "name": "lib", "owner": {"login": "acme"}}
            response = Response(json.dumps(body), content_type="application/json")
        else:
            response = self.page(request, self.url)
        return response(environ, start_response)


def _pull(number: int) -> dict[str, Any]:
    return {"number": number, "state": "open", "head": {"ref": "other", "sha": "0" * 40}}


def _next_to(target: str) -> Page:
    def page(request: Request, url: str) -> Response:
        response = Response(json.dumps([_pull(1)]), content_type="application/json")
        response.headers["Link"] = f'<{target}/repos/acme/lib/pulls?page=2>; rel="next"'
        return response

    return page


def _find(api: str) -> Any:
    gh = GitHubRepo(api, "acme/lib", TOKEN, throttle=False, sleep=lambda s: None)
    return gh.find_open_pull("sync/x", "main")


@pytest.mark.parametrize(
    "where", ["localhost", "other-port", "127.0.0.2"], ids=["host", "port", "loopback-host"]
)
def test_a_next_link_off_the_api_gets_no_token_and_is_a_message(where: str) -> None:
    """A `rel="next"` link to a server other than --api-url's (another host name for the
    same machine, another port, another loopback address): sync must not send it the token,
    and must say so in one message."""
    with _Witness() as witness:
        port = witness.url.rsplit(":", 1)[1]
        target = {
            "localhost": f"http://localhost:{port}",
            "other-port": witness.url,
            "127.0.0.2": f"http://127.0.0.2:{port}",
        }[where]
        refused = pytest.raises(FatalError, match="could not list the open pull requests")
        with _Hostile(_next_to(target)) as api, refused as e:
            _find(api.url)
        assert witness.seen == [], witness.seen
    assert TOKEN not in str(e.value)


#: Runs `_find` against a `_Hostile` API whose next link points at a `_Witness`, then prints
#: what the witness saw (a JSON list) as the last line.
OPTIMIZED = f"""
import json, sys
sys.path[:0] = [{str(ROOT / "tests" / "support")!r}, {str(Path(__file__).parent)!r}]
import test_sync_github_hostile as t
with t._Witness() as w:
    with t._Hostile(t._next_to("http://localhost:" + w.url.rsplit(":", 1)[1])) as api:
        try:
            t._find(api.url)
        except Exception as e:
            print(type(e).__name__, e)
print(json.dumps(w.seen))
"""


def test_under_python_O_a_next_link_off_the_api_still_gets_no_token() -> None:
    """MEDIUM where it applies (the token to a server of the answer's choosing). PyGithub's
    only guard against a URL of an answer on another host is an `assert`
    (`Requester.__assertUrlAllowed`); under `python -O`, or with PYTHONOPTIMIZE set in the
    environment, it is gone, and `_Checked*Connection` allowed any https host and any
    loopback one: the next link's server received `Authorization: token ...`. Fix: the
    connections are bound to --api-url's origin."""
    done = subprocess.run(
        [sys.executable, "-O", "-c", OPTIMIZED],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    *said, seen = done.stdout.strip().splitlines()
    assert json.loads(seen) == [], "the token went to the next link's server"
    assert said and said[0].startswith("FatalError GitHub's answer points sync at http://localhost")


def _two_pages(request: Request, url: str) -> Response:
    """Page 1 links to page 2, page 2 back to page 1."""
    page = int(request.args.get("page", "1"))
    response = Response(json.dumps([_pull(page)]), content_type="application/json")
    other = 2 if page == 1 else 1
    response.headers["Link"] = f'<{url}/repos/acme/lib/pulls?page={other}>; rel="next"'
    return response


def test_a_loop_of_two_pages_is_refused_naming_the_url() -> None:
    """Holds: `every_page` sees the repeated URL."""
    with _Hostile(_two_pages) as api:
        with pytest.raises(FatalError, match=r"repeats a page: .*/pulls\?page=2, fetched already"):
            _find(api.url)
        assert api.requests == 1 + 3  # the repository, pages 1, 2 and 1


@pytest.mark.parametrize(
    ("body", "kind", "said"),
    [
        ("<html><title>Sign in</title></html>", "text/html", "unexpected answer|not JSON|HTML"),
        ("not json at all", "application/json", "unexpected answer|not JSON"),
        ('{"message": "no list"}', "application/json", "unexpected answer"),
    ],
    ids=["html", "garbage", "object"],
)
def test_a_listing_that_is_not_a_json_list_is_a_message(body: str, kind: str, said: str) -> None:
    """Holds: a 200 whose body is HTML, not JSON, or not a list ends in one message."""
    page = _Hostile(lambda request, url: Response(body, content_type=kind))
    with page as api, pytest.raises(FatalError, match=said):
        _find(api.url)


def test_a_huge_page_is_read_and_its_pulls_are_bounded_by_the_page() -> None:
    """Holds, within limits: one page of 100,000 pull requests (8 MB of JSON) is read whole
    (PyGithub reads an answer without a size limit; GitHub's pages hold at most 100 items)
    and sync finds nothing of its branch in it, in one pass."""
    pulls = json.dumps([_pull(n) for n in range(100_000)])
    with _Hostile(lambda request, url: Response(pulls, content_type="application/json")) as api:
        assert _find(api.url) is None


@pytest.mark.parametrize(
    ("status", "headers", "said"),
    [
        (403, {"Retry-After": "3600"}, "rate limit|wait"),
        (429, {"Retry-After": "3600"}, "rate limit|wait"),
        (503, {"Retry-After": "3600"}, "rate limit|wait|kept failing"),
        (403, {"Retry-After": "-5"}, "Invalid Retry-After header: -5"),
        (429, {"Retry-After": "soon"}, "Invalid Retry-After header: soon"),
    ],
    ids=["403-long", "429-long", "503-long", "403-negative", "429-not-a-number"],
)
def test_a_refusal_with_retry_after_is_a_message_without_a_long_sleep(
    status: int, headers: dict[str, str], said: str
) -> None:
    """Holds: a Retry-After longer than the longest wait gives up at once; a negative or
    non-numeric one is refused by urllib3 (`InvalidHeader`), named in one message."""
    slept: list[float] = []

    def refuse(request: Request, url: str) -> Response:
        body = json.dumps({"message": "API rate limit exceeded", "documentation_url": "x"})
        return Response(body, status=status, headers=headers, content_type="application/json")

    with _Hostile(refuse) as api:
        gh = GitHubRepo(api.url, "acme/lib", TOKEN, throttle=False, sleep=slept.append)
        with pytest.raises(FatalError, match=said):
            gh.find_open_pull("sync/x", "main")
    assert sum(slept) <= 120 * 5, slept


def test_an_https_api_url_in_capitals_connects_over_https_to_its_origin() -> None:
    # check_api_url accepts `HTTPS://`; the connection class chosen from it was the plain
    # http one, which the token rule then refused as plain http.
    from generator.sync import github_transport

    gh = GitHubRepo("HTTPS://API.github.com", "acme/lib", TOKEN, throttle=False)
    chosen: Any = vars(gh._github.requester)["_Requester__connectionClass"]
    assert issubclass(chosen, github_transport._CheckedHTTPSConnection)
    assert chosen.origin == ("https", "api.github.com", 443)


def test_an_https_api_url_on_an_ipv6_address_is_its_own_origin() -> None:
    # The connection is given the address without brackets: the URL checked is bracketed
    # again, or the token rule finds no host in it.
    from generator.sync import github_transport

    github_transport._check_connection("https", "::1", 8443, ("https", "::1", 8443))
    with pytest.raises(FatalError, match=r"points sync at https://\[::1\]:8444"):
        github_transport._check_connection("https", "::1", 8444, ("https", "::1", 8443))
