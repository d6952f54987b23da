"""The compilers the build's pruning step and `check` share: GCC for the UNO Q and the host,
with the check's Arduino core on the include path (`gcc.py`), and objects cached by content
(`objcache.py`). Nothing here imports `build`, `check`, `sync` or `commands`.
"""
