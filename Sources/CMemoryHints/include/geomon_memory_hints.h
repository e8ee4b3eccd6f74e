// CPU cache hints for the pure core's hot loops (GeomonCore). No I/O, no state, no effect on
// any result: a prefetch only asks the processor to start loading a cache line early, and it
// never faults, even for an address that is not mapped. Swift has no prefetch of its own.
#ifndef GEOMON_MEMORY_HINTS_H
#define GEOMON_MEMORY_HINTS_H

/// Starts loading the cache line holding `address` into all cache levels, without waiting.
static inline __attribute__((always_inline)) void geomon_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
