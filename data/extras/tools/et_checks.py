"""Check ExecuTorch programs against a generated library: what would fail on the board.

Python standard library only: this file ships in every generated Arduino library under
`extras/tools/` beside `et_pte.py`, `et_registration.py` and `et_model_h.py` and must run
there with no pip packages (Python 3.8 and newer). `check_models.py` is its command line; the
generator imports it too (generator/pipeline/models.py).

What it does:

* `check_model` compares the operators a program's kernel calls use, and how many arguments
  each call passes, with what the library registers (`et_registration.library_kernels`: its
  generated kernel registration and ExecuTorch's prim ops), so a mismatch is found before
  flashing a board; `check_backends` does the same for the backends of its delegates
  (`et_registration.registered_backends`).
* `check_library` runs both for each example's model.h of a library (or given `.pte`
  files), read through the library's own program reader.

Facts used, with their sources (ExecuTorch sources):

* Runtime errors (`runtime/core/error.h`): `OperatorMissing` = 0x14, returned by
  `Method::load` when a kernel is not registered; `InvalidProgram` = 0x23, returned by
  `Method::execute` when a generated kernel wrapper's `stack.size() == N` check fails;
  `NotFound` = 0x20, returned by `Method::load` for a delegate whose backend is not
  registered (runtime/executor/method.cpp, "Backend %s is not registered.").
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import et_model_h
except ImportError:  # imported by path from elsewhere: et_model_h.py is beside this file
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import et_model_h
import et_pte  # et_model_h imported these two: importable now
import et_registration

__all__ = [
    "BACKEND_CAUSE",
    "ERROR_INVALID_PROGRAM",
    "ERROR_NOT_FOUND",
    "ERROR_OPERATOR_MISSING",
    "LIBRARY_EXAMPLES_DIR",
    "LIKELY_CAUSE",
    "MISSING_CAUSE",
    "MISSING_PRIM_CAUSE",
    "PRIM_NAMESPACE",
    "MissingBackend",
    "ModelResult",
    "Problem",
    "check_backends",
    "check_library",
    "check_model",
    "check_program_bytes",
    "example_names",
]

#: ExecuTorch `Error::OperatorMissing` (runtime/core/error.h).
ERROR_OPERATOR_MISSING = 0x14
#: ExecuTorch `Error::InvalidProgram` (runtime/core/error.h).
ERROR_INVALID_PROGRAM = 0x23
#: ExecuTorch `Error::NotFound` (runtime/core/error.h), returned by `Method::load` for a
#: delegate whose backend is not registered (runtime/executor/method.cpp).
ERROR_NOT_FOUND = 0x20


# ---------------------------------------------------------------------------------------
# Kernel calls

#: Why a model's kernel calls and a library's registration disagree (argument counts).
LIKELY_CAUSE = (
    "the model was exported with a different ExecuTorch commit than the one the library "
    "was built from (see the pin in extras/PROVENANCE.txt); re-export the model with that "
    "commit, or regenerate the library from the exporter's commit"
)
#: Why an operator a model calls is not registered, and what to do: first what a user of the
#: library as published (Library Manager) can do, then regenerating it, for its maintainers.
#: (`--ops` is not offered: it replaces the root ops, so the operators the other models need
#: would go.) Only advice that can apply to the operator is given (`missing_cause`).
MISSING_CAUSE = (
    "the library's op set does not include it (its operators are listed in "
    "extras/PROVENANCE.txt, 'operators'). Without regenerating the library: change the "
    "PyTorch construct that lowers to it (export_model.py names it) to one whose operators "
    "are listed, then check the model again. For the library's maintainers: regenerate it "
    "with --ops-from-pte naming this model and every other model the library must run (the "
    "build names any operator the pinned ExecuTorch has no kernel for). Or the model was "
    "exported with a different ExecuTorch commit than the library's pin "
    "(extras/PROVENANCE.txt)"
)
#: The portable operators that ExecuTorch's Cortex-M int8 passes replace with cortex_m::
#: operators (which every library registers): the aten ops that
#: backends/cortex_m/passes/aten_to_cortex_m_pass.py (cff6f4dd) rewrites, by their portable
#: kernels' names (linear as the addmm/mm a float export lowers it to).
QUANTIZER_REPLACES = frozenset(
    {
        "aten::_softmax.out",
        "aten::add.out",
        "aten::addmm.out",
        "aten::avg_pool2d.out",
        "aten::bmm.out",
        "aten::constant_pad_nd.out",
        "aten::convolution.out",
        "aten::div.out",
        "aten::gelu.out",
        "aten::linear.out",
        "aten::max_pool2d_with_indices.out",
        "aten::maximum.out",
        "aten::minimum.out",
        "aten::mm.out",
        "aten::mul.out",
        "aten::permute_copy.out",
        "aten::sigmoid.out",
        "aten::silu.out",
        "aten::tanh.out",
    }
)
#: Added to MISSING_CAUSE for an operator of QUANTIZER_REPLACES.
QUANTIZE_ADVICE = (
    "; or export it int8 (export_model.py --quantize int8): the Cortex-M quantizer replaces "
    "this operator with a cortex_m:: one every library registers"
)


def missing_cause(operator: str) -> str:
    """Why `operator` (a full name, "aten::any.out") is not registered and what to do:
    MISSING_CAUSE, plus QUANTIZE_ADVICE when the int8 export replaces it."""
    return MISSING_CAUSE + (QUANTIZE_ADVICE if operator in QUANTIZER_REPLACES else "")


#: The namespace of ExecuTorch's prim ops (symbolic-size arithmetic, et_view, et_copy_index).
PRIM_NAMESPACE = "executorch_prim::"
#: Why a prim op is not registered: no op set holds prim ops, the library's copy of
#: register_prim_ops.cpp registers them all.
MISSING_PRIM_CAUSE = (
    "it is one of ExecuTorch's prim ops, which a library registers from its copy of "
    "kernels/prim_ops/register_prim_ops.cpp, not from its op set; this library's copy does "
    "not register it: the library predates shipping prim ops (regenerate it), or the model "
    "was exported with a newer ExecuTorch than the library's pin (extras/PROVENANCE.txt): "
    "regenerate the library from the exporter's commit, or re-export the model with the pin"
)


@dataclass(frozen=True)
class Problem:
    """One reason a model would fail on the library.

    Attributes:
        method: the method ("forward"); operator: its full name.
        error: the ExecuTorch error the runtime would return: "OperatorMissing" (at
            `Method::load`) or "InvalidProgram" (at `Method::execute`).
        code: that error's value (0x14 or 0x23).
        model_args: arguments the model's call supplies.
        library_args: arguments the registered kernel expects (None when not registered).
        calls: how many kernel calls in the method hit this problem.
    """

    method: str
    operator: str
    error: str
    code: int
    model_args: int
    library_args: int | None
    calls: int = 1

    @property
    def message(self) -> str:
        """One line naming the operator, the numbers, the runtime error and the cause."""
        if self.library_args is None:
            what = (
                f"{self.operator} is not registered in the library: Method::load fails "
                f"with {self.error} (0x{self.code:02x})"
            )
        else:
            what = (
                f"{self.operator}: model supplies {self.model_args} arguments, library "
                f"expects {self.library_args}: Method::execute fails with {self.error} "
                f"(0x{self.code:02x})"
            )
        times = f" [{self.calls} calls in {self.method}]" if self.calls > 1 else f" [{self.method}]"
        return f"{what}{times}; likely cause: {self.cause}"

    @property
    def cause(self) -> str:
        """The likely cause and what to do (`missing_cause`, MISSING_PRIM_CAUSE, LIKELY_CAUSE)."""
        if self.library_args is not None:
            return LIKELY_CAUSE
        if self.operator.startswith(PRIM_NAMESPACE):
            return MISSING_PRIM_CAUSE
        return missing_cause(self.operator)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields plus `message`."""
        return {
            "method": self.method,
            "operator": self.operator,
            "error": self.error,
            "code": self.code,
            "model_args": self.model_args,
            "library_args": self.library_args,
            "calls": self.calls,
            "cause": self.cause,
            "message": self.message,
        }


#: How a problem's `message` ends: its cause, after this.
CAUSE_SEPARATOR = "; likely cause: "


def problem_lines(problems: Sequence[Any], origins: Mapping[str, str] | None = None) -> list[str]:
    """The lines that describe `problems` (Problem, MissingBackend, et_dtypes.DtypeProblem:
    anything with `message` ending in CAUSE_SEPARATOR + `cause`), each cause said once.

    One problem: its `message`. More: each problem's message without its cause, in order,
    then one line per distinct cause, "likely cause of A, B: ...", naming the operators (or
    backends) it explains. With `origins` (operator -> the PyTorch construct that produced
    it, e.g. "nn.MultiheadAttention self_attn", which only the exporter can read from the
    exported graph), each operator's line names it.
    """
    whats: list[str] = []
    causes: dict[str, list[str]] = {}
    for p in problems:
        name = str(getattr(p, "operator", "") or getattr(p, "backend", ""))
        suffix = CAUSE_SEPARATOR + p.cause
        what = p.message[: -len(suffix)] if p.message.endswith(suffix) else p.message
        origin = (origins or {}).get(name)
        whats.append(f"{what} (from {origin})" if origin else what)
        causes.setdefault(p.cause, [])
        if name not in causes[p.cause]:
            causes[p.cause].append(name)
    if len(whats) == 1:
        return [f"{whats[0]}{CAUSE_SEPARATOR}{problems[0].cause}"]
    return whats + [f"likely cause of {', '.join(n)}: {c}" for c, n in causes.items()]


def check_model(program: et_pte.Program, kernels: dict[str, int]) -> list[Problem]:
    """Compare every kernel call of `program` with the library's `kernels`.

    Args:
        program: from `et_pte.read_program`.
        kernels: from `et_registration.library_kernels` (operator -> expected argument count).

    Returns:
        Problems in call order, one per (method, operator, supplied count), with how many
        calls share it; empty when the model's kernel calls all match. Delegate calls
        are not checked (the library registers no delegate backends by codegen).
    """
    found: dict[tuple[str, str, int], Problem] = {}
    for method in program.methods:
        for call in method.kernel_calls:
            key = (method.name, call.operator, call.arg_count)
            expected = kernels.get(call.operator)
            if expected == call.arg_count:
                continue
            if key in found:
                p = found[key]
                found[key] = Problem(
                    p.method,
                    p.operator,
                    p.error,
                    p.code,
                    p.model_args,
                    p.library_args,
                    p.calls + 1,
                )
                continue
            if expected is None:
                found[key] = Problem(
                    method.name,
                    call.operator,
                    "OperatorMissing",
                    ERROR_OPERATOR_MISSING,
                    call.arg_count,
                    None,
                )
            else:
                found[key] = Problem(
                    method.name,
                    call.operator,
                    "InvalidProgram",
                    ERROR_INVALID_PROGRAM,
                    call.arg_count,
                    expected,
                )
    return list(found.values())


# ---------------------------------------------------------------------------------------
# Delegates

#: Why a model delegates to a backend the library does not register.
BACKEND_CAUSE = (
    "the model was lowered to that backend (with its partitioner, e.g. XnnpackPartitioner); "
    "export it without the partitioner (to_edge(...).to_executorch()) so that it runs on the "
    "library's kernels, and regenerate the library with --ops-from-pte naming it and every "
    "other model the library must run"
)


@dataclass(frozen=True)
class MissingBackend:
    """A delegate of a method whose backend the library does not register.

    `Method::load` initializes every delegate of the method and fails for this one with
    NotFound (0x20), logging "Backend <id> is not registered."

    Attributes:
        method: the method ("forward"); backend: the delegate's backend id.
        registered: the backends the library registers (see `et_registration.registered_backends`).
        delegates: how many delegates of the method use this backend.
    """

    method: str
    backend: str
    registered: tuple[str, ...] = ()
    delegates: int = 1
    error: str = "NotFound"
    code: int = ERROR_NOT_FOUND

    @property
    def message(self) -> str:
        """One line naming the backend, what the library registers, the error and the cause."""
        have = (
            f"it registers {', '.join(self.registered)}"
            if self.registered
            else "it registers no backend"
        )
        times = (
            f" [{self.delegates} delegates in {self.method}]"
            if self.delegates > 1
            else f" [{self.method}]"
        )
        return (
            f"delegates to backend {self.backend or '(no id)'}, which the library does not "
            f"register ({have}): Method::load fails with {self.error} (0x{self.code:02x}), "
            f'"Backend {self.backend} is not registered."{times}; likely cause: {self.cause}'
        )

    @property
    def cause(self) -> str:
        """The likely cause and what to do (BACKEND_CAUSE)."""
        return BACKEND_CAUSE

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields plus `message`."""
        return {
            "method": self.method,
            "backend": self.backend,
            "registered": list(self.registered),
            "delegates": self.delegates,
            "error": self.error,
            "code": self.code,
            "cause": self.cause,
            "message": self.message,
        }


def check_backends(program: et_pte.Program, backends: tuple[str, ...]) -> list[MissingBackend]:
    """Every delegate of `program` (Program.execution_plan[].delegates[].id) whose backend
    is not among `backends`, one per (method, backend), in the order the delegates appear."""
    found: dict[tuple[str, str], MissingBackend] = {}
    for method in program.methods:
        for backend in method.delegates:
            if backend in backends:
                continue
            key = (method.name, backend)
            previous = found.get(key)
            found[key] = MissingBackend(
                method.name, backend, backends, previous.delegates + 1 if previous else 1
            )
    return list(found.values())


# ---------------------------------------------------------------------------------------
# A generated library's examples

#: Where a generated library keeps its examples (`<Name>/<Name>.ino` and `<Name>/model.h`).
LIBRARY_EXAMPLES_DIR = "examples"


@dataclass(frozen=True)
class ModelResult:
    """The check of one model against a library.

    Attributes:
        name: the example name, or the `.pte` file name for `--pte` models.
        source: the file read (`examples/<Name>/model.h` or the `.pte`).
        methods: method names; operators: operators its kernel calls use, sorted.
        kernel_calls: number of kernel calls over all methods.
        problems: what would fail on the board (empty when it matches): kernel calls the
            library cannot serve, then delegates to backends it does not register.
        error: why the model could not be read at all ("" when it could).
        delegates: the backend ids of its delegates, sorted (empty: it runs on kernels only).
    """

    name: str
    source: str
    methods: tuple[str, ...] = ()
    operators: tuple[str, ...] = ()
    kernel_calls: int = 0
    problems: tuple[Problem | MissingBackend, ...] = ()
    error: str = ""
    delegates: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        """Readable and without problems."""
        return not self.error and not self.problems

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields plus `passed`."""
        return {
            "name": self.name,
            "source": self.source,
            "passed": self.passed,
            "methods": list(self.methods),
            "operators": list(self.operators),
            "kernel_calls": self.kernel_calls,
            "delegates": list(self.delegates),
            "problems": [p.to_dict() for p in self.problems],
            "error": self.error,
        }


def example_names(library_dir: str | Path) -> list[str]:
    """The examples of a library: folders `examples/<Name>/` holding `<Name>.ino`, sorted."""
    folder = Path(library_dir) / LIBRARY_EXAMPLES_DIR
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if (p / f"{p.name}.ino").is_file())


def check_program_bytes(
    name: str,
    source: str,
    data: bytes,
    reader: et_pte.ProgramReader,
    kernels: dict[str, int],
    backends: tuple[str, ...] = (),
) -> ModelResult:
    """Read `data` (a `.pte`) through `reader` and check it against `kernels` and `backends`
    (the delegate backends the library registers); never raises et_pte.PteError.

    Returns:
        ModelResult; an unreadable program gives `error` set and `passed` False.
    """
    try:
        program = et_pte.read_program(data, reader)
    except et_pte.PteError as e:
        return ModelResult(name, source, error=f"not a readable .pte: {e}")
    calls = [c for m in program.methods for c in m.kernel_calls]
    problems: list[Problem | MissingBackend] = [*check_model(program, kernels)]
    problems += check_backends(program, backends)
    return ModelResult(
        name,
        source,
        methods=tuple(m.name for m in program.methods),
        operators=tuple(sorted({c.operator for c in calls})),
        kernel_calls=len(calls),
        problems=tuple(problems),
        delegates=tuple(sorted({d for m in program.methods for d in m.delegates})),
    )


def check_library(
    library_dir: str | Path,
    examples: list[str] | None = None,
    ptes: list[str | Path] | None = None,
) -> list[ModelResult]:
    """Check a generated library's example models (or given `.pte` files) against it.

    Reads each `examples/<Name>/model.h` (or each of `ptes`) through the library's program
    reader (`et_pte.LIBRARY_READER_DIR`, generated from its `extras/schema/`), and compares its
    kernel calls with the registration in `src/executorch/codegen/` and the prim ops of
    `et_registration.LIBRARY_PRIM_OPS` (see `et_registration.library_kernels`), and the
    backend of each of its delegates with those the library registers (see
    `et_registration.registered_backends`).

    Args:
        library_dir: the library root (holds library.properties).
        examples: example names to check; None: every example (see `example_names`).
            Ignored when `ptes` is given.
        ptes: `.pte` files to check instead of the examples' models.

    Returns:
        One ModelResult per example or `.pte`, in the order asked (examples sorted).

    Raises:
        SchemaError: the library's program reader is missing or does not import.
        RegistrationError: its kernel registration, prim ops or backend registrations
            are missing or unreadable.
        EtPteError: an example asked for does not exist, or the library has none.
    """
    root = Path(library_dir)
    reader = et_pte.load_reader(root / et_pte.LIBRARY_READER_DIR)
    kernels = et_registration.library_kernels(root)
    backends = et_registration.registered_backends(root)
    results: list[ModelResult] = []
    if ptes:
        for pte in ptes:
            path = Path(pte)
            try:
                data = et_pte.read_pte(path)
            except et_pte.PteError as e:
                results.append(ModelResult(path.name, str(path), error=str(e)))
                continue
            except OSError as e:
                results.append(ModelResult(path.name, str(path), error=f"cannot read: {e}"))
                continue
            results.append(
                check_program_bytes(path.name, str(path), data, reader, kernels, backends)
            )
        return results
    known = example_names(root)
    if not known:
        raise et_pte.EtPteError(
            f"{root / LIBRARY_EXAMPLES_DIR} holds no examples (<Name>/<Name>.ino)"
        )
    wanted = list(examples) if examples else known
    unknown = [e for e in wanted if e not in known]
    if unknown:
        raise et_pte.EtPteError(
            f"no example {', '.join(unknown)} in {root}; its examples are {', '.join(known)}"
        )
    for name in wanted:
        header = root / LIBRARY_EXAMPLES_DIR / name / et_model_h.MODEL_HEADER
        rel = f"{LIBRARY_EXAMPLES_DIR}/{name}/{et_model_h.MODEL_HEADER}"
        try:
            text = et_pte.read_model_h(header)
        except et_pte.PteError as e:
            results.append(ModelResult(name, rel, error=str(e)))
            continue
        except (OSError, UnicodeDecodeError) as e:
            results.append(ModelResult(name, rel, error=f"cannot read {rel}: {e}"))
            continue
        try:
            data = et_model_h.pte_from_model_h(text)
        except et_pte.PteError as e:
            results.append(ModelResult(name, rel, error=f"{rel}: {e}"))
            continue
        results.append(check_program_bytes(name, rel, data, reader, kernels, backends))
    return results
