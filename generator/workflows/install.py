"""`python -m generator workflows LIBRARY_REPO_DIR`: install the library repo's GitHub workflows
(sync, CI, release), pinned to this generator's repo URL and commit; `--check` only compares.
`python -m generator workflows --outdated` reports the templates' pins that have newer releases
(`generator.workflows.pins`)."""

from __future__ import annotations

import argparse
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


def add_workflows_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `workflows` verb's options."""
    workflows = verbs.add_parser(
        "workflows",
        help="install the library repo's GitHub workflows (sync, CI, release), pinned to this "
        "generator",
    )
    workflows.add_argument(
        "library",
        type=Path,
        nargs="?",
        metavar="LIBRARY_REPO_DIR",
        help="checkout of the library repo (not with --outdated)",
    )
    workflows.add_argument(
        "--generator-repo",
        metavar="URL",
        help="https git URL the workflows fetch the generator from (default: the origin "
        "remote of this generator's checkout)",
    )
    workflows.add_argument(
        "--generator-ref",
        metavar="SHA",
        help="full commit SHA of the generator the workflows run (default: HEAD of this "
        "generator's checkout, which must be clean)",
    )
    workflows.add_argument(
        "--allow-dirty",
        action="store_true",
        help="pin HEAD even when this checkout has uncommitted changes (they are not in HEAD)",
    )
    workflows.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 and list the workflows that are missing or differ",
    )
    outdated = workflows.add_argument_group(
        "pins", "--outdated: the templates' pins against their newest releases"
    )
    outdated.add_argument(
        "--outdated",
        action="store_true",
        help="list every pin of the templates (actions, arduino-cli, arduino-lint, the core, "
        "the library) with its newest release; exit 1 when one is older, an action's SHA "
        "is not its tag's commit or a pin is not in a shape it can check, 2 when a source "
        "cannot be read (token from GITHUB_TOKEN, optional)",
    )
    outdated.add_argument(
        "--api-url",
        metavar="URL",
        help="GitHub REST API root (default: https://api.github.com)",
    )
    outdated.add_argument(
        "--package-index",
        metavar="URL",
        help="Arduino package index, .json, .gz or .tar.bz2 (default: "
        "https://downloads.arduino.cc/packages/package_index.tar.bz2)",
    )
    outdated.add_argument(
        "--library-index",
        metavar="URL",
        help="Library Manager index, .json, .gz or .tar.bz2 (default: "
        "https://downloads.arduino.cc/libraries/library_index.tar.bz2)",
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


def workflows(args: argparse.Namespace, checkout: Path = PROJECT_ROOT) -> int:
    """Render the workflows for the generator pin and write them into the library repo, or
    with `--check` compare only.

    Args:
        args: the parsed `workflows` command line.
        checkout: the generator checkout whose origin and HEAD are the default pin.
    Returns:
        0 when written, or (`--check`) when every workflow is up to date; 1 when `--check`
        found workflows missing or different (their names are printed).
    Raises:
        FatalError: bad URL or ref, dirty checkout, a library folder that does not exist,
            a file that cannot be written.
    """
    if getattr(args, "outdated", False):
        return outdated(args)
    given = [
        flag
        for flag, value in (
            ("--api-url", getattr(args, "api_url", None)),
            ("--package-index", getattr(args, "package_index", None)),
            ("--library-index", getattr(args, "library_index", None)),
        )
        if value
    ]
    if given:
        raise FatalError(f"{', '.join(given)} go with --outdated only")
    library: Path | None = args.library
    if library is None:
        raise FatalError(
            "pass LIBRARY_REPO_DIR, the library repo's checkout (or --outdated to report pins)"
        )
    if not library.is_dir():
        raise FatalError(f"{library} is not a folder; pass the library repo's checkout")
    repo = args.generator_repo or default_generator_repo(checkout)
    ref = args.generator_ref or default_generator_ref(checkout, allow_dirty=args.allow_dirty)
    rendered = render_workflows(repo, ref)
    if args.check:
        drift = workflow_drift(library, rendered)
        if drift:
            print(f"out of date in {library / WORKFLOWS_DIR}:")
            for name in drift:
                state = "differs" if (library / WORKFLOWS_DIR / name).is_file() else "missing"
                print(f"  {name} ({state})")
            pins = ""
            if args.generator_repo:
                pins += f" --generator-repo {args.generator_repo}"
            if args.generator_ref:
                pins += f" --generator-ref {args.generator_ref}"
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


def outdated(args: argparse.Namespace) -> int:
    """`workflows --outdated`: print each pin of the templates with its newest release.

    The token (GITHUB_TOKEN, optional: without it GitHub allows 60 requests an hour) goes
    to the API root only and is never printed.

    Returns:
        0 when every pin is the newest release and every action's SHA is its tag's commit,
        1 otherwise (a pin not in a checkable shape, `generator.workflows.pins.read_pins`,
        included).
    Raises:
        FatalError: a LIBRARY_REPO_DIR or --check with it, a bad URL, and (exit code 2,
            after the table) a source that could not be read, named.
    """
    if args.library is not None or args.check:
        raise FatalError(
            "--outdated reads the generator's own templates: it takes no LIBRARY_REPO_DIR "
            "and no --check"
        )
    from generator.vcs.remote_inputs import check_api_url

    api_url = args.api_url or GITHUB_API_URL
    check_api_url(api_url)
    sources = Sources(
        api_url=api_url,
        token=os.environ.get("GITHUB_TOKEN") or None,
        package_index=_index_url(args.package_index or PACKAGE_INDEX_URL, "--package-index"),
        library_index=_index_url(args.library_index or LIBRARY_INDEX_URL, "--library-index"),
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
