"""Issue 29, the third pass: data of a hostile ExecuTorch ref that the build writes into the
library (its version.txt, its kernel yamls' operator names), on the fixture upstream. Each
failed before the fix: the text went verbatim into library.properties, generated C++,
PROVENANCE.txt and the sync pull request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from et_fixture import Upstream

from generator.pipeline.run import BuildOptions, build_library
from generator.util.errors import FatalError


def _build(tmp_path: Path, **kw: object) -> Path:
    out = tmp_path / "out" / "ExecuTorch"
    build_library(BuildOptions(cache_dir=tmp_path / "cache", **kw), out)  # type: ignore[arg-type]
    return out


@pytest.mark.parametrize(
    "text",
    [
        "1.5.0\nprecompiled=true\nldflags=-lowned\ndepends=Evil",  # new properties
        "1.5.0\x1b]0;owned\x07",  # a terminal escape
        "1" * 65,  # longer than any version
    ],
    ids=["line-break", "escape", "long"],
)
def test_a_version_txt_that_is_no_version_line_is_refused_even_with_library_version(
    tmp_path: Path, upstream: Upstream, text: str
) -> None:
    """LOW (a malformed library from a ref's data). With --library-version the ref's
    version.txt was never parsed, only stripped, and went verbatim into library.properties'
    `paragraph=` (a ref between releases: "version.txt ..."), so a line break added
    properties of the ref's choosing (`precompiled`, `ldflags`, `depends`): the build passed.
    Fix: version.txt must be one line of a version's characters, 64 at most."""
    upstream.commit_executorch({"version.txt": text + "\n"}, "version")
    with pytest.raises(FatalError, match=r"has a version\.txt of '1.*which is not one line"):
        _build(tmp_path, library_version="0.3.0")
    assert not (tmp_path / "out" / "ExecuTorch").exists()


def test_a_plain_version_txt_still_builds(tmp_path: Path, upstream: Upstream) -> None:
    upstream.commit_executorch({"version.txt": "1.6.0a0+local_1\n"}, "version")
    props = (_build(tmp_path, library_version="0.3.0") / "library.properties").read_text()
    assert "version=0.3.0\n" in props and "version.txt 1.6.0a0+local_1)" in props


@pytest.mark.parametrize(
    ("op", "kernel"),
    [
        ("evil\n::add-mask::x\n<!-- @acme/owners <img src=x>", "evil_out"),
        ("aten::evil.out\x1b[2J", "evil_out"),
        ("aten::evil.out", "evil_out(); system"),
    ],
    ids=["op-lines", "op-escape", "kernel"],
)
def test_an_operator_name_that_is_no_cpp_name_is_refused(
    tmp_path: Path, upstream: Upstream, op: str, kernel: str
) -> None:
    """LOW (a malformed library from a ref's data). An `op:` entry of the ref's
    functions.yaml was taken as any string: with --all-ops a name holding line breaks, `<!--`
    or a terminal escape was registered in the generated C++ string literals, listed in
    PROVENANCE.txt and the library's facts, and (on the fixture, whose codegen takes it) the
    build passed; a kernel name that is no C++ name was reported as "a bug in the
    generator's op source lookup". Fix: an operator name is `namespace::name.overload` and a
    kernel a C++ name, else the ref is refused naming the entry."""
    yaml = (upstream.executorch / "kernels/portable/functions.yaml").read_text()
    entry = f"- op: {json.dumps(op)}\n  kernels:\n    - arg_meta: null\n"
    entry += f"      kernel_name: {json.dumps('torch::executor::' + kernel)}\n"
    relu = (upstream.executorch / "kernels/portable/cpu/op_relu.cpp").read_text()
    gen = (upstream.executorch / "codegen/gen.py").read_text()
    upstream.commit_executorch(
        {
            "kernels/portable/functions.yaml": yaml + entry,
            "kernels/portable/cpu/op_evil.cpp": relu.replace("relu_out", "evil_out"),
            # the fixture's codegen, taking a name with `::` in full as the generator does
            "codegen/gen.py": gen.replace(
                '"aten::" + e["op"]', '(e["op"] if "::" in e["op"] else "aten::" + e["op"])'
            ),
        },
        "ops",
    )
    with pytest.raises(FatalError, match=r"functions\.yaml names operator .* not an operator"):
        _build(tmp_path, library_version="0.3.0", all_ops=True)
