"""The GitHub workflows of the library repo: rendered from `data/workflows/*.yml` (a pure step from
the generator's pin to text), compared with and written into `LIBRARY/.github/workflows/`.

The one template rule: the templates are plain workflow YAML in which `@@NAME@@` is replaced by
the value of NAME, and NAME is one of `PLACEHOLDERS`. Nothing else is substituted, so GitHub's
own `${{ ... }}` expressions pass through untouched. The values are checked first (an https URL
without credentials, a full commit SHA, board keys of a safe charset) and contain no character
that could end the quoted YAML string they are placed in. `@@BOARDS@@` and `@@ALL_BOARDS@@`
are lists of quoted board keys (`["unoq"]`), at once a YAML flow sequence and a JSON array, so
a template may place one as a whole `strategy.matrix` value or inside a single-quoted string of
a GitHub expression (`fromJSON('@@BOARDS@@')`: a key holds no `'`). `@@BOARDS@@` is the smoke
set, the keys of `generator.boards.budgets.BOARDS` (the UNO Q), which CI checks on every pull
request
and push; `@@ALL_BOARDS@@` the full set, every board `check --board` takes
(`generator.boards.budgets.check_boards()`: each `ZEPHYR_BOARDS` row, in that table's order, and
`BOARDS`; a row without an emulator, the Nano RP2040 Connect's, is compiled and sized only),
which CI checks nightly and by hand. So the matrices are the board tables.

The library repo does not contain the generator: every workflow fetches the generator's repo
at the pinned commit and runs `python -m generator` from there.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping
from pathlib import Path

from generator import data_dir
from generator.boards import budgets as boards
from generator.util.atomic import write_atomic
from generator.util.errors import FatalError
from generator.util.urls import display_url, refuse_credentials

#: Where the workflows live in the library repo.
WORKFLOWS_DIR = ".github/workflows"
#: The templates: one file per workflow, named as it is installed.
TEMPLATES_DIR = data_dir("workflows")
#: The names a template may use as `@@NAME@@`.
PLACEHOLDERS = ("GENERATOR_REPO", "GENERATOR_REF", "BOARDS", "ALL_BOARDS")

_PLACEHOLDER = re.compile(r"@@([A-Za-z0-9_]*)@@")
_FULL_SHA = re.compile(r"[0-9a-f]{40}")
#: Characters a generator URL may hold: RFC 3986 unreserved, reserved and `%`, minus the
#: ones that would end or escape the quoted YAML string (`"`, `\`) or start a new one (`'`).
_URL_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&()*+,;=%]+")
#: A board key: what `--board` takes and a matrix value holds; nothing YAML or a shell reads
#: specially.
_BOARD_KEY = re.compile(r"[a-z0-9][a-z0-9_-]*")


def check_generator_repo(url: str) -> str:
    """`url` if it can be pinned in a workflow: an https URL with a host, no credentials, no
    query or fragment, only URL characters.

    Raises:
        FatalError: what is wrong and what to pass instead.
    """
    refuse_credentials(url, "--generator-repo")
    if not _URL_CHARS.fullmatch(url):
        raise FatalError(
            f"generator repo {display_url(url)!r} has characters a git URL should not have; "
            "pass an https URL such as https://github.com/OWNER/NAME.git"
        )
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError as e:
        raise FatalError(f"generator repo {display_url(url)!r} is not a valid URL ({e})") from None
    if parts.scheme != "https" or not parts.hostname:
        raise FatalError(
            f"generator repo {display_url(url)!r} is not an https URL: the library repo's "
            "workflows fetch the generator anonymously over https; pass --generator-repo "
            "https://HOST/OWNER/NAME.git"
        )
    if "@" in parts.netloc:
        raise FatalError(
            "the generator repo URL carries credentials (user or token before '@'); the URL "
            "is written into the library repo's workflows: pass it without them and let git "
            "use a credential helper"
        )
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        raise FatalError(
            f"generator repo {display_url(url)!r} has a query or fragment; pass the plain URL"
        )
    if parts.path.strip("/") == "":
        raise FatalError(f"generator repo {display_url(url)!r} names no repository; add its path")
    return url


def check_generator_ref(ref: str) -> str:
    """`ref` lower-cased if it is a full 40-hex commit SHA.

    Raises:
        FatalError: it is a branch, tag or short SHA (those can move or become ambiguous).
    """
    sha = ref.strip().lower()
    if not _FULL_SHA.fullmatch(sha) or set(sha) == {"0"}:
        raise FatalError(
            f"generator ref {ref!r} is not a full 40-hex commit SHA; the workflows pin one "
            "commit so they run the same generator every time (a branch or tag can move)"
        )
    return sha


def read_templates() -> dict[str, str]:
    """The templates of `TEMPLATES_DIR` as they are, unrendered: file name -> text, in name
    order."""
    return {t.name: t.read_text(encoding="utf-8") for t in sorted(TEMPLATES_DIR.glob("*.yml"))}


def board_matrix(table: Mapping[str, object] | None = None) -> str:
    """The board keys of `table` (default: `generator.boards.budgets.BOARDS`) as a YAML flow
    sequence that is also a JSON array, e.g. `["unoq"]`, in the table's order: the value of
    `@@BOARDS@@` (and, for `check_boards()`, of `@@ALL_BOARDS@@`).

    Raises:
        ValueError: the table is empty or a key is not lower-case letters, digits, `_` and
            `-` (starting with a letter or digit): a bug in the board table.
    """
    keys = list(boards.BOARDS if table is None else table)
    if not keys:
        raise ValueError("the board table is empty: the CI matrix would have no board")
    bad = [k for k in keys if not _BOARD_KEY.fullmatch(k)]
    if bad:
        raise ValueError(
            f"board keys {bad!r} in generator.boards.budgets are not of [a-z0-9][a-z0-9_-]*; "
            "they are rendered into the workflows' matrix and passed as --board"
        )
    return "[" + ", ".join(f'"{k}"' for k in keys) + "]"


def render_workflows(generator_repo: str, generator_ref: str) -> dict[str, str]:
    """Each workflow of `TEMPLATES_DIR` rendered for the generator at `generator_ref`.

    Args:
        generator_repo: https git URL of the generator (no credentials).
        generator_ref: full commit SHA of the generator the workflows fetch.
    Returns:
        file name (e.g. "sync.yml") -> workflow text, in name order.
    Raises:
        FatalError: a bad URL or ref (see `check_generator_repo`, `check_generator_ref`).
        ValueError: a template uses an unknown placeholder (a bug in the templates), or a
            board key cannot be rendered (see `board_matrix`).
    """
    values = {
        "GENERATOR_REPO": check_generator_repo(generator_repo),
        "GENERATOR_REF": check_generator_ref(generator_ref),
        "BOARDS": board_matrix(),
        "ALL_BOARDS": board_matrix(boards.check_boards()),
    }
    rendered: dict[str, str] = {}
    for template in sorted(TEMPLATES_DIR.glob("*.yml")):
        text = template.read_text(encoding="utf-8")
        unknown = sorted({m.group(1) for m in _PLACEHOLDER.finditer(text)} - set(values))
        if unknown:
            raise ValueError(f"{template}: unknown placeholders {', '.join(unknown)}")
        rendered[template.name] = _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)
    return rendered


def workflow_drift(library_repo_dir: Path, rendered: dict[str, str]) -> list[str]:
    """Names of the rendered workflows that are missing from, or differ (byte for byte) in,
    `library_repo_dir/.github/workflows`. Other files there are the repo's own: not drift."""
    folder = library_repo_dir / WORKFLOWS_DIR
    drift: list[str] = []
    for name, text in sorted(rendered.items()):
        path = folder / name
        try:
            same = path.is_file() and path.read_bytes() == text.encode("utf-8")
        except OSError:
            same = False
        if not same:
            drift.append(name)
    return drift


_INSTALLED = re.compile(r'^\s*(GENERATOR_REPO|GENERATOR_REF):\s*"([^"]*)"\s*$', re.MULTILINE)


def installed_drift(library_repo_dir: Path) -> list[str]:
    """The workflows of this generator that the library repo lacks or has in another form.

    The installed `sync.yml` names the generator it runs (its `GENERATOR_REPO` and
    `GENERATOR_REF` env lines); this generator's templates are rendered with those values,
    so a repo whose workflows came from a generator with the same templates shows no drift,
    whatever commit they pin.

    Returns:
        File names (e.g. ["ci.yml", "sync.yml"]); every workflow when sync.yml is missing or
        names no valid generator.
    """
    try:
        installed = (library_repo_dir / WORKFLOWS_DIR / "sync.yml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        installed = ""
    values = dict(_INSTALLED.findall(installed))
    try:
        rendered = render_workflows(values["GENERATOR_REPO"], values["GENERATOR_REF"])
    except (KeyError, FatalError):
        return sorted(t.name for t in TEMPLATES_DIR.glob("*.yml"))
    return workflow_drift(library_repo_dir, rendered)


def write_workflows(library_repo_dir: Path, rendered: dict[str, str]) -> list[Path]:
    """Write each rendered workflow into `library_repo_dir/.github/workflows` atomically (a
    temporary file in the same folder, then `os.replace`); other files there are kept.

    Returns:
        The written paths, in name order.
    Raises:
        FatalError: `library_repo_dir` is not a folder, or a file cannot be written.
    """
    if not library_repo_dir.is_dir():
        raise FatalError(f"{library_repo_dir} is not a folder; pass the library repo's checkout")
    folder = library_repo_dir / WORKFLOWS_DIR
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise FatalError(f"cannot create {folder} ({e})") from None
    written: list[Path] = []
    for name, text in sorted(rendered.items()):
        path = folder / name
        if path.is_dir():
            raise FatalError(f"{path} is a folder; remove it so the workflow can be written")
        try:
            write_atomic(path, text)
        except OSError as e:
            raise FatalError(f"cannot write {path} ({e})") from None
        written.append(path)
    return written
