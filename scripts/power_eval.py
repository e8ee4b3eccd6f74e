#!/usr/bin/env python3
"""Evaluates the power policy on the real tracks with `geomon replay --compare-always-on`.

For each track in Tests/Fixtures/power and each spacing (2 km, 10 km): writes a regions
profile with 250 m circles every `spacing` of travelled distance (the k-th centred on the first
recorded fix where the cumulative great-circle distance reaches k x spacing), the issue's knobs
(max_speed 45m/s, wake_margin 20m, min_sleep 10s, max_sleep 10m, ttff_hot 2s) and
`policy.max_acceleration` (default 1m/s2, `--walk-acceleration` for tracks slower than 3 m/s
on average), runs `geomon replay … --compare-always-on --report FILE --no-hooks`, and prints
one markdown table per spacing. Usage: scripts/power-eval.sh [--geomon PATH] [--keep DIR]
"""
import argparse, json, math, os, subprocess, sys, tempfile

TRACKS = ["genivi_20100403_Z205_Switzerland", "genivi_20100403_Z205_Switzerland_short",
          "georust_garmin_with_extensions", "gpxpy_cerknicko-jezero", "gpxpy_korita-zbevnica"]

def haversine(a, b):
    r, rad = 6371008.8, math.pi / 180
    dlat, dlon = (b[0] - a[0]) * rad, (b[1] - a[1]) * rad
    h = math.sin(dlat / 2) ** 2 + math.cos(a[0] * rad) * math.cos(b[0] * rad) * math.sin(dlon / 2) ** 2
    return 2 * r * math.asin(min(1, math.sqrt(h)))

def load(path):
    pts = []
    with open(path) as f:
        for line in f:
            o = json.loads(line)
            pts.append((o["lat"], o["lon"], o["time"]))
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

RETRY = None
EXTRA = []

def profile(name, centres, acceleration):
    policy = {"max_speed": "45m/s", "max_acceleration": f"{acceleration}m/s2", "wake_margin": "20m",
              "min_sleep": "10s", "max_sleep": "10m", "receiver": {"ttff_hot": "2s"}}
    if RETRY:
        policy["retry_fix_timeout"] = RETRY
    for item in EXTRA:
        key, value = item.split("=", 1)
        node = policy
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return {
        "version": 1, "name": name, "mode": "regions",
        "sources": {"gnss": {"plugin": "gpsd"}},
        "policy": policy,
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
    ap.add_argument("--interpolate-gaps", help="geomon replay --interpolate-gaps S (a what-if; default: the model's 10 s)")
    ap.add_argument("--spacing", type=int, action="append", help="fence spacing in metres (default: 2000 and 10000)")
    args = ap.parse_args()
    global RETRY, EXTRA
    RETRY = args.retry_fix_timeout
    EXTRA = args.set
    work = args.keep or tempfile.mkdtemp(prefix="geomon-power-eval-")
    os.makedirs(work, exist_ok=True)
    for spacing in args.spacing or (2000, 10000):
        rows = []
        for name in TRACKS:
            track = os.path.join(root, "Tests/Fixtures/power", name + ".jsonl")
            pts = load(track)
            centres, travelled = fences(pts, spacing)
            prof = os.path.join(work, f"{name}-{spacing}.profile.yaml")
            report = os.path.join(work, f"{name}-{spacing}.report.json")
            with open(prof, "w") as f:
                json.dump(profile(f"eval-{spacing}", centres, args.acceleration), f, indent=1)
            with open(prof) as f:
                text = f.read()
            cmd = [args.geomon, "replay", "--profile", prof, track, "--compare-always-on", "--no-hooks",
                   "--report", report, "--format", "json"]
            if args.interpolate_gaps:
                cmd += ["--interpolate-gaps", args.interpolate_gaps]
            # Slow tracks (walking, hiking) may use a smaller acceleration bound.
            r0 = subprocess.run(cmd, capture_output=True, text=True)
            if r0.returncode != 0:
                sys.exit(f"geomon failed on {name}: {r0.stderr}")
            rep = json.load(open(report))
            speed = travelled / rep["track_s"] if rep["track_s"] > 0 else 0
            if speed < 3 and args.walk_acceleration != args.acceleration:
                with open(prof, "w") as f:
                    json.dump(profile(f"eval-{spacing}", centres, args.walk_acceleration), f, indent=1)
                r0 = subprocess.run(cmd, capture_output=True, text=True)
                if r0.returncode != 0:
                    sys.exit(f"geomon failed on {name}: {r0.stderr}")
                rep = json.load(open(report))
            rows.append((name, len(centres), speed, rep))
        print(f"\n### Fences every ~{spacing // 1000} km\n")
        print("| track | avg m/s | A m/s² | track s | fences | crossings | always-on s | policy on s | % of always-on | oracle s | wakeups | events (base/policy) | recall | extra | p50 s | p95 s | energy mWh (policy/always-on) |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        latencies = []
        tot = dict(track=0, fences=0, cross=0, base=0, on=0, oracle=0, wake=0, be=0, pe=0, extra=0, emp=0, emb=0, missed=0)
        for name, n, speed, r in rows:
            b, m, o = r["baseline"], r["match"], r["oracle"]
            acc = args.walk_acceleration if speed < 3 else args.acceleration
            share = 100 * r["gnss_on_s"] / b["gnss_on_s"] if b["gnss_on_s"] else 0
            f = lambda v: "-" if v is None else f"{v:.1f}"
            print(f"| {name} | {speed:.1f} | {acc:g} | {r['track_s']:.0f} | {n} | {o['crossings']} | {b['gnss_on_s']:.0f} | {r['gnss_on_s']:.0f} | {share:.1f} | {o['gnss_on_s']:.0f} | {r['wakeups']} | {b['events']}/{r['events']} | {m['recall']:.3f} | {m['extra']} | {f(m['latency_s_p50'])} | {f(m['latency_s_p95'])} | {r['energy_mwh']:.1f}/{b['energy_mwh']:.1f} |")
            tot["track"] += r["track_s"]; tot["fences"] += n; tot["cross"] += o["crossings"]; tot["base"] += b["gnss_on_s"]
            tot["on"] += r["gnss_on_s"]; tot["oracle"] += o["gnss_on_s"]; tot["wake"] += r["wakeups"]; tot["be"] += b["events"]
            tot["pe"] += r["events"]; tot["extra"] += m["extra"]; tot["emp"] += r["energy_mwh"]; tot["emb"] += b["energy_mwh"]
            tot["missed"] += m["missed"]
            latencies += m.get("latencies_s", [])
        recall = (tot["be"] - tot["missed"]) / tot["be"] if tot["be"] else 1
        latencies.sort()
        rank = lambda q: latencies[max(0, math.ceil(q * len(latencies)) - 1)] if latencies else None
        f = lambda v: "-" if v is None else f"{v:.1f}"
        print(f"| **all** | | | {tot['track']:.0f} | {tot['fences']} | {tot['cross']} | {tot['base']:.0f} | {tot['on']:.0f} | **{100 * tot['on'] / tot['base']:.1f}** | {tot['oracle']:.0f} | {tot['wake']} | {tot['be']}/{tot['pe']} | {recall:.3f} | {tot['extra']} | {f(rank(0.5))} | {f(rank(0.95))} | {tot['emp']:.1f}/{tot['emb']:.1f} |")

if __name__ == "__main__":
    main()
