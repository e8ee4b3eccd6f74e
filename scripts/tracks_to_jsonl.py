#!/usr/bin/env python3
"""Convert the real tracks (NMEA, GPX) to JSON lines for the power evaluation.

One object per line, times strictly increasing:
  {"time": RFC3339, "lat": deg, "lon": deg, "accuracy_m": m, "speed_mps": m/s, "course_deg": deg|null}

Rules (documented in docs/power.md):
- NMEA: RMC sentences with status A give time, position, speed (knots -> m/s) and course;
  accuracy_m = 5 m x the HDOP of the latest GSA/GGA (5 m when none). NUL bytes are dropped.
- GPX: every trkpt with a <time>, all trk/trkseg concatenated; points without time are dropped.
  accuracy_m = 5 m x hdop when given, else 10 m. speed_mps and course_deg are the point's own
  where it has them (a TrackPointExtension's speed and course: what the device reported),
  else those of the segment from the previous point (what a receiver deriving them from
  positions would know; nothing from the future); the first point has speed 0 and no course.
- A point whose time is not after the previous kept point is dropped (concatenated captures).
Nothing else is decimated or smoothed.

usage: tracks_to_jsonl.py INPUT OUTPUT
"""
import json, math, sys, re
import xml.etree.ElementTree as ET
from datetime import datetime, timezone

def haversine(a, b):
    r = 6371008.8
    la1, lo1, la2, lo2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 2 * r * math.asin(min(1.0, math.sqrt(h)))

def bearing(a, b):
    la1, lo1, la2, lo2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    y = math.sin(lo2 - lo1) * math.cos(la2)
    x = math.cos(la1) * math.sin(la2) - math.sin(la1) * math.cos(la2) * math.cos(lo2 - lo1)
    return (math.degrees(math.atan2(y, x)) + 360) % 360

def fmt(ms):
    dt = datetime.fromtimestamp(ms // 1000, tz=timezone.utc)
    s = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if ms % 1000:
        s += ".%03d" % (ms % 1000)
    return s + "Z"

def nmea(path):
    raw = open(path, "rb").read().replace(b"\x00", b"").decode("ascii", "replace")
    hdop = 1.0
    out = []
    for line in re.split(r"\r\n|\r|\n", raw):
        if not line.startswith("$") or "*" not in line:
            continue
        body, _, cks = line[1:].partition("*")
        c = 0
        for ch in body:
            c ^= ord(ch)
        if cks[:2].upper() != "%02X" % c:
            continue
        f = body.split(",")
        kind = f[0][2:]
        try:
            if kind == "GSA" and len(f) > 16 and f[16]:
                hdop = float(f[16])
            elif kind == "GGA" and len(f) > 8 and f[8]:
                hdop = float(f[8])
            elif kind == "RMC" and len(f) > 9 and f[2] == "A":
                t, d = f[1], f[9]
                lat = int(f[3][:2]) + float(f[3][2:]) / 60
                if f[4] == "S": lat = -lat
                lon = int(f[5][:3]) + float(f[5][3:]) / 60
                if f[6] == "W": lon = -lon
                sec = float(t[4:])
                dt = datetime(2000 + int(d[4:6]), int(d[2:4]), int(d[0:2]), int(t[0:2]), int(t[2:4]), int(sec), tzinfo=timezone.utc)
                ms = int(dt.timestamp()) * 1000 + int(round((sec - int(sec)) * 1000))
                speed = float(f[7]) * 0.514444 if f[7] else None
                course = float(f[8]) if f[8] else None
                out.append(dict(ms=ms, lat=lat, lon=lon, acc=round(5 * hdop, 1), speed=speed, course=course))
        except (ValueError, IndexError):
            continue
    return out

def gpx(path):
    root = ET.parse(path).getroot()
    out = []
    for el in root.iter():
        if not el.tag.endswith("trkpt"):
            continue
        t = h = speed = course = None
        for ch in el:
            if ch.tag.endswith("time"): t = ch.text
            if ch.tag.endswith("hdop"): h = float(ch.text)
        # The speed and course the device reported (Garmin's TrackPointExtension: a receiver's
        # own velocity, ADS-B's ground speed and track).
        for ch in el.iter():
            if ch.tag.endswith("}speed") and ch.text: speed = float(ch.text)
            if ch.tag.endswith("}course") and ch.text: course = float(ch.text)
        if not t:
            continue
        dt = datetime.fromisoformat(t.strip().replace("Z", "+00:00"))
        ms = int(round(dt.timestamp() * 1000))
        out.append(dict(ms=ms, lat=float(el.get("lat")), lon=float(el.get("lon")), acc=5 * h if h else 10.0,
                        speed=speed, course=course if speed is not None else None))
    return out

def main():
    src, dst = sys.argv[1], sys.argv[2]
    pts = nmea(src) if src.endswith(".nmea") else gpx(src)
    kept = []
    for p in pts:
        if kept and p["ms"] <= kept[-1]["ms"]:
            continue
        kept.append(p)
    for i, p in enumerate(kept):
        if p["speed"] is None:
            p["speed"] = 0.0
            if i > 0:
                q = kept[i - 1]
                dt = (p["ms"] - q["ms"]) / 1000
                p["speed"] = haversine((q["lat"], q["lon"]), (p["lat"], p["lon"])) / dt
                p["course"] = bearing((q["lat"], q["lon"]), (p["lat"], p["lon"]))
    with open(dst, "w") as f:
        for p in kept:
            f.write(json.dumps({"time": fmt(p["ms"]), "lat": round(p["lat"], 7), "lon": round(p["lon"], 7),
                                "accuracy_m": p["acc"], "speed_mps": round(p["speed"], 2),
                                "course_deg": None if p["course"] is None else round(p["course"], 1)}) + "\n")
    print(f"{src}: {len(kept)} fixes -> {dst}")

if __name__ == "__main__":
    main()
