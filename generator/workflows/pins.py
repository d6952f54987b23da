"""The pins of the library repo's workflows, and whether newer releases exist: what
`python -m generator workflows --outdated` reports.

A pin is one of these lines of a template in `data/workflows/` (their exact shapes; nothing
else is read):

- `uses: OWNER/REPO@SHA # vX.Y.Z`: an action, pinned to a commit with its tag beside it;
- `ARDUINO_CLI_VERSION: "X.Y.Z"`, `ARDUINO_LINT_VERSION: "X.Y.Z"`: the releases of
  arduino/arduino-cli and arduino/arduino-lint that the workflows install;
- `ZEPHYR_CORE: "arduino:zephyr@X.Y.Z"`: the board core, from the Arduino package index;
- `ROUTER_BRIDGE: "Arduino_RouterBridge@X.Y.Z"`: the library, from the Library Manager index.

A `uses:` of a repository's action or a line setting one of those names in another shape (a
tag or branch instead of a SHA, `# v2`, an unquoted value) is reported as not checked, with
why, and fails the command (exit 1) like an old pin.

Answers are bounded: `MAX_DOWNLOAD` bytes as downloaded, `MAX_UNPACKED` once unpacked,
`TOTAL_SECONDS` each; a corrupt archive, JSON that is not strict (NaN) or nested beyond
Python's parser, or an answer past a bound is an error naming its source (exit 2).

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

import io
import json
import re
import tarfile
import time
import zlib
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
#: Seconds one answer may take from the request to its last byte (the read timeout alone
#: lets a server that trickles a byte a minute hold the command for ever).
TOTAL_SECONDS = 300.0
#: The most bytes an answer may have as downloaded, and an index once unpacked. Chosen, not
#: measured here (these machines cannot reach downloads.arduino.cc): the unpacked library
#: index was "over 35 MB" in June 2024 (arduino/arduino-cli#2624) and grows with every
#: release indexed, the package index is smaller, and the archives are a fraction of it;
#: the caps leave several times that room and bound what a wrong server can make us hold.
MAX_DOWNLOAD = 64 * 2**20
MAX_UNPACKED = 256 * 2**20

#: Any `uses:` line: what it uses, and the comment after it.
_USES_LINE = re.compile(r"^\s*(?:- )?uses:\s*(?P<spec>[^\s#]+)\s*(?:#\s*(?P<comment>.*?))?\s*$")
#: What a checkable `uses:` names: OWNER/REPO[/path]@SHA.
_ACTION = re.compile(r"([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)(?:/[^@\s]*)?@([^@\s]+)")
#: The tag a checkable `uses:` has in its comment.
_TAG = re.compile(r"v?\d+\.\d+\.\d+\S*")
#: Any line setting one of `_ENV_PINS`: the key and the rest of the line.
_ENV_LINE = re.compile(
    r"^\s*(ARDUINO_CLI_VERSION|ARDUINO_LINT_VERSION|ZEPHYR_CORE|ROUTER_BRIDGE):\s*(.*?)\s*$"
)
_QUOTED = re.compile(r'"([^"]*)"')
_X_Y_Z = re.compile(r"\d+\.\d+\.\d+")
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
        unchecked: why the line cannot be checked ("" for a pin in one of the shapes above):
            it is reported, not looked up.
    """

    name: str
    kind: str
    version: str
    repo: str = ""
    sha: str = ""
    where: tuple[str, ...] = field(default=(), compare=False)
    unchecked: str = ""


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
    both places in `where`; pinned with another version it is another pin. A `uses:` of a
    repository's action or a line setting one of the env pins that is not in its checkable
    shape (module docstring) is a pin with `unchecked` saying why: a ref that is not a full
    SHA, no `# vX.Y.Z` beside it, an env value not double-quoted or not X.Y.Z. Local actions
    (`./…`) and `docker://` images are not pins.
    """
    found: dict[Pin, list[str]] = {}
    for file_name, text in templates.items():
        for number, line in enumerate(text.splitlines(), 1):
            pin = _pin_of(line)
            if pin is not None:
                found.setdefault(pin, []).append(f"{file_name}:{number}")
    return [
        Pin(p.name, p.kind, p.version, p.repo, p.sha, tuple(where), p.unchecked)
        for p, where in found.items()
    ]


def _pin_of(line: str) -> Pin | None:
    uses = _USES_LINE.match(line)
    if uses:
        return _action_pin(uses["spec"].strip("\"'"), uses["comment"])
    env = _ENV_LINE.match(line)
    if env is None:
        return None
    key, written = env.groups()
    repo, prefix = _ENV_PINS[key]
    kind = "release" if repo is not None else "core" if key == "ZEPHYR_CORE" else "library"
    name = repo.split("/")[1] if repo is not None else prefix.rstrip("@")
    shape = f'{key}: "{prefix}X.Y.Z"'
    quoted = _QUOTED.fullmatch(written.split(" #")[0].strip())
    if quoted is None:
        return Pin(name, kind, written, repo or "", unchecked=f"not written as {shape}")
    value = quoted[1]
    version = value.removeprefix(prefix) if value.startswith(prefix) else None
    if version is None or not _X_Y_Z.fullmatch(version):
        return Pin(name, kind, value, repo or "", unchecked=f"not written as {shape}")
    return Pin(name, kind, version, repo or "")


def _action_pin(spec: str, comment: str | None) -> Pin | None:
    """The pin of `uses: <spec> # <comment>`; None for a local action or a docker image."""
    if spec.startswith(("./", "docker://")):
        return None
    action = _ACTION.fullmatch(spec)
    if action is None:
        return Pin(spec, "action", "", unchecked="not OWNER/REPO@SHA")
    owner, repo, ref = action.groups()
    name = f"{owner}/{repo}"
    tag = (comment or "").strip()
    if not re.fullmatch(r"[0-9a-f]{40}", ref):
        return Pin(name, "action", ref, name, unchecked=f"pinned to {ref!r}, not a commit SHA")
    if not tag:
        return Pin(name, "action", "", name, ref, unchecked="no `# vX.Y.Z` tag beside the SHA")
    if not _TAG.fullmatch(tag):
        why = f"the comment {'# ' + tag!r} is not a vX.Y.Z tag"
        return Pin(name, "action", tag, name, ref, unchecked=why)
    return Pin(name, "action", tag, name, ref)


#: fetch(url, headers) -> the answer's body; raises PinError naming the source.
Fetch = Callable[[str, Mapping[str, str]], bytes]


def http_fetch(url: str, headers: Mapping[str, str]) -> bytes:
    """GET `url` with `requests` (timeouts `TIMEOUT`), the body of a 200 answer: at most
    `MAX_DOWNLOAD` bytes (after any Content-Encoding), all of it within `TOTAL_SECONDS`.

    Raises:
        PinError: no connection, a timeout, another status than 200 (the status and, for
            GitHub's rate limit, what to do), or an answer too big or too slow.
    """
    import requests

    deadline = time.monotonic() + TOTAL_SECONDS
    try:
        with requests.get(url, headers=dict(headers), timeout=TIMEOUT, stream=True) as answer:
            if answer.status_code != 200:
                hint = ""
                limited = answer.headers.get("x-ratelimit-remaining") == "0"
                if answer.status_code in (403, 429) and limited:
                    hint = (
                        "; GitHub's rate limit is used up: set GITHUB_TOKEN (any token raises it)"
                    )
                raise PinError(f"{_shown(url)} answered HTTP {answer.status_code}{hint}")
            body = bytearray()
            for chunk in answer.iter_content(chunk_size=1 << 16):
                body += chunk
                if len(body) > MAX_DOWNLOAD:
                    raise PinError(f"{_shown(url)} answered more than {_mib(MAX_DOWNLOAD)}")
                if time.monotonic() > deadline:
                    raise PinError(
                        f"{_shown(url)} took more than {TOTAL_SECONDS:.0f} s to answer",
                        unreachable=True,
                    )
            return bytes(body)
    except requests.RequestException as e:
        raise PinError(
            f"cannot reach {_shown(url)} ({type(e).__name__})", unreachable=True
        ) from None


def _mib(size: int) -> str:
    return f"{size / 2**20:g} MiB"


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
            self._cache[url] = _loads(url, body)
        return self._cache[url]


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _loads(url: str, body: bytes) -> Any:
    """The JSON document `body` (strict: no NaN or Infinity) of `url`.

    Raises:
        PinError: not UTF-8 JSON, or nested too deeply for Python's parser.
    """
    try:
        return json.loads(body, parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError) as e:  # json.JSONDecodeError is a ValueError
        raise PinError(f"{_shown(url)} did not answer JSON ({e})") from None
    except RecursionError:
        raise PinError(f"{_shown(url)} did not answer JSON (nested too deeply)") from None


def _unpack(url: str, body: bytes) -> bytes:
    """The index JSON of the download `body` of `url`: a `.tar.bz2` holding
    `<name>.json`, a `.gz`, or the JSON itself; at most `MAX_UNPACKED` bytes unpacked.

    Raises:
        PinError: not an archive of that form (corrupt data included), the archive lacks
            `<name>.json`, or it unpacks to more than `MAX_UNPACKED`.
    """
    name = urlsplit(url).path.rsplit("/", 1)[-1]
    too_big = PinError(f"{_shown(url)} unpacks to more than {_mib(MAX_UNPACKED)}")
    try:
        if name.endswith(".tar.bz2"):
            member = name.removesuffix(".tar.bz2") + ".json"
            with tarfile.open(fileobj=io.BytesIO(body), mode="r:bz2") as archive:
                try:
                    info = archive.getmember(member)
                except KeyError:
                    info = None
                extracted = archive.extractfile(info) if info is not None else None
                if info is None or extracted is None:
                    raise PinError(f"{_shown(url)} holds no file {member}")
                if info.size > MAX_UNPACKED:
                    raise too_big
                return extracted.read()
        if name.endswith(".gz"):
            # gzip's own decompress has no limit: a small .gz can unpack to gigabytes
            unzip = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
            data = unzip.decompress(body, MAX_UNPACKED)
            if unzip.unconsumed_tail:
                raise too_big
            if not unzip.eof:
                raise PinError(f"{_shown(url)} is not a readable archive (it ends early)")
            return data
    except (tarfile.TarError, OSError, EOFError, zlib.error) as e:
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
        if pin.unchecked:
            findings.append(Finding(pin, "not checked", problems=[f"not checked: {pin.unchecked}"]))
            continue
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
        newest = "unchecked" if f.pin.unchecked else f.newest or "unknown"
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
