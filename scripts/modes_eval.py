#!/usr/bin/env python3
"""The camper van of docs/power.md ("Modes: the camper van") on the shared vehicle tracks.

For each recorded drive, a power-supply recording is derived from the drive itself by one
stated rule, then `geomon replay --power-supply` runs the van profile's modes and the report
gives the receiver's on-time per mode, against always-on (`--compare-always-on`):

- external power is online while the engine runs: from the first fix whose recorded speed
  (else the speed between fixes) is 0.5 m/s or more until 2 minutes after the last such fix
  (an engine idles at lights and in queues; a van parked for longer has it off);
- the leisure battery is at 50 % (`engine`), or falls to 15 % halfway through the drive
  (`low half`: what the significant-change fallback costs).

Each track is also replayed in plain `regions` and plain `continuous` (no modes, no supply) for
comparison. Fences: 250 m circles every 2 km along the track (as scripts/power_eval.py).

Usage: scripts/modes_eval.py [--geomon PATH] [--track NAME …] [--keep DIR]
"""
import argparse, json, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import power_eval as pe  # noqa: E402  (track table, fences, haversine, times)

MOVING = 0.5      # m/s: the recorded speed of a vehicle that moves
IDLE = 120.0      # s: the engine keeps running this long after the vehicle stopped

def supply(pts, low_half):
    """JSON lines of the derived power supply: a reading at the first fix and at each change."""
    lines, online_before, capacity_before = [], None, None
    start, end = pe.parse_time(pts[0][2]), pe.parse_time(pts[-1][2])
    last_moving = None
    for k, (lat, lon, time, speed) in enumerate(pts):
        t = pe.parse_time(time)
        if speed is None and k > 0:
            dt = t - pe.parse_time(pts[k - 1][2])
            speed = pe.haversine(pts[k - 1], pts[k]) / dt if dt > 0 else 0
        if speed is not None and speed >= MOVING:
            last_moving = t
        online = last_moving is not None and t - last_moving <= IDLE
        capacity = 15 if low_half and t >= (start + end) / 2 else 50
        if online != online_before or capacity != capacity_before:
            lines.append(json.dumps({"time": time, "capacity": capacity, "online": online}))
            online_before, capacity_before = online, capacity
    return "\n".join(lines) + "\n"

def profile(centres, modes):
    policy = {"max_speed": "45m/s", "max_acceleration": "1m/s2", "wake_margin": "20m",
              "min_sleep": "10s", "max_sleep": "10m", "receiver": {"ttff_hot": "2s"}}
    sources = {"gnss": {"plugin": "gpsd", "power": "ubx"}}
    p = {"version": 1, "name": "van", "mode": modes if isinstance(modes, str) else "regions",
         "sources": sources, "policy": policy,
         "fences": [{"id": f"f{i + 1}", "circle": {"lat": lat, "lon": lon, "radius": 250}, "events": ["enter", "exit"]}
                    for i, (lat, lon) in enumerate(centres)]}
    if not isinstance(modes, str):
        # The coarse source only for the low-battery fallback (replay derives its fixes).
        sources["coarse"] = {"exec": ["/bin/true"], "interval": "60s", "accuracy": "500m"}
        p["modes"] = [
            {"name": "driving", "when": {"external_power": True}, "mode": "continuous"},
            {"name": "low", "when": {"battery_below": "20%"}, "mode": "significant-change"},
            {"name": "parked", "when": {"external_power": False}, "mode": "regions", "coarse": False},
        ]
    return p

def replay(geomon, profile_path, track, work, tag, supply_path=None):
    report = os.path.join(work, f"{tag}.report.json")
    cmd = [geomon, "replay", "--profile", profile_path, track, "--format", "json", "--no-hooks",
           "--compare-always-on", "--report", report]
    if supply_path:
        cmd += ["--power-supply", supply_path]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{tag}: geomon replay failed ({out.returncode}): {out.stderr.strip()}")
    with open(report) as f:
        return json.load(f)

def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--geomon", default=os.path.join(root, ".build/debug/geomon"))
    ap.add_argument("--track", action="append", help="only these tracks (name without .jsonl)")
    ap.add_argument("--keep", help="keep profiles, supplies and reports in this directory")
    args = ap.parse_args()
    names = args.track or [name for name, _, activity in pe.TRACK_TABLE if activity == "vehicle"]
    work = args.keep or tempfile.mkdtemp(prefix="modes-eval-")
    os.makedirs(work, exist_ok=True)
    print("| track | run | on-time % of always-on | recall | mode switches | time per mode: s (receiver on s) |")
    print("|---|---|---:|---:|---:|---|")
    for name in names:
        track = os.path.join(root, "Tests/Fixtures/power", name + ".jsonl")
        pts = pe.load(track)
        centres, _ = pe.fences(pts, 2000)
        runs = []
        for mode in ["regions", "continuous"]:
            path = os.path.join(work, f"{name}.{mode}.yaml")
            with open(path, "w") as f:
                json.dump(profile(centres, mode), f)
            runs.append((mode, replay(args.geomon, path, track, work, f"{name}.{mode}")))
        path = os.path.join(work, f"{name}.van.yaml")
        with open(path, "w") as f:
            json.dump(profile(centres, None), f)
        for tag, low in [("van: engine", False), ("van: low half", True)]:
            sp = os.path.join(work, f"{name}.{tag.split(': ')[1].replace(' ', '-')}.supply.jsonl")
            with open(sp, "w") as f:
                f.write(supply(pts, low))
            runs.append((tag, replay(args.geomon, path, track, work, f"{name}.{tag.split(': ')[1].replace(' ', '-')}", sp)))
        for tag, r in runs:
            share = 100 * r.get("on_time_share", 0)
            recall = r.get("match", {}).get("recall", 0)
            modes = r.get("modes", {})
            per = ", ".join(f"{m} {v['s']:.0f} ({v['gnss_on_s']:.0f})" for m, v in modes.items()) or "-"
            print(f"| {name} | {tag} | {share:.1f} | {recall:.3f} | {r.get('mode_switches', '-')} | {per} |")
        sys.stdout.flush()

if __name__ == "__main__":
    main()
