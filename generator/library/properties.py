"""library.properties, read the way the Arduino tools read it: one parser for lint, sync and
release, so all three see the version the Library Manager indexes."""

from __future__ import annotations

# Go's strings.TrimSpace (unicode.IsSpace); Python's str.strip() also drops \x1c-\x1f.
GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(
    chr(c) for c in range(0x2000, 0x200B)
)


def parse_properties(data: bytes) -> dict[str, str]:
    """Parse library.properties the way the Arduino tools do.

    UTF-8, else read as ISO 8859-1; line ends \\n, \\r\\n or \\r; each line is trimmed,
    empty lines and lines starting with `#` are skipped, others split at the first `=`
    (key and value trimmed); a repeated key keeps its last value; `.linux` is dropped from
    a key (the OS suffix of the Linux tools the Library Manager runs).

    Returns:
        key -> value, in first-seen order.

    Raises:
        ValueError: a line has no `=` (the message names it, 1-based).

    Source: go-properties-orderedmap `LoadFromBytes` / `parseLine`.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    out: dict[str, str] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip(GO_SPACE)
        if not line or line.startswith("#"):
            continue
        if "=" not in line:
            raise ValueError(f"line {number} ({line[:60]!r}) is not key=value")
        key, value = line.split("=", 1)
        key = key.strip(GO_SPACE).replace(".linux", "", 1)
        out.pop(key, None)
        out[key] = value.strip(GO_SPACE)
    return out


def properties_version(data: bytes | str | None) -> str | None:
    """The `version=` of a library.properties (its last one, as the Arduino tools read it),
    or None: no text, no version key, or a line that is not key=value."""
    if not data:
        return None
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        return parse_properties(raw).get("version")
    except ValueError:
        return None
