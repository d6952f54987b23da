"""Step 10: kernel selection, so each sketch carries only the kernels its model(s) call.

ExecuTorch's codegen registers every kernel of the op set from a static initializer, and
static constructors are roots of every link (static, and Arduino's Dynamic mode, whose llext
linker script KEEPs `.init_array`): the registration table keeps every kernel alive whether
the sketch's model calls it or not. This step turns the registration into archive members
that a sketch pulls in by name, under the Arduino build rules (every library source compiled
with the same flags, no per-sketch library flags, `dot_a_linkage=true` in library.properties
so the library's objects are linked from one archive and a member is linked only when it
resolves a symbol still undefined):

- `RegisterKernelsByOperator.cpp`: the codegen's kernel table split per operator, and
  `et_arduino_register_<op>()` registering one (idempotent); no static initializer. Each table
  and function is a section of its own (-ffunction-sections -fdata-sections), so the link's
  garbage collection keeps only what a model.h's select functions reach. Each operator's name
  is an array of its own too, in its own section (`"aten::add.out"_et_kernel_name`, a string
  literal operator template, `KERNEL_NAME_SUFFIX`): plain string literals share one section
  per object, which the link keeps whole, so every sketch carried every operator's name
  (1,659 B with the 47 default root ops, 831 B more than with the 14 before). The tables are
  `const`: constant-initialized, in flash only.
- ExecuTorch's prim ops table (`register_prim_ops.cpp`): the patch `prim-ops-on-selection`
  removes its static registration, and this step appends `et_arduino_register_prim_ops()` and,
  for each prim op, `et_arduino_register_<op>()` registering the table (one member: the prim
  ops register together).
- `KernelSelectionAll.cpp`: `et_arduino_kernels_fallback()`, linked only when no model.h
  defines the (weak, empty) fallback: a model.h from before kernel selection keeps working,
  with the old footprint. It registers the kernels of the op set libraries had before kernel
  selection (`FALLBACK_ROOT_OPS`: the portable root ops of 0.2.0, the published library's,
  every Cortex-M operator, the prim ops) that this library has: those are all such a model.h's
  program can call, and every kernel of the wider default op set does not fit the UNO Q's
  flash (AddModel with a 0.2.0 model.h overflowed it by 652,200 B). A model.h from before
  kernel selection made for a library generated with other `--ops` is told `OperatorMissing`
  for an operator outside that set; running pte_to_header.py again makes it select its own.
  `et_arduino_register_all_kernels()`, beside it, registers every kernel, for a model.h that
  asks for all (`pte_to_header.py --all-kernels`, or a program it could not read).
- `KernelSelection.cpp`: `et_arduino_register_kernels()`, which the runtime calls before its
  first registry lookup (the patch `registry-calls-kernel-selection` puts the call into
  `operator_registry.cpp`'s `get_registered_kernels`): it calls the fallback, then every
  operator's `et_arduino_select_<op>()` through a const table: the model.h's (weak), or else
  the library's weak default, an alias of the one empty `et_arduino_select_nothing()`.
  Sketch objects come before the library on arduino-cli's link line and the linker keeps the
  first weak definition, so a model.h's wins. 4 B of flash per operator of the library (a
  direct call and a stub of its own per operator were 10 B with -mlong-calls: 384 B of
  AddModel's flash more with the 47 root ops than with the 14). A sketch that never loads a
  method never reaches the hook, so the linker's garbage collection drops every kernel.

Measured and not taken: a model.h registering its operators itself from a C++17 inline
variable's initializer (no per-operator code in the library at all). Static initializers are
roots of every link, so a sketch that includes a model.h but never loads a method links its
kernels: HelloExecuTorch (loads the program, no method) went from 20,276 to 82,616 B of
flash. Its registration would also run before other files' static initializers (the prim
ops' span is one, unspecified order).

The registry's capacity (`EXECUTORCH_SELECTED_MAX_KERNEL_NUM`, 12 B of RAM per kernel on a
32-bit board) stays the library's kernel count: the fallback registers every kernel; the
registry is one contiguous array behind the public `get_registered_kernels()` span; and what
a sketch registers is known only at link time (model.h files in several translation units),
where no count can be summed into an array size without a per-sketch flag.

The C++ written is Jinja templates in `data/templates/src/` (`RegisterKernelsByOperator.cpp`,
`KernelSelectionAll.cpp`, `KernelSelection.cpp`, `prim_ops_selection.cpp`, each `.jinja`, and
the shared `kernel_selection.jinja`), rendered by `render.render`. Not in `data/library_template/`:
`render_metadata` renders every `.jinja` there into every library with only the `Provenance`,
and the build copies `data/library_template/src` as it is; these files need this step's facts (the
operators), and two of them are pieces of upstream files rather than files of their own. The
two edits of upstream sources are `patches.py`'s `PRIM_OPS_ON_SELECTION` and
`REGISTRY_CALLS_KERNEL_SELECTION`, applied here, after the dtypes as before, not in the patch
step: each calls or is completed by the code this step writes, and the prim ops are read
before their registration is patched.

The symbol names are `et_registration.kernel_symbol`'s and its `*_PREFIX` / `*_SYMBOL` names
(the shipped tools, whose model.h calls them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from generator.library.layout import CODEGEN_DIR, PRIM_OPS_SOURCE
from generator.pipeline.default_ops import PREVIOUS_ROOT_OPS
from generator.pipeline.models import TOOLS_DIR, import_tool, registered_prim_ops
from generator.pipeline.patches import (
    KERNEL_SELECTION_BANNER,
    KERNEL_SELECTION_HOOK,
    PRIM_OPS_ON_SELECTION,
    REGISTRY_CALLS_KERNEL_SELECTION,
)
from generator.util.errors import FatalError
from generator.util.templates import render

if TYPE_CHECKING:
    import et_registration  # extras/tools (mypy_path)
else:
    et_registration = import_tool(TOOLS_DIR / "et_registration.py")

#: The portable root ops whose kernels the fallback registers: the default op set of the
#: libraries before kernel selection (0.2.0 and earlier), the only ones a model.h of theirs
#: selects nothing for and a program made for them calls.
FALLBACK_ROOT_OPS = frozenset(PREVIOUS_ROOT_OPS)
#: What the fallback calls to record that it ran, and what ETModel.h asks (its OperatorMissing
#: message then says that no model.h of the sketch selects kernels).
NOTE_FALLBACK_SYMBOL = "et_arduino_kernels_note_fallback"
FELL_BACK_SYMBOL = "et_arduino_kernels_fell_back"
#: Every Cortex-M operator's namespace: each was in every library's op set.
CORTEX_M_NAMESPACE = "cortex_m::"
#: The codegen's one registration source, which this step splits (and removes).
EVERYTHING = "RegisterCodegenUnboxedKernelsEverything.cpp"
#: What replaces it: one kernel table and one register function per operator.
REGISTRATION_SOURCE = "RegisterKernelsByOperator.cpp"
#: What registers the prim ops' table (appended to their source).
PRIM_OPS_FUNCTION = f"{et_registration.REGISTER_PREFIX}prim_ops"
#: The literal suffix that gives each operator's name its own section (the string literal
#: operator template RegisterKernelsByOperator.cpp defines).
KERNEL_NAME_SUFFIX = "_et_kernel_name"

_TABLE_START = "static Kernel kernels_to_register[] = {"
#: The table ends `),  // Generated kernels\n};\n` (the last entry's `),` optional). Found by
#: its comment, then checked around it: a regex searched for it from every blank of a long
#: run of them takes quadratic time.
_TABLE_END_COMMENT = "// Generated kernels"
_TABLE_END_CLOSE = re.compile(r"\s*\n\s*\};\n")
_ENTRY = re.compile(r"^[ \t]*Kernel\(\s*\n?\s*\"(?P<name>[^\"]+)\"", re.M)
_STATIC_REGISTRATION = re.compile(
    r"^[ \t]*static auto success_with_kernel_reg = register_kernels\(kernel_span\);[ \t]*\n",
    re.M,
)

_STALE_COMMENT = (
    "// Return value not used. Keep the static variable assignment to register\n"
    "// kernels in static initialization time.\n"
)
#: The static span, removed with the comment lines right above it (found from the span:
#: a regex starting at every comment line would take quadratic time).
_STATIC_SPAN = re.compile(r"^static KernelSpan kernel_span\([^;]*\);[ \t]*\n", re.M)
#: `split_registration`'s result: (head, operator -> entries, tail).
_Split = tuple[str, dict[str, list[str]], str]


@dataclass(frozen=True)
class KernelSelection:
    """What the kernel-selection step wrote.

    Attributes:
        kernels: operator -> its kernel selection symbol (`et_registration.kernel_symbol`),
            for the codegen's kernels; prim: the same for ExecuTorch's prim ops;
        files: library paths written or changed (sorted);
        patches: the name of each patch applied (`patches.PRIM_OPS_ON_SELECTION`, only when
            there are prim ops, then `patches.REGISTRY_CALLS_KERNEL_SELECTION`) -> the
            library paths it touched.
    """

    kernels: dict[str, str]
    prim: dict[str, str]
    files: tuple[str, ...]
    patches: dict[str, list[str]]


def _symbols(operators: list[str]) -> dict[str, str]:
    """operator -> symbol, refusing two operators that map to one symbol."""
    out: dict[str, str] = {}
    seen: dict[str, str] = {}
    for op in operators:
        try:
            sym = et_registration.kernel_symbol(op)
        except ValueError as e:
            raise FatalError(f"kernel selection: {e}") from None
        if sym in seen:
            raise FatalError(
                f"kernel selection: operators {seen[sym]} and {op} both map to the symbol "
                f"{sym}; et_registration.kernel_symbol needs a finer mapping for this op set"
            )
        seen[sym] = op
        out[op] = sym
    return out


def _table_end(text: str, after: int) -> tuple[int, bool, int] | None:
    """Where the kernel table that opens before `after` ends: (the start of its end, whether
    the last entry's `),` is part of it, the position after `};\n`); None when it does not."""
    at = text.find(_TABLE_END_COMMENT, after)
    while at >= 0:
        close = _TABLE_END_CLOSE.match(text, at + len(_TABLE_END_COMMENT))
        if close is not None:
            before = len(text[after:at].rstrip()) + after
            last = text.endswith("),", after, before)
            return (before - 2 if last else before), last, close.end()
        at = text.find(_TABLE_END_COMMENT, at + 1)
    return None


def _comment_lines_above(text: str, line: int) -> int:
    """The start of the run of `//` lines right above the line starting at `line`."""
    while line > 0:
        above = text.rfind("\n", 0, line - 1) + 1
        if not text.startswith("//", above):
            break
        line = above
    return line


def split_registration(text: str) -> _Split:
    """Split the codegen's registration source into head, entries per operator, and tail.

    Returns:
        (text before the kernel table's entries, operator -> its `Kernel(...)` entries in
        order, text from the end of the table on, with the static registration removed).

    Raises:
        FatalError: the source does not have the layout of ExecuTorch's
            `RegisterCodegenUnboxedKernels.cpp` template (the codegen changed).
    """
    start = text.find(_TABLE_START)
    end = _table_end(text, start + len(_TABLE_START)) if start >= 0 else None
    if start < 0 or end is None or not _STATIC_REGISTRATION.search(text, end[2]):
        raise FatalError(
            f"kernel selection: {EVERYTHING} no longer has the layout of ExecuTorch's "
            "registration template (`static Kernel kernels_to_register[] = {` ... "
            "`static auto success_with_kernel_reg = register_kernels(kernel_span);`); the "
            "codegen changed and generator/pipeline/selection.py needs updating"
        )
    end_start, last, end_end = end
    head = text[: start + len(_TABLE_START)] + "\n"
    body = text[start + len(_TABLE_START) : end_start] + ("),\n" if last else "")
    rest = _STATIC_REGISTRATION.sub("", text[end_end:], count=1).replace(_STALE_COMMENT, "")
    # ExecuTorch's Span(T* begin, T* end) is not constexpr: a static span is initialized at
    # start-up, and that initializer would keep the table (every kernel) in every link. The
    # register function builds the span when it runs instead.
    span = _STATIC_SPAN.search(rest)
    if span is None:
        raise FatalError(
            f"kernel selection: {EVERYTHING} has no `static KernelSpan kernel_span(...);`; the "
            "codegen changed and generator/pipeline/selection.py needs updating"
        )
    rest = rest[: _comment_lines_above(rest, span.start())] + rest[span.end() :]
    tail = "};\n" + rest
    starts = list(_ENTRY.finditer(body))
    entries: dict[str, list[str]] = {}
    for k, m in enumerate(starts):
        stop = starts[k + 1].start() if k + 1 < len(starts) else len(body)
        entries.setdefault(m.group("name"), []).append(body[m.start() : stop].rstrip() + "\n")
    return head, entries, tail


def _facts() -> dict[str, str]:
    """The names every kernel-selection template reads (see the templates' comments)."""
    return {
        "banner": KERNEL_SELECTION_BANNER,
        "hook": KERNEL_SELECTION_HOOK,
        "register_prefix": et_registration.REGISTER_PREFIX,
        "select_prefix": et_registration.SELECT_PREFIX,
        "register_all": et_registration.REGISTER_ALL_SYMBOL,
        "select_all_suffix": et_registration.SELECT_ALL_SYMBOL.removeprefix(
            et_registration.SELECT_PREFIX
        ),
        "select_none": f"{et_registration.SELECT_PREFIX}nothing",
        "fallback": et_registration.FALLBACK_SYMBOL,
        "note_fallback": NOTE_FALLBACK_SYMBOL,
        "fell_back": FELL_BACK_SYMBOL,
        "prim_ops_function": PRIM_OPS_FUNCTION,
        "register_kernels": "::executorch::ET_RUNTIME_NAMESPACE::register_kernels",
        "everything": EVERYTHING,
        "upstream_header": "// @generated by gen.py from RegisterCodegenUnboxedKernels.cpp",
    }


def _write(library: Path, path: Path, text: str) -> str:
    """Write `text` to `path`; returns its library path."""
    path.write_text(text, encoding="utf-8")
    return path.relative_to(library).as_posix()


def _suffixed_name(entry: str) -> str:
    """A `Kernel("op", ...)` entry with its name literal suffixed by `KERNEL_NAME_SUFFIX`
    (`Kernel("op"_et_kernel_name, ...)`: still read by `et_registration`'s and the build's
    `KERNEL_REGISTRATION`)."""
    m = _ENTRY.match(entry)  # split_registration cut every entry at an _ENTRY match
    return entry if m is None else entry[: m.end()] + KERNEL_NAME_SUFFIX + entry[m.end() :]


def _split_everything(library: Path, kernels: dict[str, str], split: _Split) -> str:
    """Replace the codegen's registration by `RegisterKernelsByOperator.cpp`: one translation
    unit (compiled once, like the codegen's own file), one table and one register function per
    operator, each in its own section (-ffunction-sections -fdata-sections, as the board core
    compiles), so the link keeps only the tables of the register functions a model.h calls.
    Per-operator files would cost a parse of the runtime's headers each (~0.4 s of compile per
    operator). Returns the file's library path."""
    head, entries, tail = split
    text = render(
        "RegisterKernelsByOperator.cpp.jinja",
        opening=head[: -len(_TABLE_START) - 1],
        closing=tail[len("};\n") :],
        kernels=[
            {"op": op, "sym": sym, "entries": "".join(map(_suffixed_name, entries[op]))}
            for op, sym in kernels.items()
        ],
        name_suffix=KERNEL_NAME_SUFFIX,
        **_facts(),
    )
    return _write(library, library / CODEGEN_DIR / REGISTRATION_SOURCE, text)


def _select_prim_ops(library: Path, prim: dict[str, str]) -> list[str]:
    """Patch `prim-ops-on-selection` and append the prim ops' register functions; returns the
    library paths touched."""
    touched = PRIM_OPS_ON_SELECTION.apply(library)
    source = library / PRIM_OPS_SOURCE
    functions = render(
        "prim_ops_selection.cpp.jinja",
        prim=[{"op": op, "sym": sym} for op, sym in prim.items()],
        **_facts(),
    )
    _write(library, source, source.read_text(encoding="utf-8") + "\n" + functions)
    return touched


def _operators(library: Path) -> tuple[_Split, dict[str, str], dict[str, str]]:
    """The codegen's registration split, and the symbols of its kernels and of the prim ops.

    Raises:
        FatalError: the registration is missing or changed layout; two operators share a
            symbol; an operator is registered by both.
    """
    everything = library / CODEGEN_DIR / EVERYTHING
    if not everything.is_file():
        raise FatalError(f"kernel selection: the codegen's {everything} is missing")
    split = split_registration(everything.read_text(encoding="utf-8"))
    kernels = _symbols(list(split[1]))
    prim = _symbols(sorted(registered_prim_ops(library / PRIM_OPS_SOURCE)))
    both = sorted(kernels.keys() & prim.keys())
    if both:
        raise FatalError(
            f"kernel selection: {', '.join(both)} registered by both the codegen and the prim "
            "ops; the runtime refuses the second registration"
        )
    return split, kernels, prim


def _in_fallback(operator: str) -> bool:
    """Whether the fallback registers `operator` (a full name, e.g. "aten::add.out"): a root
    op of the 0.2.0 op set, or a Cortex-M operator (see the module docstring)."""
    return operator in FALLBACK_ROOT_OPS or operator.startswith(CORTEX_M_NAMESPACE)


def apply_kernel_selection(library: Path) -> KernelSelection:
    """Split the library's kernel registration into per-operator archive members (see the
    module docstring) and hook the runtime's registry to it.

    Args:
        library: the library root, after the codegen, vendoring, patches and dtypes.
    Returns:
        the operators, the files written and the patches applied.
    Raises:
        FatalError: a source no longer has the layout this step transforms or patches (named),
            or two operators collide on one symbol.
    """
    split, kernels, prim = _operators(library)
    everything = library / CODEGEN_DIR / EVERYTHING
    everything.unlink()
    written = [
        everything.relative_to(library).as_posix(),
        _split_everything(library, kernels, split),
    ]
    patches: dict[str, list[str]] = {}
    if prim:
        patches[PRIM_OPS_ON_SELECTION.name] = _select_prim_ops(library, prim)
    symbols = [*kernels.values(), *prim.values()]
    fallback = [sym for op, sym in kernels.items() if _in_fallback(op)] + [*prim.values()]
    for name in ("KernelSelectionAll.cpp", "KernelSelection.cpp"):
        text = render(f"{name}.jinja", symbols=symbols, fallback_symbols=fallback, **_facts())
        written.append(_write(library, library / CODEGEN_DIR / name, text))
    patches[REGISTRY_CALLS_KERNEL_SELECTION.name] = REGISTRY_CALLS_KERNEL_SELECTION.apply(library)
    files = {*written, *(path for touched in patches.values() for path in touched)}
    return KernelSelection(kernels, prim, tuple(sorted(files)), patches)
