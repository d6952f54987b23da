"""`sync`'s steps: `inputs` (token, repo, API URL, base checked up front), `git` (thin GitPython
helpers, token handling), `tree` (replace generated paths), `version` (reused, relabelled or
not greater versions refused), `report` (the check report as committed), `body` (pull request
text), `github` (PyGithub with retries: the sync pull request, closed and superseded ones).

The verb that runs them is `generator.commands.sync` (`run_sync`, `SyncOptions`, `SyncResult`).
"""
