"""Every page of a GitHub REST listing, bounded (`every_page`): PyGithub follows a listing's
`rel="next"` links without end, so a server that loops its pagination would hang sync."""

from __future__ import annotations

from typing import TypeVar

from github.GithubObject import GithubObject
from github.PaginatedList import PaginatedList

from generator.util.errors import FatalError

G = TypeVar("G", bound=GithubObject)

#: The most pages one listing may take: 100, 3,000 pull requests at PyGithub's 30 a page
#: (`Requester.per_page`), far more than the sync's listings meet (the open pull requests of
#: one repository, those of one branch). A listing that goes on is a server that never stops
#: answering `Link: <...>; rel="next"` (GitHub REST docs, "Using pagination in the REST API":
#: the last page has no next link), which would otherwise loop forever.
MAX_PAGES = 100


def every_page(listing: PaginatedList[G], max_pages: int = MAX_PAGES) -> list[G]:
    """Every item of the REST listing `listing`, following its `rel="next"` links, bounded.

    PyGithub follows the next links without a bound (PaginatedList keeps the next URL in a
    private attribute, read here before each further page is fetched).

    Raises:
        FatalError: a next link repeats a URL already fetched (a page that points at itself,
            or a cycle), or the listing runs past `max_pages` pages; the message names the URL.
    """
    fetch = listing._fetchNextPage
    seen: set[str] = set()

    def bounded() -> list[G]:
        next_url = getattr(listing, "_PaginatedList__nextUrl", None)
        # a PyGithub without that attribute: pages are still counted, repeats not seen
        url = str(next_url) if next_url is not None else f"page {len(seen) + 1}"
        if url in seen:
            raise FatalError(
                f"GitHub's listing repeats a page: its next link points back at {url}, "
                "fetched already (a server that loops its pagination); check --api-url"
            )
        seen.add(url)
        if len(seen) > max_pages:
            raise FatalError(
                f"GitHub's listing runs past {max_pages} pages (next: {url}); it should end "
                "well before: check --api-url"
            )
        return fetch()

    setattr(listing, "_fetchNextPage", bounded)  # noqa: B010 (shadow the method on the instance)
    return list(listing)
