#!/bin/sh
# Records the environment (NUL-separated) and stdin of one run into directory $1.
set -eu
cat > "$1/stdin"
env -0 > "$1/env"
