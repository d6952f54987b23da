"""Generate, check and sync the ExecuTorch Arduino library from an ExecuTorch ref."""

from pathlib import Path

#: The root of this project's checkout: `library_template/`, `vendored/`, `extras/` and
#: `library.properties.j2` are read from here.
PROJECT_ROOT = Path(__file__).resolve().parent.parent
