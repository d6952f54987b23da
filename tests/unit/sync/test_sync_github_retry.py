"""GitHubRepo's retries (PyGithub's GithubRetry and what `SyncRetry` adds), against the fake GitHub:
rate limits it waits out, one it gives up on, and POSTs retried only after a look."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from github_fake import FakeGitHub, GitHubSpec
from urllib3.exceptions import ProtocolError, ReadTimeoutError

from generator.sync.github import GitHubRepo
from generator.sync.github_transport import SyncRetry
from generator.util.errors import FatalError

TOKEN = "ghp_FakeServerRetry"
REPO = "/repos/acme/lib$"
PULLS = "/repos/acme/lib/pulls$"
SECONDARY = {
    "message": "You have exceeded a secondary rate limit. Please wait a few minutes before "
    "you try again.",
    "documentation_url": "https://docs.github.com/rest",
}


@pytest.fixture
def fake(spec: GitHubSpec) -> Iterator[FakeGitHub]:
    with FakeGitHub(spec, "acme", "lib", TOKEN) as server:
        yield server
        server.assert_clean()


def repo(fake: FakeGitHub, waits: list[float], **options: Any) -> GitHubRepo:
    return GitHubRepo(fake.url, "acme/lib", TOKEN, throttle=False, sleep=waits.append, **options)


def sent(fake: FakeGitHub, method: str, path: str) -> int:
    return sum(1 for r in fake.requests if r[0] == method and r[1].endswith(path))


# -- rate limits ------------------------------------------------------------------------------


def test_secondary_limit_without_headers_waits_a_minute_and_keeps_its_message(
    fake: FakeGitHub,
) -> None:
    fake.fail("GET", REPO, 403, times=99, body=SECONDARY)
    waits: list[float] = []
    with pytest.raises(FatalError) as info:
        repo(fake, waits, max_wait=600).preflight()
    assert waits == [60.0, 60.0, 60.0, 60.0]
    assert "answered 403: You have exceeded a secondary rate limit" in str(info.value)
    assert "rate limit did not clear in time" in str(info.value)


def test_primary_limit_as_429_waits_until_the_reset(fake: FakeGitHub) -> None:
    reset = int(time.time()) + 30
    fake.fail(
        "GET",
        REPO,
        429,
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)},
        body={"message": "API rate limit exceeded", "documentation_url": "x"},
    )
    waits: list[float] = []
    assert repo(fake, waits).preflight().can_push is True
    assert len(waits) == 1 and 25 <= waits[0] <= 32


def test_429_without_headers_waits_a_minute(fake: FakeGitHub) -> None:
    fake.fail("GET", REPO, 429)
    waits: list[float] = []
    assert repo(fake, waits).preflight().can_push is True
    assert waits == [60.0]


def test_429_without_headers_gives_up_at_once_when_a_minute_is_too_long(
    fake: FakeGitHub,
) -> None:
    fake.fail("GET", REPO, 429)
    waits: list[float] = []
    with pytest.raises(FatalError, match="asks to wait 60 s, more than the 30 s sync waits"):
        repo(fake, waits, max_wait=30).preflight()
    assert waits == [] and sent(fake, "GET", "/repos/acme/lib") == 1


def test_retry_after_on_a_5xx_is_honoured(fake: FakeGitHub) -> None:
    fake.fail("GET", REPO, 503, headers={"Retry-After": "5"})
    waits: list[float] = []
    repo(fake, waits).preflight()
    assert waits == [5.0]


def test_a_post_is_retried_on_a_rate_limit(fake: FakeGitHub) -> None:
    fake.fail("POST", PULLS, 403, headers={"Retry-After": "2"}, body=SECONDARY)
    waits: list[float] = []
    assert repo(fake, waits).open_or_update("sync/x", "main", "t", "b").created
    assert waits == [2.0] and sent(fake, "POST", "/pulls") == 2 and len(fake.pulls) == 1


# -- a POST that failed may have taken effect ---------------------------------------------------


def test_a_pull_request_created_despite_a_502_is_found_not_opened_again(fake: FakeGitHub) -> None:
    waits: list[float] = []
    gh = repo(fake, waits)
    gh.open_or_update("sync/x", "main", "t", "b")
    listings = 0

    def hide_first_listing(method: str, template: str, payload: Any) -> Any:
        # the first look sees no pull request: as if the POST below is what creates it
        nonlocal listings
        if template == "/repos/{owner}/{repo}/pulls" and method == "get":
            listings += 1
            return [] if listings == 1 else payload
        return payload

    fake.tamper = hide_first_listing
    fake.fail("POST", PULLS, 502)
    result = gh.open_or_update("sync/x", "main", "t", "b")
    assert result.number == 1 and list(fake.pulls) == [1]
    assert sent(fake, "POST", "/pulls") == 2  # the first open, then the one that failed
    assert waits == [1.0]


def test_a_post_that_keeps_failing_is_tried_attempts_times_looking_each_time(
    fake: FakeGitHub,
) -> None:
    fake.fail("POST", PULLS, 502, times=99)
    waits: list[float] = []
    with pytest.raises(FatalError, match=r"answered 502: Server Error\n.*5 tries"):
        repo(fake, waits).open_or_update("sync/x", "main", "t", "b")
    assert waits == [1.0, 2.0, 4.0, 8.0]
    assert sent(fake, "POST", "/pulls") == 5
    assert sent(fake, "GET", "/pulls") == 5  # one look before the first try, one before each retry
    assert fake.pulls == {}


def test_a_label_that_failed_with_5xx_is_added_again(fake: FakeGitHub) -> None:
    fake.fail("POST", "/issues/1/labels$", 502)
    waits: list[float] = []
    result = repo(fake, waits).open_or_update("sync/x", "main", "t", "b")
    assert result.label_warning is None and fake.pulls[1].labels == ["sync"]
    assert waits == [1.0]


@pytest.mark.parametrize(
    "error",
    [ReadTimeoutError(None, "/x", "timed out"), ProtocolError("Connection aborted.")],  # type: ignore[arg-type]
)
def test_urllib3_retries_a_lost_answer_except_to_a_post(error: Exception) -> None:
    retry = SyncRetry(total=4, backoff_factor=1.0)
    assert retry.increment("GET", "/x", error=error).total == 3
    with pytest.raises(type(error)):
        retry.increment("POST", "/x", error=error)


def test_backoff_is_1_2_4_seconds() -> None:
    retry: Any = SyncRetry(total=4, backoff_factor=1.0)
    backoffs = []
    for _ in range(3):
        retry = retry.increment("GET", "/x", error=ProtocolError("Connection aborted."))
        backoffs.append(retry.get_backoff_time())
    assert backoffs == [1.0, 2.0, 4.0]
