// SPDX-License-Identifier: BSD-3-Clause
// Part of the ExecuTorch Arduino library generator.
//
// The library's only ExecuTorch platform layer (PAL), written against the
// Arduino API so it builds on any core rather than one RTOS. The generator
// ships it in place of upstream's platform/default backends: with two
// definitions of et_pal_* the one that wins would depend on link order.

#include <Arduino.h>

#include <executorch/runtime/platform/compiler.h>
#include <executorch/runtime/platform/platform.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// Where runtime log lines go. A board's console differs from core to core
// (on the UNO Q Serial comes from a bridge library), so the library does not
// pick one: a sketch that wants the runtime's diagnostics defines
// `extern "C" void et_arduino_log(const char* line)`. By default they are
// dropped.
extern "C" ET_WEAK void et_arduino_log(const char* line) {
  (void)line;
}

void et_pal_init(void) {}

#if defined(__arm__)
// __errno() for the math functions the kernels call (expf, tanhf, erff, tanh,
// ...: softmax, sigmoid, tanh, GELU, GRU, LSTM), which come from newlib's libm
// and whose error paths set errno through __errno() (math_err.o, math_errf.o,
// the w_*.o wrappers). No board links one for the sketch:
// - link_mode=static: the Arduino Zephyr core (UNO Q) compiles against
//   picolibc, which keeps errno in a variable and has no __errno(), but links
//   the math functions from newlib's libm_nano: without this the sketch fails
//   to link (seen with core 0.55.2, ExecuTorch PR #21546).
// - link_mode=dynamic: the extension links no C library (no -lc) and no
//   core's firmware exports __errno (data/core_exports/), so the loader
//   refuses the sketch ("Undefined symbol __errno", rc -61) and prints nothing.
// Here, in the platform layer every runtime link takes, rather than in an
// archive member of its own: nothing would pull that member in, since libm's
// references come after the library on the link line. Weak: a definition of
// the sketch's or the core's wins. No kernel reads errno, so one int is
// enough; it is not the errno the board's C library functions set.
extern "C" ET_WEAK int* __errno(void) {
  static int value = 0;
  return &value;
}
#endif

ET_NORETURN void et_pal_abort(void) {
  et_arduino_log("F et_pal_abort: ExecuTorch runtime aborted, board halted");
  // Nothing to exit to. Stop with interrupts off so the board stays halted
  // (or a watchdog resets it) instead of running on in a broken state.
  noInterrupts();
  while (true) {
  }
}

// micros() wraps every 2^32 us (about 71 minutes); widen it to 64 bits by
// counting the wraps. Good as long as calls are less than one wrap apart,
// which holds for a runtime that logs or profiles while it runs.
et_timestamp_t et_pal_current_ticks(void) {
  static uint32_t last = 0;
  static uint32_t wraps = 0;
  const uint32_t now = static_cast<uint32_t>(micros());
  if (now < last) {
    wraps++;
  }
  last = now;
  return (static_cast<et_timestamp_t>(wraps) << 32) | now;
}

// One tick is one microsecond: 1000 ns per tick.
et_tick_ratio_t et_pal_ticks_to_ns_multiplier(void) {
  return {1000, 1};
}

// The runtime's last "Missing operator: [i] name" message (Method::init logs
// one per operator it cannot resolve, then a summary), which ETModel adds to
// its error() text when load_method returns OperatorMissing.
static char missing_operator[96];

extern "C" const char* et_arduino_missing_operator(void) {
  return missing_operator;
}

// Formats "<level> <file>:<line> <message>" and hands it to et_arduino_log.
// The file is cut to its base name so the line fits a serial monitor.
// Sizes are printed as unsigned long with %lu: newlib-nano's printf does not
// know the z length modifier and would misread the arguments.
void et_pal_emit_log_message(
    ET_UNUSED et_timestamp_t timestamp,
    et_pal_log_level_t level,
    const char* filename,
    ET_UNUSED const char* function,
    size_t line,
    const char* message,
    ET_UNUSED size_t length) {
  const char* base = filename != nullptr ? filename : "?";
  for (const char* p = base; *p != '\0'; p++) {
    if (*p == '/' || *p == '\\') {
      base = p + 1;
    }
  }
  if (level == kError && message != nullptr &&
      strncmp(message, "Missing operator:", 17) == 0) {
    snprintf(missing_operator, sizeof(missing_operator), "%s", message);
  }
  char text[256];
  snprintf(
      text,
      sizeof(text),
      "%c %s:%lu %s",
      static_cast<char>(level),
      base,
      static_cast<unsigned long>(line),
      message != nullptr ? message : "");
  et_arduino_log(text);
}

void* et_pal_allocate(size_t size) {
  return malloc(size);
}

void et_pal_free(void* ptr) {
  free(ptr);
}
