"""Board budgets: the one table of what a target offers a sketch.

`BOARDS` holds the boards the check runs (the CI matrix's keys, `check --board KEY`): the UNO Q
only, until the check runs the others. `ZEPHYR_BOARDS` is every board of the arduino:zephyr core
(FQBN, CPU flags, flash, RAM, LLEXT heap, emulator, each with its source; see its comments).

Source of the UNO Q figures: arduino-cli's size report for
`arduino:zephyr:unoq:link_mode=static` ("Sketch uses ... of 786432 bytes", "Global
variables use ... of 262144 bytes"); the MCU is an STM32U585 (Cortex-M33 with FPU).
The RAM ceiling depends on the core release (the core's `boards.txt` says
`upload.maximum_data_size` is generated into `boards.local.txt` when the core is built, so
no source file states it): 131,072 for 0.55.0 (`board details`/compile output in
weimingtom/wmt_arduino_uno_q_study README.md) and 0.55.2 (meta-pytorch/executorch-arduino
CHANGELOG [0.2.0]); 262,144 for 0.56.0 (arduino/ArduinoCore-zephyr issue #542, a compile
log) and 0.90.0 (the same CHANGELOG: "0.90.0 reports double that"). The core writes that
figure from the firmware's `CONFIG_LLEXT_HEAP_SIZE` (`extra/package_core.sh` at 0.55.0,
`extra/build.sh` at 177dcef6), so 0.56.0 and 0.90.0 have PR #511's 256 KiB LLEXT heap: why
`generator/boards/cores.py` judges the Dynamic mode with main@177dcef6's loader. Flash is
786,432 in 0.55.0 and 0.56.0 (the same two outputs); for the other two it was not read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from generator.util.errors import FatalError


@dataclass(frozen=True)
class Board:
    """A target board.

    Attributes:
        name: human name.
        fqbn: arduino-cli fully qualified board name, link mode included.
        flash_bytes: flash available to the sketch, bytes.
        ram_bytes: RAM available to the sketch's globals, bytes.
        cpu_flags: GCC flags selecting the CPU and FPU.
        key: the board's key in `ZEPHYR_BOARDS` (`check --board KEY`, the JSON's "board").
        cpu: the CPU core (`cortex-m33`).
        emulator: the `EMULATORS` key the check runs it on; None: compiled and sized only.
        llext_heap_bytes: the Dynamic mode's LLEXT heap, bytes; None: unknown (the Dynamic
            verdict is then "unknown", never a pass).
        macro: the macro the board's core defines on every compile (`ARDUINO_UNO_Q`; see
            `ZephyrBoard.macro`), which a sketch tests to refuse the board
            (`generator.pipeline.fit`).
    """

    name: str
    fqbn: str
    flash_bytes: int
    ram_bytes: int
    cpu_flags: tuple[str, ...]
    key: str
    cpu: str
    emulator: str | None
    llext_heap_bytes: int | None
    macro: str = ""


UNO_Q = Board(
    name="Arduino UNO Q",
    fqbn="arduino:zephyr:unoq:link_mode=static",
    flash_bytes=786_432,
    ram_bytes=262_144,
    cpu_flags=("-mcpu=cortex-m33", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16"),
    key="unoq",
    cpu="cortex-m33",
    emulator="mps2-an505",
    # variants/arduino_uno_q_stm32u585xx/*.conf CONFIG_LLEXT_HEAP_SIZE=256 (PR #511; see
    # generator/boards/cores.py, whose pinned core's heap the Dynamic verdict of the UNO Q uses).
    llext_heap_bytes=256 * 1024,
    # boards.txt@03c7e065 unoq.build.board=UNO_Q (see ZephyrBoard.macro).
    macro="ARDUINO_UNO_Q",
)

#: The boards CI's matrix runs on every change (generator/workflows/render.py renders its keys):
#: the UNO Q. `check --board` takes these and every `ZEPHYR_BOARDS` key (`check_boards`).
BOARDS: dict[str, Board] = {"unoq": UNO_Q}


# --- every board of the arduino:zephyr core --------------------------------------------------

#: Where the table's facts come from (each row's `source` names the files it read there).
#: - boards.txt: arduino/ArduinoCore-zephyr `boards.txt` at 03c7e065 (the newest the search
#:   index holds; 15 boards, the first with `unor4wifi` and `ventunoq`; its date was not
#:   read). It states `build.mcu`, `build.fpu`, `build.float-abi`, `upload.maximum_size` and
#:   `upload.maximum_data_size` only for `unor4wifi` and `ventunoq`; for every other board they
#:   are generated into `boards.local.txt` ("VALUES IN THIS FILE WILL HAVE NO EFFECT"), which
#:   is in no source.
#: - variants: `variants/<variant>/<variant>.conf` (`CONFIG_LLEXT_HEAP_SIZE` KiB, `CONFIG_FPU`)
#:   and `.overlay` (the `user_sketch` partition) at Stars1233/ArduinoCore-zephyr b5c2013
#:   (2026-08-21, a mirror of upstream `main`, whose boards.txt has the 15 boards but
#:   `unor4wifi` and `ventunoq`); `loader/prj.conf` there has `CONFIG_LLEXT_HEAP_SIZE=32`,
#:   which a variant that does not set it gets. The Ventuno Q's `.conf` was read from
#:   upstream at f0537655; the UNO R4 WiFi's (`arduino_uno_r4_r7fa4m1ab3cfm`) from the fork
#:   iabdalkader/ArduinoCore-zephyr at 81da6a00, the only snapshot that holds it.
#: - CPU flags: Zephyr `cmake/gcc-m-cpu.cmake` (012b224e: `-mcpu` from the CPU and
#:   `CONFIG_ARMV8_M_DSP`, `CONFIG_ARMV8_1_M_MVEI`/`MVEF`) and `cmake/gcc-m-fpu.cmake`
#:   (2b580a33: fpv4-sp-d16 on M4, fpv5-[sp-]d16 on M7/M33 by
#:   `CONFIG_CPU_HAS_FPU_DOUBLE_PRECISION`, `auto` on M55/M85), applied to the SoC Kconfig
#:   (zephyrproject-rtos/zephyr, commit per row). `cmake/compiler/gcc/target_arm.cmake`
#:   (da2b6500) adds `-mfpu` and `-mfloat-abi` (hard for `CONFIG_FP_HARDABI`, softfp for
#:   `CONFIG_FP_SOFTABI`) only when `CONFIG_FPU=y`; the default of that choice was not read,
#:   but the two generated EDK flag files below, the UNO Q's flags above and boards.txt's
#:   explicit `build.float-abi=-mfloat-abi=hard` rows all say hard. Without `CONFIG_FPU` (set
#:   by none of the variant, the board defconfig, the SoC) no float-ABI flag is passed and
#:   GCC's default applies, which the row spells `-mfloat-abi=soft`.
#:   The arduino/zephyr fork the core builds with (`west.yml`: zephyr-arduino-v4.2.0, later
#:   v4.4.1) was not read; upstream Zephyr stands in for it.
#: - flash: boards.txt `upload.maximum_size` where stated, else the variant's `user_sketch`
#:   partition size (for the UNO Q that is 768 KiB = 786,432, the figure arduino-cli reports).
#:   RAM: `upload.maximum_data_size` where stated, else what the core's `extra/build.sh`
#:   (upstream 02fe020c; Stars1233 b5c2013) writes into `boards.local.txt`: "maximum data
#:   size: configured LLEXT heap size, decimal (larger bound, real limit is smaller)", i.e.
#:   `CONFIG_LLEXT_HEAP_SIZE` x 1024 of the built firmware, for Static and Dynamic alike (the
#:   UNO Q's 262,144 above is that: 256 KiB). The same script writes `upload.maximum_size`
#:   from the firmware's `sketch_max_size`, the `user_sketch` partition, and the build flags
#:   from the LLEXT EDK's `-m*` flags (`extra/gen_arduino_files.cmake`: `machine_flags.txt`,
#:   which `platform.txt` passes to every compile as `@{compiler.zephyr.machine_flags_file}`).
#:   Generated EDK flags committed for two variants confirm the derivation below: GIGA
#:   (`variants/arduino_giga_r1_m7/llext-edk/Makefile.cflags`@840eb9b9: `-mcpu=cortex-m7
#:   -mthumb -mabi=aapcs -mfpu=fpv5-d16 -mfloat-abi=hard`) and Nano 33 BLE
#:   (`variants/arduino_nano_33_ble_nrf52840_sense/llext-edk/Makefile.cflags`@6f8eabe3:
#:   `-mcpu=cortex-m4 -mthumb -mabi=aapcs -mfpu=fpv4-sp-d16 -mfloat-abi=hard`); both also
#:   pass `-mlong-calls`, `-mfp16-format=ieee` and `-mtp=soft`, which are not CPU selection
#:   and stay out of `cpu_flags`.
#: - build.board (each row's `build_board`, whence its compile macro `ZephyrBoard.macro`):
#:   boards.txt `<key>.build.board`, which platform.txt passes as `-DARDUINO_{build.board}`.
#: - emulator: a QEMU machine whose CPU runs code built with the row's flags
#:   (data/emulated_core/board/<machine file>.c/.ld): Cortex-M33 on mps2-an505,
#:   Cortex-M7 on mps2-an500, Cortex-M4 on mps2-an386, Cortex-M55/M85 on mps3-an547; none for
#:   the Cortex-M0+ (QEMU 7.2's `-M help` lists no M0+ machine).
ZEPHYR_CORE_BOARDS_TXT = "arduino/ArduinoCore-zephyr boards.txt@03c7e065"
ZEPHYR_CORE_VARIANTS = "Stars1233/ArduinoCore-zephyr variants/@b5c2013"

#: The link modes of every arduino:zephyr board (boards.txt `menu.link_mode`: `dynamic` and
#: `static` on all 15 boards).
LINK_MODES = ("static", "dynamic")


@dataclass(frozen=True)
class Emulator:
    """A QEMU machine the check can boot a board's firmware on.

    Attributes:
        machine: the `qemu-system-arm -M` name.
        cpu: the machine's CPU (QEMU's default CPU type for it).
        board_file: the stem of its board half, `data/emulated_core/board/<stem>.c`
            and `.ld`.
    """

    machine: str
    cpu: str
    board_file: str


EMULATORS: dict[str, Emulator] = {
    "mps2-an505": Emulator("mps2-an505", "cortex-m33", "mps2_an505"),
    "mps2-an386": Emulator("mps2-an386", "cortex-m4", "mps2_an386"),
    "mps2-an500": Emulator("mps2-an500", "cortex-m7", "mps2_an500"),
    "mps3-an547": Emulator("mps3-an547", "cortex-m55", "mps3_an547"),
}


@dataclass(frozen=True)
class ZephyrBoard:
    """One board of the arduino:zephyr core, as its variant builds a sketch.

    Attributes:
        key: the board id in boards.txt (`giga`); the FQBN is `arduino:zephyr:<key>`.
        name: boards.txt `<key>.name`.
        variant: boards.txt `build.variant` (the folder under `variants/`).
        zephyr_board: boards.txt `build.zephyr_target` (the Zephyr board it is built for).
        soc: the SoC (and core) the Zephyr board runs the sketch on.
        cpu: the CPU core (`cortex-m7`).
        cpu_flags: GCC flags selecting CPU, FPU and float ABI, for Debian's GCC 12.
        cpu_note: how `cpu_flags` were derived, and what Zephyr itself passes if different.
        flash_bytes: flash for a sketch, bytes; None when no source gives it.
        ram_bytes: RAM for a sketch's globals, bytes, as arduino-cli compares them
            (`upload.maximum_data_size`); None when no source gives it.
        llext_heap_bytes: the Dynamic mode's LLEXT heap (`CONFIG_LLEXT_HEAP_SIZE` KiB x 1024);
            None when the variant's configuration was not read.
        emulator: the `EMULATORS` key the check runs it on; None: compiled and sized only.
        source: the files (and commits) every figure of the row was read from.
        build_board: boards.txt `<key>.build.board` (`GIGA`); the core's compile macro is
            `ARDUINO_<build_board>` (`macro`).
    """

    key: str
    name: str
    variant: str
    zephyr_board: str
    soc: str
    cpu: str
    cpu_flags: tuple[str, ...]
    cpu_note: str
    flash_bytes: int | None
    ram_bytes: int | None
    llext_heap_bytes: int | None
    emulator: str | None
    source: str
    build_board: str

    @property
    def macro(self) -> str:
        """The macro arduino:zephyr defines when it compiles for this board, `ARDUINO_` and
        boards.txt's `build.board` (`ARDUINO_GIGA`; the UNO R4 WiFi's `build.board` already
        starts with `ARDUINO_`, so its macro is `ARDUINO_ARDUINO_UNO_R4_WIFI`).

        Source: the core's platform.txt passes `-DARDUINO_{build.board}` in its compile
        recipes (the C and C++ patterns, lines 73 and 76), and `build.board` is each row's of
        `ZEPHYR_CORE_BOARDS_TXT` (arduino/ArduinoCore-zephyr boards.txt@03c7e065).
        """
        return f"ARDUINO_{self.build_board}"

    def fqbn(self, link_mode: str = "static") -> str:
        """arduino-cli's FQBN for `link_mode` (one of `LINK_MODES`).

        Raises:
            ValueError: `link_mode` is not one of `LINK_MODES`.
        """
        if link_mode not in LINK_MODES:
            raise ValueError(f"link mode {link_mode!r} is not one of {', '.join(LINK_MODES)}")
        return f"arduino:zephyr:{self.key}:link_mode={link_mode}"

    def budget(self, link_mode: str = "static") -> Board | None:
        """The row as a `Board` (what `check` compiles and sizes against), or None when its
        flash or RAM is unknown."""
        if self.flash_bytes is None or self.ram_bytes is None:
            return None
        return Board(self.name, self.fqbn(link_mode), self.flash_bytes, self.ram_bytes,
                     self.cpu_flags, self.key, self.cpu, self.emulator,
                     self.llext_heap_bytes, self.macro)  # fmt: skip


_K = 1024
_HARD = "-mfloat-abi=hard"
_M7 = ("-mcpu=cortex-m7", "-mthumb", _HARD, "-mfpu=fpv5-d16")
_M7_NOTE = (
    "Zephyr soc/st/stm32/stm32h7x/Kconfig (06758ff2): SOC_STM32H747XX_M7 selects CPU_CORTEX_M7, "
    "the series CPU_HAS_FPU_DOUBLE_PRECISION if CPU_CORTEX_M7; variant CONFIG_FPU=y"
)
_M33 = ("-mcpu=cortex-m33", "-mthumb", _HARD, "-mfpu=fpv5-sp-d16")
_M4F = ("-mcpu=cortex-m4", "-mthumb", _HARD, "-mfpu=fpv4-sp-d16")
_NRF52 = "Zephyr soc/nordic/nrf52/Kconfig (0cac3bd2): CPU_CORTEX_M4, CPU_HAS_FPU"
_V = ZEPHYR_CORE_VARIANTS
_B = ZEPHYR_CORE_BOARDS_TXT


def _src(variant: str, extra: str = "") -> str:
    own = f"{_B}; {_V}{variant}/{variant}.conf and .overlay"
    return f"{own}; {extra}" if extra else own


#: Every board of the arduino:zephyr core's boards.txt, in its order. Sources: see above and
#: each row's `source`.
ZEPHYR_BOARDS: dict[str, ZephyrBoard] = {
    b.key: b
    for b in (
        ZephyrBoard(
            "giga", "Arduino Giga R1", "arduino_giga_r1_stm32h747xx_m7", "arduino_giga_r1//m7",
            "STM32H747 (M7 core)", "cortex-m7", _M7, _M7_NOTE,
            0x120000, 256 * _K, 256 * _K, "mps2-an500",
            _src("arduino_giga_r1_stm32h747xx_m7", "heap in CONFIG_LLEXT_HEAP_REGION SRAM1"),
            build_board="GIGA",
        ),
        ZephyrBoard(
            "nano33ble", "Arduino Nano 33 BLE", "arduino_nano_33_ble_nrf52840_sense",
            "arduino_nano_33_ble//sense", "nRF52840", "cortex-m4", _M4F,
            _NRF52 + "; variant CONFIG_FPU=y",
            0x88000, 128 * _K, 128 * _K, "mps2-an386",
            _src("arduino_nano_33_ble_nrf52840_sense"),
            build_board="NANO33BLE",
        ),
        ZephyrBoard(
            "ek_ra8d1", "Renesas RA8D1 EK", "ek_ra8d1_r7fa8d1bhecbd", "ek_ra8d1",
            "RA8D1 (R7FA8D1BHECBD)", "cortex-m85",
            ("-mcpu=cortex-m55+nomve", "-mthumb", _HARD),
            "Zephyr soc/renesas/ra/ra8d1/Kconfig (0dc914cd and 8ea45380): CPU_CORTEX_M85, "
            "ARMV8_M_DSP, FPU and neither ARMV8_1_M_MVEI nor MVEF, so gcc-m-cpu.cmake gives "
            "-mcpu=cortex-m85+nomve (no Helium) with -mfpu=auto; Debian's GCC 12 has no "
            "cortex-m85, so this compiles as cortex-m55+nomve (the same Armv8.1-M DSP and "
            "double-precision FPU, no MVE)",
            56 * _K, 32 * _K, 32 * _K, "mps3-an547",
            _src("ek_ra8d1_r7fa8d1bhecbd", "heap: loader/prj.conf (the variant sets none)"),
            build_board="EK_RA8D1",
        ),
        ZephyrBoard(
            "frdm_mcxn947", "NXP FRDM MCXN947", "frdm_mcxn947_mcxn947_cpu0",
            "frdm_mcxn947//cpu0", "MCXN947 (CPU0)", "cortex-m33",
            ("-mcpu=cortex-m33", "-mthumb", "-mfloat-abi=soft"),
            "Zephyr soc/nxp/mcx/mcxn/Kconfig (030161d9): SOC_MCXN947_CPU0 selects CPU_CORTEX_M33, "
            "ARMV8_M_DSP, CPU_HAS_FPU but not FPU; neither the variant .conf nor "
            "boards/nxp/frdm_mcxn947/frdm_mcxn947_mcxn947_cpu0_defconfig (54a29be3) sets "
            "CONFIG_FPU, so no -mfpu and the soft float ABI",
            56 * _K, 32 * _K, 32 * _K, "mps2-an505",
            _src("frdm_mcxn947_mcxn947_cpu0", "heap: loader/prj.conf (the variant sets none)"),
            build_board="FRDM_MCXN947",
        ),
        ZephyrBoard(
            "portentah7", "Arduino Portenta H7", "arduino_portenta_h7_stm32h747xx_m7",
            "arduino_portenta_h7@1.0.0//m7", "STM32H747 (M7 core)", "cortex-m7", _M7, _M7_NOTE,
            0x120000, 256 * _K, 256 * _K, "mps2-an500",
            _src("arduino_portenta_h7_stm32h747xx_m7", "heap in CONFIG_LLEXT_HEAP_REGION SRAM1"),
            build_board="PORTENTA_H7_M7",
        ),
        ZephyrBoard(
            "nicla_vision", "Arduino Nicla Vision", "arduino_nicla_vision_stm32h747xx_m7",
            "arduino_nicla_vision//m7", "STM32H747 (M7 core)", "cortex-m7", _M7, _M7_NOTE,
            0x120000, 256 * _K, 256 * _K, "mps2-an500",
            _src("arduino_nicla_vision_stm32h747xx_m7", "heap in CONFIG_LLEXT_HEAP_REGION SRAM1"),
            build_board="NICLA_VISION",
        ),
        ZephyrBoard(
            "frdm_rw612", "NXP FRDM RW612", "frdm_rw612_rw612", "frdm_rw612", "RW612",
            "cortex-m33", ("-mcpu=cortex-m33+nodsp", "-mthumb", _HARD, "-mfpu=fpv5-sp-d16"),
            "Zephyr soc/nxp/rw/Kconfig (06758ff2, 290530ec): CPU_CORTEX_M33, CPU_HAS_FPU and no "
            "ARMV8_M_DSP, so gcc-m-cpu.cmake gives cortex-m33+nodsp; variant CONFIG_FPU=y",
            3 * _K * _K - 0x3000, 32 * _K, 32 * _K, "mps2-an505",
            _src("frdm_rw612_rw612", "heap: loader/prj.conf (the variant sets none)"),
            build_board="FRDM_RW612",
        ),
        ZephyrBoard(
            "nicla_sense", "Arduino Nicla Sense ME", "arduino_nicla_sense_me_nrf52832",
            "arduino_nicla_sense_me", "nRF52832", "cortex-m4",
            ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=soft"),
            _NRF52 + "; neither the variant .conf nor boards/arduino/nicla_sense_me/"
            "arduino_nicla_sense_me_defconfig (8a901377) sets CONFIG_FPU, so no -mfpu and the "
            "soft float ABI",
            0x10000, 15 * _K, 15 * _K, "mps2-an386",
            _src("arduino_nicla_sense_me_nrf52832"),
            build_board="NICLA_SENSE_ME",
        ),
        ZephyrBoard(
            "portentac33", "Arduino Portenta C33", "arduino_portenta_c33_r7fa6m5bh3cfc",
            "arduino_portenta_c33", "RA6M5 (R7FA6M5BH3CFC)", "cortex-m33", _M33,
            "Zephyr soc/renesas/ra/ra6m5/Kconfig (3b4fe1f6): CPU_CORTEX_M33, ARMV8_M_DSP, "
            "CPU_HAS_FPU, FPU; variant CONFIG_FPU=y",
            1024 * _K, 128 * _K, 128 * _K, "mps2-an505",
            _src("arduino_portenta_c33_r7fa6m5bh3cfc"),
            build_board="PORTENTA_C33",
        ),
        ZephyrBoard(
            "unor4wifi", "Arduino UNO R4 WiFi", "arduino_uno_r4_r7fa4m1ab3cfm",
            "arduino_uno_r4@wifi", "RA4M1 (R7FA4M1AB3CFM)", "cortex-m4", _M4F,
            "boards.txt: build.mcu=cortex-m4, build.fpu=-mfpu=fpv4-sp-d16, "
            "build.float-abi=-mfloat-abi=hard",
            122_880, 16_384, 16 * _K, "mps2-an386",
            f"{_B} (upload.maximum_size, upload.maximum_data_size, upload.address=0x22000, "
            "stated for this board); variant: the fork iabdalkader/ArduinoCore-zephyr "
            "variants/arduino_uno_r4_r7fa4m1ab3cfm/ .conf and .overlay@81da6a00 (no upstream "
            "snapshot holds it), which agree: CONFIG_LLEXT_HEAP_SIZE=16, CONFIG_FPU=y, "
            "user_sketch 120 KiB at 0x22000",
            build_board="ARDUINO_UNO_R4_WIFI",
        ),
        ZephyrBoard(
            "opta", "Arduino Opta", "arduino_opta_stm32h747xx_m7", "arduino_opta//m7",
            "STM32H747 (M7 core)", "cortex-m7", _M7, _M7_NOTE,
            0x120000, 256 * _K, 256 * _K, "mps2-an500",
            _src("arduino_opta_stm32h747xx_m7", "heap in CONFIG_LLEXT_HEAP_REGION SRAM1"),
            build_board="OPTA",
        ),
        ZephyrBoard(
            "nano_matter", "Arduino Nano Matter", "arduino_nano_matter_mgm240sd22vna",
            "arduino_nano_matter", "MGM240SD22VNA (xG24 module)", "cortex-m33", _M33,
            "Zephyr soc/silabs/silabs_s2/xg24/Kconfig (efa93eb6): SOC_SILABS_XG24 (the MGM24 "
            "modules' family) selects CPU_CORTEX_M33, ARMV8_M_DSP, CPU_HAS_FPU; variant "
            "CONFIG_FPU=y",
            0xB8000, 64 * _K, 64 * _K, "mps2-an505",
            _src("arduino_nano_matter_mgm240sd22vna",
                 "flash: the overlay makes user_sketch the Zephyr board's slot1_partition, "
                 "0xB8000 in boards/arduino/nano_matter/arduino_nano_matter.dts (72e1f28e)"),
            build_board="ARDUINO_NANO_MATTER",
        ),
        ZephyrBoard(
            "unoq", "Arduino UNO Q", "arduino_uno_q_stm32u585xx", "arduino_uno_q",
            "STM32U585", "cortex-m33", UNO_Q.cpu_flags,
            "Zephyr soc/st/stm32/stm32u5x/Kconfig (0c48a01c): CPU_CORTEX_M33, ARMV8_M_DSP, "
            "CPU_HAS_FPU; variant CONFIG_FPU=y; the same flags as UNO_Q",
            UNO_Q.flash_bytes, UNO_Q.ram_bytes, 256 * _K, "mps2-an505",
            _src("arduino_uno_q_stm32u585xx", "flash and RAM: UNO_Q above (arduino-cli output); "
                 "heap 256 KiB from PR #511, 128 KiB in every release to 0.55.1 "
                 "(generator/boards/cores.py)"),
            build_board="UNO_Q",
        ),
        ZephyrBoard(
            "nano_connect", "Arduino Nano RP2040 Connect", "arduino_nano_connect_rp2040",
            "arduino_nano_connect", "RP2040", "cortex-m0plus",
            ("-mcpu=cortex-m0plus", "-mthumb", "-mfloat-abi=soft"),
            "gcc-m-cpu.cmake: CPU_CORTEX_M0PLUS gives cortex-m0plus (the RP2040's cores; its SoC "
            "Kconfig was not read); the Cortex-M0+ has no FPU",
            0x20000, 64 * _K, 64 * _K, None,
            _src("arduino_nano_connect_rp2040"),
            build_board="NANO_RP2040_CONNECT",
        ),
        ZephyrBoard(
            "ventunoq", "Arduino Ventuno Q", "arduino_ventuno_q_stm32h5f5xx", "arduino_ventuno_q",
            "STM32H5F5", "cortex-m33", _M33,
            "boards.txt: build.mcu=cortex-m33, build.fpu=-mfpu=fpv5-sp-d16, "
            "build.float-abi=-mfloat-abi=hard",
            1_966_080, 523_624, 256 * _K, "mps2-an505",
            f"{_B} (upload.maximum_size, upload.maximum_data_size, stated for this board); "
            "heap: arduino/ArduinoCore-zephyr variants/arduino_ventuno_q_stm32h5f5xx/"
            "arduino_ventuno_q_stm32h5f5xx.conf@f0537655. Disagrees with the variant: its "
            ".overlay@0d87580e has a 1 MiB user_sketch and its heap is 256 KiB, which build.sh "
            "would turn into 1,048,576 and 262,144",
            build_board="VENTUNO_Q",
        ),
    )
}  # fmt: skip


def check_boards() -> dict[str, Board]:
    """Every board `check --board` can check, by key: each `ZEPHYR_BOARDS` row with known
    flash and RAM (as a static-link `Board`), then `BOARDS` (whose UNO Q is `UNO_Q` itself,
    so the default check is the one it always was).

    A row without an emulator (the Nano RP2040 Connect's Cortex-M0+) is compiled, linked and
    sized (its board half: `data/emulated_core/board/armv6m.c`, `.ld`) and its run stages are
    skipped (`no_emulator_reason`). Left out: a row whose flash or RAM is unknown (none today).
    """
    rows = {key: row.budget() for key, row in ZEPHYR_BOARDS.items()}
    return {**{key: b for key, b in rows.items() if b is not None}, **BOARDS}


def board_keys(values: Sequence[str] | None, table: Mapping[str, Board]) -> list[str]:
    """`--board`'s keys in order: None is the UNO Q; `all` is every key of `table`
    (`check_boards`), in its order, where it stands.

    Raises:
        FatalError: a key `table` does not have (argparse refuses it first on the command
            line).
    """
    keys: list[str] = []
    for value in values or ["unoq"]:
        for key in list(table) if value == "all" else [value]:
            if key not in table:
                raise FatalError(f"no board {key!r}; --board takes {', '.join(table)} or all")
            if key not in keys:
                keys.append(key)
    return keys


#: Why a CPU that no `EMULATORS` machine runs has none (`Board.cpu` -> reason).
#: Source: QEMU 7.2's `qemu-system-arm -M help` lists no Cortex-M0+ machine (see the
#: table's sources above).
NO_EMULATOR = {"cortex-m0plus": "QEMU 7.2 has none for the Cortex-M0+"}


def cpu_name(cpu: str) -> str:
    """`Board.cpu` as Arm writes it: "cortex-m0plus" -> "Cortex-M0+", "cortex-m33" ->
    "Cortex-M33"."""
    return cpu.replace("cortex-m", "Cortex-M").replace("plus", "+")


def no_emulator_reason(board: Board) -> str:
    """Why a run stage of `board` (one without an emulator) is skipped: "not run: Arduino
    Nano RP2040 Connect (Cortex-M0+) has no emulator (QEMU 7.2 has none for the
    Cortex-M0+): compiled and sized only"."""
    cpu = cpu_name(board.cpu)
    why = NO_EMULATOR.get(board.cpu, f"no machine of EMULATORS has a {cpu}")
    return f"not run: {board.name} ({cpu}) has no emulator ({why}): compiled and sized only"


# --- the compact runtime ------------------------------------------------------------------------

#: A board whose sketch flash is at most this many bytes compiles the runtime compact
#: (`generator/pipeline/compact.py`: without the runtime's log, and the code of a program
#: verification the library never runs).
#: Measured (`check --board`, gcc-arm size link, ExecuTorch main cff6f4dd, every dtype): the
#: default AddModel takes 122,756 B on the UNO Q and 124,356 B on the FRDM MCXN947, more than
#: the EK-RA8D1's and FRDM MCXN947's 57,344 B and the Nicla Sense ME's 65,536 B, and within
#: 108 B of the UNO R4 WiFi's 122,880 B; compact, 40,420 B (FRDM MCXN947). The table has no
#: board between 131,072 B (Nano RP2040 Connect) and 557,056 B (Nano 33 BLE), so any bound in
#: that gap picks the same five boards.
COMPACT_FLASH_MAX_BYTES = 131_072


def compact_boards() -> list[ZephyrBoard]:
    """The `ZEPHYR_BOARDS` rows that compile the runtime compact (sketch flash known and at most
    `COMPACT_FLASH_MAX_BYTES`), in table order."""
    return [
        row
        for row in ZEPHYR_BOARDS.values()
        if row.flash_bytes is not None and row.flash_bytes <= COMPACT_FLASH_MAX_BYTES
    ]


def is_compact(board: Board) -> bool:
    """True when the library compiles its runtime compact for `board`: when the core defines,
    compiling for it, the macro of a `compact_boards()` row (what `src/executorch_compact.h`
    tests). A stand-in with another board's CPU but no macro (`macro=""`) is not."""
    return bool(board.macro) and board.macro in {row.macro for row in compact_boards()}


def helium_stand_in() -> Board:
    """A Cortex-M55 with MVE (Helium) on QEMU mps3-an547, which no board of the table has (the
    EK-RA8D1's Cortex-M85 is built without it): the stand-in the CMSIS-NN MVE tier is checked
    on (`benchmarks/bench_tiers.py`, `tests/e2e/test_e2e_check.py`). The EK-RA8D1's row with MVE
    flags, 512 KiB of flash (mps3_an547.ld's FLASH window) and the UNO Q's RAM, so that
    KeywordSpotting fits; no board macro, since it is no EK-RA8D1 (whose macro compiles the
    compact runtime)."""
    ek = ZEPHYR_BOARDS["ek_ra8d1"].budget()
    assert ek is not None  # the row's flash and RAM are known
    return dataclasses.replace(
        ek,
        key="tier-mve",
        name="Cortex-M55 with MVE",
        cpu_flags=("-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"),
        macro="",
        flash_bytes=512 * 1024,
        ram_bytes=UNO_Q.ram_bytes,
    )
