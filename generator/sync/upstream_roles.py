"""What the library does with each file of ExecuTorch's `examples/arduino/` (`classify`): the
role each changed file has in the sync pull request's section on upstream changes
(`generator.sync.upstream`).

Each file's role comes from the tables the build itself reads, so the two cannot drift:
- used: the copy rules of `data/vendored/executorch.yaml` (`generator.pipeline.components`), and the
  examples' data of `generator.pipeline.examples` (`REF_EXAMPLES`, the `.pte` of each example of
  `generator.library.layout.EXAMPLES`, and `EXAMPLE_DATA`);
- superseded: the file of the same name in the generator's data (`data/library_template/`, a
  `.jinja` suffix aside, and the shipped tools in `extras/tools/`): an example's files by
  their path below its folder, other files by name (the shallowest match); plus `RENAMED`,
  upstream files that ours replace under another name;
- anything else: not used (nothing of the build reads it).
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache
from typing import Literal

from wcmatch import glob

from generator import data_dir
from generator.library.layout import EXAMPLES
from generator.pipeline.components import load_component
from generator.pipeline.examples import EXAMPLE_DATA, REF_EXAMPLES
from generator.pipeline.vendor import GLOB_FLAGS
from generator.util.markdown import inline_code
from generator.util.templates import TEMPLATE_SUFFIX

#: ExecuTorch's Arduino folder, relative to its repository root.
ARDUINO = "examples/arduino"
#: The model each example's model.h is made from, in its folder below `REF_EXAMPLES`
#: (`generator.pipeline.examples.plan_examples`; a test holds the two together).
REF_MODEL = "model.pte"
#: The generator's data folders whose files replace upstream's by name.
TEMPLATE_FOLDERS = ("library_template", "extras")
#: Upstream files that ours replace under another name (upstream path below `ARDUINO` ->
#: what replaces it). Source: pytorch/executorch `examples/arduino/` at 7525aa6f13eb (PR
#: #21995 head): `build_arduino_library.sh` assembles the library (the generator's `build`
#: does), `verify_models.py` checks the example models against the library's kernel wrappers
#: (the shipped `extras/tools/check_models.py` does).
RENAMED: dict[str, str] = {
    "build_arduino_library.sh": "the generator itself (`python -m generator build`)",
    "verify_models.py": "`data/extras/tools/check_models.py`",
}
Kind = Literal["used", "superseded", "unused"]


@dataclass(frozen=True)
class Role:
    """What the library does with an upstream file.

    Attributes:
        kind: "used" (the build reads it), "superseded" (ours replaces it), "unused".
        detail: Markdown: what reads it, or what replaces it ("" when unused for no reason
            worth saying).
    """

    kind: Kind
    detail: str = ""

    def describe(self) -> str:
        """The list's cell, e.g. "superseded by `data/library_template/src/ETModel.h`"."""
        lead = {"used": "used", "superseded": "superseded by", "unused": "not used"}[self.kind]
        if not self.detail:
            return lead
        return f"{lead} {self.detail}" if self.kind == "superseded" else f"{lead}: {self.detail}"


@cache
def _copy_matchers() -> tuple[tuple[str, str, glob.WcMatcher[str]], ...]:
    """(source folder, destination, matcher) of each copy rule of `data/vendored/executorch.yaml`
    (how `generator.pipeline.vendor.apply_rule` matches: globs relative to the source folder)."""
    rules = load_component("executorch").files
    return tuple(
        (
            r.source.strip("/"),
            r.dest,
            glob.compile(r.include, flags=GLOB_FLAGS, exclude=r.exclude or None),
        )
        for r in rules
    )


@cache
def _by_name() -> dict[str, str]:
    """File name (`.jinja` suffix aside) -> the shallowest generator data file of that name,
    as `<folder>/<path>` (e.g. "ETModel.h" -> "data/library_template/src/ETModel.h")."""
    found: dict[str, tuple[int, str]] = {}
    for folder in TEMPLATE_FOLDERS:
        root = data_dir(folder)
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root)
            if not path.is_file() or "__pycache__" in rel.parts or path.suffix == ".pyc":
                continue
            name = path.name.removesuffix(TEMPLATE_SUFFIX)
            shown = f"data/{folder}/{rel.as_posix()}"
            candidate = (len(rel.parts), shown)
            if name not in found or candidate < found[name]:
                found[name] = candidate
    return {name: shown for name, (_, shown) in found.items()}


def _template_example(example: str, rel: str) -> str | None:
    """Our file for `rel` below the example's folder (`data/library_template/examples/<example>/`,
    a `.jinja` suffix aside), as `data/library_template/...`, or None."""
    root = data_dir("library_template") / "examples" / example
    for candidate in (rel, rel + TEMPLATE_SUFFIX):
        if (root / candidate).is_file():
            return f"data/library_template/examples/{example}/{candidate}"
    return None


def classify(path: str) -> Role:
    """What the library does with the file `path` of ExecuTorch (from the repo root).

    Sources: the build's own tables (see the module docstring); nothing is read from git.
    """
    for source, dest, matcher in _copy_matchers():
        if path.startswith(source + "/") and matcher.match(path[len(source) + 1 :]):
            return Role("used", f"shipped as {inline_code(f'{dest}/{path[len(source) + 1 :]}')}")
    if path.startswith(REF_EXAMPLES + "/"):
        example, _, rel = path[len(REF_EXAMPLES) + 1 :].partition("/")
        if not rel:
            return Role("unused")
        if example not in EXAMPLES:
            return Role("unused", f"the library has no example {inline_code(example)}")
        if rel == REF_MODEL:
            return Role(
                "used",
                f"the {inline_code(example)} example's model (its `model.h` is made from it)",
            )
        if "/" not in rel and any(fnmatchcase(rel, p) for p in EXAMPLE_DATA.get(example, ())):
            return Role("used", f"copied into {inline_code(f'examples/{example}/')}")
        ours = _template_example(example, rel)
        return Role("superseded", inline_code(ours)) if ours else Role("unused")
    if path.startswith(ARDUINO + "/"):
        rel = path[len(ARDUINO) + 1 :]
        if rel in RENAMED:
            return Role("superseded", RENAMED[rel])
        ours = _by_name().get(rel.rsplit("/", 1)[-1])
        if ours:
            return Role("superseded", inline_code(ours))
    return Role("unused")
