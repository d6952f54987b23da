"""Step 14: render the library's metadata with Jinja2 (a pure step from `Provenance` to files).

Every template is a plain Jinja file of the one environment of `generator.util.templates`; the
library's own files are `data/library_template/` (a folder that mirrors the library: `src/`,
`examples/`, `library.properties.jinja`, `README.md.jinja`, `extras/PROVENANCE.txt.jinja`, ...).
The rule is
copier's: a file whose name ends in `.jinja` is rendered and loses the suffix, every other file
is copied as it is. Nothing rendered holds a timestamp, so the same
inputs give byte-identical files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.boards.budgets import compact_boards
from generator.library.facts import kernel_names, texts_under
from generator.library.layout import CODEGEN_DIR, LIBRARY_FACTS_FILE, PIN_FILE
from generator.pipeline.provenance import Provenance
from generator.util.templates import LIBRARY_TEMPLATE, TEMPLATE_SUFFIX, render


def render_to(template: str, dest: Path, **facts: Any) -> None:
    """Render `template` with `facts` into `dest` (parent folders created).

    Raises:
        jinja2.UndefinedError: when the template uses a fact not given (a bug, not input).
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(render(template, **facts), encoding="utf-8")


def write_pin(library: Path, sha: str) -> None:
    """`executorch_pin.txt`: the full SHA and a newline."""
    (library / PIN_FILE).write_text(sha + "\n", encoding="utf-8")


def render_metadata(library: Path, provenance: Provenance, link_modes: str, boards: str) -> None:
    """Render every `*.jinja` of `data/library_template/` into `library`, at its path without the
    suffix,
    and write extras/library.json (`write_facts`).

    That is library.properties, README.md, extras/PROVENANCE.txt and the licenses README. Each
    template reads the attributes of one name, `p`: the `Provenance`, and the README
    `link_modes` and `boards`, the link-modes and boards sections of an unchecked tree with
    their markers (the verb makes them with `generator.boards.linkmode_docs` and
    `generator.boards.board_docs`; `check --update-docs` fills them in), and `compact_boards`,
    the names of the boards of the compact runtime (`generator.boards.budgets.compact_boards`, see
    `generator/pipeline/compact.py`).
    (The library's README is for the Library Manager, arduino-lint LD001; a synced library
    repo keeps its own, since README.md is not a generated path, see generator.library.layout.)
    """
    for template in sorted(LIBRARY_TEMPLATE.rglob(f"*{TEMPLATE_SUFFIX}")):
        rel = template.relative_to(LIBRARY_TEMPLATE)
        render_to(
            rel.as_posix(),
            library / rel.with_suffix(""),
            p=provenance,
            link_modes=link_modes,
            boards=boards,
            compact_boards=[row.name for row in compact_boards()],
        )
    write_facts(library, provenance)


def write_facts(library: Path, provenance: Provenance) -> None:
    """extras/library.json (`generator.library.layout.LIBRARY_FACTS_FILE`): `provenance`'s facts,
    with
    the kernels the codegen sources below `library` register, read from those sources as a
    library without the file is read (`generator.library.facts.read_facts`)."""
    kernels = kernel_names(texts_under(library, CODEGEN_DIR))
    dest = library / LIBRARY_FACTS_FILE
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(provenance.facts(kernels).to_json(), encoding="utf-8")
