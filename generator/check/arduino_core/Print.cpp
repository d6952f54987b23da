/*
 * Print and Serial of the minimal Arduino API (see include/Arduino.h). Number and float
 * formatting follow what Arduino's Print prints: integers in the given base with upper
 * case digits; negative numbers signed only in base 10; floats rounded to `digits`
 * decimals (2 by default), "nan", "inf" and "ovf" (|x| > 4294967040) like Arduino.
 */
#include <Arduino.h>
#include <stdarg.h>

SerialPort Serial;

size_t Print::write(const uint8_t* buffer, size_t size) {
  size_t n = 0;
  while (size--) n += write(*buffer++);
  return n;
}

size_t SerialPort::write(uint8_t c) {
  char ch = (char)c;
  arduino_core_write(&ch, 1);
  return 1;
}

size_t SerialPort::write(const uint8_t* buffer, size_t size) {
  arduino_core_write((const char*)buffer, size);
  return size;
}

size_t Print::printUnsigned(unsigned long long n, int base) {
  char buf[8 * sizeof(n) + 1];
  char* p = &buf[sizeof(buf) - 1];
  *p = '\0';
  if (base < 2 || base > 36) base = 10;
  do {
    int digit = (int)(n % (unsigned)base);
    n /= (unsigned)base;
    *--p = (char)(digit < 10 ? '0' + digit : 'A' + digit - 10);
  } while (n);
  return write(p);
}

size_t Print::printSigned(long long n, int base) {
  if (base == 10 && n < 0) {
    size_t t = print('-');
    return t + printUnsigned(0ULL - (unsigned long long)n, 10);
  }
  return printUnsigned((unsigned long long)n, base);
}

size_t Print::printFloat(double number, int digits) {
  if (isnan(number)) return print("nan");
  if (isinf(number)) return print("inf");
  if (number > 4294967040.0 || number < -4294967040.0) return print("ovf");
  size_t n = 0;
  if (number < 0.0) {
    n += print('-');
    number = -number;
  }
  double rounding = 0.5;
  for (int i = 0; i < digits; ++i) rounding /= 10.0;
  number += rounding;
  unsigned long whole = (unsigned long)number;
  double rest = number - (double)whole;
  n += printUnsigned(whole, 10);
  if (digits > 0) n += print('.');
  while (digits-- > 0) {
    rest *= 10.0;
    unsigned int d = (unsigned int)rest;
    n += print((char)('0' + d));
    rest -= d;
  }
  return n;
}

size_t Print::print(const char* s) { return write(s); }
size_t Print::print(char c) { return write((uint8_t)c); }
size_t Print::print(unsigned char n, int base) { return printUnsigned(n, base); }
size_t Print::print(int n, int base) {
  return base == 10 ? printSigned(n, base) : printUnsigned((unsigned int)n, base);
}
size_t Print::print(unsigned int n, int base) { return printUnsigned(n, base); }
size_t Print::print(long n, int base) {
  return base == 10 ? printSigned(n, base) : printUnsigned((unsigned long)n, base);
}
size_t Print::print(unsigned long n, int base) { return printUnsigned(n, base); }
size_t Print::print(long long n, int base) { return printSigned(n, base); }
size_t Print::print(unsigned long long n, int base) { return printUnsigned(n, base); }
size_t Print::print(double n, int digits) { return printFloat(n, digits); }

size_t Print::println(void) { return write("\r\n"); }
size_t Print::println(const char* s) { return print(s) + println(); }
size_t Print::println(char c) { return print(c) + println(); }
size_t Print::println(unsigned char n, int base) { return print(n, base) + println(); }
size_t Print::println(int n, int base) { return print(n, base) + println(); }
size_t Print::println(unsigned int n, int base) { return print(n, base) + println(); }
size_t Print::println(long n, int base) { return print(n, base) + println(); }
size_t Print::println(unsigned long n, int base) { return print(n, base) + println(); }
size_t Print::println(long long n, int base) { return print(n, base) + println(); }
size_t Print::println(unsigned long long n, int base) { return print(n, base) + println(); }
size_t Print::println(double n, int digits) { return print(n, digits) + println(); }

size_t Print::printf(const char* format, ...) {
  char small[128];
  va_list args;
  va_start(args, format);
  int len = vsnprintf(small, sizeof(small), format, args);
  va_end(args);
  if (len < 0) return 0;
  if ((size_t)len < sizeof(small)) return write(small, (size_t)len);
  char* big = (char*)malloc((size_t)len + 1);
  if (!big) return 0;
  va_start(args, format);
  vsnprintf(big, (size_t)len + 1, format, args);
  va_end(args);
  size_t n = write(big, (size_t)len);
  free(big);
  return n;
}
