"""data/vendored/*.yaml: each file is a component the build ships (it reads them by name:
`executorch` and `components.THIRD_PARTY`) or the check's core (`arduinocore-api.yaml`,
`role: check-core`), which the build refuses to vendor. The check's core itself is held to its
pin in tests/unit/check/test_check_arduino_api.py.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from generator import data_dir
from generator.pipeline.components import THIRD_PARTY, load_component
from generator.util.errors import FatalError

SHIPPED = ("executorch", *THIRD_PARTY)


def test_each_vendored_yaml_is_a_component_the_build_reads_or_the_checks_core() -> None:
    files = {p.stem: p for p in data_dir("vendored").glob("*.yaml")}
    assert set(files) == {*SHIPPED, "arduinocore-api"}
    roles = {
        key: yaml.safe_load(path.read_text(encoding="utf-8")).get("role")
        for key, path in files.items()
    }
    assert roles == {**dict.fromkeys(SHIPPED), "arduinocore-api": "check-core"}
    assert [load_component(key).key for key in SHIPPED] == list(SHIPPED)


def test_the_build_refuses_the_checks_core() -> None:
    with pytest.raises(FatalError, match=r"ArduinoCore-API, whose role is 'check-core'"):
        load_component("arduinocore-api")


def test_an_explicit_library_role_loads_and_an_unknown_one_is_refused(tmp_path: Path) -> None:
    text = (data_dir("vendored") / "flatcc.yaml").read_text(encoding="utf-8")
    (tmp_path / "lib.yaml").write_text("role: library\n" + text, encoding="utf-8")
    (tmp_path / "other.yaml").write_text("role: docs\n" + text, encoding="utf-8")
    assert load_component("lib", tmp_path) == replace(load_component("flatcc"), key="lib")
    with pytest.raises(FatalError, match=r"flatcc, whose role is 'docs'"):
        load_component("other", tmp_path)


@pytest.mark.parametrize("text", ["", "- a list\n", "just a string\n"])
def test_a_file_that_is_no_mapping_is_a_clear_error(tmp_path: Path, text: str) -> None:
    (tmp_path / "bad.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(FatalError, match=r"bad.yaml is not a valid component description"):
        load_component("bad", tmp_path)
