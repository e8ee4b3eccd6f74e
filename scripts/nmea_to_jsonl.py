#!/usr/bin/env python3
"""Convert an NMEA 0183 log to geomon JSON lines: {"time","lat","lon","accuracy_m"} per fix.

Usage: scripts/nmea_to_jsonl.py INPUT.nmea > OUTPUT.jsonl

Reads $--RMC sentences with status A and a valid checksum (NUL bytes, CR/CRLF line ends and
proprietary sentences are skipped). accuracy_m is 5 m x the HDOP of the latest $--GSA
(10 m when none was seen). Standard library only, output is deterministic.
"""
import sys


def checksum_ok(sentence: str) -> bool:
    if "*" not in sentence:
        return False
    body, _, given = sentence[1:].partition("*")
    value = 0
    for ch in body:
        value ^= ord(ch)
    return given[:2].upper() == "%02X" % value


def degrees(value: str, hemisphere: str) -> float:
    dot = value.index(".")
    whole = float(value[: dot - 2]) + float(value[dot - 2 :]) / 60
    return -whole if hemisphere in ("S", "W") else whole


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 64
    hdop = None
    last_time = None
    with open(sys.argv[1], "rb") as f:
        text = f.read().replace(b"\0", b"").decode("ascii", "replace")
    for line in text.replace("\r", "\n").split("\n"):
        line = line.strip()
        if not line.startswith("$") or not checksum_ok(line):
            continue
        fields = line.split("*")[0].split(",")
        kind = fields[0][3:]
        try:
            if kind == "GSA" and len(fields) > 16 and fields[16]:
                hdop = float(fields[16])
            elif kind == "RMC" and len(fields) > 9 and fields[2] == "A":
                t, d = fields[1], fields[9]
                year = 2000 + int(d[4:6]) if int(d[4:6]) < 80 else 1900 + int(d[4:6])
                stamp = "%04d-%s-%sT%s:%s:%sZ" % (year, d[2:4], d[0:2], t[0:2], t[2:4], t[4:6])
                if stamp == last_time:
                    continue
                last_time = stamp
                lat, lon = degrees(fields[3], fields[4]), degrees(fields[5], fields[6])
                accuracy = round(5 * hdop, 1) if hdop else 10
                print('{"time":"%s","lat":%.7f,"lon":%.7f,"accuracy_m":%g}' % (stamp, lat, lon, accuracy))
        except (ValueError, IndexError):
            continue
    return 0


if __name__ == "__main__":
    sys.exit(main())
