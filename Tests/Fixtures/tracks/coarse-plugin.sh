#!/bin/sh
# A coarse position plugin as geomon runs it (plugin: command): JSON lines on stdout.
# Written for geomon's tests (not copied data). Prints two fixes around one malformed line,
# then exits with the status given as $1 (default 0).
echo '{"time":"2024-05-01T12:00:00Z","lat":46.9480,"lon":7.4474,"accuracy_m":1500}'
echo 'cell tower says hi'
echo '{"time":"2024-05-01T12:05:00Z","lat":46.9500,"lon":7.4500,"accuracy_m":800}'
echo 'a diagnostic on stderr' >&2
exit "${1:-0}"
