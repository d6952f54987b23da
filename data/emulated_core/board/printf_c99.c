/*
 * C99 length modifiers for Debian's arm-none-eabi newlib printf family.
 *
 * The board's C library prints "%zu"; Debian's newlib (libnewlib-arm-none-eabi, both
 * full and nano, checked) is built without C99 formats and prints "zu" instead, without
 * consuming the argument, so every later argument is read from the wrong place (a "%s"
 * after it can fault). ExecuTorch's log lines use "%zu".
 *
 * The firmware links with --wrap for the four formatting entry points every printf-family
 * function of newlib calls (_vfprintf_r, _svfprintf_r, _vfiprintf_r, _svfiprintf_r, and
 * vfprintf/vfiprintf, which call them inside their own object). The wrappers drop the
 * 'z' and 't' modifiers (size_t and ptrdiff_t are 32-bit, like int, on this target) and
 * turn 'j' into 'll' (intmax_t is 64-bit), then call newlib.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct _reent;

int __real__vfprintf_r(struct _reent* r, FILE* fp, const char* fmt, va_list ap);
int __real__svfprintf_r(struct _reent* r, FILE* fp, const char* fmt, va_list ap);
int __real__vfiprintf_r(struct _reent* r, FILE* fp, const char* fmt, va_list ap);
int __real__svfiprintf_r(struct _reent* r, FILE* fp, const char* fmt, va_list ap);

enum { FMT_MAX = 512 };

/* Writes the rewritten `fmt` to `out` (FMT_MAX bytes) and returns out, or returns fmt
 * itself when it has nothing to rewrite (or is too long to rewrite). */
static const char* c99_format(const char* fmt, char* out) {
  if (!strpbrk(fmt, "ztj")) return fmt;
  size_t o = 0;
  for (const char* p = fmt; *p; ++p) {
    if (o + 3 >= FMT_MAX) return fmt;
    out[o++] = *p;
    if (*p != '%') continue;
    ++p;
    /* flags, width, precision */
    while (*p && strchr("-+ #0'123456789.*", *p)) {
      if (o + 3 >= FMT_MAX) return fmt;
      out[o++] = *p++;
    }
    if (!*p) break;
    if (*p == 'z' || *p == 't') {
      continue; /* drop; the conversion letter follows in the next iteration */
    }
    if (*p == 'j') {
      out[o++] = 'l';
      out[o++] = 'l';
      continue;
    }
    out[o++] = *p;
  }
  out[o] = '\0';
  return out;
}

int __wrap__vfprintf_r(struct _reent* r, FILE* fp, const char* fmt, va_list ap) {
  char buf[FMT_MAX];
  return __real__vfprintf_r(r, fp, c99_format(fmt, buf), ap);
}

int __wrap__svfprintf_r(struct _reent* r, FILE* fp, const char* fmt, va_list ap) {
  char buf[FMT_MAX];
  return __real__svfprintf_r(r, fp, c99_format(fmt, buf), ap);
}

int __wrap__vfiprintf_r(struct _reent* r, FILE* fp, const char* fmt, va_list ap) {
  char buf[FMT_MAX];
  return __real__vfiprintf_r(r, fp, c99_format(fmt, buf), ap);
}

int __wrap__svfiprintf_r(struct _reent* r, FILE* fp, const char* fmt, va_list ap) {
  char buf[FMT_MAX];
  return __real__svfiprintf_r(r, fp, c99_format(fmt, buf), ap);
}

int __wrap_vfprintf(FILE* fp, const char* fmt, va_list ap) {
  return __wrap__vfprintf_r(_impure_ptr, fp, fmt, ap);
}

int __wrap_vfiprintf(FILE* fp, const char* fmt, va_list ap) {
  return __wrap__vfiprintf_r(_impure_ptr, fp, fmt, ap);
}
