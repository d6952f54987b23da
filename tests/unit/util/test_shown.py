"""What is printed of untrusted text (`generator.util.workflow_commands.shown`), and that every
message goes through it (`generator.util.errors.error_handler`)."""

from __future__ import annotations

import errno

import pytest

from generator.util.errors import FatalError, error_handler
from generator.util.workflow_commands import no_terminal_controls, shown


def test_no_terminal_controls_escapes_controls_but_newline_and_tab() -> None:
    text = "a\x1b[2J\x1b]52;c;b3du\x07b\rc\x85d\u202ee\x7f\x00\tf\ng"
    assert no_terminal_controls(text) == (
        "a\\x1b[2J\\x1b]52;c;b3du\\x07b\\rc\\x85d\\u202ee\\x7f\\x00\tf\ng"
    )
    assert no_terminal_controls("plain é ✅\n") == "plain é ✅\n"


def test_shown_is_idempotent_and_escapes_commands_after_controls() -> None:
    once = shown("x\r::add-mask::t0k\n\x0b::error::y\n##[group]z")
    assert once == "x\\r::add-mask::t0k\n\\x0b::error::y\n#\\#[group]z"
    assert shown(once) == once


@pytest.mark.parametrize(
    "error",
    [
        FatalError("cannot tell which source implements x\x1b]0;owned\x07\r::warning::y"),
        OSError(errno.EACCES, "Permission denied", "src/\x1b[2Jx.h"),
    ],
    ids=["FatalError", "OSError"],
)
def test_error_handler_prints_no_terminal_escape(
    error: Exception, capsys: pytest.CaptureFixture[str]
) -> None:
    """LOW (terminal injection). A message quoting a ref's text (an operator or file name)
    was printed raw: ESC sequences acted on the user's terminal (OSC 0 retitles it, OSC 52
    sets the clipboard) and a CR hid what came before it. Fix: `error_handler` prints every
    message through `shown`."""
    with pytest.raises(SystemExit), error_handler():
        raise error
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\r" not in err and "\\x1b" in err
