#!/bin/sh
# Generates benchmark data, runs `geomon bench fences` (release build) and the shapely 2
# baseline on the same files in the same run, alternating, and prints the ratios.
#
# usage: scripts/bench-fences.sh [FENCES] [POINTS] [SEED] [PAIRS]   (defaults: 100000 100000 1 1)
#        scripts/bench-fences.sh --interleave ROUNDS [FENCES] [POINTS] [SEED]
#        scripts/bench-fences.sh --interleave ROUNDS --peer OTHER_GEOMON [FENCES] [POINTS] [SEED]
#        scripts/bench-fences.sh --memory [FENCES] [RUNS]            (defaults: 100000 5)
#        scripts/bench-fences.sh --memory --peer OTHER_GEOMON [FENCES] [RUNS]
#
# --memory: the load of a generated GeoJSON file (streamed into the index) RUNS times, without
# huge pages: each run's MB/s of GeoJSON and peak resident set against the budget (the index's
# bytes + 64 MB + a quarter of the file), then the best MB/s and the worst peak; exit 1 when a
# peak is over the budget. No shapely needed. With --peer, runs this build and OTHER_GEOMON (an
# earlier build, say) alternately RUNS times each and prints each one's median load and reader
# MB/s and the ratio of the medians: the machine's speed drifts by ±20 % within minutes, and
# alternating runs share the drift.
#
# PAIRS > 1 runs geomon and shapely alternately PAIRS times and prints every pair's ratio and
# the medians: the machine's speed varies by ±20 % from minute to minute when other jobs share
# it, and back-to-back pairs with medians are what survives that. Needs python3 with shapely 2
# (pip install shapely). Uses one core for each run. At 10^6 fences shapely needs ~14 GB of
# memory and ~5 minutes to load the GeoJSON.
#
# --interleave ROUNDS loads both once (`--serve` modes: both resident, ~20 GB at 10^6) and then
# times them alternately, seconds apart: each round is one shapely query pass and five geomon
# batch passes (their median), in alternating order, and gives one ratio; prints every round
# and the medians. Then up to 10 rounds of builds, alternating the same way (each program
# builds its index again from the shapes it holds), and their median ratio. Pairs of whole
# runs are minutes apart, and the machine's speed drifts within minutes: the interleaved ratio
# is the steadier measure. With --peer, a third process (OTHER_GEOMON, an earlier build, say)
# takes part in every round too, in the same alternating order, and each round also gives its
# ratio to shapely and this build's ratio to it.
set -eu
# OTHER_GEOMON of --peer: an executable that is not this build's geomon.
check_peer() {
    [ -x "$PEER" ] && [ "$(realpath "$PEER")" != "$(realpath "$GEOMON")" ] || { echo "bench-fences: --peer $PEER is not another geomon binary" >&2; exit 2; }
}
if [ "${1:-}" = "--memory" ]; then
    shift
    PEER=
    if [ "${1:-}" = "--peer" ]; then
        PEER=${2:?--peer needs a geomon binary}
        shift 2
    fi
    N=${1:-100000}
    RUNS=${2:-5}
    ROOT=$(cd "$(dirname "$0")/.." && pwd)
    DIR=${BENCH_DIR:-/tmp/geomon-bench-$N}
    cd "$ROOT"
    swift build -c release --product geomon >/dev/null
    GEOMON="$ROOT/.build/release/geomon"
    [ -f "$DIR/fences.geojson" ] || "$GEOMON" bench generate --fences "$N" --points 100000 --seed 1 --out "$DIR"
    echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'); $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "file: $DIR/fences.geojson, $(($(stat -c %s "$DIR/fences.geojson") / 1000000)) MB, $N fences"
    if [ -n "$PEER" ]; then
        check_peer
        i=0
        while [ $i -lt "$RUNS" ]; do
            for binary in "$GEOMON" "$PEER"; do
                printf '%s ' "$binary"
                GEOMON_HUGE_PAGES=off "$binary" bench fences --fences "$DIR/fences.geojson" --points "$DIR/points.csv"
            done
            i=$((i + 1))
        done | python3 -c '
import json, statistics, sys
runs = {}
for line in sys.stdin:
    binary, _, report = line.partition(" ")
    r = json.loads(report)
    runs.setdefault(binary, []).append((r["load_mb_per_s"], r["parse_mb_per_s"]))
(this, a), (peer, b) = runs.items()
for name, rows in ((this, a), (peer, b)):
    print("%s: load median %.1f MB/s (%.1f-%.1f), reader median %.1f MB/s (%.1f-%.1f), %d runs" % (name,
          statistics.median(r[0] for r in rows), min(r[0] for r in rows), max(r[0] for r in rows),
          statistics.median(r[1] for r in rows), min(r[1] for r in rows), max(r[1] for r in rows), len(rows)))
print("this build / peer: load %.2f, reader %.2f (ratio of medians)" % (
      statistics.median(r[0] for r in a) / statistics.median(r[0] for r in b),
      statistics.median(r[1] for r in a) / statistics.median(r[1] for r in b)))'
        exit $?
    fi
    i=0
    while [ $i -lt "$RUNS" ]; do
        GEOMON_HUGE_PAGES=off "$GEOMON" bench fences --fences "$DIR/fences.geojson" --points "$DIR/points.csv"
        i=$((i + 1))
    done | python3 -c '
import json, sys
runs = [json.loads(line) for line in sys.stdin if line.startswith("{")]
for r in runs:
    print("load %.3f s CPU, %.1f MB/s (reader alone %.1f MB/s); peak %.1f MB (budget %.1f MB, index %.1f MB, load added %.1f MB)" % (
        r["load_s"], r["load_mb_per_s"], r["parse_mb_per_s"], r["load_peak_rss_mb"], r["load_rss_budget_mb"], r["index_bytes"] / 1e6, r["load_rss_growth_mb"]))
best = max(r["load_mb_per_s"] for r in runs)
parse = max(r["parse_mb_per_s"] for r in runs)
worst = max(r["load_peak_rss_mb"] - r["load_rss_budget_mb"] for r in runs)
print("best: load %.1f MB/s, reader %.1f MB/s; worst peak %+.1f MB against the budget" % (best, parse, worst))
sys.exit(1 if worst > 0 else 0)'
    exit $?
fi
ROUNDS=0
PEER=
if [ "${1:-}" = "--interleave" ]; then
    ROUNDS=${2:?--interleave needs a number of rounds}
    shift 2
    if [ "${1:-}" = "--peer" ]; then
        PEER=${2:?--peer needs a geomon binary}
        shift 2
    fi
fi
N=${1:-100000}
M=${2:-100000}
SEED=${3:-1}
PAIRS=${4:-1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${BENCH_DIR:-/tmp/geomon-bench-$N}
cd "$ROOT"
swift build -c release --product geomon >/dev/null
GEOMON="$ROOT/.build/release/geomon"
if [ ! -f "$DIR/fences.geojson" ]; then
    "$GEOMON" bench generate --fences "$N" --points "$M" --seed "$SEED" --out "$DIR"
fi
if [ -n "$PEER" ]; then
    check_peer
fi
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'); $(date -u +%Y-%m-%dT%H:%MZ)"
exec python3 - "$GEOMON" "$ROOT/scripts/bench_shapely.py" "$DIR" "$PAIRS" "$ROUNDS" "$PEER" <<'PY'
import json, statistics, subprocess, sys
geomon, shapely_script, data, pairs, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
peer = sys.argv[6]
fences, points, track = f"{data}/fences.geojson", f"{data}/points.csv", f"{data}/track.csv"
if rounds > 0:
    def start(cmd):
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = p.stdout.readline()
        if not ready:
            sys.exit("bench-fences: %s did not start" % cmd[0])
        return p, json.loads(ready)
    def ask(p, line="go"):
        p.stdin.write(line + "\n")
        p.stdin.flush()
        return json.loads(p.stdout.readline())
    g, gready = start([geomon, "bench", "fences", "--fences", fences, "--points", points, "--serve"])
    print("geomon:  " + json.dumps(gready), flush=True)
    s, sready = start([sys.executable, shapely_script, fences, points, "--serve"])
    print("shapely: " + json.dumps(sready), flush=True)
    if peer:
        pp, pready = start([peer, "bench", "fences", "--fences", fences, "--points", points, "--serve"])
        print("peer:    " + json.dumps(pready), flush=True)
    rows, peer_rows = [], []
    for r in range(rounds):
        def geomon_rate(p):
            return statistics.median(ask(p)["query_points_per_s"] for _ in range(5))
        # shapely, geomon, the peer; the other way round in odd rounds.
        order = ["s", "g", "p"] if r % 2 == 0 else ["p", "g", "s"]
        rates = {}
        for who in order:
            if who == "s":
                rates["s"] = ask(s)["query_points_per_s"]
            elif who == "g":
                rates["g"] = geomon_rate(g)
            elif peer:
                rates["p"] = geomon_rate(pp)
        grate, srate = rates["g"], rates["s"]
        rows.append((grate, srate, grate / srate))
        line = "round %d: geomon %d pts/s (median of 5), shapely %d pts/s: %.1fx" % (r + 1, grate, srate, grate / srate)
        if peer:
            prate = rates["p"]
            peer_rows.append((prate, prate / srate, grate / prate))
            line += "; peer %d pts/s: %.1fx, geomon/peer %.3f" % (prate, prate / srate, grate / prate)
        print(line, flush=True)
    # Builds, alternately too: each program builds its index again from the shapes it holds.
    builds = []
    for r in range(min(rounds, 10)):
        if r % 2 == 0:
            sb = ask(s, "build")["build_s"]
            gb = ask(g, "build")["build_s"]
        else:
            gb = ask(g, "build")["build_s"]
            sb = ask(s, "build")["build_s"]
        builds.append((gb, sb, sb / max(gb, 1e-9)))
        print("build round %d: geomon %.3f s, shapely %.3f s: shapely/geomon %.2f" % (r + 1, gb, sb, sb / max(gb, 1e-9)), flush=True)
    for p in (g, s) + ((pp,) if peer else ()):
        p.stdin.close()
        p.wait()
    if peer:
        print("peer: median %.1fx shapely (range %.1f-%.1fx); geomon/peer median %.3f (range %.3f-%.3f)"
              % (statistics.median(r[1] for r in peer_rows), min(r[1] for r in peer_rows), max(r[1] for r in peer_rows),
                 statistics.median(r[2] for r in peer_rows), min(r[2] for r in peer_rows), max(r[2] for r in peer_rows)))
    print("median over %d rounds: geomon %d pts/s, shapely %d pts/s, ratio %.1fx (range %.1f-%.1fx); bytes per fence geomon %d, shapely %d"
          % (rounds, statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows),
             statistics.median(r[2] for r in rows), min(r[2] for r in rows), max(r[2] for r in rows),
             gready["bytes_per_fence"], sready["index_bytes_per_fence"]))
    print("build: first geomon %.3f s, shapely %.3f s (shapely/geomon %.2f); median over %d rebuild rounds geomon %.3f s, shapely %.3f s, shapely/geomon %.2f (range %.2f-%.2f)"
          % (gready["build_s"], sready["build_s"], sready["build_s"] / max(gready["build_s"], 1e-9), len(builds),
             statistics.median(b[0] for b in builds), statistics.median(b[1] for b in builds),
             statistics.median(b[2] for b in builds), min(b[2] for b in builds), max(b[2] for b in builds)))
    sys.exit(0)
rows = []
for i in range(pairs):
    cmd = [geomon, "bench", "fences", "--fences", fences, "--points", points, "--repeat", "5"]
    try:
        if open(track).read(1):
            cmd += ["--track", track]
    except OSError:
        pass
    g = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    print("geomon:  " + json.dumps(g), flush=True)
    s = json.loads(subprocess.run([sys.executable, shapely_script, fences, points], check=True,
                                  capture_output=True, text=True).stdout)
    print("shapely: " + json.dumps(s), flush=True)
    row = (g["query_points_per_s"] / s["query_points_per_s"], g["query_points_per_s_single"] / s["query_points_per_s"],
           s["build_s"] / max(g["build_s"], 1e-9))
    rows.append(row)
    print("pair %d: batch %.1fx, single %.1fx, build shapely/geomon %.2f" % (i + 1, *row), flush=True)
print("median over %d pair(s): batch %.1fx, single %.1fx, build shapely/geomon %.2f"
      % (len(rows), *(statistics.median(r[k] for r in rows) for k in range(3))))
print("track fixes/s: %d; bytes per fence: geomon %d, shapely %d"
      % (g["track_fixes_per_s"], g["bytes_per_fence"], s["index_bytes_per_fence"]))
PY
