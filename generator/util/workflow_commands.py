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
