"""Stage 1: the model check of the examples that carry a model (`model.h`), against the
library's kernel registration (`generator.pipeline.models.check_library_models`); no toolchain
needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from generator.library.layout import EXAMPLES, MODEL_ARRAY, MODEL_HEADER
from generator.pipeline.models import ModelCheckReport, check_library_models
from generator.util.errors import FatalError

#: Files of a sketch folder searched for `MODEL_ARRAY` (a sketch naming it carries a model).
_SKETCH_TEXT = (".ino", ".h", ".hpp", ".c", ".cpp")


def _needs_model(folder: Path) -> bool:
    """True for a standard example, or a sketch whose files name `MODEL_ARRAY`."""
    if folder.name in EXAMPLES:
        return True
    return any(
        path.suffix in _SKETCH_TEXT
        and path.is_file()
        and not path.name.startswith(".")
        and MODEL_ARRAY.encode() in path.read_bytes()
        for path in folder.iterdir()
    )


def model_check(
    library: Path, examples: Sequence[str]
) -> tuple[ModelCheckReport | None, list[str]]:
    """Stage 1 over the examples that carry a model (`model.h`).

    Returns:
        (the report, or None when no example carries a model; errors: one per example
        that uses a model but has no `model.h`, or why the check could not run).
    """
    errors = []
    with_model = []
    for name in examples:
        folder = library / "examples" / name
        if (folder / MODEL_HEADER).is_file():
            with_model.append(name)
        elif _needs_model(folder):
            errors.append(
                f"model check: examples/{name} has no {MODEL_HEADER}, so its model cannot be "
                f"checked (the sketch uses `{MODEL_ARRAY}`, or it is a standard example); the "
                f"generated header must be named {MODEL_HEADER}"
            )
    if not with_model:
        return None, errors
    try:
        return check_library_models(library, with_model), errors
    except FatalError as e:
        return None, [*errors, f"model check: {e}"]
