"""generator.util.atomic.write_atomic: whole files, normal permissions, no temporary left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.util.atomic import write_atomic


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


def test_a_link_is_written_through_and_a_fifo_as_it_is(tmp_path: Path) -> None:
    # A rename over the path would replace the link with a file, and a FIFO or a device node
    # (as root, `check --json /dev/null` would replace /dev/null with a regular file).
    import stat
    import threading

    (tmp_path / "real.json").write_text("old")
    (tmp_path / "link.json").symlink_to("real.json")
    write_atomic(tmp_path / "link.json", "{}\n")
    assert (tmp_path / "link.json").is_symlink()
    assert (tmp_path / "real.json").read_text() == "{}\n"
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_atomic(fifo, "[]\n")
    reader.join(timeout=60)
    assert got == [b"[]\n"] and stat.S_ISFIFO(fifo.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "pipe", "real.json"]
