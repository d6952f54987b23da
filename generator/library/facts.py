"""The facts of a generated library, read in one place: the ExecuTorch it comes from (URL, pin,
ref, upstream version), its version, the third-party components and their pins, the op set,
the kernels it registers and its examples. Release compares a tag's facts with the previous
tag's, sync the regenerated library's with the base branch's (`generator.library.compare`).

The build writes them once, machine-readable, to `extras/library.json`
(`generator.library.layout.LIBRARY_FACTS_FILE`; `LibraryFacts.to_json`: sorted keys, two-space
indent, a trailing newline, no timestamp), beside `extras/PROVENANCE.txt`, which stays the
text for people.

Libraries generated before that file existed (the base branch or the previous tag, made by
an older generator) are read the way they always were (`read_facts` falls back): the pin from
`executorch_pin.txt`, the version from library.properties, the upstream version from the
`upstream version:` line of extras/PROVENANCE.txt, the kernels from the codegen sources
(`kernel_names`, `generator.library.layout.KERNEL_REGISTRATION`). What that reading cannot know
(URL,
ref, components, op set, prim ops, examples) is None or empty there. A facts file that is not
what `to_json` writes (hand-edited, truncated) is read the same fallback way, so the release
notes of a commit after it still say what its files hold.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.library.layout import (
    CODEGEN_DIR,
    KERNEL_REGISTRATION,
    LIBRARY_FACTS_FILE,
    LIBRARY_NAME,
    PIN_FILE,
    PROPERTIES_FILE,
    PROVENANCE_FILE,
)
from generator.library.properties import properties_version

#: The shape of extras/library.json; a reader of another format falls back (module docstring).
FORMAT = 1
#: The line of extras/PROVENANCE.txt that holds ExecuTorch's version.txt
#: (data/library_template/extras/PROVENANCE.txt.jinja: "upstream version: 1.5.1").
_UPSTREAM_LINE = re.compile(r"^upstream version:[ \t]*(\S.*?)[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class ComponentPin:
    """A third-party component the library ships: its name (e.g. "FlatBuffers"), the URL it
    came from (no user-info) and the full SHA it is pinned at."""

    name: str
    url: str
    sha: str


@dataclass(frozen=True)
class LibraryFacts:
    """What a generated library says about itself.

    Attributes:
        library_version: library.properties' version= (None: no such line).
        pin: the full SHA of ExecuTorch it is generated from (None: unknown).
        executorch_url: where ExecuTorch came from; ref: the ref the build was given;
            upstream_version: the ref's version.txt (each None: unknown).
        components: the third-party components and their pins, in PROVENANCE's order.
        op_set: how the op set was chosen (`OpSet.describe`); operators: its operators.
        kernels: the operator of each kernel the codegen sources register, in file order
            (an operator registered for two dtypes counts twice).
        prim_ops: the prim ops the ref registers (shipped always, no part of the op set).
        examples: the example sketches, in the library's order.
        from_file: whether these came from extras/library.json (False: the fallback reading).
    """

    library_version: str | None
    pin: str | None
    executorch_url: str | None = None
    ref: str | None = None
    upstream_version: str | None = None
    components: tuple[ComponentPin, ...] = ()
    op_set: str | None = None
    operators: tuple[str, ...] = ()
    kernels: tuple[str, ...] = ()
    prim_ops: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    from_file: bool = False

    def to_json(self) -> str:
        """extras/library.json's text: sorted keys, two-space indent, a trailing newline."""
        data = {
            "format": FORMAT,
            "library": {"name": LIBRARY_NAME, "version": self.library_version},
            "executorch": {
                "url": self.executorch_url,
                "sha": self.pin,
                "ref": self.ref,
                "upstream_version": self.upstream_version,
            },
            "components": [{"name": c.name, "url": c.url, "sha": c.sha} for c in self.components],
            "op_set": {"description": self.op_set, "operators": list(self.operators)},
            "kernels": list(self.kernels),
            "prim_ops": list(self.prim_ops),
            "examples": list(self.examples),
        }
        return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def parse_facts(text: str) -> LibraryFacts | None:
    """The facts of an extras/library.json text, or None when it is not what
    `LibraryFacts.to_json` writes (not JSON, another `format`, a field of the wrong type)."""
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return None
        et, op_set = data["executorch"], data["op_set"]
        facts = LibraryFacts(
            library_version=_str_or_none(data["library"]["version"]),
            pin=_str_or_none(et["sha"]),
            executorch_url=_str_or_none(et["url"]),
            ref=_str_or_none(et["ref"]),
            upstream_version=_str_or_none(et["upstream_version"]),
            components=tuple(
                ComponentPin(_str(c["name"]), _str(c["url"]), _str(c["sha"]))
                for c in data["components"]
            ),
            op_set=_str_or_none(op_set["description"]),
            operators=_strings(op_set["operators"]),
            kernels=_strings(data["kernels"]),
            prim_ops=_strings(data["prim_ops"]),
            examples=_strings(data["examples"]),
            from_file=True,
        )
    # json.JSONDecodeError is a ValueError; nesting deeper than the parser's stack, RecursionError.
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    return facts


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _str_or_none(value: Any) -> str | None:
    return None if value is None else _str(value)


def _strings(values: Any) -> tuple[str, ...]:
    if not isinstance(values, list):
        raise TypeError(f"expected a list, got {type(values).__name__}")
    return tuple(_str(v) for v in values)


def kernel_names(sources: Mapping[str, str]) -> list[str]:
    """Operator names registered by the codegen sources `{path: text}`, in file order (paths
    sorted), by `generator.library.layout.KERNEL_REGISTRATION`.

    A name appears once per kernel (an operator registered for two dtypes counts twice).
    """
    names: list[str] = []
    for path in sorted(sources):
        names += KERNEL_REGISTRATION.findall(sources[path])
    return names


def upstream_version_of(provenance: str | None) -> str | None:
    """The `upstream version:` of an extras/PROVENANCE.txt text, or None."""
    match = _UPSTREAM_LINE.search(provenance or "")
    return match.group(1) if match else None


#: What a pin is: a full commit SHA, as the build writes it.
_FULL_SHA = re.compile(r"[0-9a-f]{40}")


def read_facts(
    read: Callable[[str], str | None], read_under: Callable[[str], Mapping[str, str]]
) -> LibraryFacts:
    """The facts of one library, wherever its files are (a folder, a commit).

    Args:
        read: path relative to the library root -> its text, None when absent.
        read_under: folder relative to the root -> {path: text} of every file below it.
    Returns:
        extras/library.json's facts; without a usable one (absent, unreadable, or naming
        another pin or version than executorch_pin.txt and library.properties), the fallback
        reading (see the module docstring), `from_file` False. A pin file that does not hold
        a full commit SHA (edited by hand, damaged) gives the pin None; one in upper case is
        read lower-cased, as git spells it.
    """
    text = read(LIBRARY_FACTS_FILE)
    pin = (read(PIN_FILE) or "").strip().lower()  # git's own spelling of a SHA
    if not _FULL_SHA.fullmatch(pin):
        pin = ""  # not a commit: unknown, never passed on to git, a link or a message
    version = properties_version(read(PROPERTIES_FILE))
    if text is not None:
        facts = parse_facts(text)
        # The pin file and library.properties are what users and the Library Manager read:
        # a facts file that disagrees with them is stale (edited by hand), never believed.
        if facts is not None and (facts.pin, facts.library_version) == (pin or None, version):
            return facts
    return LibraryFacts(
        library_version=version,
        pin=pin or None,
        upstream_version=upstream_version_of(read(PROVENANCE_FILE)),
        kernels=tuple(kernel_names(read_under(CODEGEN_DIR))),
    )


def texts_under(library: Path, folder: str) -> dict[str, str]:
    """{path relative to `library` (POSIX): text} of every file below `library`/`folder`."""
    base = library / folder
    if not base.is_dir():
        return {}
    return {
        p.relative_to(library).as_posix(): p.read_text(encoding="utf-8", errors="replace")
        for p in sorted(base.rglob("*"))
        if p.is_file()
    }


def facts_in_folder(library: Path) -> LibraryFacts:
    """`read_facts` of the library in the folder `library`."""

    def read(path: str) -> str | None:
        file = library / path
        return file.read_text(encoding="utf-8", errors="replace") if file.is_file() else None

    return read_facts(read, lambda folder: texts_under(library, folder))
