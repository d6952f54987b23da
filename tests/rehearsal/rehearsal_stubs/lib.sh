# Sourced by every stub in bin/: `record ARGS...` appends one call to $REHEARSAL_LOG.
# A record is NUL-separated: the field count, whether a program the rehearsal started (the
# generator, an inline python script) made the call (1) or the step's script itself (0),
# the program's name, then its arguments, byte for byte.
record() {
  printf '%s\0' "$(($# + 2))" "${REHEARSAL_NESTED:-0}" "${0##*/}" "$@" >> "$REHEARSAL_LOG"
}
