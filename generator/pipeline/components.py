"""What each vendored component is: read from `data/vendored/*.yaml` (data, not code).

The code here is what the data cannot say (data/vendored/README.md): which components the build
reads, in which order (`THIRD_PARTY`), and what each `pin` kind means (`pinned_revision`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from generator import data_dir
from generator.util.errors import FatalError
from generator.util.urls import display_url
from generator.vcs.checkout import Checkout, gitlink, submodule_url

VENDORED_DIR = data_dir("vendored")


@dataclass(frozen=True)
class CopyRule:
    """Copy files matching `include` (minus `exclude`) below `source` to `dest`.

    Globs are relative to `source`; `**` matches any number of folders. An `optional` rule
    may match nothing (files that only some refs have); any other rule must match a file.
    """

    source: str
    dest: str
    include: tuple[str, ...]
    exclude: tuple[str, ...] = ()
    optional: bool = False


@dataclass(frozen=True)
class Component:
    """One vendored component (see data/vendored/README.md for the keys)."""

    key: str
    name: str
    owner: str
    url: str
    pin: dict[str, str]
    license: str
    license_file: str
    license_dest: str
    location: str
    checkout: tuple[str, ...]
    files: tuple[CopyRule, ...]


def _rule(raw: dict[str, Any]) -> CopyRule:
    optional = raw.get("optional", False)
    if not isinstance(optional, bool):
        raise TypeError(f"`optional` must be true or false, not {optional!r}")
    return CopyRule(
        source=str(raw["from"]),
        dest=str(raw["to"]),
        include=tuple(raw.get("include", ["**/*"])),
        exclude=tuple(raw.get("exclude", [])),
        optional=optional,
    )


#: The `role` of a component the build ships (the default); `data/vendored/arduinocore-api.yaml`
#: is `check-core`: the Arduino API `check` compiles against, never in a library.
LIBRARY_ROLE = "library"
#: libyaml's safe loader when PyYAML has it (about ten times faster), else the pure-Python one.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_component(key: str, folder: Path = VENDORED_DIR) -> Component:
    """Read `data/vendored/<key>.yaml`, a component the build ships.

    Raises:
        FatalError: when the file is missing, lacks a required key, or describes a component
            of another `role` (not shipped in a library).
    """
    path = folder / f"{key}.yaml"
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=SAFE_LOADER)
        role = raw.get("role", LIBRARY_ROLE)
        if role != LIBRARY_ROLE:
            raise FatalError(
                f"{path} describes {raw['name']}, whose role is {role!r}: it is not shipped in "
                f"a library, so the build cannot vendor it (see data/vendored/README.md)"
            )
        return Component(
            key=key,
            name=raw["name"],
            owner=raw.get("owner", ""),
            url=raw["url"],
            pin=dict(raw["pin"]),
            license=raw["license"],
            license_file=raw["license_file"],
            license_dest=raw.get(
                "license_dest", f"extras/THIRD_PARTY_LICENSES/{raw['name']}-LICENSE.txt"
            ),
            location=raw.get("location", ""),
            checkout=tuple(raw["checkout"]),
            files=tuple(_rule(r) for r in raw.get("files", [])),
        )
    except (OSError, KeyError, TypeError, AttributeError, yaml.YAMLError) as e:
        raise FatalError(f"{path} is not a valid component description: {e!r}") from None


#: The third-party components (`data/vendored/<key>.yaml`), in the order PROVENANCE and the licenses
#: README list them; the build hands each on by name (`generator.pipeline.sources.ThirdParty`).
THIRD_PARTY = ("flatbuffers", "flatcc", "cmsis-nn")


def pinned_revision(component: Component, executorch: Checkout) -> tuple[str, str]:
    """The (url, revision) of `component` that the ExecuTorch checkout pins.

    `gitlink`: the submodule commit, and the component's canonical URL, which the URL
    `.gitmodules` gives for it must name (`_canonical_submodule`).
    `cmake`: the 40-hex SHA that `variable` is set to in `file`.

    Raises:
        FatalError: when the tree does not pin it the expected way.
    """
    kind = component.pin["kind"]
    if kind == "gitlink":
        path = component.pin["path"]
        return _canonical_submodule(component, executorch, submodule_url(executorch, path)), (
            gitlink(executorch, path)
        )
    if kind == "cmake":
        file, variable = component.pin["file"], component.pin["variable"]
        try:
            text = executorch.read_text(file)
        except FileNotFoundError:
            raise FatalError(
                f"ExecuTorch at {executorch.sha[:12]} has no {file}, which pins "
                f"{component.name}; this ref predates the Cortex-M backend (try a newer ref)"
            ) from None
        # A commit SHA on recent refs; a tag (e.g. "v7.0.0") on older ones.
        match = re.search(rf"set\(\s*{re.escape(variable)}\s+\"?([A-Za-z0-9._/-]+)\"?", text)
        if not match:
            raise FatalError(
                f"{file} at {executorch.sha[:12]} does not set {variable}; cannot tell which "
                f"{component.name} revision to vendor. This ref is not supported; pick a newer one"
            )
        revision = match.group(1)
        return component.url, revision.lower() if re.fullmatch(
            r"[0-9a-fA-F]{40}", revision
        ) else revision
    raise FatalError(f"data/vendored/{component.key}.yaml: unknown pin kind {kind!r}")


def _same_repo(url: str) -> str:
    """`url` compared as GitHub compares repository URLs: no trailing `/` or `.git`, any case."""
    return url.strip().rstrip("/").removesuffix(".git").lower()


def _canonical_submodule(component: Component, executorch: Checkout, url: str) -> str:
    """The component's canonical URL (`url:` of its `data/vendored/<key>.yaml`), when the
    URL the ref's `.gitmodules` gives for it (`url`) names that same repository.

    The ref is untrusted (issue 29): its `.gitmodules` could name a local path, a `file://`
    URL, a relative URL (resolved against the cached clone's folder) or another host, and the
    build would fetch from there and vendor what it found, a private repository of the same
    user included. Every ExecuTorch `.gitmodules` on the mirror (296 versions, 2026-12-04)
    gives the canonical URL for FlatBuffers and flatcc, but one branch's fork of FlatBuffers.

    Raises:
        FatalError: naming the URL given (without user-info), the component, the ref and the
            URL expected.
    """
    if _same_repo(url) == _same_repo(component.url):
        return component.url
    raise FatalError(
        f".gitmodules of ExecuTorch at {executorch.sha[:12]} gives {display_url(url)!r} for "
        f"{component.name}, not its canonical {component.url}; an upstream tree is untrusted "
        "input, so the build fetches a component only from the URL data/vendored/ names "
        "(git's url.<base>.insteadOf maps that one to a mirror)"
    )
