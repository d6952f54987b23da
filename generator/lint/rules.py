"""`lint`: the Library Manager's rules for a library, checked offline.

The rules are those `arduino-lint --library-manager update --compliance strict` runs on a
library and its example sketches, under arduino-lint's own rule IDs (LS: structure,
LP: library.properties, LC: code, LD: documentation, SS/SC: example sketches), so a
maintainer can look each one up at https://arduino.github.io/arduino-lint/latest/rules/.
`RULES` is the table (id, level, arduino-lint's brief, check); `lint_library` runs it.

Sources of facts: arduino-lint at commit f8104a9dd8ef (github.com/arduino/arduino-lint):

- IDs, briefs and levels: `internal/rule/ruleconfiguration/ruleconfiguration.go`. A rule's
  level is the first of its ErrorModes / WarningModes that is active in the modes "update"
  and "strict", else its "default" one (`internal/rule/rulelevel/rulelevel.go`); whether it
  runs at all comes the same way from EnableModes / DisableModes (`internal/rule/rule.go`).
  Under those flags every rule here is an error except LS004, LS008 and LD004 (warnings);
  the tool fails on both.
- What each rule checks: `internal/rule/rulefunction/library.go`, `sketch.go`,
  `rulefunction.go`; which folders are example sketches: `internal/project/project.go`.
- The field constraints: `etc/schemas/arduino-library-properties-definitions-schema.json`
  and `etc/schemas/general-definitions-schema.json` (name characters and lengths, the
  relaxed and strict SemVer patterns, the category list, the depends pattern, the
  misspelled field names).
- Reading library.properties: go-properties-orderedmap `LoadFromBytes` (UTF-8, else
  ISO 8859-1; `key=value` lines, `#` comments, whitespace trimmed; a later key wins) and
  arduino-cli `arduino/libraries/loader.go` (the 1.5 layout is "src/ exists"; without
  library.properties a library is read as 1.0 "legacy", sources in the root).
- `depends` version constraints: go.bug.st/relaxed-semver `ParseConstraint`.

Not checked, because they need the network or a dictionary: LP022 (a git tag ahead of
`version`), LP033 / LP035 (misspelled words), LP042 (`url` loads), LP048 (each `depends`
entry is in the Library Manager index). LP018 (the name is in the Library Manager index)
is checked as "name equals the registered name" (`--name`). See `NOT_CHECKED`.

The OS rules (OS001-OS006) are this generator's own, not arduino-lint's: whether Windows,
macOS and Linux can all hold the library once the Library Manager installs it (names
Windows reserves or refuses, paths that differ only by case or Unicode normalization,
installed and object paths within Windows' MAX_PATH with a margin). Their facts and
sources: `generator.library.install_paths`. The report also gives the longest installed path and
the longest object path.

The push rule (GH001) is this generator's too: no file over GitHub's 100 MiB push limit
(`GITHUB_FILE_LIMIT_BYTES`, with its source), or the sync cannot push the library.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from generator.library import install_paths as ip
from generator.library.layout import LIBRARY_NAME, PROPERTIES_FILE
from generator.library.properties import GO_SPACE, parse_properties
from generator.util.errors import FatalError

__all__ = [
    "GITHUB_FILE_LIMIT_BYTES",
    "LM_RULES",
    "NOT_CHECKED",
    "OS_RULES",
    "PUSH_RULES",
    "RULES",
    "LintFinding",
    "LintReport",
    "Rule",
    "lint_library",
    "parse_properties",
]

Level = Literal["error", "warning"]
#: (path relative to the library, "" for the library itself; message)
Problem = tuple[str, str]

PROPERTIES = PROPERTIES_FILE
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

# arduino-cli globals: MainFileValidExtensions, AdditionalFileValidExtensions; library
# headers: arduino-lint internal/project/library/library.go.
_MAIN_SKETCH_EXTENSIONS = frozenset({".ino", ".pde"})
_SKETCH_EXTENSIONS = _MAIN_SKETCH_EXTENSIONS | {
    ".h",
    ".c",
    ".hpp",
    ".hh",
    ".cpp",
    ".S",
    ".adoc",
    ".md",
    ".json",
    ".tpp",
    ".ipp",
}
_HEADER_EXTENSIONS = frozenset({".h", ".hpp", ".hh"})

# --- the schema's patterns (etc/schemas/*.json); Go's RE2 classes are ASCII ------------
# The schema's name pattern is `^((L C*)|(D C*L C*))*$` (L letter, D digit, C a name
# character); written as its equivalent `(L C*|D C*L C*)?` since Python's backtracking
# engine takes exponential time on the nested repetition where Go's RE2 does not.
_NAME_TOKEN = r"(?:[a-zA-Z][a-zA-Z0-9 _.\-]*|[0-9][a-zA-Z0-9 _.\-]*[a-zA-Z][a-zA-Z0-9 _.\-]*)"
_NAME_CHARACTERS = re.compile(rf"^{_NAME_TOKEN}?$")
_STARTS_WITH_ARDUINO = re.compile(r"^[aA][rR][dD][uU][iI][nN][oO].*$")
_CONTAINS_ARDUINO = re.compile(r"^.+[aA][rR][dD][uU][iI][nN][oO].*$")
_CONTAINS_LIBRARY = re.compile(r"^.*[lL][iI][bB][rR][aA][rR][yY].*$")
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-((0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(\+([0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*))?$",
    re.ASCII,
)
_RELAXED_SEMVER = re.compile(
    r"^(0|[1-9]\d*)(\.(0|[1-9]\d*))?(\.(0|[1-9]\d*))?"
    r"(-((0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(\+([0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*))?$",
    re.ASCII,
)
_DEPENDS = re.compile(rf"^(?:{_NAME_TOKEN}(?: \(.*\) *)?, *)*(?:{_NAME_TOKEN}(?: \(.*\) *)?)?$")
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
_MISSPELLED_FIELDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
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
# rulefunction.go / library.go
_VALID_BASE_NAME = re.compile(r"^[a-zA-Z0-9_][a-zA-Z0-9_.-]*$")
_README = re.compile(
    r"(?i)^readme\.((markdown)|(mdown)|(mkdn)|(md)|(textile)|(rdoc)|(org)|(creole)|"
    r"(mediawiki)|(wiki)|(rst)|(asciidoc)|(adoc)|(asc)|(pod)|(txt))$"
)
_LICENSE = re.compile(
    r"(?i)^(((un)?licen[sc]e)|(copy(ing|right))|(ofl)|(patents))(\.((md)|(markdown)|(txt)|(html)))?$"
)
_MISSPELLED_PROPERTIES_FILE = re.compile(r"(?i)^librar((y)|(ie))s?[.-_]?propert((y)|(ie))s?$")
_MISSPELLED_EXTRAS = re.compile(r"(?i)^extra$")
_MISSPELLED_EXAMPLES = re.compile(r"(?i)^e((x)|(xs)|(s))((am)|(ma))p((le)|(el))s?$")
# `#include <arduino.h>` and other wrong cases (Go: `a((?i)rduino)|(ARDUINO)`); a line's
# leading blanks are Go's \s without the newline.
_ARDUINO_H_CASE = re.compile(
    rb'^[\t\f\r ]*#[\t\f\r ]*include[\t\f\r ]*["<](a(?i:rduino)|ARDUINO)\.[hH][">]',
    re.MULTILINE,
)
# librariesindex dependency syntax: `Name (constraint)`.
_DEPEND_ITEM = re.compile(r"^([^()]+?) *(?:\((.*)\))?$")
# Architecture aliases and their true Arduino architectures; common architectures whose
# case must be exact (library.go).
_ARCHITECTURE_ALIASES: dict[str, tuple[str, ...]] = {
    "atmelavr": ("avr",),
    "atmelmegaavr": ("megaavr",),
    "atmelsam": ("sam", "samd"),
    "espressif32": ("esp32",),
    "espressif8266": ("esp8266",),
    "intel_arc32": ("arc32",),
    "nordicnrf52": ("nRF5", "nrf52", "mbed", "mbed_edge", "mbed_nano"),
    "raspberrypi": ("mbed_nano", "mbed_rp2040", "rp2040"),
}
_COMMON_ARCHITECTURES: tuple[str, ...] = (
    "apollo3",
    "arc32",
    "avr",
    "esp32",
    "esp8266",
    "i586",
    "i686",
    "k210",
    "mbed",
    "mbed_edge",
    "mbed_nano",
    "mbed_portenta",
    "mbed_rp2040",
    "megaavr",
    "mraa",
    "nRF5",
    "nrf52",
    "pic32",
    "sam",
    "samd",
    "wiced",
    "win10",
)


# --- results --------------------------------------------------------------------------


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


# --- reading the library --------------------------------------------------------------


def _go_ext(name: str) -> str:
    """Go's filepath.Ext: from the last dot on (".ino" for ".ino"), "" without one."""
    dot = name.rfind(".")
    return name[dot:] if dot >= 0 else ""


@dataclass(frozen=True)
class _Entry:
    """One path of the library: `rel` is relative with "/"; `is_dir` follows symlinks."""

    path: Path
    rel: str
    is_dir: bool
    is_link: bool


def _listdir(folder: Path, root: Path) -> list[_Entry]:
    """The entries of `folder`, sorted by name like Go's os.ReadDir; [] if unreadable."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [
        _Entry(
            folder / n,
            (folder / n).relative_to(root).as_posix(),
            (folder / n).is_dir(),
            (folder / n).is_symlink(),
        )
        for n in names
    ]


def _walk(folder: Path, root: Path) -> Iterator[_Entry]:
    """Every path below `folder`; symlinked folders are listed but not entered."""
    for entry in _listdir(folder, root):
        yield entry
        if entry.is_dir and not entry.is_link:
            yield from _walk(entry.path, root)


def _files(folder: Path, root: Path) -> list[_Entry]:
    return [e for e in _listdir(folder, root) if not e.is_dir]


def _is_sketch(folder: Path, root: Path) -> bool:
    """A folder holding a file with a main sketch extension (.ino, .pde)."""
    return any(_go_ext(e.path.name) in _MAIN_SKETCH_EXTENSIONS for e in _files(folder, root))


def _sketches_under(folder: Path, root: Path) -> list[Path]:
    """`folder` if it is a sketch, else the sketches below it (not through symlinks)."""
    if _is_sketch(folder, root):
        return [folder]
    found: list[Path] = []
    for entry in _listdir(folder, root):
        if entry.is_dir and not entry.is_link:
            found += _sketches_under(entry.path, root)
    return found


@dataclass
class _Library:
    """What the rules look at, gathered once (arduino-lint's projectdata).

    `properties` is {} for a library without library.properties (`legacy`) and None
    when the file cannot be read or parsed (`properties_error` says why); arduino-cli
    then does not load the library at all.
    """

    root: Path
    registered_name: str
    legacy: bool
    properties: dict[str, str] | None
    properties_error: str | None
    recursive: bool
    source_dir: Path
    source_headers: list[str]
    sketches: list[Path]
    tree: list[_Entry] = field(default_factory=list)

    @property
    def loaded(self) -> bool:
        """arduino-cli's `libraries.Load` succeeded."""
        return self.properties_error is None

    def get(self, key: str) -> str | None:
        """The value of field `key`, None when absent or library.properties unreadable."""
        return None if self.properties is None else self.properties.get(key)

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()


def _gather(root: Path, registered_name: str) -> _Library:
    properties_path = root / PROPERTIES
    legacy = not properties_path.exists()
    properties: dict[str, str] | None = {}
    error: str | None = None
    if not legacy:
        try:
            properties = parse_properties(properties_path.read_bytes())
        except OSError as e:
            properties, error = None, f"it cannot be read ({e.strerror or e})"
        except ValueError as e:
            properties, error = None, str(e)
    recursive = not legacy and (root / "src").exists()
    source_dir = root / "src" if recursive else root
    headers = (
        [
            e.path.name
            for e in _files(source_dir, root)
            if _go_ext(e.path.name) in _HEADER_EXTENSIONS
        ]
        if source_dir.is_dir() and error is None
        else []
    )
    sketches: list[Path] = []
    for name in ("examples", "example"):
        folder = root / name
        if folder.is_dir():
            for entry in _listdir(folder, root):
                if entry.is_dir and not entry.is_link:
                    sketches += _sketches_under(entry.path, root)
    return _Library(
        root=root,
        registered_name=registered_name,
        legacy=legacy,
        properties=properties,
        properties_error=error,
        recursive=recursive,
        source_dir=source_dir,
        source_headers=headers,
        sketches=sketches,
        tree=list(_walk(root, root)),
    )


# --- helpers shared by rules ----------------------------------------------------------


def _wrong_case(entries: list[_Entry], correct: str) -> _Entry | None:
    """The first entry named `correct` in another case, unless the exact name comes first.

    Source: rulefunction.go containsIncorrectPathBaseCase.
    """
    for entry in entries:
        if entry.path.name == correct:
            return None
        if entry.path.name.lower() == correct.lower():
            return entry
    return None


def _misspelled(entries: list[_Entry], correct: str, pattern: re.Pattern[str]) -> _Entry | None:
    """The first entry whose name matches `pattern`, unless `correct` comes first.

    Source: rulefunction.go containsMisspelledPathBaseName.
    """
    for entry in entries:
        if entry.path.name == correct:
            return None
        if pattern.match(entry.path.name):
            return entry
    return None


def _comma_list(value: str) -> list[str]:
    return [item.strip(GO_SPACE) for item in value.split(",")]


def _sanitize_name(name: str) -> str:
    """arduino-cli utils.SanitizeName: the install folder (and header) name of a library.

    Keeps 0-9 A-Z a-z, and - . past the first byte; anything else becomes _.
    """
    out = []
    byte_index = 0
    for c in name:
        keep = c.isascii() and (c.isalnum() or (byte_index > 0 and c in "-."))
        out.append(c if keep else "_")
        byte_index += len(c.encode("utf-8"))
    sanitized = "".join(out)
    return sanitized[:64] if len(sanitized) > 63 else sanitized


def _is_absolute_uri(value: str) -> bool:
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


class _ConstraintError(ValueError):
    pass


def _parse_constraint(text: str) -> None:
    """Validate a `depends` version constraint (`>=1.2.0`, `^1 || =2.0.0`, `!(<1)`, ...).

    Raises:
        _ConstraintError: it does not parse.

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
        if start == pos or not _RELAXED_SEMVER.match(text[start:pos]):
            raise _ConstraintError(f"no valid version at {text[start:]!r}")

    def terminal() -> None:
        skip_space()
        c = take()
        if c == "!":
            terminal()
        elif c == "(":
            constraint()
            skip_space()
            if take() != ")":
                raise _ConstraintError(f"expected ')' at {text[pos - 1 :]!r}")
        elif c in ("=", "^"):
            version()
        elif c in (">", "<"):
            if peek() == "=":
                take()
            version()
        else:
            raise _ConstraintError(f"unexpected {text[max(pos - 1, 0) :]!r}")

    def and_expr() -> None:
        terminal()
        while True:
            skip_space()
            if peek() != "&":
                return
            take()
            if take() != "&":
                raise _ConstraintError(f"expected '&&' at {text[pos - 2 :]!r}")
            terminal()

    def constraint() -> None:
        and_expr()
        while True:
            skip_space()
            c = peek()
            if c == "|":
                take()
                if take() != "|":
                    raise _ConstraintError(f"expected '||' at {text[pos - 2 :]!r}")
                and_expr()
            elif c in ("", ")"):
                return
            else:
                raise _ConstraintError(f"unexpected {text[pos:]!r}")

    if text:
        constraint()


def _arduino_h_case(files: list[_Entry]) -> list[Problem]:
    """One problem per file (its first such line) including Arduino.h in a wrong case."""
    problems = []
    for entry in files:
        if entry.is_dir or _go_ext(entry.path.name) not in _SKETCH_EXTENSIONS:
            continue
        try:
            data = entry.path.read_bytes()
        except OSError:
            continue
        match = _ARDUINO_H_CASE.search(data)
        if match:
            line_no = data.count(b"\n", 0, match.start()) + 1
            line = match.group(0).decode("utf-8", "replace").strip()
            problems.append(
                (
                    entry.rel,
                    f"line {line_no}: `{line}`: the core header is Arduino.h, and file "
                    "names are case-sensitive on Linux; write #include <Arduino.h>",
                )
            )
    return problems


# --- the rules: structure (LS) --------------------------------------------------------


def _ls001_invalid_library(lib: _Library) -> list[Problem]:
    if not lib.loaded:
        return [
            (
                PROPERTIES,
                "arduino-cli cannot load the library because library.properties does not "
                "parse (see LP005); fix that file",
            )
        ]
    if lib.source_dir.is_dir() and any(
        not e.is_dir and _go_ext(e.path.name) in _HEADER_EXTENSIONS
        for e in _listdir(lib.source_dir, lib.root)
    ):
        return []
    if lib.legacy and (lib.root / "src").exists():
        where = (
            "without library.properties the library is read in the 1.0 (flat) format, "
            "whose headers must be in the root, and there is none; add library.properties"
        )
    else:
        folder = "src/" if lib.recursive else "the library root"
        where = f"no header (.h, .hpp, .hh) directly in {folder}; put the main header there"
    return [("src" if lib.recursive else "", f"not a valid Arduino library: {where}")]


def _ls002_folder_name_too_long(lib: _Library) -> list[Problem]:
    name = lib.root.name
    if len(name.encode()) <= 63:
        return []
    return [
        (
            "",
            f"the library folder name {name} is {len(name.encode())} bytes, more than the 63 "
            "the Arduino tools support; rename the folder (the repository) shorter",
        )
    ]


def _ls003_folder_name_characters(lib: _Library) -> list[Problem]:
    if _VALID_BASE_NAME.match(lib.root.name):
        return []
    return [
        (
            "",
            f"the library folder name {lib.root.name!r} may only hold A-Z a-z 0-9 _ . - and "
            "not start with . or -; rename the folder (the repository)",
        )
    ]


def _ls004_submodule(lib: _Library) -> list[Problem]:
    gitmodules = lib.root / ".gitmodules"
    if not gitmodules.exists() or gitmodules.is_dir():
        return []
    return [
        (
            ".gitmodules",
            "the library uses git submodules: Library Manager installs (and GitHub's "
            "Download ZIP) get an empty folder in their place; commit the files instead",
        )
    ]


def _ls005_symlinks(lib: _Library) -> list[Problem]:
    return [
        (
            e.rel,
            "is a symlink: the Library Manager refuses libraries holding symlinks (Windows "
            "users cannot use them); replace it with a copy of its target",
        )
        for e in lib.tree
        if e.is_link
    ]


def _ls006_development_file(lib: _Library) -> list[Problem]:
    flag = lib.root / ".development"
    if not flag.exists() or flag.is_dir():
        return []
    return [
        (
            ".development",
            "the .development flag file makes the Library Manager refuse the library (it "
            "lets users edit examples in place); delete it",
        )
    ]


def _ls007_exe(lib: _Library) -> list[Problem]:
    return [
        (
            e.rel,
            "is an .exe file: the Library Manager refuses libraries holding one; remove it "
            "(ship the tool's sources, or download it at use)",
        )
        for e in lib.tree
        if not e.is_dir and _go_ext(e.path.name) == ".exe"
    ]


def _ls008_name_header_mismatch(lib: _Library) -> list[Problem]:
    name = lib.get("name")
    if name is None or not lib.loaded:
        return []
    sanitized = _sanitize_name(name)
    if any(h[: len(h) - len(_go_ext(h))] == sanitized for h in lib.source_headers):
        return []
    folder = "src/" if lib.recursive else "the library root"
    return [
        (
            "src" if lib.recursive else "",
            f"no header {sanitized}.h in {folder} matches name={name}: a header named like "
            f"the library wins the IDE's dependency resolution; add {sanitized}.h (it may "
            "just include the others)",
        )
    ]


def _ls009_src_folder_case(lib: _Library) -> list[Problem]:
    root_entries = _listdir(lib.root, lib.root)
    has_header = any(
        not e.is_dir and _go_ext(e.path.name) in _HEADER_EXTENSIONS for e in root_entries
    )
    if (lib.root / PROPERTIES).is_file() and has_header:
        return []  # the flat layout: src/ has no special meaning
    wrong = _wrong_case([e for e in root_entries if e.is_dir], "src")
    if wrong is None:
        return []
    return [
        (
            wrong.rel,
            f"the sources folder must be named exactly src, not {wrong.path.name}: on "
            "case-sensitive file systems (Linux) the library is not found; rename it",
        )
    ]


def _ls010_utility_folder(lib: _Library) -> list[Problem]:
    if not lib.loaded or not lib.recursive or not (lib.root / "utility").exists():
        return []
    return [
        (
            "utility",
            "a 1.5-format library (one with src/) must not have a utility folder in its "
            "root: only 1.0-format (flat) libraries compile it; move it under src/",
        )
    ]


def _ls011_misspelled_extras(lib: _Library) -> list[Problem]:
    dirs = [e for e in _listdir(lib.root, lib.root) if e.is_dir]
    found = _misspelled(dirs, "extras", _MISSPELLED_EXTRAS)
    if found is None:
        return []
    return [(found.rel, f"{found.path.name} looks like a misspelled extras; rename it extras")]


def _ls012_extras_case(lib: _Library) -> list[Problem]:
    found = _wrong_case([e for e in _listdir(lib.root, lib.root) if e.is_dir], "extras")
    if found is None:
        return []
    return [(found.rel, f"the folder must be named exactly extras; rename {found.path.name}")]


# --- library.properties (LP) ----------------------------------------------------------


def _lp001_missing(lib: _Library) -> list[Problem]:
    if not lib.legacy:
        return []
    return [
        (
            PROPERTIES,
            "library.properties is missing; the Library Manager requires it: add one with "
            "name, version, author, maintainer, sentence, paragraph, category, url and "
            "architectures",
        )
    ]


def _lp002_misspelled_file(lib: _Library) -> list[Problem]:
    found = _misspelled(_files(lib.root, lib.root), PROPERTIES, _MISSPELLED_PROPERTIES_FILE)
    if found is None:
        return []
    return [(found.rel, f"looks like a misspelled {PROPERTIES}; rename it {PROPERTIES}")]


def _lp003_file_case(lib: _Library) -> list[Problem]:
    found = _wrong_case(_files(lib.root, lib.root), PROPERTIES)
    if found is None:
        return []
    return [
        (
            found.rel,
            f"must be named exactly {PROPERTIES} (names are case-sensitive on Linux); rename it",
        )
    ]


def _lp004_redundant(lib: _Library) -> list[Problem]:
    if not (lib.root / "src" / PROPERTIES).exists():
        return []
    return [
        (
            f"src/{PROPERTIES}",
            "only the library.properties at the library root is read; delete this copy",
        )
    ]


def _lp005_format(lib: _Library) -> list[Problem]:
    if lib.properties_error is None:
        return []
    return [
        (
            PROPERTIES,
            f"library.properties does not parse: {lib.properties_error}; every line must "
            "be key=value, a comment starting with #, or blank",
        )
    ]


def _lp006_misspelled_field(lib: _Library) -> list[Problem]:
    problems = []
    for key in lib.properties or {}:
        for pattern, meant in _MISSPELLED_FIELDS:
            if pattern.match(key):
                problems.append(
                    (PROPERTIES, f"field {key}= looks like a misspelled {meant}=; rename it")
                )
                break
    return problems


def _missing(field_name: str, why: str) -> Callable[[_Library], list[Problem]]:
    """A rule: the field must be present (skipped without library.properties)."""

    def check(lib: _Library) -> list[Problem]:
        if lib.properties is None or lib.legacy or field_name in lib.properties:
            return []
        return [(PROPERTIES, f"no {field_name}= field; add it ({why})")]

    check.__name__ = f"missing_{field_name}"
    return check


def _shorter(field_name: str, minimum: int, what: str) -> Callable[[_Library], list[Problem]]:
    """A rule: the field, when present, has at least `minimum` characters."""

    def check(lib: _Library) -> list[Problem]:
        value = lib.get(field_name)
        if value is None or len(value) >= minimum:
            return []
        return [(PROPERTIES, f"{field_name}={value} is too short; {what}")]

    check.__name__ = f"short_{field_name}"
    return check


def _name_rule(test: Callable[[str], bool], message: str) -> Callable[[_Library], list[Problem]]:
    """A rule on `name`: `test(name)` True means broken; `message` formats {name}."""

    def check(lib: _Library) -> list[Problem]:
        name = lib.get("name")
        if name is None or not test(name):
            return []
        return [(PROPERTIES, message.format(name=name))]

    return check


def _lp018_registered_name(lib: _Library) -> list[Problem]:
    name = lib.get("name")
    if name is None or name == lib.registered_name:
        return []
    return [
        (
            PROPERTIES,
            f"name={name} is not the name the library is registered under in the Library "
            f"Manager ({lib.registered_name}, see --name); a registered name cannot change: "
            f"set name={lib.registered_name}",
        )
    ]


def _lp020_version_relaxed(lib: _Library) -> list[Problem]:
    version = lib.get("version")
    if version is None or _RELAXED_SEMVER.match(version):
        return []
    return [
        (
            PROPERTIES,
            f"version={version} is not a version the Library Manager reads (relaxed "
            "SemVer: MAJOR[.MINOR[.PATCH]][-PRERELEASE][+BUILD]); write it as X.Y.Z",
        )
    ]


def _lp021_version_semver(lib: _Library) -> list[Problem]:
    version = lib.get("version")
    if version is None or _SEMVER.match(version):
        return []
    return [
        (
            PROPERTIES,
            f"version={version} is not Semantic Versioning (MAJOR.MINOR.PATCH, optional "
            "-PRERELEASE and +BUILD, no leading zeros); write it as X.Y.Z",
        )
    ]


def _maintainer_rule(
    key: str, pattern: re.Pattern[str], what: str, only_without_maintainer: bool
) -> Callable[[_Library], list[Problem]]:
    """`maintainer` (or `email` used in its place) must not start with / contain Arduino."""

    def check(lib: _Library) -> list[Problem]:
        if only_without_maintainer and lib.get("maintainer") is not None:
            return []
        value = lib.get(key)
        if value is None or not pattern.match(value):
            return []
        return [
            (
                PROPERTIES,
                f'{key}={value} {what} "Arduino": third-party libraries are not maintained '
                f"by Arduino; name the real maintainer",
            )
        ]

    return check


def _lp028_email_alias(lib: _Library) -> list[Problem]:
    if lib.get("email") is None or lib.get("maintainer") is not None:
        return []
    return [(PROPERTIES, "email= is the deprecated spelling of maintainer=; rename the field")]


def _lp029_email_short(lib: _Library) -> list[Problem]:
    email = lib.get("email")
    if email is None or lib.get("maintainer") is not None or email:
        return []
    return [(PROPERTIES, "email= is empty; rename it maintainer= and give a name and address")]


def _lp036_paragraph_repeats(lib: _Library) -> list[Problem]:
    sentence, paragraph = lib.get("sentence"), lib.get("paragraph")
    if sentence is None or paragraph is None or not paragraph.startswith(sentence):
        return []
    return [
        (
            PROPERTIES,
            "paragraph= starts with the sentence= text; the two are shown together, so "
            "let the paragraph continue where the sentence ends",
        )
    ]


def _lp038_category_invalid(lib: _Library) -> list[Problem]:
    category = lib.get("category")
    if category is None or category in CATEGORIES:
        return []
    return [
        (
            PROPERTIES,
            f"category={category} is not one of {', '.join(CATEGORIES)}; pick one (the "
            "Library Manager shows others as Uncategorized)",
        )
    ]


def _lp039_uncategorized(lib: _Library) -> list[Problem]:
    if lib.get("category") != "Uncategorized":
        return []
    return [(PROPERTIES, "category=Uncategorized is not allowed; pick one of the categories")]


def _lp041_url_format(lib: _Library) -> list[Problem]:
    url = lib.get("url")
    if url is None or _is_absolute_uri(url):
        return []
    return [
        (
            PROPERTIES,
            f"url={url} is not an absolute URL; give the library's page, e.g. "
            "https://github.com/OWNER/REPO",
        )
    ]


def _lp045_architecture_alias(lib: _Library) -> list[Problem]:
    value = lib.get("architectures")
    if value is None:
        return []
    listed = _comma_list(value.lower())
    solo = [a for a in listed if a in _ARCHITECTURE_ALIASES]
    solo = [a for a in solo if not any(t in listed for t in _ARCHITECTURE_ALIASES[a])]
    if not solo:
        return []
    return [
        (
            PROPERTIES,
            f"architectures= names alias(es) {', '.join(solo)} without the Arduino "
            "architecture they stand for; add it (e.g. "
            f"{_ARCHITECTURE_ALIASES[solo[0]][0]})",
        )
    ]


def _lp046_architecture_case(lib: _Library) -> list[Problem]:
    value = lib.get("architectures")
    if value is None:
        return []
    listed = _comma_list(value)
    miscased = []
    for arch in listed:
        for common in _COMMON_ARCHITECTURES:
            if arch == common:
                break
            if arch.lower() == common.lower() and common not in listed:
                miscased.append(f"{arch} (write {common})")
                break
    if not miscased:
        return []
    return [
        (
            PROPERTIES,
            f"architectures are case-sensitive: {', '.join(miscased)}; fix the case",
        )
    ]


def _depends_items(value: str) -> Iterator[tuple[str, str]]:
    """(item, its constraint text) of each parseable `depends` entry."""
    for item in _comma_list(value):
        match = _DEPEND_ITEM.match(item) if item else None
        if match:
            yield item, match.group(2) or ""


def _lp047_depends_format(lib: _Library) -> list[Problem]:
    depends = lib.get("depends")
    if depends is None or _DEPENDS.match(depends):
        return []
    return [
        (
            PROPERTIES,
            f"depends={depends} is not a comma-separated list of library names, each "
            "optionally followed by ' (constraint)'; e.g. depends=Servo, Foo (>=1.2.0)",
        )
    ]


def _lp058_depends_constraint(lib: _Library) -> list[Problem]:
    depends = lib.get("depends")
    if depends is None:
        return []
    bad = []
    for item, constraint in _depends_items(depends):
        try:
            _parse_constraint(constraint)
        except _ConstraintError:
            bad.append(item)
    if not bad:
        return []
    return [
        (
            PROPERTIES,
            f"depends= item(s) {', '.join(bad)} have an invalid version constraint; use "
            "=, >, >=, <, <=, ^ with versions, combined with &&, || and !, e.g. (>=1.2.0)",
        )
    ]


def _enum_rule(key: str, allowed: tuple[str, ...]) -> Callable[[_Library], list[Problem]]:
    def check(lib: _Library) -> list[Problem]:
        value = lib.get(key)
        if value is None or value in allowed:
            return []
        return [(PROPERTIES, f"{key}={value} is invalid; use one of {', '.join(allowed)}")]

    return check


def _lp050_dot_a_linkage_flat(lib: _Library) -> list[Problem]:
    value = lib.get("dot_a_linkage")
    if not lib.loaded or value is None or value.strip(GO_SPACE).lower() != "true":
        return []
    if lib.recursive:
        return []
    return [
        (
            PROPERTIES,
            "dot_a_linkage=true needs the 1.5 format (sources in src/); move the sources "
            "to src/ or drop the field",
        )
    ]


def _lp052_includes_missing(lib: _Library) -> list[Problem]:
    includes = lib.get("includes")
    if includes is None or lib.properties_error is not None:
        return []
    missing = [i for i in _comma_list(includes) if i and i not in lib.source_headers]
    if not missing:
        return []
    folder = "src/" if lib.recursive else "the library root"
    return [
        (
            PROPERTIES,
            f"includes= names {', '.join(missing)}, not a header in {folder}; list only the "
            "library's own headers a sketch must include (dependencies go in depends=)",
        )
    ]


def _lp054_precompiled_flat(lib: _Library) -> list[Problem]:
    value = lib.get("precompiled")
    if not lib.loaded or value not in ("true", "full") or lib.recursive:
        return []
    return [
        (
            PROPERTIES,
            f"precompiled={value} needs the 1.5 format (sources in src/); move the sources "
            "to src/ or drop the field",
        )
    ]


# --- code (LC) and documentation (LD) -------------------------------------------------


def _lc001_arduino_h_case(lib: _Library) -> list[Problem]:
    return _arduino_h_case(lib.tree)


def _ld001_readme(lib: _Library) -> list[Problem]:
    for folder in (lib.root, lib.root / "docs", lib.root / ".github"):
        if folder.is_dir() and any(_README.match(e.path.name) for e in _files(folder, lib.root)):
            return []
    return [
        (
            "",
            "no README (README.md, README.txt, ...) in the library root, docs/ or .github/; "
            "add one documenting the library",
        )
    ]


def _ld002_license(lib: _Library) -> list[Problem]:
    if any(_LICENSE.match(e.path.name) for e in _files(lib.root, lib.root)):
        return []
    return [
        (
            "",
            "no license file (LICENSE, LICENSE.txt, LICENSE.md, COPYING, ...) in the "
            "library root; add the library's license there",
        )
    ]


def _ld003_stray_sketch(lib: _Library) -> list[Problem]:
    stray = [""] if _is_sketch(lib.root, lib.root) else []
    for top in _listdir(lib.root, lib.root):
        if not top.is_dir or top.is_link or top.path.name in ("examples", "extras"):
            continue
        stray += [
            e.rel for e in _walk(top.path, lib.root) if e.is_dir and _is_sketch(e.path, lib.root)
        ]
    return [
        (
            rel,
            "holds a sketch (.ino/.pde) outside examples/ and extras/; move example "
            "sketches to examples/<Name>/<Name>.ino",
        )
        for rel in stray
    ]


def _ld004_no_examples(lib: _Library) -> list[Problem]:
    for name in ("examples", "example"):
        folder = lib.root / name
        if folder.is_dir() and any(
            e.is_dir and _is_sketch(e.path, lib.root) for e in _walk(folder, lib.root)
        ):
            return []
    return [("", "no example sketch; add examples/<Name>/<Name>.ino")]


def _ld005_misspelled_examples(lib: _Library) -> list[Problem]:
    dirs = [e for e in _listdir(lib.root, lib.root) if e.is_dir]
    found = _misspelled(dirs, "examples", _MISSPELLED_EXAMPLES)
    if found is None:
        return []
    return [(found.rel, f"{found.path.name} looks like a misspelled examples; rename it")]


def _ld006_examples_case(lib: _Library) -> list[Problem]:
    found = _wrong_case([e for e in _listdir(lib.root, lib.root) if e.is_dir], "examples")
    if found is None:
        return []
    return [(found.rel, f"the folder must be named exactly examples; rename {found.path.name}")]


# --- example sketches (SS, SC) --------------------------------------------------------


def _ss001_name_mismatch(lib: _Library) -> list[Problem]:
    problems = []
    for sketch in lib.sketches:
        names = {e.path.name for e in _files(sketch, lib.root)}
        if any(sketch.name + ext in names for ext in _MAIN_SKETCH_EXTENSIONS):
            continue
        inos = sorted(n for n in names if _go_ext(n) in _MAIN_SKETCH_EXTENSIONS)
        problems.append(
            (
                lib.rel(sketch),
                f"has no {sketch.name}.ino (it holds {', '.join(inos)}): the main sketch file "
                "must be named like its folder; rename it",
            )
        )
    return problems


def _sketch_files(lib: _Library) -> Iterator[tuple[Path, list[_Entry]]]:
    for sketch in lib.sketches:
        yield (
            sketch,
            [e for e in _files(sketch, lib.root) if _go_ext(e.path.name) in _SKETCH_EXTENSIONS],
        )


def _ss002_file_name_characters(lib: _Library) -> list[Problem]:
    return [
        (
            e.rel,
            "a sketch file name may only hold A-Z a-z 0-9 _ . - and not start with . or -; "
            "rename it",
        )
        for _, files in _sketch_files(lib)
        for e in files
        if not _VALID_BASE_NAME.match(e.path.name)
    ]


def _ss003_file_name_too_long(lib: _Library) -> list[Problem]:
    problems = []
    for _, files in _sketch_files(lib):
        for e in files:
            stem = len(e.path.name.encode()) - len(_go_ext(e.path.name).encode())
            if stem > 63:
                problems.append(
                    (
                        e.rel,
                        f"the file name is {stem} bytes before its extension, over 63; shorten it",
                    )
                )
    return problems


def _ss004_pde(lib: _Library) -> list[Problem]:
    return [
        (e.rel, ".pde is the deprecated sketch extension (Processing's); rename it to .ino")
        for sketch in lib.sketches
        for e in _files(sketch, lib.root)
        if _go_ext(e.path.name) == ".pde"
    ]


def _ss005_sketch_src_case(lib: _Library) -> list[Problem]:
    problems = []
    for sketch in lib.sketches:
        found = _wrong_case([e for e in _listdir(sketch, lib.root) if e.is_dir], "src")
        if found is not None:
            problems.append(
                (
                    found.rel,
                    f"a sketch's source folder must be named exactly src, not "
                    f"{found.path.name} (Linux does not compile it otherwise); rename it",
                )
            )
    return problems


def _sc001_arduino_h_case(lib: _Library) -> list[Problem]:
    problems = []
    for sketch in lib.sketches:
        problems += _arduino_h_case(list(_walk(sketch, lib.root)))
    return problems


# --- installing on every OS (OS): generator.library.install_paths ----------------------------

_VENDORED_FIX = (
    "a vendored file keeps its upstream path: exclude it in its data/vendored/*.yaml copy rule, "
    "or ship it under another path"
)


def _install_folder(lib: _Library) -> str:
    """The folder the Library Manager installs the library into: SanitizeName of `name=`
    (the registered name without a readable one)."""
    return _sanitize_name(lib.get("name") or lib.registered_name)


def _installed(lib: _Library) -> list[_Entry]:
    """What an install holds: the tree without the repository's own `.git`."""
    return [e for e in lib.tree if e.rel != ".git" and not e.rel.startswith(".git/")]


def _compiled_sources(lib: _Library) -> list[tuple[_Entry, str]]:
    """Each source arduino-cli compiles, with its path relative to the source folder.

    The 1.5 layout: src/ recursively; the flat one: the root and utility/, not recursively.
    Names starting with "." and source-control folders are skipped (see install_paths).
    """
    if lib.recursive:
        folders = [("src/", True, "")]
    else:
        folders = [("", False, ""), ("utility/", False, "utility/")]
    found = []
    for entry in lib.tree:
        if entry.is_dir or not entry.path.name.endswith(ip.SOURCE_EXTENSIONS):
            continue
        for prefix, recursive, target in folders:
            if not entry.rel.startswith(prefix):
                continue
            below = entry.rel[len(prefix) :]
            parts = below.split("/")
            if not recursive and len(parts) > 1:
                continue
            if any(p.startswith(".") or p in ip.SOURCE_CONTROL_FOLDERS for p in parts):
                continue
            found.append((entry, target + below))
    return found


def _installed_paths(lib: _Library) -> list[ip.LongPath]:
    folder = _install_folder(lib)
    return [ip.LongPath(e.rel, ip.installed_path(folder, e.rel)) for e in _installed(lib)]


def _object_paths(lib: _Library) -> list[ip.LongPath]:
    folder = _install_folder(lib)
    return [ip.LongPath(e.rel, ip.object_path(folder, rel)) for e, rel in _compiled_sources(lib)]


def _longest(paths: list[ip.LongPath]) -> ip.LongPath | None:
    """The longest path (the first by name among equals), None for none."""
    return max(sorted(paths, key=lambda p: p.rel), key=lambda p: p.length, default=None)


def _windows_names(lib: _Library, kind: str) -> Iterator[_Entry]:
    return (e for e in _installed(lib) if ip.windows_name_problem(e.path.name) == kind)


def _os001_reserved_name(lib: _Library) -> list[Problem]:
    return [
        (
            e.rel,
            f"{e.path.name} is a Windows device name "
            f"({e.path.name.partition('.')[0].rstrip(' ')}), which no file or folder may "
            f"have, with any extension: Windows cannot install the library; rename it "
            f"({_VENDORED_FIX})",
        )
        for e in _windows_names(lib, "reserved")
    ]


def _os002_forbidden_character(lib: _Library) -> list[Problem]:
    problems = []
    for e in _windows_names(lib, "character"):
        if ip.not_utf8(e.path.name):
            why = (
                "the name is not UTF-8, so neither Windows nor macOS can hold it: the "
                "library cannot be installed there"
            )
        else:
            bad = sorted({c for c in e.path.name if c in ip.FORBIDDEN_CHARACTERS or c < " "})
            shown = " ".join(c if c >= " " else f"\\x{ord(c):02x}" for c in bad)
            why = (
                f'the name holds {shown}, which Windows forbids in a name (< > : " / \\ | '
                "? * and characters 0-31): Windows cannot install the library"
            )
        problems.append((e.rel, f"{why}; rename it ({_VENDORED_FIX})"))
    return problems


def _os003_trailing_space_or_period(lib: _Library) -> list[Problem]:
    return [
        (
            e.rel,
            "the name ends in a space or a period, which Windows drops (two names become "
            f"one, or the file cannot be opened); rename it ({_VENDORED_FIX})",
        )
        for e in _windows_names(lib, "ending")
    ]


def _os004_case_collision(lib: _Library) -> list[Problem]:
    entries = {e.rel: e for e in _installed(lib)}
    problems = []
    for group in ip.case_collisions(entries):
        kinds = {"folder" if entries[rel].is_dir else "file" for rel in group}
        what = "a file and a folder" if len(kinds) == 2 else f"{len(group)} {kinds.pop()}s"
        problems.append(
            (
                group[0],
                f"{' and '.join(map(repr, group))} ({what}) differ only by case or Unicode "
                "normalization: Windows and macOS take them for one path, so one overwrites "
                f"the other at install; rename one ({_VENDORED_FIX})",
            )
        )
    return problems


def _too_long(paths: list[ip.LongPath]) -> list[ip.LongPath]:
    """The paths over the budget whose parent folder is not already over it."""
    over = {p.rel for p in paths if not p.fits}
    return [p for p in paths if p.rel in over and p.rel.rpartition("/")[0] not in over]


def _os005_installed_path_too_long(lib: _Library) -> list[Problem]:
    return [
        (
            p.rel,
            f"installed on Windows its path is {p.length} characters ({p.path}), over "
            f"{ip.PATH_BUDGET} (MAX_PATH {ip.MAX_PATH} less a margin of {ip.PATH_MARGIN}): "
            f"Windows users cannot install or build it; shorten the path ({_VENDORED_FIX})",
        )
        for p in _too_long(_installed_paths(lib))
    ]


#: The largest file GitHub accepts in a push: 100 MiB (104,857,600 bytes).
#:
#: Source: docs.github.com, "About large files on GitHub" (repositories / working with
#: files / managing large files): "GitHub blocks files larger than 100 MiB" (and warns from
#: 50 MiB). A library holding such a file cannot be pushed, so the sync's pull request and
#: the Library Manager release (a git tag) cannot be made.
GITHUB_FILE_LIMIT_BYTES = 100 * 2**20


def _gh001_file_too_large(lib: _Library) -> list[Problem]:
    """Each file (not a folder; a symbolic link is its own small blob) over
    GITHUB_FILE_LIMIT_BYTES, by os.lstat: no file is read."""
    problems = []
    for e in _installed(lib):
        if e.is_dir or e.is_link:
            continue
        try:
            size = e.path.lstat().st_size
        except OSError:
            continue
        if size > GITHUB_FILE_LIMIT_BYTES:
            problems.append(
                (
                    e.rel,
                    f"{size:,} bytes, over GitHub's limit of {GITHUB_FILE_LIMIT_BYTES:,} "
                    '(100 MiB; docs.github.com, "About large files on GitHub"): the '
                    "library cannot be pushed; leave the file out or make it smaller (a "
                    "model.h: a smaller .pte)",
                )
            )
    return problems


def _os006_object_path_too_long(lib: _Library) -> list[Problem]:
    return [
        (
            p.rel,
            f"arduino-cli builds its object at a path of {p.length} characters on Windows "
            f"({p.path}), over {ip.PATH_BUDGET} (MAX_PATH {ip.MAX_PATH} less a margin of "
            f"{ip.PATH_MARGIN}): the compile fails there; shorten the path below src/ "
            f"({_VENDORED_FIX})",
        )
        for p in _too_long(_object_paths(lib))
    ]


# --- the table ------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """One arduino-lint rule.

    Attributes:
        rule_id: arduino-lint's ID; level: its level under `ARDUINO_LINT`;
        brief: arduino-lint's short description; check: library facts -> problems.
    """

    rule_id: str
    level: Level
    brief: str
    check: Callable[[_Library], list[Problem]]


_NAME_WHY = "the Library Manager's identifier of the library"

#: Every arduino-lint rule checked, in arduino-lint's order (ruleconfiguration.go), library
#: then sketch.
LM_RULES: tuple[Rule, ...] = (
    Rule("LS001", "error", "invalid library", _ls001_invalid_library),
    Rule("LS002", "error", "folder name too long", _ls002_folder_name_too_long),
    Rule("LS003", "error", "prohibited character in folder name", _ls003_folder_name_characters),
    Rule("LS004", "warning", "submodule", _ls004_submodule),
    Rule("LS005", "error", "symlink", _ls005_symlinks),
    Rule("LS006", "error", ".development file", _ls006_development_file),
    Rule("LS007", "error", ".exe file", _ls007_exe),
    Rule("LS008", "warning", "name-header mismatch", _ls008_name_header_mismatch),
    Rule("LS009", "error", "src folder case", _ls009_src_folder_case),
    Rule("LS010", "error", "recursive with utility folder", _ls010_utility_folder),
    Rule("LS011", "error", "incorrect extras folder name", _ls011_misspelled_extras),
    Rule("LS012", "error", "extras folder name case", _ls012_extras_case),
    Rule("LP001", "error", "missing library.properties", _lp001_missing),
    Rule("LP002", "error", "incorrect library.properties file name", _lp002_misspelled_file),
    Rule("LP003", "error", "library.properties file name case", _lp003_file_case),
    Rule("LP004", "error", "redundant library.properties", _lp004_redundant),
    Rule("LP005", "error", "library.properties format", _lp005_format),
    Rule("LP006", "error", "misspelled library.properties field", _lp006_misspelled_field),
    Rule("LP007", "error", "missing name", _missing("name", _NAME_WHY)),
    Rule("LP008", "error", "name < min length", _shorter("name", 1, "give the library's name")),
    Rule(
        "LP009",
        "error",
        "name > max length",
        _name_rule(lambda n: len(n) > 63, "name={name} is longer than 63 characters; shorten it"),
    ),
    Rule(
        "LP010",
        "error",
        "name > recommended length",
        _name_rule(
            lambda n: len(n) > 32,
            "name={name} is longer than 32 characters, the most the Library Manager "
            "recommends (users type it); shorten it",
        ),
    ),
    Rule(
        "LP011",
        "error",
        "prohibited character in name",
        _name_rule(
            lambda n: not _NAME_CHARACTERS.match(n),
            "name={name} may only hold A-Z a-z 0-9, space, _ . - and must start with a "
            "letter or digit; change it",
        ),
    ),
    Rule(
        "LP012",
        "error",
        'name starts with "Arduino"',
        _name_rule(
            lambda n: bool(_STARTS_WITH_ARDUINO.match(n)),
            'name={name} starts with "Arduino", reserved for official Arduino libraries; '
            "rename the library",
        ),
    ),
    Rule(
        "LP014",
        "error",
        'name contains "Arduino"',
        _name_rule(
            lambda n: bool(_CONTAINS_ARDUINO.match(n)),
            'name={name} contains "Arduino", which is implicit; drop it from the name',
        ),
    ),
    Rule(
        "LP015",
        "error",
        "name contains spaces",
        _name_rule(
            lambda n: " " in n,
            "name={name} contains spaces, so it cannot match the install folder and header "
            "names; use _ or CamelCase",
        ),
    ),
    Rule(
        "LP016",
        "error",
        'name contains "library"',
        _name_rule(
            lambda n: bool(_CONTAINS_LIBRARY.match(n)),
            'name={name} contains "library", which is implicit; drop it from the name',
        ),
    ),
    Rule("LP018", "error", "not in LM index", _lp018_registered_name),
    Rule("LP019", "error", "missing version field", _missing("version", "e.g. version=1.0.0")),
    Rule("LP020", "error", "invalid version", _lp020_version_relaxed),
    Rule("LP021", "error", "non-semver version", _lp021_version_semver),
    Rule("LP023", "error", "missing author field", _missing("author", "who wrote the library")),
    Rule("LP024", "error", "author < min length", _shorter("author", 1, "name the authors")),
    Rule(
        "LP025",
        "error",
        "missing maintainer field",
        _missing("maintainer", "e.g. maintainer=Name <email>"),
    ),
    Rule(
        "LP026",
        "error",
        "maintainer < min length",
        _shorter("maintainer", 1, "give e.g. Name <email>"),
    ),
    Rule(
        "LP027",
        "error",
        'maintainer starts with "Arduino"',
        _maintainer_rule("maintainer", _STARTS_WITH_ARDUINO, "starts with", False),
    ),
    Rule(
        "LP057",
        "error",
        'maintainer contains "Arduino"',
        _maintainer_rule("maintainer", _CONTAINS_ARDUINO, "contains", False),
    ),
    Rule("LP028", "error", '"email" used as alias for "maintainer"', _lp028_email_alias),
    Rule("LP029", "error", "email < min length", _lp029_email_short),
    Rule(
        "LP030",
        "error",
        'email starts with "Arduino"',
        _maintainer_rule("email", _STARTS_WITH_ARDUINO, "starts with", True),
    ),
    Rule(
        "LP031",
        "error",
        "missing sentence field",
        _missing("sentence", "one line saying what the library does"),
    ),
    Rule(
        "LP032",
        "error",
        "sentence < min length",
        _shorter("sentence", 1, "say in one line what the library does"),
    ),
    Rule(
        "LP034",
        "error",
        "missing paragraph field",
        _missing("paragraph", "more detail, shown after the sentence"),
    ),
    Rule("LP036", "error", "paragraph repeats sentence", _lp036_paragraph_repeats),
    Rule(
        "LP037",
        "error",
        "missing category field",
        _missing("category", f"one of {', '.join(CATEGORIES)}"),
    ),
    Rule("LP038", "error", "invalid category value", _lp038_category_invalid),
    Rule("LP039", "error", '"Uncategorized" category value', _lp039_uncategorized),
    Rule("LP040", "error", "missing url field", _missing("url", "the library's web page")),
    Rule("LP056", "error", "url < min length", _shorter("url", 1, "give the library's web page")),
    Rule("LP041", "error", "invalid url format", _lp041_url_format),
    Rule(
        "LP043",
        "error",
        "missing architectures field",
        _missing("architectures", "the cores it runs on, e.g. architectures=zephyr, or *"),
    ),
    Rule(
        "LP044",
        "error",
        "architectures blank",
        _shorter(
            "architectures",
            1,
            "an empty list means no architecture at all; list them, or * for all",
        ),
    ),
    Rule("LP045", "error", "architecture alias", _lp045_architecture_alias),
    Rule("LP046", "error", "architecture case", _lp046_architecture_case),
    Rule("LP047", "error", "invalid depends format", _lp047_depends_format),
    Rule("LP058", "error", "invalid depends constraint syntax", _lp058_depends_constraint),
    Rule(
        "LP049",
        "error",
        "invalid dot_a_linkage value",
        _enum_rule("dot_a_linkage", ("true", "false")),
    ),
    Rule(
        "LP050",
        "error",
        'dot_a_linkage=true with "1.0" library format',
        _lp050_dot_a_linkage_flat,
    ),
    Rule(
        "LP051",
        "error",
        "includes blank",
        _shorter("includes", 1, "list the headers a sketch includes, or drop the field"),
    ),
    Rule("LP052", "error", "includes not in library", _lp052_includes_missing),
    Rule(
        "LP053",
        "error",
        "invalid precompiled value",
        _enum_rule("precompiled", ("true", "full", "false")),
    ),
    Rule("LP054", "error", 'precompiled with "1.0" format', _lp054_precompiled_flat),
    Rule(
        "LP055",
        "error",
        "ldflags < min length",
        _shorter("ldflags", 3, "give a whole linker flag such as -lm, or drop the field"),
    ),
    Rule("LC001", "error", "Arduino.h case", _lc001_arduino_h_case),
    Rule("LD001", "error", "no readme", _ld001_readme),
    Rule("LD002", "error", "no license file", _ld002_license),
    Rule("LD003", "error", "stray sketch", _ld003_stray_sketch),
    Rule("LD004", "warning", "no examples", _ld004_no_examples),
    Rule("LD005", "error", "incorrect examples folder name", _ld005_misspelled_examples),
    Rule("LD006", "error", "examples folder name case", _ld006_examples_case),
    Rule("SS001", "error", "name mismatch", _ss001_name_mismatch),
    Rule("SS002", "error", "prohibited character in filename", _ss002_file_name_characters),
    Rule("SS003", "error", "file name too long", _ss003_file_name_too_long),
    Rule("SS004", "error", ".pde extension", _ss004_pde),
    Rule("SS005", "error", "src folder case", _ss005_sketch_src_case),
    Rule("SC001", "error", "Arduino.h case", _sc001_arduino_h_case),
)

#: This generator's rules for installing on every OS (generator.library.install_paths).
OS_RULES: tuple[Rule, ...] = (
    Rule("OS001", "error", "Windows reserved name", _os001_reserved_name),
    Rule("OS002", "error", "character Windows forbids", _os002_forbidden_character),
    Rule("OS003", "error", "name ends in a space or period", _os003_trailing_space_or_period),
    Rule("OS004", "error", "paths differ only by case", _os004_case_collision),
    Rule("OS005", "error", "installed path too long", _os005_installed_path_too_long),
    Rule("OS006", "error", "object path too long", _os006_object_path_too_long),
)

#: This generator's rule for pushing the library to GitHub (the sync's pull request).
PUSH_RULES: tuple[Rule, ...] = (
    Rule("GH001", "error", "file over GitHub's size limit", _gh001_file_too_large),
)

#: Every rule `lint_library` runs: arduino-lint's, then the OS rules, then the push rule.
RULES: tuple[Rule, ...] = LM_RULES + OS_RULES + PUSH_RULES


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
    facts = _gather(root, name)
    findings = tuple(
        LintFinding(rule.rule_id, rule.level, path, message)
        for rule in RULES
        for path, message in rule.check(facts)
    )
    return LintReport(
        root, findings, _longest(_installed_paths(facts)), _longest(_object_paths(facts))
    )
