#!/usr/bin/env python3
"""The peer baseline for `geomon bench fences`: shapely 2 (GEOS STRtree) on the same files.

For every point: the containing fences (STRtree.query(points, predicate="intersects")) and the
nearest boundary (STRtree over the polygon boundaries, query_nearest with distances). Prints
one JSON line like geomon's. Single-threaded, as GEOS is.

usage: bench_shapely.py FENCES.geojson POINTS.csv [--repeat N] [--serve]

--serve (for scripts/bench-fences.sh --interleave): after the build prints one JSON line, then
for every line read from stdin runs both queries once and prints their rate, until EOF; a line
`build` instead builds both trees again and prints {"build_s": ...}.
"""
import json
import resource
import sys
import time

import numpy as np
import shapely


def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def main():
    args = sys.argv[1:]
    repeat = 1
    serve = "--serve" in args
    if serve:
        args.remove("--serve")
    if "--repeat" in args:
        i = args.index("--repeat")
        repeat = int(args[i + 1])
        del args[i : i + 2]
    fences_path, points_path = args
    t0 = time.process_time()
    with open(fences_path) as f:
        features = json.load(f)["features"]
    geoms = [shapely.geometry.shape(feat["geometry"]) for feat in features]
    del features
    pts = np.loadtxt(points_path, delimiter=",", ndmin=2)
    points = shapely.points(pts[:, 1], pts[:, 0])
    t1 = time.process_time()
    rss_before = current_rss_mb()
    # Build: the polygon tree (with prepared geometries, as GEOS uses for predicates) and the
    # boundary tree.
    def build():
        polys = np.array(geoms, dtype=object)
        shapely.prepare(polys)
        tree = shapely.STRtree(polys)
        boundaries = shapely.boundary(polys)
        return tree, shapely.STRtree(boundaries)

    tb = time.process_time()
    tree, btree = build()
    build_s = time.process_time() - tb
    index_mb = current_rss_mb() - rss_before

    if serve:
        n = len(points)
        print(json.dumps({"fences": len(geoms), "points": n, "load_s": round(t1 - t0, 3),
                          "build_s": round(build_s, 3), "index_bytes_per_fence": int(index_mb * 2**20 / max(1, len(geoms))),
                          "shapely": shapely.__version__, "geos": shapely.geos_version_string}), flush=True)
        for line in sys.stdin:
            if line.strip() == "build":
                # Again from the same geometries, unprepared first (preparing a prepared
                # geometry does nothing); the first trees stay resident.
                shapely.destroy_prepared(np.array(geoms, dtype=object))
                t = time.process_time()
                again = build()
                print(json.dumps({"build_s": round(time.process_time() - t, 3)}), flush=True)
                del again
                continue
            t = time.process_time()
            pairs = tree.query(points, predicate="intersects")
            contain = time.process_time() - t
            t = time.process_time()
            btree.query_nearest(points, return_distance=True, all_matches=False)
            nearest = time.process_time() - t
            print(json.dumps({"query_points_per_s": int(n / (contain + nearest)),
                              "contain_points_per_s": int(n / contain), "nearest_points_per_s": int(n / nearest),
                              "mean_inside": round(pairs.shape[1] / n, 3)}), flush=True)
        return

    best_contain = best_nearest = float("inf")
    inside = 0
    for _ in range(repeat):
        t = time.process_time()
        pairs = tree.query(points, predicate="intersects")
        best_contain = min(best_contain, time.process_time() - t)
        inside = pairs.shape[1]
        t = time.process_time()
        btree.query_nearest(points, return_distance=True, all_matches=False)
        best_nearest = min(best_nearest, time.process_time() - t)
    n = len(points)
    out = {
        "fences": len(geoms),
        "points": n,
        "load_s": round(t1 - t0, 3),
        "build_s": round(build_s, 3),
        "contain_points_per_s": int(n / best_contain),
        "nearest_points_per_s": int(n / best_nearest),
        "query_points_per_s": int(n / (best_contain + best_nearest)),
        "mean_inside": round(inside / n, 3),
        "index_bytes_per_fence": int(index_mb * 2**20 / max(1, len(geoms))),
        "peak_rss_mb": round(rss_mb(), 1),
        "shapely": shapely.__version__,
        "geos": shapely.geos_version_string,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
