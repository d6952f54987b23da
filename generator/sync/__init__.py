"""`sync`'s steps: `inputs` (token, repo, API URL, base checked up front), `git` (thin GitPython
helpers, token handling), `tree` (replace generated paths), `version` (reused, relabelled or
not greater versions refused), `report` (the check report as committed), `body` (pull request
text), `github` (PyGithub with retries: the sync pull request, closed and superseded ones).

The verb that runs them is `generator.commands.sync` (`run_sync`, `SyncOptions`, `SyncResult`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from generator.sync.git import DEFAULT_BOT_EMAIL, DEFAULT_BOT_NAME

if TYPE_CHECKING:
    from generator.commands.sync import SyncOptions, SyncResult, run_sync

__all__ = ["DEFAULT_BOT_EMAIL", "DEFAULT_BOT_NAME", "SyncOptions", "SyncResult", "run_sync"]

#: The verb's names callers imported from here before its orchestration moved to
#: `generator.commands.sync`; resolved on first use, since that module imports these steps.
_VERB_NAMES = frozenset({"SyncOptions", "SyncResult", "run_sync"})


def __getattr__(name: str) -> Any:
    if name in _VERB_NAMES:
        from generator.commands import sync

        return getattr(sync, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
