#!/usr/bin/env bash
# Build and run the whole test suite under a sanitizer (not part of CI: slow).
#
#   scripts/sanitize.sh address|thread [swift test args...]
#
# Builds into its own scratch directory (.build/asan or .build/tsan) so the normal debug build
# is untouched. Leak checking is off (out of scope: the Swift runtime's caches look like leaks).
# Extra arguments go to `swift test` (e.g. --filter GeomonStoreTests).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

case ${1:-} in
    address) scratch=.build/asan ;;
    thread) scratch=.build/tsan ;;
    *) echo "usage: scripts/sanitize.sh address|thread [swift test args...]" >&2; exit 64 ;;
esac
sanitizer=$1
shift

# Swift's crash backtracer would run inside the sanitizer's signal handling; the sanitizer
# prints its own report.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=0 second_deadlock_stack=1}

swift build --build-tests --scratch-path "$scratch" -Xswiftc -sanitize="$sanitizer"
swift test --skip-build --scratch-path "$scratch" "$@"
