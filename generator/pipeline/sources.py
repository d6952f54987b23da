"""Steps 1 and 2: the sources. ExecuTorch at the ref (its version.txt and Cortex-M backend
checked), and each third-party component at the commit that ExecuTorch tree pins
(`components.py`, `check_out_third_party`), checked out into the cache by
`generator/vcs/checkout.py`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from generator.library.version import library_version
from generator.pipeline.components import THIRD_PARTY, Component, load_component, pinned_revision
from generator.util.errors import FatalError
from generator.util.ui import Reporter
from generator.util.urls import display_url
from generator.vcs.checkout import Checkout, checkout

#: What a ref's version.txt may say: one PEP 440 version's characters (PEP 440, "Version
#: scheme": digits, letters, `.`, `+`, `-`, `_`, `!`), 64 at most; ExecuTorch's say e.g.
#: `1.5.0` or `1.6.0a0`. A ref is untrusted and the text is written into library.properties'
#: paragraph (a line break there would add properties of its own) and PROVENANCE.txt.
_VERSION_TXT = re.compile(r"[0-9A-Za-z.+!_-]{1,64}")


@dataclass(frozen=True)
class ExecutorchSource:
    """ExecuTorch at the ref, and what the library is called for it.

    Attributes:
        component: `data/vendored/executorch.yaml`; checkout: the work tree at the pinned SHA.
        upstream_version: the ref's version.txt, verbatim.
        library_version: the Library Manager version (given, or derived from version.txt).
    """

    component: Component
    checkout: Checkout
    upstream_version: str
    library_version: str

    @property
    def root(self) -> Path:
        """The work tree."""
        return self.checkout.path

    @property
    def sha(self) -> str:
        """The full SHA the ref resolved to (the pin)."""
        return self.checkout.sha


@dataclass(frozen=True)
class PinnedSource:
    """A third-party component at the commit ExecuTorch pins.

    Attributes:
        component: its `data/vendored/<key>.yaml`; url: where it was checked out from, for display
        (no user-info); sha: the full SHA; path: the work tree.
    """

    component: Component
    url: str
    sha: str
    path: Path


@dataclass(frozen=True)
class ThirdParty:
    """The third-party components, by name (`components.THIRD_PARTY` lists their keys)."""

    flatbuffers: PinnedSource
    flatcc: PinnedSource
    cmsis_nn: PinnedSource

    @property
    def all(self) -> tuple[PinnedSource, ...]:
        """Every component, in `components.THIRD_PARTY` order (how PROVENANCE lists them)."""
        return (self.flatbuffers, self.flatcc, self.cmsis_nn)


def read_executorch(
    component: Component,
    co: Checkout,
    requested_version: str | None,
) -> ExecutorchSource:
    """The checked-out ExecuTorch `co`, with its version.txt and the library version.

    Args:
        requested_version: `--library-version`, or None to derive it from version.txt.
    Raises:
        FatalError: the tree has no version.txt (not ExecuTorch), or one that is not one line
            of a version's characters (`_VERSION_TXT`: even with `requested_version`, since it
            is written into library.properties' paragraph), or no backends/cortex_m (a ref
            older than the Cortex-M backend); a version that cannot be derived.
    """
    try:
        upstream_version = co.read_text("version.txt").strip()
    except FileNotFoundError:
        raise FatalError(
            f"{display_url(co.url)} at {co.sha[:12]} has no version.txt; is "
            "this an ExecuTorch repository?"
        ) from None
    if not _VERSION_TXT.fullmatch(upstream_version):
        raise FatalError(
            f"{display_url(co.url)} at {co.sha[:12]} has a version.txt of "
            f"{upstream_version[:80]!r}{'...' if len(upstream_version) > 80 else ''}, which is "
            "not one line of a version (at most 64 letters, digits and . + - _ !): refusing "
            "this ref (its version.txt goes into library.properties and PROVENANCE.txt)"
        )
    version = library_version(upstream_version, requested_version, co.ref)
    if not (co.path / "backends" / "cortex_m").is_dir():
        raise FatalError(
            f"ExecuTorch at {co.sha[:12]} has no backends/cortex_m; the Arduino library needs "
            "the Cortex-M backend, which this ref predates: pick a newer ref"
        )
    return ExecutorchSource(component, co, upstream_version, version)


def check_out_pinned(
    component: Component, url: str, rev: str, executorch: Checkout, cache: Path
) -> PinnedSource:
    """Check out `component` at `rev` of `url` (what `components.pinned_revision` read from
    the `executorch` checkout).

    Raises:
        FatalError: the pinned commit cannot be checked out: the message names the component,
            the pin and the URL (without credentials), and, since the user chose neither, says
            which remote or mirror lacks it rather than what a ref may be.
    """
    try:
        co = checkout(url, rev, component.checkout, cache, pinned=True)
    except FatalError as e:
        raise FatalError(
            f"ExecuTorch at {executorch.sha[:12]} pins {component.name} at {rev}, which cannot "
            f"be checked out: {e}"
        ) from None
    return PinnedSource(component, display_url(url), co.sha, co.path)


def check_out_third_party(source: ExecutorchSource, cache: Path, rep: Reporter) -> ThirdParty:
    """Check out each third-party component at the commit the ExecuTorch tree `source` pins,
    one step of `rep` each.

    Raises:
        FatalError: a pin that cannot be read or checked out (`check_out_pinned`).
    """
    pinned: dict[str, PinnedSource] = {}
    for key in THIRD_PARTY:
        component = load_component(key)
        url, rev = pinned_revision(component, source.checkout)
        with rep.step(f"check out {component.name} {rev[:12]}"):
            pinned[key] = check_out_pinned(component, url, rev, source.checkout, cache)
    return ThirdParty(
        flatbuffers=pinned["flatbuffers"], flatcc=pinned["flatcc"], cmsis_nn=pinned["cmsis-nn"]
    )
