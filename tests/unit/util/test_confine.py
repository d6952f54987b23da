"""An upstream tree is untrusted input (issue 29): symbolic links out of the checkout, special
files and includes that climb out are refused, and nothing is written outside the library."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from et_fixture import Upstream, git

from generator.pipeline.components import CopyRule
from generator.pipeline.flatc import confined_includes, run_flatc
from generator.pipeline.opset import read_op_yaml
from generator.pipeline.run import BuildOptions, BuildResult, build_library
from generator.pipeline.vendor import apply_rule, follow_includes
from generator.util.cache import StepCache
from generator.util.confine import confined_file
from generator.util.errors import FatalError

SECRET = "GITHUB_TOKEN=ghp_secret_of_the_test_runner\n"


def build(tmp_path: Path) -> BuildResult:
    return build_library(
        BuildOptions(cache_dir=tmp_path / "cache"), tmp_path / "out" / "ExecuTorch"
    )


def secret_file(tmp_path: Path) -> Path:
    """A file outside every checkout, holding what must never ship."""
    path = tmp_path / "outside" / "secret.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SECRET, encoding="utf-8")
    return path


def files_with_secret(top: Path, *, besides: Path) -> list[Path]:
    """Regular files (not symbolic links) below `top` holding SECRET, outside the folder
    `besides` (where the test put the secrets)."""
    found = []
    for folder, _, names in os.walk(top):
        for name in names:
            path = Path(folder) / name
            if path.is_relative_to(besides) or not stat.S_ISREG(os.lstat(path).st_mode):
                continue
            if SECRET.encode() in path.read_bytes():
                found.append(path)
    return found


def commit_link(upstream: Upstream, rel: str, target: str | Path, message: str) -> None:
    """Commit a symbolic link `rel` -> `target` on the ExecuTorch fixture's main."""
    link = upstream.executorch / rel
    if link.is_dir() and not link.is_symlink():
        git(upstream.executorch, "rm", "-rq", rel)
    elif link.exists() or link.is_symlink():
        link.unlink()
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link)
    git(upstream.executorch, "add", "-A", "--", ".", ":(exclude)third-party")
    git(upstream.executorch, "commit", "-q", "-m", message)


def assert_refused(tmp_path: Path, secret: Path, *names: str) -> str:
    with pytest.raises(FatalError) as info:
        build(tmp_path)
    message = str(info.value)
    assert "\n" not in message
    for name in names:
        assert name in message
    assert "untrusted" in message
    assert files_with_secret(tmp_path, besides=secret.parent) == []
    assert not (tmp_path / "out" / "ExecuTorch").exists()
    return message


def test_symlink_out_in_a_vendored_folder_is_refused(tmp_path: Path, upstream: Upstream) -> None:
    secret = secret_file(tmp_path)
    commit_link(upstream, "runtime/core/env.h", secret, "a header that is a link out")
    message = assert_refused(tmp_path, secret, "runtime/core/env.h", "ExecuTorch at ")
    assert "outside the checkout" in message


def test_proc_environ_reached_by_the_include_closure_is_refused(
    tmp_path: Path, upstream: Upstream
) -> None:
    # kernels/portable/cpu/util/ is no copy rule's: only the include closure reads it.
    commit_link(
        upstream, "kernels/portable/cpu/util/env.h", "/proc/self/environ", "environ as a header"
    )
    upstream.commit_executorch(
        {
            "runtime/core/error.h": "#pragma once\n#include <variant>\n"
            "#include <executorch/kernels/portable/cpu/util/env.h>\n"
        },
        "include it",
    )
    secret = secret_file(tmp_path)
    message = assert_refused(tmp_path, secret, "kernels/portable/cpu/util/env.h", "/proc/")
    assert "ExecuTorch at " in message
    lib_env = tmp_path / "out" / "ExecuTorch" / "src/executorch/kernels/portable/cpu/util/env.h"
    assert not lib_env.exists()


def test_copy_rule_whose_folder_is_a_symlink_out_is_refused(
    tmp_path: Path, upstream: Upstream
) -> None:
    secret = secret_file(tmp_path)
    (secret.parent / "stolen.h").write_text(SECRET, encoding="utf-8")
    commit_link(upstream, "runtime/kernel", secret.parent, "the whole folder is a link out")
    message = assert_refused(tmp_path, secret, "runtime/kernel")
    assert "outside the checkout" in message


def test_example_file_symlink_out_is_refused(tmp_path: Path, upstream: Upstream) -> None:
    secret = secret_file(tmp_path)
    commit_link(
        upstream, "examples/arduino/examples/KeywordSpotting/mfcc_yes.h", secret, "mfcc out"
    )
    assert_refused(tmp_path, secret, "examples/arduino/examples/KeywordSpotting/mfcc_yes.h")


def test_example_tool_symlink_out_is_refused(tmp_path: Path, upstream: Upstream) -> None:
    secret = secret_file(tmp_path)
    commit_link(upstream, "examples/arduino/generate_test_input.py", secret, "tool out")
    assert_refused(tmp_path, secret, "examples/arduino/generate_test_input.py", "ExecuTorch at ")


def test_symlink_inside_the_checkout_ships_as_a_regular_file(
    tmp_path: Path, upstream: Upstream
) -> None:
    commit_link(upstream, "runtime/core/alias.h", "error.h", "a link inside the checkout")
    lib = build(tmp_path).out
    alias = lib / "src/executorch/runtime/core/alias.h"
    assert alias.is_file() and not alias.is_symlink()
    assert alias.read_bytes() == (lib / "src/executorch/runtime/core/error.h").read_bytes()
    links = [p for p in lib.rglob("*") if p.is_symlink()]
    assert links == []


# -- the steps on their own: what git cannot commit (a FIFO), and writes outside the library --


def test_fifo_in_a_copied_folder_is_refused(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "runtime/core").mkdir(parents=True)
    (tree / "runtime/core/ok.h").write_text("#pragma once\n", encoding="utf-8")
    os.mkfifo(tree / "runtime/core/pipe.h")
    rule = CopyRule(source="runtime/core", dest="src/executorch/runtime/core", include=("*.h",))
    with pytest.raises(FatalError, match=r"runtime/core/pipe.h is a special file"):
        apply_rule(rule, tree, tmp_path / "lib")
    assert not (tmp_path / "lib/src/executorch/runtime/core/pipe.h").exists()


def test_include_climbing_out_is_refused_and_nothing_is_written_outside(tmp_path: Path) -> None:
    root = tmp_path / "co" / "a" / "et"
    (root / "runtime").mkdir(parents=True)
    secret = tmp_path / "outside" / "x.h"
    secret.parent.mkdir()
    secret.write_text(SECRET, encoding="utf-8")
    library = tmp_path / "out" / "lib"
    start = library / "src" / "ExecuTorch.h"
    start.parent.mkdir(parents=True)
    start.write_text("#include <executorch/../../../outside/x.h>\n", encoding="utf-8")
    with pytest.raises(FatalError) as info:
        follow_includes(root, library, [start])
    message = str(info.value)
    assert message.startswith("ExecuTorch: #include <executorch/../../../outside/x.h>")
    assert "../../../outside/x.h climbs out of the checkout" in message
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["lib"]
    assert files_with_secret(tmp_path, besides=secret.parent) == []


def test_schema_include_climbing_out_is_refused_before_flatc_runs(tmp_path: Path) -> None:
    """flatc resolves `include "../../x.fbs"` itself: checked before it is started."""
    schema = tmp_path / "checkout" / "schema"
    schema.mkdir(parents=True)
    outside = secret_file(tmp_path).with_name("s.fbs")
    outside.write_text("table Stolen { a: int; }\n", encoding="utf-8")
    (schema / "scalar_type.fbs").write_text("enum S : byte { A }\n", encoding="utf-8")
    (schema / "program.fbs").write_text(
        'include "scalar_type.fbs";\ninclude "../../outside/s.fbs";\ntable T { a: int; }\n',
        encoding="utf-8",
    )
    flatc = tmp_path / "flatc-that-must-not-run"
    flatc.write_text("#!/bin/sh\ntouch ran\n", encoding="utf-8")
    flatc.chmod(0o755)
    with pytest.raises(FatalError) as info:
        run_flatc(flatc, ["--cpp"], [schema / "program.fbs"], tmp_path / "gen", StepCache(None))
    assert "../../outside/s.fbs climbs out of the checkout" in str(info.value)
    assert not (tmp_path / "gen").exists() and not Path("ran").exists()
    assert confined_includes(schema, schema / "scalar_type.fbs") == []
    (schema / "program.fbs").write_text('include "scalar_type.fbs";\n', encoding="utf-8")
    assert confined_includes(schema, schema / "program.fbs") == [
        (schema / "scalar_type.fbs").resolve()
    ]


def test_a_loop_of_links_is_refused_with_a_message(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    root.mkdir()
    os.symlink("loop.h", root / "loop.h")
    with pytest.raises(FatalError, match=r"loop\.h is a symbolic link that cannot be resolved"):
        confined_file(root, "loop.h", "ExecuTorch at 0123abcd")


def test_a_kernel_yaml_that_is_a_folder_is_refused_with_a_message(tmp_path: Path) -> None:
    (tmp_path / "kernels" / "portable" / "functions.yaml").mkdir(parents=True)
    with pytest.raises(FatalError, match="functions.yaml is a folder"):
        read_op_yaml(tmp_path, "kernels/portable/functions.yaml")


@pytest.mark.parametrize(
    ("include", "message"),
    [
        ("executorch/runtime/" + "x" * 300 + ".h", r"\.h cannot be read \(File name too long\)"),
        ("executorch/runtime/core.h/y.h", None),  # below a file: missing, as any other
    ],
)
def test_an_include_the_file_system_cannot_look_up_is_no_traceback(
    tmp_path: Path, include: str, message: str | None
) -> None:
    """An upstream `#include` of a name over NAME_MAX (255 bytes) ended the include closure in
    an OSError (ENAMETOOLONG) traceback, and one below a regular file (`core.h/y.h`) in a
    NotADirectoryError: the first is refused with a message, the second is a missing header
    (which the closure leaves to the compiler, as any system header)."""
    root = tmp_path / "co" / "a" / "et"
    (root / "runtime").mkdir(parents=True)
    (root / "runtime" / "core.h").write_text("int x;\n", encoding="utf-8")
    library = tmp_path / "out" / "lib"
    start = library / "src" / "ExecuTorch.h"
    start.parent.mkdir(parents=True)
    start.write_text(f"#include <{include}>\n", encoding="utf-8")
    if message is None:
        follow_includes(root, library, [start])
        assert sorted(p.name for p in (library / "src").iterdir()) == ["ExecuTorch.h"]
    else:
        with pytest.raises(FatalError, match=message):
            follow_includes(root, library, [start])


def test_a_codegen_folder_linked_out_runs_nothing_from_there(
    tmp_path: Path, upstream: Upstream
) -> None:
    # A package outside the checkout: importing it would run its __init__.py.
    elsewhere = tmp_path / "outside" / "package"
    marker = tmp_path / "outside" / "ran"
    elsewhere.mkdir(parents=True)
    (elsewhere / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    commit_link(upstream, "codegen", elsewhere, "the codegen is a link out")
    with pytest.raises(FatalError) as info:
        build(tmp_path)
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    assert "codegen is a symbolic link to " in message and "untrusted" in message
    assert not marker.exists()


def test_a_codegen_input_linked_out_is_refused_before_the_codegen_runs(
    tmp_path: Path, upstream: Upstream
) -> None:
    secret = secret_file(tmp_path)
    commit_link(upstream, "kernels/prim_ops/register_prim_ops.cpp", secret, "prim ops out")
    message = assert_refused(tmp_path, secret, "kernels/prim_ops/register_prim_ops.cpp")
    assert "outside the checkout" in message


def test_the_prim_ops_source_linked_to_a_device_is_refused_not_read(
    tmp_path: Path, upstream: Upstream
) -> None:
    # Read by the op set step (prim_ops) before anything is vendored: /dev/zero never ends.
    commit_link(upstream, "kernels/prim_ops/register_prim_ops.cpp", "/dev/zero", "prim ops")
    with pytest.raises(FatalError) as info:
        build(tmp_path)
    message = str(info.value)
    assert "kernels/prim_ops/register_prim_ops.cpp is a symbolic link to /dev/zero" in message
    assert "\n" not in message and "untrusted" in message


def test_the_dtype_selective_build_header_linked_out_is_refused(
    tmp_path: Path, upstream: Upstream
) -> None:
    secret = secret_file(tmp_path)
    commit_link(upstream, "kernels/portable/cpu/selective_build.h", secret, "header out")
    with pytest.raises(FatalError) as info:
        build_library(
            BuildOptions(cache_dir=tmp_path / "cache", dtypes=("float32",)),
            tmp_path / "out" / "ExecuTorch",
        )
    message = str(info.value)
    assert "kernels/portable/cpu/selective_build.h is a symbolic link to " in message
    assert "outside the checkout" in message and "\n" not in message
