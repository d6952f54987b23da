"""Messages that name the real cause: a full disk under `--out`, `--out` on a mount point, a
folder given as a file, an unwritable `--json` found before the check runs, a list option
given no value, and any locale (an ASCII one, non-ASCII names) without a traceback.

The full-disk and mount-point cases use a real tmpfs where this machine lets the tests mount
one (CI runs as root), and skip saying so elsewhere; the message logic is also tested on the
error `shutil` raises.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from et_fixture import Upstream

from generator.cli.main import main
from generator.util.errors import describe_os_error, describe_unicode_error, error_handler

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 16 KiB tmpfs mounted at a fresh folder (even the fixture library cannot fit)."""
    point = tmp_path / "small-disk"
    point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(point)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {mounted.stderr.decode().strip()}")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], check=False)


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info, error_handler():
        raise SystemExit(main(argv))
    code = info.value.code
    return (code if isinstance(code, int) else 1), capsys.readouterr().err


# -- a full disk is named where it is, not where the copy came from ---------------------------


def test_a_full_disk_names_the_destination_shutil_was_writing(tmp_path: Path) -> None:
    # shutil's copies report ENOSPC with filename=source, filename2=destination.
    dest = tmp_path / "out" / "src" / "x.h"
    error = OSError(errno.ENOSPC, "No space left on device", "/cache/x.h", None, str(dest))
    message = describe_os_error(error)
    assert f"writing {dest}" in message and "/cache/x.h" not in message
    assert "--out" in message and "no room left" in message


def test_build_into_a_full_disk_names_that_disk(
    tmp_path: Path, upstream: Upstream, tmpfs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run_main(
        ["build", "--out", str(tmpfs / "lib"), "--cache-dir", str(tmp_path / "cache")], capsys
    )
    assert code == 1 and "Traceback" not in err
    assert f"the file system mounted at {tmpfs} has no room left" in err
    assert str(tmp_path / "cache") not in err.splitlines()[-1]  # not the cache's disk
    assert list(tmpfs.iterdir()) == []  # staging removed: nothing half-written


def test_out_on_a_mount_point_is_refused_before_building(
    tmp_path: Path, upstream: Upstream, tmpfs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run_main(
        ["build", "--out", str(tmpfs), "--cache-dir", str(tmp_path / "cache")], capsys
    )
    assert code == 1
    assert f"--out {tmpfs} is a mount point" in err
    assert f"--out {tmpfs / 'ExecuTorch'}" in err  # the fix, spelled out
    assert not (tmp_path / "cache").exists()  # refused before any checkout


# -- paths given as options -------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--ops-from-pte", "--dtypes-from-pte"])
def test_a_folder_given_as_a_pte_is_called_a_folder(
    tmp_path: Path, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run_main(["build", option, str(tmp_path), "--out", str(tmp_path / "o")], capsys)
    assert code == 1
    assert f"{option} {tmp_path} is a folder; name a .pte file inside it" in err


def test_a_folder_given_as_an_example_pte_is_called_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run_main(
        ["build", "--example-pte", f"AddModel={tmp_path}", "--out", str(tmp_path / "o")], capsys
    )
    assert code == 1 and f"--example-pte AddModel={tmp_path} is a folder" in err


def test_a_missing_pte_is_no_such_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.pte"
    code, err = run_main(["build", "--ops-from-pte", str(missing)], capsys)
    assert code == 1 and f"--ops-from-pte {missing}: no such file" in err


@pytest.mark.parametrize(
    ("where", "said"),
    [
        ("missing/report.json", "does not exist; create it first"),
        (".", "is a folder; pass a file name"),
    ],
)
def test_an_unwritable_json_is_refused_before_the_check_runs(
    tmp_path: Path, where: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # The library does not exist either: the --json error comes first, before any work.
    code, err = run_main(
        ["check", str(tmp_path / "no-library"), "--json", str(tmp_path / where)], capsys
    )
    assert code == 1 and said in err and "--json" in err


def test_a_json_in_a_read_only_folder_is_refused_up_front(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The tests run as root, who may write anywhere: the folder's answer is given here.
    folder = tmp_path / "ro"
    folder.mkdir()
    real_access = os.access
    monkeypatch.setattr(
        os, "access", lambda p, mode: False if Path(p) == folder else real_access(p, mode)
    )
    code, err = run_main(["check", str(tmp_path), "--json", str(folder / "r.json")], capsys)
    assert code == 1 and f"you may not write in {folder}" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "LIB", "--example", ""],
        ["check", "LIB", "--example", " , "],
        ["build", "--examples", ""],
        ["build", "--ops", ","],
    ],
)
def test_a_list_option_given_no_value_is_refused(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # `--example "$UNSET"` used to mean "no filter": every example.
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "was given no value; name at least one or leave it out" in capsys.readouterr().err


# -- any locale: the tool runs in UTF-8 mode, and says so when a name is not UTF-8 -------------


def ascii_locale() -> dict[str, str]:
    """An environment whose locale is ASCII, with Python's own coercions switched off: what a
    minimal container or a cron job gives."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHON"))}
    return {**env, "LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}


def test_under_an_ascii_locale_a_build_with_non_ascii_paths_works(
    tmp_path: Path, upstream: Upstream
) -> None:
    # Before: UnicodeDecodeError decoding the codegen's output (it names the cache path).
    out, cache = tmp_path / "é" / "ExecuTorch", tmp_path / "cachë"
    proc = subprocess.run(
        [sys.executable, "-m", "generator", "build", "--out", str(out), "--cache-dir", str(cache)],
        cwd=REPO,
        env={**ascii_locale(), **upstream.env()},
        capture_output=True,
        check=False,
    )
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert (out / "library.properties").is_file()


def test_under_an_ascii_locale_the_report_prints_its_check_marks(tmp_path: Path) -> None:
    # Before: UnicodeEncodeError printing the first check mark of a report; now the same
    # text, escaped where the terminal cannot show it.
    script = "from generator.cli.main import main; print('\\u2705 ok'); raise SystemExit(0)"
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        env=ascii_locale(),
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 1 and b"UnicodeEncodeError" in proc.stderr  # the plain problem
    proc = subprocess.run(
        [sys.executable, "-m", "generator", "lint", str(tmp_path / "ë")],
        cwd=REPO,
        env=ascii_locale(),
        capture_output=True,
        check=False,
    )
    assert b"Traceback" not in proc.stderr and proc.returncode != 0
    assert "ë".encode() in proc.stderr  # UTF-8 mode: the name as it is


def test_a_name_that_is_not_utf8_is_a_clear_error() -> None:
    try:
        "src/\udce9.h".encode("utf-8")
    except UnicodeEncodeError as e:
        message = describe_unicode_error(e)
    assert message.startswith("text or a file name is not UTF-8 near 'src/\\udce9.h'")
    assert "rename the file" in message
