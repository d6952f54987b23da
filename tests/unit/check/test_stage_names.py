"""The stages `check/stages.py` documents are the ones the report shows, in its order, each
judged by a module that exists (a stage added or renamed without its words fails here)."""

from __future__ import annotations

import re
from pathlib import Path

import generator.check.stages
from generator.check.report import STAGES

CHECK_DIR = Path(generator.check.stages.__file__).parent
_ENTRY = re.compile(r'^- "(?P<name>[a-z-]+)" \(step (?P<step>\d), `(?P<module>\w+\.py)`\)', re.M)


def test_the_documented_stages_are_the_reports_in_order_each_with_its_module() -> None:
    doc = generator.check.stages.__doc__ or ""
    entries = [m.groupdict() for m in _ENTRY.finditer(doc)]
    assert tuple(e["name"] for e in entries) == STAGES
    assert [e["step"] for e in entries] == ["2", "3", "3", "4", "4", "4", "5"]
    for entry in entries:
        assert (CHECK_DIR / entry["module"]).is_file(), entry
