#!/bin/sh
# Starts a child that sleeps, records both pids in $1/pids, then waits forever.
sleep 1000 &
echo "$! $$" > "$1/pids.tmp"
mv "$1/pids.tmp" "$1/pids"
wait
