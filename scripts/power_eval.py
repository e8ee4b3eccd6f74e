#!/usr/bin/env python3
"""Evaluates the power policy on the real tracks with `geomon replay --compare-always-on`.

For each track in Tests/Fixtures/power and each spacing (2 km, 10 km): writes a regions
profile with 250 m circles every `spacing` of travelled distance (the k-th centred on the first
recorded fix where the cumulative great-circle distance reaches k x spacing), the issue's knobs
(max_speed 45m/s, wake_margin 20m, min_sleep 10s, max_sleep 10m, ttff_hot 2s) and
`policy.max_acceleration` (default 1m/s2, `--walk-acceleration` for tracks slower than 3 m/s
on average), runs `geomon replay … --compare-always-on --report FILE --no-hooks`, and prints
one markdown table per spacing. Usage: scripts/power-eval.sh [--geomon PATH] [--keep DIR]

With `--profiles` it checks the issue's two other targets instead, with the shipped profiles:
`profiles/fitness.yaml` (continuous) on the walking tracks (every stop longer than
stationary.timeout + min_sleep must see the receiver off; the hike's fences must all be found
against always-on) and `profiles/social-radar.yaml` (significant-change) on every track and on a
still copy of it (every fix moved to the first position): at most one `location` event per
`significant_change.distance` travelled, each at least that far and `min_interval` after the
previous one, and none after the first while still.
"""
import argparse, datetime, json, math, os, re, subprocess, sys, tempfile

# Every shared track (Tests/Fixtures/power, converted by scripts/tracks_to_jsonl.py), its kind of
# movement as ../shared/data/README.md describes it, and the activity declared for it
# (`policy.activity`; "derive" for the mixed days: sensed from the speeds, `--activity derive`).
TRACK_TABLE = [
    ("genivi_20100403_Z205_Switzerland", "drive", "vehicle"),
    ("genivi_20100403_Z205_Switzerland_short", "drive", "vehicle"),
    ("gmt_MTV.Local1.ublox-F9K.20200206-181434", "drive", "vehicle"),
    ("barefoot_x0001-001", "drive", "vehicle"),
    ("georust_garmin_with_extensions", "walk", "foot"),
    ("gpxpy_cerknicko-jezero", "walk", "foot"),
    ("gpxpy_korita-zbevnica", "walk", "foot"),
    ("gpxanimator_bikeride", "bike", "bicycle"),
    ("tcxreader_mapmyride_biking", "bike", "bicycle"),
    ("runpandas_7ee8e9d1-bb55-4b1f-a232-a4c40ab2a500", "run", "foot"),
    ("signalk_plaka", "boat", "boat"),
    ("rob_tomales_data.shrinked", "boat", "boat"),
    ("openrailrouting_00c03ac99213", "rail (parked)", "vehicle"),
    ("geolife_u010_walk", "walk", "foot"),
    ("togeojson_blackforest_hike_day1", "walk", "foot"),
    ("togeojson_dc_run", "run", "foot"),
    ("movingpandas_liverpool_bus_4720", "bus", "vehicle"),
    ("geolife_u010_bus", "bus", "vehicle"),
    ("geolife_u010_train_xinjiang", "train", "vehicle"),
    ("geolife_u010_taxi", "drive", "vehicle"),
    ("geolife_u010_mixed_walk_taxi_bus", "mixed", "derive"),
    ("geolife_u010_mixed_train_taxi_walk", "mixed", "derive"),
    ("trackintel_google_location_history_day", "mixed", "derive"),
    ("movingpandas_suez_ship_underway_131", "ship", "boat"),
    ("movingpandas_suez_ship_at_anchor_132", "ship", "boat"),
    ("signalk_stationary_receiver_amsterdam", "standing", "boat"),
    ("traffic_airfrance_b787_flight", "air", "air"),
    ("traffic_glider_sisteron", "air", "air"),
    ("traffic_rega_helicopter", "air", "air"),
    ("traffic_aircraft_landing_taxi_zurich", "air", "air"),
    ("traffic_survey_aircraft_mercantour", "air", "air"),
]
# Sparse loggers (a fix every 30 s or more: AIS decimated to 12–15 min, a phone's location
# history every minute, a rail tracker every 35 s) sampled what a receiver tracking throughout
# would have reported: the receiver model bridges their gaps up to three median intervals (one or
# two samples lost) instead of taking each as an outage. `BRIDGE` is filled per track (`bridge`).
BRIDGE = {}
KINDS = {name: kind for name, kind, _ in TRACK_TABLE}
# The first thirteen: the shared set before buses, trains, mixed days, ships and aircraft.
ORIGINAL = 13
ACTIVITY = {name: activity for name, _, activity in TRACK_TABLE}
TRACKS = list(KINDS)

def haversine(a, b):
    r, rad = 6371008.8, math.pi / 180
    dlat, dlon = (b[0] - a[0]) * rad, (b[1] - a[1]) * rad
    h = math.sin(dlat / 2) ** 2 + math.cos(a[0] * rad) * math.cos(b[0] * rad) * math.sin(dlon / 2) ** 2
    return 2 * r * math.asin(min(1, math.sqrt(h)))

def load(path):
    """(lat, lon, time, recorded speed or None) per line."""
    pts = []
    with open(path) as f:
        for line in f:
            o = json.loads(line)
            pts.append((o["lat"], o["lon"], o["time"], o.get("speed_mps")))
    return pts

def fences(pts, spacing):
    out, travelled, nxt = [], 0.0, spacing
    for a, b in zip(pts, pts[1:]):
        travelled += haversine(a, b)
        if travelled >= nxt:
            out.append((b[0], b[1]))
            while nxt <= travelled:
                nxt += spacing
    return out, travelled

WALKS = ["georust_garmin_with_extensions", "gpxpy_cerknicko-jezero", "gpxpy_korita-zbevnica"]

def shifted(track, shift, work):
    """`track`, or a copy of it in `work` without the fixes of its first `shift` seconds."""
    if shift <= 0:
        return track
    out = os.path.join(work, os.path.basename(track).replace(".jsonl", f"-shift{shift:g}.jsonl"))
    with open(track) as f:
        lines = f.readlines()
    start = parse_time(json.loads(lines[0])["time"]) + shift
    with open(out, "w") as f:
        f.writelines(l for l in lines if parse_time(json.loads(l)["time"]) >= start)
    return out

def parse_time(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()

def parse_duration(text):
    units = {"ms": 0.001, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}
    m = re.fullmatch(r"([0-9.]+)\s*([a-z]+)", text.strip())
    return float(m.group(1)) * units[m.group(2)]

def stops(pts, radius):
    """Maximal runs of recorded fixes within `radius` of the run's first fix (as the test)."""
    out, i = [], 0
    while i < len(pts):
        j = i
        while j + 1 < len(pts) and haversine(pts[i], pts[j + 1]) <= radius:
            j += 1
        out.append((parse_time(pts[i][2]), parse_time(pts[j][2])))
        i = j + 1
    return out

def receiver_intervals(policy_log, state, end=float("inf")):
    """Intervals (start, end) from a --policy-log during which the receiver was `state` ("on" or
    "off"); the receiver is on at the start, and an interval still open ends at `end`."""
    begins, ends = ("gnss-on", "gnss-off") if state == "on" else ("gnss-off", "gnss-on")
    out, since = [], None
    for line in open(policy_log):
        parts = line.split()
        if len(parts) < 2:
            continue
        if parts[1] == begins and since is None:
            since = parse_time(parts[0])
        elif parts[1] == ends and since is not None:
            out.append((since, parse_time(parts[0])))
            since = None
    if since is not None:
        out.append((since, end))
    return out

def outage_usage(pts, on, gap_limit):
    """Seconds of recorded gaps longer than the model bridges (outages: always-on is on and
    acquiring throughout) and the policy's receiver-on seconds within them."""
    total = used = 0.0
    times = [parse_time(p[2]) for p in pts]
    for a, b in zip(times, times[1:]):
        if b - a > gap_limit:
            total += b - a
            used += sum(max(0.0, min(e, b) - max(s, a)) for s, e in on)
    return total, used

def latency_budget(pts, base_events, match, max_latency):
    """Matched events (recall 1: baseline order) whose latency is at most max_latency plus the
    time from the baseline event to the second recorded fix after it; and the largest latency."""
    lat = match.get("latencies_s", [])
    if match["missed"] or not lat:
        return None, len(lat), max(lat) if lat else None
    times = sorted(parse_time(p[2]) for p in pts)
    base = sorted(base_events, key=lambda e: (parse_time(e["time"]), e["id"]))
    ok = 0
    for event, latency in zip(base, lat):
        t = parse_time(event["time"])
        later = [x for x in times if x > t][:2]
        allowance = max_latency + ((later[-1] - t) if later else 0)
        ok += latency <= allowance + 1e-6
    return ok, len(lat), max(lat)

# The receiver model's options (--interpolate-gaps, --tracking-interval), given to every replay.
MODEL_ARGS = []

def run_replay(cmd, name):
    r = subprocess.run(cmd + MODEL_ARGS, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"geomon failed on {name}: {r.stderr}")
    return r.stdout

def profiles_eval(geomon, root, work):
    fitness = os.path.join(root, "profiles/fitness.yaml")
    radar = os.path.join(root, "profiles/social-radar.yaml")
    # The knobs the checks use, as the shipped profiles set them (docs/power.md says which).
    ftext, rtext = open(fitness).read(), open(radar).read()
    radius = float(re.search(r"radius:\s*([0-9.]+)m\s", ftext.split("stationary:")[1]).group(1))
    timeout = parse_duration(re.search(r"timeout:\s*(\S+)", ftext.split("stationary:")[1]).group(1))
    found = re.search(r"^\s*min_sleep:\s*(\S+)", ftext, re.M)
    min_sleep = parse_duration(found.group(1)) if found else 10.0  # the default (profile-reference.md)
    distance = float(re.search(r"distance:\s*([0-9.]+)km", rtext).group(1)) * 1000
    min_interval = parse_duration(re.search(r"min_interval:\s*(\S+)", rtext).group(1))
    limit = timeout + min_sleep

    print(f"\n### fitness (`profiles/fitness.yaml`): stops longer than {limit:.0f} s "
          f"(stationary.timeout {timeout:.0f} s + one check {min_sleep:.0f} s, radius {radius:.0f} m)\n")
    print("| track | track s | on-time % of always-on | long stops | stop s | off s after timeout + check | stops with the receiver off | events (base/policy) | recall | p95 s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in WALKS:
        track = os.path.join(root, "Tests/Fixtures/power", name + ".jsonl")
        pts = load(track)
        report, log = os.path.join(work, f"fitness-{name}.report.json"), os.path.join(work, f"fitness-{name}.policy.log")
        run_replay([geomon, "replay", "--profile", fitness, track, "--compare-always-on", "--no-hooks",
                    "--report", report, "--format", "json", "--policy-log", log], name)
        rep = json.load(open(report))
        long = [(a, b) for a, b in stops(pts, radius) if b - a > limit]
        offs = receiver_intervals(log, "off")
        covered, off_total, stop_total = 0, 0.0, 0.0
        for a, b in long:
            stop_total += b - a
            seen = sum(max(0.0, min(e, b) - max(s, a + limit)) for s, e in offs)
            off_total += seen
            covered += seen > 0
        m, b = rep["match"], rep["baseline"]
        p95 = "-" if m["latency_s_p95"] is None else f"{m['latency_s_p95']:.1f}"
        print(f"| {name} | {rep['track_s']:.0f} | {100 * rep['on_time_share']:.1f} | {len(long)} | {stop_total:.0f} | "
              f"{off_total:.0f} | **{covered}/{len(long)}** | {b['events']}/{rep['events']} | {m['recall']:.3f} | {p95} |")

    print(f"\n### social-radar (`profiles/social-radar.yaml`): distance {distance:.0f} m, min_interval {min_interval:.0f} s, "
          "coarse fixes derived every 5 min as GeoClue gives them at city level: 6 km accuracy reported, positions scattered by up to 2 km (seed 1)\n")
    print("| track | travelled km | location events | allowed (1 + travelled / distance) | closest consecutive reports m | shortest interval s | still copy: location events | GNSS on s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in TRACKS:
        track = os.path.join(root, "Tests/Fixtures/power", name + ".jsonl")
        pts = load(track)
        travelled = sum(haversine(a, b) for a, b in zip(pts, pts[1:]))
        report = os.path.join(work, f"radar-{name}.report.json")
        out = run_replay([geomon, "replay", "--profile", radar, track, "--no-hooks", "--format", "json", "--report", report], name)
        locs = [json.loads(l) for l in out.splitlines() if l.startswith("{") and '"type":"location"' in l]
        gaps = [haversine((a["lat"], a["lon"]), (b["lat"], b["lon"])) for a, b in zip(locs, locs[1:])]
        times = [parse_time(b["time"]) - parse_time(a["time"]) for a, b in zip(locs, locs[1:])]
        still = os.path.join(work, f"still-{name}.jsonl")
        with open(track) as src, open(still, "w") as dst:
            first = None
            for line in src:
                o = json.loads(line)
                first = first or (o["lat"], o["lon"])
                o["lat"], o["lon"] = first
                dst.write(json.dumps(o) + "\n")
        sout = run_replay([geomon, "replay", "--profile", radar, still, "--no-hooks", "--format", "json"], name + " (still)")
        slocs = sum(1 for l in sout.splitlines() if '"type":"location"' in l)
        rep = json.load(open(report))
        f = lambda xs: "-" if not xs else f"{min(xs):.0f}"
        print(f"| {name} | {travelled / 1000:.1f} | {len(locs)} | {1 + int(travelled // distance)} | {f(gaps)} | {f(times)} | {slocs} | {rep['gnss_on_s']:.0f} |")

RETRY = None
MOVEMENT = False
EXTRA = []
MAX_LATENCY = 30.0
COARSE = None
# `sources.motion.creep_speed` for the profiles (`--creep-speed`); None: the default.
CREEP = None
MODE = "regions"
POWER = "ubx"
RESTART = None

def still_stretches(pts, threshold=0.5, minimum=120):
    """Where the recording stands: maximal runs of fixes slower than `threshold` (the recorded
    speed, else the segment's from the fix before) lasting more than `minimum` seconds."""
    out, start, last, prev = [], None, None, None
    for p in pts:
        t = parse_time(p[2])
        v = p[3] if p[3] is not None else (haversine(prev, p) / (t - parse_time(prev[2])) if prev and t > parse_time(prev[2]) else 0)
        prev = p
        if v < threshold:
            start = t if start is None else start
            last = t
        else:
            if start is not None and last - start > minimum:
                out.append((start, last))
            start = None
    if start is not None and last - start > minimum:
        out.append((start, last))
    return out

def motion_eval(args, root, work):
    """Each track and spacing without and with `--motion` (the sensor derived from the
    recording): the whole on-time, the on-time within the still stretches (recorded speed
    under 0.5 m/s for more than 2 min), recall and extra events against always-on."""
    for spacing in args.spacing or (2000, 10000):
        print(f"\n### Fences every ~{spacing // 1000} km: without / with a motion sensor\n")
        print("| track | kind | still stretches | still s | on in still s (without / with) | lower by | on s (without / with) | % of always-on (without / with) | recall (with) | extra (with) |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        tot = dict(n=0, still=0.0, s0=0.0, s1=0.0, on0=0.0, on1=0.0, base=0.0, missed=0, be=0, extra=0)
        for name in TRACKS:
            track = shifted(os.path.join(root, "Tests/Fixtures/power", name + ".jsonl"), args.shift, work)
            pts = load(track)
            bridge(name, pts)
            centres, _ = fences(pts, spacing)
            activity = ACTIVITY[name] if args.activity == "declared" else None
            stretches = still_stretches(pts)
            res = []
            for motion in (False, True):
                prof = os.path.join(work, f"{name}-{spacing}{'-motion' if motion else ''}.profile.yaml")
                with open(prof, "w") as f:
                    json.dump(profile(f"eval-{spacing}", centres, args.acceleration, activity, motion), f, indent=1)
                report = os.path.join(work, f"{name}-{spacing}{'-motion' if motion else ''}.report.json")
                log = os.path.join(work, f"{name}-{spacing}{'-motion' if motion else ''}.policy.log")
                cmd = [args.geomon, "replay", "--profile", prof, track, "--compare-always-on", "--no-hooks",
                       "--report", report, "--format", "json", "--policy-log", log] + (["--motion"] if motion else [])
                cmd += MODEL_ARGS + track_args(name) + (["--activity", "derive"] if activity == "derive" else [])
                run_replay(cmd, name)
                rep = json.load(open(report))
                end = parse_time(pts[-1][2])
                on = receiver_intervals(log, "on", end)
                inside = sum(max(0.0, min(e, b) - max(s, a)) for a, b in stretches for s, e in on)
                res.append((rep, inside))
            (r0, s0), (r1, s1) = res
            still = sum(b - a for a, b in stretches)
            m, base = r1["match"], r1["baseline"]
            lower = f"{100 * (1 - s1 / s0):.0f} %" if s0 > 0 else "-"
            print(f"| {name} | {KINDS[name]} | {len(stretches)} | {still:.0f} | {s0:.0f} / {s1:.0f} | {lower} | {r0['gnss_on_s']:.0f} / {r1['gnss_on_s']:.0f} | "
                  f"{100 * r0['gnss_on_s'] / base['gnss_on_s']:.1f} / {100 * r1['gnss_on_s'] / base['gnss_on_s']:.1f} | {m['recall']:.3f} | {m['extra']} |")
            tot["n"] += len(stretches); tot["still"] += still; tot["s0"] += s0; tot["s1"] += s1
            tot["on0"] += r0["gnss_on_s"]; tot["on1"] += r1["gnss_on_s"]; tot["base"] += base["gnss_on_s"]
            tot["missed"] += m["missed"]; tot["be"] += base["events"]; tot["extra"] += m["extra"]
        recall = 1 - tot["missed"] / tot["be"] if tot["be"] else 1
        lower = f"{100 * (1 - tot['s1'] / tot['s0']):.0f} %" if tot["s0"] > 0 else "-"
        print(f"| **all** | | {tot['n']} | {tot['still']:.0f} | {tot['s0']:.0f} / {tot['s1']:.0f} | **{lower}** | {tot['on0']:.0f} / {tot['on1']:.0f} | "
              f"{100 * tot['on0'] / tot['base']:.1f} / **{100 * tot['on1'] / tot['base']:.1f}** | {recall:.3f} | {tot['extra']} |")

def approach_eval(args, root, work):
    """Each track and spacing without and with `approach: {bands: [1km, 500m, 200m]}` on every
    fence: the on-time of both (approach never wakes the receiver, so they should be equal),
    and, from an always-on replay with approach, each approach event's ETA against the time of
    the enter that followed it (the first fix certainly inside, so the error includes the
    (accuracy + hysteresis) / speed the enter is later than the boundary)."""
    bands = ["1km", "500m", "200m"]
    for spacing in args.spacing or (2000,):
        print(f"\n### Fences every ~{spacing // 1000} km: without / with approach bands {bands}\n")
        print("| track | kind | on s (without / with) | cost (points of always-on) | approach events (policy / always-on) | with ETA, enter followed | ETA error p50 s | p90 s | signed median s | within 20 % of the time to enter |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        kinds = {}
        every = []
        for name in TRACKS:
            track = shifted(os.path.join(root, "Tests/Fixtures/power", name + ".jsonl"), args.shift, work)
            pts = load(track)
            centres, _ = fences(pts, spacing)
            runs = []
            for approach in (False, True):
                prof = os.path.join(work, f"{name}-{spacing}{'-approach' if approach else ''}.profile.yaml")
                p = profile(f"eval-{spacing}", centres, args.acceleration)
                if approach:
                    p["defaults"] = {"events": ["enter", "exit"], "approach": {"bands": bands}}
                with open(prof, "w") as f:
                    json.dump(p, f, indent=1)
                report = os.path.join(work, f"{name}-{spacing}{'-approach' if approach else ''}.report.json")
                out = run_replay([args.geomon, "replay", "--profile", prof, track, "--compare-always-on", "--no-hooks",
                                  "--report", report, "--format", "json"], name)
                events = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
                runs.append((json.load(open(report)), events, prof))
            (r0, _, _), (r1, e1, prof) = runs
            base = r1["baseline"]["gnss_on_s"]
            cost = 100 * (r1["gnss_on_s"] - r0["gnss_on_s"]) / base if base else 0
            always = [json.loads(l) for l in run_replay([args.geomon, "replay", "--profile", prof, track, "--always-on",
                                                         "--no-hooks", "--format", "json"], name).splitlines() if l.startswith("{")]
            errors, within = [], 0
            for i, e in enumerate(always):
                a = e.get("approach")
                if e["type"] != "approach" or not a or "eta_s" not in a:
                    continue
                t0 = parse_time(e["time"])
                for later in always[i + 1:]:
                    if later["fence"] != e["fence"] or later["type"] not in ("enter", "exit"):
                        continue
                    if later["type"] == "enter":
                        actual = parse_time(later["time"]) - t0
                        err = t0 + a["eta_s"] - parse_time(later["time"])
                        errors.append(err)
                        if actual > 0 and abs(err) <= 0.2 * actual:
                            within += 1
                    break
            every += errors
            k = kinds.setdefault(KINDS[name], dict(tracks=0, on0=0.0, on1=0.0, base=0.0, errors=[], within=0, n0=0, n1=0))
            k["tracks"] += 1; k["on0"] += r0["gnss_on_s"]; k["on1"] += r1["gnss_on_s"]; k["base"] += base
            k["errors"] += errors; k["within"] += within
            n_policy = sum(1 for e in e1 if e["type"] == "approach")
            n_always = sum(1 for e in always if e["type"] == "approach")
            k["n0"] += n_policy; k["n1"] += n_always
            print(f"| {name} | {KINDS[name]} | {r0['gnss_on_s']:.0f} / {r1['gnss_on_s']:.0f} | {cost:+.2f} | {n_policy} / {n_always} | {len(errors)} | "
                  f"{pct(errors, 0.5, True)} | {pct(errors, 0.9, True)} | {pct(errors, 0.5, False)} | {share(within, errors)} |")
        print(f"\n#### By kind of movement\n")
        print("| kind | tracks | on s (without / with) | cost (points) | approach events (policy / always-on) | ETAs | ETA error p50 s | p90 s | signed median s | within 20 % |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for kind, k in kinds.items():
            cost = 100 * (k["on1"] - k["on0"]) / k["base"] if k["base"] else 0
            print(f"| {kind} | {k['tracks']} | {k['on0']:.0f} / {k['on1']:.0f} | {cost:+.2f} | {k['n0']} / {k['n1']} | {len(k['errors'])} | "
                  f"{pct(k['errors'], 0.5, True)} | {pct(k['errors'], 0.9, True)} | {pct(k['errors'], 0.5, False)} | {share(k['within'], k['errors'])} |")

def pct(values, q, absolute):
    v = sorted(abs(x) for x in values) if absolute else sorted(values)
    if not v:
        return "-"
    return f"{v[max(0, math.ceil(q * len(v)) - 1)]:.0f}"

def share(count, values):
    return f"{100 * count / len(values):.0f} %" if values else "-"

def profile(name, centres, acceleration, activity=None, motion=False):
    """The evaluation profile; with `activity` (not "derive") `policy.activity` names the
    bounds instead of the default profile's max_speed 45m/s and max_acceleration; with
    `motion` and `--creep-speed`, `sources.motion` with that `creep_speed`."""
    policy = {"max_speed": "45m/s", "max_acceleration": f"{acceleration}m/s2", "wake_margin": "20m",
              "min_sleep": "10s", "max_sleep": "10m", "receiver": {"ttff_hot": "2s"}}
    if activity and activity != "derive":
        del policy["max_speed"], policy["max_acceleration"]
        policy["activity"] = activity
    if RETRY:
        policy["retry_fix_timeout"] = RETRY
    for item in EXTRA:
        key, value = item.split("=", 1)
        node = policy
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    power = {"method": POWER, "restart": RESTART} if RESTART else POWER
    sources = {"gnss": {"plugin": "gpsd", "power": power}}
    if COARSE:
        # Replay derives the coarse fixes from the track (docs/power.md, "Receiver model").
        sources["coarse"] = {"exec": ["/bin/true"], "interval": "60s", "accuracy": COARSE}
    if motion and CREEP is not None:
        # Replay derives the sensor from the track (`MotionSignal`) as with `--motion`.
        sources["motion"] = {"plugin": "command", "exec": ["/bin/true"], "creep_speed": CREEP}
    extra = {"movement": {"motion": True, "trips": True, "visits": True}} if MOVEMENT else {}
    return {
        "version": 1, "name": name, "mode": MODE,
        "sources": sources,
        "policy": policy,
        **extra,
        "fences": [{"id": f"f{i + 1}", "circle": {"lat": lat, "lon": lon, "radius": 250}, "events": ["enter", "exit"]}
                   for i, (lat, lon) in enumerate(centres)],
    }

def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap = argparse.ArgumentParser()
    ap.add_argument("--geomon", default=os.path.join(root, ".build/debug/geomon"))
    ap.add_argument("--keep", help="keep profiles and reports in this directory")
    ap.add_argument("--acceleration", type=float, default=1.0, help="max_acceleration (m/s2) for vehicles")
    ap.add_argument("--walk-acceleration", type=float, default=1.0, help="max_acceleration (m/s2) for slow tracks")
    ap.add_argument("--retry-fix-timeout", help="policy.retry_fix_timeout, e.g. 30s (default: fix_timeout)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="another policy key for every profile, e.g. --set fix_timeout=30s (repeatable)")
    ap.add_argument("--interpolate-gaps", help="geomon replay --interpolate-gaps S (a what-if; default: the model's 60 s)")
    ap.add_argument("--receiver-ttff-hot", metavar="SECONDS",
                    help="geomon replay --receiver-ttff-hot S: the modelled receiver's hot start, against the profile's planned 2 s (the MT3339, SiRFstarIV and u-blox M8 datasheets: about 1 s); the policy measures it and replans")
    ap.add_argument("--tracking-interval", help="geomon replay --tracking-interval S: while on, a fix every S seconds interpolated between recorded ones, for the run and always-on alike (default: the recorded fixes)")
    ap.add_argument("--coarse", metavar="ACCURACY",
                    help="add a coarse source beside GNSS (fixes every 60 s derived from the track, e.g. 500m)")
    ap.add_argument("--spacing", type=int, action="append", help="fence spacing in metres (default: 2000 and 10000)")
    ap.add_argument("--power", default="ubx", choices=["watch", "ubx", "mtk", "modemmanager"],
                    help="sources.gnss.power of the profiles (default: ubx, the issue's evaluation)")
    ap.add_argument("--mode", default="regions", choices=["regions", "continuous"],
                    help="the profiles' mode (default: regions, the issue's evaluation)")
    ap.add_argument("--restart", choices=["hot", "warm", "cold"],
                    help="the power method's restart class (default: the method's own, hot for ubx)")
    ap.add_argument("--shift", type=float, default=0,
                    help="start every track this many seconds later (fences are laid from the new start): "
                         "other phases of the same trips, for how much a figure owes to luck")
    ap.add_argument("--activity", choices=["default", "declared"], default="default",
                    help="default: every profile plans with max_speed 45m/s and --acceleration (the default profile); "
                         "declared: each track's activity (policy.activity; the mixed days --activity derive)")
    ap.add_argument("--track", action="append", help="only these tracks (name without .jsonl; repeatable)")
    ap.add_argument("--tracks", choices=["all", "original"], default="original",
                    help="the original 13 (drives, walks, bikes, a run, two boats, the rail vehicle; the default, docs/power.md's "
                         "tables) or all 31 (with buses, a train, mixed days, ships, a standing receiver and aircraft)")
    ap.add_argument("--motion", action="store_true",
                    help="compare each track without and with a motion sensor derived from it (geomon replay --motion)")
    ap.add_argument("--creep-speed", metavar="SPEED",
                    help="with --motion: sources.motion.creep_speed, e.g. 0m/s (no check-backs while still; default: geomon's 0.5 m/s)")
    ap.add_argument("--movement", action="store_true",
                    help="every profile with movement: {motion, trips, visits} (docs/engine.md, \"Movement\"): "
                         "their on-time against the same run without")
    ap.add_argument("--approach", action="store_true",
                    help="compare each track without and with approach bands, and the approach ETAs against the enters")
    ap.add_argument("--profiles", action="store_true",
                    help="check the fitness and social-radar targets with the shipped profiles instead")
    args = ap.parse_args()
    global RETRY, TRACKS
    if args.tracks == "original":
        TRACKS = TRACKS[:ORIGINAL]
    if args.track:
        TRACKS = [n for n in TRACKS if n in args.track]
    global RETRY, EXTRA, MODE, MAX_LATENCY, COARSE, POWER, RESTART, MOVEMENT, CREEP
    MOVEMENT = args.movement
    POWER = args.power
    RESTART = args.restart
    if args.interpolate_gaps:
        MODEL_ARGS.extend(["--interpolate-gaps", args.interpolate_gaps])
    if args.tracking_interval:
        MODEL_ARGS.extend(["--tracking-interval", args.tracking_interval])
    if args.receiver_ttff_hot:
        MODEL_ARGS.extend(["--receiver-ttff-hot", args.receiver_ttff_hot])
    COARSE = args.coarse
    CREEP = args.creep_speed
    RETRY = args.retry_fix_timeout
    EXTRA = args.set
    for item in EXTRA:
        if item.startswith("max_latency="):
            MAX_LATENCY = parse_duration(item.split("=", 1)[1])
    MODE = args.mode
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        evaluate(args, root, args.keep)
    else:
        with tempfile.TemporaryDirectory(prefix="geomon-power-eval-") as work:
            evaluate(args, root, work)

def evaluate(args, root, work):
    if args.profiles:
        profiles_eval(args.geomon, root, work)
        return
    if args.motion:
        motion_eval(args, root, work)
        return
    if args.approach:
        approach_eval(args, root, work)
        return
    for spacing in args.spacing or (2000, 10000):
        rows = []
        for name in TRACKS:
            track = shifted(os.path.join(root, "Tests/Fixtures/power", name + ".jsonl"), args.shift, work)
            pts = load(track)
            bridge(name, pts)
            centres, travelled = fences(pts, spacing)
            prof = os.path.join(work, f"{name}-{spacing}.profile.yaml")
            report = os.path.join(work, f"{name}-{spacing}.report.json")
            activity = ACTIVITY[name] if args.activity == "declared" else None
            with open(prof, "w") as f:
                json.dump(profile(f"eval-{spacing}", centres, args.acceleration, activity), f, indent=1)
            log = os.path.join(work, f"{name}-{spacing}.policy.log")
            cmd = [args.geomon, "replay", "--profile", prof, track, "--compare-always-on", "--no-hooks",
                   "--report", report, "--format", "json", "--policy-log", log]
            cmd += MODEL_ARGS + track_args(name)
            if activity == "derive":
                cmd += ["--activity", "derive"]
            # Slow tracks (walking, hiking) may use a smaller acceleration bound.
            r0 = subprocess.run(cmd, capture_output=True, text=True)
            if r0.returncode != 0:
                sys.exit(f"geomon failed on {name}: {r0.stderr}")
            rep = json.load(open(report))
            speed = travelled / rep["track_s"] if rep["track_s"] > 0 else 0
            if speed < 3 and args.walk_acceleration != args.acceleration and activity is None:
                with open(prof, "w") as f:
                    json.dump(profile(f"eval-{spacing}", centres, args.walk_acceleration), f, indent=1)
                r0 = subprocess.run(cmd, capture_output=True, text=True)
                if r0.returncode != 0:
                    sys.exit(f"geomon failed on {name}: {r0.stderr}")
                rep = json.load(open(report))
            base_cmd = [args.geomon, "replay", "--profile", prof, track, "--always-on", "--no-hooks", "--format", "json"] + track_args(name)
            base_events = [json.loads(l) for l in run_replay(base_cmd, name).splitlines() if l.startswith("{")]
            rep["budget"] = latency_budget(pts, base_events, rep["match"], MAX_LATENCY)
            on = receiver_intervals(log, "on", parse_time(pts[-1][2]))
            bridged = float(BRIDGE.get(name, args.interpolate_gaps or 60))
            rep["outage"] = outage_usage(pts, on, bridged)
            rep["why_missed"] = why_missed(rep["match"].get("missed_at", []), pts, on, bridged)
            rep["at_resumption"] = at_resumption(rep["match"].get("missed_at", []), pts, centres, bridged)
            if MOVEMENT:
                policy_events = [json.loads(l) for l in r0.stdout.splitlines() if l.startswith("{")]
                rep["movement"] = movement_match(base_events, policy_events)
            rows.append((name, len(centres), speed, rep))
        print(f"\n### Fences every ~{spacing // 1000} km\n")
        print(f"| track | kind | avg m/s | A m/s² | track s | fences | crossings | always-on s | policy on s | % of always-on | oracle s | wakeups | events (base/policy) | recall | extra | p50 s | p95 s | max s | within budget | outage s | on in outages s | energy mWh (policy/always-on) | powered % ({POWER}) | activity | violations | missed after the first | missed: on / after an outage / asleep | missed at a resumption fence |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|")
        latencies = []
        tot = dict(track=0, fences=0, cross=0, base=0, on=0, oracle=0, wake=0, be=0, pe=0, extra=0, emp=0, emb=0, missed=0,
                   ok=0, matched=0, out=0, outon=0, powered=0)
        worst = None
        kinds = {}
        for name, n, speed, r in rows:
            b, m, o = r["baseline"], r["match"], r["oracle"]
            acc = args.walk_acceleration if speed < 3 else args.acceleration
            share = 100 * r["gnss_on_s"] / b["gnss_on_s"] if b["gnss_on_s"] else 0
            f = lambda v: "-" if v is None else f"{v:.1f}"
            ok, matched, top = r["budget"]
            within = "-" if not matched else ("missed" if ok is None else f"{ok}/{matched}")
            out, outon = r["outage"]
            print(f"| {name} | {KINDS[name]} | {speed:.1f} | {acc:g} | {r['track_s']:.0f} | {n} | {o['crossings']} | {b['gnss_on_s']:.0f} | {r['gnss_on_s']:.0f} | {share:.1f} | {o['gnss_on_s']:.0f} | {r['wakeups']} | {b['events']}/{r['events']} | {m['recall']:.3f} | {m['extra']} | {f(m['latency_s_p50'])} | {f(m['latency_s_p95'])} | {f(top)} | {within} | {out:.0f} | {outon:.0f} | {r['energy_mwh']:.1f}/{b['energy_mwh']:.1f} | {100 * r['gnss_powered_s'] / b['gnss_on_s'] if b['gnss_on_s'] else 0:.1f} | {r.get('activity', '-')} | {len(r.get('violations', []))} | {missed_after_first(r)} | {' / '.join(map(str, r['why_missed']))} | {r['at_resumption']} |")
            tot["ok"] += ok or 0; tot["matched"] += matched; tot["out"] += out; tot["outon"] += outon
            if top is not None:
                worst = top if worst is None else max(worst, top)
            tot["track"] += r["track_s"]; tot["fences"] += n; tot["cross"] += o["crossings"]; tot["base"] += b["gnss_on_s"]
            tot["on"] += r["gnss_on_s"]; tot["oracle"] += o["gnss_on_s"]; tot["wake"] += r["wakeups"]; tot["be"] += b["events"]
            tot["pe"] += r["events"]; tot["extra"] += m["extra"]; tot["emp"] += r["energy_mwh"]; tot["emb"] += b["energy_mwh"]
            tot["missed"] += m["missed"]; tot["powered"] += r["gnss_powered_s"]
            latencies += m.get("latencies_s", [])
            activity = ACTIVITY[name] if args.activity == "declared" else "default"
            k = kinds.setdefault((KINDS[name], activity), dict(tracks=0, base=0.0, on=0.0, be=0, missed=0, extra=0, violations=0, after=0, why=[0, 0, 0], resumption=0))
            k["why"] = [x + y for x, y in zip(k["why"], r["why_missed"])]
            k["resumption"] += r["at_resumption"]
            k["tracks"] += 1; k["base"] += b["gnss_on_s"]; k["on"] += r["gnss_on_s"]
            k["be"] += b["events"]; k["missed"] += m["missed"]; k["extra"] += m["extra"]
            k["violations"] += len(r.get("violations", [])); k["after"] += missed_after_first(r) if r.get("violations") else 0
        recall = (tot["be"] - tot["missed"]) / tot["be"] if tot["be"] else 1
        latencies.sort()
        rank = lambda q: latencies[max(0, math.ceil(q * len(latencies)) - 1)] if latencies else None
        f = lambda v: "-" if v is None else f"{v:.1f}"
        print(f"| **all** | | | | {tot['track']:.0f} | {tot['fences']} | {tot['cross']} | {tot['base']:.0f} | {tot['on']:.0f} | **{100 * tot['on'] / tot['base']:.1f}** | {tot['oracle']:.0f} | {tot['wake']} | {tot['be']}/{tot['pe']} | {recall:.3f} | {tot['extra']} | {f(rank(0.5))} | {f(rank(0.95))} | {f(worst)} | {tot['ok']}/{tot['matched']} | {tot['out']:.0f} | {tot['outon']:.0f} | {tot['emp']:.1f}/{tot['emb']:.1f} | {100 * tot['powered'] / tot['base']:.1f} |")
        print(f"\n#### By kind of movement (fences every ~{spacing // 1000} km)\n")
        print("| kind | activity | tracks | always-on s | policy on s | % of always-on | events | recall | extra | violations | missed after a violation | missed: on / after an outage / asleep | missed at a resumption fence |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for (kind, activity), k in kinds.items():
            share = 100 * k["on"] / k["base"] if k["base"] else 0
            rec = (k["be"] - k["missed"]) / k["be"] if k["be"] else 1
            print(f"| {kind} | {activity} | {k['tracks']} | {k['base']:.0f} | {k['on']:.0f} | {share:.1f} | {k['be']} | {rec:.3f} | {k['extra']} | {k['violations']} | {k['after']} | {' / '.join(map(str, k['why']))} | {k['resumption']} |")
        if MOVEMENT:
            print_movement(rows, spacing)

MOVEMENT_KINDS = ["moving", "still", "trip_start", "trip_end", "arrival", "departure"]

def movement_match(base, policy, tolerance=120):
    """Per movement event kind: always-on's count, the policy's, and how many of always-on's
    have one of the policy's of the same kind within `tolerance` seconds (each used once)."""
    result = {}
    for kind in MOVEMENT_KINDS:
        b = sorted(parse_time(e["time"]) for e in base if e["type"] == kind)
        p = sorted(parse_time(e["time"]) for e in policy if e["type"] == kind)
        used, matched = set(), 0
        for t in b:
            best = min((j for j in range(len(p)) if j not in used and abs(p[j] - t) <= tolerance),
                       key=lambda j: abs(p[j] - t), default=None)
            if best is not None:
                used.add(best)
                matched += 1
        result[kind] = (len(b), len(p), matched)
    return result

def print_movement(rows, spacing):
    """The movement events the policy's fixes give against always-on's, per kind of movement."""
    print(f"\n#### Movement events under the policy against always-on (fences every ~{spacing // 1000} km; within 120 s)\n")
    print("| kind | " + " | ".join(f"{k} (always-on / policy / matched)" for k in MOVEMENT_KINDS) + " |")
    print("|---|" + "---:|" * len(MOVEMENT_KINDS))
    table = {}
    for name, _, _, r in rows:
        k = table.setdefault(KINDS[name], {kind: [0, 0, 0] for kind in MOVEMENT_KINDS})
        for kind, (b, p, m) in r["movement"].items():
            k[kind][0] += b; k[kind][1] += p; k[kind][2] += m
    total = {kind: [sum(t[kind][i] for t in table.values()) for i in range(3)] for kind in MOVEMENT_KINDS}
    for kind, k in list(table.items()) + [("**all**", total)]:
        print(f"| {kind} | " + " | ".join(f"{b} / {p} / {m}" for b, p, m in (k[x] for x in MOVEMENT_KINDS)) + " |")

def bridge(name, pts):
    """Three median intervals for a sparse logger (median 30 s or more), else nothing."""
    times = [parse_time(p[2]) for p in pts]
    gaps = sorted(b - a for a, b in zip(times, times[1:]))
    if gaps and gaps[len(gaps) // 2] >= 30:
        BRIDGE[name] = round(3 * gaps[len(gaps) // 2])

def track_args(name):
    """The receiver model's options for one track (`BRIDGE`), after the global ones."""
    return ["--interpolate-gaps", str(BRIDGE[name])] if name in BRIDGE and "--interpolate-gaps" not in MODEL_ARGS else []

def why_missed(missed, pts, on, gap_limit):
    """Each missed event attributed (on, outage, asleep): `on`, the policy's receiver was on
    within a second of it (its fixes, at another phase than always-on's, did not confirm a
    change that short); `outage`, it came within a minute after a recorded gap longer than the
    model bridges (the retries after an outage listen every retry_max_interval); else `asleep`."""
    times = [parse_time(p[2]) for p in pts]
    ends = [b for a, b in zip(times, times[1:]) if b - a > gap_limit]
    counts = [0, 0, 0]
    for m in missed:
        t = parse_time(m)
        if any(s - 1 <= t <= e + 1 for s, e in on):
            counts[0] += 1
        elif any(0 <= t - e <= 60 for e in ends):
            counts[1] += 1
        else:
            counts[2] += 1
    return counts

def at_resumption(missed, pts, centres, gap_limit):
    """Missed events within a minute after the end of a recorded gap longer than the model
    bridges whose first fix is a fence's centre. The placement (`fences`) puts the next fence on
    the first fix where the distance travelled reaches it, so every gap whose chord is longer
    than the spacing ends with the device inside a fence the instant the recording resumes:
    always-on, on through the outage, sees it there; a policy probing the outage sees it only if
    a probe falls in the crossing. Counted apart from `why_missed`, which it overlaps, and like
    it by the matching's unmatched event (`missed_at`)."""
    times = [parse_time(p[2]) for p in pts]
    centre = set(centres)
    ends = [times[i] for i in range(1, len(pts)) if times[i] - times[i - 1] > gap_limit and (pts[i][0], pts[i][1]) in centre]
    return sum(1 for m in missed if any(0 <= parse_time(m) - e <= 60 for e in ends))

def missed_after_first(report):
    """Events always-on saw that the run missed, after the first violation of the bounds (all
    of them when there was none)."""
    missed = report["match"].get("missed_at", [])
    if not report.get("violations"):
        return len(missed)
    first = parse_time(report["violations"][0]["time"])
    return sum(1 for m in missed if parse_time(m) > first)

if __name__ == "__main__":
    main()
