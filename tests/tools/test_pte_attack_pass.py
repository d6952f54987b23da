"""Issue 29, the third pass over the `.pte` readers: every command that takes a `.pte` fed a
file at exactly the size limit, one byte over, a truncated flatbuffer and a root offset out of
the buffer, and the dtype reader fed a small program whose kernel calls all pass one huge list.

The commands: the shipped `pte_to_header.py` (inside a library, so it checks the program
against it) and `check_models.py --pte`, and the generator's readers behind `--ops-from-pte`
(`ops_in_pte`), `--example-pte` (`write_model_header`) and `--dtypes-from-pte`
(`dtypes_in_ptes`). Each must answer with its own one-line error, never a traceback.
"""

from __future__ import annotations

import copy
import re
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "data" / "extras" / "tools"))

import et_dtypes
import et_pte
from et_fixture import FIXTURE_PTE
from library_fixture import KERNELS_AT_CFF6F4DD, make_library
from reader_fixture import flatc_binary, flatc_json, write_wheel_reader

from generator.pipeline.dtypes import dtypes_in_ptes
from generator.pipeline.models import ops_in_pte, write_model_header
from generator.util.errors import FatalError

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "data" / "extras" / "tools"
ADD_MODEL = FIXTURE_PTE / "AddModel.pte"
LIMIT = et_pte.MAX_PTE_BYTES


def _sparse(path: Path, size: int) -> None:
    with path.open("wb") as f:
        f.truncate(size)


def _at_limit(path: Path) -> str:
    _sparse(path, LIMIT)
    return "file identifier"


def _over_by_one(path: Path) -> str:
    _sparse(path, LIMIT + 1)
    return "8,388,609 bytes, over the 8,388,608-byte limit"


def _truncated(path: Path) -> str:
    path.write_bytes(ADD_MODEL.read_bytes()[:300])
    return "points past the end|truncated|outside"


def _root_outside(path: Path) -> str:
    data = bytearray(ADD_MODEL.read_bytes())
    struct.pack_into("<I", data, 0, 0x7FFFFFF0)
    path.write_bytes(bytes(data))
    return "root table points to 2147483632, past the end"


HOSTILE: dict[str, Callable[[Path], str]] = {
    "at-limit": _at_limit,
    "over-by-one": _over_by_one,
    "truncated": _truncated,
    "root-outside": _root_outside,
}


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A library holding the shipped tools, so pte_to_header.py checks against it."""
    lib = make_library(tmp_path_factory.mktemp("lib") / "ExecuTorch", KERNELS_AT_CFF6F4DD)
    for tool in TOOLS.glob("*.py"):
        shutil.copy(tool, lib / "extras" / "tools" / tool.name)
    return lib


def _run(script: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(script), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize("kind", HOSTILE)
def test_the_shipped_tools_answer_a_hostile_pte_in_one_line(
    tmp_path: Path, library: Path, kind: str
) -> None:
    pte = tmp_path / f"{kind}.pte"
    said = HOSTILE[kind](pte)
    header = _run(library / "extras/tools/pte_to_header.py", pte, "-o", tmp_path / "model.h")
    assert header.returncode == 1 and "Traceback" not in header.stderr, header.stderr
    lines = header.stderr.strip().splitlines()
    assert len(lines) == 1 and re.search(said, lines[0]), lines
    assert not (tmp_path / "model.h").exists()
    checked = _run(library / "extras/tools/check_models.py", library, "--pte", pte)
    assert checked.returncode == 1 and "Traceback" not in checked.stderr, checked.stderr
    assert f"FAIL {pte.name}: " in checked.stdout, checked.stdout


@pytest.mark.parametrize("kind", HOSTILE)
def test_the_generators_pte_readers_answer_a_hostile_pte_with_a_message(
    tmp_path: Path, kind: str
) -> None:
    reader = write_wheel_reader(tmp_path / "reader" / "pte_schema")
    pte = tmp_path / f"{kind}.pte"
    said = HOSTILE[kind](pte)
    with pytest.raises(FatalError, match=said):
        ops_in_pte(pte, reader)  # --ops-from-pte
    with pytest.raises(FatalError, match=said):
        write_model_header(pte, tmp_path / "model.h", reader=reader)  # --example-pte
    assert not (tmp_path / "model.h").exists()
    with pytest.raises(FatalError, match="--dtypes-from-pte.*(" + said + ")"):
        dtypes_in_ptes([pte], reader)


def _one_list_for_every_call(tmp_path: Path, calls: int, items: int) -> bytes:
    """AddModel.pte with `calls` kernel calls that each pass one OptionalTensorList of
    `items` entries, all -1 (no tensor): ~50 bytes a call, 4 an entry."""
    doc = flatc_json(ADD_MODEL, tmp_path)
    plan = doc["execution_plan"][0]
    plan["values"].append({"val_type": "OptionalTensorList", "val": {"items": [-1] * items}})
    chain = plan["chains"][0]
    call = next(i for i in chain["instructions"] if i["instr_args_type"] == "KernelCall")
    call = copy.deepcopy(call)
    call["instr_args"]["args"] = [len(plan["values"]) - 1]
    chain["instructions"] = [call] * calls
    return flatc_binary(doc, tmp_path / "amplified")


def test_the_dtype_reader_reads_a_list_passed_by_every_call_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LOW (denial of service by a user's .pte, which is untrusted). `kernel_call_dtypes`
    walked each argument's list again for every call that passes it: a 105 KB .pte of 2,000
    calls passing one list of 10,000 entries took 132 s (measured) in `--dtypes-from-pte`,
    pte_to_header.py and check_models.py, and one at the 8 MiB limit days; read_program's
    budget counts offsets, not the value indices that name the same list. Fix: each value's
    dtype is read once per method. Counted here: the entries read, at most one walk."""
    reader = et_pte.load_reader(write_wheel_reader(tmp_path / "reader" / "pte_schema"))
    data = _one_list_for_every_call(tmp_path, calls=200, items=1000)
    reads: list[int] = []
    original = reader.schema.OptionalTensorList.Items

    def counted(self: Any, j: int) -> Any:
        reads.append(j)
        return original(self, j)

    monkeypatch.setattr(reader.schema.OptionalTensorList, "Items", counted)
    calls = et_dtypes.kernel_call_dtypes(data, reader)
    assert len(calls) == 200 and all(c.dtypes == () for c in calls)
    assert len(reads) == 1000, f"the list was walked {len(reads) / 1000:g} times"
