"""pte_to_header.py: the CLI that writes model.h, run as a user runs it from a library."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "data" / "extras" / "tools"))

import et_model_h
from et_fixture import FIXTURE_PTE, XNNPACK_ADD
from reader_fixture import wheel_schema, write_wheel_reader

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "data" / "extras" / "tools"
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


def test_a_symbolic_link_is_written_through_and_a_fifo_as_it_is(tmp_path: Path) -> None:
    # A rename over -o's path would replace a link with a file, and a device node (as root:
    # `-o /dev/null` replaced the machine's /dev/null with a regular file) or a FIFO.
    want = et_model_h.model_h(ADD_MODEL.read_bytes(), source="AddModel.pte", all_kernels=True)
    (tmp_path / "real.h").write_text("old")
    (tmp_path / "link.h").symlink_to("real.h")
    result = run(TOOLS / "pte_to_header.py", ADD_MODEL, "-o", "link.h", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "link.h").is_symlink()
    assert (tmp_path / "real.h").read_text() == want
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    result = run(TOOLS / "pte_to_header.py", ADD_MODEL, "-o", str(fifo), cwd=tmp_path)
    out, _ = reader.communicate(timeout=60)
    assert result.returncode == 0, result.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert out == want
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.h", "pipe", "real.h"]


def test_default_output_is_model_h_in_cwd(tmp_path: Path) -> None:
    result = run(TOOLS / "pte_to_header.py", KEYWORD_SPOTTING, "--name", "kws", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "model.h").read_text()
    assert "alignas(16) inline constexpr uint8_t kws[] = {" in text
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
        "model.h: model_pte[54192] from KeywordSpotting.pte; methods forward; arena 30150 bytes; "
        "selects the kernels of 8 operators"
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


def test_the_header_gives_the_64_bit_hosts_arena_too(tmp_path: Path) -> None:
    """A user's header carries the host figure as the build's do: sized from the board's
    30,150 B alone, the check's host run of KeywordSpotting would run out of arena."""
    lib = installed_library(tmp_path / "ExecuTorch")
    script = lib / "extras" / "tools" / "pte_to_header.py"
    ok = run(script, KEYWORD_SPOTTING, "-o", "model.h", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    text = (tmp_path / "model.h").read_text()
    assert "#if defined(__SIZEOF_POINTER__) && __SIZEOF_POINTER__ == 8" in text
    assert "model_pte_arena_bytes = 38062;" in text
    assert "model_pte_arena_bytes = 30150;" in text


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
    assert refused.stderr.startswith(
        f"error: KeywordSpotting.pte would not run on the library {lib.resolve()}; nothing written:"
    )
    assert (
        "  cortex_m::quantized_conv2d.out is not registered in the library: Method::load fails "
        "with OperatorMissing (0x14)" in refused.stderr
    )
    assert refused.stderr.endswith("(--no-check writes the header anyway)\n")
    assert not (tmp_path / "kws.h").exists()


# --- the model check (check_models.py's) and the pin warning --------------------------------


def checked_library(root: Path, kernels: dict[str, int]) -> Path:
    """A library tree with what the model check reads (tests/unit/pipeline/test_model_check.py's
    make_library: schema, program reader, a registration of `kernels`) and this repo's
    extras/tools, as in a generated library."""
    from library_fixture import make_library

    make_library(root, kernels)
    shutil.copytree(
        TOOLS,
        root / "extras" / "tools",
        ignore=shutil.ignore_patterns("__pycache__"),
        dirs_exist_ok=True,
    )
    return root


def test_refuses_an_argument_count_the_library_does_not_take(tmp_path: Path) -> None:
    # AddModel's aten::add.out passes 5 values (the registration at cff6f4dd takes 5).
    lib = checked_library(tmp_path / "ExecuTorch", {"aten::add.out": 4})
    script = lib / "extras" / "tools" / "pte_to_header.py"
    refused = run(script, ADD_MODEL, cwd=tmp_path)
    assert refused.returncode == 1
    assert (
        "  aten::add.out: model supplies 5 arguments, library expects 4: Method::execute fails "
        "with InvalidProgram (0x23) [forward]; likely cause: the model was exported with a "
        "different ExecuTorch commit" in refused.stderr
    )
    assert not (tmp_path / "model.h").exists()
    forced = run(script, ADD_MODEL, "--no-check", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert et_model_h.pte_from_model_h((tmp_path / "model.h").read_text()) == ADD_MODEL.read_bytes()
    assert "et_arduino_select_aten_add_out" in (tmp_path / "model.h").read_text()
    fits = checked_library(tmp_path / "Fits", {"aten::add.out": 5})
    ok = run(fits / "extras" / "tools" / "pte_to_header.py", ADD_MODEL, "-o", "ok.h", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "model_pte[1156] from AddModel.pte; methods forward" in ok.stdout


def test_refuses_a_delegate_the_library_does_not_register(tmp_path: Path) -> None:
    lib = checked_library(tmp_path / "ExecuTorch", {"aten::add.out": 5})
    refused = run(lib / "extras" / "tools" / "pte_to_header.py", XNNPACK_ADD, cwd=tmp_path)
    assert refused.returncode == 1
    assert (
        "delegates to backend XnnpackBackend, which the library does not register (it "
        "registers no backend): Method::load fails with NotFound (0x20)" in refused.stderr
    )
    assert not (tmp_path / "model.h").exists()


def test_refuses_a_dtype_the_library_was_built_without(tmp_path: Path) -> None:
    import et_dtypes
    from library_fixture import header_keeping

    from generator.pipeline.dtypes import config_header

    lib = checked_library(tmp_path / "ExecuTorch", {"aten::add.out": 5})
    (lib / et_dtypes.SELECTED_OP_VARIANTS).parent.mkdir(parents=True)
    (lib / et_dtypes.SELECTED_OP_VARIANTS).write_text(header_keeping({"add.out": ["Char"]}))
    (lib / et_dtypes.SELECTION_CONFIG).write_text(config_header("test"))
    refused = run(lib / "extras" / "tools" / "pte_to_header.py", ADD_MODEL, cwd=tmp_path)
    assert refused.returncode == 1
    assert "aten::add.out is called with float32 (Float) tensors" in refused.stderr
    assert "it keeps int8 (Char)" in refused.stderr
    assert not (tmp_path / "model.h").exists()


def test_an_unreadable_registration_refuses_with_what_to_do(tmp_path: Path) -> None:
    lib = checked_library(tmp_path / "ExecuTorch", {"aten::add.out": 5})
    for source in (lib / "src/executorch/codegen").glob("Register*.cpp"):
        source.write_text("// no kernels here\n")
    refused = run(lib / "extras" / "tools" / "pte_to_header.py", ADD_MODEL, cwd=tmp_path)
    assert refused.returncode == 1
    assert refused.stderr.startswith(f"error: cannot check AddModel.pte against {lib.resolve()}: ")
    assert "(--no-check writes the header without the check)" in refused.stderr


PIN = "cff6f4dd32e630945b7188512c1f2b4f102b05ad"
OTHER = "3b60683923245cf472b7323426920e15623ba361"


def pinned(root: Path, ref: str = "main", version: str = "1.5.0") -> Path:
    """The pin files of a generated library: executorch_pin.txt and extras/library.json."""
    (root / "extras").mkdir(parents=True, exist_ok=True)
    (root / "executorch_pin.txt").write_text(PIN + "\n")
    facts = {"executorch": {"ref": ref, "sha": PIN, "upstream_version": version}}
    (root / "extras" / "library.json").write_text(json.dumps(facts))
    return root


def fake_executorch(root: Path, version: str, commit: str | None) -> Path:
    """A folder that, first on sys.path, is an installed `executorch` to importlib.metadata:
    its dist-info and the executorch/version.py ExecuTorch's setup.py writes."""
    info = root / f"executorch-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: executorch\nVersion: {version}\n")
    (root / "executorch").mkdir()
    git = repr(commit) if commit else "None"
    (root / "executorch" / "version.py").write_text(
        f'__version__ = "{version}"\ngit_version: Optional[str] = {git}\n'
    )
    return root


def test_pin_message_lets_the_model_check_decide(tmp_path: Path) -> None:
    import pte_to_header as tool

    lib = pinned(tmp_path / "main")
    pin_file = lib / "executorch_pin.txt"
    for outcome in tool.CHECK_OUTCOMES:
        assert tool.pin_message(lib, outcome, tool.Installed("1.5.0+cff6f4d", PIN)) is None
        assert tool.pin_message(lib, outcome, tool.Installed("1.5.0+cff6f4d", PIN[:7])) is None
    other = tool.Installed("1.5.1", OTHER)
    mismatch = (
        "the installed executorch 1.5.1 (commit 3b6068392324) is not this library's pin "
        f"(ExecuTorch 1.5.0, commit cff6f4dd32e6, {pin_file})"
    )
    build = (
        "build the wheel from the pin (no release is built from a commit of main between "
        "releases): git checkout cff6f4dd32e6 in an ExecuTorch clone, then ./install_executorch.sh"
    )
    assert tool.pin_message(lib, "passed", other) == (
        f"note: {mismatch}; the model check compared every kernel call of this program with "
        "the library and found none that differs, so it runs: nothing to install"
    )
    assert tool.pin_message(lib, "refused", other) == (
        f"warning: {mismatch}, the likely cause of the refusal below; export with the pin's "
        f"exporter: {build}"
    )
    assert tool.pin_message(lib, "unchecked", other) == (
        f"warning: {mismatch}, and nothing checked this program's kernel calls against the "
        "library; check it with extras/tools/check_models.py MODEL.pte, which decides whether "
        f"it runs, and only if it refuses: {build}"
    )
    release = pinned(tmp_path / "release", ref="v1.5.0")
    refused = tool.pin_message(release, "refused", tool.Installed("1.4.1", OTHER))
    assert refused is not None
    assert refused.endswith("pip install executorch==1.5.0, the pin's own release")
    # No commit recorded (an editable install): the versions are compared.
    assert tool.pin_message(lib, "passed", tool.Installed("1.5.0+cpu", None)) is None
    unrecorded = tool.pin_message(lib, "passed", tool.Installed("1.4.1", None))
    assert str(unrecorded).startswith("note: the installed executorch 1.4.1 is not")
    assert tool.pin_message(tmp_path / "no-pin", "refused", other) is None
    with pytest.raises(ValueError, match="'maybe' is not one of passed, refused, unchecked"):
        tool.pin_message(lib, "maybe", other)


def test_pin_version_falls_back_to_library_properties(tmp_path: Path) -> None:
    import pte_to_header as tool

    (tmp_path / "executorch_pin.txt").write_text(PIN.upper() + "\n")
    (tmp_path / "library.properties").write_text("name=ExecuTorch\nversion=1.5.0\n")
    assert tool.library_pin(tmp_path) == tool.Pin(PIN, "1.5.0", "")


def test_the_model_check_decides_when_the_installed_executorch_is_not_the_pin(
    tmp_path: Path,
) -> None:
    lib = pinned(checked_library(tmp_path / "ExecuTorch", {"aten::add.out": 5}))
    script = lib / "extras" / "tools" / "pte_to_header.py"
    other = fake_executorch(tmp_path / "other", "1.5.1", OTHER)

    def embed(
        library_script: Path, *args: str, path: Path = other
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(library_script), str(ADD_MODEL), *args],
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(path)},
            capture_output=True,
            text=True,
        )

    mismatch = (
        "the installed executorch 1.5.1 (commit 3b6068392324) is not this library's pin "
        "(ExecuTorch 1.5.0, commit cff6f4dd32e6"
    )
    passed = embed(script)
    assert passed.returncode == 0, passed.stderr
    assert passed.stderr.startswith(f"note: {mismatch}")
    assert passed.stderr.rstrip().endswith("so it runs: nothing to install")
    assert (tmp_path / "model.h").is_file()
    unchecked = embed(script, "--no-check", "-o", "unchecked.h")
    assert unchecked.returncode == 0, unchecked.stderr
    assert unchecked.stderr.startswith(f"warning: {mismatch}")
    assert "check it with extras/tools/check_models.py" in unchecked.stderr
    # A library whose add.out takes other arguments: the refusal comes after the warning.
    other_lib = pinned(checked_library(tmp_path / "Other" / "ExecuTorch", {"aten::add.out": 4}))
    refused = embed(other_lib / "extras" / "tools" / "pte_to_header.py", "-o", "refused.h")
    assert refused.returncode == 1
    warning, error = refused.stderr.split("\n", 1)
    assert warning.startswith(f"warning: {mismatch}")
    assert warning.endswith("./install_executorch.sh")
    assert "the likely cause of the refusal below" in warning
    assert error.startswith("error: AddModel.pte would not run on the library")
    assert not (tmp_path / "refused.h").exists()
    same = fake_executorch(tmp_path / "same", "1.5.0+cff6f4d", PIN)
    quiet = embed(script, "-o", "same.h", path=same)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == ""


def test_a_file_where_the_output_folder_should_be_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    result = run(TOOLS / "pte_to_header.py", ADD_MODEL, "-o", "afile/model.h", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr == "error: cannot write afile/model.h: afile is a file, not a folder\n"
    assert (tmp_path / "afile").read_text() == "x"


def test_no_check_selects_only_what_the_library_registers(tmp_path: Path) -> None:
    # A library without aten::add.out: selecting it would reference an
    # et_arduino_register_aten_add_out no archive defines (an undefined reference at the
    # link); left out, the sketch links and Method::load names the operator.
    lib = checked_library(tmp_path / "ExecuTorch", {"aten::mul.out": 5})
    script = lib / "extras" / "tools" / "pte_to_header.py"
    written = run(script, ADD_MODEL, "--no-check", cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    header = (tmp_path / "model.h").read_text()
    assert "et_arduino_register_aten_add_out" not in header
    assert "et_arduino_kernels_fallback" in header  # it still selects (none): no fallback
    assert (
        "; selects the kernels of 0 operators; not in the library, so Method::load fails "
        "with OperatorMissing (0x14) naming them: aten::add.out (--no-check)"
    ) in written.stdout
    kept = checked_library(tmp_path / "Kept" / "ExecuTorch", {"aten::add.out": 5})
    run(
        kept / "extras" / "tools" / "pte_to_header.py",
        ADD_MODEL,
        "--no-check",
        "-o",
        "k.h",
        cwd=tmp_path,
    )
    assert "et_arduino_register_aten_add_out" in (tmp_path / "k.h").read_text()
