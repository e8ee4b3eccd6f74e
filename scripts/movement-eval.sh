#!/bin/sh
# Movement events against the peer: geomon's arrivals and trips versus trackintel's sliding
# staypoints and triplegs on the shared tracks, summarised as a markdown table.
# Usage: scripts/movement-eval.sh [--geomon PATH] [--radius M] [--min-duration S] [--stop-after S]
#        [--tracks stops|all] [--track NAME]... [--mismatches] [--keep DIR]
#        (scripts/movement-eval.sh --help)
# trackintel comes from PyPI into .venv-movement/ (made on the first run).
set -e
cd "$(dirname "$0")/.."
if [ ! -x .venv-movement/bin/python ] || ! .venv-movement/bin/python -c 'import trackintel' 2>/dev/null; then
    python3 -m venv .venv-movement
    .venv-movement/bin/pip install --quiet trackintel
fi
exec .venv-movement/bin/python scripts/movement_eval.py "$@"
