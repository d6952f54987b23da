"""pte_to_header.py refuses a program it cannot write a whole model.h for.

A damaged .pte can pass the reader's first pass (`et_pte.read_program`: the methods, their
operators and instructions) and still not be read by the arena replay (`et_arena`), which
visits every value of the memory plan. Before, such a file gave exit 0 and a model.h without
`model_pte_arena_bytes`, so a sketch sized from it failed to compile; now it is refused (exit
1, one line naming the file, what is wrong and what to do) and nothing is written. The
mutants are the fixture programs (tests/fixtures/pte/, tests/fixtures/zoo/) with bytes
overwritten or cut short.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "data" / "extras" / "tools"))

import et_pte
import pte_to_header
from et_fixture import DYNAMIC_ADD, FIXTURE_PTE
from reader_fixture import write_wheel_reader

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "data" / "extras" / "tools" / "pte_to_header.py"
ADD_MODEL = FIXTURE_PTE / "AddModel.pte"
#: Programs without delegates: each has an arena figure, so each mutant must have one too,
#: or be refused. (XnnpackAdd.pte delegates: its model.h says why it has no figure.)
PROGRAMS = (
    ADD_MODEL,
    FIXTURE_PTE / "KeywordSpotting.pte",
    DYNAMIC_ADD,
    *sorted((ROOT / "tests" / "fixtures" / "zoo").glob("*.pte")),
)
#: AddModel.pte's bytes 412-415: the length of forward's `values` vector (4; the vector
#: follows at 416), which read_program does not visit; 0x05 in its second byte makes it 1284.
VALUES_LENGTH_AT = 412
ARENA_LINE = "inline constexpr size_t model_pte_arena_bytes = "


@pytest.fixture(scope="module")
def reader_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The program reader of the wheel's schema (tests/support/reader_fixture.py), outside a
    library:
    the program is read and its arena replayed, not checked against kernels."""
    return write_wheel_reader(tmp_path_factory.mktemp("r") / "pte_schema")


def _values_mutant() -> bytes:
    data = bytearray(ADD_MODEL.read_bytes())
    assert data[VALUES_LENGTH_AT : VALUES_LENGTH_AT + 4] == (4).to_bytes(4, "little")
    data[VALUES_LENGTH_AT + 1] = 0x05
    return bytes(data)


@pytest.mark.parametrize(
    ("at", "value", "reason"),
    [
        # 4 values -> 1284: the count alone says the vector cannot fit.
        (VALUES_LENGTH_AT + 1, 0x05, "method 'forward' values has 1284 elements, more than"),
        # 4 values -> 5: the fifth entry is the bytes after the vector, an offset out of range.
        (VALUES_LENGTH_AT, 0x05, "method 'forward' value 4 points past the end of the"),
    ],
)
def test_the_mutant_reads_but_its_arena_does_not(
    at: int, value: int, reason: str, reader_dir: Path
) -> None:
    data = bytearray(ADD_MODEL.read_bytes())
    assert data[VALUES_LENGTH_AT : VALUES_LENGTH_AT + 4] == (4).to_bytes(4, "little")
    data[at] = value
    # What made it slip through: the reader's first pass accepts it.
    reader = et_pte.load_reader(reader_dir)
    program = et_pte.read_program(bytes(data), reader)
    assert [m.name for m in program.methods] == ["forward"]
    with pytest.raises(pte_to_header.Refused) as refused:
        pte_to_header.header_for(bytes(data), source="AddModel.pte", reader=reader_dir)
    message = str(refused.value)
    assert message.startswith(
        "AddModel.pte is damaged: the arena model.h declares cannot be computed (offset 180: "
        + reason
    )
    assert message.endswith(
        "); nothing written: export the model again, or copy the file again if it was cut short"
    )
    assert "\n" not in message


@pytest.mark.parametrize("output", ["model.h", "-"])
def test_the_cli_refuses_in_one_line_and_keeps_the_old_header(
    output: str, reader_dir: Path, tmp_path: Path
) -> None:
    pte = tmp_path / "AddModel.pte"
    pte.write_bytes(_values_mutant())
    (tmp_path / "model.h").write_text("// the sketch's previous header\n")
    result = subprocess.run(
        [sys.executable, str(SCRIPT), str(pte), "--reader", str(reader_dir), "-o", output],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error: AddModel.pte is damaged: the arena model.h declares")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert (tmp_path / "model.h").read_text() == "// the sketch's previous header\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["AddModel.pte", "model.h"]
    # --no-check does not write it either: a damaged file fails on any library.
    forced = subprocess.run(
        [sys.executable, str(SCRIPT), str(pte), "--reader", str(reader_dir), "--no-check"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert forced.returncode == 1 and "is damaged" in forced.stderr
    assert (tmp_path / "model.h").read_text() == "// the sketch's previous header\n"


@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    program=st.sampled_from(PROGRAMS),
    edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=4),
    cut=st.one_of(st.none(), st.integers(0, 10**6)),
)
def test_a_mutant_is_refused_or_gets_a_whole_header(
    program: Path, edits: list[tuple[int, int]], cut: int | None, reader_dir: Path
) -> None:
    data = bytearray(program.read_bytes())
    for at, value in edits:
        data[at % len(data)] = value
    if cut is not None:
        data = data[: cut % len(data)]
    try:
        header = pte_to_header.header_for(bytes(data), source=program.name, reader=reader_dir)
    except pte_to_header.Refused as e:
        assert str(e).startswith(program.name) and "; nothing written: " in str(e)
        assert "\n" not in str(e)  # outside a library: no check, whose report lists problems
        return
    # Read to the end: the header has the figure a sketch sizes its arena from.
    assert header.text.count(ARENA_LINE) in (1, 2), header.text[-600:]


def test_external_constants_are_refused_unless_no_check(reader_dir: Path) -> None:
    # A program whose weights are in a .ptd: ETModel passes no external data, so it does not
    # load, and the arena it needs is not in the program.
    for module in ("torch", "executorch.exir"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (requirements.txt)")
    import torch

    exir = importlib.import_module("executorch.exir")
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2).eval()
    edge = exir.to_edge_transform_and_lower(torch.export.export(model, (torch.rand(1, 4),)))
    config = exir.ExecutorchBackendConfig(external_constants=True)
    data = bytes(edge.to_executorch(config).buffer)
    with pytest.raises(pte_to_header.Refused) as refused:
        pte_to_header.header_for(data, source="ext.pte", reader=reader_dir)
    assert str(refused.value) == (
        "ext.pte would not load on the board: its arena is not derivable from the program "
        "alone: 2 external constant tensors (a .ptd): ETModel passes no external data, so "
        "loading fails; nothing written: export it with its constants in the program "
        "(--no-check writes anyway)"
    )
    forced = pte_to_header.header_for(data, source="ext.pte", reader=reader_dir, check=False)
    assert ARENA_LINE not in forced.text
    assert "// No model_pte_arena_bytes: not derivable from the program alone: 2 external" in (
        forced.text
    )
