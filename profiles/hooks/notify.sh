#!/bin/sh
# Example geomon hook: prints the event it was given.
#
# geomon runs hooks directly (no shell in between) with a clean environment: the event in
# GEOMON_* variables (plus PATH, HOME, LANG), and the event as one JSON object on stdin.
# This script prints both to stderr and exits 0. geomon logs what a hook prints ("hook output"
# lines), so under systemd it is in the journal: journalctl -u geomon@PROFILE. With
# --log=FILE it also appends them to FILE, e.g.
#   exec: [hooks/notify.sh, --log=/var/lib/geomon/notify.log]
# (the service may write only below /var/lib/geomon, and its /tmp is private to it).
# A non-zero exit (or a timeout) makes geomon retry the delivery later with the same
# GEOMON_EVENT_ID, so real hooks should be idempotent on that id.
set -u

log=""
for arg in "$@"; do
    case "$arg" in
        --log=*) log="${arg#--log=}" ;;
    esac
done
payload="$(cat)"

report() {
    printf '%s geomon event\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    env | grep '^GEOMON_' | sort
    printf 'args: %s\n' "$*"
    printf 'stdin: %s\n' "$payload"
}
if [ -n "$log" ]; then
    { report "$@"; printf '\n'; } | tee -a "$log" >&2
else
    report "$@" >&2
fi

exit 0
