#!/bin/sh
# Example geomon hook: prints the event it was given.
#
# geomon runs hooks directly (no shell in between) with the event in GEOMON_* environment
# variables and as one JSON object on stdin. This script writes both to stderr and appends
# them to a log file (GEOMON_NOTIFY_LOG, default: /tmp/geomon-notify.log), then exits 0.
# A non-zero exit (or a timeout) makes geomon retry the delivery later with the same
# GEOMON_EVENT_ID, so real hooks should be idempotent on that id.
set -u

log="${GEOMON_NOTIFY_LOG:-/tmp/geomon-notify.log}"
payload="$(cat)"

{
    printf '%s geomon event\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    env | grep '^GEOMON_' | sort
    printf 'args: %s\n' "$*"
    printf 'stdin: %s\n' "$payload"
    printf '\n'
} | tee -a "$log" >&2

exit 0
