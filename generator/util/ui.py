"""Step-by-step progress: the protocol the build reports through, and its terminal (rich)
and silent implementations."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Protocol

from rich.console import Console


class Reporter(Protocol):
    """Progress sink: `step` wraps one pipeline step; `note` adds a detail line."""

    def step(self, name: str) -> AbstractContextManager[None]: ...

    def note(self, message: str) -> None: ...


class QuietReporter:
    """A reporter that prints nothing (tests, and callers with their own output)."""

    def step(self, name: str) -> AbstractContextManager[None]:
        return nullcontext()

    def note(self, message: str) -> None:
        pass


class ConsoleReporter:
    """Shows each pipeline step with a spinner, then a line with its wall time."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True, highlight=False)

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        started = time.monotonic()
        with self.console.status(f"{name} ..."):
            try:
                yield
            except BaseException:
                self.console.print(f"[red]✗[/red] {name}")
                raise
        self.console.print(
            f"[green]✓[/green] {name} [dim]({time.monotonic() - started:.1f} s)[/dim]"
        )

    def note(self, message: str) -> None:
        self.console.print(f"  [dim]{message}[/dim]")
