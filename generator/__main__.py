import locale
import os
import sys

# Every file this tool reads or writes, every name in a library and every tool's output is
# UTF-8, whatever the locale: under `LC_ALL=C` with PYTHONCOERCECLOCALE=0, or a Latin-1
# locale, Python would decode and encode them in that locale and fail on the first
# non-ASCII name (a subprocess's output, a path in the cache). Python's UTF-8 mode (PEP 540)
# is the one switch for all of them; it can only be set at start-up, so the interpreter is
# started again with it, where the locale is not UTF-8 already. PYTHONUTF8 is passed on to
# the Python tools this one runs.
_UTF8 = ("utf-8", "utf8")
if not sys.flags.utf8_mode and (
    sys.getfilesystemencoding().lower() not in _UTF8
    or locale.getpreferredencoding(False).lower() not in _UTF8
):
    os.environ["PYTHONUTF8"] = "1"
    os.execv(sys.executable, [sys.executable, "-X", "utf8", *sys.orig_argv[1:]])

from generator.cli.main import main  # noqa: E402  (after the re-exec above)

sys.exit(main())
