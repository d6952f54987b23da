"""A snapshot of the user's global git config, for git commands that hold the token after
untrusted code of the same user ran (issue 29: a plain `sync`'s prepare child).

That code could have written `$GIT_CONFIG_GLOBAL`, `~/.gitconfig` or
`$XDG_CONFIG_HOME/git/config` (or a file they include): `remote.origin.receivepack`,
`core.fsmonitor`, `http.proxy` with `http.sslVerify=false` and the like run programs in, or
steer the token of, the parent's later git. So the parent reads the global config before
the child starts (`snapshot_global_config`: `git config --global --list --includes`, each
include read then) and, once the child is gone, its git reads only a private copy of that
(`config_text`, written by `generator.vcs.git.git_env` into its own folder and named by
`GIT_CONFIG_GLOBAL`).

Conditional includes (`includeIf`) are evaluated where sync starts, not in the clone, so an
`includeIf "gitdir:..."` that would match the clone is not in the copy. The system config
(`/etc/gitconfig`) is read as it is: only root writes it, and a child running as root is
beyond what a snapshot can stop.
"""

from __future__ import annotations

import subprocess

from generator.util.errors import FatalError


def snapshot_global_config(env: dict[str, str] | None = None) -> str:
    """The global git config as git reads it now, includes resolved, as config file text.

    Args:
        env: the environment git runs with (None: this process's).
    Raises:
        FatalError: git could not read a global config that exists.
    """
    done = subprocess.run(
        ["git", "config", "--global", "--list", "--includes", "-z"],
        env=env,
        cwd="/",
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        err = done.stderr.decode(errors="replace").strip()
        if not done.stdout and (not err or "No such file" in err):
            return ""  # no global config at all
        raise FatalError(f"could not read the global git config: {err or done.returncode}")
    entries = []
    for item in done.stdout.decode(errors="surrogateescape").split("\0"):
        if item:
            key, newline, value = item.partition("\n")
            entries.append((key, value if newline else None))
    return config_text(entries)


def config_text(entries: list[tuple[str, str | None]]) -> str:
    """Config file text that git reads back as `entries` (key, value; None: a key without
    `=`, boolean true), in order; keys are `section.name` or `section.subsection.name`."""
    lines = []
    for key, value in entries:
        section, _, rest = key.partition(".")
        subsection, _, name = rest.rpartition(".")
        header = f'[{section} "{_quoted(subsection)}"]' if subsection else f"[{section}]"
        lines.append(header)
        lines.append(f"\t{name}" if value is None else f'\t{name} = "{_quoted(value)}"')
    return "\n".join(lines) + "\n" if lines else ""


def _quoted(text: str) -> str:
    """`text` escaped for a double-quoted config value or subsection name."""
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    return text.replace("\n", "\\n").replace("\t", "\\t")
