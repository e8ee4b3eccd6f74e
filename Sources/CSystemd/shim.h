#ifndef GEOMON_CSYSTEMD_SHIM_H
#define GEOMON_CSYSTEMD_SHIM_H
/* sd-bus from libsystemd (Debian's libsystemd-dev). Swift cannot call C variadic functions:
   the GeoClue client (Sources/GeomonGeoClue) uses only sd-bus's non-variadic calls. */
#include <systemd/sd-bus.h>
#endif
