#!/bin/sh
# Fails (exit 3) until it has been run $2 times; logs "event-id attempt" lines to $1/log.
set -eu
n=$(cat "$1/count" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$1/count"
echo "$GEOMON_EVENT_ID $GEOMON_ATTEMPT" >> "$1/log"
if [ "$n" -lt "$2" ]; then
    echo "failing on purpose (run $n)" >&2
    exit 3
fi
echo "ok on run $n"
