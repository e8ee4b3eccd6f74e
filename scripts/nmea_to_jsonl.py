#!/usr/bin/env python3
"""Convert an NMEA 0183 log into geomon JSON lines ({"time","lat","lon","accuracy_m"}).

Used to make the replay fixtures in Tests/Fixtures/replay/ (see SOURCE.md there). One fix per
valid RMC sentence (status A, checksum verified); the date comes from RMC; the accuracy is
HDOP x 5 m (HDOP from the latest GGA or GSA of the same epoch, else the latest seen; 10 m when
none is known yet). Sentences with a bad checksum, NUL bytes or missing fields are skipped.
Fixes not newer than the previous one are dropped (the log concatenates two captures).

usage: nmea_to_jsonl.py INPUT.nmea OUTPUT.jsonl
"""
import calendar
import json
import sys

UERE_M = 5.0


def checksum_ok(line):
    if not line.startswith("$") or "*" not in line:
        return False
    body, _, given = line[1:].partition("*")
    value = 0
    for ch in body:
        value ^= ord(ch)
    try:
        return value == int(given[:2], 16)
    except ValueError:
        return False


def degrees(value, hemi):
    if not value:
        return None
    dot = value.index(".")
    deg = float(value[: dot - 2])
    minutes = float(value[dot - 2 :])
    result = deg + minutes / 60.0
    return -result if hemi in ("S", "W") else result


def main(src, dst):
    hdop = None
    last_ms = None
    out = []
    with open(src, "rb") as f:
        raw = f.read().replace(b"\x00", b"\n")
    for line in raw.decode("ascii", "replace").splitlines():
        line = line.strip()
        if not checksum_ok(line):
            continue
        fields = line[1:].split("*")[0].split(",")
        kind = fields[0][2:]
        if kind == "GGA" and len(fields) > 8 and fields[8]:
            hdop = float(fields[8])
        elif kind == "GSA" and len(fields) > 16 and fields[16]:
            hdop = float(fields[16])
        elif kind == "RMC" and len(fields) > 9 and fields[2] == "A" and fields[1] and fields[9]:
            t, d = fields[1], fields[9]
            seconds = int(t[0:2]) * 3600 + int(t[2:4]) * 60 + float(t[4:])
            day, month, year = int(d[0:2]), int(d[2:4]), 2000 + int(d[4:6])
            ms = calendar.timegm((year, month, day, 0, 0, 0)) * 1000 + round(seconds * 1000)
            lat, lon = degrees(fields[3], fields[4]), degrees(fields[5], fields[6])
            if lat is None or lon is None or (last_ms is not None and ms <= last_ms):
                continue
            last_ms = ms
            secs, milli = divmod(ms, 1000)
            stamp = __import__("time").strftime("%Y-%m-%dT%H:%M:%S", __import__("time").gmtime(secs))
            stamp += (".%03dZ" % milli) if milli else "Z"
            acc = round((hdop if hdop is not None else 2.0) * UERE_M, 2)
            out.append(json.dumps({"time": stamp, "lat": round(lat, 7), "lon": round(lon, 7), "accuracy_m": acc}, separators=(",", ":")))
    with open(dst, "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"{src}: {len(out)} fixes -> {dst}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
