#!/bin/sh
# Generates benchmark data, runs `geomon bench fences` (release build) and the shapely 2
# baseline on the same files in the same run, and prints the ratio.
#
# usage: scripts/bench-fences.sh [FENCES] [POINTS] [SEED]     (defaults: 100000 100000 1)
# Needs python3 with shapely 2 (pip install shapely). Uses one core for each run.
set -eu
N=${1:-100000}
M=${2:-100000}
SEED=${3:-1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${BENCH_DIR:-/tmp/geomon-bench-$N}
cd "$ROOT"
swift build -c release --product geomon >/dev/null
GEOMON="$ROOT/.build/release/geomon"
if [ ! -f "$DIR/fences.geojson" ]; then
    "$GEOMON" bench generate --fences "$N" --points "$M" --seed "$SEED" --out "$DIR"
fi
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p')"
GEOMON_JSON=$("$GEOMON" bench fences --fences "$DIR/fences.geojson" --points "$DIR/points.csv" --track "$DIR/track.csv" --repeat 3)
echo "geomon:  $GEOMON_JSON"
SHAPELY_JSON=$(python3 "$ROOT/scripts/bench_shapely.py" "$DIR/fences.geojson" "$DIR/points.csv")
echo "shapely: $SHAPELY_JSON"
python3 - "$GEOMON_JSON" "$SHAPELY_JSON" <<'PY'
import json, sys
g, s = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print("ratio (containing + nearest boundary, points/s, batch): %.1fx" % (g["query_points_per_s"] / s["query_points_per_s"]))
print("ratio (the same, one query per point in file order): %.1fx" % (g["query_points_per_s_single"] / s["query_points_per_s"]))
print("ratio (build time, shapely/geomon): %.2f" % (s["build_s"] / max(g["build_s"], 1e-9)))
print("track fixes/s: %d; bytes per fence: geomon %d, shapely %d" % (g["track_fixes_per_s"], g["bytes_per_fence"], s["index_bytes_per_fence"]))
PY
