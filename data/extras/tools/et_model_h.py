"""The `model.h` codec: a `.pte` as the C++ header a sketch includes, and back.

Python standard library only: this file ships in every generated Arduino library under
`extras/tools/` beside `et_pte.py` and `et_registration.py` and must run there with no pip
packages (Python 3.8 and newer). The generator imports it too (generator/pipeline/models.py).

What it does:

* `model_h(pte_bytes, ...)` writes the header: the program bytes as a 16-byte aligned const
  array, a comment recording their size and SHA-256, the arena the program needs on the
  board (`<array>_arena_bytes`, from `et_arena.py`), then the kernel selection of the
  operators the program calls (`kernel_selection_h`, or `all_kernels_h` to register every
  kernel); the symbols are `et_registration`'s.
* Every variable it defines is a C++17 `inline` variable (the board core compiles sketches
  with -std=gnu++17): included from several files of a sketch, the header defines one array,
  not one per file (a namespace-scope `const` array has internal linkage: a copy per
  translation unit). The kernel selection's functions are weak: one definition is linked.
* `pte_from_model_h(text)` reads the bytes back from such a header (or any
  `uint8_t NAME[] = {0x..}`), verified against the recorded size and SHA-256.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Iterable
from pathlib import Path

try:
    import et_registration
except ImportError:  # imported by path from elsewhere: et_registration.py is beside this file
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import et_registration
import et_pte  # et_registration imported it: importable now

__all__ = [
    "MODEL_ARRAY",
    "MODEL_HEADER",
    "all_kernels_h",
    "is_c_identifier",
    "kernel_selection_h",
    "model_h",
    "pte_from_model_h",
]

#: The C array a model.h declares unless told otherwise (every example sketch uses it);
#: must match generator/library/layout.py MODEL_ARRAY (a test checks).
MODEL_ARRAY = "model_pte"
#: The header a sketch includes (pte_to_header.py writes it; each example has one).
MODEL_HEADER = "model.h"

_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_C_KEYWORDS = frozenset(
    (
        "alignas",
        "alignof",
        "and",
        "asm",
        "auto",
        "bool",
        "break",
        "case",
        "catch",
        "char",
        "class",
        "const",
        "constexpr",
        "continue",
        "decltype",
        "default",
        "delete",
        "do",
        "double",
        "else",
        "enum",
        "explicit",
        "export",
        "extern",
        "false",
        "float",
        "for",
        "friend",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "mutable",
        "namespace",
        "new",
        "noexcept",
        "not",
        "nullptr",
        "operator",
        "or",
        "private",
        "protected",
        "public",
        "register",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "struct",
        "switch",
        "template",
        "this",
        "throw",
        "true",
        "try",
        "typedef",
        "typeid",
        "typename",
        "union",
        "unsigned",
        "using",
        "virtual",
        "void",
        "volatile",
        "while",
    )
)


def is_c_identifier(name: str) -> bool:
    """Whether `name` can be used verbatim as a C++ variable name."""
    return bool(_C_IDENTIFIER.match(name)) and name not in _C_KEYWORDS


# ---------------------------------------------------------------------------------------
# Kernel selection in model.h


def all_kernels_h() -> list[str]:
    """The lines of a model.h that registers every kernel of the library (see
    `et_registration.SELECT_ALL_SYMBOL`), for a program whose operators are not known (not
    read, or a sketch that also loads programs from elsewhere)."""
    return [
        "// Kernel selection: every kernel of the library (this header does not name its",
        "// program's operators; see \"Kernel selection\" in the library's README).",
        "#ifndef ET_ARDUINO_SELECT_ALL_KERNELS",
        "#define ET_ARDUINO_SELECT_ALL_KERNELS",
        f'extern "C" void {et_registration.REGISTER_ALL_SYMBOL}(void);',
        f'extern "C" __attribute__((weak)) void {et_registration.SELECT_ALL_SYMBOL}(void) {{',
        f"  {et_registration.REGISTER_ALL_SYMBOL}();",
        "}",
        "#endif",
    ]


def kernel_selection_h(operators: Iterable[str]) -> list[str]:
    """The lines of model.h that select the kernels of `operators` (registry names).

    Each operator gets a weak `et_arduino_select_<op>` calling the library's
    `et_arduino_register_<op>`, inside an include guard of its own, so several model.h files
    in one sketch (one translation unit or several) register the union of their operators;
    and the weak, empty `et_arduino_kernels_fallback` says "this sketch selects its kernels"
    (without it the library registers every kernel). Nothing here runs before the runtime's
    first registry lookup (Program::load_method): a sketch that never loads a method links no
    kernel. Empty `operators` (a program of delegate calls only) selects no kernel.
    """
    lines = [
        "// Kernel selection: register and link only the kernels this program calls (see",
        '// "Kernel selection" in the library\'s README). Several model.h files in one sketch',
        "// register the union of their operators.",
        "#ifndef ET_ARDUINO_KERNEL_SELECTION",
        "#define ET_ARDUINO_KERNEL_SELECTION",
        f'extern "C" __attribute__((weak)) void {et_registration.FALLBACK_SYMBOL}(void) {{}}',
        "#endif",
    ]
    for op in sorted(set(operators)):
        sym = et_registration.kernel_symbol(op)
        guard = f"ET_ARDUINO_SELECT_{sym}"
        lines += [
            f"// {op}",
            f"#ifndef {guard}",
            f"#define {guard}",
            f'extern "C" void {et_registration.REGISTER_PREFIX}{sym}(void);',
            f'extern "C" __attribute__((weak)) void {et_registration.SELECT_PREFIX}{sym}(void) {{',
            f"  {et_registration.REGISTER_PREFIX}{sym}();",
            "}",
            "#endif",
        ]
    return lines


# ---------------------------------------------------------------------------------------
# The header


def model_h(
    pte_bytes: bytes,
    *,
    name: str = MODEL_ARRAY,
    source: str = "model.pte",
    operators: Iterable[str] | None = None,
    all_kernels: bool = False,
    arena_bytes: int | None = None,
    arena_note: str = "the program was not read",
    host_arena_bytes: int | None = None,
) -> str:
    """The C++ header text a sketch includes to get the program bytes.

    Defines `alignas(16) inline constexpr uint8_t <name>[]` (plain read-only data: no
    section attribute, so every Arduino core's linker script places it in flash),
    `inline constexpr size_t <name>_size = sizeof(<name>)` and, given `arena_bytes`,
    `inline constexpr size_t <name>_arena_bytes`; `inline`: one definition however many
    files of a sketch include the header (C++17). A comment records the byte count and
    SHA-256 so `pte_from_model_h` can recover and verify the exact bytes. Deterministic:
    the same input gives the same text.

    Args:
        pte_bytes: the `.pte` file contents.
        name: the array name; must be a C identifier.
        source: the file name recorded in the banner (one line of text).
        operators: the operators the program's kernel calls use (registry names); the
            header then selects exactly their kernels (`kernel_selection_h`). None: no
            selection, the library registers every kernel unless another model.h of the
            sketch selects its own (the header of library 0.2.0).
        all_kernels: instead, register every kernel whatever the other model.h files select
            (`all_kernels_h`).
        arena_bytes: the arena `ETModel` needs for the program on the board
            (`et_arena.method_arena(...).total`); None: no `<name>_arena_bytes` (a program
            that was not read, or whose figure is incomplete), and a comment says why.
        arena_note: with `arena_bytes` None, why there is no figure (one line).
        host_arena_bytes: the same on a 64-bit host (`et_arena.host_arena_bytes`: the
            check's host run), used where pointers are 8 bytes; None: the board's figure
            everywhere.

    Raises:
        ValueError: `name` is not a C identifier, `source` spans lines, `pte_bytes` is
            empty (a zero-length array does not compile), an operator name has no
            identifier character, `arena_bytes` is negative or `arena_note` spans lines.
    """
    if not is_c_identifier(name):
        raise ValueError(
            f"array name {name!r} is not a C identifier: it is emitted verbatim, so "
            "anything else fails to compile; use letters, digits and _"
        )
    if "\n" in source or "\r" in source:
        raise ValueError(f"source {source!r} must be one line")
    if "\n" in arena_note or "\r" in arena_note:
        raise ValueError(f"arena note {arena_note!r} must be one line")
    for figure in (arena_bytes, host_arena_bytes):
        if figure is not None and figure < 0:
            raise ValueError(f"arena bytes {figure} is negative")
    data = bytes(pte_bytes)
    if not data:
        raise ValueError(f"{source} is empty; export the model again")
    digest = hashlib.sha256(data).hexdigest()
    lines = [
        f"// Generated from {source} by et_model_h.py (extras/tools). Do not edit.",
        "// Regenerate: python3 extras/tools/pte_to_header.py MODEL.pte -o model.h"
        + (f" --name {name}" if name != MODEL_ARRAY else ""),
        f"// {name}: {len(data)} bytes, sha256 {digest}",
        "#pragma once",
        "",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        "// 16-byte aligned: ExecuTorch reads tensors and the flatbuffer in place.",
        "// inline: one copy however many files of the sketch include this header.",
        f"alignas(16) inline constexpr uint8_t {name}[] = {{",
    ]
    for i in range(0, len(data), 16):
        lines.append("    " + ", ".join(f"0x{b:02x}" for b in data[i : i + 16]) + ",")
    lines.append("};")
    lines.append(f"inline constexpr size_t {name}_size = sizeof({name});")
    lines.append("")
    if arena_bytes is not None:
        constant = f"inline constexpr size_t {name}_arena_bytes = "
        lines += [
            "// Arena bytes ETModel's begin() takes for this program's first method on a 32-bit",
            "// board (memory plan + what load_method allocates + ETModel's table; et_arena.py).",
        ]
        if host_arena_bytes is None:
            lines.append(f"{constant}{arena_bytes};")
        else:
            lines += [
                "// A 64-bit host (the library check's host run) needs more: 8-byte pointers.",
                "#if defined(__SIZEOF_POINTER__) && __SIZEOF_POINTER__ == 8",
                f"{constant}{host_arena_bytes};",
                "#else",
                f"{constant}{arena_bytes};",
                "#endif",
            ]
    else:
        lines.append(f"// No {name}_arena_bytes: {arena_note}.")
    if all_kernels:
        lines += ["", *all_kernels_h()]
    elif operators is not None:
        lines += ["", *kernel_selection_h(operators)]
    return "\n".join(lines) + "\n"


#: `NAME[] = {` or `NAME[N] = {`, then the body up to `}`, or to the end of the text when
#: nothing closes it (matched once, not retried at every later array: linear time).
_ARRAY = re.compile(
    r"\b(?P<name>[A-Za-z_]\w*)\s*\[\s*\d*\s*\]\s*=\s*\{(?P<body>[^}]*)(?P<close>\}?)"
)
_DIGEST = re.compile(r"//\s*(?P<name>\w+):\s*(?P<size>\d+) bytes, sha256 (?P<sha>[0-9a-f]{64})")
#: A comment in an array body; an unclosed block comment runs to the end (linear time).
_COMMENT = re.compile(r"//[^\n]*|/\*(?:.*?\*/|.*\Z)", re.S)


def _shown(item: str) -> str:
    """`item` for a message: quoted, at most 40 characters of it."""
    return repr(item if len(item) <= 40 else item[:40] + "...")


def pte_from_model_h(text: str, *, name: str | None = None) -> bytes:
    """Recover the `.pte` bytes from a `model.h` (ours, or any `uint8_t NAME[] = {0x..}`).

    Args:
        text: the header text.
        name: the array to read; None: the one named in our size/sha256 comment, else
            the first byte array in the file.

    Returns:
        The bytes, verified against the recorded size and SHA-256 when the header has them.

    Raises:
        et_pte.PteError: no such array, an array or comment not closed, a value that is not a
            byte, or a size/hash mismatch.
    """
    recorded = {m.group("name"): m for m in _DIGEST.finditer(text)}
    if name is None and recorded:
        name = next(iter(recorded))
    for m in _ARRAY.finditer(text):
        array = m.group("name")
        if name is not None and array != name:
            continue
        if not m.group("close"):
            raise et_pte.PteError(f"array {array}: no closing }}; the header is truncated")
        out = bytearray()
        body = m.group("body")
        for comment in _COMMENT.finditer(body):
            if comment.group().startswith("/*") and not comment.group().endswith("*/"):
                raise et_pte.PteError(f"array {array}: a /* comment is not closed")
        for item in _COMMENT.sub(" ", body).split(","):
            item = item.strip()
            if not item:
                continue
            try:
                value = int(item, 0)
            except ValueError:
                raise et_pte.PteError(f"array {array}: {_shown(item)} is not a number") from None
            if not 0 <= value <= 255:
                raise et_pte.PteError(f"array {array}: {_shown(item)} is not a byte")
            out.append(value)
        data = bytes(out)
        check = recorded.get(array)
        if check is not None:
            size = check.group("size")
            if str(len(data)) != (size.lstrip("0") or "0"):  # no int(): 5,000 digits fail
                raise et_pte.PteError(
                    f"array {array} has {len(data)} bytes, its comment says "
                    f"{_shown(size)[1:-1]}: the header was edited or truncated"
                )
            if hashlib.sha256(data).hexdigest() != check.group("sha"):
                raise et_pte.PteError(
                    f"array {array}: SHA-256 differs from the one recorded: the header was edited"
                )
        return data
    wanted = f"array {name!r}" if name else "byte array"
    raise et_pte.PteError(
        f"no {wanted} found in the header; regenerate the model.h from the .pte with "
        "extras/tools/pte_to_header.py"
    )
