/*
 * Board half of the check's Arduino core for QEMU's mps3-an547 (Cortex-M55 with FPU and
 * MVE, Helium): the stand-in for the arduino:zephyr boards with a Cortex-M55 or M85
 * (generator/boards/budgets.py ZEPHYR_BOARDS, emulator "mps3-an547").
 *
 * Facts from QEMU's hw/arm/mps2-tz.c (qemu/qemu, the mps3tz_an547_class_init and
 * an547_raminfo of the copy the search index holds, id 242310700): CPU cortex-m55,
 * sysclk_frq 32 MHz, init_svtor 0x00000000 (the core starts in Secure state with its
 * vector table at 0), ITCM 512 KiB at 0x00000000, SRAM 2 at 0x21000000 (4 MiB, not behind
 * an MPC), UART0 (CMSDK APB UART, an547_ppcs "uart0") at 0x49303000.
 */
#define UART0_BASE 0x49303000u
#define SYSCLK_HZ 32000000u
#define ARMV8M 1
#define FLASH_MPU_SIZE_LOG2 19
#include "mps_common.inc"
