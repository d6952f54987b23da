"""Step 11: the examples (planned in step 1, written here). Sketches are ours
(data/library_template/examples/); their data comes from the ref: each `model.h` is made from the
`.pte` the ref ships under `examples/arduino/examples/<Example>/`, and KeywordSpotting's MFCC
inputs are copied from there.
`.pth` and `.pte` files never land in the library.

A sketch with a board-fit block (`generator.pipeline.fit`: KeywordSpotting and AddModel, which
malloc
their model's arena) gets it written from the model.h it ships: the boards whose RAM for a
sketch is smaller than the arena, and one `#error` per such board, so the sketch stops at
compile time on them (issue 19). The text depends only on model.h and the board table.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from generator import data_dir
from generator.library.layout import EXAMPLES, MODEL_HEADER
from generator.pipeline import fit
from generator.pipeline.models import TOOLS_DIR, ops_in_pte, read_pte, write_model_header
from generator.util.atomic import write_atomic
from generator.util.cache import StepCache, code_version, tree_hash
from generator.util.confine import confined_dest, confined_file, confined_path
from generator.util.errors import FatalError
from generator.util.userpaths import input_file

TEMPLATE_EXAMPLES = data_dir("library_template") / "examples"
REF_EXAMPLES = "examples/arduino/examples"
#: How messages name the checkout the examples' files come from.
REF_WHAT = "the ExecuTorch ref's examples"

#: Data files an example copies from the ref's folder beside its .pte (globs).
EXAMPLE_DATA: dict[str, tuple[str, ...]] = {"KeywordSpotting": ("mfcc_*.h",)}


@dataclass(frozen=True)
class ExamplePlan:
    """Where one example's model comes from.

    Attributes:
        name: example (sketch folder) name.
        pte: the .pte its model.h is made from.
        origin: how PROVENANCE names that source (ref path, or "--example-pte FILE").
    """

    name: str
    pte: Path
    origin: str


def select_examples(requested: Sequence[str] | None) -> list[str]:
    """The examples to ship, in the library's order.

    Raises:
        FatalError: for a name that is not one of ours.
    """
    if requested is None:
        return list(EXAMPLES)
    unknown = [n for n in requested if n not in EXAMPLES]
    if unknown:
        raise FatalError(
            f"unknown example(s) {', '.join(unknown)} in --examples; the examples are "
            f"{', '.join(EXAMPLES)}"
        )
    if not requested:
        raise FatalError("--examples names no example; name at least one")
    return [n for n in EXAMPLES if n in requested]


def parse_example_pte(items: Sequence[str]) -> dict[str, Path]:
    """Parse `--example-pte NAME=FILE` items.

    Raises:
        FatalError: for an item without `=`, an unknown example or a missing file.
    """
    result: dict[str, Path] = {}
    for item in items:
        name, sep, file = item.partition("=")
        if not sep or not name or not file:
            raise FatalError(f"--example-pte {item!r} is not NAME=FILE (e.g. AddModel=add.pte)")
        if name not in EXAMPLES:
            raise FatalError(
                f"--example-pte names unknown example {name!r}; the examples are "
                f"{', '.join(EXAMPLES)}"
            )
        path = input_file(Path(file), f"--example-pte {name}=", "a .pte file")
        if name in result and result[name] != path.resolve():
            raise FatalError(f"--example-pte gives two models for {name}; give one")
        result[name] = path.resolve()
    return result


def plan_examples(
    root: Path, examples: Sequence[str], overrides: Mapping[str, Path]
) -> list[ExamplePlan]:
    """Find each example's .pte: an override, else the one the ref ships.

    Raises:
        FatalError: naming every example the ref ships no model (or data) for, and how to
            proceed (`--example-pte NAME=FILE` or `--examples NAME,...`); when a model or
            data file is a symbolic link out of the checkout or a special file.
    """
    plans: list[ExamplePlan] = []
    missing: list[str] = []
    for name in examples:
        if name in overrides:
            plans.append(
                ExamplePlan(name, overrides[name], f"--example-pte {overrides[name].name}")
            )
            continue
        shipped = confined_path(root, f"{REF_EXAMPLES}/{name}/model.pte", REF_WHAT)
        if shipped.is_file():
            plans.append(ExamplePlan(name, shipped, f"{REF_EXAMPLES}/{name}/model.pte"))
        else:
            missing.append(name)
    if missing:
        have = [n for n in examples if n not in missing]
        subset = f" or ship only the others with --examples {','.join(have)}" if have else ""
        raise FatalError(
            f"this ref ships no model (.pte) for example(s) {', '.join(missing)} under "
            f"{REF_EXAMPLES}/. Supply one with --example-pte NAME=FILE (exported with this same "
            f"ExecuTorch commit){subset}"
        )
    for name in examples:
        for pattern in EXAMPLE_DATA.get(name, ()):
            if not _example_data(root, name, pattern):
                raise FatalError(
                    f"example {name} needs {pattern} from {REF_EXAMPLES}/{name}/, which this "
                    f"ref does not ship; leave it out with --examples"
                )
    return plans


def write_examples(
    root: Path,
    library: Path,
    plans: Sequence[ExamplePlan],
    reader: Path,
    steps: StepCache | None = None,
) -> None:
    """Copy our sketches, make each model.h (selecting the kernels its model calls, read with
    the program reader at `reader`), copy the example data from the ref.

    Each model.h is a step-cache entry (`steps`; None: always made) keyed by what makes it:
    the .pte's bytes and file name (its banner names it), the program reader's files, the
    shipped tools' code (the `model.h` codec) and this step's code; a warm build writes the
    cached text.

    Then each sketch's board-fit block is written from that model.h's arena
    (`fit.render_fit`).

    Raises:
        FatalError: when our sketch for an example is missing or a .pte is unreadable, or
            a data file is a symbolic link out of the checkout or a special file.
    """
    made_by = {"reader": tree_hash(reader), "tools": _tools_digest()} if steps else {}
    for plan in plans:
        template = TEMPLATE_EXAMPLES / plan.name
        if not template.is_dir():
            raise FatalError(f"the sketch for {plan.name} is missing from {TEMPLATE_EXAMPLES}")
        dest = library / "examples" / plan.name
        shutil.copytree(template, dest)
        _write_model_header(plan, dest / MODEL_HEADER, reader, made_by, steps)
        _write_fit(dest / f"{plan.name}.ino", plan.name, dest / MODEL_HEADER)
        for pattern in EXAMPLE_DATA.get(plan.name, ()):
            for name, data in _example_data(root, plan.name, pattern):
                shutil.copyfile(data, confined_dest(dest, name, REF_WHAT))


def _example_data(root: Path, example: str, pattern: str) -> list[tuple[str, Path]]:
    """The ref's data files of `example` matching `pattern`: (name, confined path), by name.

    Raises:
        FatalError: when one is a symbolic link out of the checkout or a special file.
    """
    folder = confined_path(root, f"{REF_EXAMPLES}/{example}", REF_WHAT)
    if not folder.is_dir():
        return []
    return [
        (p.name, confined_file(root, f"{REF_EXAMPLES}/{example}/{p.name}", REF_WHAT))
        for p in sorted(folder.glob(pattern))
    ]


def _write_fit(sketch: Path, example: str, header: Path) -> None:
    """Write the board-fit block of `sketch` (when it has one) from `header`'s arena."""
    text = sketch.read_text(encoding="utf-8")
    if not fit.has_block(text):
        return
    try:
        arena = fit.arena_bytes(header.read_text(encoding="utf-8"))
    except ValueError as e:
        raise FatalError(f"{example}: {header}: {e}") from None
    write_atomic(sketch, fit.render_fit(text, example, arena))


def _tools_digest() -> str:
    """sha256 of the shipped tools' code (`extras/tools/*.py`, by name)."""
    digest = hashlib.sha256()
    for tool in sorted(TOOLS_DIR.glob("*.py")):
        digest.update(tool.name.encode() + b"\0" + tool.read_bytes() + b"\0")
    return digest.hexdigest()


def _write_model_header(
    plan: ExamplePlan, out: Path, reader: Path, made_by: dict[str, str], steps: StepCache | None
) -> None:
    """Write `plan`'s model.h to `out`, from the step cache when it holds it (`made_by`: the
    digests of the program reader and the tools, part of the key)."""
    key: dict[str, str] = {}
    if steps is not None:
        try:
            pte = hashlib.sha256(read_pte(plan.pte)).hexdigest()
        except FatalError:
            pte = ""  # write_model_header names the unreadable or too large file
        if pte:
            key = {
                "pte": pte,
                "source": plan.pte.name,  # model.h's banner names the file
                **made_by,
                "code": code_version("pipeline.examples", "pipeline.models", "library.layout"),
            }
            cached = steps.get("model-h", key, lambda v: v if isinstance(v, str) else None)
            if cached is not None:
                write_atomic(out, cached)
                return
    try:
        operators = ops_in_pte(plan.pte, reader)
    except FatalError as e:
        raise FatalError(f"{plan.name}: {e}") from None
    write_model_header(plan.pte, out, operators=operators, reader=reader)
    if steps is not None and key:
        steps.put("model-h", key, out.read_bytes().decode("utf-8"))


def copy_tools(library: Path) -> tuple[str, ...]:
    """Copy the generator's tools (`extras/tools/*.py`: pte_to_header, check_models, and the
    modules they share: et_pte, et_registration, et_model_h, et_checks, et_dtypes) into the
    library's `extras/tools/`.

    Returns:
        the names copied, sorted.
    """
    tools = library / "extras" / "tools"
    tools.mkdir(parents=True, exist_ok=True)
    names = []
    for tool in sorted(TOOLS_DIR.glob("*.py")):
        shutil.copyfile(tool, tools / tool.name)
        names.append(tool.name)
    return tuple(names)
