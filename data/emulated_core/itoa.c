/*
 * itoa, ltoa, utoa and ultoa, which ArduinoCore-API's String needs (api/itoa.h) and leaves
 * to the core: neither glibc nor newlib has all four. Digits above 9 are lower case, as
 * in every Arduino core; a negative value is signed only in base 10.
 */
#include <stdbool.h>

static char* format(unsigned long value, bool negative, char* string, int radix) {
  if (radix < 2 || radix > 36) {
    *string = '\0';
    return string;
  }
  char digits[8 * sizeof(value) + 1];
  int n = 0;
  do {
    unsigned long d = value % (unsigned long)radix;
    value /= (unsigned long)radix;
    digits[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
  } while (value);
  char* out = string;
  if (negative) *out++ = '-';
  while (n) *out++ = digits[--n];
  *out = '\0';
  return string;
}

char* ltoa(long value, char* string, int radix) {
  if (radix == 10 && value < 0) return format(0ul - (unsigned long)value, true, string, radix);
  return format((unsigned long)value, false, string, radix);
}

char* ultoa(unsigned long value, char* string, int radix) {
  return format(value, false, string, radix);
}

char* itoa(int value, char* string, int radix) {
  if (radix == 10) return ltoa(value, string, radix);
  return format((unsigned int)value, false, string, radix);
}

char* utoa(unsigned value, char* string, int radix) { return format(value, false, string, radix); }
