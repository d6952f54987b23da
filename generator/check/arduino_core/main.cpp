/*
 * Entry point of a sketch, as on a board: setup() once, then loop() forever. The run
 * stage stops the firmware itself once it has read "=== DONE ===" (or on a timeout), so
 * the core needs no way to stop; faults and exit() end the emulated run through
 * semihosting (see board/mps2_an505.c).
 */
#include <Arduino.h>

int main(void) {
  setup();
  for (;;) loop();
  return 0;
}
