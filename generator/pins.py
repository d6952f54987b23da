"""The pins of the library repo's workflows, and whether newer releases exist: what
`python -m generator workflows --outdated` reports.

A pin is one of these lines of a template in `workflows/` (their exact shapes; nothing
else is read):

- `uses: OWNER/REPO@SHA # vX.Y.Z`: an action, pinned to a commit with its tag beside it;
- `ARDUINO_CLI_VERSION: "X.Y.Z"`, `ARDUINO_LINT_VERSION: "X.Y.Z"`: the releases of
  arduino/arduino-cli and arduino/arduino-lint that the workflows install;
- `ZEPHYR_CORE: "arduino:zephyr@X.Y.Z"`: the board core, from the Arduino package index;
- `ROUTER_BRIDGE: "Arduino_RouterBridge@X.Y.Z"`: the library, from the Library Manager index.

Where the newest release comes from:

- GitHub: `GET /repos/{owner}/{repo}/releases/latest`, "the most recent non-prerelease,
  non-draft release" (https://docs.github.com/en/rest/releases/releases#get-the-latest-release);
  an action's pinned SHA is also compared with the commit its tag names, from
  `GET /repos/{owner}/{repo}/commits/{ref}`
  (https://docs.github.com/en/rest/commits/commits#get-a-commit), which resolves an annotated
  tag to its commit.
- The package index (`packages[].platforms[]`, keyed by `name` of the packager and the
  platform's `architecture`) and the library index (`libraries[]`, one entry per version,
  keyed by `name`). Their default URLs are the ones arduino-cli downloads
  (arduino/arduino-cli `internal/arduino/globals/globals.go` at d7fad951: `DefaultIndexURL`,
  `LibrariesIndexURL`); a `.tar.bz2` holds `<name>.json`, a `.gz` is gzip of it, a `.json` is
  the index itself (arduino-cli `internal/arduino/resources/index.go`, `IndexFileName`).

Versions are compared as PEP 440 versions (`packaging`), which orders X.Y.Z like Semantic
Versioning; a pre-release is never "newer", and neither is a version that does not parse.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import tarfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from packaging.version import InvalidVersion, Version

#: GitHub's REST API root.
GITHUB_API_URL = "https://api.github.com"
#: The Arduino package index (boards), as arduino-cli fetches it.
PACKAGE_INDEX_URL = "https://downloads.arduino.cc/packages/package_index.tar.bz2"
#: The Library Manager's index, as arduino-cli fetches it.
LIBRARY_INDEX_URL = "https://downloads.arduino.cc/libraries/library_index.tar.bz2"
#: Seconds to wait for a connection, and between two reads of an answer.
TIMEOUT = (10.0, 60.0)

_USES = re.compile(
    r"^\s*(?:- )?uses:\s*([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)(?:/[^@\s]*)?@([0-9a-f]{40})"
    r"\s+#\s*(v?\d+\.\d+\.\d+\S*)\s*$"
)
_ENV = re.compile(
    r'^\s*(ARDUINO_CLI_VERSION|ARDUINO_LINT_VERSION|ZEPHYR_CORE|ROUTER_BRIDGE):\s*"([^"]*)"\s*$'
)
#: env name -> (GitHub repository whose releases it installs, or None, prefix of its value).
_ENV_PINS: dict[str, tuple[str | None, str]] = {
    "ARDUINO_CLI_VERSION": ("arduino/arduino-cli", ""),
    "ARDUINO_LINT_VERSION": ("arduino/arduino-lint", ""),
    "ZEPHYR_CORE": (None, "arduino:zephyr@"),
    "ROUTER_BRIDGE": (None, "Arduino_RouterBridge@"),
}


class PinError(Exception):
    """A source could not be read (network, HTTP status, answer of another shape); the
    message names the source. `unreachable`: no answer at all (no connection, a timeout)."""

    def __init__(self, message: str, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


@dataclass(frozen=True)
class Pin:
    """One pinned version in the workflow templates.

    Attributes:
        name: what is pinned: "actions/checkout", "arduino-cli", "arduino:zephyr",
            "Arduino_RouterBridge".
        kind: "action", "release" (a tool installed from its GitHub releases), "core" or
            "library".
        version: the pinned version as written, e.g. "v7.0.1" (an action's tag) or "1.5.1".
        repo: OWNER/REPO of its GitHub releases (actions, arduino-cli, arduino-lint), else "".
        sha: an action's pinned commit, else "".
        where: "ci.yml:47"-style places it is written.
    """

    name: str
    kind: str
    version: str
    repo: str = ""
    sha: str = ""
    where: tuple[str, ...] = field(default=(), compare=False)


@dataclass
class Finding:
    """What the sources say about one pin.

    Attributes:
        pin: the pin.
        source: where the newest version was looked up (shown in the table).
        newest: the newest release's version as its source writes it ("" when unknown).
        newest_sha: the commit of an action's newest tag, when it is newer ("" otherwise).
        problems: what is wrong besides being old (a SHA that is not its tag's commit).
        error: why the source could not be read ("" when it was).
    """

    pin: Pin
    source: str
    newest: str = ""
    newest_sha: str = ""
    problems: list[str] = field(default_factory=list)
    error: str = ""

    @property
    def outdated(self) -> bool:
        """True when the newest release is a later version than the pin."""
        newest, current = _version(self.newest), _version(self.pin.version)
        return newest is not None and current is not None and newest > current


def _version(text: str) -> Version | None:
    """`text` ("v1.2.3" or "1.2.3") as a version; None when it does not parse or is a
    pre-release (never newer than a release)."""
    try:
        version = Version(text.removeprefix("v"))
    except InvalidVersion:
        return None
    return None if version.is_prerelease or version.is_devrelease else version


def read_pins(templates: Mapping[str, str]) -> list[Pin]:
    """Every pin of `templates` (file name -> text), each once, in order of appearance.

    The same action or tool pinned twice with the same version (and SHA) is one pin with
    both places in `where`; pinned with another version it is another pin.
    """
    found: dict[Pin, list[str]] = {}
    for file_name, text in templates.items():
        for number, line in enumerate(text.splitlines(), 1):
            pin = _pin_of(line)
            if pin is not None:
                found.setdefault(pin, []).append(f"{file_name}:{number}")
    return [
        Pin(p.name, p.kind, p.version, p.repo, p.sha, tuple(where)) for p, where in found.items()
    ]


def _pin_of(line: str) -> Pin | None:
    uses = _USES.match(line)
    if uses:
        owner, repo, sha, tag = uses.groups()
        return Pin(f"{owner}/{repo}", "action", tag, f"{owner}/{repo}", sha)
    env = _ENV.match(line)
    if env is None:
        return None
    key, value = env.groups()
    repo, prefix = _ENV_PINS[key]
    if repo is not None:
        return Pin(repo.split("/")[1], "release", value, repo)
    name, _, version = value.partition("@")
    if not value.startswith(prefix) or not version:
        return None
    return Pin(name, "core" if key == "ZEPHYR_CORE" else "library", version)


#: fetch(url, headers) -> the answer's body; raises PinError naming the source.
Fetch = Callable[[str, Mapping[str, str]], bytes]


def http_fetch(url: str, headers: Mapping[str, str]) -> bytes:
    """GET `url` with `requests` (timeouts `TIMEOUT`), the body of a 200 answer.

    Raises:
        PinError: no connection, a timeout, or another status than 200 (the status and,
            for GitHub's rate limit, what to do).
    """
    import requests

    try:
        answer = requests.get(url, headers=dict(headers), timeout=TIMEOUT)
    except requests.RequestException as e:
        raise PinError(
            f"cannot reach {_shown(url)} ({type(e).__name__})", unreachable=True
        ) from None
    if answer.status_code != 200:
        hint = ""
        if answer.status_code in (403, 429) and answer.headers.get("x-ratelimit-remaining") == "0":
            hint = "; GitHub's rate limit is used up: set GITHUB_TOKEN (any token raises it)"
        raise PinError(f"{_shown(url)} answered HTTP {answer.status_code}{hint}")
    return answer.content


def _shown(url: str) -> str:
    """`url` without a query (nothing secret is put there, but keep messages short)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


@dataclass
class Sources:
    """Where the newest versions are looked up, each answer read once.

    Attributes:
        api_url: GitHub REST API root.
        token: a GitHub token for the API (raises the rate limit); sent to `api_url` only.
        package_index, library_index: the index URLs (.json, .gz or .tar.bz2).
        fetch: the HTTP GET (tests may pass another).
    """

    api_url: str = GITHUB_API_URL
    token: str | None = None
    package_index: str = PACKAGE_INDEX_URL
    library_index: str = LIBRARY_INDEX_URL
    fetch: Fetch = http_fetch
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)
    #: host -> why a connection to it failed: it is not tried again this run.
    _down: dict[str, str] = field(default_factory=dict, repr=False)

    def github(self, path: str) -> Any:
        """The JSON of `GET {api_url}{path}`.

        Raises:
            PinError: unreachable, another status than 200, or not JSON.
        """
        headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return self._json(self.api_url.rstrip("/") + path, headers)

    def index(self, url: str) -> Any:
        """The JSON of the index at `url`, unpacked by its suffix.

        Raises:
            PinError: unreachable, another status than 200, not an archive of the index,
                or not JSON.
        """
        return self._json(url, {}, unpack=True)

    def _json(self, url: str, headers: Mapping[str, str], unpack: bool = False) -> Any:
        if url not in self._cache:
            host = urlsplit(url).netloc
            if host in self._down:
                raise PinError(
                    f"cannot reach {_shown(url)} (not tried: {self._down[host]})",
                    unreachable=True,
                )
            try:
                body = self.fetch(url, headers)
            except PinError as e:
                if e.unreachable:
                    self._down[host] = f"a connection to {host} failed before"
                raise
            if unpack:
                body = _unpack(url, body)
            try:
                self._cache[url] = json.loads(body)
            except (UnicodeDecodeError, json.JSONDecodeError) as e:
                raise PinError(f"{_shown(url)} did not answer JSON ({e})") from None
        return self._cache[url]


def _unpack(url: str, body: bytes) -> bytes:
    """The index JSON of the download `body` of `url`: a `.tar.bz2` holding
    `<name>.json`, a `.gz`, or the JSON itself.

    Raises:
        PinError: not an archive of that form, or the archive lacks `<name>.json`.
    """
    name = urlsplit(url).path.rsplit("/", 1)[-1]
    try:
        if name.endswith(".tar.bz2"):
            member = name.removesuffix(".tar.bz2") + ".json"
            with tarfile.open(fileobj=io.BytesIO(body), mode="r:bz2") as archive:
                try:
                    extracted = archive.extractfile(member)
                except KeyError:
                    extracted = None
                if extracted is None:
                    raise PinError(f"{_shown(url)} holds no file {member}")
                return extracted.read()
        if name.endswith(".gz"):
            return gzip.decompress(body)
    except (tarfile.TarError, OSError, EOFError) as e:
        raise PinError(f"{_shown(url)} is not a readable archive ({e})") from None
    return body


def check_pins(pins: Iterable[Pin], sources: Sources) -> list[Finding]:
    """Look up the newest release of each pin (and, for an action, its tag's commit).

    Returns:
        One finding per pin, in order; a source that could not be read is the finding's
        `error` (the others are still looked up).
    """
    findings: list[Finding] = []
    for pin in pins:
        finding = Finding(pin, _source_name(pin, sources))
        try:
            if pin.kind in ("action", "release"):
                _github_release(finding, sources)
            elif pin.kind == "core":
                finding.newest = _newest_platform(pin.name, sources)
            else:
                finding.newest = _newest_library(pin.name, sources)
        except PinError as e:
            finding.error = str(e)
        findings.append(finding)
    return findings


def _source_name(pin: Pin, sources: Sources) -> str:
    if pin.kind in ("action", "release"):
        host = urlsplit(sources.api_url).netloc
        shown = "GitHub" if host == "api.github.com" else host
        return f"{shown} releases of {pin.repo}"
    if pin.kind == "core":
        return f"package index {_shown(sources.package_index)}"
    return f"library index {_shown(sources.library_index)}"


def _github_release(finding: Finding, sources: Sources) -> None:
    pin = finding.pin
    latest = sources.github(f"/repos/{pin.repo}/releases/latest")
    tag = latest.get("tag_name") if isinstance(latest, dict) else None
    if not isinstance(tag, str) or not tag:
        raise PinError(f"the latest release of {pin.repo} has no tag_name")
    finding.newest = tag
    if pin.kind != "action":
        return
    pinned_commit = _commit_of(pin.repo, pin.version, sources)
    if pinned_commit != pin.sha:
        finding.problems.append(
            f"{pin.sha[:12]} is not the commit of {pin.version} ({pinned_commit[:12]})"
        )
    if finding.outdated:
        finding.newest_sha = _commit_of(pin.repo, tag, sources)


def _commit_of(repo: str, ref: str, sources: Sources) -> str:
    answer = sources.github(f"/repos/{repo}/commits/{ref}")
    sha = answer.get("sha") if isinstance(answer, dict) else None
    if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{40}", sha):
        raise PinError(f"GET /repos/{repo}/commits/{ref} named no commit SHA")
    return sha


def _newest(versions: Iterable[object]) -> str:
    """The highest release among `versions` (strings that parse; others are skipped), as
    written; "" when there is none."""
    best: tuple[Version, str] | None = None
    for text in versions:
        version = _version(text) if isinstance(text, str) else None
        if version is not None and (best is None or version > best[0]):
            best = (version, str(text))
    return best[1] if best else ""


def _newest_platform(name: str, sources: Sources) -> str:
    packager, _, architecture = name.partition(":")
    index = sources.index(sources.package_index)
    packages = index.get("packages") if isinstance(index, dict) else None
    if not isinstance(packages, list):
        raise PinError(f"{_shown(sources.package_index)} has no packages list")
    versions = [
        platform.get("version")
        for package in packages
        if isinstance(package, dict) and package.get("name") == packager
        for platform in package.get("platforms") or []
        if isinstance(platform, dict) and platform.get("architecture") == architecture
    ]
    newest = _newest(versions)
    if not newest:
        raise PinError(f"{_shown(sources.package_index)} lists no release of {name}")
    return newest


def _newest_library(name: str, sources: Sources) -> str:
    index = sources.index(sources.library_index)
    libraries = index.get("libraries") if isinstance(index, dict) else None
    if not isinstance(libraries, list):
        raise PinError(f"{_shown(sources.library_index)} has no libraries list")
    newest = _newest(
        entry.get("version")
        for entry in libraries
        if isinstance(entry, dict) and entry.get("name") == name
    )
    if not newest:
        raise PinError(f"{_shown(sources.library_index)} lists no release of {name}")
    return newest


def pin_table(findings: Iterable[Finding]) -> str:
    """The findings as a plain-text table: pin, current, newest, source; then one line per
    problem, bump hint and unreadable source."""
    rows = [("pin", "current", "newest", "source")]
    notes: list[str] = []
    for f in findings:
        newest = f.newest or "unknown"
        if f.outdated:
            newest += " (newer)"
        rows.append((f.pin.name, f.pin.version, newest, f.source))
        places = ", ".join(f.pin.where)
        for problem in f.problems:
            notes.append(f"{f.pin.name} ({places}): {problem}")
        if f.outdated and f.newest_sha:
            notes.append(
                f"{f.pin.name} ({places}): bump to `uses: {f.pin.repo}@{f.newest_sha} # {f.newest}`"
            )
        elif f.outdated:
            notes.append(f"{f.pin.name} ({places}): bump to {f.newest}")
        if f.error:
            notes.append(f"{f.pin.name}: {f.error}")
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines + (["", *notes] if notes else []))
