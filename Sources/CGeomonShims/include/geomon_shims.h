#ifndef GEOMON_SHIMS_H
#define GEOMON_SHIMS_H
/* Helpers for what Swift cannot reach on glibc (_GNU_SOURCE spawn attributes). */
int geomon_shims_version(void);
#endif
