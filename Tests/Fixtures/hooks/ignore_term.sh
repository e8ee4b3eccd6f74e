#!/bin/sh
# Ignores SIGTERM (and so does its child): only SIGKILL to the group ends it.
trap '' TERM
sleep 1000 &
echo "$! $$" > "$1/pids.tmp"
mv "$1/pids.tmp" "$1/pids"
while :; do wait; done
