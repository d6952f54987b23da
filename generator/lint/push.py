"""The push rule (GH001), this generator's own: no file over GitHub's 100 MiB push limit
(`GITHUB_FILE_LIMIT_BYTES`, with its source), or the sync cannot push the library.
"""

from __future__ import annotations

from generator.lint.install import installed
from generator.lint.library_tree import Library, Problem, Rule

#: The largest file GitHub accepts in a push: 100 MiB (104,857,600 bytes).
#:
#: Source: docs.github.com, "About large files on GitHub" (repositories / working with
#: files / managing large files): "GitHub blocks files larger than 100 MiB" (and warns from
#: 50 MiB). A library holding such a file cannot be pushed, so the sync's pull request and
#: the Library Manager release (a git tag) cannot be made.
GITHUB_FILE_LIMIT_BYTES = 100 * 2**20


def _gh001_file_too_large(lib: Library) -> list[Problem]:
    """Each file (not a folder; a symbolic link is its own small blob) over
    GITHUB_FILE_LIMIT_BYTES, by os.lstat: no file is read."""
    problems = []
    for e in installed(lib):
        if e.is_dir or e.is_link:
            continue
        try:
            size = e.path.lstat().st_size
        except OSError:
            continue
        if size > GITHUB_FILE_LIMIT_BYTES:
            problems.append(
                (
                    e.rel,
                    f"{size:,} bytes, over GitHub's limit of {GITHUB_FILE_LIMIT_BYTES:,} "
                    '(100 MiB; docs.github.com, "About large files on GitHub"): the '
                    "library cannot be pushed; leave the file out or make it smaller (a "
                    "model.h: a smaller .pte)",
                )
            )
    return problems


#: This generator's rule for pushing the library to GitHub (the sync's pull request).
PUSH_RULES: tuple[Rule, ...] = (
    Rule("GH001", "error", "file over GitHub's size limit", _gh001_file_too_large),
)
