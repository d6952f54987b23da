"""Step-by-step progress on the terminal (rich)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console


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
