"""The runners of `python -m generator workflows`: `install_workflows` installs the library
repo's GitHub workflows (sync, CI, release), pinned to this generator's repo URL and commit, or
(`--check`) only compares; `report_outdated` (`--outdated`) reports the templates' pins that
have newer releases (`generator.workflows.pins`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from generator import PROJECT_ROOT
from generator.util.errors import FatalError
from generator.util.urls import display_url
from generator.workflows.pins import (
    GITHUB_API_URL,
    LIBRARY_INDEX_URL,
    PACKAGE_INDEX_URL,
    Sources,
    check_pins,
    pin_table,
    read_pins,
)
from generator.workflows.render import (
    WORKFLOWS_DIR,
    check_generator_repo,
    read_templates,
    render_workflows,
    workflow_drift,
    write_workflows,
)


def _open_checkout(checkout: Path, what: str) -> Any:
    """The GitPython `Repo` of `checkout` (FatalError when it is none)."""
    import git

    try:
        return git.Repo(checkout)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise FatalError(
            f"the generator at {checkout} is not a git checkout, so it has no {what}; "
            "pass --generator-repo and --generator-ref"
        ) from None


def default_generator_repo(checkout: Path = PROJECT_ROOT) -> str:
    """The `remote.origin.url` of the generator checkout, if it can be pinned (see
    `generator.workflows.render.check_generator_repo`).

    Raises:
        FatalError: not a git checkout, no origin remote, or an origin that is not a
            credential-free https URL.
    """
    import git

    repo = _open_checkout(checkout, "origin remote")
    try:
        # The configured value, not `git remote get-url`: an insteadOf rewrite in the user's
        # git config (https -> ssh, say) is theirs, not the generator's public URL.
        url = str(repo.git.config("--get", "remote.origin.url")).strip()
    except git.GitCommandError:
        raise FatalError(
            f"the generator checkout {checkout} has no origin remote; pass --generator-repo "
            "https://HOST/OWNER/NAME.git"
        ) from None
    if not url.startswith("https://"):
        raise FatalError(
            f"the origin remote of the generator checkout is {url!r}, not an https URL; the "
            "library repo's workflows fetch the generator anonymously over https: pass "
            "--generator-repo https://HOST/OWNER/NAME.git"
        )
    return check_generator_repo(url)


def default_generator_ref(checkout: Path = PROJECT_ROOT, *, allow_dirty: bool = False) -> str:
    """The full SHA of HEAD of the generator checkout.

    Warns (stderr) when no remote-tracking branch contains HEAD: the workflows can fetch it
    only once it is pushed.

    Raises:
        FatalError: not a git checkout, no commit yet, or uncommitted changes (tracked or
            untracked files) without `allow_dirty`.
    """
    import git

    repo = _open_checkout(checkout, "HEAD to pin")
    try:
        sha = str(repo.head.commit.hexsha)
    except ValueError:
        raise FatalError(f"the generator checkout {checkout} has no commit yet") from None
    if not allow_dirty and repo.is_dirty(untracked_files=True):
        raise FatalError(
            f"the generator checkout {checkout} has uncommitted changes; the workflows would "
            f"pin HEAD ({sha[:12]}) without them: commit and push them first, or pass "
            "--allow-dirty (or --generator-ref SHA)"
        )
    try:
        on_remote = bool(str(repo.git.branch("-r", "--contains", sha)).strip())
    except git.GitCommandError:
        on_remote = False
    if not on_remote:
        print(
            f"warning: HEAD {sha[:12]} is on no remote-tracking branch; push it before the "
            "library repo runs these workflows",
            file=sys.stderr,
        )
    return sha


def install_workflows(
    library: Path,
    *,
    generator_repo: str | None = None,
    generator_ref: str | None = None,
    allow_dirty: bool = False,
    check: bool = False,
    checkout: Path = PROJECT_ROOT,
) -> int:
    """Render the workflows for the generator pin and write them into the library repo, or
    with `check` compare only; what was written, or what differs, is printed.

    Args:
        library: the library repo's checkout.
        generator_repo, generator_ref: the generator pin (https git URL, full commit SHA);
            None: the origin remote and HEAD of `checkout` (`default_generator_repo`,
            `default_generator_ref`, which refuses a dirty checkout unless `allow_dirty`).
        check: compare only, write nothing.
        checkout: the generator checkout whose origin and HEAD are the default pin.
    Returns:
        0 when written, or (`check`) when every workflow is up to date; 1 when `check`
        found workflows missing or different (their names are printed).
    Raises:
        FatalError: bad URL or ref, dirty checkout, a library folder that does not exist,
            a file that cannot be written.
    """
    if not library.is_dir():
        raise FatalError(f"{library} is not a folder; pass the library repo's checkout")
    repo = generator_repo or default_generator_repo(checkout)
    ref = generator_ref or default_generator_ref(checkout, allow_dirty=allow_dirty)
    rendered = render_workflows(repo, ref)
    if check:
        drift = workflow_drift(library, rendered)
        if drift:
            print(f"out of date in {library / WORKFLOWS_DIR}:")
            for name in drift:
                state = "differs" if (library / WORKFLOWS_DIR / name).is_file() else "missing"
                print(f"  {name} ({state})")
            pins = ""
            if generator_repo:
                pins += f" --generator-repo {generator_repo}"
            if generator_ref:
                pins += f" --generator-ref {generator_ref}"
            print(f"update them with: python -m generator workflows {library}{pins}")
            return 1
        print(f"{library / WORKFLOWS_DIR}: up to date with the generator at {ref[:12]}")
        return 0
    for path in write_workflows(library, rendered):
        print(f"wrote {path}")
    print(f"pinned to the generator {repo} at {ref}")
    return 0


def _index_url(url: str, option: str) -> str:
    """`url` if it is an http(s) URL with a host and no credentials (FatalError otherwise)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FatalError(f"{option} {display_url(url)!r} is not an http(s) URL with a host")
    if parts.username is not None or parts.password is not None:
        raise FatalError(f"{option} must not carry credentials; pass the plain URL")
    return url


def report_outdated(
    *,
    api_url: str | None = None,
    package_index: str | None = None,
    library_index: str | None = None,
) -> int:
    """`workflows --outdated`: print each pin of the templates with its newest release.

    The token (GITHUB_TOKEN, optional: without it GitHub allows 60 requests an hour) goes
    to the API root only and is never printed.

    Args:
        api_url: GitHub's REST API root (None: `GITHUB_API_URL`).
        package_index, library_index: the Arduino package index and Library Manager index
            URLs (None: `PACKAGE_INDEX_URL`, `LIBRARY_INDEX_URL`).
    Returns:
        0 when every pin is the newest release and every action's SHA is its tag's commit,
        1 otherwise (a pin not in a checkable shape, `generator.workflows.pins.read_pins`,
        included).
    Raises:
        FatalError: a bad URL, and (exit code 2, after the table) a source that could not be
            read, named.
    """
    from generator.vcs.remote_inputs import check_api_url

    api_url = api_url or GITHUB_API_URL
    check_api_url(api_url)
    sources = Sources(
        api_url=api_url,
        token=os.environ.get("GITHUB_TOKEN") or None,
        package_index=_index_url(package_index or PACKAGE_INDEX_URL, "--package-index"),
        library_index=_index_url(library_index or LIBRARY_INDEX_URL, "--library-index"),
    )
    findings = check_pins(read_pins(read_templates()), sources)
    print(pin_table(findings))
    failed: dict[str, str] = {}
    for f in findings:
        if f.error:
            where = {
                "core": "the package index",
                "library": "the library index",
            }.get(f.pin.kind, f"GitHub's API at {sources.api_url}")
            failed.setdefault(where, f.error)
    if failed:
        raise FatalError(
            "the table is incomplete: could not read "
            + "; ".join(f"{where} ({error})" for where, error in failed.items())
            + ". Check the network, GITHUB_TOKEN and the URLs (--api-url, --package-index, "
            "--library-index)",
            exit_code=2,
        )
    return 1 if any(f.outdated or f.problems for f in findings) else 0
