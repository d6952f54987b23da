"""Step 7: render the library's metadata with Jinja2 (a pure step from `Provenance` to files).

`library.properties` comes from the project's `library.properties.j2`; `extras/PROVENANCE.txt`
and `extras/THIRD_PARTY_LICENSES/README.md` from `generator/templates/`. Nothing rendered holds
a timestamp, so the same inputs give byte-identical files.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import jinja2

from generator import PROJECT_ROOT
from generator.layout import PIN_FILE, PROVENANCE_FILE
from generator.provenance import Provenance

_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(
        [str(PROJECT_ROOT), str(PROJECT_ROOT / "generator" / "templates")]
    ),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    autoescape=False,
)


def render_to(template: str, dest: Path, **facts: Any) -> None:
    """Render `template` with `facts` into `dest` (parent folders created).

    Raises:
        jinja2.UndefinedError: when the template uses a fact not given (a bug, not input).
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(_ENV.get_template(template).render(**facts), encoding="utf-8")


def tree_hash(folder: Path) -> str:
    """sha256 over the sorted relative paths and contents of every file below `folder`.

    Returns:
        64 hex digits; equal trees give equal hashes, whatever their timestamps.
    """
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def write_pin(library: Path, sha: str) -> None:
    """`executorch_pin.txt`: the full SHA and a newline."""
    (library / PIN_FILE).write_text(sha + "\n", encoding="utf-8")


def render_metadata(library: Path, provenance: Provenance) -> None:
    """Write library.properties, README.md, extras/PROVENANCE.txt and the licenses README.

    Each template reads the attributes of one name, `p`: the `Provenance`.
    """
    render_to("library.properties.j2", library / "library.properties", p=provenance)
    # The Library Manager wants a README (arduino-lint LD001); a synced library repo keeps
    # its own (README.md is not a generated path, see generator.layout).
    render_to("README.md.j2", library / "README.md", p=provenance)
    render_to(
        "THIRD_PARTY_LICENSES.md.j2",
        library / "extras" / "THIRD_PARTY_LICENSES" / "README.md",
        p=provenance,
    )
    render_to("PROVENANCE.txt.j2", library / PROVENANCE_FILE, p=provenance)
