"""The constraints on library.properties' fields that the LP rules test, as arduino-lint has them.

Sources: arduino-lint at commit f8104a9dd8ef,
`etc/schemas/arduino-library-properties-definitions-schema.json` and
`etc/schemas/general-definitions-schema.json` (name characters and lengths, the relaxed and
strict SemVer patterns, the category list, the depends pattern, the misspelled field names,
`format: uri`); `depends` version constraints: go.bug.st/relaxed-semver `ParseConstraint`.
Go's RE2 classes are ASCII.
"""

from __future__ import annotations

import re

from generator.library.properties import GO_SPACE

# The schema's name pattern is `^((L C*)|(D C*L C*))*$` (L letter, D digit, C a name
# character); written as its equivalent `(L C*|D C*L C*)?` since Python's backtracking
# engine takes exponential time on the nested repetition where Go's RE2 does not.
_NAME_TOKEN = r"(?:[a-zA-Z][a-zA-Z0-9 _.\-]*|[0-9][a-zA-Z0-9 _.\-]*[a-zA-Z][a-zA-Z0-9 _.\-]*)"
NAME_CHARACTERS = re.compile(rf"^{_NAME_TOKEN}?$")
STARTS_WITH_ARDUINO = re.compile(r"^[aA][rR][dD][uU][iI][nN][oO].*$")
CONTAINS_ARDUINO = re.compile(r"^.+[aA][rR][dD][uU][iI][nN][oO].*$")
CONTAINS_LIBRARY = re.compile(r"^.*[lL][iI][bB][rR][aA][rR][yY].*$")
SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-((0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(\+([0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*))?$",
    re.ASCII,
)
RELAXED_SEMVER = re.compile(
    r"^(0|[1-9]\d*)(\.(0|[1-9]\d*))?(\.(0|[1-9]\d*))?"
    r"(-((0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(\+([0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*))?$",
    re.ASCII,
)
DEPENDS = re.compile(rf"^(?:{_NAME_TOKEN}(?: \(.*\) *)?, *)*(?:{_NAME_TOKEN}(?: \(.*\) *)?)?$")
CATEGORIES: tuple[str, ...] = (
    "Display",
    "Communication",
    "Signal Input/Output",
    "Sensors",
    "Device Control",
    "Timing",
    "Data Storage",
    "Data Processing",
    "Other",
)
#: Misspelled optional field names (strict schema) and the field each one means.
MISSPELLED_FIELDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), meant)
    for pattern, meant in (
        (r"^[dD][eE][pP][eE][nN][dD]$", "depends"),
        (r"^D[eE][pP][eE][nN][dD][sS]$", "depends"),
        (r"^[dD][oO][tT][_-]?[aA][_-]?[lL][iI][nN][kK][aA][gG][eE][sS]$", "dot_a_linkage"),
        (r"^[dD][oO][tT]-?[aA]-?[lL][iI][nN][kK][aA][gG][eE]$", "dot_a_linkage"),
        (r"^D[oO][tT]_[aA]_[lL][iI][nN][kK][aA][gG][eE]$", "dot_a_linkage"),
        (r"^[iI][nN][cC][lL][uU][dD][eE]$", "includes"),
        (r"^I[nN][cC][lL][uU][dD][eE][sS]$", "includes"),
        (r"^[pP][rR][eE][-_]?[cC][oO][mM][pP][iI][lL][eE]$", "precompiled"),
        (r"^[pP][rR][eE][-_][cC][oO][mM][pP][iI][lL][eE][dD]$", "precompiled"),
        (r"^P[rR][eE][-_]?[cC][oO][mM][pP][iI][lL][eE][dD]$", "precompiled"),
        (r"^[lL][dD][-_]?[fF][lL][aA][gG]$", "ldflags"),
        (r"^[lL][dD][-_][fF][lL][aA][gG][sS]$", "ldflags"),
        (r"^L[dD][-_]?[fF][lL][aA][gG][sS]$", "ldflags"),
    )
)


def is_absolute_uri(value: str) -> bool:
    """JSON Schema `format: uri` as arduino-lint's validator checks it: Go's url.Parse
    accepts it and it has a scheme (approximated: scheme, no control characters, valid
    % escapes, no blank in the host part)."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        return False
    scheme = re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", value)
    if not scheme:
        return False
    if re.search(r"%(?![0-9A-Fa-f]{2})", value):
        return False
    rest = value[scheme.end() :]
    if rest.startswith("//"):
        authority = re.split(r"[/?#]", rest[2:], maxsplit=1)[0]
        if " " in authority:
            return False
    return True


class ConstraintError(ValueError):
    """A `depends` version constraint that does not parse."""


def parse_constraint(text: str) -> None:
    """Validate a `depends` version constraint (`>=1.2.0`, `^1 || =2.0.0`, `!(<1)`, ...).

    Raises:
        ConstraintError: it does not parse.

    Source: go.bug.st/relaxed-semver constraints.go ParseConstraint (versions: Parse).
    """
    text = text.strip(GO_SPACE)
    pos = 0

    def peek() -> str:
        return text[pos] if pos < len(text) else ""

    def take() -> str:
        nonlocal pos
        c = peek()
        pos += 1 if c else 0
        return c

    def skip_space() -> None:
        nonlocal pos
        while peek() == " ":
            pos += 1

    def version() -> None:
        nonlocal pos
        start = pos
        while peek() and (peek().isascii() and (peek().isalnum() or peek() in "-.+")):
            pos += 1
        if start == pos or not RELAXED_SEMVER.match(text[start:pos]):
            raise ConstraintError(f"no valid version at {text[start:]!r}")

    def terminal() -> None:
        skip_space()
        c = take()
        if c == "!":
            terminal()
        elif c == "(":
            constraint()
            skip_space()
            if take() != ")":
                raise ConstraintError(f"expected ')' at {text[pos - 1 :]!r}")
        elif c in ("=", "^"):
            version()
        elif c in (">", "<"):
            if peek() == "=":
                take()
            version()
        else:
            raise ConstraintError(f"unexpected {text[max(pos - 1, 0) :]!r}")

    def and_expr() -> None:
        terminal()
        while True:
            skip_space()
            if peek() != "&":
                return
            take()
            if take() != "&":
                raise ConstraintError(f"expected '&&' at {text[pos - 2 :]!r}")
            terminal()

    def constraint() -> None:
        and_expr()
        while True:
            skip_space()
            c = peek()
            if c == "|":
                take()
                if take() != "|":
                    raise ConstraintError(f"expected '||' at {text[pos - 2 :]!r}")
                and_expr()
            elif c in ("", ")"):
                return
            else:
                raise ConstraintError(f"unexpected {text[pos:]!r}")

    if text:
        constraint()
