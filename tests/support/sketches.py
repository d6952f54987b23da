"""The sketches the tests write as text: an empty one, and the one ETModel sketch the end-to-end
tests put in a copy of a real library (a model.h run once, or only loaded), with its
expected.yaml, the `check` run over such examples, and the outputs the runs printed.

The ETModel sketch uses the library's public API (data/library_template/src/ETModel.h):
`begin`, `setInput`, `run`, `output`, `outputCount`, `lastRunMicros`, `arenaUsed`,
`arenaSize`, `error`, and the `et_arduino_log` hook of ExecuTorch.h.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]

#: A sketch that does nothing: an example folder's main .ino where only its presence matters.
EMPTY_SKETCH = "void setup() {}\nvoid loop() {}\n"

#: An output line of the ETModel sketch: `out[INDEX]=VALUE` (6 decimals).
OUTPUT_LINE = re.compile(r"^out\[(\d+)\]=(-?[0-9]+\.[0-9]+)$")

# The arena: from malloc (as data/library_template/examples/AddModel does; a static array would
# be the sketch's data, which in the Dynamic link mode the loader copies into its LLEXT heap),
# or a static array (the README's way).
_HEAP_ARENA = """\
#include <cstdlib>

#include "model.h"

static const size_t kArenaBytes = model_pte_arena_bytes;
static uint8_t* const arena = static_cast<uint8_t*>(malloc(kArenaBytes));

static ETModel model(model_pte, sizeof(model_pte), arena, arena ? kArenaBytes : 0);
"""
_STATIC_ARENA = """\
#include "model.h"

alignas(16) static uint8_t arena[model_pte_arena_bytes];

static ETModel model(model_pte, sizeof(model_pte), arena, sizeof(arena));
"""

_RUN = """\
static const float kInput[] = {%(inputs)s};

// Loads the model, runs it once on kInput and prints its outputs; false: it failed.
static bool infer() {
  const size_t count = sizeof(kInput) / sizeof(kInput[0]);
  if (!model.begin() || !model.setInput(0, kInput, count) || !model.run()) {
    return false;
  }
  const float* out = model.output();
  if (out == nullptr) {
    return false;
  }
%(timing)s  for (size_t i = 0; i < model.outputCount(); i++) {
    Serial.print("out[");
    Serial.print(static_cast<unsigned long>(i));
    Serial.print("]=");
    Serial.println(out[i], 6);
  }
  return true;
}
"""
_LOAD = """\
// Loads the model only (loading is where the arena is spent; run() takes nothing).
static bool infer() {
  return model.begin();
}
"""
_TIMING = """\
  Serial.print("Inference: ");
  Serial.print(model.lastRunMicros());
  Serial.println(" us");
"""

_BODY = """\
extern "C" void et_arduino_log(const char* line) {
  Serial.print("ET| ");
  Serial.println(line);
}

%(infer)s
void setup() {
  Serial.begin(115200);
  Serial.println("=== %(name)s ===");
  if (!infer()) {
    Serial.print("ERROR: ");
    Serial.println(model.error());
  }
  Serial.print("Arena: used ");
  Serial.print(static_cast<unsigned long>(model.arenaUsed()));
  Serial.print(" of ");
  Serial.print(static_cast<unsigned long>(model.arenaSize()));
  Serial.println(" bytes");
  Serial.println("=== DONE ===");
}

void loop() {
  delay(1000);
}
"""


def etmodel_sketch(
    name: str,
    about: str,
    inputs: Sequence[float] | None,
    *,
    heap_arena: bool = True,
    timing: bool = True,
) -> str:
    """The .ino of an example that runs the `model_pte` of its model.h with ETModel.

    It prints `=== NAME ===`; then, with `inputs` (the model's one float input, flattened), the
    `Inference: N us` line (`timing`) and one `out[i]=VALUE` line per output (OUTPUT_LINE),
    or with `inputs` None only loads the program; on failure `ERROR: <model.error()>`; always
    `Arena: used N of M bytes` (the figure `check`'s arena stage reads) and `=== DONE ===`.
    The arena is `model_pte_arena_bytes` long, from malloc or (`heap_arena` False) a static
    array. `about` (one or more lines) heads the file as a comment.
    """
    if inputs is None:
        infer = _LOAD
    else:
        values = ", ".join(f"{float(v)!r}f" for v in inputs)
        infer = _RUN % {"inputs": values, "timing": _TIMING if timing else ""}
    head = "".join(f"// {line}\n" for line in about.splitlines())
    arena = _HEAP_ARENA if heap_arena else _STATIC_ARENA
    return f"{head}\n#include <ETModel.h>\n\n{arena}\n" + _BODY % {"infer": infer, "name": name}


def etmodel_expected(name: str, outputs: Iterable[tuple[float, float]] = ()) -> str:
    """The expected.yaml of an `etmodel_sketch` example: its banner and DONE, no `ERROR:`, the
    arena stage, 120 s, and for each (value, tolerance) of `outputs` the `out[i]` line's value
    within the tolerance (absolute)."""
    spec: dict[str, Any] = {
        "must_print": [f"=== {name} ===", "=== DONE ==="],
        "must_not_print": ["ERROR:"],
        "arena": True,
        "timeout_seconds": 120,
    }
    values = [
        {"line_regex": rf"^out\[{i}\]=(-?[0-9]+\.[0-9]+)$", "equals": value, "tolerance": tol}
        for i, (value, tol) in enumerate(outputs)
    ]
    if values:
        spec["values"] = values
    return yaml.safe_dump(spec, sort_keys=False)


def write_model_h(lib: Path, pte: Path, folder: Path) -> None:
    """folder/model.h from `pte` by the library's own extras/tools/pte_to_header.py (the way
    the README tells users); raises CalledProcessError when the tool fails."""
    subprocess.run(
        [
            sys.executable,
            str(lib / "extras/tools/pte_to_header.py"),
            str(pte),
            "-o",
            str(folder / "model.h"),
        ],
        check=True,
        capture_output=True,
        text=True,
    )


def check_examples(
    lib: Path, examples: Iterable[str], report_file: Path
) -> subprocess.CompletedProcess[str]:
    """`python -m generator check LIB --compiler gcc-arm --example A,B --json REPORT_FILE` run
    from the repository, its output captured; the caller reads the exit code."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "generator",
            "check",
            str(lib),
            "--compiler",
            "gcc-arm",
            "--example",
            ",".join(examples),
            "--json",
            str(report_file),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def emulated_outputs(example: dict[str, Any], kind: str = "emulated") -> list[float]:
    """The out[i] values the run of `kind` of a check report's example printed ("emulated":
    the Static firmware; "dynamic": the Dynamic upload file as the loader places it), in index
    order."""
    (run,) = [r for r in example["runs"] if r["kind"] == kind]
    found = {}
    for line in run["last_lines"]:
        match = OUTPUT_LINE.match(line.strip())
        if match:
            found[int(match.group(1))] = float(match.group(2))
    return [found[i] for i in sorted(found)]
