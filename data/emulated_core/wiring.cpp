/*
 * The board half of the Arduino API that does not depend on the target: Serial on the
 * console (arduino_core_write, from board/mps2_an505.c or host/host.c), pins that do
 * nothing (there is no pin to drive in the emulator or on the host), yield and the
 * WMath random functions the board core provides.
 */
#include <Arduino.h>

arduino::ConsoleSerial Serial;

size_t arduino::ConsoleSerial::write(uint8_t c) {
  char ch = (char)c;
  arduino_core_write(&ch, 1);
  return 1;
}

size_t arduino::ConsoleSerial::write(const uint8_t* buffer, size_t size) {
  arduino_core_write((const char*)buffer, size);
  return size;
}

extern "C" {

void yield(void) {}

void pinMode(pin_size_t pinNumber, PinMode pinMode) {
  (void)pinNumber;
  (void)pinMode;
}

void digitalWrite(pin_size_t pinNumber, PinStatus status) {
  (void)pinNumber;
  (void)status;
}

PinStatus digitalRead(pin_size_t pinNumber) {
  (void)pinNumber;
  return LOW;
}

int analogRead(pin_size_t pinNumber) {
  (void)pinNumber;
  return 0;
}

void analogWrite(pin_size_t pinNumber, int value) {
  (void)pinNumber;
  (void)value;
}

}  // extern "C"

void randomSeed(unsigned long seed) {
  if (seed != 0) srand((unsigned int)seed);
}

long random(long howbig) {
  return howbig == 0 ? 0 : rand() % howbig;
}

long random(long howsmall, long howbig) {
  return howsmall >= howbig ? howsmall : random(howbig - howsmall) + howsmall;
}
