#!/usr/bin/env bash
# The README's second command: install what is missing, build, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
swift build --build-tests 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\] (Compiling|Emitting|Write|Linking|Applying|Wrapping|Planning)' || true
swift build --build-tests >/dev/null 2>&1 || { swift build --build-tests; exit 1; }
swift test --skip-build
