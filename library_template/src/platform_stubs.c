// SPDX-License-Identifier: BSD-3-Clause
// Part of the ExecuTorch Arduino library generator.
//
// C runtime symbols a board's toolchain may leave undefined. Each one is weak,
// so a libc that does define it wins, and each one says which board needs it.

// __errno: the Arduino Zephyr core (UNO Q, link_mode=static) compiles against
// picolibc, which keeps errno in a variable and has no __errno(), but links
// the math functions from newlib's libm_nano, which call __errno(). Without
// this the sketch fails to link (seen with core 0.55.2, ExecuTorch PR #21546).
// No kernel reads errno, so one static int is enough.
__attribute__((weak)) int* __errno(void) {
  static int errno_value;
  return &errno_value;
}
