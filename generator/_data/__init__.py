"""The generator's data folders, in an installed generator.

pyproject.toml maps each folder of the repository's `data/` (`generator.DATA_FOLDERS`) here
when a wheel is built; a checkout has none of them here, and `generator.data_dir` reads them
from `data/` instead.
"""
