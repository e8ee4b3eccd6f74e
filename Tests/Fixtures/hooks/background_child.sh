#!/bin/sh
# Leaves a background child behind (holding stdout open) and exits 0 at once.
sleep 1000 &
echo "$!" > "$1/bgpid"
echo started
exit 0
