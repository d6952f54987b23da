"""Text from the untrusted prepare phase printed in an Actions job without it being read as
a workflow command (issue 29): the runner parses every line a step prints.

How the runner finds commands (actions/runner at 079cdb1d, src/Runner.Common/ActionCommand.cs
and src/Runner.Worker/ActionCommandManager.cs): each output line (a .NET `ReadLine`: split at
`\\n`, `\\r` or `\\r\\n`) is a command when, after `string.TrimStart()` (every
`char.IsWhiteSpace`: U+0009..U+000D, U+0020, U+0085, U+00A0, the Unicode space separators,
U+2028, U+2029), it starts with `::` (`TryParseV2`), or when it holds `##[` anywhere
(`TryParse`, the legacy form the runner still accepts).
"""

from __future__ import annotations

import re

#: What is stripped before the `::` test: Python's `str.isspace` characters (a superset of
#: .NET's `char.IsWhiteSpace`) and the zero-width ones a log viewer does not show.
_LEADING = "".join(chr(c) for c in range(0x3001) if chr(c).isspace()) + "\u200b\ufeff"


def no_workflow_commands(text: str) -> str:
    """`text` with a backslash before each line's `::` that the runner would read as a
    command (white space aside) and every `##[` written `#\\#[`; Markdown shows `\\:` as `:`
    and `\\#` as `#`. Lines are split as widely as Python's `str.splitlines` (a superset of
    .NET's)."""
    lines = text.replace("##[", "#\\#[").splitlines(keepends=True)
    for i, line in enumerate(lines):
        rest = line.lstrip(_LEADING)
        if rest.startswith("::"):
            lines[i] = line[: len(line) - len(rest)] + "\\" + rest
    return "".join(lines)


def no_terminal_controls(text: str) -> str:
    """`text` with every control character but newline and tab written as a visible escape
    (`\\x1b`, `\\r`, `\\u202e`): the C0 and C1 controls and DEL (Unicode category Cc), which
    a terminal acts on (ECMA-48: an ESC sequence can move the cursor, retitle the window or,
    OSC 52, set the clipboard; a CR overwrites the line shown), and the bidirectional
    formatting characters (Unicode category Cf, U+202A..U+202E, U+2066..U+2069: they reorder
    what a reader sees, CVE-2021-42574). An untrusted ref's text (an operator name, a file
    name, git's stderr) is printed through it."""
    return "".join(_SHOWN.get(c, c) for c in text) if _HIDDEN.search(text) else text


def shown(text: str) -> str:
    """Untrusted text as printed: `no_terminal_controls`, then `no_workflow_commands`."""
    return no_workflow_commands(no_terminal_controls(text))


_BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_CONTROLS = [c for c in (*range(0x20), *range(0x7F, 0xA0)) if c not in (0x09, 0x0A)]
#: What `no_terminal_controls` writes for each character it escapes.
_SHOWN = {chr(c): repr(chr(c))[1:-1] for c in _CONTROLS} | {chr(c): f"\\u{c:04x}" for c in _BIDI}
_HIDDEN = re.compile("[" + "".join(re.escape(c) for c in _SHOWN) + "]")
