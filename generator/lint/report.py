"""What one `lint` run found: `LintFinding` (one broken rule) and `LintReport` (all of them, the
longest paths on Windows, and the report as text lines or Markdown).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from generator.library import install_paths as ip
from generator.lint.table import ARDUINO_LINT, LM_RULES, NOT_CHECKED, OS_RULES, RULES_URL


@dataclass(frozen=True)
class LintFinding:
    """One broken rule.

    Attributes:
        rule_id: arduino-lint's rule ID (e.g. "LP012"); level: "error" or "warning" (both
        fail `arduino-lint --compliance strict`); path: the offending file or folder,
        relative to the library with "/" separators, "" for the library itself;
        message: what is wrong and what to do.
    """

    rule_id: str
    level: str
    path: str
    message: str

    def __str__(self) -> str:
        """`LP012 error library.properties: message` (the library itself shows as ".")."""
        return f"{self.rule_id} {self.level} {self.path or '.'}: {self.message}"


@dataclass(frozen=True)
class LintReport:
    """Every finding of one lint run, in `RULES` order.

    Attributes:
        library: the library folder (resolved); findings: the broken rules;
        longest_installed: the library's longest path once the Library Manager installed
        it on Windows (None for an empty library); longest_object: the longest path of a
        library object arduino-cli builds on Windows (None when nothing compiles).
    """

    library: Path
    findings: tuple[LintFinding, ...]
    longest_installed: ip.LongPath | None = None
    longest_object: ip.LongPath | None = None

    @property
    def passed(self) -> bool:
        """True when nothing was found: in strict mode warnings fail as errors do."""
        return not self.findings

    def counts(self) -> str:
        """`2 errors, 1 warning` (or `no findings`)."""
        errors = sum(f.level == "error" for f in self.findings)
        warnings = len(self.findings) - errors
        parts = [f"{errors} error{'s' * (errors != 1)}"] if errors else []
        parts += [f"{warnings} warning{'s' * (warnings != 1)}"] if warnings else []
        return ", ".join(parts) or "no findings"

    def path_lengths(self) -> str:
        """One line: the longest installed and object paths on Windows, and the budget.

        e.g. `longest installed path: 152 of 220 characters (src/a.h); longest object
        path: 196 of 220 characters (src/b.c)`.
        """
        parts = [
            f"{what}: {p.length} of {ip.PATH_BUDGET} characters ({p.rel})"
            for what, p in (
                ("longest installed path", self.longest_installed),
                ("longest object path", self.longest_object),
            )
            if p is not None
        ]
        return "; ".join(parts) or "no file to install"

    def to_lines(self, shown: Path | str) -> list[str]:
        """The report as `python -m generator lint` prints it: one line per finding
        (`LP012 error library.properties: ...`), the longest installed and object paths on
        Windows, then the verdict; `shown` is the library as the user named it."""
        lines = [str(f) for f in self.findings]
        lines.append(f"lint: on Windows ({ip.WINDOWS_USER_NOTE}): {self.path_lengths()}")
        if self.passed:
            lines.append(
                f"lint: {shown} passed the {len(LM_RULES)} rules of {ARDUINO_LINT} and "
                f"the {len(OS_RULES)} rules for installing on Windows, macOS and Linux, and "
                "GitHub's file size limit"
            )
        else:
            lines.append(
                f"lint: {shown} failed ({self.counts()}); the Library Manager would refuse "
                f"it, or some users could not install it. Rule IDs are explained at {RULES_URL} "
                "(OS rules: generator/library/install_paths.py)"
            )
        return lines

    def to_markdown(self) -> str:
        """The report as Markdown: verdict, the longest paths, then one bullet per finding."""
        verdict = "✅ passed" if self.passed else "❌ failed"
        not_checked = ", ".join(NOT_CHECKED)
        lines = [
            f"## Library Manager lint: {verdict}",
            "",
            f"`{self.library.name}` against the {len(LM_RULES)} rules of "
            f"`{ARDUINO_LINT}` that run offline (not checked: {not_checked}) and the "
            f"{len(OS_RULES)} rules for installing on Windows, macOS and Linux, and "
            f"GitHub's file size limit: "
            f"{self.counts()}.",
            "",
            f"On Windows ({ip.WINDOWS_USER_NOTE}): {self.path_lengths()}.",
        ]
        if self.findings:
            lines.append("")
            lines += [
                f"- ❌ **{f.rule_id}** {f.level} `{f.path or '.'}`: {f.message}"
                for f in self.findings
            ]
            lines += [
                "",
                f"Rule IDs are explained at {RULES_URL}; the OS rules are this generator's "
                "(generator/library/install_paths.py).",
            ]
        return "\n".join(lines) + "\n"
