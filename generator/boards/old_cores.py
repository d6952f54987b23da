"""The old Arduino cores: the boards whose core ships a GCC too old for the runtime, and the
arduino:zephyr board (`generator.boards.budgets.ZEPHYR_BOARDS`) each can be built for instead.

ExecuTorch's runtime needs GCC 9 or newer (`MIN_GCC`; GCC 12 is what the library is checked
with). The mbed, Renesas and SAMD cores ship arm-none-eabi-gcc 7-2017q4. From this table the
build renders `src/executorch_board_check.h` (`generator.pipeline.board_check`), which
ExecuTorch.h includes: on an older GCC, one `#error` per board naming its arduino:zephyr
board when it has one, the plain message otherwise.

How a compile names its board: each core's platform.txt passes `-DARDUINO_{build.board}
-DARDUINO_ARCH_{build.arch}` to every compile (`recipe.c.o.pattern`, `recipe.cpp.o.pattern`),
and arduino-cli sets `build.arch` to the platform's architecture in upper case
(arduino/arduino-cli internal/arduino/cores/board.go:139 @5994c5d3: `strings.ToUpper(
b.PlatformRelease.Platform.Architecture)`). So the Nano 33 BLE on arduino:mbed_nano compiles
with `ARDUINO_ARCH_MBED_NANO` and `ARDUINO_ARDUINO_NANO33BLE` (its build.board is
`ARDUINO_NANO33BLE`): the pair tells the core and the board.

Sources, each the newest snapshot the mirror holds:

- `MBED`: arduino/ArduinoCore-mbed @b4ad4e72 (2026-05-20, after tag 4.6.0). boards.txt: board
  ids, `name`, `build.board`, and `build.compiler_path={runtime.tools.arm-none-eabi-gcc-7-2017q4
  .path}/bin/` for every board; platform.txt lines 73 and 76 (`-DARDUINO_{build.board}
  -DARDUINO_ARCH_{build.arch} -DARDUINO_ARCH_MBED`). One repository, several cores:
  `extras/package.sh` keeps in each core's boards.txt only the ids of
  `extras/variables/<flavour>.variables` `FQBNS`, and `extras/json/mbed_<flavour>-tag.template
  .json` gives each core's architecture and its `toolsDependencies` arm-none-eabi-gcc
  `7-2017q4`. The Portenta H7, Nicla Vision and Opta set `build.board={build.variant}`, so
  their `target_core` menu decides it: `cm7` gives the board's own variant, `cm4` (the M4
  co-processor) `GENERIC_STM32H747_M4`, which has no arduino:zephyr board (those variants
  run the M7). The GIGA sets `build.board={build.variant}` and then `build.board=GIGA`; the
  later line wins, so both of its target cores compile as `GIGA`.
- `RENESAS`: arduino/ArduinoCore-renesas @99f8ee40 (2026-02-27, 1.5.3). boards.txt (ids,
  `name`, `build.board`, the same gcc-7-2017q4 `build.compiler_path`); platform.txt lines 71
  and 74; `extras/package.sh` makes renesas_portenta (boards.txt without nanor4, minima,
  unor4wifi, muxto, opta_*) and renesas_uno (without portenta_c33, muxto, opta_*), and
  `extras/package_index.json.template` gives both arm-none-eabi-gcc `7-2017q4`. muxto and the
  opta_* ids ship in neither core and are left out.
- SAMD: arduino/ArduinoCore-samd @993398cb (1.8.14): platform.txt `compiler.path={runtime.
  tools.arm-none-eabi-gcc-7-2017q4.path}/bin/` and `-DARDUINO_{build.board}` (lines 40, 93).
  None of its boards (MKR, Nano 33 IoT, Zero, ...) has an arduino:zephyr board, so the table
  has no row for it: its boards get the plain message.

A board is matched to an arduino:zephyr board by being the same board (its boards.txt
`name` against `ZEPHYR_BOARDS`' `name`); the Nano 33 BLE Sense is the mbed id `nano33ble`
too (mbed_nano-tag.template.json lists "Arduino Nano 33 BLE Sense" among the core's boards,
boards.txt has no id of its own for it). A board without such a match has `zephyr=None`.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The oldest GCC the runtime's templates compile with ("a cautious lower bound": ExecuTorch.h).
MIN_GCC = 9


@dataclass(frozen=True)
class OldBoard:
    """One board of an old core, as one compile sees it.

    Attributes:
        board_id: the boards.txt id (`nano33ble`).
        name: boards.txt `<id>.name`.
        build_board: boards.txt `build.board` with the menu option `menu` chosen; the compile
            defines `ARDUINO_<build_board>`.
        zephyr: the `ZEPHYR_BOARDS` key of the same board, or None when it has none.
        menu: the board menu option this `build_board` needs (`target_core=cm7`), or "".
    """

    board_id: str
    name: str
    build_board: str
    zephyr: str | None
    menu: str = ""

    @property
    def board_macro(self) -> str:
        """The macro platform.txt defines for the board: `ARDUINO_<build.board>`."""
        return f"ARDUINO_{self.build_board}"


@dataclass(frozen=True)
class OldCore:
    """A core that ships a GCC older than `MIN_GCC`.

    Attributes:
        packager: the package (`arduino`).
        architecture: the platform's architecture (`mbed_nano`).
        gcc_tool: the arm-none-eabi-gcc tool version the core depends on (`7-2017q4`).
        boards: its boards, in boards.txt order.
        source: where the row was read (see the module docstring).
    """

    packager: str
    architecture: str
    gcc_tool: str
    boards: tuple[OldBoard, ...]
    source: str

    @property
    def platform(self) -> str:
        """The platform's id, the FQBN's first two parts (`arduino:mbed_nano`)."""
        return f"{self.packager}:{self.architecture}"

    @property
    def arch_macro(self) -> str:
        """The macro platform.txt defines for the core: `ARDUINO_ARCH_<ARCHITECTURE>`."""
        return f"ARDUINO_ARCH_{self.architecture.upper()}"

    @property
    def gcc_major(self) -> int:
        """The GCC major version of `gcc_tool` (`7-2017q4` -> 7)."""
        return int(self.gcc_tool.split("-", 1)[0])


MBED = "arduino/ArduinoCore-mbed @b4ad4e72"
RENESAS = "arduino/ArduinoCore-renesas @99f8ee40"
_GCC7 = "7-2017q4"
_M4 = "GENERIC_STM32H747_M4"


def _mbed(flavour: str) -> str:
    return (
        f"{MBED}: boards.txt, platform.txt, extras/variables/{flavour}.variables, "
        f"extras/json/mbed_{flavour}-tag.template.json"
    )


def _renesas(variant: str) -> str:
    return (
        f"{RENESAS}: boards.txt, platform.txt, extras/package.sh ({variant}), "
        "extras/package_index.json.template"
    )


#: Every board each old core ships, by core. Sources: see the module docstring.
OLD_CORES: tuple[OldCore, ...] = (
    OldCore("arduino", "mbed_portenta", _GCC7, (
        OldBoard("envie_m7", "Arduino Portenta H7", "PORTENTA_H7_M7", "portentah7",
                 "target_core=cm7"),
        OldBoard("envie_m7", "Arduino Portenta H7", _M4, None, "target_core=cm4"),
        OldBoard("portenta_x8", "Arduino Portenta X8", "PORTENTA_X8", None),
    ), _mbed("portenta")),
    OldCore("arduino", "mbed_nano", _GCC7, (
        OldBoard("nanorp2040connect", "Arduino Nano RP2040 Connect", "NANO_RP2040_CONNECT",
                 "nano_connect"),
        OldBoard("nano33ble", "Arduino Nano 33 BLE", "ARDUINO_NANO33BLE", "nano33ble"),
    ), _mbed("nano")),
    OldCore("arduino", "mbed_nicla", _GCC7, (
        OldBoard("nicla_sense", "Arduino Nicla Sense ME", "NICLA", "nicla_sense"),
        OldBoard("nicla_voice", "Arduino Nicla Voice", "NICLA", None),
        OldBoard("nicla_vision", "Arduino Nicla Vision", "NICLA_VISION", "nicla_vision",
                 "target_core=cm7"),
        OldBoard("nicla_vision", "Arduino Nicla Vision", _M4, None, "target_core=cm4"),
    ), _mbed("nicla")),
    OldCore("arduino", "mbed_opta", _GCC7, (
        OldBoard("opta", "Opta", "OPTA", "opta", "target_core=cm7"),
        OldBoard("opta", "Opta", _M4, None, "target_core=cm4"),
    ), _mbed("opta")),
    OldCore("arduino", "mbed_giga", _GCC7, (
        OldBoard("giga", "Arduino Giga R1", "GIGA", "giga"),
    ), _mbed("giga")),
    OldCore("arduino", "mbed_edge", _GCC7, (
        OldBoard("edge_control", "Arduino Edge Control", "EDGE_CONTROL", None),
    ), _mbed("edge")),
    OldCore("arduino", "mbed_rp2040", _GCC7, (
        OldBoard("pico", "Raspberry Pi Pico", "RASPBERRY_PI_PICO", None),
    ), _mbed("rp2040")),
    OldCore("arduino", "mbed_stella", _GCC7, (
        OldBoard("stella", "Arduino Stella", "STELLA", None),
    ), _mbed("stella")),
    OldCore("arduino", "renesas_portenta", _GCC7, (
        OldBoard("portenta_c33", "Arduino Portenta C33", "PORTENTA_C33", "portentac33"),
    ), _renesas("portenta")),
    OldCore("arduino", "renesas_uno", _GCC7, (
        OldBoard("minima", "Arduino UNO R4 Minima", "MINIMA", None),
        OldBoard("unor4wifi", "Arduino UNO R4 WiFi", "UNOWIFIR4", "unor4wifi"),
        OldBoard("nanor4", "Arduino Nano R4", "nanor4", None),
    ), _renesas("uno")),
)  # fmt: skip
