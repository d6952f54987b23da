/*
 * The emulated Dynamic firmware's boot (generator/check/dynamic_run.py): what the UNO Q's
 * loader (ArduinoCore-zephyr `loader/main.c`) does once `llext_load` has placed a sketch,
 * with the placing done beforehand by the check's model of the loader (check/llext.py).
 *
 * The Python side writes, through QEMU's generic loader before the core starts, the LLEXT
 * heap's image at `llext_host_heap` (the generated export table's file defines it, sized
 * as the core's CONFIG_LLEXT_HEAP_SIZE), the upload ELF at the sketch's storage address
 * (the regions read in place point there) and `llext_host_boot` below. Both lie in
 * `.noinit` (board/llext_host.ld), which the reset code does not zero and which no ELF
 * segment covers, so what QEMU wrote there survives the firmware's own start-up.
 *
 * The board half's Reset_Handler (mps2_an505.c) calls `main` below after .data, .bss and
 * the firmware's own constructors; it runs the sketch's PREINIT and INIT functions, then
 * the sketch's `main` (never returns: setup() once, loop() forever). When the loader
 * refused the sketch it prints the loader's log lines and "Failed to load sketch, rc -N",
 * as the board's UART does, and nothing of the sketch runs.
 *
 * The layout of `struct llext_host_boot` is also written in dynamic_run.py (BOOT_FORMAT);
 * the check compares its size with the symbol's.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

void arduino_core_write(const char* data, size_t len);

/* "LLXT": the sketch is placed; "LLXF": the loader refused it (rc and log are set). */
#define LLEXT_HOST_LOADED 0x54584c4cu
#define LLEXT_HOST_REFUSED 0x46584c4cu
#define LLEXT_HOST_MAX_INIT 64
#define LLEXT_HOST_LOG_BYTES 2048

struct llext_host_boot {
  uint32_t magic;
  int32_t rc;
  uint32_t entry;      /* the sketch's main, Thumb bit set */
  uint32_t init_count; /* entries of init[] used */
  uint32_t init[LLEXT_HOST_MAX_INIT];
  char log[LLEXT_HOST_LOG_BYTES]; /* the loader's log lines, '\n'-separated, NUL-ended */
};

__attribute__((section(".noinit.llext_host_boot"), aligned(8), used))
volatile struct llext_host_boot llext_host_boot;

static void write_str(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  arduino_core_write(s, n);
}

static void write_int(int32_t v) {
  char buf[12];
  char* p = buf + sizeof buf;
  uint32_t u = v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v;
  *--p = '\0';
  do {
    *--p = (char)('0' + u % 10u);
    u /= 10u;
  } while (u);
  if (v < 0) *--p = '-';
  write_str(p);
}

/* Zephyr's assert without a message (every core exports it: FORCE_EXPORT_SYM); Zephyr
 * prints "ASSERTION FAIL" and halts, here the run ends as an abort(). */
void __assert_no_args(void) {
  write_str("ASSERTION FAIL\r\n");
  abort();
}

int main(void) {
  if (llext_host_boot.magic != LLEXT_HOST_LOADED) {
    int32_t rc = llext_host_boot.magic == LLEXT_HOST_REFUSED ? llext_host_boot.rc : -2;
    if (llext_host_boot.magic == LLEXT_HOST_REFUSED) {
      for (size_t i = 0; i < LLEXT_HOST_LOG_BYTES && llext_host_boot.log[i]; ++i) {
        char c = llext_host_boot.log[i];
        if (c == '\n') {
          write_str("\r\n");
        } else {
          arduino_core_write(&c, 1);
        }
      }
    } else {
      write_str("no sketch was placed (no boot descriptor)\r\n");
    }
    write_str("Failed to load sketch, rc ");
    write_int(rc);
    write_str("\r\n");
    return 0;
  }
  uint32_t count = llext_host_boot.init_count;
  if (count > LLEXT_HOST_MAX_INIT) count = LLEXT_HOST_MAX_INIT;
  for (uint32_t i = 0; i < count; ++i) {
    ((void (*)(void))llext_host_boot.init[i])();
  }
  return ((int (*)(void))llext_host_boot.entry)();
}
