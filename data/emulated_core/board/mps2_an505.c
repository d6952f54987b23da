/*
 * Board half of the check's Arduino core (include/Arduino.h) for QEMU's mps2-an505
 * (Cortex-M33, the stand-in for the UNO Q's STM32U585): vector table, reset, the CMSDK
 * UART0 that Serial writes to, SysTick time, newlib system calls (full newlib, so
 * printf's "%zu" works), faults, and the end of a run through semihosting.
 *
 * Facts from QEMU's hw/arm/mps2-tz.c: UART0 at 0x40200000 (CMSDK APB UART), system
 * clock 20 MHz (SYSCLK_FRQ); the core starts in Secure state with its vector table at
 * 0x10000000 (IoTKit init-svtor), the Secure alias of SSRAM1 where mps2_an505.ld puts
 * the firmware. From the CMSDK UART: DATA +0x0, STATE +0x4 (bit 0 TX full), CTRL +0x8
 * (bit 0 TX enable), BAUDDIV +0x10. Semihosting (ARM): BKPT 0xAB, r0 = operation;
 * SYS_EXIT_EXTENDED (0x20) takes {ADP_Stopped_ApplicationExit, code}.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

void arduino_core_write(const char* data, size_t len);
int main(void);

#define REG32(addr) (*(volatile uint32_t*)(addr))

#define UART0_BASE 0x40200000u
#define UART_DATA REG32(UART0_BASE + 0x00u)
#define UART_STATE REG32(UART0_BASE + 0x04u)
#define UART_CTRL REG32(UART0_BASE + 0x08u)
#define UART_BAUDDIV REG32(UART0_BASE + 0x10u)

#define SYSCLK_HZ 20000000u

#define SYST_CSR REG32(0xE000E010u)
#define SYST_RVR REG32(0xE000E014u)
#define SYST_CVR REG32(0xE000E018u)
#define SCB_CPACR REG32(0xE000ED88u)
#define SCB_SHCSR REG32(0xE000ED24u)
#define SCB_CFSR REG32(0xE000ED28u)
#define SCB_HFSR REG32(0xE000ED2Cu)
#define SCB_MMFAR REG32(0xE000ED34u)
#define SCB_BFAR REG32(0xE000ED38u)
#define MPU_CTRL REG32(0xE000ED94u)
#define MPU_RNR REG32(0xE000ED98u)
#define MPU_RBAR REG32(0xE000ED9Cu)
#define MPU_RLAR REG32(0xE000EDA0u)

/* Linker script symbols (mps2_an505.ld). */
extern uint32_t __data_load__, __data_start__, __data_end__;
extern uint32_t __bss_start__, __bss_end__;
extern uint32_t __stack_top__, __stack_limit__, __heap_start__;
extern void __libc_init_array(void);

static volatile uint32_t ticks_ms;

/* ---- semihosting: only used to end the emulated run ---- */

static void semihosting_exit(int code) __attribute__((noreturn));
static void semihosting_exit(int code) {
  uint32_t block[2] = {0x20026u /* ADP_Stopped_ApplicationExit */, (uint32_t)code};
  register uint32_t r0 __asm__("r0") = 0x20u; /* SYS_EXIT_EXTENDED */
  register uint32_t* r1 __asm__("r1") = block;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  for (;;) {
  }
}

/* ---- Serial ---- */

void arduino_core_write(const char* data, size_t len) {
  for (size_t i = 0; i < len; ++i) {
    while (UART_STATE & 1u) {
    }
    UART_DATA = (uint8_t)data[i];
  }
}

static void write_str(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  arduino_core_write(s, n);
}

static void write_hex(uint32_t v) {
  char buf[11] = "0x";
  for (int i = 0; i < 8; ++i) {
    uint32_t d = (v >> (28 - 4 * i)) & 0xFu;
    buf[2 + i] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
  }
  buf[10] = '\0';
  write_str(buf);
}

/* ---- time ---- */

void SysTick_Handler(void) { ticks_ms++; }

unsigned long millis(void) { return ticks_ms; }

unsigned long micros(void) {
  uint32_t ms, cvr;
  do {
    ms = ticks_ms;
    cvr = SYST_CVR;
  } while (ms != ticks_ms);
  uint32_t reload = SYST_RVR + 1u;
  return ms * 1000u + (reload - cvr) / (SYSCLK_HZ / 1000000u);
}

void delay(unsigned long ms) {
  uint32_t start = ticks_ms;
  while ((uint32_t)(ticks_ms - start) < ms) __asm__ volatile("wfi");
}

void delayMicroseconds(unsigned int us) {
  uint32_t start = micros();
  while ((uint32_t)(micros() - start) < us) {
  }
}

void noInterrupts(void) { __asm__ volatile("cpsid i" ::: "memory"); }
void interrupts(void) { __asm__ volatile("cpsie i" ::: "memory"); }

/* ---- faults: print what happened, then end the run with exit code 3 ----
 * The line starts with "@@arduino-core@@ " (CORE_MARKER in generator/check/run.py), which
 * no sketch prints by accident, so the runner never takes a sketch's own line for a fault.
 */

void arduino_core_fault(uint32_t* frame, uint32_t kind) {
  static const char* const names[] = {"HardFault", "MemManage", "BusFault", "UsageFault",
                                      "SecureFault", "NMI"};
  write_str("\r\n@@arduino-core@@ fault: ");
  write_str(kind < 6 ? names[kind] : "Fault");
  write_str(": PC=");
  write_hex(frame ? frame[6] : 0);
  write_str(" LR=");
  write_hex(frame ? frame[5] : 0);
  write_str(" CFSR=");
  write_hex(SCB_CFSR);
  write_str(" HFSR=");
  write_hex(SCB_HFSR);
  write_str(" MMFAR=");
  write_hex(SCB_MMFAR);
  write_str(" BFAR=");
  write_hex(SCB_BFAR);
  write_str("\r\n");
  semihosting_exit(3);
}

#define FAULT_HANDLER(name, kind)                                   \
  __attribute__((naked)) void name(void) {                         \
    __asm__ volatile(                                               \
        "tst lr, #4\n"                                              \
        "ite eq\n"                                                  \
        "mrseq r0, msp\n"                                           \
        "mrsne r0, psp\n"                                           \
        "movs r1, #" #kind "\n"                                     \
        "b arduino_core_fault\n");                                  \
  }

FAULT_HANDLER(HardFault_Handler, 0)
FAULT_HANDLER(MemManage_Handler, 1)
FAULT_HANDLER(BusFault_Handler, 2)
FAULT_HANDLER(UsageFault_Handler, 3)
FAULT_HANDLER(SecureFault_Handler, 4)
FAULT_HANDLER(NMI_Handler, 5)

void Default_Handler(void) { arduino_core_fault(0, 0); }

/* ---- reset ---- */

void Reset_Handler(void) __attribute__((noreturn));
void Reset_Handler(void) {
  /* Stack overflow into the heap or the globals faults (UsageFault STKOF) instead of
   * corrupting them silently. */
  __asm__ volatile("msr msplim, %0" ::"r"(&__stack_limit__));

  /* The FPU (CP10, CP11) is off at reset; the code is built with -mfloat-abi=hard. */
  SCB_CPACR |= (0xFu << 20);
  __asm__ volatile("dsb\n isb" ::: "memory");

  for (uint32_t *src = &__data_load__, *dst = &__data_start__; dst < &__data_end__;)
    *dst++ = *src++;
  for (uint32_t* dst = &__bss_start__; dst < &__bss_end__;) *dst++ = 0;

  /* Writes to the first 256 MiB fault, so a write through a null pointer crashes like
   * on the board (address 0 is otherwise RAM on this machine: the Non-secure alias of
   * SSRAM1). Region 0: 0x00000000..0x0FFFFFFF, read-only, execute-never; the default
   * map covers everything else. */
  MPU_RNR = 0;
  MPU_RBAR = 0x00000000u | (0x3u << 1) /* AP: read-only, any privilege */ | 1u /* XN */;
  MPU_RLAR = 0x0FFFFFE0u | 1u /* enable */;
  MPU_CTRL = (1u << 2) /* PRIVDEFENA */ | 1u /* ENABLE */;
  SCB_SHCSR |= (1u << 16) | (1u << 17) | (1u << 18) | (1u << 19); /* Mem, Bus, Usage, Secure */
  __asm__ volatile("dsb\n isb" ::: "memory");

  UART_BAUDDIV = 16;
  UART_CTRL = 1u; /* TX enable */

  SYST_RVR = SYSCLK_HZ / 1000u - 1u;
  SYST_CVR = 0;
  SYST_CSR = 0x7u; /* processor clock, interrupt, enable */

  __libc_init_array();
  semihosting_exit(main());
}

/* ---- vector table ---- */

typedef void (*vector_t)(void);

__attribute__((section(".vectors"), used)) const vector_t arduino_core_vectors[16 + 8] = {
    (vector_t)&__stack_top__,
    Reset_Handler,
    NMI_Handler,
    HardFault_Handler,
    MemManage_Handler,
    BusFault_Handler,
    UsageFault_Handler,
    SecureFault_Handler,
    0,
    0,
    0,
    Default_Handler, /* SVCall */
    Default_Handler, /* DebugMonitor */
    0,
    Default_Handler, /* PendSV */
    SysTick_Handler,
    Default_Handler,
    Default_Handler,
    Default_Handler,
    Default_Handler,
    Default_Handler,
    Default_Handler,
    Default_Handler,
    Default_Handler,
};

/* ---- what crti/crtbegin would give (the firmware links with -nostartfiles) ---- */

void* __dso_handle = 0;
void _init(void) {}
void _fini(void) {}

/* ---- newlib system calls ---- */

void* _sbrk(ptrdiff_t increment) {
  static char* brk = (char*)&__heap_start__;
  char* limit = (char*)&__stack_limit__;
  if (increment > 0 && (size_t)increment > (size_t)(limit - brk)) {
    errno = ENOMEM;
    return (void*)-1;
  }
  char* old = brk;
  brk += increment;
  return old;
}

int _write(int fd, const char* data, int len) {
  if (fd != 1 && fd != 2) {
    errno = EBADF;
    return -1;
  }
  arduino_core_write(data, (size_t)len);
  return len;
}

int _read(int fd, char* data, int len) {
  (void)fd;
  (void)data;
  (void)len;
  return 0;
}

int _close(int fd) {
  (void)fd;
  return -1;
}

int _lseek(int fd, int offset, int whence) {
  (void)fd;
  (void)offset;
  (void)whence;
  return 0;
}

int _fstat(int fd, struct stat* st) {
  (void)fd;
  st->st_mode = S_IFCHR;
  return 0;
}

int _isatty(int fd) { return fd <= 2; }

int _getpid(void) { return 1; }

int _kill(int pid, int sig) {
  (void)pid;
  (void)sig;
  errno = EINVAL;
  return -1;
}

void _exit(int code) {
  write_str("\r\n@@arduino-core@@ exit(");
  write_hex((uint32_t)code);
  write_str(")\r\n");
  semihosting_exit(code == 0 ? 0 : 4);
}

/* The board firmware provides atexit to every sketch (ArduinoCore-zephyr's llext exports;
 * see generator/boards/firmware_symbols.py). ArduinoCore-API's Common.h declares it weak, and a
 * weak reference does not pull newlib's member out of libc.a: without this definition it
 * resolved to address 0, which a call compiled with -mlong-calls (the board's flag) jumps to.
 * A sketch never exits, so nothing registered here ever runs. */
int atexit(void (*function)(void)) {
  (void)function;
  return 0;
}
