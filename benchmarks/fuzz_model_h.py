"""Fuzz the model.h codec (extras/tools/et_model_h.py `pte_from_model_h`) with atheris (not a test).

    python benchmarks/fuzz_model_h.py [--seconds 600] [--work DIR]

Each input is a header's text (UTF-8; invalid bytes read as U+FFFD, since the tools read a
model.h with `read_text` and report a file that is not UTF-8 before this codec sees it). Its
own clear error is `et_pte.PteError`; anything else is a finding (see
benchmarks/fuzz_common.py), and so is a header whose bytes, once read, do not come back the
same through `model_h` and `pte_from_model_h` again. Both ways of naming the array are read:
the default (our size/sha256 comment, else the first array) and `name="model_pte"`.

Seeds: the model.h of each small `.pte` of tests/fixtures/pte/ as `model_h` writes it (no
selection, a kernel selection, every kernel, another array name), and hand-written headers
of the forms the codec accepts (decimal and hex, comments, a size in the brackets).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from fuzz_common import ROOT, Target, main

if TYPE_CHECKING:
    import et_model_h  # extras/tools (mypy_path)
    import et_pte
else:
    from generator.pipeline.models import et_model_h, et_pte

SEEDS = ROOT / "tests" / "fixtures" / "pte"
#: Seeds from .pte files up to this size (a model.h is about 7 times its .pte).
SEED_PTE_BYTES = 4096
HAND_WRITTEN = {
    "decimal": b"const unsigned char model_pte[4] = {1, 2, 3, 255};\n",
    "comments": b"uint8_t x[] = {\n  0x45, /* E */ 0x54, // T\n  0x31,\n};\n",
    "two": b"uint8_t a[] = {0x01};\nuint8_t model_pte[] = {0x02, 0x03};\n",
    "digest": (
        b"// model_pte: 1 bytes, sha256 "
        b"01ba4719c80b6fe911b091a7c05124b64eeece964e09c058ef8f9805daca546b\n"
        b"alignas(16) const uint8_t model_pte[] = {\n    0x0a,\n};\n"
    ),
}


def setup(args: argparse.Namespace) -> Callable[[bytes], None]:
    """The function that runs one input."""

    def run(data: bytes) -> None:
        text = data.decode("utf-8", errors="replace")
        for name in (None, "model_pte"):
            try:
                pte = et_model_h.pte_from_model_h(text, name=name)
            except et_pte.PteError:
                continue
            if pte:  # model_h refuses empty programs (ValueError, its documented error)
                again = et_model_h.pte_from_model_h(et_model_h.model_h(pte, name="a"))
                assert again == pte, "model.h does not read back"

    return run


def allowed() -> tuple[type[BaseException], ...]:
    """None: `run` catches `et_pte.PteError` itself (so it can read the header twice)."""
    return ()


def seeds(args: argparse.Namespace) -> dict[str, bytes]:
    """The fixtures' programs as model.h, and the hand-written headers."""

    out = {f"{k}.h": v for k, v in HAND_WRITTEN.items()}
    for pte in sorted(SEEDS.rglob("*.pte")):
        data = pte.read_bytes()
        if len(data) > SEED_PTE_BYTES:
            continue
        kinds = {
            "plain": et_model_h.model_h(data),
            "selection": et_model_h.model_h(data, operators=["aten::add.out"]),
            "all": et_model_h.model_h(data, all_kernels=True),
            "named": et_model_h.model_h(data, name="other_model"),
        }
        out.update({f"{pte.stem}-{k}.h": t.encode() for k, t in kinds.items()})
    return out


TARGET = Target("model_h", setup, allowed, seeds, max_len=32 * 1024, instrument=("et_model_h",))

if __name__ == "__main__":
    sys.exit(main(TARGET))
