#!/usr/bin/env bash
# A follower's memory across a catch-up: node A (dev coordinator, a milestone a second) takes
# `ledger-load` submits at RATE blocks/s; follower B, peered with A, runs 50 s in step, is
# stopped with SIGTERM for GAP seconds and restarted; B's RssAnon is printed 10-120 s after the
# restart, with both nodes' confirmed milestone index at the end and the seconds from B's
# restart to its first confirmation and to the last milestone of its catch-up (the first
# confirmation that came in A's own cadence again).
#   scripts/catchup-memory.sh BIN [GAP=150] [RATE=1000]
# Loopback ports 14265/14266, 15600/15601 and 9311/9312 must be free; `ledger-load` is taken
# from target/release beside this repository (`cargo build --release -p ledger-load`).
set -euo pipefail
BIN=$1; GAP=${2:-150}; RATE=${3:-1000}
LOAD="$(cd "$(dirname "$0")/.." && pwd)/target/release/ledger-load"
D=$(mktemp -d)
A=http://127.0.0.1:14265; B=http://127.0.0.1:14266
AP=; BP=
trap 'kill $AP $BP 2>/dev/null; wait 2>/dev/null; rm -rf "$D"' EXIT
up() { for _ in $(seq 100); do curl -sf "$1/api/core/v2/info" > /dev/null && return 0; sleep 0.2; done; echo "$1 did not start" >&2; exit 1; }
cmi() { curl -s "$1/api/core/v2/info" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"]["confirmedMilestone"]["index"])'; }
"$BIN" --data-dir "$D/a" --metrics-bind 127.0.0.1:9311 > "$D/a.log" 2>&1 & AP=$!
up $A
KEY=$(grep -o 'public_key=0x[0-9a-f]*' "$D/a.log" | head -1 | cut -d= -f2)
PEER=$(grep 127.0.0.1 "$D/a/p2pstore/listen.addrs" | head -1)
start_b() {
    "$BIN" --data-dir "$D/b" --api-bind 127.0.0.1:14266 --metrics-bind 127.0.0.1:9312 \
        --p2p-bind /ip4/127.0.0.1/tcp/15601 --no-coordinator --coordinator-public-keys "$KEY" \
        --peer "$PEER" --peer-alias A >> "$D/b.log" 2>&1 & BP=$!
}
rss() { echo "B $1: RssAnon $(awk '/^RssAnon/ {print int($2/1024)}' "/proc/$BP/status") MiB"; }
start_b; up $B
"$LOAD" --scenario submit-binary --url $A --rate "$RATE" --connections 8 --duration $((GAP + 200)) > "$D/load.txt" 2>&1 &
sleep 50; rss "after 50 s in step"
kill -TERM $BP; wait $BP || true
sleep "$GAP"
restarted=$(date +%s.%N)
start_b; up $B
prev=0
for t in 10 20 40 60 90 120; do sleep $((t - prev)); prev=$t; rss "$t s after the restart"; done
echo "confirmed: A $(cmi $A), B $(cmi $B)"
# Confirmations B logged after its restart: the first, and the last one less than 0.9 s after
# the one before it (the end of the catch-up burst).
python3 - "$D/b.log" "$restarted" <<'PY'
import datetime, re, sys
start = float(sys.argv[2])
times = []
for line in open(sys.argv[1]):
    if "milestone confirmed" in line:
        t = datetime.datetime.fromisoformat(line.split()[0].replace("Z", "+00:00")).timestamp()
        if t > start:
            times.append(t)
if times:
    burst = [b for a, b in zip(times, times[1:]) if b - a < 0.9]
    end = burst[-1] if burst else times[0]
    print(f"first confirmation {times[0] - start:.1f} s after the restart, catch-up done at {end - start:.1f} s")
PY
