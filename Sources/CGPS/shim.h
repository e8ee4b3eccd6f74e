#ifndef GEOMON_CGPS_SHIM_H
#define GEOMON_CGPS_SHIM_H
#include <gps.h>
/* GPSD_API_MAJOR_VERSION-neutral accessors live here (static inline), so one Swift
   source builds against gpsd 3.22 (API 11, Debian 12) and newer (API 14+). */
#endif
