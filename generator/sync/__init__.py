"""`sync`'s steps: `stage` (the two phases: an unprivileged one that builds and checks, a
privileged one that publishes), `tree` (replace generated paths), `version_gate` (reused,
relabelled or not greater versions refused), `committed_report` (the check report as
committed), `upstream` (what changed under upstream's `examples/arduino/`), `body` (pull
request text), `github` (PyGithub with retries: the sync pull request, closed and superseded
ones), `app` (a GitHub App's installation tokens).

What sync shares with release lives below this package: `generator.vcs.repo_inputs` and
`generator.vcs.remote_inputs` (token, repo, API URL and base checked up front),
`generator.vcs.git` (thin GitPython helpers, token handling) and `generator.util.tempdirs`
(temporary folders a killed run leaves are removed by the next).

The runner is `generator.sync.run` (`run_sync`, `SyncOptions`, `SyncResult`), its steps
`pulls`, `refusals`, `verify`, `facts`, `push` and `summary`; `phases` runs it as the two
phases; the command line is `generator.cli.sync`.
"""
