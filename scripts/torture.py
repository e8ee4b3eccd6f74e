#!/usr/bin/env python3
"""Crash torture: kill -9 geomon at random instants and prove nothing is lost or repeated.

Replays a real track with hooks into a database, SIGKILLs `geomon replay` at seeded random
instants (restarting it each time with the same command, which resumes), then compares the
stored events and the hook log with one uninterrupted run:

- stored events: identical to the uninterrupted run's (zero missing, zero duplicates);
- hook log: every event id delivered at least once per hook; an id seen twice is allowed only
  when geomon was killed while that delivery ran, and such repeats are counted and reported.

- hook order: per fence, the first delivery of each event follows the events' order;
- `geomon hooks list` shows nothing pending at the end.

With --live it tortures `geomon run` instead: a real gpsd (gpsfake) plays the track while
geomon run is SIGKILLed at random instants and restarted on the same database. Fixes gpsd
sent while geomon was dead are gone (that is live life), so the check is: no committed event
is stored twice, every stored event reaches the hook at least once and in order per fence,
and nothing is left pending.

Usage: scripts/torture.py --kills 200 --seed 1 [--geomon PATH] [--profile P] [--track T]
       scripts/torture.py --live --kills 10 --seed 1
(the default binary is the debug build, .build/debug/geomon; CI: --kills 20)
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
# Appends "event-id fence attempt" to the log, slowly enough that kills land mid-delivery.
id="$GEOMON_EVENT_ID"
sleep 0.02
printf '%s %s %s\\n' "$id" "$GEOMON_FENCE" "$GEOMON_ATTEMPT" >> "{log}"
"""


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def stored_events(geomon, db):
    """(id, fence) of every stored event, in event order."""
    out = run([geomon, "events", "--db", db, "--format", "json"])
    if out.returncode != 0:
        raise SystemExit(f"torture: geomon events failed: {out.stderr}")
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    return [(r["id"], r.get("fence") or "") for r in rows]


def open_deliveries(geomon, db):
    """Deliveries `geomon hooks list` still shows as pending/running/retrying (must be none)."""
    out = run([geomon, "hooks", "list", "--db", db])
    if out.returncode != 0:
        raise SystemExit(f"torture: geomon hooks list failed: {out.stderr}")
    return 0 if out.stdout.strip() == "no pending deliveries" else out.stdout.count("\n#") + 1


def kill_phase(geomon, db, ref_count):
    """Where a kill landed: (events stored so far < the reference's, deliveries left running)."""
    if not os.path.exists(db):
        return True, False
    out = run([geomon, "events", "--db", db, "--format", "json"])
    stored = len([l for l in out.stdout.splitlines() if l.strip()]) if out.returncode == 0 else 0
    listing = run([geomon, "hooks", "list", "--db", db])
    running = listing.returncode == 0 and " running attempt " in listing.stdout
    return stored < ref_count, running


def order_violations(ref_events, log_rows):
    """Per fence, the first delivery of each event in the hook log must follow the events' order.

    Repeats (an id logged again) come from kills after the hook ran but before geomon recorded
    it; a killed geomon's hook keeps running in its own session and may log after the restarted
    geomon delivered the next event, so repeats are counted, not ordered."""
    expected = {}
    for eid, fence in ref_events:
        expected.setdefault(fence, []).append(eid)
    seen = {}
    logged = set()
    for eid, fence, _ in log_rows:
        if eid not in logged:
            logged.add(eid)
            seen.setdefault(fence, []).append(eid)
    return sorted(f for f in set(expected) | set(seen) if seen.get(f, []) != expected.get(f, []))


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


def hook_rows(path):
    """(event id, fence, attempt) per hook run that completed its log line."""
    if not os.path.exists(path):
        return []
    rows = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3:
                rows.append((parts[0], parts[1], parts[2]))
    return rows


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def live_torture(args, rng):
    """`geomon run` against gpsd, killed at random instants; see the module docstring."""
    work = tempfile.mkdtemp(prefix="geomon-torture-live-")
    try:
        log = os.path.join(work, "hooks.log")
        profile = make_profile(args.profile, work, log)
        db = os.path.join(work, "live.db")
        port = free_port()
        # ~0.05 s per sentence: the short track plays in about a minute.
        gpsfake = subprocess.Popen(
            ["/usr/bin/timeout", "-s", "KILL", "600", "/usr/bin/python3", "/usr/bin/gpsfake", "-1", "-n", "-q", "-W", "2",
             "-c", str(args.live_cycle), "-P", str(port), args.track],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            # gpsd's control socket goes to TMPDIR: inside the work directory, removed with it.
            env={**os.environ, "TMPDIR": work})
        cmd = [args.geomon, "run", "--profile", profile, "--db", db, "--gpsd", f"127.0.0.1:{port}"]
        kills = 0
        started = time.monotonic()
        try:
            while gpsfake.poll() is None:
                p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
                delay = rng.uniform(0.3, 3.0)
                try:
                    p.wait(timeout=delay)
                    raise SystemExit(f"torture: geomon run exited by itself ({p.returncode})")
                except subprocess.TimeoutExpired:
                    pass
                if kills < args.kills and gpsfake.poll() is None:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
                    kills += 1
                    continue
                # Enough kills: let this one run to the end of the log, then stop it cleanly.
                gpsfake.wait(timeout=600)
                time.sleep(1)
                p.send_signal(signal.SIGTERM)
                if p.wait(timeout=30) != 0:
                    raise SystemExit(f"torture: geomon run exited {p.returncode} on SIGTERM")
                break
        finally:
            if gpsfake.poll() is None:
                gpsfake.kill()
        # A last run delivers whatever the final kill left (hooks that were running, retries).
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and open_deliveries(args.geomon, db) > 0:
            time.sleep(0.5)
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)

        events = stored_events(args.geomon, db)
        ids = [e for e, _ in events]
        rows = hook_rows(log)
        delivered = {r[0] for r in rows}
        result = {
            "mode": "live",
            "kills": kills,
            "seed": args.seed,
            "events_stored": len(events),
            "duplicates": len(ids) - len(set(ids)),
            "hook_undelivered": len(set(ids) - delivered),
            "hook_runs_logged": len(rows),
            "hook_repeats_after_kill": len(rows) - len(delivered),
            "order_violations": len(order_violations(events, rows)),
            "open_deliveries": open_deliveries(args.geomon, db),
            "total_s": round(time.monotonic() - started, 1),
        }
        print(json.dumps(result))
        ok = events and result["duplicates"] == 0 and result["hook_undelivered"] == 0 \
            and result["order_violations"] == 0 and result["open_deliveries"] == 0
        if not ok:
            print(f"torture: FAILED (kept {work})", file=sys.stderr)
            return 1
        shutil.rmtree(work, ignore_errors=True)
        return 0
    except BaseException:
        print(f"torture: kept {work}", file=sys.stderr)
        raise


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--geomon", default=os.path.join(ROOT, ".build/debug/geomon"))
    ap.add_argument("--profile", default=os.path.join(ROOT, "Tests/Fixtures/torture/profile.yaml"))
    ap.add_argument("--track", default=os.path.join(ROOT, "Tests/Fixtures/tracks/genivi_20100403_Z205_Switzerland_short.nmea"))
    ap.add_argument("--max-delay", type=float, default=0, help="longest run before a kill, seconds (default: 1.2 x the reference run)")
    ap.add_argument("--min-delay", type=float, default=0, help="shortest run before a kill, seconds (default: 0)")
    ap.add_argument("--live", action="store_true", help="torture `geomon run` against gpsd (gpsfake) instead of replay")
    ap.add_argument("--live-cycle", type=float, default=0.05, help="gpsfake's delay per sentence in --live mode")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    if args.live:
        return live_torture(args, rng)

    began = time.monotonic()
    if not os.access(args.geomon, os.X_OK):
        raise SystemExit(f"torture: no geomon binary at {args.geomon} (swift build first, or --geomon PATH)")
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
        if not ref_events:
            raise SystemExit("torture: the reference run decided no events; check the profile and track")
        ref_rows = hook_rows(ref_log)
        ref_order = order_violations(ref_events, ref_rows)
        if sorted(eid for eid, _, _ in ref_rows) != sorted(eid for eid, _ in ref_events):
            raise SystemExit("torture: the reference run did not deliver every event exactly once")
        if ref_order or open_deliveries(args.geomon, ref_db):
            raise SystemExit(f"torture: the reference run itself broke order or left deliveries open: {ref_order}")

        # 2. Tortured rounds: each on a fresh database, killed at random instants and
        #    restarted with the same command until one run completes; then compared.
        kills = 0
        rounds = 0
        restarts_completed = 0
        totals = {"missing": 0, "extra": 0, "duplicates": 0, "undelivered": 0, "repeats": 0, "events": 0,
                  "order": 0, "open": 0, "hook_runs": 0, "same_attempt": 0,
                  "kills_while_deciding": 0, "kills_mid_delivery": 0}
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
                    p.wait(timeout=rng.uniform(min(args.min_delay, max_delay), max_delay) if kills < args.kills else 600)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)  # geomon (its hooks run in their own sessions)
                    p.wait()
                    kills += 1
                    deciding, running = kill_phase(args.geomon, db, len(ref_events))
                    totals["kills_while_deciding"] += deciding
                    totals["kills_mid_delivery"] += running
                    continue
                err = p.stderr.read().decode(errors="replace")
                if p.returncode != 0:
                    raise SystemExit(f"torture: replay exited {p.returncode}: {err}")
                restarts_completed += 1
                break
            events = stored_events(args.geomon, db)
            rows = hook_rows(log)
            delivered = [eid for eid, _, _ in rows]
            # A repeat must be a new attempt (the attempt number is committed before a hook
            # starts, so the run after a kill carries a higher one); the same (id, attempt)
            # twice would be a double delivery no kill explains.
            same_attempt = len(rows) - len({(eid, attempt) for eid, _, attempt in rows})
            totals["same_attempt"] += same_attempt
            missing = set(ref_events) - set(events)
            extra = set(events) - set(ref_events)
            undelivered = {eid for eid, _ in ref_events} - set(delivered)
            order = order_violations(events, rows)
            still_open = open_deliveries(args.geomon, db)
            totals["order"] += len(order)
            totals["open"] += still_open
            totals["hook_runs"] += len(rows)
            totals["missing"] += len(missing)
            totals["extra"] += len(extra)
            totals["duplicates"] += len(events) - len(set(events))
            totals["undelivered"] += len(undelivered)
            totals["repeats"] += len(delivered) - len(set(delivered))
            totals["events"] += len(events)
            if missing or extra or events != ref_events or undelivered or order or still_open or same_attempt:
                failures.append({"round": rounds, "missing": sorted(missing)[:3], "extra": sorted(extra)[:3],
                                 "undelivered": sorted(undelivered)[:3], "order": order[:3], "open": still_open})

        result = {
            "kills": kills,
            "rounds": rounds,
            "kills_before_all_events_stored": totals["kills_while_deciding"],
            "kills_with_a_hook_running": totals["kills_mid_delivery"],
            "seed": args.seed,
            "events_per_run": len(ref_events),
            "events_compared": totals["events"],
            "missing": totals["missing"],
            "extra": totals["extra"],
            "duplicates": totals["duplicates"],
            "hook_undelivered": totals["undelivered"],
            "hook_runs_logged": totals["hook_runs"],
            "hook_repeats_after_kill": totals["repeats"],
            "repeats_with_same_attempt": totals["same_attempt"],
            "order_violations": totals["order"],
            "open_deliveries": totals["open"],
            "reference_run_s": round(ref_seconds, 3),
            "total_s": round(time.monotonic() - began, 1),
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
