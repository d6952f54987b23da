"""The one error type for user-facing failures, and the one place that turns it into output."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


class FatalError(Exception):
    """A failure the user can act on.

    The message says what was wrong and what to do about it; `error_handler` prints it
    without a traceback and exits with `exit_code`.
    """

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@contextmanager
def error_handler() -> Iterator[None]:
    """Turn `FatalError`, an operating-system error and Ctrl-C into a message on stderr and a
    non-zero exit.

    An `OSError` that no step turned into a `FatalError` (a full disk, a folder that vanished,
    a permission taken away mid-run) is still the user's to fix, not a bug: it is named with
    its file, without a traceback. The build writes into a staging folder, so such an error
    never leaves half-written output.

    Raises:
        SystemExit: with the error's exit code (1 by default and for OSError, 130 on Ctrl-C).
    """
    try:
        yield
    except FatalError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(e.exit_code) from None
    except OSError as e:
        where = f" ({e.filename})" if e.filename else ""
        print(
            f"error: {e.strerror or e}{where}; check that the folder exists, that you may "
            "write there and that the disk has room, then run again",
            file=sys.stderr,
        )
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        raise SystemExit(130) from None
