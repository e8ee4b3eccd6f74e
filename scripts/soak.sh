#!/usr/bin/env bash
# Memory of `geomon run` over many fixes: a real gpsd (gpsfake) serves the full 3 h Swiss drive
# (10,327 epochs) about 80x faster than real time while the receiver is kept on; RSS is
# sampled every 5 s. Usage: scripts/soak.sh [SECONDS_PER_SENTENCE] (default 0.003)
set -euo pipefail
cd "$(dirname "$0")/.."
cycle=${1:-0.003}
bin=${GEOMON:-.build/debug/geomon}
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
setsid /usr/bin/python3 /usr/bin/gpsfake -1 -n -q -W 2 -c "$cycle" -P "$port" Tests/Fixtures/tracks/genivi_20100403_Z205_Switzerland.nmea </dev/null >/dev/null 2>&1 &
gf=$!
gm=""
trap 'kill -9 -- "-$gf" 2>/dev/null; [ -n "$gm" ] && kill -9 "$gm" 2>/dev/null; rm -rf "$work"' EXIT
sleep 1.5
"$bin" run --profile profiles/geofence-only.yaml --db "$work/soak.db" --gpsd "127.0.0.1:$port" --always-on 2>"$work/log" &
gm=$!
echo "seconds rss_kb"
start=$(date +%s)
while kill -0 $gf 2>/dev/null; do
    echo "$(( $(date +%s) - start )) $(awk '/VmRSS/ {print $2}' /proc/$gm/status)"
    sleep 5
done
kill -TERM $gm; wait $gm || true
"$bin" status --db "$work/soak.db" --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); print("fixes", d["usable_fixes"], "events", d["events"])'
