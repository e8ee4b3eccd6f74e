#!/usr/bin/env bash
# Fix processing with 10,000 pending hook deliveries in the database vs none: replays the
# largest bundled track (10,327 fixes, repeated N times, default 5) through `geomon replay
# --stats` into a database seeded with the first 10 fixes, once with 10,000 extra pending
# delivery rows and once without, three runs each, and prints fixes/s (docs/robustness.md).
# Usage: scripts/pending-deliveries.sh [COPIES] [debug|release]
set -euo pipefail
cd "$(dirname "$0")/.."
copies=${1:-5}
config=${2:-debug}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=.build/$config/geomon
python3 - "$work" "$copies" <<'PY'
import json, sys, time, calendar
work, copies = sys.argv[1], int(sys.argv[2])
src = [json.loads(l) for l in open("Tests/Fixtures/replay/swiss-drive.jsonl")]
def ms(t):
    d, c = t.rstrip("Z").split("T"); y, mo, da = map(int, d.split("-")); h, mi, s = c.split(":")
    return calendar.timegm((y, mo, da, int(h), int(mi), 0)) * 1000 + round(float(s) * 1000)
def fmt(t):
    s, m = divmod(t, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + ((".%03dZ" % m) if m else "Z")
lines = [json.dumps(dict(o, time=fmt(ms(o["time"]) + k * 4 * 3600 * 1000)), separators=(",", ":"))
         for k in range(copies) for o in src]
open(f"{work}/seed.jsonl", "w").write("\n".join(lines[:10]) + "\n")
open(f"{work}/long.jsonl", "w").write("\n".join(lines) + "\n")
text = open("Tests/Fixtures/replay/swiss-drive.profile.yaml").read()
profile = json.loads(text[text.index("{"):])
profile["hooks"] = {k: [{"exec": ["/bin/true"]}] for k in ("enter", "exit", "dwell")}
open(f"{work}/profile.yaml", "w").write(json.dumps(profile, indent=1) + "\n")
PY
seed() {  # $1 db, $2 extra pending rows
  rm -f "$1"*
  "$bin" replay --profile "$work/profile.yaml" "$work/seed.jsonl" --db "$1" > /dev/null
  python3 - "$1" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); n = int(sys.argv[2])
db.executemany("INSERT INTO events(id, profile, kind, fence_id, fence_name, time_ms, lat, lon, accuracy_m, rule) "
               "VALUES (?, 'swiss-drive', 'enter', ?, 'F', 0, 0, 0, 5, 'seed')", [(f"seed-{i}", f"f{i % 50}") for i in range(n)])
db.executemany("INSERT INTO deliveries(event_id, hook_key, argv, fence_id, seq, status, attempt, next_attempt_at_ms, updated_at_ms) "
               "SELECT id, 'enter#0', '[\"/bin/true\"]', fence_id, seq, 'pending', 0, 0, 0 FROM events WHERE id = ?", [(f"seed-{i}",) for i in range(n)])
db.commit()
count = db.execute("SELECT count(*) FROM deliveries WHERE status = 'pending'").fetchone()[0]
print(f"  seeded {count} pending deliveries")
PY
}
chmod 0644 "$work"/*
echo "$(wc -l < "$work/long.jsonl") fixes, build: $config, $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
for run in 1 2 3; do
  for pending in 0 10000; do
    seed "$work/b.db" "$pending"
    echo -n "  run $run, $pending pending: "
    "$bin" replay --profile "$work/profile.yaml" "$work/long.jsonl" --db "$work/b.db" --stats 2>&1 >/dev/null | sed 's/^replay: //'
  done
done
