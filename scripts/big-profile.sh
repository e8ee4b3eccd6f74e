#!/usr/bin/env bash
# A profile with N GeoJSON fences (default 1,000,000 small squares on a grid over Switzerland),
# checked by `geomon validate` under /usr/bin/time -v: prints wall time, peak RSS and the
# GeoJSON file's size. Usage: scripts/big-profile.sh [N] [debug|release]   (docs/robustness.md)
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-1000000}
config=${2:-debug}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work/zones.geojson" "$count" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
side = int(n ** 0.5) + 1
step = 0.0005          # about 55 m in latitude; squares of 0.0003 degrees
with open(path, "w") as out:
    out.write('{"type":"FeatureCollection","features":[\n')
    for i in range(n):
        lat = 45.9 + (i // side) * step
        lon = 6.0 + (i % side) * step
        a, b = lon + 0.0003, lat + 0.0003
        ring = f"[[{lon:.6f},{lat:.6f}],[{a:.6f},{lat:.6f}],[{a:.6f},{b:.6f}],[{lon:.6f},{b:.6f}],[{lon:.6f},{lat:.6f}]]"
        sep = "," if i + 1 < n else ""
        out.write(f'{{"type":"Feature","id":"z{i}","properties":{{"name":"Zone {i}"}},"geometry":{{"type":"Polygon","coordinates":[{ring}]}}}}{sep}\n')
    out.write("]}\n")
PY
cat > "$work/big.yaml" <<YAML
version: 1
name: big
mode: regions
sources: {gnss: {plugin: gpsd}}
fences:
  - geojson: zones.geojson
YAML
chmod 0644 "$work"/*
if [ "$config" = release ]; then
  swift build -c release --product geomon 2>&1 | grep -E "error|warning:" || true
  bin=.build/release/geomon
else
  bin=.build/debug/geomon
fi
echo "fences: $count, GeoJSON: $(du -m "$work/zones.geojson" | cut -f1) MB, build: $config"
/usr/bin/time -v "$bin" validate "$work/big.yaml" 2> "$work/time.txt" || { cat "$work/time.txt"; exit 1; }
grep -E "Elapsed \(wall|Maximum resident|User time|System time" "$work/time.txt"
