import pytest

from generator.errors import FatalError
from generator.version import library_version, semver_from_upstream


@pytest.mark.parametrize(
    ("upstream", "expected"),
    [
        ("1.5.1", "1.5.1"),
        ("1.5.1\n", "1.5.1"),
        ("1.5", "1.5.0"),
        ("1.5.0a0", "1.5.0-alpha.0"),
        ("1.5.0b1", "1.5.0-beta.1"),
        ("1.5.0rc2", "1.5.0-rc.2"),
        ("1.5.0.dev3", "1.5.0-dev.3"),
        ("1.5.0a0.dev1", "1.5.0-alpha.0.dev.1"),
        ("1.5.1+cpu", "1.5.1"),
    ],
)
def test_semver_from_upstream(upstream: str, expected: str) -> None:
    assert semver_from_upstream(upstream) == expected


@pytest.mark.parametrize("bad", ["banana", "1.5.1.post1", "1!1.5.1", "1.2.3.4", ""])
def test_semver_from_upstream_refuses(bad: str) -> None:
    with pytest.raises(FatalError, match="--library-version"):
        semver_from_upstream(bad)


def test_explicit_version_wins() -> None:
    assert library_version("1.5.0", "0.3.0") == "0.3.0"
    assert library_version("1.5.0a0", None) == "1.5.0-alpha.0"


@pytest.mark.parametrize("bad", ["v1.2.3", "1.2", "01.2.3", "1.2.3-rc1", "1.2.3 ", "x"])
def test_explicit_version_must_be_strict(bad: str) -> None:
    with pytest.raises(FatalError, match="X.Y.Z"):
        library_version("1.5.0", bad)
