/*
 * Board half of the check's Arduino core for QEMU's mps2-an386 (Cortex-M4 with its
 * single-precision FPU): the stand-in for the arduino:zephyr boards with a Cortex-M4F
 * (generator/boards/budgets.py ZEPHYR_BOARDS, emulator "mps2-an386").
 *
 * Facts from QEMU's hw/arm/mps2.c (qemu/qemu; read at pbo-linaro/qemu-ci 08645903, the
 * same AN385/AN386/AN500 code in QEMU 7.2, which runs it here): CPU cortex-m4, UART0 (CMSDK
 * APB UART) at 0x40004000, SYSCLK_FRQ 25 MHz (the CPU clock), ZBT SSRAM1 4 MiB at
 * 0x00000000 (where the vector table is at reset: VTOR 0), ZBT SSRAM2&3 4 MiB at
 * 0x20000000. ARMv7-M: no MSPLIM, so a stack overflow is not caught here.
 */
#define UART0_BASE 0x40004000u
#define SYSCLK_HZ 25000000u
#define ARMV8M 0
#define FLASH_MPU_SIZE_LOG2 22
#include "mps_common.inc"
