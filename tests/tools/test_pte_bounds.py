"""The one `.pte` size limit (et_pte.MAX_PTE_BYTES), checked with os.stat before reading:
by pte_to_header.py, check_models.py (a `--pte` and a `model.h` read back) and the generator's
`--ops-from-pte`, `--example-pte`, `--dtypes-from-pte` readers (generator/pipeline/models.py).

Each oversized file is sparse (`truncate`): several GiB that cost no disk and, read whole,
would end in a MemoryError.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "data" / "extras" / "tools"))

import et_checks
import et_pte
from library_fixture import KERNELS_AT_CFF6F4DD, make_library
from reader_fixture import write_wheel_reader

from generator.pipeline.dtypes import dtypes_in_ptes
from generator.pipeline.models import ops_in_pte, read_program, write_model_header
from generator.util.errors import FatalError

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "data" / "extras" / "tools"
HUGE = 5 * 2**30


def sparse(path: Path, size: int = HUGE) -> Path:
    """A file of `size` bytes that takes no disk."""
    with path.open("wb") as f:
        f.truncate(size)
    return path


@pytest.fixture(scope="module")
def reader_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_wheel_reader(tmp_path_factory.mktemp("reader") / "pte_schema")


def run(script: str, *args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(TOOLS / script), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_limit_is_over_every_boards_flash_and_keeps_model_h_under_githubs() -> None:
    from generator.boards.budgets import check_boards

    assert max(b.flash_bytes for b in check_boards().values()) * 2 < et_pte.MAX_PTE_BYTES
    # ~6.3 characters of model.h a byte: the largest header stays under GitHub's 100 MiB.
    assert et_pte.MAX_PTE_BYTES * 6.4 < 100 * 2**20
    assert et_pte.MAX_MODEL_H_BYTES >= et_pte.MAX_PTE_BYTES * 6.4


def test_read_pte_refuses_one_byte_over_before_reading(tmp_path: Path) -> None:
    at = sparse(tmp_path / "at.pte", et_pte.MAX_PTE_BYTES)
    assert len(et_pte.read_pte(at)) == et_pte.MAX_PTE_BYTES
    over = sparse(tmp_path / "over.pte", et_pte.MAX_PTE_BYTES + 1)
    with pytest.raises(et_pte.PteError, match=r"over\.pte is 8,388,609 bytes, over the 8,388,608"):
        et_pte.read_pte(over)


def test_pte_to_header_refuses_a_huge_pte_in_one_line(tmp_path: Path) -> None:
    huge = sparse(tmp_path / "huge.pte")
    result = run("pte_to_header.py", huge, "-o", tmp_path / "model.h", cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "huge.pte is 5,368,709,120 bytes, over the 8,388,608-byte limit" in lines[0]
    assert not (tmp_path / "model.h").exists()


def test_check_models_refuses_a_huge_pte_and_a_huge_model_h(tmp_path: Path) -> None:
    lib = make_library(tmp_path / "lib", KERNELS_AT_CFF6F4DD)
    huge = sparse(tmp_path / "huge.pte")
    result = run("check_models.py", lib, "--pte", huge, cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "FAIL huge.pte: " in result.stdout and "5,368,709,120 bytes" in result.stdout
    sparse(lib / "examples" / "AddModel" / "model.h")
    results = {r.name: r for r in et_checks.check_library(lib)}
    assert "5,368,709,120 bytes, over the" in results["AddModel"].error
    assert results["KeywordSpotting"].passed


def test_the_generators_pte_readers_refuse_a_huge_pte(tmp_path: Path, reader_dir: Path) -> None:
    huge = sparse(tmp_path / "huge.pte")
    limit = r"huge\.pte is 5,368,709,120 bytes, over the 8,388,608-byte limit"
    with pytest.raises(FatalError, match=limit):
        ops_in_pte(huge, reader_dir)  # --ops-from-pte
    with pytest.raises(FatalError, match=limit):
        read_program(huge, reader_dir)
    with pytest.raises(FatalError, match=limit):
        write_model_header(huge, tmp_path / "model.h", reader=reader_dir)  # --example-pte
    assert not (tmp_path / "model.h").exists()
    with pytest.raises(FatalError, match="--dtypes-from-pte: .*" + limit):
        dtypes_in_ptes([huge], reader_dir)


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--ops-from-pte", "{huge}", "--ops-from-pte: "),
        ("--dtypes-from-pte", "{huge}", "--dtypes-from-pte: "),
        ("--example-pte", "AddModel={huge}", "--example-pte AddModel: "),
    ],
)
def test_build_refuses_a_huge_pte_before_any_work(
    tmp_path: Path, option: str, value: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from generator.cli.main import main

    huge = sparse(tmp_path / "huge.pte")
    args = ["build", option, value.format(huge=huge), "--cache-dir", str(tmp_path / "cache")]
    with pytest.raises(SystemExit) as info:
        main([*args, "--out", str(tmp_path / "out")])
    assert info.value.code == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    (line,) = [x for x in err.splitlines() if x.startswith("error:")]
    assert line.startswith(f"error: {said}{huge} is 5,368,709,120 bytes, over the 8,388,608")
    assert not (tmp_path / "cache").exists() and not (tmp_path / "out").exists()
