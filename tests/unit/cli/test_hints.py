"""Every option that a message of the generator names exists: a hint that names an option the
next command rejects is worse than no hint."""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

from generator.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[3]
#: Options of other programs that messages quote on purpose (git, arduino-lint).
#: Options of other tools (git config, arduino-lint) that messages tell the user to run.
FOREIGN = {
    "--global",
    "--add",
    "--library-manager",
    "--compliance",
    "--show-origin",
    "--get-regexp",
}
#: Modules whose every string is a message to the user.
MESSAGE_MODULES = {"generator/vcs/failures.py", "generator/util/urls.py"}
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9]")


def _options(parser: argparse.ArgumentParser) -> set[str]:
    found: set[str] = set()
    for action in parser._actions:
        found.update(s for s in action.option_strings if s.startswith("--"))
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _options(sub)
    return found


def _strings(node: ast.AST) -> list[str]:
    return [
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def _messages(path: Path) -> list[str]:
    """The strings of `path` that reach the user: arguments of an `...Error(...)` call (every
    string in the message modules)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if path.relative_to(ROOT).as_posix() in MESSAGE_MODULES:
        return _strings(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name.endswith("Error"):
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    found += _strings(arg)
    return found


def test_every_option_a_message_names_exists() -> None:
    known = _options(build_parser()) | FOREIGN
    unknown: dict[str, set[str]] = {}
    for path in sorted((ROOT / "generator").rglob("*.py")):
        for message in _messages(path):
            for option in OPTION.findall(message):
                if option not in known:
                    unknown.setdefault(option, set()).add(path.relative_to(ROOT).as_posix())
    assert not unknown, f"messages name options no command has: {unknown}"


def test_the_check_finds_a_wrong_option(tmp_path: Path) -> None:
    bad = tmp_path / "x.py"
    bad.write_text('raise FatalError(f"pass --libary-version {v}")\n')
    assert [OPTION.findall(m) for m in _messages_of(bad)] == [["--libary-version"]]


def _messages_of(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [s for node in ast.walk(tree) if isinstance(node, ast.Call) for s in _strings(node)]
