#!/usr/bin/env python3
"""Expected point-in-polygon answers for the real-world defective polygons in
Tests/Fixtures/geometry/defective/ (a dev-time script, not a dependency).

Run from the repository root:

    python3 -m venv v && v/bin/pip install shapely && v/bin/python scripts/defective_expected.py

For every feature of each `<name>-defective.geojson` it writes, into
`<name>-defective.expected.json`:

* `validity[id]`: shapely's `explain_validity` text for the geometry as given;
* `points`: seeded sample points (random points in the feature's bounding box grown by
  10 % per side, points 3.5-40 m off a random edge on a random side, and points 4-60 m
  around the spot explain_validity names, or around random vertices of a valid feature),
  each `{"id", "lon", "lat", "inside", "boundary_m"}` with
  `inside = shapely.make_valid(shape).contains(point)`.
  A point is kept only if its distance to the rings exactly as given (every edge of every
  ring, a missing closing edge included) is at least MIN_BOUNDARY_M metres in the local
  equirectangular metric  dx * cos(lat0) * 111320, dy * 110540  (lat0 = middle of the
  feature's bounding box), and only if make_valid agrees with the even-odd rule over all
  rings as given (a ray-crossing count over every edge); points where the two disagree are
  counted per feature in `excluded_disagreements` and left out.

Coordinates of the points are rounded to 1e-7 degrees before anything is evaluated, so
the stored numbers are exactly the ones the answers belong to. Deterministic: the random
stream of each feature is seeded with "SEED:<feature id>".

`--extract UPSTREAM.geojson` (re)builds wellington-defective.geojson from the upstream
file (codeforgermany/click_that_hood public/data/wellington.geojson, blob
c6a8fce281dfacca183b4d2914e7d94ca38d49d4): the PICK features, in upstream order, each
given `"id"` = its `name` property, one feature per line (feature k on line k + 1),
coordinates checked to serialise to the upstream number text unchanged.
"""
import hashlib
import json
import math
import os
import random
import sys

import shapely
from shapely import make_valid
from shapely.geometry import MultiLineString, Point, shape
from shapely.validation import explain_validity

SEED = 20240623
MIN_BOUNDARY_M = 3.0
PER_FEATURE = {"bbox": 20, "edge": 14, "defect": 6}
KY = 110540.0
KX0 = 111320.0

HERE = os.path.dirname(os.path.abspath(__file__))
DIR = os.path.join(HERE, "..", "Tests", "Fixtures", "geometry", "defective")
FIXTURES = ["wellington-defective"]

# --extract: upstream file and the features taken from it (by `name`, kept in upstream order)
UPSTREAM_SHA256 = "c8a2728d3d8e7e0745ecfecd317c0617e811098e5a89263104272878d1c94952"
PICK = ["Ohariu", "Ngaio", "Crofton Downs", "Miramar", "Lyall Bay", "Rongotai",
        "Khandallah", "Kaiwharawhara", "Kilbirnie"]


def polygons(geom):
    if geom["type"] == "Polygon":
        return [geom["coordinates"]]
    if geom["type"] == "MultiPolygon":
        return geom["coordinates"]
    raise ValueError("not a polygon: " + geom["type"])


def all_rings(geom):
    return [ring for poly in polygons(geom) for ring in poly]


def closed(ring):
    return ring if ring[0] == ring[-1] else ring + [ring[0]]


def even_odd(rings, x, y):
    inside = False
    for ring in rings:
        pts = closed(ring)
        for (x1, y1), (x2, y2) in zip(pts, pts[1:]):
            if (y1 > y) != (y2 > y):
                xi = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
                if x < xi:
                    inside = not inside
    return inside


class Metric:
    def __init__(self, lon0, lat0):
        self.lon0, self.lat0 = lon0, lat0
        self.kx = math.cos(math.radians(lat0)) * KX0

    def xy(self, lon, lat):
        return ((lon - self.lon0) * self.kx, (lat - self.lat0) * KY)

    def lonlat(self, x, y):
        return (self.lon0 + x / self.kx, self.lat0 + y / KY)


def ring_stats(geom):
    rings = all_rings(geom)
    return {
        "polygons": len(polygons(geom)),
        "rings": len(rings),
        "positions": sum(len(r) for r in rings),
        "consecutive_duplicates": sum(1 for r in rings for a, b in zip(r, r[1:]) if a == b),
        "unclosed_rings": sum(1 for r in rings if r[0] != r[-1]),
        "rings_under_4_positions": sum(1 for r in rings if len(r) < 4),
    }


def defect_location(text):
    if "[" not in text:
        return None
    lon, lat = text[text.index("[") + 1:text.index("]")].split()[:2]
    return float(lon), float(lat)


def sample_feature(fid, geom):
    rings = all_rings(geom)
    g = shape(geom)
    validity = explain_validity(g)
    mv = make_valid(g)
    lons = [c[0] for r in rings for c in r]
    lats = [c[1] for r in rings for c in r]
    w, e, s, n = min(lons), max(lons), min(lats), max(lats)
    m = Metric((w + e) / 2, (s + n) / 2)
    boundary = MultiLineString([[m.xy(*c[:2]) for c in closed(r)] for r in rings])
    edges = []  # (start, end, cumulative length) in metres
    total = 0.0
    for r in rings:
        pts = [m.xy(*c[:2]) for c in closed(r)]
        for a, b in zip(pts, pts[1:]):
            length = math.hypot(b[0] - a[0], b[1] - a[1])
            if length > 0:
                total += length
                edges.append((a, b, total))
    rng = random.Random("%d:%s" % (SEED, fid))
    loc = defect_location(validity)
    vertices = [c for r in rings for c in r]

    def bbox_point():
        dx, dy = (e - w) * 0.1, (n - s) * 0.1
        return rng.uniform(w - dx, e + dx), rng.uniform(s - dy, n + dy)

    def edge_point():
        t = rng.uniform(0, total)
        lo, hi = 0, len(edges) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if edges[mid][2] < t:
                lo = mid + 1
            else:
                hi = mid
        a, b, _ = edges[lo]
        f = rng.random()
        px, py = a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1])
        length = math.hypot(b[0] - a[0], b[1] - a[1])
        nx, ny = -(b[1] - a[1]) / length, (b[0] - a[0]) / length
        d = rng.uniform(3.5, 40.0) * rng.choice((-1, 1))
        return m.lonlat(px + d * nx, py + d * ny)

    def defect_point():
        c = loc if loc is not None else tuple(rng.choice(vertices)[:2])
        cx, cy = m.xy(*c)
        r, a = rng.uniform(4.0, 60.0), rng.uniform(0, 2 * math.pi)
        return m.lonlat(cx + r * math.cos(a), cy + r * math.sin(a))

    kept, disagreements = [], []
    for kind, want in PER_FEATURE.items():
        gen = {"bbox": bbox_point, "edge": edge_point, "defect": defect_point}[kind]
        got = attempts = 0
        while got < want and attempts < 200 * want:
            attempts += 1
            lon, lat = gen()
            lon, lat = round(lon, 7), round(lat, 7)
            dist = boundary.distance(Point(m.xy(lon, lat)))
            if dist < MIN_BOUNDARY_M:
                continue
            inside = bool(mv.contains(Point(lon, lat)))
            if inside != even_odd(rings, lon, lat):
                disagreements.append({"lon": lon, "lat": lat, "make_valid": inside,
                                      "boundary_m": round(dist, 1)})
                continue
            kept.append({"id": fid, "lon": lon, "lat": lat, "inside": inside,
                         "boundary_m": round(dist, 1)})
            got += 1
    return validity, kept, disagreements


def number_tokens(obj):
    if isinstance(obj, list):
        for x in obj:
            yield from number_tokens(x)
    else:
        yield obj


def extract(upstream):
    raw = open(upstream, "rb").read()
    if hashlib.sha256(raw).hexdigest() != UPSTREAM_SHA256:
        sys.exit("unexpected upstream file (sha256 differs)")
    src = json.loads(raw)
    text_src = json.loads(raw, parse_float=str, parse_int=str)
    out = []
    for f, ft in zip(src["features"], text_src["features"]):
        name = f["properties"].get("name")
        if name not in PICK:
            continue
        got = [repr(x) if isinstance(x, float) else str(x)
               for x in number_tokens(f["geometry"]["coordinates"])]
        if got != list(number_tokens(ft["geometry"]["coordinates"])):
            sys.exit("coordinates of %s would not be written verbatim" % name)
        feature = {"type": f["type"], "id": name}
        feature.update((k, v) for k, v in f.items() if k != "type")
        out.append(json.dumps(feature, ensure_ascii=False))
    assert len(out) == len(PICK), "missing picks"
    path = os.path.join(DIR, "wellington-defective.geojson")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write('{"type": "FeatureCollection", "features": [\n' + ",\n".join(out) + "\n]}\n")
    print("wrote", os.path.relpath(path))


def write_expected(name):
    path = os.path.join(DIR, name + ".geojson")
    data = json.load(open(path, encoding="utf-8"))
    validity, features, points, excluded = {}, {}, [], {}
    for k, f in enumerate(data["features"]):
        fid = f["id"]
        text, kept, dis = sample_feature(fid, f["geometry"])
        validity[fid] = text
        info = {"line": k + 2, "points": len(kept), "inside": sum(p["inside"] for p in kept)}
        info.update(ring_stats(f["geometry"]))
        features[fid] = info
        if dis:
            excluded[fid] = dis
        points.extend(kept)
    header = {
        "fixture": name + ".geojson",
        "generator": "scripts/defective_expected.py",
        "shapely": shapely.__version__,
        "geos": shapely.geos_version_string,
        "seed": SEED,
        "min_boundary_m": MIN_BOUNDARY_M,
        "metric": "equirectangular per feature: dx*cos(lat0)*111320, dy*110540 m, lat0 = bbox middle",
        "inside": "shapely.make_valid(shape(geometry)).contains(Point(lon, lat)); "
                  "kept only where the even-odd rule over all rings as given agrees",
        "validity": validity,
        "features": features,
        "excluded_disagreements": excluded,
    }
    out = json.dumps(header, indent=2, ensure_ascii=False)
    body = ",\n".join("    " + json.dumps(p, ensure_ascii=False) for p in points)
    out = out[:-2] + ',\n  "points": [\n' + body + "\n  ]\n}\n"
    json.loads(out)
    target = os.path.join(DIR, name + ".expected.json")
    with open(target, "w", encoding="utf-8") as fh:
        fh.write(out)
    print("wrote", os.path.relpath(target), len(points), "points,",
          sum(len(v) for v in excluded.values()), "disagreements excluded")


def main(argv):
    if len(argv) == 3 and argv[1] == "--extract":
        extract(argv[2])
        return
    if len(argv) != 1:
        sys.exit(__doc__)
    for name in FIXTURES:
        write_expected(name)


if __name__ == "__main__":
    main(sys.argv)
