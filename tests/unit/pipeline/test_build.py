"""The build pipeline on small ExecuTorch-shaped repositories served under the upstream URLs."""

from __future__ import annotations

import filecmp
import re
import subprocess
import sys
from pathlib import Path

import pytest
from et_fixture import (
    DYNAMIC_ADD,
    ET_VIEW_CPP,
    FIXTURE_CORTEX_M_OPS,
    FIXTURE_OP_SOURCES,
    FIXTURE_PORTABLE_OPS,
    FIXTURE_PRIM_OPS,
    FIXTURE_PTE,
    FIXTURE_SHARED_OPS,
    PRIM_OPS_CPP,
    XNNPACK_ADD,
    Upstream,
    commit_all,
    git,
    make_flatc,
    wheel_flatc,
    wheel_schema_dir,
    write_tree,
)

import generator.pipeline.flatc
from generator.cli.main import main
from generator.pipeline.default_ops import DEFAULT_ROOT_OPS
from generator.pipeline.opset import (
    CORTEX_M_YAML,
    PORTABLE_YAML,
    PRIM_OPS_SOURCE,
    select_op_set,
)
from generator.pipeline.run import BuildOptions, BuildResult, build_library
from generator.util.errors import FatalError

REPO_ROOT = Path(__file__).resolve().parents[3]


def build(tmp_path: Path, out: str = "out/ExecuTorch", **kw: object) -> BuildResult:
    options = BuildOptions(cache_dir=tmp_path / "cache", **kw)  # type: ignore[arg-type]
    return build_library(options, tmp_path / out)


def files_under(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_default_build_layout(tmp_path: Path, upstream: Upstream) -> None:
    result = build(tmp_path)
    lib = tmp_path / "out" / "ExecuTorch"
    assert result.sha == upstream.shas["executorch"]
    assert (lib / "executorch_pin.txt").read_text() == upstream.shas["executorch"] + "\n"
    # Exactly one platform layer, ours.
    platform = lib / "src/executorch/runtime/platform/default"
    assert [p.name for p in platform.iterdir()] == ["arduino_pal.cpp"]
    assert (platform / "arduino_pal.cpp").read_bytes() == (
        REPO_ROOT / "data/library_template/src/executorch/runtime/platform/default/arduino_pal.cpp"
    ).read_bytes()
    # Our own C sources (the compiler-runtime helpers) ship as they are.
    for name in ("executorch_aeabi.c",):
        ours = REPO_ROOT / "data/library_template/src" / name
        assert (lib / "src" / name).read_bytes() == ours.read_bytes()
    # Kernels registered are exactly the op set: every Cortex-M op + the default root ops.
    expected_ops = sorted(set(DEFAULT_ROOT_OPS) | FIXTURE_CORTEX_M_OPS)
    codegen = lib / "src/executorch/codegen"
    registration = (codegen / "RegisterKernelsByOperator.cpp").read_text()
    assert sorted(re.findall(r'Kernel\(\s*"([^"]+)"', registration)) == expected_ops
    assert result.op_set == expected_ops and result.kernel_count == len(expected_ops)
    # The checkout's codegen ran (not an installed wheel's), and only device files were kept;
    # its registration is split into one table and register function per operator.
    assert "// codegen: fixture checkout codegen" in registration
    symbols = sorted(op.replace("::", "_").replace(".", "_") for op in expected_ops)
    prim_ops = (lib / "src/executorch/kernels/prim_ops/register_prim_ops.cpp").read_text()
    for op in FIXTURE_PRIM_OPS:  # each prim op's register function registers the table
        symbol = op.replace("::", "_").replace(".", "_")
        assert f'extern "C" void et_arduino_register_{symbol}(void) {{' in prim_ops
    assert sorted(p.name for p in codegen.iterdir()) == sorted(
        [
            "NativeFunctions.h",
            "KernelSelection.cpp",
            "KernelSelectionAll.cpp",
            "RegisterKernelsByOperator.cpp",
        ]
    )
    for symbol in symbols:
        assert f"static const Kernel kernels_{symbol}[] = {{" in registration
        assert f'extern "C" void et_arduino_register_{symbol}(void) {{' in registration
    add = registration[registration.index("static const Kernel kernels_aten_add_out[]") :]
    assert re.findall(r'Kernel\(\s*"([^"]+)"', add[: add.index("};")]) == ["aten::add.out"]
    assert "success_with_kernel_reg" not in registration  # nothing registers at start-up
    # Only registered op sources ship; op_acos.cpp (not selected) and what only it needs do not.
    ops_dir = lib / "src/executorch/kernels/portable/cpu"
    shipped = sorted(p.name for p in ops_dir.glob("op_*.cpp"))
    # One op source a root op, but mul.Scalar_out's kernel is op_mul.cpp's, as upstream.
    assert FIXTURE_SHARED_OPS == ("aten::mul.Scalar_out",)
    own_sources = len(DEFAULT_ROOT_OPS) - len(FIXTURE_SHARED_OPS)
    assert "op_acos.cpp" not in shipped and len(shipped) == own_sources
    assert result.op_sources == own_sources and result.op_sources_available == FIXTURE_OP_SOURCES
    assert (ops_dir / "util/broadcast_util.cpp").is_file()  # same stem as a used header
    assert (ops_dir / "util/dtype_util.h").is_file()  # quoted include of a used header
    assert (ops_dir / "pattern/unary_ufunc_relu.cpp").is_file()  # implements pattern.h
    assert not (ops_dir / "util/unused_util.cpp").exists()
    assert not (ops_dir / "util/unused_util.h").exists()
    # ExecuTorch's prim ops ship whole, outside the op set (never their tests).
    prim = lib / "src/executorch/kernels/prim_ops"
    assert sorted(p.name for p in prim.iterdir()) == [
        "et_view.cpp",
        "et_view.h",
        "register_prim_ops.cpp",
    ]
    cortex = lib / "src/executorch/backends/cortex_m/ops"
    assert sorted(p.name for p in cortex.iterdir()) == [
        "cortex_m_ops_common.h",
        "op_quantize_per_tensor.cpp",
        "op_quantized_add.cpp",
    ]
    # Patches: no ATen-mode sources (but *_exec_aten.cpp stays), no tests, <exception> first.
    everything = files_under(lib)
    assert not [
        f for f in everything if f.endswith("_aten.cpp") and not f.endswith("_exec_aten.cpp")
    ]
    assert "src/executorch/runtime/executor/tensor_parser_exec_aten.cpp" in everything
    assert not [f for f in everything if "/test/" in f or "testing_util" in f]
    assert (lib / "src/executorch/runtime/core/error.h").read_text() == (
        "#pragma once\n#include <exception>\n#include <variant>\n"
    )
    # Vendored third-party code, minus what does not belong on a device.
    assert (lib / "src/cmsis-nn/Source/ConvolutionFunctions/arm_convolve_s8.c").is_file()
    assert not [
        f for f in everything if "Bindings" in f or f.endswith(("_f32.c", "CMakeLists.txt"))
    ]
    assert (lib / "src/flatcc/runtime/builder.c").is_file()
    assert not (lib / "src/flatcc/compiler").exists()
    assert (lib / "src/torch/headeronly/macros/cmake_macros.h").is_file()
    assert (
        (lib / "src/executorch/schema/program_generated.h")
        .read_text()
        .startswith("// generated by flatc 24.3.25")
    )
    # No models or checkpoints in the library; each example has its model.h.
    assert not [f for f in everything if f.endswith((".pte", ".pth"))]
    for name in ("HelloExecuTorch", "AddModel", "KeywordSpotting"):
        assert f"examples/{name}/{name}.ino" in everything
        assert "alignas(16)" in (lib / f"examples/{name}/model.h").read_text()
    assert (lib / "examples/KeywordSpotting/mfcc_yes.h").is_file()
    # Our sketches, not upstream's.
    assert (lib / "examples/AddModel/AddModel.ino").read_text() != "// upstream sketch\n"


def test_licenses_and_metadata(tmp_path: Path, upstream: Upstream) -> None:
    build(tmp_path)
    lib = tmp_path / "out" / "ExecuTorch"
    assert (lib / "LICENSE").read_text() == "BSD License\n\nFixture ExecuTorch license text.\n"
    licenses = lib / "extras/THIRD_PARTY_LICENSES"
    assert (licenses / "FlatBuffers-LICENSE.txt").read_text().endswith("(FlatBuffers fixture)\n")
    assert (licenses / "flatcc-LICENSE.txt").is_file()
    assert (licenses / "CMSIS-NN-LICENSE.txt").is_file()
    readme = (licenses / "README.md").read_text()
    assert f"| CMSIS-NN (Arm Limited) | `{upstream.shas['cmsis'][:12]}` |" in readme
    props = dict(
        line.split("=", 1) for line in (lib / "library.properties").read_text().splitlines()
    )
    assert props["name"] == "ExecuTorch" and props["version"] == "1.5.0"
    assert props["architectures"] == "zephyr" and props["includes"] == "ExecuTorch.h"
    assert props["depends"] == "Arduino_RouterBridge" and props["category"] == "Data Processing"
    assert props["url"].startswith("https://github.com/")
    provenance = (lib / "extras/PROVENANCE.txt").read_text()
    for fact in (
        f"commit:           {upstream.shas['executorch']}",
        "upstream version: 1.5.0",
        "library version:  1.5.0",
        f"@ {upstream.shas['flatbuffers']}",
        f"@ {upstream.shas['flatcc']}",
        f"@ {upstream.shas['cmsis']}",
        f"kernels registered: {len(DEFAULT_ROOT_OPS) + len(FIXTURE_CORTEX_M_OPS)}",
        "prim ops:         3, from src/executorch/kernels/prim_ops/register_prim_ops.cpp",
        "kernel selection: each operator has its own kernel table and register function",
        "flatc 24.3.25",
        "src/ content hash: sha256:",
        f"python -m generator build --executorch-ref {upstream.shas['executorch']}",
    ):
        assert fact in provenance, fact


def test_build_is_deterministic(tmp_path: Path, upstream: Upstream) -> None:
    build(tmp_path, "a/ExecuTorch")
    build(tmp_path, "b/ExecuTorch")
    a, b = tmp_path / "a/ExecuTorch", tmp_path / "b/ExecuTorch"
    assert files_under(a) == files_under(b)
    _, mismatch, errors = filecmp.cmpfiles(a, b, files_under(a), shallow=False)
    assert mismatch == [] and errors == []


def test_refs_tags_and_short_shas_resolve(tmp_path: Path, upstream: Upstream) -> None:
    sha = upstream.shas["executorch"]
    assert build(tmp_path, executorch_ref="v1.5.0").sha == sha
    assert build(tmp_path, executorch_ref=sha[:10]).sha == sha
    assert build(tmp_path, executorch_ref=sha).sha == sha


def test_a_ref_given_as_a_sha_names_the_commit_once(tmp_path: Path, upstream: Upstream) -> None:
    sha = upstream.shas["executorch"]
    build(tmp_path, "branch/ExecuTorch")
    build(tmp_path, "sha/ExecuTorch", executorch_ref=sha[:10])
    short = sha[:12]
    branch, by_sha = tmp_path / "branch/ExecuTorch", tmp_path / "sha/ExecuTorch"
    assert f"at commit `{short}` of `main` (between releases" in (branch / "README.md").read_text()
    assert f"at commit {short} of main (between" in (branch / "library.properties").read_text()
    readme = (by_sha / "README.md").read_text()
    assert f"at commit `{short}` (between releases" in readme
    assert f"generated from ExecuTorch commit `{sha}`" in readme
    assert sha[:10] not in readme.replace(sha, "").replace(short, "")
    properties = (by_sha / "library.properties").read_text()
    assert f"at commit {short} (between" in properties and " of " + sha[:10] not in properties


def test_cached_sha_builds_without_the_remote(
    tmp_path: Path, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    sha = upstream.shas["executorch"]
    build(tmp_path, executorch_ref=sha)
    # Every commit is in the cache now: the remotes may go away.
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-such-config"))
    for repo in (upstream.executorch, upstream.flatbuffers, upstream.flatcc, upstream.cmsis):
        repo.rename(repo.with_name(repo.name + ".gone"))
    assert build(tmp_path, "again/ExecuTorch", executorch_ref=sha).sha == sha


def test_moving_branch_is_refetched(tmp_path: Path, upstream: Upstream) -> None:
    build(tmp_path)
    new = upstream.commit_executorch({"version.txt": "1.6.0a0\n"}, "bump")
    result = build(tmp_path)
    assert result.sha == new and result.library_version == "1.6.0-alpha.0"


def test_unknown_ref(tmp_path: Path, upstream: Upstream) -> None:
    with pytest.raises(FatalError, match="no branch, tag or commit named 'nope'"):
        build(tmp_path, executorch_ref="nope")


def test_ref_without_cortex_m(tmp_path: Path, upstream: Upstream) -> None:
    upstream.commit_executorch({}, "drop the backend", remove=("backends/cortex_m",))
    with pytest.raises(FatalError, match="no backends/cortex_m"):
        build(tmp_path)


def test_ref_without_examples(tmp_path: Path, upstream: Upstream) -> None:
    upstream.commit_executorch({}, "drop examples", remove=("examples/arduino",))
    with pytest.raises(
        FatalError,
        match=r"no model \(.pte\) for example\(s\) HelloExecuTorch, "
        r"AddModel, KeywordSpotting",
    ):
        build(tmp_path)


def test_ref_with_sketches_but_no_models(tmp_path: Path, upstream: Upstream) -> None:
    # Like ExecuTorch v1.4.1: sketches and MFCC inputs, no .pte.
    upstream.commit_executorch(
        {},
        "no models",
        remove=tuple(
            f"examples/arduino/examples/{n}/model.pte"
            for n in ("HelloExecuTorch", "AddModel", "KeywordSpotting")
        ),
    )
    with pytest.raises(FatalError) as info:
        build(tmp_path)
    message = str(info.value)
    assert "HelloExecuTorch, AddModel, KeywordSpotting" in message
    assert "--example-pte NAME=FILE" in message
    pte = FIXTURE_PTE / "AddModel.pte"
    result = build(
        tmp_path,
        examples=("HelloExecuTorch", "AddModel"),
        example_pte=(("AddModel", pte), ("HelloExecuTorch", pte)),
    )
    lib = result.out
    assert sorted(p.name for p in (lib / "examples").iterdir()) == ["AddModel", "HelloExecuTorch"]
    provenance = (lib / "extras/PROVENANCE.txt").read_text()
    assert "AddModel/model.h from --example-pte AddModel.pte" in provenance
    assert "--examples HelloExecuTorch,AddModel" in provenance


def test_missing_submodule_commit(tmp_path: Path, upstream: Upstream) -> None:
    bogus = "1234567890abcdef1234567890abcdef12345678"
    git(
        upstream.executorch,
        "update-index",
        "--cacheinfo",
        f"160000,{bogus},third-party/flatbuffers",
    )
    git(upstream.executorch, "commit", "-q", "-m", "pin a commit flatbuffers does not have")
    with pytest.raises(
        FatalError, match=f"pins FlatBuffers at {bogus}, which cannot be checked out"
    ):
        build(tmp_path)


def test_missing_license(tmp_path: Path, upstream: Upstream) -> None:
    (upstream.cmsis / "LICENSE").unlink()
    git(upstream.cmsis, "commit", "-qam", "no license")
    cmsis = git(upstream.cmsis, "rev-parse", "HEAD")
    upstream.commit_executorch(
        {"backends/cortex_m/CMakeLists.txt": f'set(CMSIS_NN_VERSION "{cmsis}")\n'}, "pin"
    )
    with pytest.raises(FatalError, match="CMSIS-NN .* has no LICENSE; it cannot be redistributed"):
        build(tmp_path)


def test_unknown_op_lists_close_matches(tmp_path: Path, upstream: Upstream) -> None:
    with pytest.raises(FatalError, match=r"aten::ad\.out \(did you mean aten::add\.out"):
        build(tmp_path, ops=("aten::ad.out",))


def test_ops_replace_the_root_ops(tmp_path: Path, upstream: Upstream) -> None:
    result = build(tmp_path, ops=("aten::acos.out", "aten::add.out"))
    assert result.op_set == sorted({"aten::acos.out", "aten::add.out"} | FIXTURE_CORTEX_M_OPS)
    ops_dir = result.out / "src/executorch/kernels/portable/cpu"
    assert sorted(p.name for p in ops_dir.glob("op_*.cpp")) == ["op_acos.cpp", "op_add.cpp"]
    assert (ops_dir / "util/unused_util.cpp").is_file()  # what acos needs comes along


def test_examples_that_cannot_run_on_the_op_set_are_refused(
    tmp_path: Path, upstream: Upstream
) -> None:
    with pytest.raises(FatalError) as info:
        build(tmp_path, ops=("aten::mul.out",))
    message = str(info.value)
    assert "AddModel: " in message and "aten::add.out" in message
    assert "OperatorMissing" in message and "--examples" in message
    assert not (tmp_path / "out" / "ExecuTorch").exists()


def test_empty_ops_is_refused(tmp_path: Path, upstream: Upstream) -> None:
    with pytest.raises(FatalError, match="--ops names no operator"):
        build(tmp_path, ops=())


def test_example_pte_that_is_not_a_model_is_refused(tmp_path: Path, upstream: Upstream) -> None:
    (tmp_path / "notpte.txt").write_text("hello\n")
    with pytest.raises(FatalError, match="AddModel: "):
        build(tmp_path, example_pte=(("AddModel", tmp_path / "notpte.txt"),))


def test_all_ops(tmp_path: Path, upstream: Upstream) -> None:
    result = build(tmp_path, all_ops=True)
    assert len(result.op_set) == FIXTURE_PORTABLE_OPS + 2 and result.kernel_count == len(
        result.op_set
    )


@pytest.mark.skipif(
    wheel_schema_dir() is None,
    reason="needs the executorch wheel's program.fbs "
    "(pip install --no-deps executorch==1.5.1; `make test` does)",
)
def test_ops_from_pte_is_exactly_what_the_model_calls(tmp_path: Path, upstream: Upstream) -> None:
    result = build(tmp_path, ops_from_pte=(FIXTURE_PTE / "AddModel.pte",))
    assert result.op_set == ["aten::add.out"]
    assert sorted(
        p.name for p in (result.out / "src/executorch/kernels/portable/cpu").glob("op_*.cpp")
    ) == ["op_add.cpp"]
    assert not (result.out / "src/executorch/backends/cortex_m/ops/op_quantized_add.cpp").exists()


@pytest.mark.skipif(wheel_schema_dir() is None, reason="needs the executorch wheel's program.fbs")
def test_ops_from_pte_leaves_prim_ops_to_the_prim_ops_registration(
    tmp_path: Path, upstream: Upstream
) -> None:
    # DynamicAdd calls three prim ops: not in the codegen's selection, registered anyway.
    result = build(tmp_path, ops_from_pte=(DYNAMIC_ADD,), example_pte=(("AddModel", DYNAMIC_ADD),))
    assert result.op_set == [
        "aten::add.out",
        "aten::cat.out",
        "aten::slice_copy.Tensor_out",
        "dim_order_ops::_to_dim_order_copy.out",
    ]
    assert (result.out / "src/executorch/kernels/prim_ops/register_prim_ops.cpp").is_file()
    assert "ops-from-pte DynamicAdd.pte" in (result.out / "extras/PROVENANCE.txt").read_text()


@pytest.mark.skipif(wheel_schema_dir() is None, reason="needs the executorch wheel's program.fbs")
@pytest.mark.parametrize("option", ["example_pte", "ops_from_pte"])
def test_a_delegated_model_is_refused_at_build_time(
    tmp_path: Path, upstream: Upstream, option: str
) -> None:
    # The --ops-from-pte models are checked against the library as the examples are.
    with pytest.raises(FatalError) as info:
        if option == "example_pte":
            build(tmp_path, example_pte=(("AddModel", XNNPACK_ADD),))
        else:
            build(tmp_path, ops_from_pte=(XNNPACK_ADD,))
    message = str(info.value)
    assert "delegates to backend XnnpackBackend" in message
    assert "it registers no backend" in message and "NotFound (0x20)" in message
    assert not (tmp_path / "out" / "ExecuTorch").exists()


def op_tree(root: Path, prim_ops: str = PRIM_OPS_CPP) -> Path:
    """The files select_op_set reads: the two kernel yamls and the prim ops registration."""
    write_tree(
        root,
        {
            PORTABLE_YAML: "- op: add.out\n  kernels:\n    - kernel_name: add_out\n",
            CORTEX_M_YAML: "[]\n",
            PRIM_OPS_SOURCE: prim_ops,
            "kernels/prim_ops/et_view.cpp": ET_VIEW_CPP,
        },
    )
    return root


def test_ops_from_pte_of_prim_ops_only_is_explained(tmp_path: Path) -> None:
    with pytest.raises(FatalError, match=r"only ExecuTorch prim ops .* without --ops-from-pte"):
        select_op_set(op_tree(tmp_path), pte_ops=sorted(FIXTURE_PRIM_OPS))
    with pytest.raises(FatalError, match=r"call no operator; .*delegate"):
        select_op_set(op_tree(tmp_path), pte_ops=[])


def test_a_prim_op_the_ref_does_not_register_is_unknown(tmp_path: Path) -> None:
    with pytest.raises(FatalError) as info:
        select_op_set(op_tree(tmp_path), pte_ops=["aten::add.out", "executorch_prim::pow.Scalar"])
    message = str(info.value)
    assert "executorch_prim::pow.Scalar" in message and PRIM_OPS_SOURCE in message


def test_prim_ops_in_ops_are_refused(tmp_path: Path) -> None:
    with pytest.raises(
        FatalError, match=r"aten::sym_size\.int: ExecuTorch prim ops.*leave them out"
    ):
        select_op_set(op_tree(tmp_path), ops=["aten::add.out", "aten::sym_size.int"])


def test_mismatched_flatc_is_refused(
    tmp_path: Path, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLATC", str(make_flatc(tmp_path / "old" / "flatc", "23.5.26")))
    with pytest.raises(FatalError, match="is flatc 23.5.26, but the pinned FlatBuffers is 24.3.25"):
        build(tmp_path)


def test_malformed_library_version(tmp_path: Path, upstream: Upstream) -> None:
    with pytest.raises(FatalError, match="X.Y.Z"):
        build(tmp_path, library_version="v1.0")
    with pytest.raises(FatalError, match="X.Y.Z"):
        build(tmp_path, library_version="1.2.3\n")
    assert not (tmp_path / "cache").exists()  # refused before any work


def test_failed_build_leaves_previous_output_untouched(tmp_path: Path, upstream: Upstream) -> None:
    build(tmp_path, library_version="0.2.0")
    lib = tmp_path / "out" / "ExecuTorch"
    before = {f: (lib / f).read_bytes() for f in files_under(lib)}
    with pytest.raises(FatalError):
        build(tmp_path, ops=("aten::nope.out",))
    assert {f: (lib / f).read_bytes() for f in files_under(lib)} == before
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["ExecuTorch"]  # no leftovers


def test_unwritable_out(tmp_path: Path, upstream: Upstream) -> None:
    (tmp_path / "afile").write_text("not a folder")
    with pytest.raises(FatalError, match="cannot write next to --out"):
        build(tmp_path, "afile/ExecuTorch")
    with pytest.raises(FatalError, match="is a file"):
        build(tmp_path, "afile")
    assert (tmp_path / "afile").read_text() == "not a folder"


def test_out_with_other_content_is_not_replaced(tmp_path: Path, upstream: Upstream) -> None:
    (tmp_path / "libraries" / "Servo").mkdir(parents=True)
    with pytest.raises(FatalError, match="folder with other content"):
        build(tmp_path, "libraries")
    assert (tmp_path / "libraries" / "Servo").is_dir()
    with pytest.raises(FatalError, match="overlap"):
        build(tmp_path, "cache/ExecuTorch")
    with pytest.raises(FatalError, match="file system root"):
        build(tmp_path, "/")


def test_stale_staging_of_a_killed_run_is_removed(tmp_path: Path, upstream: Upstream) -> None:
    stale = tmp_path / "out" / ".ExecuTorch.staging-999999999-abc"
    stale.mkdir(parents=True)
    build(tmp_path)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["ExecuTorch"]


def test_damaged_cached_clone_is_recloned(tmp_path: Path, upstream: Upstream) -> None:
    build(tmp_path)
    for head in (tmp_path / "cache" / "repos").glob("*/.git/HEAD"):
        head.unlink()
    assert build(tmp_path, "again/ExecuTorch").sha == upstream.shas["executorch"]


def test_relative_cache_dir(
    tmp_path: Path, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    result = build_library(BuildOptions(cache_dir=Path("../rel-cache")), Path("lib/ExecuTorch"))
    assert result.out == tmp_path / "cwd" / "lib" / "ExecuTorch"
    assert (tmp_path / "rel-cache" / "repos").is_dir()


def test_cli_build_and_error_exit(
    tmp_path: Path, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cli" / "ExecuTorch"
    assert (
        main(
            [
                "build",
                "--out",
                str(out),
                "--cache-dir",
                str(tmp_path / "cache"),
                "--ops",
                "aten::add.out,aten::mul.out",
                "--ops",
                "aten::relu.out",
            ]
        )
        == 0
    )
    assert "aten::relu.out" in (out / "extras/PROVENANCE.txt").read_text()
    with pytest.raises(SystemExit) as info:
        main(
            [
                "build",
                "--out",
                str(out),
                "--executorch-ref",
                "nope",
                "--cache-dir",
                str(tmp_path / "cache"),
            ]
        )
    assert info.value.code == 1
    assert "error: " in capsys.readouterr().err


def test_python_dash_m_entry_point(tmp_path: Path, upstream: Upstream) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "generator", "build", "--library-version", "1.2"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert "--library-version '1.2' is not a version" in proc.stderr


FAKE_FLATC_CMAKE = """\
cmake_minimum_required(VERSION 3.10)
project(FlatBuffersFixture C)
option(FLATBUFFERS_BUILD_FLATC "" ON)
add_executable(flatc src/flatc.c)
"""

FAKE_FLATC_C = r"""
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char** argv) {
  const char* out = ".";
  /* Python (the program reader) is left to the executorch wheel's real flatc. */
  if (argc > 1 && strcmp(argv[1], "--python") == 0) { execv("@REAL_FLATC@", argv); return 1; }
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--version") == 0) { puts("flatc version 24.3.25"); return 0; }
    if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) { out = argv[++i]; continue; }
    size_t n = strlen(argv[i]);
    if (n > 4 && strcmp(argv[i] + n - 4, ".fbs") == 0) {
      const char* base = strrchr(argv[i], '/');
      base = base ? base + 1 : argv[i];
      char path[4096];
      snprintf(path, sizeof path, "%s/%.*s_generated.h", out, (int)(strlen(base) - 4), base);
      FILE* f = fopen(path, "w");
      if (!f) return 1;
      fputs("// built flatc 24.3.25\n#pragma once\n", f);
      fclose(f);
    }
  }
  return 0;
}
"""


def test_flatc_is_built_from_the_pinned_sources_when_none_matches(
    tmp_path: Path, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A FlatBuffers tree whose CMake project builds a (tiny) flatc of the pinned version.
    write_tree(
        upstream.flatbuffers,
        {
            "CMakeLists.txt": FAKE_FLATC_CMAKE,
            "src/flatc.c": FAKE_FLATC_C.replace("@REAL_FLATC@", str(wheel_flatc())),
        },
    )
    fb = commit_all(upstream.flatbuffers, "a flatc that builds")
    git(upstream.executorch, "update-index", "--cacheinfo", f"160000,{fb},third-party/flatbuffers")
    git(upstream.executorch, "commit", "-q", "-m", "pin it")
    monkeypatch.delenv("FLATC")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no flatc on PATH
    monkeypatch.setattr(generator.pipeline.flatc, "_wheel_flatc", lambda: None)  # nor the wheel's
    result = build(tmp_path)
    built = tmp_path / "cache" / "flatc" / "24.3.25" / "flatc"
    assert built.is_file()
    header = result.out / "src/executorch/schema/program_generated.h"
    assert header.read_text().startswith("// built flatc 24.3.25")
    stamp = built.stat().st_mtime_ns
    build(tmp_path, "again/ExecuTorch")  # the cached flatc is reused, not rebuilt
    assert built.stat().st_mtime_ns == stamp


def test_patch_that_no_longer_applies_names_it(tmp_path: Path, upstream: Upstream) -> None:
    upstream.commit_executorch({"runtime/core/error.h": "#pragma once\n"}, "no <variant> any more")
    with pytest.raises(FatalError, match="exception-before-variant no longer applies"):
        build(tmp_path)


def test_platform_patch_needs_upstream_layers(tmp_path: Path, upstream: Upstream) -> None:
    upstream.commit_executorch({}, "platform layers moved", remove=("runtime/platform/default",))
    with pytest.raises(FatalError, match="platform-layer no longer applies"):
        build(tmp_path)


def test_codegen_runs_from_the_checkout_with_safe_path(
    tmp_path: Path, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # PYTHONSAFEPATH keeps the working directory off sys.path; the checkout must still be used.
    monkeypatch.setenv("PYTHONSAFEPATH", "1")
    result = build(tmp_path)
    registration = result.out / "src/executorch/codegen/RegisterKernelsByOperator.cpp"
    assert "// codegen: fixture checkout codegen" in registration.read_text()
