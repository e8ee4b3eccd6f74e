#!/usr/bin/env bash
# Measures what an idle `geomon run` costs: loop wake-ups per minute and RSS.
#
# A real gpsd (gpsfake, which stays up after the log) serves the short Swiss drive; the
# profile's only fence is ~50 km away, so after the first fixes the policy turns the receiver
# off for max_sleep (30 min) and the daemon has nothing to do. Usage: scripts/idle-cost.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-180}
bin=${GEOMON:-.build/debug/geomon}
work=$(mktemp -d)
gf=""; gm=""
trap '[ -n "$gf" ] && kill -9 -- "-$gf" 2>/dev/null; [ -n "$gm" ] && kill -9 "$gm" 2>/dev/null; rm -rf "$work"' EXIT
cat > "$work/idle.yaml" <<'YAML'
version: 1
name: idle
mode: regions
sources:
  gnss: {plugin: gpsd}
policy: {max_speed: 30m/s, min_sleep: 10s, max_sleep: 30m}
fences:
  - id: far-away
    circle: {lat: 46.8, lon: 7.4, radius: 200m}
YAML
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
setsid /usr/bin/python3 /usr/bin/gpsfake -1 -n -q -W 100000 -c 0.01 -P "$port" Tests/Fixtures/tracks/genivi_20100403_Z205_Switzerland_short.nmea </dev/null >/dev/null 2>&1 &
gf=$!
sleep 1.5
"$bin" run --profile "$work/idle.yaml" --db "$work/idle.db" --gpsd "127.0.0.1:$port" --log-level info 2>"$work/log" &
gm=$!
sleep 20  # the log plays; the receiver goes off
w0=$("$bin" status --db "$work/idle.db" --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["daemon"]["loop_wakeups"])')
sleep "$seconds"
# status is written on changes only; ask for a fresh figure through /proc instead.
rss=$(awk '/VmRSS/ {print $2}' /proc/$gm/status)
hwm=$(awk '/VmHWM/ {print $2}' /proc/$gm/status)
grep -c "gnss-off" "$work/log" | xargs -I{} echo "receiver turned off {} time(s)" >&2
kill -TERM $gm; wait $gm || true
"$bin" status --db "$work/idle.db" --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)["daemon"]
seconds, rss, hwm, w0 = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
print(json.dumps({"idle_s": seconds, "wakeups_per_min": round((d["loop_wakeups"] - w0) / (seconds / 60), 2),
                  "rss_kb": rss, "peak_rss_kb": hwm, "receiver": d["receiver"]["state"]}))' "$seconds" "$rss" "$hwm" "$w0"
