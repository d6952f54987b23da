"""Step 3: the program reader. flatc's Python for the ref's `program.fbs`, with FlatBuffers'
Python runtime, as one package a library ships in `extras/tools/pte_schema/`.

`extras/tools/et_pte.py` (the model check, `pte_to_header.py`, `--ops-from-pte`) reads a
`.pte` through this package and nothing else: the FlatBuffers decoding is FlatBuffers' own,
generated from the library's schema by the pinned flatc; et_pte keeps only the domain logic.

The package, `READER_DIR` of a library:

    __init__.py            written here: where the rest came from, and FILE_IDENTIFIER
    program_generated.py   `flatc --python --gen-onefile --gen-all program.fbs`, its imports
                           of the runtime made relative (as upstream's exir/_serialize/
                           generate_program.py rewrites its own), so the package imports under
                           any name and never picks up another `flatbuffers` of the process
    flatbuffers/           FlatBuffers' Python runtime at the pinned commit (`RUNTIME_PATH` of
                           the FlatBuffers checkout; Apache-2.0, like the C++ headers in
                           src/flatbuffers/, whose license the library already ships)

Standard library only at run time (the shipped tools run with a plain `python3`).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from generator.pipeline.flatc import (
    find_flatc,
    flatc_version,
    pinned_flatbuffers_version,
    run_flatc,
)
from generator.pipeline.sources import PinnedSource
from generator.util.cache import StepCache
from generator.util.confine import confined_file
from generator.util.errors import FatalError
from generator.vcs.checkout import checkout

#: Where a library keeps the reader package (must equal et_pte.LIBRARY_READER_DIR).
READER_DIR = "extras/tools/pte_schema"
#: FlatBuffers' Python runtime package in a FlatBuffers checkout.
RUNTIME_PATH = "python/flatbuffers"
#: The schema files read (program.fbs includes scalar_type.fbs).
SCHEMA_FILES = ("program.fbs", "scalar_type.fbs")
#: The module flatc writes for program.fbs with --gen-onefile.
GENERATED_MODULE = "program_generated.py"
#: One file, every type of the included schemas in it: no import between generated modules.
FLATC_PYTHON_FLAGS = ("--python", "--gen-onefile", "--gen-all")

_FILE_IDENTIFIER = re.compile(r'^\s*file_identifier\s+"(?P<id>[^"]*)"\s*;', re.M)
#: flatc's imports of the runtime: `import flatbuffers`, `from flatbuffers[.mod] import X`.
_RUNTIME_IMPORT = re.compile(r"^(?P<indent>[ \t]*)import flatbuffers[ \t]*$", re.M)
_RUNTIME_FROM = re.compile(r"^(?P<indent>[ \t]*)from flatbuffers(?P<sub>(?:\.\w+)*) import ", re.M)
#: Any import statement: after the rewrite, each must be relative or of the standard library.
_ANY_IMPORT = re.compile(r"^[ \t]*(?:import|from)[ \t]+(?P<module>[\w.]+)", re.M)
_STDLIB_IMPORTS = frozenset({"typing", "enum", "struct", "collections"})


def file_identifier(schema: Path) -> str:
    """The 4-character `file_identifier` a schema file declares ("ET12" for program.fbs).

    Raises:
        FatalError: the file is unreadable or declares none (not ExecuTorch's program.fbs).
    """
    try:
        text = schema.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise FatalError(f"cannot read the schema {schema}: {e}") from None
    text = re.sub(r"//[^\n]*", "", text)
    match = _FILE_IDENTIFIER.search(text)
    if match is None or len(match.group("id").encode()) != 4:
        raise FatalError(
            f"{schema} declares no 4-character file_identifier; it is not ExecuTorch's "
            "program schema (is the ref's schema/ folder complete?)"
        )
    return match.group("id")


def relative_runtime_imports(source: str) -> str:
    """`source` (flatc's Python) with its imports of `flatbuffers` made package-relative.

    Raises:
        FatalError: an import remains that is neither relative nor of the standard library
            (a flatc whose output this generator does not know).
    """
    text = _RUNTIME_IMPORT.sub(r"\g<indent>from . import flatbuffers", source)
    text = _RUNTIME_FROM.sub(r"\g<indent>from .flatbuffers\g<sub> import ", text)
    foreign = sorted(
        {
            m.group("module")
            for m in _ANY_IMPORT.finditer(text)
            if not m.group("module").startswith(".")
            and m.group("module").split(".")[0] not in _STDLIB_IMPORTS
        }
    )
    if foreign:
        raise FatalError(
            f"flatc's Python imports {', '.join(foreign)}, which the program reader cannot "
            "ship; this flatc's output is not the one the generator knows (a bug in "
            "generator/pipeline/reader.py)"
        )
    return text


def _init_text(version: str, schema_dir: Path, identifier: str) -> str:
    digests = "\n".join(
        f"    {name}  sha256 {hashlib.sha256((schema_dir / name).read_bytes()).hexdigest()}"
        for name in SCHEMA_FILES
        if (schema_dir / name).is_file()
    )
    return (
        '"""ExecuTorch\'s program schema in Python: what extras/tools/et_pte.py reads .pte\n'
        "files with. Generated by the ExecuTorch Arduino library generator; do not edit.\n"
        "\n"
        f"program_generated.py: flatc {version} {' '.join(FLATC_PYTHON_FLAGS)} on\n"
        f"{digests}\n"
        "(the library's extras/schema/), its imports of the runtime made relative.\n"
        f"flatbuffers/: FlatBuffers' Python runtime ({RUNTIME_PATH} of the pinned FlatBuffers,\n"
        "Apache-2.0: extras/THIRD_PARTY_LICENSES/).\n"
        '"""\n'
        "\n"
        "#: The file identifier of the schema (bytes 4..7 of every .pte it reads).\n"
        f"FILE_IDENTIFIER = {identifier!r}\n"
    )


def write_program_reader(
    flatc: Path,
    schema_dir: Path,
    runtime: Path,
    dest: Path,
    steps: StepCache | None = None,
    version: str | None = None,
) -> Path:
    """Write the program reader package (see the module docstring) to `dest`.

    Deterministic: the same flatc, schema and runtime give the same bytes. `dest` is
    replaced whole (written beside it, then moved), so a failure leaves it as it was.

    Args:
        flatc: a flatc of the pinned FlatBuffers version (`generator.pipeline.flatc.find_flatc`).
        schema_dir: the ref's `schema/` folder (program.fbs, scalar_type.fbs).
        runtime: FlatBuffers' Python runtime package at the pinned commit (`RUNTIME_PATH`
            of the FlatBuffers checkout); its top-level `*.py` are copied.
        dest: the package folder, `<library>/READER_DIR` (or a cache folder).
        steps: the build's step cache, through which flatc runs (`flatc.run_flatc`); None:
            flatc always runs.
        version: flatc's version when the caller knows it (else flatc is asked).

    Returns:
        `dest`.

    Raises:
        FatalError: flatc fails or writes no `program_generated.py`, its output imports
            something unexpected, the schema declares no file_identifier, or `runtime` is not
            FlatBuffers' Python runtime (no `__init__.py`, `table.py`).
    """
    schema = confined_file(schema_dir, "program.fbs", "the schema")
    identifier = file_identifier(schema)
    if not (runtime / "__init__.py").is_file() or not (runtime / "table.py").is_file():
        raise FatalError(
            f"{runtime} is not FlatBuffers' Python runtime (no __init__.py and table.py); "
            f"the FlatBuffers checkout needs {RUNTIME_PATH} (data/vendored/flatbuffers.yaml)"
        )
    version = version or flatc_version(flatc) or "(unknown version)"
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        with tempfile.TemporaryDirectory(prefix="flatc-python-") as out:
            proc = run_flatc(
                flatc, FLATC_PYTHON_FLAGS, [schema], Path(out), steps or StepCache(None)
            )
            generated = Path(out) / GENERATED_MODULE
            if proc is not None or not generated.is_file():
                said = (proc.stderr or proc.stdout).strip() if proc is not None else ""
                reason = said or f"no {GENERATED_MODULE} written"
                raise FatalError(f"flatc {version} failed on {schema}: {reason}")
            source = generated.read_text(encoding="utf-8")
        (staging / GENERATED_MODULE).write_text(
            relative_runtime_imports(source), encoding="utf-8", newline="\n"
        )
        (staging / "__init__.py").write_text(
            _init_text(version, schema_dir, identifier), encoding="utf-8", newline="\n"
        )
        (staging / "flatbuffers").mkdir()
        for path in sorted(runtime.glob("*.py")):
            runtime_file = confined_file(runtime, path.name, "FlatBuffers' Python runtime")
            shutil.copyfile(runtime_file, staging / "flatbuffers" / path.name)
        if dest.exists():
            shutil.rmtree(dest)
        staging.replace(dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return dest


@dataclass(frozen=True)
class ReaderPackage:
    """What the program reader step made.

    Attributes:
        folder: the package (`<library>/READER_DIR`); what `models.ops_in_pte` and
            `et_pte.load_reader` take.
        flatc, flatc_version: the flatc that generated it (the pinned FlatBuffers' version).
    """

    folder: Path
    flatc: Path
    flatc_version: str


def program_reader(
    flatbuffers: PinnedSource, schema_dir: Path, dest: Path, cache_dir: Path
) -> ReaderPackage:
    """The build step: write the program reader of `schema_dir` (the ref's `schema/`) to
    `dest` with a flatc of the pinned FlatBuffers version (found or built as for the schema
    headers) and the runtime of the `flatbuffers` checkout.

    Raises:
        FatalError: see `pinned_flatbuffers_version`, `find_flatc`, `write_program_reader`.
    """
    version = pinned_flatbuffers_version(flatbuffers.path)
    flatc = find_flatc(version, flatbuffers.url, flatbuffers.sha, cache_dir)
    tree = flatbuffers.path
    if not (tree / RUNTIME_PATH / "__init__.py").is_file():
        # Building flatc checks the same cached clone out with only what its build needs:
        # check the component's paths out again (the commit is cached, nothing is fetched).
        component = flatbuffers.component
        tree = checkout(flatbuffers.url, flatbuffers.sha, component.checkout, cache_dir).path
    steps = StepCache(cache_dir)
    write_program_reader(flatc, schema_dir, tree / RUNTIME_PATH, dest, steps, version)
    return ReaderPackage(dest, flatc, version)
