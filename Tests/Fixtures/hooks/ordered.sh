#!/bin/sh
# A slow hook: appends "fence event-id" to $1, after a short pause.
sleep 0.01
printf '%s %s\n' "$GEOMON_FENCE" "$GEOMON_EVENT_ID" >> "$1"
