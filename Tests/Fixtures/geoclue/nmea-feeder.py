#!/usr/bin/python3
"""Serves a track to GeoClue's NMEA source: a UNIX stream socket that GeoClue connects to.

Usage: nmea-feeder.py SOCKET TRACK.jsonl [INTERVAL]
Each line of TRACK is {"lat": .., "lon": ..}; one GGA+RMC pair per INTERVAL seconds (0.25),
stamped one second apart from the moment GeoClue connects (GeoClue takes hhmmss with today's
date and drops fixes older than its current one). After the track the connection stays open,
silent: GeoClue drops its NMEA source for good when the peer closes it.
"""
import datetime, json, os, socket, sys, threading, time

path, track = sys.argv[1], sys.argv[2]
interval = float(sys.argv[3]) if len(sys.argv) > 3 else 0.25
points = [json.loads(line) for line in open(track) if line.strip()]

def cksum(body):
    c = 0
    for ch in body.encode():
        c ^= ch
    return "%02X" % c

def dm(value, is_lat):
    hemi = ("N" if value >= 0 else "S") if is_lat else ("E" if value >= 0 else "W")
    v = abs(value)
    deg = int(v)
    return ("%02d%07.4f" if is_lat else "%03d%07.4f") % (deg, (v - deg) * 60), hemi

def sentences(lat, lon, when):
    hms = when.strftime("%H%M%S") + ".00"
    la, lah = dm(lat, True)
    lo, loh = dm(lon, False)
    gga = "GPGGA,%s,%s,%s,%s,%s,1,08,0.9,34.5,M,46.9,M,," % (hms, la, lah, lo, loh)
    rmc = "GPRMC,%s,A,%s,%s,%s,%s,1.5,0.0,%s,,,A" % (hms, la, lah, lo, loh, when.strftime("%d%m%y"))
    return "".join("$%s*%s\r\n" % (s, cksum(s)) for s in (gga, rmc))

def serve(conn):
    start = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    try:
        for i, p in enumerate(points):
            conn.sendall(sentences(p["lat"], p["lon"], start + datetime.timedelta(seconds=i)).encode())
            time.sleep(interval)
        print("nmea-feeder: track done", flush=True)
        while True:
            time.sleep(3600)
    except OSError as e:
        print("nmea-feeder: GeoClue gone: %s" % e, flush=True)

try:
    os.unlink(path)
except FileNotFoundError:
    pass
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(4)
print("nmea-feeder: listening on %s" % path, flush=True)
while True:
    c, _ = srv.accept()
    print("nmea-feeder: GeoClue connected", flush=True)
    threading.Thread(target=serve, args=(c,), daemon=True).start()
