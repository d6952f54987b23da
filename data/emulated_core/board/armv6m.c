/*
 * Board half of the check's Arduino core for an ARMv6-M board (the Cortex-M0+ of the Nano
 * RP2040 Connect, generator/boards/budgets.py ZEPHYR_BOARDS "nano_connect"), which no emulator runs
 * (QEMU 7.2 has no Cortex-M0+ machine): the check compiles, links and sizes its firmware,
 * and never boots it. It is mps_common.inc, as the emulated boards have it, so the sizes
 * count the same board half; what ARMv6-M lacks that file leaves out (`__ARM_ARCH_6M__`).
 *
 * Nothing here runs, so the addresses only have to link: UART0_BASE is a CMSDK APB UART's
 * (the mps2 machines'), not the RP2040's PL011 at 0x40034000; SYSCLK_HZ is the RP2040's
 * clk_sys (Zephyr dts/arm/raspberrypi/rpi_pico/rp2040.dtsi@db786f32: 125000000).
 * FLASH_MPU_SIZE_LOG2 24 covers the 16 MiB at address 0 (the RP2040's boot ROM there; this
 * file's flash is at 0x10000000, armv6m.ld).
 */
#if !defined(__ARM_ARCH_6M__)
#error "armv6m.c is the ARMv6-M board half: compile it with -mcpu=cortex-m0plus"
#endif
#define UART0_BASE 0x40004000u
#define SYSCLK_HZ 125000000u
#define ARMV8M 0
#define FLASH_MPU_SIZE_LOG2 24
#include "mps_common.inc"
