"""The object cache's housekeeping: one check never deletes another's work in progress."""

from __future__ import annotations

import os
import time
from pathlib import Path

from generator.check.objcache import ObjectCache


def test_clear_temporaries_removes_only_stale_leftovers(tmp_path: Path) -> None:
    cache = ObjectCache(tmp_path / "objects")
    tmp = cache.root / "tmp"
    busy = tmp / "compiling-now"  # another check's compile, in progress
    stale = tmp / "interrupted"  # a compile killed an hour and more ago
    for folder in (busy, stale):
        folder.mkdir(parents=True)
        (folder / "out.d").write_text("x.o: x.c\n")
    old = time.time() - ObjectCache.STALE_TEMPORARY_SECONDS - 60
    os.utime(stale, (old, old))
    cache.clear_temporaries()
    assert (busy / "out.d").is_file()
    assert not stale.exists()


def test_clear_temporaries_without_a_tmp_folder_is_quiet(tmp_path: Path) -> None:
    ObjectCache(tmp_path / "objects").clear_temporaries()
    assert not (tmp_path / "objects").exists()
