#!/usr/bin/env bash
# Replay throughput: the largest bundled track (10,327 fixes) repeated 20 times, each copy
# shifted by 4 h (206,540 fixes), through `geomon replay --stats` (release build), with the
# database on disk and in memory. Prints the numbers docs/engine.md reports.
set -euo pipefail
cd "$(dirname "$0")/.."
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
for run in 1 2 3; do
  echo "run $run: disk, --no-hooks (events commit with their batch)"
  rm -f "$work"/bench.db*
  $bin replay --profile $profile "$work/long.jsonl" --db "$work/bench.db" --no-hooks --stats >/dev/null
  echo "run $run: memory, --no-hooks"
  $bin replay --profile $profile "$work/long.jsonl" --db :memory: --no-hooks --stats >/dev/null
  echo "run $run: disk, hooks queued (one commit per event)"
  rm -f "$work"/bench.db*
  $bin replay --profile $profile "$work/long.jsonl" --db "$work/bench.db" --stats >/dev/null
done
echo "the bundled track itself (10,327 fixes), disk, --no-hooks:"
rm -f "$work"/bench.db*
$bin replay --profile $profile Tests/Fixtures/replay/swiss-drive.jsonl --db "$work/bench.db" --no-hooks --stats >/dev/null
