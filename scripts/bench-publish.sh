#!/usr/bin/env bash
# The MQTT publisher against a private mosquitto on a free loopback port (release build):
# `geomon bench publish` (backlog and one-per-transaction messages per second, commit-to-PUBACK
# latency, store cost per message), RUNS times, then the peer a hook would use today: one
# `mosquitto_pub -q 1` process per message, timed over 300 messages. Prints the JSON lines,
# the peer's rate and the ratio of the medians. docs/benchmarks.md reports these numbers.
#   scripts/bench-publish.sh [RUNS]      (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
mosquitto_passwd -c -b "$work/passwd" bench b3nch
printf 'b3nch\n' > "$work/secret"; chmod 600 "$work/secret"
{
  [ "$(id -u)" = 0 ] && echo "user root"
  printf 'allow_anonymous false\npassword_file %s\npersistence false\nlistener %s 127.0.0.1\n' "$work/passwd" "$port"
} > "$work/mosquitto.conf"
mosquitto -c "$work/mosquitto.conf" > "$work/broker.log" 2>&1 &
pid=$!
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.1; done
swift build -c release --product geomon 2>&1 | grep -E "error|warning:" || true
bin=.build/release/geomon
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); mosquitto $(mosquitto -h 2>/dev/null | head -1 | awk '{print $3}')"
rates=()
for run in $(seq "$runs"); do
  line=$("$bin" bench publish --port "$port" --username bench --password-file "$work/secret")
  echo "$line"
  rates+=("$(echo "$line" | python3 -c 'import json,sys;print(json.load(sys.stdin)["each_messages_per_s"])')")
done
peer=()
for run in $(seq "$runs"); do
  start=$(date +%s.%N)
  for i in $(seq 300); do
    mosquitto_pub -h 127.0.0.1 -p "$port" -u bench -P b3nch -q 1 -t geomon-bench/peer -m "{\"_type\":\"transition\",\"tst\":$i}"
  done
  end=$(date +%s.%N)
  peer+=("$(python3 -c "print(round(300/($end-$start)))")")
done
echo "peer (one mosquitto_pub -q 1 per message): ${peer[*]} messages/s"
python3 - "${rates[*]}" "${peer[*]}" <<'PY'
import statistics, sys
ours = [float(x) for x in sys.argv[1].split()]
peer = [float(x) for x in sys.argv[2].split()]
print(f"median: geomon {statistics.median(ours):.0f} messages/s (one per transaction) vs mosquitto_pub per message {statistics.median(peer):.0f} messages/s: ratio {statistics.median(ours)/statistics.median(peer):.0f}x")
PY
