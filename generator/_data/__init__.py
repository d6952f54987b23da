"""The generator's data folders, in an installed generator.

pyproject.toml maps the repository's root folders `library_template/`, `vendored/`, `extras/`
and `workflows/` here when a wheel is built; a checkout has none of them here, and
`generator.data_dir` reads them from the root instead.
"""
