#define _GNU_SOURCE
#include "geomon_shims.h"
int geomon_shims_version(void) { return 1; }
