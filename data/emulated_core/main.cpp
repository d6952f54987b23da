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

#if defined(__arm__)
/* The board core's `LL_EXTENSION_SYMBOL(main)` (cores/arduino/main.cpp): `main` in the
 * extension's export table, where the board's loader looks it up (a Zephyr
 * `struct llext_const_symbol`: name, address). A static link keeps it as plain data. */
extern "C" {
struct arduino_core_export {
  const char* name;
  const void* address;
};
__attribute__((section(".exported_sym"), used)) const arduino_core_export
    arduino_core_export_main = {"main", reinterpret_cast<const void*>(&main)};
}
#endif
