#!/bin/sh
# Example geomon hook: prints the event it was given.
#
# geomon runs hooks directly (no shell in between) with a clean environment: the event in
# GEOMON_* variables (plus PATH, HOME, LANG), and the event as one JSON object on stdin.
# This script writes both to stderr and appends them to a log file, then exits 0. The log is
# /tmp/geomon-notify.log unless the profile passes another one as an argument:
#   exec: [hooks/notify.sh, --log=/var/lib/geomon/notify.log]
# A non-zero exit (or a timeout) makes geomon retry the delivery later with the same
# GEOMON_EVENT_ID, so real hooks should be idempotent on that id.
set -u

log=/tmp/geomon-notify.log
for arg in "$@"; do
    case "$arg" in
        --log=*) log="${arg#--log=}" ;;
    esac
done
payload="$(cat)"

{
    printf '%s geomon event\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    env | grep '^GEOMON_' | sort
    printf 'args: %s\n' "$*"
    printf 'stdin: %s\n' "$payload"
    printf '\n'
} | tee -a "$log" >&2

exit 0
