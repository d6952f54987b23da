"""`lint`'s rule table: the Library Manager's rules for a library, checked offline, then this
generator's own (OS, GH).

The rules are those `arduino-lint --library-manager update --compliance strict` runs on a
library and its example sketches, under arduino-lint's own rule IDs (LS: structure,
LP: library.properties, LC: code, LD: documentation, SS/SC: example sketches), so a
maintainer can look each one up at https://arduino.github.io/arduino-lint/latest/rules/.
Each family lives in its own module (`structure`, `properties_file`, `properties_fields`,
`code_docs`, `sketches`) with its part of the table; `RULES` joins them, and
`generator.lint.run.lint_library` runs it.

Sources of facts: arduino-lint at commit f8104a9dd8ef (github.com/arduino/arduino-lint):

- IDs, briefs and levels: `internal/rule/ruleconfiguration/ruleconfiguration.go`. A rule's
  level is the first of its ErrorModes / WarningModes that is active in the modes "update"
  and "strict", else its "default" one (`internal/rule/rulelevel/rulelevel.go`); whether it
  runs at all comes the same way from EnableModes / DisableModes (`internal/rule/rule.go`).
  Under those flags every rule here is an error except LS004, LS008 and LD004 (warnings);
  the tool fails on both.
- What each rule checks: `internal/rule/rulefunction/library.go`, `sketch.go`,
  `rulefunction.go`; which folders are example sketches: `internal/project/project.go`.
- The field constraints: `generator.lint.properties_schema`; reading library.properties and
  the library's layout: `generator.lint.library_tree`.

Not checked, because they need the network or a dictionary: LP022 (a git tag ahead of
`version`), LP033 / LP035 (misspelled words), LP042 (`url` loads), LP048 (each `depends`
entry is in the Library Manager index). LP018 (the name is in the Library Manager index)
is checked as "name equals the registered name" (`--name`). See `NOT_CHECKED`.

The OS rules (OS001-OS006, `generator.lint.install`) and the push rule (GH001,
`generator.lint.push`) are this generator's own, not arduino-lint's.
"""

from __future__ import annotations

from generator.lint.code_docs import CODE_DOCS_RULES
from generator.lint.install import OS_RULES
from generator.lint.library_tree import Rule
from generator.lint.properties_fields import FIELD_RULES
from generator.lint.properties_file import PROPERTIES_FILE_RULES
from generator.lint.push import PUSH_RULES
from generator.lint.sketches import SKETCH_RULES
from generator.lint.structure import STRUCTURE_RULES

__all__ = [
    "ARDUINO_LINT",
    "LM_RULES",
    "NOT_CHECKED",
    "OS_RULES",
    "PUSH_RULES",
    "RULES",
    "RULES_URL",
]

#: Where arduino-lint documents every rule ID.
RULES_URL = "https://arduino.github.io/arduino-lint/latest/rules/"
#: The arduino-lint invocation whose verdict `lint` reproduces.
ARDUINO_LINT = "arduino-lint --library-manager update --compliance strict"

#: Rules of that invocation that are not checked here, and why.
NOT_CHECKED: dict[str, str] = {
    "LP022": "needs the library's git tags",
    "LP033": "needs arduino-lint's misspelled-words dictionary",
    "LP035": "needs arduino-lint's misspelled-words dictionary",
    "LP042": "needs the network (loads the url)",
    "LP048": "needs the Library Manager index (network)",
}

#: Every arduino-lint rule checked, in arduino-lint's order (ruleconfiguration.go), library
#: then sketch.
LM_RULES: tuple[Rule, ...] = (
    STRUCTURE_RULES + PROPERTIES_FILE_RULES + FIELD_RULES + CODE_DOCS_RULES + SKETCH_RULES
)

#: Every rule `lint_library` runs: arduino-lint's, then the OS rules, then the push rule.
RULES: tuple[Rule, ...] = LM_RULES + OS_RULES + PUSH_RULES
