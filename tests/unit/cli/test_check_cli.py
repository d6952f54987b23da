"""`python -m generator check`: exit code, --json, $GITHUB_STEP_SUMMARY, --no-run and
--cache-dir; clear errors instead of tracebacks; SIGTERM stops the check and its QEMU.

Every library and sketch here is written by the test into tmp_path (check_fixtures.py); no
ExecuTorch sources are needed. Objects are shared through one cache per test session (the
`cache_dir` fixture of conftest.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from check_fixtures import CORE_OBJECTS, HELLO_EXPECTED, HELLO_SKETCH, needs_tools, write_library

from generator.cli.main import main

pytestmark = needs_tools


def test_cli_exit_code_json_and_step_summary(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lib = write_library(
        tmp_path / "Tiny",
        {
            "Hello": (HELLO_SKETCH, HELLO_EXPECTED),
            "Wrong": (HELLO_SKETCH.replace("twice(21)", "twice(2)"), HELLO_EXPECTED),
        },
    )
    summary = tmp_path / "summary.md"
    summary.write_text("# before\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    out_json = tmp_path / "report.json"
    common = ["--compiler", "gcc-arm", "--cache-dir", str(cache_dir), "--json", str(out_json)]

    assert main(["check", str(lib), "--example", "Hello", *common]) == 0
    data = json.loads(out_json.read_text())
    assert data["passed"] is True
    assert [e["example"] for e in data["examples"]] == ["Hello"]
    umask = os.umask(0o022)
    os.umask(umask)
    assert out_json.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's private 0600
    assert summary.read_text().startswith("# before\n## Library check: ✅ passed")

    assert main(["check", str(lib), *common]) == 1
    data = json.loads(out_json.read_text())
    assert [e["example"] for e in data["examples"]] == ["Hello", "Wrong"]
    assert [e["passed"] for e in data["examples"]] == [True, False]

    # Without the run, the wrong output goes unseen: compile and sizes pass.
    assert main(["check", str(lib), "--example", "Wrong", "--no-run", *common]) == 0
    stages = json.loads(out_json.read_text())["examples"][0]["stages"]
    assert [s["stage"] for s in stages] == ["compile", "sizes", "dynamic"]

    with pytest.raises(SystemExit) as exc:
        main(["check", str(lib), "--example", "Nope", *common])
    assert exc.value.code == 1


def test_a_relative_cache_dir_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lib = write_library(tmp_path / "Tiny", {"Hello": (HELLO_SKETCH, HELLO_EXPECTED)})
    monkeypatch.chdir(tmp_path)
    argv = ["check", "Tiny", "--compiler", "gcc-arm", "--cache-dir", "rel-cache", "--no-run"]
    assert main(argv) == 0, capsys.readouterr().out
    assert len(list((tmp_path / "rel-cache/objects/o").rglob("*.o"))) == CORE_OBJECTS + 3
    assert lib.is_dir()


def _cli_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err
    return err


def test_cli_errors_instead_of_tracebacks(
    tmp_path: Path,
    cache_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    lib = write_library(tmp_path / "Tiny", {"Hello": (HELLO_SKETCH, HELLO_EXPECTED)})
    common = ["check", str(lib), "--compiler", "gcc-arm", "--no-run"]
    cached = [*common, "--cache-dir", str(cache_dir)]

    folder = tmp_path / "a-folder"
    folder.mkdir()
    assert "is a folder; pass a file name" in _cli_error([*cached, "--json", str(folder)], capsys)
    # /proc refuses new files: known before the check runs, not after
    assert "you may not write in" in _cli_error(
        [*cached, "--json", "/proc/self/check.json"], capsys
    )
    assert list(folder.iterdir()) == []

    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    err = _cli_error([*common, "--cache-dir", str(a_file)], capsys)
    assert f"--cache-dir {a_file} is a file" in err

    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(folder))
    err = _cli_error(cached, capsys)
    assert f"GITHUB_STEP_SUMMARY={folder}: cannot append the report" in err
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")

    (lib / "examples/Hello/expected.yaml").write_text("must_print: [a]\nvalues: 5\n")
    assert "`values` must be a list of mappings" in _cli_error(cached, capsys)
    (lib / "examples/Hello/expected.yaml").write_bytes(b"must_print: ['\xff']\n")
    assert "expected.yaml is not UTF-8 text" in _cli_error(cached, capsys)
    (lib / "examples/Hello/expected.yaml").write_text(HELLO_EXPECTED)
    (lib / "examples/Hello/Hello.ino").write_bytes(
        HELLO_SKETCH.replace("=== Hello ===", "=== H\xe9llo ===").encode("latin-1")
    )
    assert "Hello.ino is not UTF-8 text" in _cli_error(cached, capsys)


def _qemu_children(pid: int) -> list[int]:
    """Pids of qemu-system-arm processes whose parent is `pid` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name = text[text.index("(") + 1 : text.rindex(")")]
        ppid = int(text[text.rindex(")") + 2 :].split()[1])
        if ppid == pid and name.startswith("qemu-system-arm"):
            found.append(int(stat.parent.name))
    return found


def test_sigterm_stops_the_check_and_its_qemu(tmp_path: Path, cache_dir: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    sketch = 'void setup() { Serial.println("=== Wait ==="); }\nvoid loop() { delay(10); }\n'
    lib = write_library(tmp_path / "Tiny", {"Wait": (sketch, 'must_print: ["x"]\n')})
    argv = [sys.executable, "-m", "generator", "check", str(lib), "--compiler", "gcc-arm"]
    root = Path(__file__).resolve().parents[3]
    proc = subprocess.Popen(
        [*argv, "--cache-dir", str(cache_dir)],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        qemu: list[int] = []
        for _ in range(1200):  # the compile comes first; QEMU then waits 60 s for DONE
            qemu = _qemu_children(proc.pid)
            if qemu or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert qemu, "qemu-system-arm never started"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM
    assert err.strip().splitlines()[-1] == "error: stopped by SIGTERM"
    assert "Traceback" not in err
    for pid in qemu:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_keep_and_update_docs_refuse_what_would_lose_or_hide_something(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lib = write_library(tmp_path / "Tiny", {"Hello": (HELLO_SKETCH, HELLO_EXPECTED)})
    used = tmp_path / "used"
    used.mkdir()
    (used / "mine").symlink_to(tmp_path)
    for argv, message in (
        (["--keep", str(used)], "is not empty"),
        (["--keep", str(lib / "examples")], "is inside the library"),
        (["--example", "Hello", "--update-docs"], "without --example"),
    ):
        with pytest.raises(SystemExit) as exc:
            main(["check", str(lib), "--no-run", *argv])
        assert exc.value.code == 1
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err
    assert (used / "mine").is_symlink()  # the user's folder is left as it was
