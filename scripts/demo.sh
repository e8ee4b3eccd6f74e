#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run the main job on the
# bundled default.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
swift build -c release --product geomon 2>&1 | grep -E 'error|warning: unre|Compiling geomon|Build complete' || true
bin="$(swift build -c release --show-bin-path)/geomon"
[ -x "$bin" ] || { echo "demo: build failed" >&2; exit 1; }
echo "== geomon validate profiles/*.yaml" >&2
"$bin" validate profiles/*.yaml
