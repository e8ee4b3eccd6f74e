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
# The shipped binary links FoundationEssentials, not Foundation (and so not ICU,
# docs/running.md): only the tests' support may import Foundation.
full=$(grep -rnE '^\s*(@_exported |internal |public )?import Foundation\b' Sources --include=*.swift | grep -v '^Sources/GeomonTestSupport/' || true)
if [ -n "$full" ]; then
    echo "check-core-purity: the product imports Foundation (FoundationEssentials is the one it links):" >&2
    echo "$full" >&2
    exit 1
fi
echo "check-core-purity: the product imports no Foundation beyond FoundationEssentials" >&2
