"""A fake GitHub REST API for the sync tests, validated against GitHub's OpenAPI description."""

from .server import FakeGitHub, Pull
from .spec import GitHubSpec, load, missing_reason

__all__ = ["FakeGitHub", "GitHubSpec", "Pull", "load", "missing_reason"]
