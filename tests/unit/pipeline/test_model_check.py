"""Model check: kernel registration parsing, check_model, check_library, check_models.py,
and the generator's typed wrapper (generator/pipeline/models.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "data" / "extras" / "tools"))

import et_checks
import et_model_h
import et_pte
import et_registration
from et_fixture import (
    DYNAMIC_ADD,
    FIXTURE_PRIM_OPS,
    FIXTURE_PTE,
    PRIM_OPS_CPP,
    XNNPACK_ADD,
)
from library_fixture import (
    ADD_MODEL,
    DYNAMIC_ADD_KERNELS,
    KERNELS_AT_CFF6F4DD,
    KEYWORD_SPOTTING,
    make_library,
    registration_cpp,
    write_prim_ops,
)
from reader_fixture import write_wheel_reader

from generator.pipeline import models
from generator.util.errors import FatalError

ROOT = Path(__file__).resolve().parents[3]
TOOLS = ROOT / "data" / "extras" / "tools"
PTE_DIR = FIXTURE_PTE


@pytest.fixture(scope="module")
def reader_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The program reader of the wheel's schema (see tests/support/reader_fixture.py)."""
    return write_wheel_reader(tmp_path_factory.mktemp("reader") / "pte_schema")


@pytest.fixture
def reader(reader_dir: Path) -> et_pte.ProgramReader:
    return et_pte.load_reader(reader_dir)


def without(name: str) -> dict[str, int]:
    return {k: v for k, v in KERNELS_AT_CFF6F4DD.items() if k != name}


# --- registered_kernels -----------------------------------------------------------------


def test_registered_kernels_reads_the_codegen_format(tmp_path: Path) -> None:
    (tmp_path / "RegisterCodegenUnboxedKernelsEverything.cpp").write_text(
        registration_cpp(KERNELS_AT_CFF6F4DD)
    )
    assert et_registration.registered_kernels(tmp_path) == KERNELS_AT_CFF6F4DD


def test_registered_kernels_accepts_the_same_registration_twice(tmp_path: Path) -> None:
    text = registration_cpp({"aten::add.out": 5})
    (tmp_path / "RegisterCodegenUnboxedKernelsEverything.cpp").write_text(text)
    (tmp_path / "RegisterCodegenUnboxedKernels_0.cpp").write_text(text)
    assert et_registration.registered_kernels(tmp_path) == {"aten::add.out": 5}


def test_registered_kernels_with_a_kernel_key_string(tmp_path: Path) -> None:
    text = registration_cpp({"aten::add.out": 5}).replace(
        '"aten::add.out",\n', '"aten::add.out",\n        "v1/6;0,1,2,3|6;0,1,2,3",\n'
    )
    (tmp_path / "RegisterKernelsEverything.cpp").write_text(text)
    assert et_registration.registered_kernels(tmp_path) == {"aten::add.out": 5}


def test_no_registration_sources_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "RegisterKernels.h").write_text("")
    with pytest.raises(et_registration.RegistrationError, match=r"no kernel registration sources"):
        et_registration.registered_kernels(tmp_path)


def test_sources_without_kernels_mean_the_format_changed(tmp_path: Path) -> None:
    (tmp_path / "RegisterCodegenUnboxedKernelsEverything.cpp").write_text(
        'static Kernel kernels_to_register[] = {\n  make_kernel("aten::add.out", 5),\n};\n'
    )
    with pytest.raises(
        et_registration.RegistrationError, match=r"codegen format changed.*not a passing"
    ):
        et_registration.registered_kernels(tmp_path)


def test_a_kernel_without_its_stack_check_means_the_format_changed(tmp_path: Path) -> None:
    text = registration_cpp({"aten::add.out": 5, "aten::mul.out": 4})
    text = text.replace("stack.size() == 4", "stack.size() >= 4")
    (tmp_path / "RegisterCodegenUnboxedKernelsEverything.cpp").write_text(text)
    with pytest.raises(
        et_registration.RegistrationError, match=r"aten::mul\.out has no `stack\.size"
    ):
        et_registration.registered_kernels(tmp_path)


def test_conflicting_registrations_are_an_error(tmp_path: Path) -> None:
    (tmp_path / "RegisterCodegenUnboxedKernelsEverything.cpp").write_text(
        registration_cpp({"aten::add.out": 5})
    )
    (tmp_path / "RegisterCodegenUnboxedKernels_0.cpp").write_text(
        registration_cpp({"aten::add.out": 4})
    )
    with pytest.raises(
        et_registration.RegistrationError, match=r"aten::add\.out is registered with"
    ):
        et_registration.registered_kernels(tmp_path)


# --- registered_prim_ops ----------------------------------------------------------------


def test_prim_ops_are_read_in_each_of_upstreams_shapes(tmp_path: Path) -> None:
    # A lambda with its own stack check, one checking through nested macros, and a function
    # defined in et_view.cpp beside it.
    source = write_prim_ops(tmp_path)
    assert et_registration.registered_prim_ops(source) == FIXTURE_PRIM_OPS


def test_a_library_without_prim_ops_registers_none(tmp_path: Path) -> None:
    assert et_registration.registered_prim_ops(tmp_path / "register_prim_ops.cpp") == {}


def test_prim_ops_without_a_kernel_mean_the_format_changed(tmp_path: Path) -> None:
    source = write_prim_ops(tmp_path, "static Kernel prim_ops[] = {};\n")
    with pytest.raises(
        et_registration.RegistrationError, match=r"prim ops format changed.*not a passing"
    ):
        et_registration.registered_prim_ops(source)


def test_a_prim_op_without_its_stack_check_means_the_format_changed(tmp_path: Path) -> None:
    source = write_prim_ops(tmp_path, PRIM_OPS_CPP.replace("ALGEBRA_ET_PRIM_OP(*,", "other(*,"))
    with pytest.raises(
        et_registration.RegistrationError,
        match=r"prim op executorch_prim::mul\.Scalar has no `stack",
    ):
        et_registration.registered_prim_ops(source)


def test_library_kernels_are_the_codegen_kernels_and_the_prim_ops(tmp_path: Path) -> None:
    lib = make_library(tmp_path / "lib", {"aten::add.out": 5}, prim_ops=True)
    assert et_registration.library_kernels(lib) == {"aten::add.out": 5, **FIXTURE_PRIM_OPS}


def test_an_operator_registered_twice_is_an_error(tmp_path: Path) -> None:
    lib = make_library(tmp_path / "lib", {"aten::sym_size.int": 3}, prim_ops=True)
    with pytest.raises(
        et_registration.RegistrationError, match=r"aten::sym_size\.int registered by both"
    ):
        et_registration.library_kernels(lib)


def test_a_model_calling_prim_ops_runs_on_a_library_that_ships_them(tmp_path: Path) -> None:
    lib = make_library(
        tmp_path / "lib", DYNAMIC_ADD_KERNELS, prim_ops=True, models={"AddModel": DYNAMIC_ADD}
    )
    (result,) = et_checks.check_library(lib)
    assert result.passed, [p.message for p in result.problems]
    assert result.kernel_calls == 7
    assert set(result.operators) == DYNAMIC_ADD_KERNELS.keys() | FIXTURE_PRIM_OPS.keys()


def test_prim_ops_a_library_lacks_are_named_with_what_to_do(tmp_path: Path) -> None:
    lib = make_library(tmp_path / "lib", DYNAMIC_ADD_KERNELS, models={"AddModel": DYNAMIC_ADD})
    (result,) = et_checks.check_library(lib)
    messages = {p.to_dict()["operator"]: p.message for p in result.problems}
    assert sorted(messages) == sorted(FIXTURE_PRIM_OPS)
    # executorch_prim:: ops come from the library's register_prim_ops.cpp, never its op set:
    # no hint to widen the op set for them.
    for op in ("executorch_prim::mul.Scalar", "executorch_prim::et_view.default"):
        assert "ExecuTorch's prim ops" in messages[op] and "--ops" not in messages[op]
    # aten::sym_size.int: the generator's --ops-from-pte accepts it (and ships prim ops).
    assert "--ops-from-pte" in messages["aten::sym_size.int"]


# --- registered_backends / check_backends ------------------------------------------------

#: The runtime's own declaration and definition of register_backend (not registrations).
RUNTIME_BACKEND_API = {
    "src/executorch/runtime/backend/interface.h": (
        "ET_NODISCARD Error register_backend(const Backend& backend);\n"
        "using ::executorch::ET_RUNTIME_NAMESPACE::register_backend;\n"
    ),
    "src/executorch/runtime/backend/interface.cpp": (
        "Error register_backend(const Backend& backend) {\n  return Error::Ok;\n}\n"
    ),
}


def write_sources(library: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (library / rel).parent.mkdir(parents=True, exist_ok=True)
        (library / rel).write_text(text)
    return library


def test_a_library_with_only_the_backend_api_registers_no_backend(tmp_path: Path) -> None:
    assert et_registration.registered_backends(write_sources(tmp_path, RUNTIME_BACKEND_API)) == ()


def test_backend_registrations_are_read_in_upstreams_shapes(tmp_path: Path) -> None:
    lib = write_sources(
        tmp_path,
        {
            **RUNTIME_BACKEND_API,
            # backends/arm/runtime/VGFBackend.cpp
            "src/vgf/VGFBackend.cpp": (
                'auto cls = VGFBackend();\nBackend backend{"VgfBackend", &cls};\n'
                "static auto success_with_compiler = register_backend(backend);\n"
            ),
            # backends/xnnpack/runtime/XNNPACKBackend.cpp, its id a constant defined elsewhere
            "src/xnnpack/XNNPACKBackend.cpp": (
                "Backend backend{xnnpack::xnnpack_backend_key, &backend_instance};\n"
                "static auto success_with_compiler = register_backend(backend);\n"
            ),
            "src/xnnpack/XNNHeader.cpp": 'const char xnnpack_backend_key[] = "XnnpackBackend";\n',
            # runtime/executor/test/backend_integration_test.cpp
            "src/stub/StubBackend.h": (
                'return executorch::runtime::register_backend({"StubBackend", &singleton_});\n'
            ),
        },
    )
    assert et_registration.registered_backends(lib) == (
        "StubBackend",
        "VgfBackend",
        "XnnpackBackend",
    )


def test_a_backend_id_that_cannot_be_read_is_an_error(tmp_path: Path) -> None:
    lib = write_sources(
        tmp_path,
        {"src/odd/Odd.cpp": "static auto ok = register_backend(make_backend());\n"},
    )
    with pytest.raises(
        et_registration.RegistrationError, match=r"Odd\.cpp registers a backend .* not a"
    ):
        et_registration.registered_backends(lib)


def test_a_delegate_to_an_unregistered_backend_is_named(reader: et_pte.ProgramReader) -> None:
    program = et_pte.read_program(XNNPACK_ADD.read_bytes(), reader)
    assert program.methods[0].delegates == ("XnnpackBackend",)
    (problem,) = et_checks.check_backends(program, ())
    assert problem == et_checks.MissingBackend("forward", "XnnpackBackend", (), 1)
    message = problem.message
    assert message.startswith("delegates to backend XnnpackBackend, which the library does not")
    assert "it registers no backend" in message
    assert "NotFound (0x20)" in message and "Method::load" in message
    assert '"Backend XnnpackBackend is not registered."' in message
    assert "without the partitioner" in message and "--ops-from-pte" in message
    assert problem.to_dict()["code"] == 0x20
    assert et_checks.check_backends(program, ("XnnpackBackend",)) == []
    other = et_checks.check_backends(program, ("VgfBackend",))[0].message
    assert "it registers VgfBackend" in other


def test_check_library_fails_a_delegated_model(tmp_path: Path) -> None:
    kernels = {"dim_order_ops::_to_dim_order_copy.out": 5}
    lib = make_library(tmp_path / "lib", kernels, models={"AddModel": XNNPACK_ADD})
    write_sources(lib, RUNTIME_BACKEND_API)
    (result,) = et_checks.check_library(lib)
    assert not result.passed
    assert result.delegates == ("XnnpackBackend",)
    assert [type(p).__name__ for p in result.problems] == ["MissingBackend"]
    assert result.to_dict()["delegates"] == ["XnnpackBackend"]
    # The same library registering the backend passes.
    write_sources(
        lib,
        {
            "src/xnnpack/XNNPACKBackend.cpp": (
                'Backend backend{"XnnpackBackend", &instance};\n'
                "static auto registered = register_backend(backend);\n"
            )
        },
    )
    assert et_checks.check_library(lib)[0].passed


# --- check_model ------------------------------------------------------------------------


@pytest.mark.parametrize("pte", [ADD_MODEL, KEYWORD_SPOTTING], ids=lambda p: p.stem)
def test_models_match_the_registration_of_their_own_commit(
    pte: Path, reader: et_pte.ProgramReader
) -> None:
    program = et_pte.read_program(pte.read_bytes(), reader)
    assert et_checks.check_model(program, KERNELS_AT_CFF6F4DD) == []


def test_missing_operator_is_operator_missing(reader: et_pte.ProgramReader) -> None:
    program = et_pte.read_program(KEYWORD_SPOTTING.read_bytes(), reader)
    problems = et_checks.check_model(program, without("cortex_m::pad.out"))
    assert problems == [
        et_checks.Problem("forward", "cortex_m::pad.out", "OperatorMissing", 0x14, 6, None, 1)
    ]
    message = problems[0].message
    assert "cortex_m::pad.out is not registered in the library" in message
    assert "OperatorMissing (0x14)" in message and "Method::load" in message
    assert "--ops-from-pte" in message
    # What a user of the published library can do comes first, regenerating it after.
    user = message.index("Without regenerating the library")
    assert user < message.index("change the PyTorch construct") < message.index("--ops-from-pte")
    # cortex_m::pad.out is no portable operator the int8 passes replace: no int8 advice.
    assert "--quantize int8" not in message
    # Not --ops: it replaces the root ops, the other models' operators would go.
    assert "--ops " not in message and "--ops," not in message


def test_argument_count_mismatch_names_both_counts(reader: et_pte.ProgramReader) -> None:
    program = et_pte.read_program(KEYWORD_SPOTTING.read_bytes(), reader)
    kernels = dict(KERNELS_AT_CFF6F4DD, **{"cortex_m::quantized_conv2d.out": 16})
    problems = et_checks.check_model(program, kernels)
    assert problems == [
        et_checks.Problem(
            "forward", "cortex_m::quantized_conv2d.out", "InvalidProgram", 0x23, 15, 16, 4
        )
    ]
    message = problems[0].message
    assert "model supplies 15 arguments, library expects 16" in message
    assert "InvalidProgram (0x23)" in message and "Method::execute" in message
    assert "4 calls in forward" in message
    assert "different ExecuTorch commit" in message and "extras/PROVENANCE.txt" in message
    as_dict = problems[0].to_dict()
    assert (as_dict["model_args"], as_dict["library_args"], as_dict["code"]) == (15, 16, 0x23)


def test_every_problem_is_reported_in_call_order(reader: et_pte.ProgramReader) -> None:
    program = et_pte.read_program(KEYWORD_SPOTTING.read_bytes(), reader)
    kernels = without("cortex_m::quantized_linear.out")
    kernels["cortex_m::quantize_per_tensor.out"] = 7
    problems = et_checks.check_model(program, kernels)
    assert [(p.operator, p.error, p.model_args, p.library_args) for p in problems] == [
        ("cortex_m::quantize_per_tensor.out", "InvalidProgram", 8, 7),
        ("cortex_m::quantized_linear.out", "OperatorMissing", 13, None),
    ]


# --- check_library and check_models.py --------------------------------------------------


def test_check_library_passes_a_matching_library(tmp_path: Path) -> None:
    lib = make_library(tmp_path / "ExecuTorch", KERNELS_AT_CFF6F4DD)
    results = et_checks.check_library(lib)
    assert [r.name for r in results] == ["AddModel", "HelloExecuTorch", "KeywordSpotting"]
    assert all(r.passed for r in results)
    kws = results[2]
    assert kws.source == "examples/KeywordSpotting/model.h"
    assert kws.methods == ("forward",)
    assert kws.kernel_calls == 16
    assert kws.operators == tuple(
        sorted(KERNELS_AT_CFF6F4DD.keys() - {"aten::add.out", "cortex_m::quantized_max_pool2d.out"})
    )
    assert [r.name for r in et_checks.check_library(lib, ["KeywordSpotting"])] == [
        "KeywordSpotting"
    ]


def test_check_library_reports_unreadable_models(tmp_path: Path) -> None:
    lib = make_library(tmp_path / "lib", KERNELS_AT_CFF6F4DD)
    header = lib / "examples" / "AddModel" / "model.h"
    header.write_text(
        header.read_text().replace("0x45, 0x54, 0x31, 0x32", "0x45, 0x54, 0x31, 0x31")
    )
    (lib / "examples" / "HelloExecuTorch" / "model.h").unlink()
    results = {r.name: r for r in et_checks.check_library(lib)}
    assert "SHA-256 differs" in results["AddModel"].error
    assert "cannot read examples/HelloExecuTorch/model.h" in results["HelloExecuTorch"].error
    assert not results["AddModel"].passed and not results["HelloExecuTorch"].passed
    assert results["KeywordSpotting"].passed


def test_check_library_unknown_example(tmp_path: Path) -> None:
    lib = make_library(tmp_path / "lib", KERNELS_AT_CFF6F4DD)
    with pytest.raises(et_pte.EtPteError, match=r"no example Blink in .*its examples are AddModel"):
        et_checks.check_library(lib, ["Blink"])


def run_check_models(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(TOOLS / "check_models.py"), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def test_check_models_cli_passes(tmp_path: Path) -> None:
    lib = make_library(tmp_path / "lib", KERNELS_AT_CFF6F4DD)
    run = run_check_models(lib, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "ok   AddModel: 1 kernel calls (aten::add.out)"
    assert lines[2].startswith("ok   KeywordSpotting: 16 kernel calls (cortex_m::dequantize")
    assert lines[-1] == f"3 models match {lib}"


def test_check_models_cli_fails_on_a_mismatch(tmp_path: Path) -> None:
    kernels = dict(KERNELS_AT_CFF6F4DD, **{"cortex_m::quantized_depthwise_conv2d.out": 15})
    lib = make_library(tmp_path / "lib", kernels)
    run = run_check_models(lib, "--example", "KeywordSpotting,AddModel", cwd=tmp_path)
    assert run.returncode == 1
    lines = run.stdout.splitlines()
    assert lines[0].startswith("FAIL KeywordSpotting: 16 kernel calls")
    expected = "cortex_m::quantized_depthwise_conv2d.out: model supplies 16 arguments, library"
    assert lines[1].strip().startswith(f"{expected} expects 15")
    assert lines[2] == "ok   AddModel: 1 kernel calls (aten::add.out)"
    assert lines[-1] == f"1 of 2 models do not match {lib}"


def test_check_models_cli_json_and_repeated_list_option(tmp_path: Path) -> None:
    lib = make_library(tmp_path / "lib", without("dim_order_ops::_clone_dim_order.out"))
    run = run_check_models(
        lib, "--example", "HelloExecuTorch", "--example", "KeywordSpotting", "--json", cwd=tmp_path
    )
    assert run.returncode == 1
    doc = json.loads(run.stdout)
    assert doc["passed"] is False
    assert [m["name"] for m in doc["models"]] == ["HelloExecuTorch", "KeywordSpotting"]
    assert doc["models"][0]["passed"] is True
    (problem,) = doc["models"][1]["problems"]
    assert problem["operator"] == "dim_order_ops::_clone_dim_order.out"
    assert (problem["error"], problem["code"], problem["calls"]) == ("OperatorMissing", 0x14, 2)


def test_check_models_cli_with_pte_files(tmp_path: Path) -> None:
    lib = make_library(tmp_path / "lib", {"aten::add.out": 5})
    run = run_check_models(lib, "--pte", f"{ADD_MODEL},{KEYWORD_SPOTTING}", cwd=tmp_path)
    assert run.returncode == 1
    assert run.stdout.startswith("ok   AddModel.pte: 1 kernel calls")
    assert "FAIL KeywordSpotting.pte" in run.stdout
    assert run.stdout.count("is not registered in the library") == 8


def test_check_models_cli_accepts_prim_ops_and_refuses_delegates(tmp_path: Path) -> None:
    kernels = dict(DYNAMIC_ADD_KERNELS)
    lib = make_library(tmp_path / "lib", kernels, prim_ops=True)
    run = run_check_models(lib, "--pte", f"{DYNAMIC_ADD},{XNNPACK_ADD}", cwd=tmp_path)
    assert run.returncode == 1
    lines = run.stdout.splitlines()
    assert lines[0].startswith("ok   DynamicAdd.pte: 7 kernel calls (aten::add.out, aten::cat")
    assert "executorch_prim::mul.Scalar" in lines[0]
    assert lines[1] == (
        "FAIL XnnpackAdd.pte: 1 kernel calls (dim_order_ops::_to_dim_order_copy.out); "
        "delegates to XnnpackBackend"
    )
    assert lines[2].strip().startswith("delegates to backend XnnpackBackend, which the library")
    assert lines[-1] == f"1 of 2 models do not match {lib}"
    run = run_check_models(lib, "--pte", XNNPACK_ADD, "--json", cwd=tmp_path)
    (problem,) = json.loads(run.stdout)["models"][0]["problems"]
    assert (problem["backend"], problem["error"], problem["registered"]) == (
        "XnnpackBackend",
        "NotFound",
        [],
    )


def test_check_models_cli_unreadable_library_exits_2(tmp_path: Path) -> None:
    run = run_check_models(tmp_path / "nothing", cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.startswith("error: no program reader in ")
    assert "extras/tools/pte_schema" in run.stderr


# --- generator/pipeline/models.py ----------------------------------------------------------------


def test_generator_check_library_models_report(tmp_path: Path) -> None:
    kernels = dict(KERNELS_AT_CFF6F4DD, **{"cortex_m::pad.out": 7})
    lib = make_library(tmp_path / "lib", kernels)
    report = models.check_library_models(lib)
    assert report.passed is False
    assert report.kernels == len(KERNELS_AT_CFF6F4DD)
    assert [(r.name, r.passed) for r in report.results] == [
        ("AddModel", True),
        ("HelloExecuTorch", True),
        ("KeywordSpotting", False),
    ]
    md = report.to_markdown()
    assert "| AddModel | ok | 1 | `aten::add.out` |" in md
    assert "| KeywordSpotting | FAIL | 16 |" in md
    assert (
        "- **KeywordSpotting**: cortex_m::pad.out: model supplies 6 arguments, library expects 7"
        in md
    )
    doc = report.to_dict()
    assert doc["passed"] is False and len(doc["models"]) == 3
    assert models.check_library_models(lib, ["AddModel"]).passed is True


def test_generator_check_library_models_with_prim_ops_and_delegates(tmp_path: Path) -> None:
    kernels = dict(DYNAMIC_ADD_KERNELS)
    lib = make_library(
        tmp_path / "lib",
        kernels,
        prim_ops=True,
        models={"AddModel": DYNAMIC_ADD, "HelloExecuTorch": XNNPACK_ADD},
    )
    report = models.check_library_models(lib)
    assert report.kernels == len(kernels) + len(FIXTURE_PRIM_OPS)
    assert report.backends == () and report.to_dict()["backends"] == []
    assert [(r.name, r.passed) for r in report.results] == [
        ("AddModel", True),
        ("HelloExecuTorch", False),
    ]
    md = report.to_markdown()
    assert "delegates to `XnnpackBackend`" in md
    assert "- **HelloExecuTorch**: delegates to backend XnnpackBackend" in md
    # .pte files (the build's --ops-from-pte models) are checked after the examples.
    both = models.check_library_models(lib, ["AddModel"], ptes=[XNNPACK_ADD])
    assert [(r.name, r.passed) for r in both.results] == [
        ("AddModel", True),
        ("XnnpackAdd.pte", False),
    ]


def test_generator_check_library_models_fatal_errors(tmp_path: Path) -> None:
    with pytest.raises(FatalError, match="cannot check the models of"):
        models.check_library_models(tmp_path)
    lib = make_library(tmp_path / "lib", KERNELS_AT_CFF6F4DD)
    with pytest.raises(FatalError, match="no example Nope"):
        models.check_library_models(lib, ["Nope"])


def test_generator_ops_in_pte(reader_dir: Path) -> None:
    assert models.ops_in_pte(ADD_MODEL, reader_dir) == {"aten::add.out"}
    assert models.ops_in_pte(KEYWORD_SPOTTING, reader_dir) == KERNELS_AT_CFF6F4DD.keys() - {
        "aten::add.out",
        "cortex_m::quantized_max_pool2d.out",
    }


def test_generator_ops_in_pte_rejects_bad_input(reader_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(FatalError, match=r"cannot read \.pte .*missing\.pte"):
        models.ops_in_pte(tmp_path / "missing.pte", reader_dir)
    junk = tmp_path / "junk.pte"
    junk.write_bytes(b"\x10\0\0\0PK\x03\x04" + bytes(64))
    with pytest.raises(
        FatalError, match=r"junk\.pte is not a readable ExecuTorch program: offset 4"
    ):
        models.ops_in_pte(junk, reader_dir)
    with pytest.raises(FatalError, match="cannot read the ExecuTorch schema: no program reader"):
        models.ops_in_pte(ADD_MODEL, tmp_path)


def test_generator_imports_et_pte_by_path() -> None:
    # The shipped module, imported from extras/tools without a sys.path entry for it.
    module = models.import_tool(TOOLS / "et_pte.py")
    assert module.__file__ is not None and Path(module.__file__) == TOOLS / "et_pte.py"
    assert models.import_tool(TOOLS / "et_pte.py") is module is sys.modules["et_pte"]


def test_the_generator_imports_each_tool_once_without_a_sys_path_entry() -> None:
    # et_pte.py's split: each module imports the ones it builds on; through import_tool (in
    # models.py's order) they find each other in sys.modules, and none adds extras/tools.
    code = (
        "import sys\n"
        "from generator.pipeline import models\n"
        "tools = [m for m in sorted(sys.modules) if m.startswith('et_')]\n"
        "print(tools, [p for p in sys.path if p.endswith('tools')])\n"
        "print(models.et_checks.et_pte is models.et_pte is models.et_registration.et_pte,\n"
        "      models.et_dtypes.et_checks is models.et_checks,\n"
        "      models.et_arena.et_pte is models.et_pte)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "['et_arena', 'et_checks', 'et_dtypes', 'et_model_h', 'et_pte', 'et_registration'] []",
        "True True True",
    ]


def test_generator_write_model_header(tmp_path: Path) -> None:
    out = tmp_path / "examples" / "AddModel" / "model.h"
    assert models.write_model_header(ADD_MODEL, out) == 1156
    assert out.read_text() == et_model_h.model_h(ADD_MODEL.read_bytes(), source="AddModel.pte")
    assert [p.name for p in out.parent.iterdir()] == ["model.h"]  # no temp file left
    with pytest.raises(FatalError, match="not a C identifier"):
        models.write_model_header(ADD_MODEL, tmp_path / "x.h", name="model-pte")
    assert not (tmp_path / "x.h").exists()
