"""pte_to_header.py: the CLI that writes model.h, run as a user runs it from a library."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "extras" / "tools"))

import et_model_h
from et_fixture import FIXTURE_PTE, XNNPACK_ADD
from reader_fixture import wheel_schema, write_wheel_reader

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "extras" / "tools"
PTE_DIR = FIXTURE_PTE
ADD_MODEL = PTE_DIR / "AddModel.pte"
KEYWORD_SPOTTING = PTE_DIR / "KeywordSpotting.pte"


def run(
    script: Path, *args: str | Path, cwd: Path, flags: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *flags, str(script), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def installed_library(root: Path) -> Path:
    """extras/tools (with the program reader) and extras/schema laid out as in a generated
    library."""
    write_wheel_reader(root / "extras" / "tools" / "pte_schema")
    schema = wheel_schema()
    assert schema is not None  # the reader was made from it
    (root / "extras" / "schema").mkdir(parents=True)
    for name in ("program.fbs", "scalar_type.fbs"):
        shutil.copy(schema / name, root / "extras" / "schema" / name)
    shutil.copytree(
        TOOLS,
        root / "extras" / "tools",
        ignore=shutil.ignore_patterns("__pycache__"),
        dirs_exist_ok=True,
    )
    return root


def test_writes_model_h_from_any_cwd(tmp_path: Path) -> None:
    result = run(TOOLS / "pte_to_header.py", ADD_MODEL, "-o", "out/model.h", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "out" / "model.h").read_text()
    assert text == et_model_h.model_h(
        ADD_MODEL.read_bytes(), source="AddModel.pte", all_kernels=True
    )
    assert result.stdout.startswith("out/model.h: model_pte[1156] from AddModel.pte")


def test_default_output_is_model_h_in_cwd(tmp_path: Path) -> None:
    result = run(TOOLS / "pte_to_header.py", KEYWORD_SPOTTING, "--name", "kws", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "model.h").read_text()
    assert "alignas(16) const uint8_t kws[] = {" in text
    assert et_model_h.pte_from_model_h(text) == KEYWORD_SPOTTING.read_bytes()


def test_stdout_output(tmp_path: Path) -> None:
    result = run(TOOLS / "pte_to_header.py", ADD_MODEL, "-o", "-", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    # Outside a library the program is not read: the header registers every kernel.
    assert result.stdout == et_model_h.model_h(
        ADD_MODEL.read_bytes(), source="AddModel.pte", all_kernels=True
    )
    assert list(tmp_path.iterdir()) == []


def test_rejects_a_name_that_is_not_a_c_identifier(tmp_path: Path) -> None:
    result = run(TOOLS / "pte_to_header.py", ADD_MODEL, "--name", "my-model", cwd=tmp_path)
    assert result.returncode == 2
    assert "--name 'my-model' is not a C identifier" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_missing_input(tmp_path: Path) -> None:
    result = run(TOOLS / "pte_to_header.py", tmp_path / "none.pte", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("error: cannot read ")
    assert list(tmp_path.iterdir()) == []


def test_in_a_library_it_validates_against_the_shipped_schema(tmp_path: Path) -> None:
    lib = installed_library(tmp_path / "ExecuTorch")
    script = lib / "extras" / "tools" / "pte_to_header.py"
    ok = run(script, KEYWORD_SPOTTING, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == (
        "model.h: model_pte[54192] from KeywordSpotting.pte; methods forward; selects the kernels "
        "of 8 operators"
    )
    junk = tmp_path / "junk.pte"
    junk.write_bytes(b"not a program at all")
    bad = run(script, junk, "-o", "junk.h", cwd=tmp_path)
    assert bad.returncode == 1
    assert "junk.pte is not a readable ExecuTorch program: offset 4" in bad.stderr
    assert not (tmp_path / "junk.h").exists()
    unchecked = run(script, junk, "-o", "junk.h", "--no-validate", cwd=tmp_path)
    assert unchecked.returncode == 0, unchecked.stderr
    assert et_model_h.pte_from_model_h((tmp_path / "junk.h").read_text()) == b"not a program at all"


def test_in_a_library_it_needs_no_site_packages(tmp_path: Path) -> None:
    # A plain python3 (-S: no site-packages, so no pip flatbuffers or numpy): the standard
    # library, the program reader and the FlatBuffers runtime beside the script suffice.
    lib = installed_library(tmp_path / "ExecuTorch")
    script = lib / "extras" / "tools" / "pte_to_header.py"
    ok = run(script, XNNPACK_ADD, "-o", "-", cwd=tmp_path, flags=("-S", "-I"))
    assert ok.returncode == 0, ok.stderr
    assert et_model_h.pte_from_model_h(ok.stdout) == XNNPACK_ADD.read_bytes()
    bad = run(script, tmp_path / "nothing", cwd=tmp_path, flags=("-S", "-I"))
    assert bad.returncode == 1


def test_reader_option_validates_with_another_librarys_reader(tmp_path: Path) -> None:
    lib = installed_library(tmp_path / "ExecuTorch")
    reader = lib / "extras" / "tools" / "pte_schema"
    junk = tmp_path / "junk.pte"
    junk.write_bytes(b"\x10\0\0\0ET11" + bytes(64))
    # The script of the generator's checkout has no reader beside it: it validates only when
    # given one.
    unchecked = run(TOOLS / "pte_to_header.py", junk, "-o", "-", cwd=tmp_path)
    assert unchecked.returncode == 0, unchecked.stderr
    bad = run(TOOLS / "pte_to_header.py", junk, "--reader", reader, cwd=tmp_path)
    assert bad.returncode == 1
    assert "'ET11', the schema expects 'ET12'" in bad.stderr
    missing = run(TOOLS / "pte_to_header.py", ADD_MODEL, "--reader", tmp_path, cwd=tmp_path)
    assert missing.returncode == 1
    assert f"no program reader in {tmp_path}" in missing.stderr


def test_model_h_gets_normal_permissions(tmp_path: Path) -> None:
    # A sketch folder is shared and published: not mkstemp's private 0600.
    old = os.umask(0o022)
    try:
        result = run(TOOLS / "pte_to_header.py", ADD_MODEL, "-o", "model.h", cwd=tmp_path)
    finally:
        os.umask(old)
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE((tmp_path / "model.h").stat().st_mode) == 0o644


def test_in_a_library_the_header_selects_the_models_kernels(tmp_path: Path) -> None:
    lib = installed_library(tmp_path / "ExecuTorch")
    codegen = lib / "src/executorch/codegen"
    codegen.mkdir(parents=True)
    (codegen / "RegisterKernels_aten_add_out.cpp").write_text(
        'Kernel(\n    "aten::add.out",\n    [](KernelRuntimeContext& c, Span<EValue*> stack) {\n'
        '        ET_KERNEL_CHECK_MSG(c, stack.size() == 5, InvalidProgram, , "x");\n    }),\n'
    )
    script = lib / "extras" / "tools" / "pte_to_header.py"
    ok = run(script, ADD_MODEL, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    text = (tmp_path / "model.h").read_text()
    assert 'extern "C" __attribute__((weak)) void et_arduino_select_aten_add_out(void) {' in text
    assert "et_arduino_register_aten_add_out();" in text
    assert et_model_h.pte_from_model_h(text) == ADD_MODEL.read_bytes()
    every = run(script, ADD_MODEL, "-o", "every.h", "--all-kernels", cwd=tmp_path)
    assert every.returncode == 0, every.stderr
    assert "every kernel of the library (--all-kernels)" in every.stdout
    every_h = (tmp_path / "every.h").read_text()
    assert "et_arduino_select_aten_add_out" not in every_h
    assert "void et_arduino_select_all_kernels(void) {" in every_h
    # KeywordSpotting calls operators this library does not register: refused, nothing written.
    refused = run(script, KEYWORD_SPOTTING, "-o", "kws.h", cwd=tmp_path)
    assert refused.returncode == 1
    assert "which this library does not register" in refused.stderr
    assert "cortex_m::quantized_conv2d.out" in refused.stderr
    assert not (tmp_path / "kws.h").exists()
