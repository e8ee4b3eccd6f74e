// The hints are header-only (static inline, see include/geomon_memory_hints.h); SwiftPM needs
// one source file per C target.
#include "geomon_memory_hints.h"
