#!/usr/bin/env python3
"""Place fences across a JSON-lines track and compute the expected replay events independently.

This is a second, deliberately plain implementation of the rules in docs/engine.md: every fence
is evaluated on every fix (no index, no lazy state), with haversine distances. It writes
  <out>.profile.yaml   the profile (JSON flow style, which is valid YAML)
  <out>.expected.jsonl the expected events: {"id","type","fence","time","lat","lon","accuracy_m"}
Each fence is kept only if its events are the same when every distance from a fix to the
fence's centre is scaled by 0.995 and 1.005, so the golden data does not depend on the exact
geodesic model (spherical vs WGS84 differ by up to ~0.3 %).

usage: replay_expected.py TRACK.jsonl OUT_PREFIX NAME [--spacing-km 5] [--parked | --location]
  default: fences along the track (start, end, longest stop, one every spacing: centred,
  150 m off, 245 m off (grazing)); --parked: a fence whose boundary runs through the mean
  position of a parked receiver, and one around it; --location: significant-change mode
  (2 km, 2 min), location events only.
"""
import json
import math
import sys

R = 6371008.8
H = 10.0          # transitions.hysteresis (m)
CONFIRM = 2       # transitions.confirm
MIN_ACC = 50.0    # sources.gnss.min_accuracy (m)


def hav(a, b):
    rad = math.pi / 180
    dlat = (b[0] - a[0]) * rad
    dlon = (b[1] - a[1]) * rad
    h = math.sin(dlat / 2) ** 2 + math.cos(a[0] * rad) * math.cos(b[0] * rad) * math.sin(dlon / 2) ** 2
    return 2 * R * math.asin(min(1.0, math.sqrt(h)))


def parse_time(text):
    import calendar
    date, clock = text.rstrip("Z").split("T")
    y, mo, d = (int(x) for x in date.split("-"))
    hh, mm, ss = clock.split(":")
    sec = float(ss)
    whole = int(sec)
    ms = round((sec - whole) * 1000)
    return (calendar.timegm((y, mo, d, int(hh), int(mm), whole)) * 1000) + ms


def fmt_time(ms):
    import time
    s, milli = divmod(ms, 1000)
    text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s))
    return text + ((".%03dZ" % milli) if milli else "Z")


def fnv_id(profile, fence, kind, ms):
    h = 0xcbf29ce484222325
    for field in (profile, fence or "", kind, str(ms)):
        for byte in field.encode() + b"\x1f":
            h ^= byte
            h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def run_fence(fixes, fence, scale, profile_name):
    """Events of one fence over the whole track (each fence is independent of the others)."""
    state, since, since_fix, fired, pending = "unknown", None, None, False, None
    events = []
    dwell = fence.get("dwell_ms")
    kinds = fence["events"]
    usable_seen = 0

    def dwell_due():
        if state == "inside" and not fired and dwell is not None and "dwell" in kinds:
            return since + dwell
        return None

    def held(due):
        return pending is not None and pending["state"] == "outside" and pending["t"] < due

    def ev(kind, t, lat, lon, acc):
        events.append({"id": fnv_id(profile_name, fence["id"], kind, t), "type": kind, "fence": fence["id"],
                       "time": fmt_time(t), "lat": lat, "lon": lon, "accuracy_m": acc, "_t": t})

    for t, lat, lon, acc in fixes:
        due = dwell_due()
        if due is not None and due < t and not held(due):          # deadline before this fix
            fired = True
            ev("dwell", due, since_fix[0], since_fix[1], since_fix[2])
        due = dwell_due()
        if due is not None and due <= t and not held(due):         # first fix past it
            fired = True
            ev("dwell", t, lat, lon, acc)
        if acc > MIN_ACC:
            continue
        usable_seen += 1
        s = hav((lat, lon), fence["center"]) * scale - fence["radius"]
        m = acc + H
        obs = "inside" if s <= -m else ("outside" if s >= m else None)
        if obs is None:
            continue
        if obs == state:
            pending = None
        elif pending is not None and pending["state"] == obs:
            pending["n"] += 1
        else:
            pending = {"state": obs, "n": 1, "t": t, "fix": (lat, lon, acc)}
        if pending is not None and pending["n"] >= CONFIRM:
            old, state = state, pending["state"]
            since, since_fix, fired = pending["t"], pending["fix"], False
            p, pending = pending, None
            if old == "outside" and state == "inside" and "enter" in kinds:
                ev("enter", p["t"], *p["fix"])
            if old == "inside" and state == "outside" and "exit" in kinds:
                ev("exit", p["t"], *p["fix"])
        due = dwell_due()
        if due is not None and due <= t and not held(due):  # new stay already due, or hold cleared
            fired = True
            ev("dwell", t, lat, lon, acc)
    return events


def offset(point, north_m, east_m):
    lat = point[0] + north_m / (R * math.pi / 180)
    lon = point[1] + east_m / (R * math.pi / 180 * math.cos(point[0] * math.pi / 180))
    return (round(lat, 6), round(lon, 6))


def main():
    track, prefix, name = sys.argv[1], sys.argv[2], sys.argv[3]
    spacing = float(sys.argv[sys.argv.index("--spacing-km") + 1]) * 1000 if "--spacing-km" in sys.argv else 5000.0
    fixes = []
    last = None
    for line in open(track):
        o = json.loads(line)
        t = parse_time(o["time"])
        if last is not None and t <= last:
            continue
        last = t
        fixes.append((t, o["lat"], o["lon"], o.get("accuracy_m", 10.0)))

    if "--location" in sys.argv:
        write_location(prefix, name, fixes)
        return
    candidates = []
    if "--parked" in sys.argv:
        # A parked receiver: one fence whose boundary runs through the mean position (must
        # give no events) and one around it (silent initial inside, then a dwell).
        mean = (sum(f[1] for f in fixes) / len(fixes), sum(f[2] for f in fixes) / len(fixes))
        candidates.append({"id": "edge", "name": "Boundary through the parked position", "center": offset(mean, 0, -60.0),
                           "radius": 60.0, "events": ["enter", "exit", "dwell"], "dwell_ms": 30000})
        candidates.append({"id": "around", "name": "Around the parked position", "center": offset(mean, 0, 0),
                           "radius": 200.0, "events": ["enter", "exit", "dwell"], "dwell_ms": 60000})
    if "--parked" not in sys.argv:
        add_track_fences(candidates, fixes, spacing)
    fences, all_events = [], []
    for fence in candidates:
        for attempt in range(8):
            base = run_fence(fixes, fence, 1.0, name)
            strip = lambda evs: [(e["type"], e["time"]) for e in evs]
            if strip(base) == strip(run_fence(fixes, fence, 0.995, name)) == strip(run_fence(fixes, fence, 1.005, name)):
                fences.append(fence)
                for e in base:
                    e["_index"] = len(fences) - 1
                all_events.extend(base)
                break
            fence["center"] = offset(fence["center"], 7.0, 11.0)
    write(prefix, name, fences, all_events)


def add_track_fences(candidates, fixes, spacing):
    start = (fixes[0][1], fixes[0][2])
    end = (fixes[-1][1], fixes[-1][2])
    candidates.append({"id": "start", "name": "Start", "center": offset(start, 0, 0), "radius": 150.0,
                       "events": ["enter", "exit", "dwell"], "dwell_ms": 60000})
    candidates.append({"id": "end", "name": "End", "center": offset(end, 0, 0), "radius": 200.0,
                       "events": ["enter", "exit", "dwell"], "dwell_ms": 120000})
    # The longest stop (within 30 m for at least 90 s): a dwell fence there, dwell 120 s.
    best, i = None, 0
    while i < len(fixes):
        j = i
        while j + 1 < len(fixes) and hav(fixes[i][1:3], fixes[j + 1][1:3]) < 30:
            j += 1
        if fixes[j][0] - fixes[i][0] >= 90000 and (best is None or fixes[j][0] - fixes[i][0] > best[1] - best[0]):
            best = (fixes[i][0], fixes[j][0], fixes[i][1:3])
        i = j + 1
    if best is not None:
        candidates.append({"id": "stop", "name": "Longest stop", "center": offset(best[2], 0, 0), "radius": 100.0,
                           "events": ["enter", "exit", "dwell"], "dwell_ms": 120000})
    travelled, next_mark, k = 0.0, spacing, 0
    for i in range(1, len(fixes)):
        travelled += hav(fixes[i - 1][1:3], fixes[i][1:3]) if fixes[i][3] <= MIN_ACC else 0.0
        if travelled >= next_mark:
            next_mark += spacing
            k += 1
            # alternate: centred on the track, off by 150 m, off by 245 m (grazing)
            north = [0.0, 150.0, -245.0][k % 3]
            candidates.append({"id": "f%02d" % k, "center": offset(fixes[i][1:3], north, 0.0), "radius": 250.0,
                               "events": ["enter", "exit"] + (["dwell"] if k % 4 == 0 else []),
                               "dwell_ms": 30000 if k % 4 == 0 else None})


def write_location(prefix, name, fixes, distance=2000.0, interval_ms=120000):
    """Significant-change mode, no fences: a location event on the first usable fix, then
    whenever a usable fix is >= distance from the last reported one and >= interval after it."""
    events, ref = [], None
    for t, lat, lon, acc in fixes:
        if acc > MIN_ACC:
            continue
        if ref is None or (hav(ref[1:], (lat, lon)) >= distance and t - ref[0] >= interval_ms):
            ref = (t, lat, lon)
            events.append({"id": fnv_id(name, None, "location", t), "type": "location", "fence": None,
                           "time": fmt_time(t), "lat": lat, "lon": lon, "accuracy_m": acc})
    profile = {
        "version": 1, "name": name, "mode": "significant-change",
        "sources": {"gnss": {"plugin": "gpsd", "min_accuracy": MIN_ACC},
                    "coarse": {"plugin": "command", "exec": ["/bin/true"]}},
        "significant_change": {"distance": distance, "min_interval": interval_ms / 1000},
        "fences": [],
    }
    with open(prefix + ".profile.yaml", "w") as out:
        out.write("# Generated by scripts/replay_expected.py (JSON flow style is valid YAML).\n")
        out.write(json.dumps(profile, indent=1) + "\n")
    with open(prefix + ".expected.jsonl", "w") as out:
        for e in events:
            out.write(json.dumps(e, separators=(",", ":")) + "\n")
    print(f"{len(events)} location events", file=sys.stderr)


def write(prefix, name, fences, all_events):
    profile = {
        "version": 1, "name": name, "mode": "regions",
        "sources": {"gnss": {"plugin": "gpsd", "min_accuracy": MIN_ACC}},
        "transitions": {"hysteresis": H, "confirm": CONFIRM, "initial": "silent"},
        "fences": [],
    }
    for f in fences:
        entry = {"id": f["id"]}
        if f.get("name"):
            entry["name"] = f["name"]
        entry["circle"] = {"lat": f["center"][0], "lon": f["center"][1], "radius": f["radius"]}
        entry["events"] = f["events"]
        if f.get("dwell_ms"):
            entry["dwell"] = f["dwell_ms"] / 1000
        profile["fences"].append(entry)
    with open(prefix + ".profile.yaml", "w") as out:
        out.write("# Generated by scripts/replay_expected.py (JSON flow style is valid YAML).\n")
        out.write(json.dumps(profile, indent=1) + "\n")
    # Engine order: by time of the deciding input; within one input, by fence order. Deadline
    # dwells (time < the fix) come before the fix's own events.
    all_events.sort(key=lambda e: (e["_t"], e["_index"]))
    with open(prefix + ".expected.jsonl", "w") as out:
        for e in all_events:
            out.write(json.dumps({k: v for k, v in e.items() if not k.startswith("_")}, separators=(",", ":")) + "\n")
    print(f"{len(fences)} fences, {len(all_events)} events", file=sys.stderr)


if __name__ == "__main__":
    main()
