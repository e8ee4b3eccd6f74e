#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run the main job on the
# bundled default — `geomon run` with profiles/geofence-only.yaml against a real gpsd that
# gpsfake feeds with a bundled real receiver log (a 4-minute drive through Aigle, Switzerland,
# GENIVI positioning project). Events print as they happen; the hooks run; an energy summary
# follows. Without gpsd, the same log is replayed instead.
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
work=$(mktemp -d /tmp/geomon-demo.XXXXXX)
# Hooks run with a clean environment; the example hook appends to this file by default.
notify_log=/tmp/geomon-notify.log
notify_before=$( [ -f "$notify_log" ] && wc -l < "$notify_log" || echo 0)
gf=""; gm=""
cleanup() {
    [ -n "$gm" ] && kill -TERM "$gm" 2>/dev/null || true
    [ -n "$gf" ] && kill -KILL -- "-$gf" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap cleanup EXIT

echo "== geomon validate $profile" >&2
"$bin" validate "$profile"

if [ -x /usr/bin/gpsfake ] && [ -x /usr/sbin/gpsd ]; then
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    echo "== gpsd (gpsfake) on 127.0.0.1:$port serving $log" >&2
    setsid /usr/bin/python3 /usr/bin/gpsfake -1 -n -q -W 2 -c 0.02 -P "$port" "$log" </dev/null >/dev/null 2>&1 &
    gf=$!
    for _ in $(seq 50); do python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$port),0.2)" 2>/dev/null && break; sleep 0.1; done
    echo "== geomon run --profile $profile --gpsd 127.0.0.1:$port (events below as JSON lines; hook output on stderr)" >&2
    "$bin" run --profile "$profile" --db "$work/demo.db" --gpsd "127.0.0.1:$port" --print-events --log-level notice &
    gm=$!
    wait "$gf" || true   # gpsfake exits shortly after the log ends
    gf=""
    sleep 1
    kill -TERM "$gm"
    wait "$gm"
    gm=""
    echo "== what the example hook (profiles/hooks/notify.sh) was given, from $notify_log" >&2
    [ -f "$notify_log" ] && tail -n +"$((notify_before + 1))" "$notify_log" | grep -E 'geomon event|GEOMON_EVENT=|GEOMON_FENCE=|^stdin' || true
    echo "== geomon status --db $work/demo.db" >&2
    "$bin" status --db "$work/demo.db"
else
    echo "== gpsd is not installed: replaying the log instead" >&2
    "$bin" replay --profile "$profile" "$log" --db "$work/demo.db" --format json
fi
echo "== energy: the power policy on this log, against an always-on receiver" >&2
"$bin" replay --profile "$profile" "$log" --no-hooks --compare-always-on --report "$work/report.json" --format text >/dev/null 2>"$work/replay.err" \
    && cat "$work/report.json" \
    || { grep -v '^$' "$work/replay.err" >&2 || true; }
echo "== done; files in $work" >&2
