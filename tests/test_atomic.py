"""generator.atomic.write_atomic: whole files, normal permissions, no temporary left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.atomic import write_atomic


def test_writes_text_and_bytes_with_the_permissions_open_would_give(tmp_path: Path) -> None:
    umask = os.umask(0)
    os.umask(umask)
    write_atomic(tmp_path / "a.txt", "é\n")
    write_atomic(tmp_path / "b.bin", b"\x00\x01")
    assert (tmp_path / "a.txt").read_bytes() == "é\n".encode()
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    for name in ("a.txt", "b.bin"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o666 & ~umask  # not 0600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.bin"]


def test_a_failed_replace_keeps_the_old_file_and_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "notes.md"
    target.write_text("old\n")

    def full_disk(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["notes.md"]


def test_a_missing_folder_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "nowhere" / "x.json", "{}\n")
