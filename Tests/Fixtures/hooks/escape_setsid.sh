#!/bin/sh
# Starts a child that leaves the process group with setsid(1) and keeps stdout open, then exits.
setsid sleep 1000 &
echo "$!" > "$1/pid"
exit 0
