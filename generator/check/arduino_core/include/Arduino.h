/*
 * Minimal Arduino API for `python -m generator check`: what the library's sketches use
 * (Serial printing, delay, millis, micros, interrupts), written for this project.
 *
 * One header for both builds of a sketch: the emulated UNO Q stand-in (QEMU mps2-an505,
 * Serial = CMSDK UART0) and the host build run under AddressSanitizer/UBSan (Serial =
 * stdout). The board-specific half is board/mps2_an505.c or host/host.c.
 */
#ifndef EXECUTORCH_CHECK_ARDUINO_H
#define EXECUTORCH_CHECK_ARDUINO_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HIGH 0x1
#define LOW 0x0
#define DEC 10
#define HEX 16
#define OCT 8
#define BIN 2

#ifdef __cplusplus
extern "C" {
#endif

/* Milliseconds / microseconds since the core started (wraps like Arduino's). */
unsigned long millis(void);
unsigned long micros(void);
void delay(unsigned long ms);
void delayMicroseconds(unsigned int us);
void noInterrupts(void);
void interrupts(void);

/* Board half: write bytes to the serial console. */
void arduino_core_write(const char* data, size_t len);

/* The sketch. */
void setup(void);
void loop(void);

#ifdef __cplusplus
}  /* extern "C" */

typedef bool boolean;
typedef uint8_t byte;

/* Arduino's Print: numbers in any base 2..36, floats with a number of decimals. */
class Print {
 public:
  virtual size_t write(uint8_t c) = 0;
  virtual size_t write(const uint8_t* buffer, size_t size);
  size_t write(const char* str) { return str ? write((const uint8_t*)str, strlen(str)) : 0; }
  size_t write(const char* buffer, size_t size) { return write((const uint8_t*)buffer, size); }

  size_t print(const char* s);
  size_t print(char c);
  size_t print(unsigned char n, int base = DEC);
  size_t print(int n, int base = DEC);
  size_t print(unsigned int n, int base = DEC);
  size_t print(long n, int base = DEC);
  size_t print(unsigned long n, int base = DEC);
  size_t print(long long n, int base = DEC);
  size_t print(unsigned long long n, int base = DEC);
  size_t print(double n, int digits = 2);

  size_t println(void);
  size_t println(const char* s);
  size_t println(char c);
  size_t println(unsigned char n, int base = DEC);
  size_t println(int n, int base = DEC);
  size_t println(unsigned int n, int base = DEC);
  size_t println(long n, int base = DEC);
  size_t println(unsigned long n, int base = DEC);
  size_t println(long long n, int base = DEC);
  size_t println(unsigned long long n, int base = DEC);
  size_t println(double n, int digits = 2);

  /* printf-style, through the C library's vsnprintf (so "%zu" must work). */
  size_t printf(const char* format, ...) __attribute__((format(printf, 2, 3)));

  virtual void flush() {}

 private:
  size_t printUnsigned(unsigned long long n, int base);
  size_t printSigned(long long n, int base);
  size_t printFloat(double n, int digits);
};

class SerialPort : public Print {
 public:
  void begin(unsigned long baud) { (void)baud; }
  void end() {}
  int available() { return 0; }
  int read() { return -1; }
  explicit operator bool() const { return true; }
  size_t write(uint8_t c) override;
  size_t write(const uint8_t* buffer, size_t size) override;
  using Print::write;
};

extern SerialPort Serial;

#endif  /* __cplusplus */

#endif  /* EXECUTORCH_CHECK_ARDUINO_H */
