"""The build pipeline: ref -> checkout -> op set -> codegen -> vendor -> patches -> render.

`build_library` is what `python -m generator build` and `sync` call. Each step lives in its
own module and is a function from explicit inputs to files in a work folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_EXECUTORCH_REPO = "https://github.com/pytorch/executorch.git"


@dataclass(frozen=True)
class BuildOptions:
    """What a build is asked to do (the `build` options, also passed on by `sync`).

    Attributes:
        executorch_ref: branch, tag or full/short SHA.
        executorch_repo: git URL; canonical upstream by default (insteadOf applies).
        library_version: strict X.Y.Z, or None to derive it from the ref's version.txt.
        ops: portable root ops replacing the default set, or None.
        all_ops: register every portable op.
        ops_from_pte: register exactly the operators these .pte files call.
        examples: ship only these examples (None: all).
        example_pte: example name -> .pte file overriding the one the ref ships.
        cache_dir: cache root (None: platformdirs user cache).
    """

    executorch_ref: str = "main"
    executorch_repo: str = DEFAULT_EXECUTORCH_REPO
    library_version: str | None = None
    ops: tuple[str, ...] | None = None
    all_ops: bool = False
    ops_from_pte: tuple[Path, ...] = ()
    examples: tuple[str, ...] | None = None
    example_pte: tuple[tuple[str, Path], ...] = ()
    cache_dir: Path | None = None


@dataclass
class BuildResult:
    """What a build produced.

    Attributes:
        out: the library folder (moved into place).
        ref: the ref asked for; sha: the full 40-hex SHA it resolved to.
        upstream_version: the ref's version.txt, verbatim.
        library_version: the Library Manager version written to library.properties.
        op_set: the selected operators (kernel registration), sorted.
        kernel_count: kernels registered in the generated registration sources.
        op_sources: `op_*.cpp` files shipped, and available: all portable op sources.
        files, bytes: what was written under `out`.
        seconds: wall time of the build.
    """

    out: Path
    ref: str
    sha: str
    upstream_version: str
    library_version: str
    op_set: list[str] = field(default_factory=list)
    kernel_count: int = 0
    op_sources: int = 0
    op_sources_available: int = 0
    files: int = 0
    bytes: int = 0
    seconds: float = 0.0
