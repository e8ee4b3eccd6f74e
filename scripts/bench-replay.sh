#!/usr/bin/env bash
# Replay throughput: the largest bundled track (10,327 fixes) repeated 20 times, each copy
# shifted by 4 h (206,540 fixes), through `geomon replay --stats` (release build), with the
# database on disk and in memory. Prints the numbers docs/engine.md reports.
#
#   scripts/bench-replay.sh [--peer BIN] [ROUNDS]      (default: 3 rounds)
#
# With --peer, every run is also made with BIN (another build of geomon, e.g. the last landed
# one's release binary) right after this build's, and the medians of the CPU rates of the two
# are printed with their ratio: a comparison under the same machine conditions.
set -euo pipefail
cd "$(dirname "$0")/.."
peer=
if [[ ${1:-} == --peer ]]; then peer=$2; shift 2; [[ -x $peer ]] || { echo "bench-replay: error: --peer $peer is not an executable" >&2; exit 64; }; fi
rounds=${1:-3}
[[ $rounds =~ ^[0-9]+$ && $rounds -ge 1 ]] || { echo "bench-replay: error: ROUNDS must be a whole number ≥ 1" >&2; exit 64; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work/long.jsonl" <<'PY'
import json, sys, calendar
src = [json.loads(l) for l in open("Tests/Fixtures/replay/swiss-drive.jsonl")]
def ms(t):
    d, c = t.rstrip("Z").split("T"); y, mo, da = map(int, d.split("-")); h, mi, s = c.split(":")
    return calendar.timegm((y, mo, da, int(h), int(mi), 0)) * 1000 + round(float(s) * 1000)
import time
with open(sys.argv[1], "w") as out:
    for k in range(20):
        for o in src:
            t = ms(o["time"]) + k * 4 * 3600 * 1000
            s, m = divmod(t, 1000)
            o2 = dict(o, time=time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + ((".%03dZ" % m) if m else "Z"))
            out.write(json.dumps(o2, separators=(",", ":")) + "\n")
PY
swift build -c release --product geomon 2>&1 | grep -E "error|warning:" || true
bin=.build/release/geomon
profile=Tests/Fixtures/replay/swiss-drive.profile.yaml
uptime
rates="$work/rates"
: > "$rates"
# One replay with $1 (a binary) and the rest of the arguments; its --stats line goes to stderr
# and its CPU rate into $rates, labelled with $label.
replay() {
  local b=$1; shift
  local line
  line=$("$b" replay --profile $profile "$work/long.jsonl" "$@" --stats 2>&1 >/dev/null | grep 'fixes processed')
  echo "$line" >&2
  echo "$label $(echo "$line" | grep -o 'ms CPU ([0-9]* fixes/s)' | grep -o '[0-9]* fixes' | grep -o '[0-9]*')" >> "$rates"
}
for run in $(seq "$rounds"); do
  for who in this ${peer:+peer}; do
    b=$bin; [[ $who == peer ]] && b=$peer
    echo "run $run ($who): disk, --no-hooks (events commit with their batch)"
    rm -f "$work"/bench.db*; label="$who-disk" replay "$b" --db "$work/bench.db" --no-hooks
    echo "run $run ($who): memory, --no-hooks"
    label="$who-memory" replay "$b" --db :memory: --no-hooks
    echo "run $run ($who): disk, hooks queued (one commit per event)"
    rm -f "$work"/bench.db*; label="$who-hooks" replay "$b" --db "$work/bench.db"
  done
done
if [[ -n $peer ]]; then
  python3 - "$rates" <<'PY'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    label, rate = line.split()
    rows.setdefault(label, []).append(int(rate))
for case in ("disk", "memory", "hooks"):
    a, b = rows.get("this-" + case, []), rows.get("peer-" + case, [])
    if a and b:
        ma, mb = statistics.median(a), statistics.median(b)
        print(f"{case}: this build {ma:,.0f} fixes/s CPU (median of {len(a)}), peer {mb:,.0f}: ratio {ma / mb:.2f}")
PY
fi
echo "the bundled track itself (10,327 fixes), disk, --no-hooks:"
rm -f "$work"/bench.db*
$bin replay --profile $profile Tests/Fixtures/replay/swiss-drive.jsonl --db "$work/bench.db" --no-hooks --stats >/dev/null
