#!/usr/bin/env python3
"""Compares geomon's movement events (docs/engine.md, "Movement") with trackintel's staypoints
and triplegs on the shared tracks (Tests/Fixtures/power).

For each track: writes a continuous profile with `movement.trips` {stop_after, radius} and
`movement.visits` {radius, min_duration}, runs `geomon replay --always-on --tracking-interval 0
--format json --no-hooks` (every recorded fix, none interpolated) and keeps the `arrival` and
`trip_end` events. On the same fixes, trackintel (the peer, PyPI) builds positionfixes (user_id 0,
tracked_at tz-aware UTC, points in EPSG:4326) and runs `generate_staypoints(method="sliding",
dist_threshold=radius, time_threshold=min_duration, gap_threshold=--gap minutes,
include_last=True)` and `generate_triplegs(method=--tripleg-method, gap_threshold=--gap)`.
Fixes less accurate than the radius are left out for both (geomon uses none of them for stays).

Visits: a staypoint and an arrival match when the arrival's `time` (the stay's first fix) lies
within --tolerance seconds of the staypoint's `started_at`; pairs are taken closest first, each
staypoint and each arrival at most once. Recall is the share of staypoints matched, precision
the share of arrivals matched. With a gap threshold (the default), the staypoints are also made
without one, and the summary gives recall against the first and precision against the second:
a stay trackintel finds even where it refuses to bridge a gap needs an arrival, and an arrival
needs a stay trackintel finds where it may bridge gaps, as geomon does.

Trips: a `trip_end` (from `since` to `time`) and a tripleg (`started_at` to `finished_at`) match
when their intervals overlap; pairs are taken largest overlap first, each at most once. For
each pair the ratios geomon/trackintel of the distance (`distance_m` against the geodesic
length on WGS84 of the path through the tripleg's fixes, from `started_at` to `finished_at`;
and, in a column of its own, against the length of trackintel's `overlap_staypoints` geometry,
which also runs from the last staypoint's centre and to the next one's) and of the duration;
"within" is the share of pairs whose ratio lies within ±--within; the summary splits the pairs at
2 × radius ÷ within of the tripleg's path (1000 m by default): the ends of both lie within the
radius of a stay, so they can differ by a radius at each end, inside the band only from that
length on. A tripleg after the last
staypoint (the track ends moving) has no `trip_end`
to match: the table counts those triplegs, and whether geomon's last trip is still open.

Both measure a stay up to the first fix outside it when that fix comes within the gap
threshold of the last inside (geomon's MovementSettings.leaveGap is trackintel's default, 15 min);
after a longer gap geomon counts up to the last fix inside, and a gap inside a stay splits it in
trackintel but not in geomon;
trackintel measures distances on a sphere (haversine, R 6371 km), geomon on the ellipsoid, so
a fix near the radius can start the next window in one and not the other; a trip needs the
motion state `moving` (movement.moving_speed), a tripleg only the staypoints around it.
`--mismatches` lists every unmatched staypoint (with both measures of its duration and the
nearest arrival), arrival, tripleg and trip, and the matched trips outside the band.

Usage: scripts/movement-eval.sh [--geomon PATH] [--radius M] [--min-duration S]
       [--stop-after S] [--gap MIN] [--tripleg-method M] [--tolerance S] [--within F]
       [--tracks stops|all] [--track NAME]... [--mismatches] [--keep DIR]
"""
import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
import warnings

import geopandas as gpd
import pandas as pd
import trackintel as ti
from pyproj import Geod

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from power_eval import TRACK_TABLE  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "Tests/Fixtures/power")
KINDS = {name: kind for name, kind, _ in TRACK_TABLE}
# The flights that never stop (no staypoint, no arrival); every other track has stops, or is
# one stop throughout.
NONSTOP = {"traffic_airfrance_b787_flight", "traffic_rega_helicopter", "traffic_survey_aircraft_mercantour"}
STOPS = [name for name, _, _ in TRACK_TABLE if name not in NONSTOP]
GEOD = Geod(ellps="WGS84")
# trackintel's gap_threshold (minutes) that no gap in the shared tracks reaches: no threshold.
NO_GAP = 1000000

PROFILE = """version: 1
name: movement-eval
mode: continuous
sources:
  gnss: {{plugin: gpsd}}
movement:
  trips: {{stop_after: {stop_after:g}s, radius: {radius:g}m}}
  visits: {{radius: {radius:g}m, min_duration: {min_duration:g}s}}
"""


def parse_time(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def load(path, radius):
    """(time s, lat, lon) of the fixes at most `radius` inaccurate, and how many were left out."""
    pts, dropped = [], 0
    with open(path) as f:
        for line in f:
            o = json.loads(line)
            if o.get("accuracy_m") is not None and o["accuracy_m"] > radius:
                dropped += 1
                continue
            pts.append((parse_time(o["time"]), o["lat"], o["lon"]))
    return pts, dropped


def run_geomon(geomon, profile, track, work):
    """geomon's arrival times, trips (since, time, distance_m, duration_s) and whether a trip is
    still under way at the end of `track`."""
    out = subprocess.run(
        [geomon, "replay", "--profile", profile, "--always-on", "--tracking-interval", "0",
         "--no-hooks", "--format", "json", track],
        capture_output=True, text=True, cwd=work)
    if out.returncode != 0:
        sys.exit(f"geomon replay {track} exited {out.returncode}: {out.stderr.strip()}")
    events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    arrivals = [parse_time(e["time"]) for e in events if e["type"] == "arrival"]
    trips = [(parse_time(e["since"]), parse_time(e["time"]), e["distance_m"], e["duration_s"])
             for e in events if e["type"] == "trip_end"]
    kinds = [e["type"] for e in events if e["type"] in ("trip_start", "trip_end")]
    open_trip = bool(kinds) and kinds[-1] == "trip_start"
    return arrivals, trips, open_trip


def run_trackintel(pts, args, gap, triplegs=True):
    """trackintel's staypoints [(started_at, finished_at, last fix inside, fixes)] and (with
    `triplegs`) triplegs [(started_at, finished_at, path length m, geometry length m)] on `pts`,
    with `gap` minutes as its gap_threshold."""
    df = pd.DataFrame({
        "user_id": 0,
        "tracked_at": pd.to_datetime([t for t, _, _ in pts], unit="s", utc=True),
        "lat": [lat for _, lat, _ in pts],
        "lon": [lon for _, _, lon in pts],
    })
    gdf = gpd.GeoDataFrame(df, geometry=gpd.points_from_xy(df.lon, df.lat), crs="EPSG:4326")
    pfs = ti.io.read_positionfixes_gpd(gdf, tz="UTC")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pfs, sp = pfs.generate_staypoints(
            method="sliding", dist_threshold=args.radius, time_threshold=args.min_duration / 60,
            gap_threshold=gap, include_last=True)
        stays = []
        if len(sp):
            last = pfs.dropna(subset=["staypoint_id"]).groupby("staypoint_id")["tracked_at"].agg(["max", "count"])
            for sid, row in sp.iterrows():
                stays.append((row.started_at.timestamp(), row.finished_at.timestamp(),
                              last.loc[sid, "max"].timestamp(), int(last.loc[sid, "count"])))
        if triplegs and len(sp) and pfs["staypoint_id"].isna().any():
            _, tpls = pfs.generate_triplegs(sp, method=args.tripleg_method, gap_threshold=gap)
        else:
            tpls = []
    if not len(tpls):
        return stays, []
    legs = []
    for s, e, g in zip(tpls.started_at, tpls.finished_at, tpls.geometry):
        start, end = s.timestamp(), e.timestamp()
        fixes = [(lat, lon) for t, lat, lon in pts if start <= t <= end]
        path = GEOD.line_length([lon for _, lon in fixes], [lat for lat, _ in fixes]) if len(fixes) > 1 else 0.0
        legs.append((start, end, path, GEOD.geometry_length(g)))
    return stays, legs


def match_visits(stays, arrivals, tolerance):
    """Pairs (staypoint index, arrival index), closest first, within `tolerance` seconds."""
    cands = sorted((abs(a - s[0]), i, j) for i, s in enumerate(stays) for j, a in enumerate(arrivals)
                   if abs(a - s[0]) <= tolerance)
    used_s, used_a, pairs = set(), set(), []
    for _, i, j in cands:
        if i not in used_s and j not in used_a:
            used_s.add(i)
            used_a.add(j)
            pairs.append((i, j))
    return pairs


def match_trips(legs, trips):
    """Pairs (tripleg index, trip index), largest overlap of their intervals first."""
    cands = []
    for i, (ls, le, _, _) in enumerate(legs):
        for j, (ts, te, _, _) in enumerate(trips):
            overlap = min(le, te) - max(ls, ts)
            if overlap > 0:
                cands.append((-overlap, i, j))
    used_l, used_t, pairs = set(), set(), []
    for _, i, j in sorted(cands):
        if i not in used_l and j not in used_t:
            used_l.add(i)
            used_t.add(j)
            pairs.append((i, j))
    return pairs


def share_within(ratios, within):
    return sum(1 for r in ratios if abs(r - 1) <= within) / len(ratios) if ratios else None


def median(xs):
    xs = sorted(xs)
    if not xs:
        return None
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def share(part, whole):
    """`part` of `whole` as a share with both counts."""
    return f"{fmt(part / whole if whole else None)} ({part} of {whole})"


def fmt(x, spec=".2f"):
    return "-" if x is None else format(x, spec)


def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def mismatches(name, pts, stays, arrivals, pairs, legs, trips, tpairs, within):
    """Lines describing the unmatched staypoints, arrivals and triplegs of one track, and the
    matched trips outside the band."""
    times = [t for t, _, _ in pts]
    matched_s = {i for i, _ in pairs}
    matched_a = {j for _, j in pairs}
    out = []
    for i, (start, end, last_inside, n) in enumerate(stays):
        if i in matched_s:
            continue
        near = min(arrivals, key=lambda a: abs(a - start), default=None)
        inside = [b - a for a, b in zip(times, times[1:]) if start <= a < end]
        out.append(f"- {name}: staypoint {iso(start)}–{iso(end)} ({n} fixes): to the first fix outside "
                   f"{end - start:.0f} s, to the last inside {last_inside - start:.0f} s, longest gap "
                   f"{max(inside, default=0):.0f} s; nearest arrival "
                   f"{'none' if near is None else f'{near - start:+.0f} s'}")
    for j, a in enumerate(arrivals):
        if j in matched_a:
            continue
        near = min(stays, key=lambda s: abs(s[0] - a), default=None)
        out.append(f"- {name}: arrival {iso(a)}; nearest staypoint "
                   f"{'none' if near is None else f'{near[0] - a:+.0f} s ({iso(near[0])}–{iso(near[1])})'}")
    paired = {i: j for i, j in tpairs}
    for i, (start, end, length, _) in enumerate(legs):
        leg = f"tripleg {iso(start)}–{iso(end)} {length:.0f} m in {end - start:.0f} s ({length / max(end - start, 1):.1f} m/s)"
        if i not in paired:
            out.append(f"- {name}: unmatched {leg}{' (after the last staypoint)' if end == pts[-1][0] else ''}")
            continue
        since, at, distance, duration = trips[paired[i]]
        ratios = (distance / length if length else None, duration / (end - start) if end > start else None)
        if any(r is None or abs(r - 1) > within for r in ratios):
            out.append(f"- {name}: trip {iso(since)}–{iso(at)} {distance:.0f} m in {duration:.0f} s against {leg}")
    for j, (since, at, distance, duration) in enumerate(trips):
        if j not in paired.values():
            out.append(f"- {name}: unmatched trip {iso(since)}–{iso(at)} {distance:.0f} m in {duration:.0f} s")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--geomon", default=os.path.join(ROOT, ".build/debug/geomon"))
    ap.add_argument("--radius", type=float, default=100, help="visit and stop radius, m")
    ap.add_argument("--min-duration", type=float, default=300, help="visits.min_duration and trackintel's time_threshold, s")
    ap.add_argument("--stop-after", type=float, default=300, help="trips.stop_after, s")
    ap.add_argument("--gap", type=float, default=15, help="trackintel's gap_threshold, minutes (default 15: its own default, and geomon's MovementSettings.leaveGap)")
    ap.add_argument("--tripleg-method", default="overlap_staypoints", choices=["overlap_staypoints", "between_staypoints"],
                    help="generate_triplegs method (overlap: a tripleg ends at the next staypoint's first fix, as a trip_end)")
    ap.add_argument("--tolerance", type=float, default=120, help="arrival vs staypoint start, s")
    ap.add_argument("--within", type=float, default=0.2, help="ratio band for trips (0.2: ±20 %%)")
    ap.add_argument("--tracks", choices=["stops", "all"], default="stops",
                    help="stops: every track but the three flights that never land (default)")
    ap.add_argument("--track", action="append", help="only these tracks (name without .jsonl; repeatable)")
    ap.add_argument("--mismatches", action="store_true", help="list the unmatched staypoints, arrivals, triplegs and trips, and the matched trips outside the band")
    ap.add_argument("--keep", help="keep the profile in this directory")
    args = ap.parse_args()
    args.geomon = os.path.abspath(args.geomon)  # geomon runs in the work directory
    names = args.track or (STOPS if args.tracks == "stops" else list(KINDS))

    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        evaluate(args, names, args.keep)
    else:
        with tempfile.TemporaryDirectory(prefix="movement-eval-") as work:
            evaluate(args, names, work)


def evaluate(args, names, work):
    """Runs both on every track in `names` (profile and filtered tracks in `work`) and prints
    the table."""
    profile = os.path.join(work, "movement.yaml")
    with open(profile, "w") as f:
        f.write(PROFILE.format(radius=args.radius, min_duration=args.min_duration, stop_after=args.stop_after))
    os.chmod(profile, 0o600)

    print("`" + " ".join(shlex.quote(a) for a in ["scripts/movement-eval.sh"] + sys.argv[1:]) + "`")
    print(f"\ntrackintel {ti.__version__}; radius {args.radius:g} m, min_duration {args.min_duration:g} s, "
          f"stop_after {args.stop_after:g} s, gap_threshold {args.gap:g} min, triplegs {args.tripleg_method}; "
          f"arrival within {args.tolerance:g} s of a staypoint's start; trips within ±{100 * args.within:g} %\n")
    print("| track | kind | fixes | staypoints | arrivals | matched | recall | precision | triplegs | after the last staypoint | trips | open at the end | matched | distance ratio p50 | within ±% | within ±%, the centres' leg | duration ratio p50 | within ±% | geomon s | trackintel s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    tot = dict(fixes=0, sp=0, arr=0, vm=0, open_vm=0, legs=0, trail=0, trips=0, open=0, tm=0, dist=[], drawn=[], dur=[],
               long=[], short=[], tg=0.0, tt=0.0)
    # A trip's ends lie within the stop radius of a stay by both definitions, so the two can
    # differ by up to a radius at each end: ±within is a fair band for trips at least this long.
    fair = 2 * args.radius / args.within
    details = []
    for name in names:
        track = os.path.join(FIXTURES, name + ".jsonl")
        pts, dropped = load(track, args.radius)
        if dropped:
            filtered = os.path.join(work, name + ".jsonl")
            with open(track) as f, open(filtered, "w") as g:
                g.writelines(l for l in f if (json.loads(l).get("accuracy_m") or 0) <= args.radius)
            track = filtered
        t0 = time.monotonic()
        arrivals, trips, open_trip = run_geomon(args.geomon, profile, track, work)
        t1 = time.monotonic()
        stays, legs = run_trackintel(pts, args, args.gap)
        t2 = time.monotonic()
        if args.gap < NO_GAP:
            open_stays, _ = run_trackintel(pts, args, NO_GAP, triplegs=False)
            open_matched = len(match_visits(open_stays, arrivals, args.tolerance))
        else:
            open_matched = None
        vpairs = match_visits(stays, arrivals, args.tolerance)
        tpairs = match_trips(legs, trips)
        dist = [trips[j][2] / legs[i][2] for i, j in tpairs if legs[i][2] > 0]
        drawn = [trips[j][2] / legs[i][3] for i, j in tpairs if legs[i][3] > 0]
        dur = [trips[j][3] / (legs[i][1] - legs[i][0]) for i, j in tpairs if legs[i][1] > legs[i][0]]
        trailing = sum(1 for _, end, _, _ in legs if end == pts[-1][0])
        recall = len(vpairs) / len(stays) if stays else None
        precision = len(vpairs) / len(arrivals) if arrivals else None
        print(f"| {name} | {KINDS.get(name, '-')} | {len(pts)}{f' (−{dropped})' if dropped else ''} | {len(stays)} | {len(arrivals)} | "
              f"{len(vpairs)} | {fmt(recall)} | {fmt(precision)} | {len(legs)} | {trailing} | {len(trips)} | {int(open_trip)} | {len(tpairs)} | "
              f"{fmt(median(dist))} | {fmt(share_within(dist, args.within))} | {fmt(share_within(drawn, args.within))} | {fmt(median(dur))} | "
              f"{fmt(share_within(dur, args.within))} | {t1 - t0:.2f} | {t2 - t1:.2f} |")
        for key, value in (("fixes", len(pts)), ("sp", len(stays)), ("arr", len(arrivals)), ("vm", len(vpairs)),
                           ("legs", len(legs)), ("trail", trailing), ("trips", len(trips)), ("open", int(open_trip)), ("tm", len(tpairs)),
                           ("tg", t1 - t0), ("tt", t2 - t1)):
            tot[key] += value
        tot["dist"] += dist
        tot["drawn"] += drawn
        tot["dur"] += dur
        tot["open_vm"] += open_matched or 0
        for i, j in tpairs:
            if legs[i][2] > 0 and legs[i][1] > legs[i][0]:
                tot["long" if legs[i][2] >= fair else "short"].append(
                    (trips[j][2] / legs[i][2], trips[j][3] / (legs[i][1] - legs[i][0])))
        if args.mismatches:
            details += mismatches(name, pts, stays, arrivals, vpairs, legs, trips, tpairs, args.within)
    t = tot
    print(f"| **all** | | {t['fixes']} | {t['sp']} | {t['arr']} | {t['vm']} | "
          f"**{fmt(t['vm'] / t['sp'] if t['sp'] else None)}** | **{fmt(t['vm'] / t['arr'] if t['arr'] else None)}** | "
          f"{t['legs']} | {t['trail']} | {t['trips']} | {t['open']} | {t['tm']} | {fmt(median(t['dist']))} | **{fmt(share_within(t['dist'], args.within))}** | {fmt(share_within(t['drawn'], args.within))} | "
          f"{fmt(median(t['dur']))} | **{fmt(share_within(t['dur'], args.within))}** | {t['tg']:.2f} | {t['tt']:.2f} |")
    print("\n| summary | share |\n|---|---:|")
    if args.gap < NO_GAP:
        print(f"| recall: staypoints (gap_threshold {args.gap:g} min) with an arrival | {share(t['vm'], t['sp'])} |")
        print(f"| precision: arrivals that are a staypoint without a gap threshold | {share(t['open_vm'], t['arr'])} |")
    for key, label in (("long", f"at least {fair:g} m"), ("short", f"shorter than {fair:g} m")):
        pairs = t[key]
        print(f"| trips matched to a tripleg {label}: distance / duration within ±{100 * args.within:g} % | "
              f"{share(sum(abs(d - 1) <= args.within for d, _ in pairs), len(pairs))} / "
              f"{share(sum(abs(u - 1) <= args.within for _, u in pairs), len(pairs))} |")
    if details:
        print("\n### Mismatches\n")
        print("\n".join(details))


if __name__ == "__main__":
    main()
