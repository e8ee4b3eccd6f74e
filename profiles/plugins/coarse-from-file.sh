#!/bin/sh
# Example coarse location plugin for geomon (sources.coarse.exec).
#
# A coarse plugin is any program that prints one JSON object per line on stdout:
#   {"time": "2026-11-29T16:00:00Z", "lat": 46.2, "lon": 7.36, "accuracy_m": 800}
# geomon restarts it every sources.coarse.interval when it exits. Real plugins ask a
# cellular modem, a Wi-Fi positioning service or an IP geolocation service. This one
# replays such lines from the file named by its first argument (default:
# $GEOMON_COARSE_FILE), one line per interval, so the profile can be tried anywhere.
set -u
file="${1:-${GEOMON_COARSE_FILE:-}}"
if [ -z "$file" ] || [ ! -r "$file" ]; then
    echo "coarse-from-file: no readable input file (argument or GEOMON_COARSE_FILE)" >&2
    exit 1
fi
delay="${GEOMON_COARSE_DELAY:-0}"
while IFS= read -r line; do
    printf '%s\n' "$line"
    [ "$delay" = 0 ] || sleep "$delay"
done <"$file"
