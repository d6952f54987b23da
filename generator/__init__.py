"""Generate, check and sync the ExecuTorch Arduino library from an ExecuTorch ref."""

import importlib.resources
from pathlib import Path

#: The root of the checkout this module runs from: its git repo is what the `workflows`
#: command pins by default. Data is read with `data_dir` and `package_path`, never from here.
PROJECT_ROOT = Path(__file__).resolve().parent.parent


def package_path(*parts: str) -> Path:
    """The file or folder `parts` shipped inside the `generator` package, as a real path.

    Read through `importlib.resources`; steps copy trees from it and give compilers include
    paths into it, so it must be a folder on disk (as `pip install` and a checkout give).

    Raises:
        RuntimeError: when the package is imported from a zip file (not supported).
    """
    where = importlib.resources.files(__name__)
    for part in parts:
        where = where / part
    if not isinstance(where, Path):
        raise RuntimeError(f"generator data {'/'.join(parts)} is not on disk ({where!r})")
    return where


def data_dir(name: str) -> Path:
    """The data folder `name` (`library_template`, `vendored`, `extras`, `workflows`).

    The repository keeps these at its root; an installed generator carries them as package data
    in `generator/_data/<name>` (pyproject.toml maps them there, so there is one copy of each).
    """
    packaged = package_path("_data", name)
    return packaged if packaged.is_dir() else PROJECT_ROOT / name
