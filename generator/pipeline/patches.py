"""Step 8: the Arduino patches, as explicit, listed transformations of the library tree.

Each patch says what it does and why; applying one that no longer finds what it changes is an
error naming the file or pattern, never a silent skip, because a patch that stops applying
usually means the upstream tree moved and the library would break on the board.

Every Arduino patch is here, in three groups by the step that applies it: `PATCHES`, in order,
by the patch step; `DTYPE_SELECTIVE_BUILD` by the dtype step (generator/pipeline/dtypes.py), for
a dtype-selective build only; `PRIM_OPS_ON_SELECTION` and `REGISTRY_CALLS_KERNEL_SELECTION` by
the kernel-selection step (generator/pipeline/selection.py), whose generated code they call or
are completed by. The vendored CMSIS-NN's patch functions, with the text of each one's upstream
report, are in generator/pipeline/cmsis_nn_patches.py.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from generator import data_dir
from generator.library.layout import COMPACT_INCLUDE, PLATFORM_DIR, PRIM_OPS_SOURCE
from generator.pipeline.cmsis_nn_patches import CMSIS_NN_PIN, add_s8_shift
from generator.util.errors import FatalError

TEMPLATE_PLATFORM = data_dir("library_template") / PLATFORM_DIR / "arduino_pal.cpp"


@dataclass(frozen=True)
class Patch:
    """One transformation of the library tree.

    Attributes:
        name: short id recorded in PROVENANCE.
        why: one sentence, shown in PROVENANCE.
        apply: function of the library root returning the library paths it touched.
    """

    name: str
    why: str
    apply: Callable[[Path], list[str]]


def _rel(library: Path, path: Path) -> str:
    return path.relative_to(library).as_posix()


def _exception_before_variant(library: Path) -> list[str]:
    touched = []
    for path in sorted((library / "src" / "executorch").rglob("*")):
        if path.suffix not in (".h", ".cpp") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        new = re.sub(
            r"^(\s*)#include <variant>",
            r"\1#include <exception>\n\1#include <variant>",
            text,
            flags=re.M,
        )
        if new != text:
            path.write_text(new, encoding="utf-8")
            touched.append(_rel(library, path))
    if not touched:
        raise FatalError(
            "patch exception-before-variant no longer applies: no file under "
            "src/executorch includes <variant>; check whether the patch is still needed"
        )
    return touched


_TEST_DIRS = {"test", "tests", "testing", "testing_util"}
_TEST_FILE = re.compile(r"(^test_.*|.*_test)\.(c|cc|cpp|h)$")


def _drop_tests(library: Path) -> list[str]:
    removed = []
    src = library / "src"
    for path in sorted(src.rglob("*"), reverse=True):
        if path.is_dir() and path.name in _TEST_DIRS:
            removed.append(_rel(library, path) + "/")
            shutil.rmtree(path)
        elif path.is_file() and _TEST_FILE.match(path.name):
            removed.append(_rel(library, path))
            path.unlink()
    return removed


def _drop_aten_mode(library: Path) -> list[str]:
    removed = []
    for path in sorted((library / "src").rglob("*_aten.cpp")):
        if path.name.endswith("_exec_aten.cpp"):
            continue  # portable-mode code despite the name, and required
        removed.append(_rel(library, path))
        path.unlink()
    return removed


def _platform_layer(library: Path) -> list[str]:
    folder = library / PLATFORM_DIR
    if not folder.is_dir():
        raise FatalError(
            f"patch platform-layer no longer applies: {PLATFORM_DIR} is missing from the "
            "vendored runtime (upstream moved its platform layers)"
        )
    upstream = sorted(p for p in folder.iterdir() if p.suffix in (".c", ".cpp"))
    if not upstream:
        raise FatalError(
            f"patch platform-layer no longer applies: {PLATFORM_DIR} has no upstream platform "
            "layer to replace"
        )
    touched = []
    for path in upstream:
        touched.append(_rel(library, path))
        path.unlink()
    if not TEMPLATE_PLATFORM.is_file():
        raise FatalError(f"our platform layer {TEMPLATE_PLATFORM} is missing from this checkout")
    shutil.copyfile(TEMPLATE_PLATFORM, folder / TEMPLATE_PLATFORM.name)
    touched.append(_rel(library, folder / TEMPLATE_PLATFORM.name))
    return touched


_SOURCE_SUFFIXES = (".c", ".cpp", ".cc", ".cxx", ".S", ".s")


def _unique_object_names(library: Path) -> list[str]:
    """Rename sources so no two share a file name (arduino-cli names each object after its
    source, and with dot_a_linkage=true adds them one by one with `ar rcs`, which keys
    members by file name: a second `op_softmax.cpp.o` would replace the first)."""
    src = library / "src"
    seen: dict[str, Path] = {}
    renamed = []
    for path in sorted(p for p in src.rglob("*") if p.is_file() and p.suffix in _SOURCE_SUFFIXES):
        if path.name not in seen:
            seen[path.name] = path
            continue
        parts = path.relative_to(src).parts[:-1]
        for depth in range(1, len(parts) + 1):
            name = "_".join((*parts[-depth:], path.name))
            if name not in seen and not (path.parent / name).exists():
                break
        else:
            raise FatalError(
                f"patch unique-object-names: cannot give {_rel(library, path)} a file name no "
                "other library source has"
            )
        target = path.with_name(name)
        path.rename(target)
        seen[name] = target
        renamed.append(f"{_rel(library, path)} -> {target.name}")
    return renamed


#: The Cortex-M backend's op sources, and the macro their scratch-size checks are behind
#: (pytorch/executorch backends/cortex_m/CMakeLists.txt at cff6f4dd: option
#: CORTEX_M_ENABLE_RUNTIME_CHECKS, default OFF; every block under it in ops/ compares a
#: scratch tensor's bytes with CMSIS-NN's `*_get_buffer_size` for the CPU it runs on).
CORTEX_M_OPS_DIR = "src/executorch/backends/cortex_m/ops"
RUNTIME_CHECKS_MACRO = "CORTEX_M_ENABLE_RUNTIME_CHECKS"
_CHECKS_IFDEF = re.compile(rf"^[ \t]*#[ \t]*ifdef[ \t]+{RUNTIME_CHECKS_MACRO}[ \t]*$")
_PP_OPEN = re.compile(r"^[ \t]*#[ \t]*if")
_PP_CLOSE = re.compile(r"^[ \t]*#[ \t]*endif\b")
_PP_ELSE = re.compile(r"^[ \t]*#[ \t]*(?:else|elif)\b")
#: `scratch.nbytes() != static_cast<size_t>(needed)`, `ctx.size != ...`: exact equality.
_SCRATCH_EQUALITY = re.compile(r"([\w.()]+) != (static_cast<size_t>\()")
_SCRATCH_MESSAGE = ("buffer size incorrect", "buffer too small for this CPU")
#: A CMSIS-NN context sized from a scratch tensor of the program (`cmsis_context.size =
#: scratch.nbytes();`); refs before v1.4.0 allocate scratch at run time instead and have none.
_EXPORTED_SCRATCH = re.compile(r"\.size = \w*scratch\w*\.nbytes\(\)")


def _checked_block(lines: list[str], start: int, where: str) -> int:
    """The index of the `#endif` closing the `#ifdef` at `start`; rewrites the block's scratch
    comparisons to `<` and their messages in place."""
    depth = 0
    replaced = 0
    for i in range(start + 1, len(lines)):
        if _PP_OPEN.match(lines[i]):
            depth += 1
        elif _PP_CLOSE.match(lines[i]) and depth:
            depth -= 1
        elif _PP_ELSE.match(lines[i]) and not depth:
            raise FatalError(
                "patch cortex-m-scratch-checks no longer applies: the "
                f"#ifdef {RUNTIME_CHECKS_MACRO} block at {where}:{start + 1} has an #else or "
                "#elif of its own; upstream changed its runtime checks"
            )
        elif _PP_CLOSE.match(lines[i]):
            if replaced == 0:
                raise FatalError(
                    "patch cortex-m-scratch-checks no longer applies: the "
                    f"#ifdef {RUNTIME_CHECKS_MACRO} block at {where}:{start + 1} compares no "
                    "scratch size with `!= static_cast<size_t>(`; upstream changed its runtime "
                    "checks (see generator/pipeline/patches.py _SCRATCH_EQUALITY)"
                )
            return i
        else:
            lines[i], n = _SCRATCH_EQUALITY.subn(r"\1 < \2", lines[i])
            replaced += n
            lines[i] = lines[i].replace(*_SCRATCH_MESSAGE)
            if "!=" in lines[i]:
                raise FatalError(
                    "patch cortex-m-scratch-checks no longer applies: "
                    f"{where}:{i + 1} compares with != in a way the patch does not know "
                    "(it makes `X != static_cast<size_t>(N)` into `<`); upstream changed its "
                    "runtime checks"
                )
    raise FatalError(
        f"patch cortex-m-scratch-checks no longer applies: the #ifdef {RUNTIME_CHECKS_MACRO} "
        f"at {where}:{start + 1} has no #endif"
    )


def _cortex_m_scratch_checks(library: Path) -> list[str]:
    folder = library / CORTEX_M_OPS_DIR
    if not folder.is_dir():
        return []  # a ref without the Cortex-M backend
    touched = []
    for path in sorted(folder.rglob("*")):
        if path.suffix not in (".cpp", ".h") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        kept: list[str] = []
        i = 0
        while i < len(lines):
            if _CHECKS_IFDEF.match(lines[i].rstrip("\n")):
                end = _checked_block(lines, i, _rel(library, path))
                kept.extend(lines[i + 1 : end])  # the checks, unconditional
                i = end + 1
                continue
            kept.append(lines[i])
            i += 1
        left = [n for n, line in enumerate(kept, 1) if RUNTIME_CHECKS_MACRO in line]
        if left:
            raise FatalError(
                "patch cortex-m-scratch-checks no longer applies: "
                f"{_rel(library, path)}:{left[0]} uses {RUNTIME_CHECKS_MACRO} otherwise than "
                f"`#ifdef {RUNTIME_CHECKS_MACRO}`; upstream changed its runtime checks"
            )
        if len(kept) != len(lines):
            path.write_text("".join(kept), encoding="utf-8")
            touched.append(_rel(library, path))
        elif _EXPORTED_SCRATCH.search(text):
            raise FatalError(
                f"patch cortex-m-scratch-checks no longer applies: {_rel(library, path)} sizes "
                "a CMSIS-NN context from the program's scratch tensor but has no "
                f"#ifdef {RUNTIME_CHECKS_MACRO} block; upstream changed its runtime checks"
            )
    return touched


#: ExecuTorch's compiler macros header, which every runtime source and ExecuTorch.h include
#: before anything reads ET_LOG_ENABLED (runtime/platform/log.h includes it first) or
#: ET_ENABLE_PROGRAM_VERIFICATION (runtime/executor/program.cpp, through program.h).
COMPILER_HEADER = "src/executorch/runtime/platform/compiler.h"
_PRAGMA_ONCE = re.compile(r"^#pragma once[ \t]*\n", re.M)


def _compact_runtime(library: Path) -> list[str]:
    path = library / COMPILER_HEADER
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    m = _PRAGMA_ONCE.search(text)
    if m is None:
        raise FatalError(
            f"patch compact-runtime no longer applies: {COMPILER_HEADER} is missing or has no "
            "`#pragma once` line to include the compact runtime's header after; upstream moved "
            "its compiler macros (see generator/pipeline/patches.py COMPILER_HEADER)"
        )
    line = f"#include <{COMPACT_INCLUDE}>  // the compact runtime (generator/pipeline/compact.py)\n"
    path.write_text(text[: m.end()] + line + text[m.end() :], encoding="utf-8")
    return [COMPILER_HEADER]


PATCHES: tuple[Patch, ...] = (
    Patch(
        "exception-before-variant",
        "Arduino's <new> omits <exception>, which std::bad_variant_access in <variant> needs.",
        _exception_before_variant,
    ),
    Patch("drop-tests", "Tests are host code; Arduino would compile them.", _drop_tests),
    Patch(
        "drop-aten-mode",
        "ATen-mode sources need PyTorch; *_exec_aten.cpp is portable-mode and stays.",
        _drop_aten_mode,
    ),
    Patch(
        "platform-layer",
        "Ship exactly one platform layer, ours, written against the Arduino API (two would "
        "define every et_pal_* twice).",
        _platform_layer,
    ),
    Patch(
        "cortex-m-scratch-checks",
        "The Cortex-M ops' scratch-size checks (CORTEX_M_ENABLE_RUNTIME_CHECKS, off by default "
        "upstream) are always on, as `<` instead of `!=`: a program carries each CMSIS-NN "
        "kernel's scratch buffer sized for the CPU it was exported for, and a CPU whose kernels "
        "need more (Helium's depthwise convolution) wrote through it; it now fails with a "
        "message, and a larger buffer stays accepted.",
        _cortex_m_scratch_checks,
    ),
    Patch(
        "cmsis-nn-add-shift",
        "CMSIS-NN's arm_elementwise_add_s8.c shifts signed values left, undefined in C for a "
        "negative input (lines 208-209 at "
        f"{CMSIS_NN_PIN[:12]}, `(*input_1_vect++ + input_1_offset) << left_shift`) and a "
        "negative halfword (lines 138-184, `(b_1 & 0x0FFFF) << left_shift`): the same bits by "
        "multiplying and by an unsigned shift, unchanged object code on the board (the upstream "
        "report: generator/pipeline/cmsis_nn_patches.py UPSTREAM_REPORTS).",
        add_s8_shift,
    ),
    Patch(
        "compact-runtime",
        "ExecuTorch's compiler.h includes src/executorch_compact.h, which on the arduino:zephyr "
        "boards with at most 128 KiB of flash for a sketch compiles the runtime without its log "
        "(and without the code of a program verification the library never runs), ExecuTorch's "
        "own switches, so a model fits them.",
        _compact_runtime,
    ),
    Patch(
        "unique-object-names",
        "With dot_a_linkage=true arduino-cli archives objects by file name (`ar rcs`): two "
        "sources with one name would leave one object out.",
        _unique_object_names,
    ),
)


#: The portable op sources of a library, and the header `dtype-selective-build` includes
#: (extras/tools/et_dtypes.py SELECTION_CONFIG, written by generator/pipeline/dtypes.py).
PORTABLE_OPS_DIR = "src/executorch/kernels/portable/cpu"
DTYPE_SELECTION_HEADER = "executorch/kernels/portable/cpu/arduino_selective_build_dtype.h"


def _dtype_selective_build(library: Path) -> list[str]:
    header = library / "src" / DTYPE_SELECTION_HEADER
    if not header.is_file():
        raise FatalError(
            f"patch dtype-selective-build: src/{DTYPE_SELECTION_HEADER} is missing; the dtype "
            "step writes it first (a generator bug)"
        )
    touched = []
    # *op_*.cpp: unique-object-names renames e.g. op_softmax.cpp to cpu_op_softmax.cpp.
    for path in sorted((library / PORTABLE_OPS_DIR).glob("*op_*.cpp")):
        text = path.read_text(encoding="utf-8")
        first = re.search(r"^[ \t]*#[ \t]*include\b", text, flags=re.M)
        if first is None:
            raise FatalError(
                f"patch dtype-selective-build no longer applies: {_rel(library, path)} "
                "includes nothing; upstream changed its op sources"
            )
        at = first.start()
        path.write_text(
            f"{text[:at]}#include <{DTYPE_SELECTION_HEADER}>\n{text[at:]}", encoding="utf-8"
        )
        touched.append(_rel(library, path))
    return touched + _fold_dtype_checks(library)


#: ExecuTorch's switch macros and their dtype check, rewritten so the check is a constant
#: expression: `should_include_kernel_dtype` is constexpr, but GCC at -Os (the board's level)
#: emits it out of line and calls it at run time, so a left-out dtype's code stayed in the
#: firmware behind an abort (add.out with float32 only: 76,947 B of code; folded: 11,652 B).
_SWITCH_NAME = (
    "    const char* et_switch_name = NAME;                          \\\n",
    "    constexpr const char* et_switch_name = NAME;                \\\n",
)
_SELECTIVE_CHECK = (
    "    if (!should_include_kernel_dtype(et_switch_name, enum_type)) { \\\n",
    "    constexpr bool et_selected =                                   \\\n"
    "        should_include_kernel_dtype(et_switch_name, enum_type);    \\\n"
    "    if (!et_selected) {                                            \\\n",
)


def _fold_dtype_checks(library: Path) -> list[str]:
    touched = []
    for rel, (old, new) in (
        ("src/executorch/runtime/core/exec_aten/util/scalar_type_util.h", _SWITCH_NAME),
        ("src/executorch/kernels/portable/cpu/selective_build.h", _SELECTIVE_CHECK),
    ):
        path = library / rel
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        if text.count(old) != 1:
            raise FatalError(
                f"patch dtype-selective-build no longer applies: {rel} has no `{old.strip()}`; "
                "upstream changed its switch macros "
                "(see generator/pipeline/patches.py _SWITCH_NAME)"
            )
        path.write_text(text.replace(old, new), encoding="utf-8")
        touched.append(rel)
    return touched


#: Applied by the build only for `--dtypes`/`--dtypes-from-pte` (generator/pipeline/dtypes.py),
#: after
#: PATCHES: ExecuTorch's CMake defines EXECUTORCH_SELECTIVE_BUILD_DTYPE for the portable
#: kernels alone, and Arduino takes no per-source flags, so each includes the define.
DTYPE_SELECTIVE_BUILD = Patch(
    "dtype-selective-build",
    "Arduino gives a library no -D flags: each portable op source includes the header that "
    "defines EXECUTORCH_SELECTIVE_BUILD_DTYPE, as ExecuTorch's CMake defines it for the "
    "portable kernels only; the switch macros' dtype check is made a constant expression, "
    "so a left-out dtype's code is compiled out at -Os.",
    _dtype_selective_build,
)


#: The first line of every file and insertion of kernel selection (generator/pipeline/selection.py
#: and its templates, data/templates/src/*KernelSelection*.jinja, prim_ops_selection.cpp.jinja).
KERNEL_SELECTION_BANNER = (
    "// Generated by the ExecuTorch Arduino library generator (kernel selection)."
)
#: What the patched registry calls before its first lookup, defined in KernelSelection.cpp.
KERNEL_SELECTION_HOOK = "et_arduino_register_kernels"
#: The registry source and the prim ops source the two kernel-selection patches edit.
OPERATOR_REGISTRY = "src/executorch/runtime/kernel/operator_registry.cpp"

_PRIM_REGISTRATION = re.compile(
    r"^[ \t]*auto success_with_kernel_reg =\s*"
    r"(?:executorch::ET_RUNTIME_NAMESPACE::)?register_kernels\(kernel_span\);[ \t]*\n",
    re.M,
)
_GET_REGISTERED = re.compile(r"^Span<const Kernel> get_registered_kernels\(\) \{\n", re.M)


def _prim_ops_on_selection(library: Path) -> list[str]:
    path = library / PRIM_OPS_SOURCE
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    new, n = _PRIM_REGISTRATION.subn("", text, count=1)
    if n != 1:
        raise FatalError(
            f"patch prim-ops-on-selection no longer applies: {PRIM_OPS_SOURCE} no longer "
            "registers its table with `auto success_with_kernel_reg = "
            "...register_kernels(kernel_span);`; upstream changed its prim ops registration "
            "(see generator/pipeline/patches.py _PRIM_REGISTRATION)"
        )
    path.write_text(new, encoding="utf-8")
    return [PRIM_OPS_SOURCE]


def _registry_calls_kernel_selection(library: Path) -> list[str]:
    path = library / OPERATOR_REGISTRY
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    m = _GET_REGISTERED.search(text)
    first_ns = text.find("\nnamespace executorch {")
    # The hook is declared at the first `namespace executorch {` and called in
    # get_registered_kernels, which must come after it (else the text between would repeat).
    if m is None or first_ns < 0 or m.start() < first_ns:
        raise FatalError(
            f"patch registry-calls-kernel-selection no longer applies: {OPERATOR_REGISTRY} has "
            "no `namespace executorch {` followed by a `Span<const Kernel> "
            "get_registered_kernels() {` to hook; upstream changed its registry (see "
            "generator/pipeline/patches.py _GET_REGISTERED)"
        )
    hooked = (
        text[: first_ns + 1]
        + f"{KERNEL_SELECTION_BANNER}\n// Defined in src/executorch/codegen/KernelSelection.cpp.\n"
        + f'extern "C" void {KERNEL_SELECTION_HOOK}(void);\n\n'
        + text[first_ns + 1 : m.end()]
        + f"  {KERNEL_SELECTION_HOOK}();  // registers the kernels the sketch selected, once\n"
        + text[m.end() :]
    )
    path.write_text(hooked, encoding="utf-8")
    return [OPERATOR_REGISTRY]


#: Applied by the kernel-selection step (generator/pipeline/selection.py), after PATCHES and the
#: dtypes, beside the files it writes from data/templates/src/: the prim ops patch only when
#: the library registers prim ops. Not in PATCHES: each edit calls or is replaced by code that
#: step generates, and the step reads the prim ops table before the patch.
PRIM_OPS_ON_SELECTION = Patch(
    "prim-ops-on-selection",
    "The prim ops' static registration, a start-up root of every link, is removed: they "
    "register together when a sketch's model.h selects one (the kernel-selection step appends "
    "et_arduino_register_prim_ops() and each prim op's register function).",
    _prim_ops_on_selection,
)
REGISTRY_CALLS_KERNEL_SELECTION = Patch(
    "registry-calls-kernel-selection",
    f"The registry calls {KERNEL_SELECTION_HOOK}() (KernelSelection.cpp) before its first "
    "lookup, so the kernels a sketch's model.h selects register before a method loads.",
    _registry_calls_kernel_selection,
)


def apply_patches(library: Path) -> dict[str, list[str]]:
    """Apply every patch in order.

    Returns:
        patch name -> library paths it touched.
    Raises:
        FatalError: when a patch no longer applies (naming the file or pattern).
    """
    return {patch.name: patch.apply(library) for patch in PATCHES}


#: Every Arduino patch, in the order the build applies them (PROVENANCE lists the applied ones
#: in this order).
ALL_PATCHES: tuple[Patch, ...] = (
    *PATCHES,
    DTYPE_SELECTIVE_BUILD,
    PRIM_OPS_ON_SELECTION,
    REGISTRY_CALLS_KERNEL_SELECTION,
)
