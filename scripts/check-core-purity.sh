#!/usr/bin/env bash
# Fails when GeomonCore reaches outside itself: Foundation, C modules, clocks, I/O.
set -euo pipefail
cd "$(dirname "$0")/.."
hits=$(grep -rnE '^\s*(@_exported |internal |public )?import (Foundation|FoundationEssentials|CYAML|CSQLite|CGPS|CGeomonShims|Dispatch)\b|Date\(\)|ContinuousClock(\(\))?\.now|SuspendingClock(\(\))?\.now|FileManager|fopen\(|getenv\(|ProcessInfo|DispatchQueue|Task\.sleep|usleep\(|time\(nil\)|clock_gettime|gettimeofday|random\(' Sources/GeomonCore || true)
if [ -n "$hits" ]; then
    echo "check-core-purity: GeomonCore must stay pure (docs/ARCHITECTURE.md):" >&2
    echo "$hits" >&2
    exit 1
fi
echo "check-core-purity: GeomonCore is pure" >&2
