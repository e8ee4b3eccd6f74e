#!/usr/bin/env python3
"""Convert a GPX track to geomon JSON lines: {"time","lat","lon","accuracy_m"} per timed point.

Usage: scripts/gpx_to_jsonl.py INPUT.gpx [ACCURACY_M] > OUTPUT.jsonl

GPX has no accuracy field; every point gets ACCURACY_M (default 5). Points without a <time>
are skipped (their count goes to stderr). Standard library only, output is deterministic.
"""
import sys
import xml.etree.ElementTree as ET


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 64
    accuracy = float(sys.argv[2]) if len(sys.argv) == 3 else 5.0
    root = ET.parse(sys.argv[1]).getroot()
    skipped = 0
    for el in root.iter():
        if not el.tag.endswith("}trkpt") and el.tag != "trkpt":
            continue
        time = None
        for child in el:
            if child.tag.endswith("time"):
                time = (child.text or "").strip()
        if not time:
            skipped += 1
            continue
        lat, lon = float(el.get("lat")), float(el.get("lon"))
        print('{"time":"%s","lat":%.7f,"lon":%.7f,"accuracy_m":%g}' % (time, lat, lon, accuracy))
    if skipped:
        print(f"gpx_to_jsonl: skipped {skipped} untimed points", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
