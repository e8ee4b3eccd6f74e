#!/usr/bin/env python3
"""Crash torture: kill -9 geomon at random instants and prove nothing is lost or repeated.

Replays a real track with hooks into a database, SIGKILLs `geomon replay` at seeded random
instants (restarting it each time with the same command, which resumes), then compares the
stored events and the hook log with one uninterrupted run:

- stored events: identical to the uninterrupted run's (zero missing, zero duplicates);
- hook log: every event id delivered at least once per hook; an id seen twice is allowed only
  when geomon was killed while that delivery ran, and such repeats are counted and reported.

Usage: scripts/torture.py --kills 200 --seed 1 [--geomon PATH] [--profile P] [--track T]
Prints one JSON line with the figures; exits 1 when a guarantee is broken.
"""
import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HOOK = """#!/bin/sh
# Appends the event id to the log, slowly enough that kills land mid-delivery.
id="$GEOMON_EVENT_ID"
sleep 0.02
printf '%s %s\\n' "$id" "$GEOMON_ATTEMPT" >> "{log}"
"""


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def stored_events(geomon, db):
    out = run([geomon, "events", "--db", db, "--format", "json"])
    if out.returncode != 0:
        raise SystemExit(f"torture: geomon events failed: {out.stderr}")
    return [json.loads(line)["id"] for line in out.stdout.splitlines() if line.strip()]


def make_profile(src, work, log):
    """Copies the profile, pointing every hook at the logging hook."""
    hook = os.path.join(work, "log-hook.sh")
    with open(hook, "w") as f:
        f.write(HOOK.format(log=log))
    os.chmod(hook, 0o755)
    with open(src) as f:
        text = f.read()
    profile = os.path.join(work, "profile.yaml")
    # The torture profiles carry a placeholder for the hook path.
    with open(profile, "w") as f:
        f.write(text.replace("@HOOK@", hook))
    # GeoJSON and other relative files beside the source profile.
    for name in os.listdir(os.path.dirname(src)):
        if name.endswith(".geojson"):
            shutil.copy(os.path.join(os.path.dirname(src), name), work)
    return profile


def hook_ids(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.split()[0] for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--geomon", default=os.path.join(ROOT, ".build/debug/geomon"))
    ap.add_argument("--profile", default=os.path.join(ROOT, "Tests/Fixtures/torture/profile.yaml"))
    ap.add_argument("--track", default=os.path.join(ROOT, "Tests/Fixtures/tracks/genivi_20100403_Z205_Switzerland_short.nmea"))
    ap.add_argument("--max-delay", type=float, default=0, help="longest run before a kill, seconds (default: 1.2 x the reference run)")
    args = ap.parse_args()
    rng = random.Random(args.seed)

    work = tempfile.mkdtemp(prefix="geomon-torture-")
    try:
        # 1. The uninterrupted reference run.
        ref_log = os.path.join(work, "ref-hooks.log")
        ref_dir = os.path.join(work, "ref")
        os.mkdir(ref_dir)
        ref_profile = make_profile(args.profile, ref_dir, ref_log)
        ref_db = os.path.join(ref_dir, "ref.db")
        started = time.monotonic()
        ref = run([args.geomon, "replay", "--profile", ref_profile, args.track, "--db", ref_db, "--format", "json"])
        ref_seconds = time.monotonic() - started
        # Kill somewhere inside a run: uniformly up to a little past the reference duration.
        max_delay = min(args.max_delay, ref_seconds * 1.2) if args.max_delay > 0 else ref_seconds * 1.2
        if ref.returncode != 0:
            raise SystemExit(f"torture: reference replay failed ({ref.returncode}): {ref.stderr}")
        ref_events = stored_events(args.geomon, ref_db)

        # 2. Tortured rounds: each on a fresh database, killed at random instants and
        #    restarted with the same command until one run completes; then compared.
        kills = 0
        rounds = 0
        restarts_completed = 0
        totals = {"missing": 0, "extra": 0, "duplicates": 0, "undelivered": 0, "repeats": 0, "events": 0}
        failures = []
        while kills < args.kills:
            rounds += 1
            rdir = os.path.join(work, f"round{rounds}")
            os.mkdir(rdir)
            log = os.path.join(rdir, "hooks.log")
            profile = make_profile(args.profile, rdir, log)
            db = os.path.join(rdir, "t.db")
            cmd = [args.geomon, "replay", "--profile", profile, args.track, "--db", db, "--format", "json"]
            while True:
                p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
                try:
                    p.wait(timeout=rng.uniform(0.0, max_delay) if kills < args.kills else 600)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)  # geomon and any hook it was running
                    p.wait()
                    kills += 1
                    continue
                err = p.stderr.read().decode(errors="replace")
                if p.returncode != 0:
                    raise SystemExit(f"torture: replay exited {p.returncode}: {err}")
                restarts_completed += 1
                break
            events = stored_events(args.geomon, db)
            delivered = hook_ids(log)
            missing = set(ref_events) - set(events)
            extra = set(events) - set(ref_events)
            undelivered = set(ref_events) - set(delivered)
            totals["missing"] += len(missing)
            totals["extra"] += len(extra)
            totals["duplicates"] += len(events) - len(set(events))
            totals["undelivered"] += len(undelivered)
            totals["repeats"] += len(delivered) - len(set(delivered))
            totals["events"] += len(events)
            if missing or extra or events != ref_events or undelivered:
                failures.append({"round": rounds, "missing": sorted(missing)[:3], "extra": sorted(extra)[:3], "undelivered": sorted(undelivered)[:3]})

        result = {
            "kills": kills,
            "rounds": rounds,
            "seed": args.seed,
            "events_per_run": len(ref_events),
            "events_compared": totals["events"],
            "missing": totals["missing"],
            "extra": totals["extra"],
            "duplicates": totals["duplicates"],
            "hook_undelivered": totals["undelivered"],
            "hook_repeats_after_kill": totals["repeats"],
            "reference_run_s": round(ref_seconds, 3),
        }
        print(json.dumps(result))
        if failures:
            print(f"torture: FAILED {failures[:3]}", file=sys.stderr)
            return 1
        return 0
    finally:
        if os.environ.get("GEOMON_TORTURE_KEEP"):
            print(f"torture: kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
