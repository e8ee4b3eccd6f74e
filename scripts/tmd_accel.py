#!/usr/bin/env python3
"""The US-TransportationMode recordings (University of Bologna; MIT License) for
`geomon bench activity`: one labelled accelerometer CSV per transportation mode, and what
Google's Activity Recognition API, logged by the same app at the same time, answered in each.

    git clone https://github.com/vlomonaco/US-TransportationMode /tmp/us-tm
    git -C /tmp/us-tm checkout 117e69a088bf6a4cbe863e163bc38e60b89d4711
    scripts/tmd_accel.py /tmp/us-tm/TransportationData/_RawDataOriginal --out /tmp/tmd
    for m in still walking car bus train; do geomon bench activity /tmp/tmd/$m.csv; done

Each raw file `sensorfile_USER_MODE_START.csv` holds rows `ms,sensor,values…`; its
`android.sensor.accelerometer` rows (m/s², gravity included) become one segment of the mode's
CSV (`t_s` from the file's first accelerometer sample, values to 0.1 mm/s², label still / foot /
vehicle). docs/sources.md, "What the accelerometer senses", and Tests/Fixtures/accel/tmd/SOURCE.md.
"""
import argparse
import collections
import glob
import os
import sys

LABELS = {"Still": "still", "Walking": "foot", "Car": "vehicle", "Bus": "vehicle", "Train": "vehicle"}
# Activity Recognition's answers as geomon's classes (bicycle, tilting, unknown: none of them).
AR = {"still": "still", "foot": "foot", "walking": "foot", "running": "foot", "vehicle": "vehicle"}


def parse_name(path):
    stem = os.path.basename(path)[len("sensorfile_"):-len(".csv")]
    parts = stem.split("_")
    return "_".join(parts[:-2]), parts[-2], parts[-1]


def read(path):
    """The accelerometer samples (ms, x, y, z) in time order, and the AR answers."""
    samples, answers = [], []
    with open(path, errors="replace") as f:
        for line in f:
            p = line.strip().split(",")
            try:
                if len(p) >= 5 and p[1] == "android.sensor.accelerometer":
                    samples.append((float(p[0]), float(p[2]), float(p[3]), float(p[4])))
                elif len(p) >= 3 and p[1] == "activityrecognition":
                    answers.append(p[2])
            except ValueError:
                continue
    samples.sort()
    return samples, answers


def write(out, recordings):
    """The bench's CSV of `recordings`: (path, samples) pairs as `read` gives them."""
    out.write("t_s,ax,ay,az,label,segment\n")
    for path, samples in recordings:
        user, mode, start = parse_name(path)
        if len(samples) < 2:
            continue
        t0 = samples[0][0]
        for t, x, y, z in samples:
            out.write(f"{(t - t0) / 1000:.3f},{x:.4f},{y:.4f},{z:.4f},{LABELS[mode]},{user}-{mode.lower()}-{start}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("raw", help="TransportationData/_RawDataOriginal of the repository at 117e69a")
    ap.add_argument("--out", help="write MODE.csv for every mode here (else one CSV to stdout)")
    ap.add_argument("--user", action="append", help="only these users (repeatable)")
    ap.add_argument("--mode", action="append", choices=sorted(LABELS), help="only these modes (repeatable)")
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(args.raw, "sensorfile_*.csv")))
    files = [f for f in files if (not args.user or parse_name(f)[0] in args.user)
             and (not args.mode or parse_name(f)[1] in args.mode)]
    if not files:
        sys.exit(f"tmd_accel.py: no sensorfile_*.csv to use in {args.raw}")
    if not args.out:
        write(sys.stdout, ((f, read(f)[0]) for f in files))
        return
    os.makedirs(args.out, exist_ok=True)
    by_mode = collections.defaultdict(list)
    for f in files:
        by_mode[parse_name(f)[1]].append(f)
    print("| true mode | recordings | users | seconds | Activity Recognition's answers: still / foot / vehicle / other |")
    print("|---|---:|---:|---:|---:|")
    for mode in ("Still", "Walking", "Car", "Bus", "Train"):
        if mode not in by_mode:
            continue
        recordings, said = [], collections.Counter()
        seconds, users = 0.0, set()
        for f in by_mode[mode]:
            samples, answers = read(f)
            recordings.append((f, samples))
            if len(samples) >= 2:
                seconds += (samples[-1][0] - samples[0][0]) / 1000
                users.add(parse_name(f)[0])
            for a in answers:
                said[AR.get(a, "other")] += 1
        with open(os.path.join(args.out, mode.lower() + ".csv"), "w") as out:
            write(out, recordings)
        used = sum(1 for _, samples in recordings if len(samples) >= 2)
        print(f"| {mode.lower()} | {used} | {len(users)} | {seconds:,.0f} | "
              f"{said['still']} / {said['foot']} / {said['vehicle']} / {said['other']} |")


if __name__ == "__main__":
    main()
