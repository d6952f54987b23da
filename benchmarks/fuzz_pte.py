"""Fuzz the `.pte` reader (extras/tools/et_pte.py `read_program`) with atheris (not a test).

    python benchmarks/fuzz_pte.py [--seconds 600] [--work DIR] [--reader DIR]

Each input is a whole `.pte`. Its own clear error is `et_pte.PteError`: what `read_program`
raises for any file that is not a readable program (its callers, generator/pipeline/models.py and
the shipped tools, turn it into their message). Anything else is a finding (see
benchmarks/fuzz_common.py). A program that reads is then taken further, as the tools take
it: the dtypes of its kernel calls (`et_dtypes.kernel_call_dtypes`, PteError too), the model
check against a small registration (`check_model`, `check_backends`: no error at all), and,
up to 4 KB, its model.h (`model_h` with its operators; ValueError is that function's
documented error for an operator name no C symbol can be made of), which must read back to
the same bytes.

The program reader is the one the unit tests use (tests/support/reader_fixture.py: flatc's Python
for the executorch wheel's schema, the PyPI FlatBuffers runtime), or a library's
`extras/tools/pte_schema` with `--reader`. Seeds: the `.pte` files of tests/fixtures/pte/.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from fuzz_common import ROOT, Target, main

if TYPE_CHECKING:
    import et_checks  # extras/tools (mypy_path)
    import et_dtypes
    import et_model_h
    import et_pte
else:
    from generator.pipeline.models import et_checks, et_dtypes, et_model_h, et_pte

SEEDS = ROOT / "tests" / "fixtures" / "pte"
#: model.h round trips of larger inputs take most of the time (fuzz_model_h.py fuzzes the codec).
ROUND_TRIP_BYTES = 4096
#: A registration the model check compares with: some of the fixtures' operators, one count off.
KERNELS = {"aten::add.out": 5, "aten::mul.out": 4, "aten::sym_size.int": 3}


def options(parser: argparse.ArgumentParser) -> None:
    """`--reader DIR`: a library's program reader instead of the fixtures'."""
    parser.add_argument("--reader", type=Path, help="a library's extras/tools/pte_schema")


def _reader_dir(given: Path | None) -> Path:
    if given is not None:
        return given
    from reader_fixture import pypi_runtime, wheel_flatc, wheel_schema

    from generator.pipeline.reader import write_program_reader

    flatc, schema, runtime = wheel_flatc(), wheel_schema(), pypi_runtime()
    if flatc is None or schema is None or runtime is None:
        sys.exit("needs the executorch wheel and the flatbuffers package (requirements-dev)")
    folder = Path(tempfile.mkdtemp(prefix="fuzz-pte-reader-"))
    return write_program_reader(flatc, schema, runtime, folder / "pte_schema")


def setup(args: argparse.Namespace) -> Callable[[bytes], None]:
    """Load the reader and the tools; the function that runs one input."""

    reader = et_pte.load_reader(_reader_dir(args.reader))

    def run(data: bytes) -> None:
        program = et_pte.read_program(data, reader)  # PteError: the allowed end
        et_dtypes.kernel_call_dtypes(data, reader)
        et_checks.check_model(program, KERNELS)
        et_checks.check_backends(program, ("XnnpackBackend",))
        if len(data) > ROUND_TRIP_BYTES:
            return
        try:
            text = et_model_h.model_h(data, operators=program.called_operators)
        except ValueError:
            return  # an operator name that cannot be a C symbol: model_h's own error
        assert et_model_h.pte_from_model_h(text) == data, "model.h does not read back"

    return run


def allowed() -> tuple[type[BaseException], ...]:
    """`et_pte.PteError`."""

    return (et_pte.PteError,)


def seeds(args: argparse.Namespace) -> dict[str, bytes]:
    """The fixtures' programs."""
    return {p.name: p.read_bytes() for p in sorted(SEEDS.rglob("*.pte"))}


TARGET = Target(
    "pte",
    setup,
    allowed,
    seeds,
    max_len=64 * 1024,
    # The tools and the reader package (its modules are named _et_pte_reader_<hash>).
    instrument=("et_pte", "et_checks", "et_model_h", "et_dtypes", "_et_pte_reader"),
    options=options,
)

if __name__ == "__main__":
    sys.exit(main(TARGET))
