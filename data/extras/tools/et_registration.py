"""Read a generated library's kernel registration; the kernel selection symbols.

Python standard library only: this file ships in every generated Arduino library under
`extras/tools/` beside `et_pte.py` and must run there with no pip packages (Python 3.8 and
newer). The generator imports it too (generator/pipeline/models.py,
generator/pipeline/selection.py).

What it does:

* `registered_kernels` / `registered_prim_ops` / `library_kernels` read which operators a
  library registers, and how many arguments each kernel wrapper accepts: from ExecuTorch's
  generated registration sources (`src/executorch/codegen/Register*Kernels*.cpp`) and the
  library's copy of `kernels/prim_ops/register_prim_ops.cpp`.
* `registered_backends` reads the delegate backends a library's sources register.
* `kernel_symbol` and the `*_PREFIX` / `*_SYMBOL` names are the C symbols of kernel selection,
  shared by the model.h that `et_model_h.py` writes and the registration sources that
  generator/pipeline/selection.py writes into the library.

Facts used, with their sources (ExecuTorch sources):

* Kernel registration (codegen/templates via `codegen/gen.py`): each kernel is
  `Kernel("op", [](KernelRuntimeContext& context, Span<EValue*> stack) {...})` whose wrapper
  checks `stack.size() == N`, failing with `InvalidProgram` otherwise.
* Backend registration (runtime/backend/interface.h): `register_backend(Backend{id, &impl})`.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import et_pte
except ImportError:  # imported by path from elsewhere: et_pte.py is beside this file
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import et_pte

__all__ = [
    "FALLBACK_SYMBOL",
    "KERNEL_REGISTRATION",
    "LIBRARY_CODEGEN_DIR",
    "LIBRARY_PRIM_OPS",
    "REGISTER_ALL_SYMBOL",
    "REGISTER_PREFIX",
    "REGISTRATION_GLOB",
    "SELECT_ALL_SYMBOL",
    "SELECT_PREFIX",
    "RegistrationError",
    "kernel_symbol",
    "library_kernels",
    "registered_backends",
    "registered_kernels",
    "registered_prim_ops",
]


class RegistrationError(et_pte.EtPteError):
    """The library's generated kernel registration sources could not be read."""


#: Where a generated library keeps its registration; must match generator/library/layout.py (a test
#: checks). The codegen's kernel registration sources:
LIBRARY_CODEGEN_DIR = "src/executorch/codegen"
#: ExecuTorch's prim ops registration (not the codegen; with kernel selection they register
#: together before the runtime's first registry lookup, when a model.h selects one of them).
LIBRARY_PRIM_OPS = "src/executorch/kernels/prim_ops/register_prim_ops.cpp"


# ---------------------------------------------------------------------------------------
# Kernel selection symbols

#: Kernel selection symbols (C linkage), shared by model.h and the library's generated
#: sources in src/executorch/codegen/ (generator/pipeline/selection.py writes those):
#: `et_arduino_register_<op>` registers one operator's kernels (library, one archive member
#: per operator); `et_arduino_select_<op>` is what the runtime's registry hook calls for each
#: operator: a model.h defines it (weak) to call the register function, else the library's
#: default member defines it empty; `et_arduino_kernels_fallback` is defined (weak, empty) by
#: every selecting model.h, else the library's member registers every kernel (a model.h from
#: before kernel selection, or pte_to_header.py --all-kernels).
REGISTER_PREFIX = "et_arduino_register_"
SELECT_PREFIX = "et_arduino_select_"
FALLBACK_SYMBOL = "et_arduino_kernels_fallback"
#: `et_arduino_select_all_kernels`: what a model.h that cannot or must not select (written with
#: --all-kernels, or without reading the program) defines (weak), calling the library's
#: `et_arduino_register_all_kernels` (in the fallback's member): every kernel registers even
#: beside model.h files that select theirs.
SELECT_ALL_SYMBOL = "et_arduino_select_all_kernels"
REGISTER_ALL_SYMBOL = "et_arduino_register_all_kernels"


def kernel_symbol(operator: str) -> str:
    """The C identifier part naming `operator` in the kernel selection symbols.

    "aten::add.out" -> "aten_add_out", "cortex_m::quantized_add.out" ->
    "cortex_m_quantized_add_out": "::" and every character that cannot be in a C identifier
    become "_". The generator refuses a library whose operators collide under this mapping.

    Raises:
        ValueError: `operator` is empty or has no identifier character.
    """
    symbol = re.sub(r"[^A-Za-z0-9_]", "_", operator.replace("::", "_"))
    if not operator or not symbol.strip("_"):
        raise ValueError(f"operator name {operator!r} cannot be a kernel selection symbol")
    return symbol


# ---------------------------------------------------------------------------------------
# Kernel registration

#: `Kernel("op", ...`: must match generator/library/layout.py KERNEL_REGISTRATION (a test checks).
KERNEL_REGISTRATION = re.compile(r'\bKernel\s*\(\s*"(?P<name>[^"]+)"')
_STACK_SIZE = re.compile(r"stack\.size\(\)\s*==\s*(?P<n>\d+)")
#: Must match generator/library/layout.py REGISTRATION_GLOB (a test checks).
REGISTRATION_GLOB = "Register*Kernels*.cpp"


def registered_kernels(codegen_dir: str | Path) -> dict[str, int]:
    """Operators the library registers and the argument count each kernel wrapper demands.

    Reads ExecuTorch's generated registration sources (`Register*Kernels*.cpp` under
    `codegen_dir`), where every kernel is written as (codegen/templates via
    `codegen/gen.py`):

        Kernel(
            "aten::add.out",
            [](torch::executor::KernelRuntimeContext & context, Span<EValue*> stack) {
                ET_KERNEL_CHECK_MSG(context, stack.size() == 5, InvalidProgram, ...

    Returns:
        operator full name ("aten::add.out") -> stack size the wrapper accepts.

    Raises:
        RegistrationError: no registration sources; sources present but no kernel or no
            `stack.size() == N` found (the codegen format changed: a bug in this tool,
            not a passing check); one operator registered with two different counts.
    """
    folder = Path(codegen_dir)
    sources = sorted(folder.glob(REGISTRATION_GLOB))
    if not sources:
        raise RegistrationError(
            f"no kernel registration sources ({REGISTRATION_GLOB}) under {folder}; "
            "is this a generated library?"
        )
    kernels: dict[str, int] = {}
    for path in sources:
        text = path.read_text(encoding="utf-8", errors="replace")
        starts = list(KERNEL_REGISTRATION.finditer(text))
        for k, m in enumerate(starts):
            end = starts[k + 1].start() if k + 1 < len(starts) else len(text)
            op = m.group("name")
            n = _stack_size(text, f"{path}: kernel {op}", m.end(), end)
            if n is None:
                raise RegistrationError(
                    f"{path}: kernel {op} has no `stack.size() == N` check; the ExecuTorch "
                    "codegen format changed and et_registration.py needs updating (a bug in this "
                    "tool, not a passing check)"
                )
            if kernels.get(op, n) != n:
                raise RegistrationError(
                    f"{path}: {op} is registered with {kernels[op]} and {n} arguments; "
                    "the library is inconsistent"
                )
            kernels[op] = n
    if not kernels:
        names = ", ".join(p.name for p in sources)
        raise RegistrationError(
            f'found no `Kernel("op", ... stack.size() == N` registrations in {names}; '
            "the ExecuTorch codegen format changed and et_registration.py needs updating (a bug in "
            "this tool, not a passing check)"
        )
    return kernels


#: A `#define NAME(...) body` with its continuation lines.
_DEFINE = re.compile(
    r"^[ \t]*#[ \t]*define[ \t]+(?P<name>\w+)(?P<body>(?:[^\n]*\\\n)*[^\n]*)", re.M
)
#: `Kernel("op", function)`: a kernel whose wrapper is a named function, not a lambda.
_KERNEL_FUNCTION = re.compile(r'\bKernel\s*\(\s*"[^"]+"\s*,\s*(?P<fn>[A-Za-z_]\w*)\s*\)')
#: `name(`: a call of a macro or function (or a definition's head).
_CALL = re.compile(r"\b(?P<name>[A-Za-z_]\w*)\s*\(")
#: `name(parameters) {`: a function definition's head. No parenthesis in the parameters:
#: with one, each `name(` of a long run of them would scan to the end (quadratic time).
_FUNCTION_HEAD = re.compile(r"\b(?P<name>[A-Za-z_]\w*)\s*\([^;{}()]*\)\s*\{")


def _stack_size(text: str, where: str, start: int = 0, end: int | None = None) -> int | None:
    """N of the first `stack.size() == N` in text[start:end], or None.

    Raises:
        RegistrationError: N is not a count (thousands of digits); the message starts with
            `where` (the file and the kernel, macro or function).
    """
    m = _STACK_SIZE.search(text, start, len(text) if end is None else end)
    if m is None:
        return None
    digits = m.group("n")
    if len(digits) > 9:  # int() refuses 4,300 digits and more; no stack holds 10**9 values
        raise RegistrationError(
            f"{where}: `stack.size() == {digits[:12]}...` is not an argument count; the "
            "source is damaged: regenerate the library"
        )
    return int(digits)


def _macro_stack_sizes(text: str, path: Path) -> dict[str, int]:
    """Macros whose expansion checks `stack.size() == N`, directly or through another macro
    (a macro calling several takes the size of the nearest one that checks)."""
    bodies = {m.group("name"): m.group("body") for m in _DEFINE.finditer(text)}
    sizes: dict[str, int] = {}
    callers: dict[str, list[str]] = {}
    for name, body in bodies.items():
        n = _stack_size(body, f"{path}: macro {name}")
        if n is not None:
            sizes[name] = n
            continue
        for called in dict.fromkeys(c.group("name") for c in _CALL.finditer(body)):
            if called in bodies and called != name:
                callers.setdefault(called, []).append(name)
    # Breadth first from the macros that check: linear in the calls, however deep the chain.
    queue = list(sizes)
    for name in queue:
        for caller in callers.get(name, ()):
            if caller not in sizes:
                sizes[caller] = sizes[name]
                queue.append(caller)
    return sizes


def _function_stack_sizes(folder: Path) -> dict[str, int | None]:
    """The `stack.size() == N` of each `name(...) {...}` defined in a source of `folder`
    (the first definition of a name, in file name order; None: it checks none)."""
    sizes: dict[str, int | None] = {}
    for path in sorted(folder.glob("*.cpp")):
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in _FUNCTION_HEAD.finditer(text):
            name = m.group("name")
            if sizes.get(name) is None:
                end = text.find("\n}", m.end())
                where = f"{path}: function {name}"
                sizes[name] = _stack_size(text, where, m.end(), end if end >= 0 else None)
    return sizes


def registered_prim_ops(source: str | Path) -> dict[str, int]:
    """ExecuTorch's prim ops a library registers, and the argument count each demands.

    `source` is the library's copy of ExecuTorch's `kernels/prim_ops/register_prim_ops.cpp`,
    which registers them (not the codegen; with kernel selection, all together before the
    runtime's first registry lookup when a model.h selects one of them): `aten::sym_size.int`,
    `executorch_prim::mul.Scalar`, `executorch_prim::et_view.default`... Each entry is
    `Kernel("name", lambda)` whose lambda checks `stack.size() == N` itself or through a
    macro (`ALGEBRA_ET_PRIM_OP`), or `Kernel("name", function)` with the function defined in
    a source beside it (`et_view.cpp`).

    Returns:
        operator full name -> stack size; empty when `source` does not exist (a library
        generated before prim ops shipped registers none).

    Raises:
        RegistrationError: the file registers nothing, or a prim op's argument count cannot
            be found (the format changed: a bug in this tool, not a passing check).
    """
    path = Path(source)
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8", errors="replace")
    macros = _macro_stack_sizes(text, path)
    names = list(macros)
    order = {name: i for i, name in enumerate(names)}
    functions: dict[str, int | None] | None = None  # read when a kernel names a function
    # Macro bodies are not kernels: blank them (keeping line count) before reading kernels.
    text = _DEFINE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    starts = list(KERNEL_REGISTRATION.finditer(text))
    if not starts:
        raise RegistrationError(
            f'{path}: no `Kernel("op", ...)` registration found; the ExecuTorch prim ops '
            "format changed and et_registration.py needs updating (a bug in this tool, not a "
            "passing check)"
        )
    ops: dict[str, int] = {}
    for k, m in enumerate(starts):
        op = m.group("name")
        end = starts[k + 1].start() if k + 1 < len(starts) else len(text)
        function = _KERNEL_FUNCTION.match(text, m.start())
        n: int | None = None
        if function is not None:
            if functions is None:
                functions = _function_stack_sizes(path.parent)
            n = functions.get(function.group("fn"))
        else:
            n = _stack_size(text, f"{path}: prim op {op}", m.end(), end)
            if n is None:
                # The first macro (in definition order) that the region calls.
                calls = (c.group("name") for c in _CALL.finditer(text, m.end(), end))
                called = [order[c] for c in calls if c in order]
                n = macros[names[min(called)]] if called else None
        if n is None:
            raise RegistrationError(
                f"{path}: prim op {op} has no `stack.size() == N` check (in its lambda, a "
                f"macro or a function of {path.parent.name}/); the ExecuTorch prim ops format "
                "changed and et_registration.py needs updating (a bug in this tool, not a "
                "passing check)"
            )
        ops[op] = n
    return ops


def library_kernels(library_dir: str | Path) -> dict[str, int]:
    """Every operator a generated library registers: its codegen kernels and its prim ops.

    Returns:
        operator full name -> the argument count its kernel accepts.

    Raises:
        RegistrationError: see `registered_kernels` and `registered_prim_ops`; or one
            operator registered by both (the runtime refuses the second registration with
            RegistrationAlreadyRegistered when it registers them).
    """
    root = Path(library_dir)
    kernels = registered_kernels(root / LIBRARY_CODEGEN_DIR)
    prim = registered_prim_ops(root / LIBRARY_PRIM_OPS)
    both = sorted(kernels.keys() & prim.keys())
    if both:
        raise RegistrationError(
            f"{', '.join(both)} registered by both the codegen ({LIBRARY_CODEGEN_DIR}) and "
            f"the prim ops ({LIBRARY_PRIM_OPS}); the runtime refuses the second registration "
            "(RegistrationAlreadyRegistered): regenerate the library"
        )
    return {**kernels, **prim}


# ---------------------------------------------------------------------------------------
# Backend registration

#: A backend registration: `Backend name{ID, &instance}` or `register_backend({ID, ...})`.
_BACKEND_DECLARATION = re.compile(
    r'\bBackend\s+\w+\s*[{(]\s*(?P<id>"[^"]*"|[A-Za-z_][\w:]*)'
    r'|\bregister_backend\s*\(\s*(?:[\w:]*Backend\s*)?\{\s*(?P<inline>"[^"]*"|[A-Za-z_][\w:]*)'
)
_REGISTER_BACKEND = re.compile(r"\bregister_backend\s*\(")
_SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp")


def registered_backends(library_dir: str | Path) -> tuple[str, ...]:
    """The delegate backends a library registers: the ids its sources pass to
    `register_backend` (runtime/backend/interface.h), read from `src/`.

    A source calls `register_backend(backend)` with a `Backend backend{"Id", &instance}`, or
    `register_backend({"Id", &instance})`; the id may be a string or a constant defined as a
    string in the library (`xnnpack_backend_key`). The runtime's own declaration and
    definition (`Error register_backend(...)`) are not calls.

    Returns:
        Backend ids, sorted; empty when nothing registers one (a library with portable and
        Cortex-M kernels only: the Cortex-M backend is operators, not a delegate).

    Raises:
        RegistrationError: a source calls register_backend with an id this tool cannot read
            (a bug in this tool, not a passing check).
    """
    src = Path(library_dir) / "src"
    sources = sorted(p for p in src.rglob("*") if p.suffix in _SOURCE_SUFFIXES and p.is_file())
    backends: set[str] = set()
    for path in sources:
        data = path.read_bytes()
        if b"register_backend" not in data:
            continue
        text = data.decode("utf-8", errors="replace")
        calls = [
            m
            for m in _REGISTER_BACKEND.finditer(text)
            if not re.search(r"\bError\s*$", text[max(0, m.start() - 40) : m.start()])
        ]
        if not calls:
            continue
        ids = [m.group("id") or m.group("inline") for m in _BACKEND_DECLARATION.finditer(text)]
        names = [_backend_id(i, sources) for i in ids]
        if not ids or None in names:
            raise RegistrationError(
                f"{path} registers a backend (register_backend) whose id et_registration.py cannot "
                "read; a bug in this tool, not a passing check"
            )
        backends.update(n for n in names if n is not None)
    return tuple(sorted(backends))


def _backend_id(expression: str, sources: list[Path]) -> str | None:
    """A backend id expression: a string literal, or a constant defined as one in `sources`."""
    if expression.startswith('"'):
        return expression[1:-1]
    name = expression.rsplit("::", 1)[-1]
    definition = re.compile(rf'\b{re.escape(name)}\s*(?:\[\s*\])?\s*=\s*"(?P<id>[^"]*)"')
    for path in sources:
        data = path.read_bytes()
        if name.encode() in data:
            m = definition.search(data.decode("utf-8", errors="replace"))
            if m is not None:
                return m.group("id")
    return None
