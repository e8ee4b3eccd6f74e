#!/bin/sh
# Power policy evaluation on the real tracks (docs/power.md): geomon replay --compare-always-on
# --report per track and fence spacing, summarised as markdown tables.
# Usage: scripts/power-eval.sh [--geomon PATH] [--keep DIR] [--acceleration A] [--walk-acceleration A]
#        [--set KEY=VALUE]... [--spacing M]... [--interpolate-gaps S] [--tracking-interval S] [--receiver-ttff-hot S] [--coarse ACCURACY] [--mode continuous]
#        [--motion | --approach | --profiles]
#        (python3 scripts/power_eval.py --help)
set -e
cd "$(dirname "$0")/.."
exec python3 scripts/power_eval.py "$@"
