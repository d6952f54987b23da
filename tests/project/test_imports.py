"""The modules of `generator` import each other without a cycle, so each step reads on its own
and data flows one way (ref -> checkout -> tree -> check report -> pull request).

The graph has an edge for every import of a `generator` module written anywhere in a module:
at the top, in a function (imports deferred to keep start-up light count too), under
`TYPE_CHECKING`, relative or absolute. `from generator.x import name` is an edge to
`generator.x.name` when that is a module, else to `generator.x`. A package importing its own
modules (a package `__init__` re-exporting a step) is an ordinary edge; that the
packages' initialization order works is what the second test shows, by importing each module
alone in a fresh interpreter. The layers (`LAYERS`) are a third test: a package imports
nothing of a layer above its own, so the plumbing knows nothing of the steps, the steps
nothing of the check, the check nothing of the verbs that publish, and only `cli` parses.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "generator"


def _modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of `generator`."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the `generator` modules it imports (see the module docstring)."""
    modules = _modules()

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {owner(a.name) for a in node.names if a.name.startswith("generator")}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, *([node.module] if node.module else [])])
                if base == "generator" or base.startswith("generator."):
                    for alias in node.names:
                        full = f"{base}.{alias.name}"
                        targets.add(full if full in modules else owner(base))
        graph[name] = {t for t in targets if t is not None and t != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `graph` as [a, b, ..., a], or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_import_graph_has_no_cycle() -> None:
    graph = import_graph()
    assert "generator.pipeline.run" in graph and graph["generator.sync.body"]  # it was read
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


#: The layers, lowest first: a package imports only packages of its own layer or below (the
#: root `generator` package, `data_dir` and `PROJECT_ROOT`, sits below them all). Each layer
#: is what the next one runs: plumbing, tables, facts about the library, git and lint, the
#: main job (`pipeline`), the check, the verbs that publish, sync on top of them, the CLI.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("util",),
    ("boards", "toolchain"),
    ("library",),
    ("vcs", "lint"),
    ("pipeline",),
    ("check",),
    ("release", "workflows"),
    ("sync",),
    ("cli", "__main__"),
)


def layer_of(module: str) -> int:
    """The index in `LAYERS` of `module`'s package (`generator.<package>...`); -1 for the root.

    Raises:
        KeyError: a package no layer names (a new package must be given a layer).
    """
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "_data":
        return -1
    for index, packages in enumerate(LAYERS):
        if parts[1] in packages:
            return index
    raise KeyError(f"{module}: package {parts[1]!r} is in no layer of LAYERS")


def arrows_up(graph: dict[str, set[str]]) -> list[str]:
    """Every import of `graph` into a higher layer, as "importer -> imported"."""
    return sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if layer_of(target) > layer_of(module)
    )


def test_no_import_runs_back_up_the_layers() -> None:
    graph = import_graph()
    assert "generator.pipeline.prune" in graph and "generator.toolchain.gcc" in graph  # it was read
    assert arrows_up(graph) == []


def test_every_package_has_a_layer() -> None:
    packages = {m.split(".")[1] for m in import_graph() if m.count(".") >= 1}
    named = {p for layer in LAYERS for p in layer}
    assert packages - named <= {"_data"}, sorted(packages - named)


def test_the_layer_rule_finds_an_arrow_up() -> None:
    graph = {"generator.pipeline.render": {"generator.check.plan", "generator.library.layout"}}
    assert arrows_up(graph) == ["generator.pipeline.render -> generator.check.plan"]
    assert arrows_up({"generator.release.run": {"generator.sync.stage"}}) == [
        "generator.release.run -> generator.sync.stage"
    ]
    # side by side in one layer is allowed; the root package is below every layer
    assert arrows_up({"generator.vcs.git": {"generator.lint.run", "generator"}}) == []
    assert arrows_up({"generator.util.cache": {"generator.boards.budgets"}}) == [
        "generator.util.cache -> generator.boards.budgets"
    ]


def test_the_cycle_finder_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_every_module_imports_alone() -> None:
    """Each module, imported first in a fresh set of `generator` modules, finds what it
    imports already defined (a re-export from a package its own imports pass through would
    fail here)."""
    names = sorted(n for n in _modules() if n != "generator.__main__")
    script = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    for loaded in [m for m in sys.modules if m == 'generator' or "
        "m.startswith('generator.')]:\n"
        "        del sys.modules[loaded]\n"
        "    importlib.import_module(name)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script],
        cwd=PACKAGE.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
