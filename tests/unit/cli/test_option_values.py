"""Empty and nonsensical option values are refused by the parser, before any work (issue 29):
`--cache-dir ''` meant the current folder, `--executorch-repo ''` reached git."""

from __future__ import annotations

import pytest

from generator.cli.main import build_parser


@pytest.mark.parametrize(
    "args",
    [
        ["build", "--cache-dir", ""],
        ["build", "--cache-dir", "  "],
        ["build", "--out", ""],
        ["check", "", "--cache-dir", "x"],
        ["check", "lib", "--cache-dir", ""],
        ["build", "--executorch-repo", ""],
        ["build", "--executorch-repo=-uhttps://x"],
        ["build", "--executorch-repo", " https://github.com/pytorch/executorch"],
        ["build", "--executorch-ref", ""],
        ["build", "--executorch-ref=--upload-pack=x"],
        ["sync", "--repo", "a/b", "--remote", ""],
        ["sync", "--repo", "a/b", "--api-url", ""],
        ["sync", "--repo", "a/b", "--base", " "],
        ["sync", "--repo", "a/b", "--cache-dir", ""],
    ],
)
def test_empty_or_option_like_values_are_refused_up_front(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(args)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "error: argument" in err
    assert "is empty" in err or "starts with" in err or "starts or ends" in err
    assert "Traceback" not in err


def test_sensible_values_still_parse() -> None:
    args = build_parser().parse_args(
        ["build", "--cache-dir", ".", "--executorch-repo", "../et", "--executorch-ref", "v1.0"]
    )
    assert str(args.cache_dir) == "." and args.executorch_repo == "../et"
