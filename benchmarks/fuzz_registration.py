"""Fuzz the readers of ExecuTorch's registration sources with atheris (not a test).

    python benchmarks/fuzz_registration.py [--seconds 600] [--work DIR] [--executorch GIT_DIR]

What reads C++ (and the schema) that upstream and its codegen hand us, each given the input:

- `et_registration.library_kernels` (the model check): the input as a library's codegen registration
  (`src/executorch/codegen/RegisterKernelsByOperator.cpp`) and as its copy of
  `kernels/prim_ops/register_prim_ops.cpp` (with the fixture's `et_view.cpp` beside it);
  `et_registration.registered_backends` over that `src/` (the sources calling `register_backend`);
  their own clear error is `et_registration.RegistrationError`.
- `generator.pipeline.selection.split_registration` (the kernel-selection step's split of the
  codegen's `RegisterCodegenUnboxedKernelsEverything.cpp`): `FatalError`.
- `generator.pipeline.reader.file_identifier` and `relative_runtime_imports` (the program reader
  step, on the ref's `program.fbs` and flatc's Python): `FatalError`.

Anything else escaping is a finding (see benchmarks/fuzz_common.py). Seeds: the fixture
upstream's registration sources (tests/support/et_fixture.py,
tests/support/library_fixture.py) and, when
the ExecuTorch snapshot is there (`--executorch`, default the machine's mirror), the real
`register_prim_ops.cpp`, XNNPACK's backend registration and `program.fbs` of `SNAPSHOT_REF`
(read at run time, never copied into the repository).
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from fuzz_common import Target, main

if TYPE_CHECKING:
    import et_registration  # extras/tools (mypy_path)
else:
    from generator.pipeline.models import et_registration

#: The machine's mirror of ExecuTorch (a bare git folder) and the commit the fixtures are of.
MIRROR = Path("/work/.mirror/pytorch+executorch/repo")
SNAPSHOT_REF = "cff6f4dd32e630945b7188512c1f2b4f102b05ad"
SNAPSHOT_FILES = (
    "kernels/prim_ops/register_prim_ops.cpp",
    "backends/xnnpack/runtime/XNNPACKBackend.cpp",
    "schema/program.fbs",
)


def options(parser: argparse.ArgumentParser) -> None:
    """`--executorch GIT_DIR`: the ExecuTorch snapshot the seeds come from."""
    parser.add_argument("--executorch", type=Path, default=MIRROR, help="a bare ExecuTorch git")


def setup(args: argparse.Namespace) -> Callable[[bytes], None]:
    """A library skeleton in a temporary folder (in memory when /dev/shm exists); the
    function that writes one input into it and runs every reader."""
    from et_fixture import ET_VIEW_CPP

    from generator.pipeline.reader import file_identifier, relative_runtime_imports
    from generator.pipeline.selection import split_registration
    from generator.util.errors import FatalError

    shm = Path("/dev/shm")
    library = Path(tempfile.mkdtemp(prefix="fuzz-registration-", dir=shm if shm.is_dir() else None))
    codegen = library / et_registration.LIBRARY_CODEGEN_DIR / "RegisterKernelsByOperator.cpp"
    prim_ops = library / et_registration.LIBRARY_PRIM_OPS
    codegen.parent.mkdir(parents=True)
    prim_ops.parent.mkdir(parents=True)
    (prim_ops.parent / "et_view.cpp").write_text(ET_VIEW_CPP)
    schema = library / "program.fbs"

    def run(data: bytes) -> None:
        for path in (codegen, prim_ops, schema):
            path.write_bytes(data)
        text = data.decode("utf-8", errors="replace")
        with contextlib.suppress(et_registration.RegistrationError):
            et_registration.library_kernels(library)
        with contextlib.suppress(et_registration.RegistrationError):
            et_registration.registered_backends(library)
        for step in (
            lambda: split_registration(text),
            lambda: file_identifier(schema),
            lambda: relative_runtime_imports(text),
        ):
            with contextlib.suppress(FatalError):
                step()

    return run


def allowed() -> tuple[type[BaseException], ...]:
    """None: `run` catches each reader's own error itself."""
    return ()


def _snapshot(git_dir: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    if not git_dir.is_dir():
        return out
    for path in SNAPSHOT_FILES:
        proc = subprocess.run(
            ["git", f"--git-dir={git_dir}", "show", f"{SNAPSHOT_REF}:{path}"],
            capture_output=True,
            check=False,
        )
        if proc.returncode == 0:
            out[f"upstream-{Path(path).name}"] = proc.stdout
    return out


def seeds(args: argparse.Namespace) -> dict[str, bytes]:
    """The fixture upstream's registrations, and the snapshot's files when it is there."""
    from et_fixture import ET_VIEW_CPP, PRIM_OPS_CPP
    from library_fixture import registration_cpp

    out = {
        "codegen.cpp": registration_cpp({"aten::add.out": 5, "aten::mul.out": 4}).encode(),
        "prim_ops.cpp": PRIM_OPS_CPP.encode(),
        "et_view.cpp": ET_VIEW_CPP.encode(),
        "backend.cpp": (
            b'static const char xnnpack_backend_key[] = "XnnpackBackend";\n'
            b"Backend backend{xnnpack_backend_key, &cls};\n"
            b"static auto success = register_backend(backend);\n"
            b'static auto ok = register_backend({"Other", &other});\n'
        ),
        "schema.fbs": b'// a schema\nnamespace executorch_flatbuffer;\nfile_identifier "ET12";\n',
    }
    out.update(_snapshot(args.executorch))
    return out


TARGET = Target(
    "registration",
    setup,
    allowed,
    seeds,
    max_len=32 * 1024,
    instrument=("et_registration", "generator.pipeline.selection", "generator.pipeline.reader"),
    options=options,
)

if __name__ == "__main__":
    sys.exit(main(TARGET))
