"""`sync`'s steps: `inputs` (API URL and base checked up front), `tree` (replace generated
paths), `version` (reused, relabelled or not greater versions refused), `report` (the check
report as committed), `body` (pull request text), `github` (PyGithub with retries: the sync
pull request, closed and superseded ones).

What sync shares with release lives beside this package: `generator.vcs.repo_inputs` (token and repo
checked up front), `generator.vcs.git` (thin GitPython helpers, token handling) and
`generator.util.tempdirs` (temporary folders a killed run leaves are removed by the next).

The verb that runs them is `generator.sync.run` (`run_sync`, `SyncOptions`, `SyncResult`).
"""
