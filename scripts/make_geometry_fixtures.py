#!/usr/bin/env python3
"""Builds Tests/Fixtures/geometry/natural-earth/: a few real Natural Earth polygons and, for
seeded random points around each, shapely's answers (a dev-time script, not a dependency).

For every point: `inside` = shapely `covers` (boundary counts as inside, as in geomon) and
`distance_m` = the distance to the boundary: shapely finds the nearest boundary point after
mapping lon/lat to metres with the WGS84 local scale at the point (edges stay straight in
lon/lat, geomon's semantics); beyond 1 km the distance to that point is measured on the
ellipsoid with geographiclib. Signed negative inside.

usage: scripts/make_geometry_fixtures.py [/work/shared/data/polygons/natural-earth]
"""
import json
import math
import os
import sys

import numpy as np
import shapely
import shapely.ops
from geographiclib.geodesic import Geodesic
from shapely import affinity
from shapely.geometry import Point, shape

SRC = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data/polygons/natural-earth"
OUT = os.path.join(os.path.dirname(__file__), "..", "Tests", "Fixtures", "geometry", "natural-earth")
PICK = [
    ("ne_110m_admin_0_countries.geojson", "NAME", ["Switzerland", "South Africa", "Lesotho", "Fiji", "Italy", "Chile"]),
    ("ne_50m_lakes.geojson", "name", ["Lake Superior", "Lake Huron", "Lake Saimaa"]),
]
A, F = 6378137.0, 1 / 298.257223563
E2 = F * (2 - F)


def meters_per_degree(lat):
    c = math.cos(math.radians(lat))
    w2 = 1 / (1 - E2 * (1 - c * c))
    m = math.pi / 180 * A
    return m * math.sqrt(w2) * c, m * math.sqrt(w2) * w2 * (1 - E2)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261129)
    features, cases = [], []
    for file, key, names in PICK:
        with open(os.path.join(SRC, file)) as f:
            data = json.load(f)
        for feat in data["features"]:
            name = feat["properties"].get(key)
            if name not in names:
                continue
            fid = name.lower().replace(" ", "-")
            features.append({"type": "Feature", "id": fid, "properties": {"name": name}, "geometry": feat["geometry"]})
            geom = shape(feat["geometry"])
            boundary = geom.boundary
            minx, miny, maxx, maxy = geom.bounds
            padx, pady = (maxx - minx) * 0.05 + 0.01, (maxy - miny) * 0.05 + 0.01
            pts = []
            if fid == "fiji":  # parts on both sides of the antimeridian: sample near it
                for _ in range(150):
                    pts.append((rng.uniform(-21, -12), rng.choice([rng.uniform(176, 180), rng.uniform(-180, -178)])))
            else:
                for _ in range(120):
                    pts.append((rng.uniform(miny - pady, maxy + pady), rng.uniform(minx - padx, maxx + padx)))
                # Points close to the boundary: vertices nudged by up to ~0.02°.
                coords = np.array(shapely.get_coordinates(boundary))
                for i in rng.choice(len(coords), size=min(60, len(coords)), replace=False):
                    lon, lat = coords[i]
                    pts.append((lat + rng.uniform(-0.02, 0.02), lon + rng.uniform(-0.02, 0.02)))
            for lat, lon in pts:
                p = Point(lon, lat)
                kx, ky = meters_per_degree(lat)
                local = affinity.affine_transform(boundary, [kx, 0, 0, ky, -lon * kx, -lat * ky])
                d = local.distance(Point(0, 0))
                if d > 1000:
                    # Far: measure to shapely's nearest boundary point on the ellipsoid.
                    q = shapely.ops.nearest_points(local, Point(0, 0))[0]
                    d = Geodesic.WGS84.Inverse(lat, lon, lat + q.y / ky, lon + q.x / kx)["s12"]
                inside = bool(geom.covers(p))
                cases.append({"fence": fid, "lat": round(lat, 7), "lon": round(lon, 7),
                              "inside": inside, "distance_m": round(-d if inside else d, 3)})
    with open(os.path.join(OUT, "polygons.geojson"), "w") as f:
        json.dump({"type": "FeatureCollection", "features": features}, f, separators=(",", ":"))
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump({"generator": "scripts/make_geometry_fixtures.py", "shapely": shapely.__version__,
                   "geos": shapely.geos_version_string, "cases": cases}, f, indent=0)
    print(len(features), "features,", len(cases), "cases")


if __name__ == "__main__":
    main()
