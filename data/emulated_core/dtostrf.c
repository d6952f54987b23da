/*
 * dtostrf for ArduinoCore-API's String(float/double, decimals): the API's own
 * implementation, included the way api/deprecated-avr-comp/avr/dtostrf.c.impl asks a
 * core to (neither glibc nor newlib has dtostrf). It formats with sprintf("%*.*f").
 */
#include "api/deprecated-avr-comp/avr/dtostrf.c.impl"
