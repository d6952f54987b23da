"""`python -m generator workflows --outdated` (`generator.workflows.pins`): every pin of the
templates is
read, looked up in its source (GitHub's releases, the package index, the library index, all
served here by a local HTTP server) and reported; exit 0 when all are current, 1 when one is
older or an action's SHA is not its tag's commit, 2 when a source cannot be read."""

from __future__ import annotations

import gzip
import io
import json
import re
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from github_fake.local_server import LocalServer

from generator.cli.main import main
from generator.workflows import pins
from generator.workflows import render as wf
from generator.workflows.pins import (
    Finding,
    Pin,
    PinError,
    Sources,
    check_pins,
    pin_table,
    read_pins,
)

TOKEN = "ghp_" + "s3cr3t" * 6
OTHER_SHA = "f" * 40
#: The real templates (their pins are read as they are: the command tests use `FIXED`).
TEMPLATES = wf.read_templates()
#: Templates with the pins of every kind, fixed here so that bumping a real pin changes no
#: test but the one that reads the real templates.
FIXED = {
    "ci.yml": f"""\
env:
  ARDUINO_CLI_VERSION: "1.5.1"
  ZEPHYR_CORE: "arduino:zephyr@0.55.2"
  ROUTER_BRIDGE: "Arduino_RouterBridge@0.4.3"
  ARDUINO_LINT_VERSION: "1.3.0"
jobs:
  a:
    steps:
      - uses: actions/checkout@{"1" * 40} # v7.0.1
      - uses: actions/setup-python@{"2" * 40} # v7.0.0
      - uses: arduino/setup-arduino-cli@{"3" * 40} # v2.0.0
""",
    "sync.yml": f"""\
env:
  ARDUINO_CLI_VERSION: "1.5.1"
  ZEPHYR_CORE: "arduino:zephyr@0.55.2"
  ROUTER_BRIDGE: "Arduino_RouterBridge@0.4.3"
jobs:
  a:
    steps:
      - name: x
        uses: actions/checkout@{"1" * 40} # v7.0.1
      - uses: actions/cache@{"4" * 40} # v5.0.5
""",
}
PINS = read_pins(FIXED)


class FakeSources(LocalServer):
    """GitHub's releases and commits, and the two indexes, as small JSON documents.

    Attributes:
        routes: path -> (status, body, headers); every other path is a 404.
        requests: (path, Authorization header or "") of each request, in order.
    """

    def __init__(self) -> None:
        super().__init__()
        self.routes: dict[str, tuple[int, bytes, dict[str, str]]] = {}
        self.requests: list[tuple[str, str]] = []

    def _wsgi(self, environ: dict[str, Any], start_response: Any) -> Any:
        path = environ["PATH_INFO"]
        self.requests.append((path, environ.get("HTTP_AUTHORIZATION", "")))
        status, body, headers = self.routes.get(path, (404, b'{"message": "Not Found"}', {}))
        start_response(f"{status} X", [("Content-Type", "application/json"), *headers.items()])
        return [body]

    def json(self, path: str, data: object, status: int = 200, **headers: str) -> None:
        self.routes[path] = (status, json.dumps(data).encode(), headers)

    def release(self, repo: str, tag: str, sha: str) -> None:
        """`repo`'s latest release is `tag`, whose commit is `sha`."""
        self.json(f"/api/repos/{repo}/releases/latest", {"tag_name": tag, "prerelease": False})
        self.json(f"/api/repos/{repo}/commits/{tag}", {"sha": sha})


def _pin(name: str) -> Pin:
    return next(p for p in PINS if p.name == name)


def _package_index(*versions: str) -> dict[str, Any]:
    return {
        "packages": [
            {"name": "other", "platforms": [{"architecture": "zephyr", "version": "99.0.0"}]},
            {
                "name": "arduino",
                "platforms": [
                    {"architecture": "avr", "version": "98.0.0"},
                    *({"architecture": "zephyr", "version": v} for v in versions),
                ],
            },
        ]
    }


def _library_index(*versions: str) -> dict[str, Any]:
    return {
        "libraries": [
            {"name": "Arduino_RouterBridgeX", "version": "97.0.0"},
            *({"name": "Arduino_RouterBridge", "version": v} for v in versions),
        ]
    }


def _tar_bz2(member: str, data: object) -> bytes:
    raw = json.dumps(data).encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:bz2") as archive:
        info = tarfile.TarInfo(member)
        info.size = len(raw)
        archive.addfile(info, io.BytesIO(raw))
    return buffer.getvalue()


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeSources]:
    """The templates are `FIXED`, and every pin current: each release is the pinned tag at
    the pinned SHA, the indexes' newest releases are the pinned ones (plus older ones and a
    pre-release)."""
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    for name, text in FIXED.items():
        (tmp_path / name).write_text(text)
    monkeypatch.setattr(wf, "TEMPLATES_DIR", tmp_path)
    with FakeSources() as fake:
        for pin in PINS:
            if pin.kind == "action":
                fake.release(pin.repo, pin.version, pin.sha)
            elif pin.kind == "release":
                fake.release(pin.repo, "v" + pin.version, "a" * 40)
        core, library = _pin("arduino:zephyr").version, _pin("Arduino_RouterBridge").version
        fake.json("/package_index.json", _package_index("0.1.0", core, "99.0.0-rc.1"))
        fake.json("/library_index.json", _library_index("0.0.1", library, "99.0.0-beta"))
        yield fake


def _run(fake: FakeSources, *extra: str, library: str = "library_index.json") -> list[str]:
    return [
        "workflows",
        "--outdated",
        "--api-url",
        f"{fake.url}/api",
        "--package-index",
        f"{fake.url}/package_index.json",
        "--library-index",
        f"{fake.url}/{library}",
        *extra,
    ]


def _rows(out: str) -> dict[str, list[str]]:
    """pin -> [current, newest, source] of the printed table."""
    lines = out.split("\n\n")[0].splitlines()
    assert lines[0].split() == ["pin", "current", "newest", "source"]
    return {
        cells[0]: cells[1:] for cells in (re.split(r"\s{2,}", line.strip()) for line in lines[2:])
    }


# --- reading the pins ------------------------------------------------------------------------


def test_every_pin_of_the_real_templates_is_read_once_with_its_places() -> None:
    pins = read_pins(TEMPLATES)

    def _pin(name: str) -> Pin:
        return next(p for p in pins if p.name == name)

    kinds = {p.name: p.kind for p in pins}
    assert {k: v for k, v in kinds.items() if v != "action"} == {
        "arduino-cli": "release",
        "arduino-lint": "release",
        "arduino:zephyr": "core",
        "Arduino_RouterBridge": "library",
    }
    uses = {
        m.group(1)
        for text in TEMPLATES.values()
        for m in re.finditer(r"uses: ([\w.-]+/[\w.-]+)@", text)
    }
    assert uses and {p.name for p in pins if p.kind == "action"} == uses
    assert len({p.name for p in pins}) == len(pins)  # each pinned one way in every template
    for name, text in TEMPLATES.items():
        env = yaml.safe_load(text.replace("@@BOARDS@@", "[]")).get("env", {})
        if "ARDUINO_CLI_VERSION" in env:
            assert _pin("arduino-cli").version == env["ARDUINO_CLI_VERSION"], name
        if "ZEPHYR_CORE" in env:
            assert f"arduino:zephyr@{_pin('arduino:zephyr').version}" == env["ZEPHYR_CORE"]
        if "ROUTER_BRIDGE" in env:
            assert (
                f"Arduino_RouterBridge@{_pin('Arduino_RouterBridge').version}"
                == env["ROUTER_BRIDGE"]
            )
    checkout = _pin("actions/checkout")
    assert re.fullmatch(r"[0-9a-f]{40}", checkout.sha) and checkout.version.startswith("v")
    lines = [
        f"{name}:{n}"
        for name, text in TEMPLATES.items()
        for n, line in enumerate(text.splitlines(), 1)
        if "uses: actions/checkout@" in line
    ]
    assert list(checkout.where) == lines


def test_a_pin_with_two_versions_is_two_pins_and_other_lines_are_not_pins() -> None:
    sha = "1" * 40
    pins = read_pins(
        {
            "a.yml": f'  - uses: o/r@{sha} # v1.2.3\n  ARDUINO_CLI_VERSION: "1.0.0"\n',
            "b.yml": (
                f"      uses: o/r/sub/path@{sha} # v1.2.3\n"
                f"      uses: o/r@{'2' * 40} # v1.3.0\n"
                "      uses: ./.github/actions/local\n"  # not a pin
                "      uses: docker://alpine:3.20\n"  # not a pin
                '  ZEPHYR_CORE: "arduino:zephyr@0.1.0"\n'
                "  # ARDUINO_LINT_VERSION: 1.0.0\n"  # a comment
            ),
        }
    )
    assert [(p.name, p.version, p.sha, p.where, p.unchecked) for p in pins] == [
        ("o/r", "v1.2.3", sha, ("a.yml:1", "b.yml:1"), ""),
        ("arduino-cli", "1.0.0", "", ("a.yml:2",), ""),
        ("o/r", "v1.3.0", "2" * 40, ("b.yml:2",), ""),
        ("arduino:zephyr", "0.1.0", "", ("b.yml:5",), ""),
    ]


#: Lines that set a pin but not in a checkable shape -> (name, version, why).
UNCHECKED = {
    f"      uses: o/r@{'1' * 40}\n": ("o/r", "", "no `# vX.Y.Z` tag beside the SHA"),
    f"      uses: o/r@{'1' * 40} # v2\n": ("o/r", "v2", "the comment '# v2' is not a vX.Y.Z tag"),
    "      uses: o/r@v1  # v1.2.3\n": ("o/r", "v1", "pinned to 'v1', not a commit SHA"),
    "      uses: o/r@main\n": ("o/r", "main", "pinned to 'main', not a commit SHA"),
    "      uses: weird\n": ("weird", "", "not OWNER/REPO@SHA"),
    "  ARDUINO_CLI_VERSION: 1.5.1\n": (
        "arduino-cli",
        "1.5.1",
        'not written as ARDUINO_CLI_VERSION: "X.Y.Z"',
    ),
    "  ARDUINO_LINT_VERSION: '1.3.0'\n": (
        "arduino-lint",
        "'1.3.0'",
        'not written as ARDUINO_LINT_VERSION: "X.Y.Z"',
    ),
    '  ARDUINO_CLI_VERSION: "latest"\n': (
        "arduino-cli",
        "latest",
        'not written as ARDUINO_CLI_VERSION: "X.Y.Z"',
    ),
    "  ZEPHYR_CORE: arduino:zephyr@0.55.2\n": (
        "arduino:zephyr",
        "arduino:zephyr@0.55.2",
        'not written as ZEPHYR_CORE: "arduino:zephyr@X.Y.Z"',
    ),
    '  ROUTER_BRIDGE: "Other@1.0.0"\n': (
        "Arduino_RouterBridge",
        "Other@1.0.0",
        'not written as ROUTER_BRIDGE: "Arduino_RouterBridge@X.Y.Z"',
    ),
}


def test_a_pin_not_in_a_checkable_shape_is_reported_unchecked_not_skipped() -> None:
    found = read_pins({"x.yml": "".join(UNCHECKED)})
    assert [(p.name, p.version, p.unchecked) for p in found] == list(UNCHECKED.values())
    sources = Sources(fetch=lambda url, headers: pytest.fail(f"asked {url}"))
    findings = check_pins(found, sources)
    assert [f.problems for f in findings] == [
        [f"not checked: {why}"] for _, _, why in UNCHECKED.values()
    ]
    table = pin_table(findings)
    assert re.search(r"\no/r +v2 +unchecked +not checked\n", table), table
    assert "o/r (x.yml:2): not checked: the comment '# v2' is not a vX.Y.Z tag" in table


def test_an_unchecked_pin_in_the_templates_exits_1(
    server: FakeSources, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ci.yml").write_text(FIXED["ci.yml"].replace(" # v7.0.0", " # v7"))
    assert main(_run(server)) == 1
    out = capsys.readouterr().out
    assert _rows(out)["actions/setup-python"] == ["v7", "unchecked", "not checked"]
    assert (
        "actions/setup-python (ci.yml:10): not checked: the comment '# v7' is not a vX.Y.Z tag"
    ) in out


# --- the command -----------------------------------------------------------------------------


def test_all_current_exits_0_and_lists_every_pin(
    server: FakeSources, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_run(server)) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    assert sorted(rows) == sorted(p.name for p in PINS)
    for pin in PINS:
        current, newest, source = rows[pin.name]
        assert current == pin.version
        assert newest == (("v" + pin.version) if pin.kind == "release" else pin.version)
        if pin.repo:
            assert source == f"{server.url[7:]} releases of {pin.repo}"
    assert rows["actions/checkout"][2] == f"{server.url[7:]} releases of actions/checkout"
    assert rows["arduino:zephyr"][2] == f"package index {server.url}/package_index.json"
    assert "\n\n" not in out.strip()  # no notes
    # each index read once, each GitHub answer once
    paths = [p for p, _ in server.requests]
    assert paths.count("/library_index.json") == 1 and paths.count("/package_index.json") == 1
    assert len(paths) == len(set(paths))


def test_a_newer_action_is_reported_with_the_line_to_pin_it(
    server: FakeSources, capsys: pytest.CaptureFixture[str]
) -> None:
    checkout = _pin("actions/checkout")
    server.release("actions/checkout", "v99.1.0", "b" * 40)
    server.json(f"/api/repos/actions/checkout/commits/{checkout.version}", {"sha": checkout.sha})
    assert main(_run(server)) == 1
    out = capsys.readouterr().out
    assert _rows(out)["actions/checkout"][:2] == [checkout.version, "v99.1.0 (newer)"]
    assert (
        f"actions/checkout ({', '.join(checkout.where)}): bump to "
        f"`uses: actions/checkout@{'b' * 40} # v99.1.0`"
    ) in out
    assert _rows(out)["actions/setup-python"][1] == _pin("actions/setup-python").version


def test_a_newer_core_in_a_tar_bz2_and_library_in_a_gz_index(
    server: FakeSources, capsys: pytest.CaptureFixture[str]
) -> None:
    core = _pin("arduino:zephyr").version
    server.routes["/package_index.tar.bz2"] = (
        200,
        _tar_bz2("package_index.json", _package_index(core, "99.2.0", "100.0.0-rc.1")),
        {},
    )
    library = gzip.compress(json.dumps(_library_index("99.3.1", "99.10.0", "99.9.0")).encode())
    server.routes["/library_index.json.gz"] = (200, library, {})
    argv = _run(server, library="library_index.json.gz")
    argv[argv.index("--package-index") + 1] = f"{server.url}/package_index.tar.bz2"
    assert main(argv) == 1
    out = capsys.readouterr().out
    rows = _rows(out)
    assert rows["arduino:zephyr"][:2] == [core, "99.2.0 (newer)"]
    # 99.10.0 > 99.9.0: compared as versions, not as text
    assert rows["Arduino_RouterBridge"][1] == "99.10.0 (newer)"
    assert "Arduino_RouterBridge (ci.yml:" in out and "bump to 99.10.0" in out


def test_pre_releases_and_older_releases_are_not_newer(
    server: FakeSources, capsys: pytest.CaptureFixture[str]
) -> None:
    lint = _pin("arduino-lint")
    server.json("/api/repos/arduino/arduino-lint/releases/latest", {"tag_name": "v99.0.0-rc.1"})
    server.json("/api/repos/arduino/arduino-cli/releases/latest", {"tag_name": "0.0.1"})
    assert main(_run(server)) == 0
    rows = _rows(capsys.readouterr().out)
    assert rows["arduino-lint"][:2] == [lint.version, "v99.0.0-rc.1"]
    assert rows["arduino-cli"][1] == "0.0.1"


def test_a_sha_that_is_not_its_tags_commit_fails(
    server: FakeSources, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = _pin("actions/cache")
    server.json(f"/api/repos/actions/cache/commits/{cache.version}", {"sha": OTHER_SHA})
    assert main(_run(server)) == 1
    out = capsys.readouterr().out
    assert (
        f"actions/cache ({', '.join(cache.where)}): {cache.sha[:12]} is not the commit of "
        f"{cache.version} ({OTHER_SHA[:12]})"
    ) in out


def test_an_index_that_cannot_be_read_is_exit_2_naming_it(
    server: FakeSources, capsys: pytest.CaptureFixture[str]
) -> None:
    del server.routes["/library_index.json"]
    with pytest.raises(SystemExit) as exit_info:
        main(_run(server))
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert _rows(captured.out)["Arduino_RouterBridge"][1] == "unknown"
    assert _rows(captured.out)["arduino:zephyr"][1] == _pin("arduino:zephyr").version
    assert (
        f"could not read the library index ({server.url}/library_index.json answered HTTP 404)"
        in captured.err
    )
    assert "GitHub" not in captured.err and "Traceback" not in captured.err


def test_a_server_that_is_gone_is_exit_2_and_tried_once_per_host(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    with FakeSources() as gone:
        argv = _run(gone)
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"could not read GitHub's API at {gone.url}/api (cannot reach {gone.url}/api/" in err
    assert "the package index (cannot reach" in err and "the library index (cannot" in err


def test_a_used_up_rate_limit_says_to_set_a_token(
    server: FakeSources, capsys: pytest.CaptureFixture[str]
) -> None:
    server.json(
        "/api/repos/actions/checkout/releases/latest",
        {"message": "API rate limit exceeded"},
        status=403,
        **{"x-ratelimit-remaining": "0"},
    )
    with pytest.raises(SystemExit) as exit_info:
        main(_run(server))
    assert exit_info.value.code == 2
    assert "rate limit is used up: set GITHUB_TOKEN" in capsys.readouterr().err


def test_the_token_goes_to_the_api_only_and_is_never_printed(
    server: FakeSources, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    del server.routes["/package_index.json"]
    with pytest.raises(SystemExit):
        main(_run(server))
    captured = capsys.readouterr()
    assert TOKEN not in captured.out + captured.err
    for path, auth in server.requests:
        assert auth == (f"Bearer {TOKEN}" if path.startswith("/api/") else ""), path
    assert any(path.startswith("/api/") for path, _ in server.requests)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["LIB"], "takes no LIBRARY_REPO_DIR"),
        (["--check"], "takes no LIBRARY_REPO_DIR and no --check"),
        (["--api-url", "ftp://x"], "not an http(s) URL"),
        (["--api-url", "http://example.com"], "plain http to another machine"),
        (["--library-index", "https://u:p@example.com/i.json"], "must not carry credentials"),
        (["--package-index", "file:///i.json"], "--package-index 'file:///i.json' is not"),
    ],
)
def test_bad_outdated_arguments_are_refused(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["workflows", "--outdated", *extra])
    assert exit_info.value.code == 1
    assert message in capsys.readouterr().err


def test_the_source_options_go_with_outdated_only(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["workflows", str(tmp_path), "--api-url", "https://api.github.com"])
    assert "--api-url go with --outdated only" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["workflows"])
    assert "pass LIBRARY_REPO_DIR" in capsys.readouterr().err


def test_an_archive_without_the_index_or_not_an_archive_is_named() -> None:
    answers = {
        "http://h/package_index.tar.bz2": _tar_bz2("other.json", {}),
        "http://h/library_index.json.gz": b"not gzip",
    }
    sources = Sources(
        api_url="http://h",
        package_index="http://h/package_index.tar.bz2",
        library_index="http://h/library_index.json.gz",
        fetch=lambda url, headers: answers[url],
    )
    findings = check_pins([_pin("arduino:zephyr"), _pin("Arduino_RouterBridge")], sources)
    assert [f.error for f in findings] == [
        "http://h/package_index.tar.bz2 holds no file package_index.json",
        "http://h/library_index.json.gz is not a readable archive (Error -3 while "
        "decompressing data: incorrect header check)",
    ]


def test_the_table_lines_up_and_marks_what_is_newer() -> None:
    pin = Pin("o/r", "action", "v1.0.0", "o/r", "1" * 40, ("ci.yml:3",))
    table = pin_table([Finding(pin, "GitHub releases of o/r", "v1.10.0", "2" * 40)])
    assert table.splitlines() == [
        "pin  current  newest           source",
        "---  -------  ---------------  ----------------------",
        "o/r  v1.0.0   v1.10.0 (newer)  GitHub releases of o/r",
        "",
        f"o/r (ci.yml:3): bump to `uses: o/r@{'2' * 40} # v1.10.0`",
    ]


def test_a_host_that_did_not_answer_is_not_asked_again() -> None:
    asked: list[str] = []

    def refuse(url: str, headers: Any) -> bytes:
        asked.append(url)
        raise PinError(f"cannot reach {url} (ConnectionError)", unreachable=True)

    sources = Sources(api_url="http://h/api", package_index="http://i/p.json", fetch=refuse)
    findings = check_pins(
        [_pin("actions/checkout"), _pin("actions/cache"), _pin("arduino:zephyr")], sources
    )
    assert asked == [
        "http://h/api/repos/actions/checkout/releases/latest",
        "http://i/p.json",
    ]
    assert findings[1].error == (
        "cannot reach http://h/api/repos/actions/cache/releases/latest "
        "(not tried: a connection to h failed before)"
    )


def _corrupt_gz() -> bytes:
    good = gzip.compress(json.dumps(_package_index("0.55.2")).encode() * 50)
    return good[:20] + bytes(b ^ 0xFF for b in good[20:40]) + good[40:]


#: Answers of the package index that are not what they claim -> what the error says.
BAD_INDEXES = {
    "corrupt-gz": ("package_index.json.gz", _corrupt_gz(), "is not a readable archive (Error -3"),
    "cut-gz": (
        "package_index.json.gz",
        gzip.compress(b'{"packages": []}')[:-12],
        "is not a readable archive (it ends early)",
    ),
    "gz-bomb": (
        "package_index.json.gz",
        gzip.compress(b" " * 3000),
        "unpacks to more than 0.00190735 MiB",
    ),
    "tar-bomb": (
        "package_index.tar.bz2",
        _tar_bz2("package_index.json", {"packages": [" " * 3000]}),
        "unpacks to more than 0.00190735 MiB",
    ),
    "deep": ("package_index.json", b"[" * 100_000 + b"]" * 100_000, "(nested too deeply)"),
    "nan": (
        "package_index.json",
        b'{"packages": [{"name": "arduino", "platforms": [{"version": NaN}]}]}',
        "did not answer JSON (NaN is not JSON)",
    ),
}


@pytest.mark.parametrize("case", BAD_INDEXES)
def test_an_index_that_is_not_what_it_claims_is_exit_2_naming_it(
    case: str,
    server: FakeSources,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    name, body, said = BAD_INDEXES[case]
    monkeypatch.setattr(pins, "MAX_UNPACKED", 2000)
    server.routes[f"/{name}"] = (200, body, {})
    argv = _run(server)
    argv[argv.index("--package-index") + 1] = f"{server.url}/{name}"
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"could not read the package index ({server.url}/{name} " in err
    assert said in err and "Traceback" not in err


def test_an_answer_too_big_or_too_slow_is_exit_2_naming_it(
    server: FakeSources, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(pins, "MAX_DOWNLOAD", 1000)
    server.routes["/library_index.json"] = (200, b" " * 1001 + b"{}", {})
    with pytest.raises(SystemExit) as exit_info:
        main(_run(server))
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"{server.url}/library_index.json answered more than 0.000953674 MiB" in err
    monkeypatch.setattr(pins, "MAX_DOWNLOAD", 64 * 2**20)
    ticks = iter(range(0, 100_000, 400))  # each look at the clock: 400 s later
    monkeypatch.setattr(time, "monotonic", lambda: float(next(ticks)))
    with pytest.raises(SystemExit) as exit_info:
        main(_run(server))
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "took more than 300 s to answer" in err and "Traceback" not in err
