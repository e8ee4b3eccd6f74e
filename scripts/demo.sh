#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run the main job on the
# bundled default — `geomon run` with profiles/geofence-only.yaml against a real gpsd reading a
# receiver on a pseudo-terminal that plays a bundled real receiver log at its recorded pace
# (two minutes of a drive through Aigle, Switzerland, GENIVI positioning project); the receiver is
# a simulated u-blox, and the demo's copy of the profile switches it with `power: ubx`. Events print as
# JSON lines as they are decided, the example hook runs for each and its output is logged, the
# receiver's switches are logged, then come `geomon status`, the energy report of a replay of
# exactly what gpsd served, and the check that the replay decided the same events. Without gpsd
# it replays the log instead.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
# A debug build: it shares its build with the test command and is plenty fast for one device.
# (`swift build -c release` for production; see docs/running.md.)
echo "== building geomon" >&2
if ! swift build --product geomon > /tmp/geomon-demo-build.log 2>&1; then
    grep -E 'error' /tmp/geomon-demo-build.log || tail -30 /tmp/geomon-demo-build.log
    exit 1
fi
bin="$(swift build --show-bin-path)/geomon"
profile=profiles/geofence-only.yaml
log=Tests/Fixtures/tracks/genivi_20100403_Z205_Switzerland_short.nmea
# The part of the log where the car leaves its depot, crosses a junction and waits in a yard.
from=13:11:40 until=13:13:36
work=$(mktemp -d /tmp/geomon-demo.XXXXXX)
sim=""; gpsd=""; pipe=""; gm=""
cleanup() {
    for pid in $gm $pipe $gpsd $sim; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT

echo "== geomon validate $profile" >&2
"$bin" validate "$profile"

# The demo's copy: the same profile (with its hooks and fence files beside it) switching the
# simulated u-blox for real.
cp -r profiles "$work/profiles"
sed -i 's/^\(    min_accuracy: 50m.*\)$/\1\n    power: ubx                # a u-blox: UBX-CFG-RST stops and starts its engine/' "$work/profiles/geofence-only.yaml"
grep -q '^    power: ubx' "$work/profiles/geofence-only.yaml" || { echo "demo: cannot set power: ubx in the demo's profile" >&2; exit 1; }
profile="$work/profiles/geofence-only.yaml"

if [ ! -x /usr/sbin/gpsd ]; then
    echo "== gpsd is not installed: replaying the log instead" >&2
    "$bin" replay --profile "$profile" "$log" --db "$work/demo.db" --format json
    exit 0
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
echo "== a receiver on a pseudo-terminal plays $log from $from to $until at its recorded pace; gpsd reads it (127.0.0.1:$port)" >&2
# A u-blox that obeys UBX-CFG-RST, with the profile's hot start (2 s, as replay's receiver model).
python3 scripts/receiver-sim.py "$log" --link "$work/receiver" --from "$from" --until "$until" \
    --obey ubx --ttff 2 --start-on-signal --linger 2 --state-log "$work/receiver-states.jsonl" &
sim=$!
for _ in $(seq 100); do [ -L "$work/receiver" ] && break; sleep 0.05; done
/usr/sbin/gpsd -N -n -S "$port" "$work/receiver" >/dev/null 2>&1 &
gpsd=$!
for _ in $(seq 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1',$port),0.2)" 2>/dev/null && break; sleep 0.1; done
# What gpsd serves, as gpsd JSON: the replay below reads exactly this.
gpspipe -w "127.0.0.1:$port" > "$work/served.json" 2>/dev/null &
pipe=$!

echo "== geomon run --profile $profile: events as JSON lines (stdout); from the log (stderr): the receiver's switches, events, and some lines of what the example hook printed" >&2
"$bin" run --profile "$profile" --db "$work/demo.db" --gpsd "127.0.0.1:$port" --print-events --log-level info \
    2> >(grep --line-buffered -E 'gpsd connected|power\.action="gnss|notice event |hook output.*line="(GEOMON_(EVENT|FENCE|TIME)=|args)|hook delivered|hook failed|stopped' >&2) \
    > "$work/live.jsonl" &
gm=$!
for _ in $(seq 100); do "$bin" status --db "$work/demo.db" 2>/dev/null | grep -q 'gpsd.*connected' && break; sleep 0.1; done
sleep 0.5
kill -USR1 "$sim"   # the recording starts now
tail -f "$work/live.jsonl" --pid "$sim" &
wait "$sim" || true
sim=""
sleep 1
kill -TERM "$gm"; wait "$gm" || true; gm=""
kill -TERM "$pipe" "$gpsd" 2>/dev/null || true; wait "$pipe" "$gpsd" 2>/dev/null || true; pipe=""; gpsd=""

echo "== geomon status --db $work/demo.db" >&2
"$bin" status --db "$work/demo.db"

echo "== energy: a replay of what gpsd served, the power policy against an always-on receiver" >&2
"$bin" replay --profile "$profile" "$work/served.json" --db "$work/replay.db" --no-hooks --compare-always-on \
    --report "$work/report.txt" > /dev/null 2>"$work/replay.err" || { cat "$work/replay.err" >&2; exit 1; }
cat "$work/report.txt"
"$bin" events --db "$work/replay.db" --format json > "$work/replay.jsonl"

echo "== the events decided live, and by the replay" >&2
python3 - "$work/live.jsonl" "$work/replay.jsonl" <<'PY'
import json, sys
def events(path):
    return [json.loads(line) for line in open(path) if line.startswith("{")]
live, replay = events(sys.argv[1]), events(sys.argv[2])
for e in live:
    print(f"  live    {e['time']}  {e['type']:<6} {e['fence']}")
for e in replay:
    print(f"  replay  {e['time']}  {e['type']:<6} {e['fence']}")
same = [(e["type"], e["fence"], e["time"]) for e in live] == [(e["type"], e["fence"], e["time"]) for e in replay]
print(f"  {len(live)} events live, {len(replay)} in the replay: {'the same events at the same times' if same else 'they differ'}")
print("  (The log was recorded on 2010-04-03. gpsd 3.22 moves every NMEA date before 2017 forward by")
print("  1024 GPS weeks, the receivers' week-rollover fix, so gpsd serves it dated 2029-11-17, and")
print("  geomon, which keeps the receiver's time, stores and prints the events on that date.)")
sys.exit(0 if same else 1)
PY
echo "== done; files in $work" >&2
