"""`lint`'s runner: `lint_library` checks a library folder against every rule of
`generator.lint.table.RULES` and returns a `LintReport`.
"""

from __future__ import annotations

from pathlib import Path

from generator.library.layout import LIBRARY_NAME
from generator.lint.install import installed_paths, longest, object_paths
from generator.lint.library_tree import gather
from generator.lint.report import LintFinding, LintReport
from generator.lint.table import RULES
from generator.util.errors import FatalError


def lint_library(library: Path, *, name: str = LIBRARY_NAME) -> LintReport:
    """Check the library at `library` against `RULES` (the Library Manager's rules, then
    the OS rules: whether Windows, macOS and Linux can hold it once installed).

    Args:
        library: the library root (library.properties, src/, examples/, ...).
        name: the name the library is registered under in the Library Manager;
            `name=` in library.properties must equal it (rule LP018, offline).

    Returns:
        the findings, in `RULES` order; `.passed` is True only when there is none; the
        longest installed and object paths on Windows (`generator.library.install_paths`).

    Raises:
        FatalError: `library` does not exist or is not a folder. Everything else (an
            unreadable or malformed library.properties included) is a finding.

    Source: arduino-lint's rule table and rule functions (see the module docstring), and
    `generator.library.install_paths` for the OS rules.
    """
    root = Path(library).resolve()
    if not root.exists():
        raise FatalError(f"{library} does not exist; pass the library's root folder")
    if not root.is_dir():
        raise FatalError(f"{library} is not a folder; pass the library's root folder")
    facts = gather(root, name)
    findings = tuple(
        LintFinding(rule.rule_id, rule.level, path, message)
        for rule in RULES
        for path, message in rule.check(facts)
    )
    return LintReport(root, findings, longest(installed_paths(facts)), longest(object_paths(facts)))
