#ifndef GEOMON_CMOSQUITTO_SHIM_H
#define GEOMON_CMOSQUITTO_SHIM_H
/* libmosquitto (Debian's libmosquitto-dev, 2.0). Every call geomon makes is non-variadic; the
   publisher (Sources/GeomonPublish) is the only user. */
#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <stdbool.h>

#if LIBMOSQUITTO_MAJOR < 2
#error "geomon needs libmosquitto 2.0 or newer"
#endif

#endif
