import pytest

from generator.library.version import (
    highest,
    is_greater,
    library_version,
    semver_from_upstream,
    suggest_next,
)
from generator.util.errors import FatalError


@pytest.mark.parametrize(
    ("upstream", "expected"),
    [
        ("1.5.1", "1.5.1"),
        ("1.5.1\n", "1.5.1"),
        ("1.5", "1.5.0"),
        ("1.5.0a0", "1.5.0-alpha.0"),
        ("1.6.0a0", "1.6.0-alpha.0"),
        ("1.5.0b1", "1.5.0-beta.1"),
        ("1.5.0rc2", "1.5.0-rc.2"),
        ("1.6.0rc1", "1.6.0-rc.1"),
        ("1.5.0.dev3", "1.5.0-dev.3"),
        ("1.5.0a0.dev1", "1.5.0-alpha.0.dev.1"),
        ("1.5.1+cpu", "1.5.1"),
    ],
)
def test_semver_from_upstream(upstream: str, expected: str) -> None:
    assert semver_from_upstream(upstream) == expected


@pytest.mark.parametrize(
    ("ref", "upstream", "expected"),
    [
        ("v1.6.0-rc1", "1.6.0", "1.6.0-rc.1"),
        ("v1.6.0-rc.3", "1.6.0", "1.6.0-rc.3"),
        ("refs/tags/v1.0.0-rc2", "1.0.0", "1.0.0-rc.2"),
        ("1.6.0rc4", "1.6.0", "1.6.0-rc.4"),
        # version.txt's own suffix wins; an ordinary ref changes nothing
        ("v1.6.0-rc1", "1.6.0rc1", "1.6.0-rc.1"),
        ("v1.5.1", "1.5.1", "1.5.1"),
        ("main", "1.6.0a0", "1.6.0-alpha.0"),
    ],
)
def test_release_candidate_tags(ref: str, upstream: str, expected: str) -> None:
    assert library_version(upstream, None, ref) == expected


def test_release_candidate_tag_of_another_version_is_refused() -> None:
    with pytest.raises(FatalError, match=r"tag of 1\.6\.0.*says '1\.5\.0'.*--library-version"):
        library_version("1.5.0", None, "v1.6.0-rc1")


@pytest.mark.parametrize("bad", ["banana", "1.5.1.post1", "1!1.5.1", "1.2.3.4", ""])
def test_semver_from_upstream_refuses(bad: str) -> None:
    with pytest.raises(FatalError, match="--library-version"):
        semver_from_upstream(bad)


def test_explicit_version_wins() -> None:
    assert library_version("1.5.0", "0.3.0") == "0.3.0"
    assert library_version("1.5.0a0", None) == "1.5.0-alpha.0"


@pytest.mark.parametrize(
    "good", ["1.2.3", "1.6.0-rc.1", "1.6.0-alpha.0", "2.0.0-x.7.z.92", "999999999.0.0-rc.9"]
)
def test_explicit_version_takes_any_semver(good: str) -> None:
    assert library_version("1.5.0", good) == good


@pytest.mark.parametrize("meta", ["1.2.3+meta", "2.0.0-x.7.z.92+b5"])
def test_explicit_version_with_build_metadata_is_refused_as_the_same_release(meta: str) -> None:
    plain = meta.partition("+")[0]
    with pytest.raises(FatalError, match=rf"ignores when it orders .* take it for {plain} "):
        library_version("1.5.0", meta)


@pytest.mark.parametrize(
    ("long", "digits"),
    [("1234567890123456789012.0.0", 22), ("1.1234567890.0", 10), ("1.0.0-rc.1234567890", 10)],
)
def test_explicit_version_numbers_have_at_most_9_digits(long: str, digits: int) -> None:
    with pytest.raises(FatalError, match=f"a number of {digits} digits .* at most 9 digits"):
        library_version("1.5.0", long)


@pytest.mark.parametrize("bad", ["v1.2.3", "1.2", "01.2.3", "1.2.3-01", "1.2.3 ", "x", "1.2.3-"])
def test_explicit_version_must_be_semver(bad: str) -> None:
    with pytest.raises(FatalError, match="Semantic Version X.Y.Z"):
        library_version("1.5.0", bad)


@pytest.mark.parametrize(
    ("version", "published", "expected"),
    [
        ("1.5.1", (), "1.5.2"),
        ("1.6.0-alpha.0", (), "1.6.0-alpha.1"),
        ("1.6.0-rc.1", (), "1.6.0-rc.2"),
        ("1.6.0-rc", (), "1.6.0-rc.1"),
        ("1.5.0", ("1.6.0",), "1.6.1"),
        ("1.6.0-alpha.0", ("1.6.0-alpha.3", "0.2.0", "junk"), "1.6.0-alpha.4"),
        ("1.5.0+build.7", (), "1.5.1"),
        ("junk", (), "a greater X.Y.Z"),
    ],
)
def test_suggest_next(version: str, published: tuple[str, ...], expected: str) -> None:
    suggestion = suggest_next(version, *published)
    assert suggestion == expected
    if expected[0].isdigit() and "-" in version:
        # never ranks above the next real release of a pre-release
        assert not is_greater(suggestion, version.split("-")[0])


def test_precedence() -> None:
    assert is_greater("1.6.0", "1.6.0-rc.9")
    assert is_greater("1.6.0-rc.10", "1.6.0-rc.9")  # numeric, not text
    assert is_greater("1.6.0-beta.1", "1.6.0-alpha.9")
    assert not is_greater("1.5.0+b2", "1.5.0+b1")  # build metadata does not count
    assert highest(["0.2.0", "1.6.0-rc.1", "junk", "1.5.1"]) == "1.6.0-rc.1"
    assert highest(["junk"]) is None
