"""The code stays readable in pieces: no module of `generator/` over `MAX_MODULE_LINES` lines and
no function over `MAX_FUNCTION_LINES` (a function's lines run from its `def`, decorators aside,
to its last line, docstring included). `OVER_LIMIT` names what may be over (nothing), and a
name in it that is back under the limit fails too, so the list is kept true.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "generator"

MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80

#: What is over a limit, as "path" (a module) or "path:function": nothing. A module or
#: function that grows past a limit is split, not listed here.
OVER_LIMIT: frozenset[str] = frozenset()


def too_long(root: Path = PACKAGE) -> set[str]:
    """Every module of `root` over `MAX_MODULE_LINES` and every function over
    `MAX_FUNCTION_LINES`, named as in `OVER_LIMIT` (nested functions and methods by their own
    name)."""
    found = set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > MAX_MODULE_LINES:
            found.add(rel)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                end = node.end_lineno or node.lineno
                if end - node.lineno + 1 > MAX_FUNCTION_LINES:
                    found.add(f"{rel}:{node.name}")
    return found


def test_no_module_or_function_grows_past_its_limit() -> None:
    found = too_long()
    assert "util/errors.py" not in found  # a short module is not reported
    assert found - OVER_LIMIT == set(), "over the limit: split it"
    assert OVER_LIMIT - found == set(), "under the limit now: remove it from OVER_LIMIT"


def test_the_measure_counts_a_long_function_and_module(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "long.py").write_text(f"def f():\n{body}\n", encoding="utf-8")
    (tmp_path / "short.py").write_text("def g():\n    return 1\n", encoding="utf-8")
    (tmp_path / "big.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1), encoding="utf-8")
    assert too_long(tmp_path) == {"long.py:f", "big.py"}
