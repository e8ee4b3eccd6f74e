#!/usr/bin/env bash
# What an idle `geomon run` costs: wake-ups per minute, database writes, and resident memory.
#
# A real gpsd (gpsfake, which stays up after the log) serves the short Swiss drive; the
# profile's only fence is ~50 km away, so after the first fixes the policy turns the receiver
# off for max_sleep (30 min) and the daemon has nothing to do. Wake-ups are counted by the
# kernel: the context switches of every thread of the process (/proc/PID/task/*/status) over
# the idle window; writes are the database file's size and modification time.
# With MODES=1 the profile has `modes:` (parked: regions on battery, driving: continuous on
# external power) and the daemon watches a directory laid out like /sys/class/power_supply
# (the kernel's uevents and inotify; nothing changes in it while idle).
# Usage: scripts/idle-cost.sh [SECONDS]   (GEOMON=path/to/geomon, default the debug build)
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
supply=()
if [ "${MODES:-0}" = 1 ]; then
  cat >> "$work/idle.yaml" <<'YAML'
modes:
  - name: driving
    when: {external_power: true}
    mode: continuous
  - name: parked
    when: {external_power: false}
    mode: regions
YAML
  mkdir -p "$work/power/AC" "$work/power/BAT0"
  echo Mains > "$work/power/AC/type"; echo 0 > "$work/power/AC/online"
  echo Battery > "$work/power/BAT0/type"; echo 80 > "$work/power/BAT0/capacity"; echo Discharging > "$work/power/BAT0/status"
  supply=(--power-supply "$work/power")
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
setsid /usr/bin/python3 /usr/bin/gpsfake -1 -n -q -W 100000 -c 0.01 -P "$port" Tests/Fixtures/tracks/genivi_20100403_Z205_Switzerland_short.nmea </dev/null >/dev/null 2>&1 &
gf=$!
sleep 1.5
"$bin" run --profile "$work/idle.yaml" --db "$work/idle.db" --gpsd "127.0.0.1:$port" "${supply[@]}" --log-level info 2>"$work/log" &
gm=$!
sleep 20  # the log plays; the receiver goes off
switches() { cat /proc/$gm/task/*/status | awk '/ctxt_switches/ {n += $2} END {print n}'; }
db_state() { stat -c '%s %Y' "$work"/idle.db* | tr '\n' ' '; }
c0=$(switches); d0=$(db_state)
sleep "$seconds"
c1=$(switches); d1=$(db_state)
rss=$(awk '/VmRSS/ {print $2}' /proc/$gm/status)
hwm=$(awk '/VmHWM/ {print $2}' /proc/$gm/status)
threads=$(ls /proc/$gm/task | wc -l)
off=$(grep -c "gnss-off" "$work/log" || true)
kill -TERM $gm; wait $gm || true
python3 -c '
import json, sys
seconds, c0, c1, rss, hwm, threads, off = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
print(json.dumps({"idle_s": seconds, "wakeups_per_min": round((c1 - c0) / (seconds / 60), 2),
                  "db_written": sys.argv[8] != sys.argv[9], "rss_kb": rss, "peak_rss_kb": hwm,
                  "threads": threads, "receiver_offs": off}))' "$seconds" "$c0" "$c1" "$rss" "$hwm" "$threads" "$off" "$d0" "$d1"
