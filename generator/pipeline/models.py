"""Step 13: the model check (`model_check`), and the models (.pte) every step reads: embed
example models as model.h (step 11), read operators (step 4's `--ops-from-pte`: `ops_in_ptes`),
check models.

A typed wrapper over the stdlib-only modules of `extras/tools/` that every generated library
ships (so a user can run the same checks from the library with no pip packages): `et_pte.py`
(program reading), `et_registration.py`, `et_model_h.py`, `et_arena.py` (the arena a
program needs on the board), `et_checks.py`, `et_dtypes.py`.
Programs are read through a program reader (flatc's Python for the ref's schema, with
FlatBuffers' runtime: see generator/pipeline/reader.py): a library's own for the model check,
the one the build writes into the library for `--ops-from-pte`. Errors from it become
`FatalError` with a message saying what to do.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from generator import data_dir
from generator.library.layout import MODEL_ARRAY
from generator.util.atomic import write_atomic
from generator.util.cache import StepCache, code_version, tree_hash
from generator.util.errors import FatalError

#: The shipped tools folder: pte_to_header.py, check_models.py and the et_*.py they import.
TOOLS_DIR = data_dir("extras") / "tools"


def import_tool(path: Path) -> ModuleType:
    """Import the shipped tool module at `path` (e.g. `TOOLS_DIR / "et_pte.py"`) by path,
    under its file name, once; no `sys.path` entry is added.

    Raises:
        ImportError: when the file cannot be imported (a broken checkout of the generator).
    """
    name = path.stem
    loaded = sys.modules.get(name)
    if loaded is not None and Path(loaded.__file__ or "").resolve() == path.resolve():
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


if TYPE_CHECKING:
    import et_arena  # extras/tools (mypy_path)
    import et_checks
    import et_dtypes
    import et_model_h
    import et_pte
    import et_registration
else:  # each imports the ones before it
    et_pte = import_tool(TOOLS_DIR / "et_pte.py")
    et_registration = import_tool(TOOLS_DIR / "et_registration.py")
    et_model_h = import_tool(TOOLS_DIR / "et_model_h.py")
    et_arena = import_tool(TOOLS_DIR / "et_arena.py")
    et_checks = import_tool(TOOLS_DIR / "et_checks.py")
    et_dtypes = import_tool(TOOLS_DIR / "et_dtypes.py")


def read_pte(path: Path, what: str = ".pte") -> bytes:
    """The bytes of the `.pte` at `path`, sized before reading (`et_pte.MAX_PTE_BYTES`, the
    one limit, shared with the library's tools).

    Args:
        what: how the message names the file (".pte", "--dtypes-from-pte").

    Raises:
        FatalError: unreadable, or larger than the limit (one line: file, size, limit).
    """
    try:
        return et_pte.read_pte(path)
    except et_pte.PteError as e:
        raise FatalError(f"{what}: {e}") from None
    except OSError as e:
        raise FatalError(f"cannot read {what} {path}: {e.strerror or e}; check the path") from None


def check_pte_size(pte: Path, what: str) -> None:
    """Refuse, before any work, a `.pte` over `et_pte.MAX_PTE_BYTES` (by os.stat; no byte read).

    Args:
        what: the option that gave it ("--ops-from-pte"), for the message.

    Raises:
        FatalError: the file is larger than the limit (one line: option, file, size, limit).
    """
    try:
        size = pte.stat().st_size
    except OSError:
        return  # its reader names the unreadable file
    if size > et_pte.MAX_PTE_BYTES:
        raise FatalError(
            f"{what}: {pte} is {size:,} bytes, over the {et_pte.MAX_PTE_BYTES:,}-byte limit "
            f"for a .pte ({et_pte.MAX_PTE_BYTES // 2**20} MiB; the largest board's flash is "
            "~3 MiB): is it the right file?"
        )


def write_model_header(
    pte: Path,
    out: Path,
    name: str = MODEL_ARRAY,
    operators: Iterable[str] | None = None,
    reader: Path | None = None,
) -> int:
    """Write `out` (a model.h) embedding the bytes of `pte` as array `name`.

    The text comes from `et_model_h.model_h` (deterministic; 16-byte aligned inline const
    array plus `<name>_size`, the arena `<name>_arena_bytes` when `reader` is given (the
    32-bit board's, and a 64-bit host's for the check's host run: see
    `et_arena.method_arena`), then the kernel selection of `operators`, None: none, the
    library registers every kernel). Written to a temporary file beside `out`, then moved
    into place.

    Args:
        reader: the program reader (a library's `extras/tools/pte_schema/`) to read the
            program's memory plan and values with; None: no arena figure.

    Returns:
        The number of bytes embedded.

    Raises:
        FatalError: `pte` unreadable, not a program of `reader`'s schema, or `name` not a
            C identifier.
    """
    data = read_pte(pte)
    arena_bytes, arena_note, host_arena_bytes = None, "the program was not read", None
    if reader is not None:
        try:
            program_reader = et_pte.load_reader(reader)
            arena_bytes, arena_note = et_arena.for_model_h(data, program_reader)
            host_arena_bytes = et_arena.host_arena_bytes(data, program_reader)
        except et_pte.EtPteError as e:
            raise FatalError(
                f"cannot derive the arena of {pte}: {e}; re-export it with the ExecuTorch "
                "the library is built from"
            ) from None
    try:
        text = et_model_h.model_h(
            data,
            name=name,
            source=pte.name,
            operators=operators,
            arena_bytes=arena_bytes,
            arena_note=arena_note,
            host_arena_bytes=host_arena_bytes,
        )
    except ValueError as e:
        raise FatalError(f"cannot embed {pte}: {e}") from None
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, text)  # normal file permissions, not mkstemp's 0600
    return len(data)


def read_program(pte: Path, reader: Path) -> et_pte.Program:
    """Read `pte` through the program reader package at `reader` (a library's
    `extras/tools/pte_schema/`, see generator/pipeline/reader.py).

    Raises:
        FatalError: the file is unreadable, `reader` holds no reader, or the file is not a
            program of its schema (the message names the byte position).
    """
    data = read_pte(pte)
    try:
        program_reader = et_pte.load_reader(reader)
    except et_pte.SchemaError as e:
        raise FatalError(f"cannot read the ExecuTorch schema: {e}") from None
    try:
        return et_pte.read_program(data, program_reader)
    except et_pte.PteError as e:
        raise FatalError(
            f"{pte} is not a readable ExecuTorch program: {e}; is it a .pte? Re-export it "
            "with the ExecuTorch the library is built from (another one's schema may differ)"
        ) from None
    except et_pte.SchemaError as e:
        raise FatalError(f"cannot read {pte} with the ExecuTorch schema: {e}") from None


def ops_in_pte(pte: Path, reader: Path) -> set[str]:
    """Operators the kernel calls of `pte` use, as registry names ("aten::add.out").

    For `--ops-from-pte`: every method's kernel calls (delegate calls need no kernel).
    `reader`: the program reader generated from the ref's schema (see `read_program`).

    Raises:
        FatalError: see `read_program`.
    """
    program = read_program(pte, reader)
    return set(program.called_operators)


def ops_in_ptes(ptes: Sequence[Path], reader: Path) -> list[str] | None:
    """The operators the `--ops-from-pte` models `ptes` call, sorted (None: no model given);
    `reader` is the program reader of the ref's schema.

    Raises:
        FatalError: see `read_program`.
    """
    if not ptes:
        return None
    found: set[str] = set()
    for pte in ptes:
        found |= ops_in_pte(pte, reader)
    return sorted(found)


def registered_prim_ops(source: Path) -> dict[str, int]:
    """The prim ops `source` (a `register_prim_ops.cpp`) registers, with their argument counts.

    Raises:
        FatalError: the file cannot be read as a prim ops registration (see
            `et_registration.registered_prim_ops`); a missing file registers none.
    """
    try:
        return et_registration.registered_prim_ops(source)
    except (OSError, et_pte.EtPteError) as e:
        raise FatalError(f"cannot read ExecuTorch's prim ops: {e}") from None


@dataclass
class ModelCheckReport:
    """The model check of one library.

    Attributes:
        library: the library root checked.
        results: one per example model (or .pte), in order.
        kernels: operators the library registers (codegen kernels and prim ops).
        backends: the delegate backends the library registers (none today).
    """

    library: Path
    results: list[et_checks.ModelResult] = field(default_factory=list)
    kernels: int = 0
    backends: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        """True when every model was readable and matches the library."""
        return all(r.passed for r in self.results)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: library, passed, kernels, backends, models (see `ModelResult.to_dict`)."""
        return {
            "library": str(self.library),
            "passed": self.passed,
            "kernels": self.kernels,
            "backends": list(self.backends),
            "models": [r.to_dict() for r in self.results],
        }

    def to_markdown(self) -> str:
        """A Markdown section for the sync PR: a table, then each problem, then the cause."""
        lines = [
            "### Model check",
            "",
            "| example | result | kernel calls | operators |",
            "|---|---|---|---|",
        ]
        for r in self.results:
            result = "ok" if r.passed else ("unreadable" if r.error else "FAIL")
            ops = ", ".join(f"`{op}`" for op in r.operators) or "-"
            if r.delegates:
                ops += "; delegates to " + ", ".join(f"`{d}`" for d in r.delegates)
            lines.append(f"| {r.name} | {result} | {r.kernel_calls} | {ops} |")
        problems = [
            (r.name, line) for r in self.results for line in et_checks.problem_lines(r.problems)
        ]
        problems += [(r.name, r.error) for r in self.results if r.error]
        if problems:
            lines.append("")
            lines.extend(f"- **{name}**: {message}" for name, message in problems)
        return "\n".join(lines) + "\n"


def check_library_models(
    library: Path, examples: Sequence[str] | None = None, ptes: Sequence[Path] = ()
) -> ModelCheckReport:
    """Check the example models of the library at `library` against its kernel registration.

    Each `examples/<Name>/model.h` is read through the library's program reader
    (`extras/tools/pte_schema/`, generated from its `extras/schema/`), its kernel calls
    compared with `src/executorch/codegen/Register*Kernels*.cpp` and the prim ops of
    `kernels/prim_ops/register_prim_ops.cpp` (operator registered; argument count equal),
    and its delegates' backends with those the library registers (none today). See
    `et_checks.check_library`. A library built with `--dtypes`/`--dtypes-from-pte` also gets
    each call passing a dtype its kernel was built without (`et_dtypes.add_dtype_problems`).

    Args:
        library: the generated library root.
        examples: example names; None: every example the library has.
        ptes: `.pte` files checked too, after the examples (the build's `--ops-from-pte`
            models).

    Returns:
        ModelCheckReport (`.passed` False when any model mismatches or is unreadable).

    Raises:
        FatalError: the library's program reader or registration is missing or unreadable,
            or an example asked for does not exist.
    """
    try:
        results = et_checks.check_library(library, list(examples) if examples else None)
        if ptes:
            results += et_checks.check_library(library, ptes=list(ptes))
        # A dtype-selective library (--dtypes): the calls passing a dtype it left out.
        results = et_dtypes.add_dtype_problems(library, results)
        kernels = len(et_registration.library_kernels(library))
        backends = et_registration.registered_backends(library)
    except et_pte.EtPteError as e:
        raise FatalError(f"cannot check the models of {library}: {e}") from None
    return ModelCheckReport(library, results, kernels, backends)


def model_check(library: Path, ptes: tuple[Path, ...], steps: StepCache) -> None:
    """Step 13: a library whose examples (or `--ops-from-pte` models `ptes`) cannot run on it
    must not be written: kernels, prim ops and delegate backends are all checked
    (`check_library_models`).

    A pass is a step-cache entry (`steps`) keyed by everything the check reads: the whole
    library tree as it stands (its models, registration, prim ops, program reader and tools),
    the `.pte` files' bytes, and the code of `generator/pipeline/models.py`; a failure is never
    cached, so its messages always come from a fresh check.

    Raises:
        FatalError: naming each problem and the ways out.
    """
    key = _model_check_key(library, ptes) if steps.root is not None else None
    if key is not None and steps.get("model-check", key, lambda v: v if v is True else None):
        return
    models = check_library_models(library, ptes=ptes)
    if models.passed:
        if key is not None:
            steps.put("model-check", key, True)
        return
    problems = [
        f"  {r.name}: {line}"
        for r in models.results
        for line in et_checks.problem_lines(r.problems)
    ] + [f"  {r.name}: {r.error}" for r in models.results if r.error]
    # Not --all-ops: it builds, but twice over the UNO Q's flash.
    raise FatalError(
        "the models do not run on this library:\n"
        + "\n".join(problems)
        + "\nEach problem's likely cause is said once, after it or after the problems it "
        "explains. To build anyway: widen the op set "
        "for a missing operator (--ops-from-pte naming every model the library must "
        "run) or the dtypes for a dtype left out (--dtypes-from-pte naming them too), "
        "leave the example out (--examples), or give it a model that runs here "
        "(--example-pte NAME=FILE)"
    )


def _model_check_key(library: Path, ptes: tuple[Path, ...]) -> dict[str, Any] | None:
    """The model check's step-cache key, or None when a `.pte` cannot be read (the check
    itself then names it)."""
    try:
        digests = [hashlib.sha256(read_pte(p)).hexdigest() for p in ptes]
    except FatalError:
        return None
    return {
        "library": tree_hash(library),
        "ptes": digests,
        "code": code_version("pipeline.models", "library.layout"),
    }
