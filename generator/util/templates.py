"""The one Jinja environment every rendered text comes from, found in one of three folders:
the library's own files in `data/library_template/` (a folder that mirrors the library), the
generator's other source files in `data/templates/src/`, and what it writes to GitHub in
`data/templates/github/` (the sync pull request's body, the release notes). Strict: a fact a
template uses and is not given is an error, never an empty string.
"""

from __future__ import annotations

from typing import Any

import jinja2

from generator import data_dir

#: The suffix of a template: rendered, and written without it.
TEMPLATE_SUFFIX = ".jinja"
#: The library's own files (rendered or copied to the same relative path in the library).
LIBRARY_TEMPLATE = data_dir("library_template")
#: The templates of everything else (the sync pull request's body, the release notes), and
#: cmake_macros.h.
TEMPLATES = data_dir("templates")

ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(
        [str(LIBRARY_TEMPLATE), str(TEMPLATES / "src"), str(TEMPLATES / "github")]
    ),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    autoescape=False,
)


def render(template: str, **facts: Any) -> str:
    """The template `template` (a path below a template folder) rendered with `facts`.

    Raises:
        jinja2.UndefinedError: when the template uses a fact not given (a bug, not input).
    """
    return ENV.get_template(template).render(**facts)
