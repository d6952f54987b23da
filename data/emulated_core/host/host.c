/*
 * Host half of the check's Arduino core (include/Arduino.h): the same sketch built for
 * the machine running `check`, under AddressSanitizer and UBSan. Serial goes to stdout (unbuffered, so the
 * last line before a crash is not lost); time comes from CLOCK_MONOTONIC.
 */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* stdout line-buffered, as the board's console is, whatever the runner reads it through
 * (a pipe would make it fully buffered, and a sketch's printf line would never arrive). */
__attribute__((constructor)) static void line_buffered_stdout(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
}

void arduino_core_write(const char* data, size_t len) {
  while (len > 0) {
    ssize_t n = write(1, data, len);
    if (n <= 0) return;
    data += n;
    len -= (size_t)n;
  }
}

static uint64_t now_us(void) {
  static uint64_t start;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t us = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
  if (!start) start = us;
  return us - start;
}

unsigned long millis(void) { return (unsigned long)(now_us() / 1000u); }
unsigned long micros(void) { return (unsigned long)now_us(); }

void delay(unsigned long ms) {
  struct timespec ts = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
  nanosleep(&ts, NULL);
}

void delayMicroseconds(unsigned int us) {
  struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
  nanosleep(&ts, NULL);
}

void noInterrupts(void) {}
void interrupts(void) {}
