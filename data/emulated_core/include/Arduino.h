/*
 * Arduino.h of `python -m generator check`: Arduino's own API plus the little a board core
 * adds to it, laid out like the UNO Q's core (arduino:zephyr cores/arduino/Arduino.h).
 *
 * The API is ArduinoCore-API at the version arduino:zephyr uses, vendored unmodified in
 * vendored/arduinocore-api/ (its pin: vendored/arduinocore-api.yaml), so String, Stream,
 * Print's overloads, the PinStatus enum and the global min/max templates are the board's.
 * Ours is the board half only: Serial on the console (CMSDK UART0 of the emulated
 * mps2-an505, or stdout in the host build), time, pins that do nothing, itoa and friends
 * (wiring.cpp, itoa.c, dtostrf.c, board/mps2_an505.c or host/host.c).
 */
#ifndef EXECUTORCH_CHECK_ARDUINO_H
#define EXECUTORCH_CHECK_ARDUINO_H

#include <api/ArduinoAPI.h>

/* The UNO Q's: the first builtin-led-gpios entry (PH10) is entry 50 of its
 * digital-pin-gpios (arduino:zephyr variants/arduino_uno_q_stm32u585xx). */
#define LED_BUILTIN 50

#ifdef __cplusplus
extern "C" {
#endif

void interrupts(void);
void noInterrupts(void);

/* Board half: write bytes to the serial console. */
void arduino_core_write(const char* data, size_t len);

#ifdef __cplusplus
} /* extern "C" */

#include <api/HardwareSerial.h>
#include <api/itoa.h>
#include <strings.h>

namespace arduino {

/* Serial: writes go to the console; there is never anything to read. */
class ConsoleSerial : public HardwareSerial {
 public:
  void begin(unsigned long baudrate) override { (void)baudrate; }
  void begin(unsigned long baudrate, uint16_t config) override {
    (void)baudrate;
    (void)config;
  }
  void end() override {}
  int available() override { return 0; }
  int peek() override { return -1; }
  int read() override { return -1; }
  void flush() override {}
  size_t write(uint8_t c) override;
  size_t write(const uint8_t* buffer, size_t size) override;
  using Print::write;
  operator bool() override { return true; }
};

}  // namespace arduino

extern arduino::ConsoleSerial Serial;

// As on the board: the API without its namespace.
using namespace arduino;

#endif /* __cplusplus */

#endif /* EXECUTORCH_CHECK_ARDUINO_H */
