"""An example's expected.yaml (`generator.check.expected`): what it may say, and the clear
error for each value it may not hold."""

from __future__ import annotations

from pathlib import Path

import pytest
from check_fixtures import needs_tools

from generator.check.expected import Expected, ValueCheck, read_expected
from generator.util.errors import FatalError

pytestmark = needs_tools


def test_expected_yaml_reader(tmp_path: Path) -> None:
    (tmp_path / "expected.yaml").write_text(
        "must_print: [a]\narena: true\ntimeout_seconds: 5\n"
        "values: [{line_regex: '^x=(\\S+)$', equals: 8.95, tolerance: 0.01}]\n"
    )
    got = read_expected(tmp_path)
    assert got == Expected(("a",), (), True, 5.0, (ValueCheck("^x=(\\S+)$", 8.95, 0.01),))
    (tmp_path / "expected.yaml").write_text("must_print: a\n")
    with pytest.raises(FatalError, match="must be a list of strings"):
        read_expected(tmp_path)
    (tmp_path / "expected.yaml").write_text("must_prnt: [a]\n")
    with pytest.raises(FatalError, match="unknown keys"):
        read_expected(tmp_path)
    with pytest.raises(FatalError, match="is missing"):
        read_expected(tmp_path / "nowhere")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("must_print: [a]\ntimeout_seconds: .nan\n", "`timeout_seconds` must be a finite number"),
        ("must_print: [a]\ntimeout_seconds: .inf\n", "`timeout_seconds` must be a finite number"),
        ("must_print: [a]\ntimeout_seconds: true\n", "`timeout_seconds` must be a finite number"),
        ("must_print: [a]\ntimeout_seconds: '5'\n", "`timeout_seconds` must be a finite number"),
        ("must_print: [a]\ntimeout_seconds: 0\n", "`timeout_seconds` must be a positive"),
        ("must_print: [a]\narena: 'no'\n", "`arena` must be true or false, not 'no'"),
        ("must_print: [a]\narena: 1\n", "`arena` must be true or false, not 1"),
        ("must_print: [a]\nvalues: 5\n", "`values` must be a list of mappings"),
        ("must_print: [a]\nvalues: [5]\n", "`values` must be a list of mappings"),
        ("must_print: [a]\nvalues: [{line_regex: x}]\n", "`values[0]` needs line_regex and"),
        (
            "must_print: [a]\nvalues: [{line_regex: '(', equals: 1}]\n",
            "`values[0].line_regex` is not a valid regex",
        ),
        (
            "must_print: [a]\nvalues: [{line_regex: x, equals: .nan}]\n",
            "`values[0].equals` must be a finite number",
        ),
        (
            "must_print: [a]\nvalues: [{line_regex: x, equals: '8.95'}]\n",
            "`values[0].equals` must be a finite number, not '8.95'",
        ),
        (
            "must_print: [a]\nvalues: [{line_regex: x, equals: false}]\n",
            "`values[0].equals` must be a finite number",
        ),
        (
            "must_print: [a]\nvalues: [{line_regex: x, equals: 1, tolerance: -0.1}]\n",
            "`values[0].tolerance` must be >= 0",
        ),
        (
            "must_print: [a]\nvalues: [{line_regex: x, equals: 1, tolerance: .inf}]\n",
            "`values[0].tolerance` must be a finite number",
        ),
        ("must_not_print: [x]\n", "`must_print` is required: list the lines"),
        ("must_print: []\n", "`must_print` must list at least one line"),
        ("must_print: [1, 2]\n", "`must_print` must be a list of strings"),
        ("\n", "`must_print` is required: list the lines"),
    ],
)
def test_expected_yaml_rejects_bad_values(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "expected.yaml").write_text(text)
    with pytest.raises(FatalError) as exc:
        read_expected(tmp_path)
    assert str(exc.value).startswith(f"{tmp_path / 'expected.yaml'}: ")
    assert message in str(exc.value)


def test_expected_yaml_that_is_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "expected.yaml").write_bytes("must_print: ['caf\xe9']\n".encode("latin-1"))
    with pytest.raises(FatalError, match="expected.yaml is not UTF-8 text"):
        read_expected(tmp_path)
