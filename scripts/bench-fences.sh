#!/bin/sh
# Generates benchmark data, runs `geomon bench fences` (release build) and the shapely 2
# baseline on the same files in the same run, alternating, and prints the ratios.
#
# usage: scripts/bench-fences.sh [FENCES] [POINTS] [SEED] [PAIRS]   (defaults: 100000 100000 1 1)
#
# PAIRS > 1 runs geomon and shapely alternately PAIRS times and prints every pair's ratio and
# the medians: the machine's speed varies by ±20 % from minute to minute when other jobs share
# it, and back-to-back pairs with medians are what survives that. Needs python3 with shapely 2
# (pip install shapely). Uses one core for each run. At 10^6 fences shapely needs ~14 GB of
# memory and ~5 minutes to load the GeoJSON.
set -eu
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
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'); $(date -u +%Y-%m-%dT%H:%MZ)"
exec python3 - "$GEOMON" "$ROOT/scripts/bench_shapely.py" "$DIR" "$PAIRS" <<'PY'
import json, statistics, subprocess, sys
geomon, shapely_script, data, pairs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
fences, points, track = f"{data}/fences.geojson", f"{data}/points.csv", f"{data}/track.csv"
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
