#!/usr/bin/env bash
# Replay cost as the recording grows: the largest bundled track (GENIVI Switzerland drive, 10,327
# fixes) tiled in time (each copy 4 h after the one before) to 10^5, 10^6 and 10^7 fixes, each
# replayed with `geomon replay --always-on --no-hooks --stats` (release build; every fix
# through the machine and into the store), with the store on disk and in memory, and with
# `--compare-always-on` instead (the profile's policy and the always-on baseline side by side
# over one reading, store in memory: "compare"). Prints per size and store: the whole
# command's CPU time and fixes per CPU second, the loop's rate from --stats, and the peak RSS.
#
#   scripts/bench-replay.sh [--peer BIN] [--sizes "N …"] [ROUNDS]   (default: 1 round)
#
# With --peer, every run is also made with BIN (another build of geomon, e.g. the last landed
# one's release binary) right after this build's, and the medians of both are printed with
# their ratio: a comparison under the same machine conditions. The tiled files are written to
# a temporary directory (10^7 fixes is 0.8 GB) and removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
peer=
sizes="100000 1000000 10000000"
while [[ ${1:-} == --* ]]; do
  case $1 in
    --peer) peer=$2; shift 2; [[ -x $peer ]] || { echo "bench-replay: error: --peer $peer is not an executable" >&2; exit 64; } ;;
    --sizes) sizes=$2; shift 2 ;;
    *) echo "bench-replay: error: unknown option $1" >&2; exit 64 ;;
  esac
done
rounds=${1:-1}
[[ $rounds =~ ^[0-9]+$ && $rounds -ge 1 ]] || { echo "bench-replay: error: ROUNDS must be a whole number ≥ 1" >&2; exit 64; }
for n in $sizes; do [[ $n =~ ^[0-9]+$ && $n -ge 1 ]] || { echo "bench-replay: error: sizes must be whole numbers ≥ 1" >&2; exit 64; }; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The tiled tracks: each line of the source with its time shifted by k·4 h.
python3 - "$work" $sizes <<'PY'
import json, sys, calendar, time
src = [json.loads(l) for l in open("Tests/Fixtures/replay/swiss-drive.jsonl")]
def ms(t):
    d, c = t.rstrip("Z").split("T"); y, mo, da = map(int, d.split("-")); h, mi, s = c.split(":")
    return calendar.timegm((y, mo, da, int(h), int(mi), 0)) * 1000 + round(float(s) * 1000)
rows = []
for o in src:
    rest = dict(o); del rest["time"]
    rows.append((ms(o["time"]), json.dumps(rest, separators=(",", ":"))[1:]))
for n in map(int, sys.argv[2:]):
    with open(f"{sys.argv[1]}/tiled-{n}.jsonl", "w") as out:
        written, k = 0, 0
        while written < n:
            lines = []
            for t0, rest in rows[: n - written]:
                s, m = divmod(t0 + k * 4 * 3600 * 1000, 1000)
                stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + ((".%03dZ" % m) if m else "Z")
                lines.append('{"time":"%s",%s\n' % (stamp, rest))
            out.writelines(lines)
            written += len(lines)
            k += 1
PY
swift build -c release --product geomon 2>&1 | grep -E "error|warning:" || true
bin=.build/release/geomon
profile=Tests/Fixtures/replay/swiss-drive.profile.yaml
uptime
rows="$work/rows"
: > "$rows"
# One replay: $1 who, $2 binary, $3 size, $4 store (disk|memory). Prints and records
# "who size store cpu_s rss_kb loop_rate".
replay() {
  local who=$1 b=$2 n=$3 store=$4 db
  db=":memory:"; [[ $store == disk ]] && { rm -f "$work"/bench.db*; db="$work/bench.db"; }
  mode=--always-on; [[ $store == compare ]] && mode=--compare-always-on
  /usr/bin/time -f "%U %S %M" -o "$work/time" "$b" replay --profile $profile "$work/tiled-$n.jsonl" --db "$db" \
    $mode --no-hooks --stats 2>"$work/err" >/dev/null
  local loop cpu rss
  loop=$(grep -o 'ms CPU ([0-9]* fixes/s)' "$work/err" | grep -o '[0-9]* fixes' | grep -o '[0-9]*')
  read -r user sys rss < "$work/time"
  cpu=$(python3 -c "print(round($user + $sys, 2))")
  echo "$who $n $store $cpu $rss $loop" >> "$rows"
  python3 -c "print(f'$who: {$n:>10,} fixes, store {\"$store\":7}: {$cpu:6.2f} s CPU, {$n / max($cpu, 0.01):>9,.0f} fixes/s whole command, {$loop:>9,} fixes/s loop, peak RSS {$rss / 1024:6.1f} MB')"
  rm -f "$work"/bench.db*
}
for run in $(seq "$rounds"); do
  for n in $sizes; do
    for store in memory disk compare; do
      replay this "$bin" "$n" "$store"
      [[ -n $peer ]] && replay peer "$peer" "$n" "$store"
    done
  done
done
python3 - "$rows" "${peer:+peer}" <<'PY'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    who, n, store, cpu, rss, loop = line.split()
    rows.setdefault((who, int(n), store), []).append((float(cpu), int(rss), int(loop)))
print("medians (CPU s, peak RSS MB):")
for (who, n, store), runs in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][0] != "this")):
    cpu = statistics.median(r[0] for r in runs); rss = statistics.median(r[1] for r in runs)
    line = f"  {who:4} {n:>10,} {store:7}: {n / max(cpu, 0.01):>9,.0f} fixes/s, {rss / 1024:6.1f} MB"
    other = rows.get(("peer", n, store)) if who == "this" else None
    if other:
        pcpu = statistics.median(r[0] for r in other); prss = statistics.median(r[1] for r in other)
        line += f"  (peer {n / max(pcpu, 0.01):,.0f} fixes/s, {prss / 1024:.1f} MB: speed ×{pcpu / max(cpu, 0.01):.2f}, memory ×{rss / max(prss, 1):.2f})"
    print(line)
PY
