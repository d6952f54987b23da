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


#: Every data folder, each in the repository's `data/` (the one data root), and what it holds.
DATA_FOLDERS = {
    "library_template": "the library's own files, copied or rendered into every library",
    "vendored": "each third-party component as data: source, pin, files, license",
    "extras": "the tools shipped in every library (extras/tools/)",
    "workflows": "the library repo's GitHub workflows, rendered by `workflows`",
    "templates": "Jinja templates of generated sources (src/) and of GitHub texts (github/)",
    "emulated_core": "our Arduino core for the emulated boards and the host, used by `check`",
    "core_exports": "the UNO Q firmware's export table, one file per arduino:zephyr release",
}


def data_dir(name: str) -> Path:
    """The data folder `name`, one of `DATA_FOLDERS`.

    The repository keeps these in `data/`; an installed generator carries them as package data
    in `generator/_data/<name>` (pyproject.toml maps them there, so there is one copy of each).
    """
    if name not in DATA_FOLDERS:
        raise KeyError(f"{name!r} is not a data folder (DATA_FOLDERS)")
    packaged = package_path("_data", name)
    return packaged if packaged.is_dir() else PROJECT_ROOT / "data" / name
