"""Where a library's files land on a user's machine, and whether every OS can hold them.

Vendored files keep their upstream paths, so a new ref can bring a name that Windows or
macOS cannot create (the Library Manager's install then fails or silently loses files).
This module holds the facts and the pure checks; `generator.lint.install` runs them as its OS rules.

Sources of facts:

- Windows names: Microsoft, "Naming Files, Paths, and Namespaces"
  (https://learn.microsoft.com/en-us/windows/win32/fileio/naming-a-file). The reserved
  characters `< > : " / \\ | ?  *` and the characters 0-31; no name may end in a space or
  a period; the reserved device names CON, PRN, AUX, NUL, COM1-COM9, COM¹ COM² COM³,
  LPT1-LPT9, LPT¹ LPT² LPT³, also "followed immediately by an extension" (NUL.txt and
  NUL.tar.gz both mean NUL), in any case. COM0 and LPT0 (named in earlier revisions of the
  page) and CONIN$ / CONOUT$ are refused too: CPython's `ntpath.isreserved` (3.13) takes
  the same side of caution, as it does by stripping the blanks before the extension
  ("nul .txt"). MAX_PATH is 260 characters, the terminating NUL included; Windows counts
  UTF-16 code units.
- Case: Windows (NTFS) and macOS (APFS and HFS+, as formatted by default) are
  case-insensitive; macOS also treats the NFC and NFD spellings of a name as one (HFS+
  stores NFD, APFS compares normalization-insensitively), so two names collide when
  their caseless forms match: Unicode's canonical caseless match, NFD(casefold(NFD(x)))
  (The Unicode Standard, 3.13 "Default Case Algorithms", D145). Casefold maps more than
  NTFS's upcase table does (ß and ss): the stricter side.
- Where the library is installed: arduino-cli v1.5.1 (commit 01f3d4f2ba7c), which the IDE 2
  runs. `internal/cli/configuration/configuration.go` getDefaultUserDir: on Windows the
  sketchbook is `<Documents>\\Arduino`; `internal/arduino/libraries/librariesmanager/
  install.go`: a library installs to `<sketchbook>\\libraries\\<SanitizeName(name)>`
  (`internal/arduino/utils/filenames.go`: every character but 0-9 A-Z a-z, and - . past the
  first, becomes _, so a space becomes _).
- Where its objects are built: the same release. `configuration.go` getDefaultBuildCacheDir:
  `os.UserCacheDir()` (on Windows `%LocalAppData%`, `C:\\Users\\<name>\\AppData\\Local`) +
  `arduino`; `commands/service_compile.go` getDefaultSketchBuildPath:
  `<build cache>\\sketches\\<Sketch.Hash()>`, the MD5 of the sketch's path in upper-case hex
  (`internal/arduino/sketch/sketch.go`, 32 digits); `internal/arduino/builder/builder.go`:
  libraries build in `<build path>\\libraries`; `builder/libraries.go` compileLibrary: in
  `<that>\\<library folder name>`; `builder/compilation.go` compileFileWithRecipe: each
  source becomes `<that>\\<its path relative to the source folder>.o` (and `.d`), so the
  1.5 layout's `src\\` is not repeated. Which files compile: `builder/internal/utils/
  utils.go` FindFilesInFolder (names starting with "." and source-control folders are
  skipped) with `internal/arduino/globals/globals.go` SourceFilesValidExtensions (.c .cpp
  .cxx .cc .S). A 1.0-format (flat) library compiles its root, not recursively, and its
  `utility\\` folder into `<that>\\utility\\`.
- The user: a Windows logon name has at most 20 characters (Active Directory's
  sAMAccountName, which local accounts share), and the profile folder carries it. The
  margin of `PATH_MARGIN` characters covers what is not modelled: a Documents folder moved
  into OneDrive (`C:\\Users\\<name>\\OneDrive\\Documents`, 9 more), a profile folder
  with a suffix (`<name>.DOMAIN`), a longer file a later tool writes beside the object.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "FORBIDDEN_CHARACTERS",
    "MAX_PATH",
    "PATH_BUDGET",
    "PATH_MARGIN",
    "RESERVED_NAMES",
    "SOURCE_EXTENSIONS",
    "WINDOWS_USER",
    "WINDOWS_USER_NOTE",
    "LongPath",
    "case_collisions",
    "caseless",
    "installed_path",
    "not_utf8",
    "object_path",
    "windows_length",
    "windows_name_problem",
]

#: Windows' limit on a path, in UTF-16 code units, the terminating NUL included.
MAX_PATH = 260
#: What a path must leave of MAX_PATH (see the module docstring for what it covers).
PATH_MARGIN = 40
#: The longest path, in UTF-16 code units, that a library's file may have once installed.
PATH_BUDGET = MAX_PATH - PATH_MARGIN
#: A Windows user name of the longest length Windows allows (20 characters).
WINDOWS_USER = "User_Name_Of_20_Char"
#: How the paths' lengths are measured, for reports.
WINDOWS_USER_NOTE = "a 20-character user name, the default folders of the IDE and arduino-cli"
#: The sketchbook's libraries folder on Windows (the IDE's and arduino-cli's default).
INSTALL_ROOT = f"C:\\Users\\{WINDOWS_USER}\\Documents\\Arduino\\libraries"
#: arduino-cli's build folder of one sketch on Windows; the hash is 32 upper-case hex digits.
BUILD_ROOT = f"C:\\Users\\{WINDOWS_USER}\\AppData\\Local\\arduino\\sketches\\{'0' * 32}"

#: Characters no Windows file or folder name may hold (and 0-31, see `_CONTROL`).
FORBIDDEN_CHARACTERS = '<>:"/\\|?*'
_CONTROL = frozenset(chr(c) for c in range(32))
#: Windows' device names: not usable as a name, nor before an extension, in any case.
RESERVED_NAMES = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"{port}{n}" for port in ("COM", "LPT") for n in "0123456789\u00b9\u00b2\u00b3"}
)
#: The extensions arduino-cli compiles (globals.go SourceFilesValidExtensions; case matters).
SOURCE_EXTENSIONS = (".c", ".cpp", ".cxx", ".cc", ".S")
#: Folders arduino-cli does not compile from (utils.go sourceControlFolders).
SOURCE_CONTROL_FOLDERS = frozenset(
    {
        "CVS",
        "RCS",
        ".git",
        ".github",
        ".svn",
        ".hg",
        ".bzr",
        ".vscode",
        ".settings",
        ".pioenvs",
        ".piolibdeps",
    }
)


def windows_name_problem(name: str) -> str | None:
    """Why Windows cannot create a file or folder named `name` (one path component), or None.

    Returns:
        "reserved" (a device name, alone or before an extension), "character" (one of
        FORBIDDEN_CHARACTERS or 0-31, or bytes that are not UTF-8: Python reads them as
        lone surrogates, and neither Windows' UTF-16 nor macOS's UTF-8 names can hold them)
        or "ending" (a final space or period).
    """
    if set(name) & (_CONTROL | set(FORBIDDEN_CHARACTERS)) or not_utf8(name):
        return "character"
    if name.endswith((" ", ".")):
        return "ending"
    if name.partition(".")[0].rstrip(" ").upper() in RESERVED_NAMES:
        return "reserved"
    return None


def not_utf8(name: str) -> bool:
    """True when `name` (as os.listdir gives it) came from bytes that are not UTF-8."""
    return any("\udc80" <= c <= "\udcff" for c in name)


def caseless(path: str) -> str:
    """The form two paths share when macOS or Windows take them for the same one.

    Unicode's canonical caseless match: NFD(casefold(NFD(path))).
    """
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", path).casefold())


def case_collisions(paths: Iterable[str]) -> list[tuple[str, ...]]:
    """The groups of paths ("/"-separated, relative) that a case-insensitive,
    normalization-insensitive file system cannot hold side by side.

    Each group is sorted, and the groups by their first path; a group inside colliding
    folders (`A/x.h` and `a/x.h` once `A` and `a` collide) is not repeated.
    """
    groups: dict[str, set[str]] = {}
    for path in paths:
        groups.setdefault(caseless(path), set()).add(path)
    colliding = {key for key, members in groups.items() if len(members) > 1}

    def inside_collision(key: str) -> bool:
        parts = key.split("/")
        return any("/".join(parts[:i]) in colliding for i in range(1, len(parts)))

    return sorted(tuple(sorted(groups[key])) for key in colliding if not inside_collision(key))


def windows_length(path: str) -> int:
    """The length Windows measures a path in: UTF-16 code units (no terminating NUL)."""
    return len(path.encode("utf-16-le", "surrogatepass")) // 2


def installed_path(folder: str, rel: str) -> str:
    """Where the Library Manager puts the library's `rel` on Windows.

    Args:
        folder: the library's install folder name (SanitizeName of its `name=`).
        rel: a path relative to the library root, "/"-separated.
    """
    return "\\".join((INSTALL_ROOT, folder, *rel.split("/")))


def object_path(folder: str, rel: str) -> str:
    """Where arduino-cli writes the object of source `rel` on Windows.

    Args:
        folder: the library's install folder name.
        rel: the source's path relative to the library's source folder (src/ in the 1.5
            layout, else the root; `utility/...` for a flat library's utility sources).
    """
    return "\\".join((BUILD_ROOT, "libraries", folder, *rel.split("/"))) + ".o"


@dataclass(frozen=True)
class LongPath:
    """A path of the library as Windows will see it.

    Attributes:
        rel: the path relative to the library root ("/"-separated); path: the Windows
        path (`installed_path` or `object_path`); length: `windows_length(path)`.
    """

    rel: str
    path: str

    @property
    def length(self) -> int:
        return windows_length(self.path)

    @property
    def fits(self) -> bool:
        """True when the path leaves PATH_MARGIN of MAX_PATH."""
        return self.length <= PATH_BUDGET
