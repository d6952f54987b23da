"""The rules on library.properties' fields (LP007-LP058): each field present where required,
and its value as the schema and the Arduino tools want it.

Source: arduino-lint at commit f8104a9dd8ef, `internal/rule/rulefunction/library.go`; the
field constraints: `generator.lint.properties_schema`. LP018 (the name is in the Library Manager
index) is checked offline as "name equals the registered name" (`--name`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from generator.library.properties import GO_SPACE
from generator.lint.library_tree import PROPERTIES, Library, Problem, Rule
from generator.lint.properties_schema import (
    CATEGORIES,
    CONTAINS_ARDUINO,
    CONTAINS_LIBRARY,
    DEPENDS,
    NAME_CHARACTERS,
    RELAXED_SEMVER,
    SEMVER,
    STARTS_WITH_ARDUINO,
    ConstraintError,
    is_absolute_uri,
    parse_constraint,
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


def _comma_list(value: str) -> list[str]:
    return [item.strip(GO_SPACE) for item in value.split(",")]


def _missing(field_name: str, why: str) -> Callable[[Library], list[Problem]]:
    """A rule: the field must be present (skipped without library.properties)."""

    def check(lib: Library) -> list[Problem]:
        if lib.properties is None or lib.legacy or field_name in lib.properties:
            return []
        return [(PROPERTIES, f"no {field_name}= field; add it ({why})")]

    check.__name__ = f"missing_{field_name}"
    return check


def _shorter(field_name: str, minimum: int, what: str) -> Callable[[Library], list[Problem]]:
    """A rule: the field, when present, has at least `minimum` characters."""

    def check(lib: Library) -> list[Problem]:
        value = lib.get(field_name)
        if value is None or len(value) >= minimum:
            return []
        return [(PROPERTIES, f"{field_name}={value} is too short; {what}")]

    check.__name__ = f"short_{field_name}"
    return check


def _name_rule(test: Callable[[str], bool], message: str) -> Callable[[Library], list[Problem]]:
    """A rule on `name`: `test(name)` True means broken; `message` formats {name}."""

    def check(lib: Library) -> list[Problem]:
        name = lib.get("name")
        if name is None or not test(name):
            return []
        return [(PROPERTIES, message.format(name=name))]

    return check


def _lp018_registered_name(lib: Library) -> list[Problem]:
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


def _lp020_version_relaxed(lib: Library) -> list[Problem]:
    version = lib.get("version")
    if version is None or RELAXED_SEMVER.match(version):
        return []
    return [
        (
            PROPERTIES,
            f"version={version} is not a version the Library Manager reads (relaxed "
            "SemVer: MAJOR[.MINOR[.PATCH]][-PRERELEASE][+BUILD]); write it as X.Y.Z",
        )
    ]


def _lp021_version_semver(lib: Library) -> list[Problem]:
    version = lib.get("version")
    if version is None or SEMVER.match(version):
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
) -> Callable[[Library], list[Problem]]:
    """`maintainer` (or `email` used in its place) must not start with / contain Arduino."""

    def check(lib: Library) -> list[Problem]:
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


def _lp028_email_alias(lib: Library) -> list[Problem]:
    if lib.get("email") is None or lib.get("maintainer") is not None:
        return []
    return [(PROPERTIES, "email= is the deprecated spelling of maintainer=; rename the field")]


def _lp029_email_short(lib: Library) -> list[Problem]:
    email = lib.get("email")
    if email is None or lib.get("maintainer") is not None or email:
        return []
    return [(PROPERTIES, "email= is empty; rename it maintainer= and give a name and address")]


def _lp036_paragraph_repeats(lib: Library) -> list[Problem]:
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


def _lp038_category_invalid(lib: Library) -> list[Problem]:
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


def _lp039_uncategorized(lib: Library) -> list[Problem]:
    if lib.get("category") != "Uncategorized":
        return []
    return [(PROPERTIES, "category=Uncategorized is not allowed; pick one of the categories")]


def _lp041_url_format(lib: Library) -> list[Problem]:
    url = lib.get("url")
    if url is None or is_absolute_uri(url):
        return []
    return [
        (
            PROPERTIES,
            f"url={url} is not an absolute URL; give the library's page, e.g. "
            "https://github.com/OWNER/REPO",
        )
    ]


def _lp045_architecture_alias(lib: Library) -> list[Problem]:
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


def _lp046_architecture_case(lib: Library) -> list[Problem]:
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


def _lp047_depends_format(lib: Library) -> list[Problem]:
    depends = lib.get("depends")
    if depends is None or DEPENDS.match(depends):
        return []
    return [
        (
            PROPERTIES,
            f"depends={depends} is not a comma-separated list of library names, each "
            "optionally followed by ' (constraint)'; e.g. depends=Servo, Foo (>=1.2.0)",
        )
    ]


def _lp058_depends_constraint(lib: Library) -> list[Problem]:
    depends = lib.get("depends")
    if depends is None:
        return []
    bad = []
    for item, constraint in _depends_items(depends):
        try:
            parse_constraint(constraint)
        except ConstraintError:
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


def _enum_rule(key: str, allowed: tuple[str, ...]) -> Callable[[Library], list[Problem]]:
    def check(lib: Library) -> list[Problem]:
        value = lib.get(key)
        if value is None or value in allowed:
            return []
        return [(PROPERTIES, f"{key}={value} is invalid; use one of {', '.join(allowed)}")]

    return check


def _lp050_dot_a_linkage_flat(lib: Library) -> list[Problem]:
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


def _lp052_includes_missing(lib: Library) -> list[Problem]:
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


def _lp054_precompiled_flat(lib: Library) -> list[Problem]:
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


_NAME_WHY = "the Library Manager's identifier of the library"

#: The rules on the fields, in arduino-lint's order.
FIELD_RULES: tuple[Rule, ...] = (
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
            lambda n: not NAME_CHARACTERS.match(n),
            "name={name} may only hold A-Z a-z 0-9, space, _ . - and must start with a "
            "letter or digit; change it",
        ),
    ),
    Rule(
        "LP012",
        "error",
        'name starts with "Arduino"',
        _name_rule(
            lambda n: bool(STARTS_WITH_ARDUINO.match(n)),
            'name={name} starts with "Arduino", reserved for official Arduino libraries; '
            "rename the library",
        ),
    ),
    Rule(
        "LP014",
        "error",
        'name contains "Arduino"',
        _name_rule(
            lambda n: bool(CONTAINS_ARDUINO.match(n)),
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
            lambda n: bool(CONTAINS_LIBRARY.match(n)),
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
        _maintainer_rule("maintainer", STARTS_WITH_ARDUINO, "starts with", False),
    ),
    Rule(
        "LP057",
        "error",
        'maintainer contains "Arduino"',
        _maintainer_rule("maintainer", CONTAINS_ARDUINO, "contains", False),
    ),
    Rule("LP028", "error", '"email" used as alias for "maintainer"', _lp028_email_alias),
    Rule("LP029", "error", "email < min length", _lp029_email_short),
    Rule(
        "LP030",
        "error",
        'email starts with "Arduino"',
        _maintainer_rule("email", STARTS_WITH_ARDUINO, "starts with", True),
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
)
