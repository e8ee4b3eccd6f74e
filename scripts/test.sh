#!/usr/bin/env bash
# The README's second command: install what is missing, build, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
bash scripts/check-core-purity.sh
echo "== swift build --build-tests" >&2
if ! swift build --build-tests > /tmp/geomon-build.log 2>&1; then
    grep -E 'error|warning: unre' /tmp/geomon-build.log || tail -50 /tmp/geomon-build.log
    exit 1
fi
echo "== swift test (built in ${SECONDS} s so far)" >&2
# About 10 minutes on two cores; a test that hangs fails the run here, not at CI's limit.
timeout --kill-after=60 2700 swift test --skip-build
echo "== tests done after ${SECONDS} s" >&2
echo "== the README's first command: scripts/demo.sh (about two minutes)" >&2
if ! bash scripts/demo.sh > /tmp/geomon-demo.out 2>&1; then
    tail -40 /tmp/geomon-demo.out
    echo "demo: FAIL" >&2
    exit 1
fi
grep -q "the same events at the same times" /tmp/geomon-demo.out && [ "$(grep -c '^{"id"' /tmp/geomon-demo.out)" -ge 5 ] \
    && grep -q 'power.action="gnss-off' /tmp/geomon-demo.out && grep -q 'hook output' /tmp/geomon-demo.out \
    || { tail -40 /tmp/geomon-demo.out; echo "demo: FAIL: no events, receiver switches or hook output live" >&2; exit 1; }
echo "demo: $(grep -c '^{"id"' /tmp/geomon-demo.out) events live, the replay's the same"
echo "== the Debian package: build, lintian, systemd-analyze, install, purge (scripts/package-test.sh)" >&2
bash scripts/package-test.sh
echo "== crash torture (short form: 20 kills; long form: python3 scripts/torture.py --kills 200)" >&2
python3 scripts/torture.py --kills 20 --seed 1
echo "== fuzzing (each target 60 s; longer: scripts/fuzz.sh all SECONDS)" >&2
bash scripts/fuzz.sh all 60
echo "== all done in ${SECONDS} s" >&2
