#!/usr/bin/env bash
# Single-node REST submit throughput of one ledger-node binary, for old-beside-new comparisons:
# starts BIN on a fresh data dir (loopback, coordinator every second), runs `ledger-load`
# (from target/release beside this repository) for 10 s with 32 connections, binary then
# node-filled JSON submits, and prints the blocks/s answered 201.
#   scripts/ab-submit.sh OLD_BIN                    # a binary without peering flags
#   scripts/ab-submit.sh NEW_BIN --p2p-bind /ip4/127.0.0.1/tcp/0
set -euo pipefail
BIN=$1; shift
LOAD="$(cd "$(dirname "$0")/.." && pwd)/target/release/ledger-load"
D=$(mktemp -d); PORT=$((20000 + RANDOM % 10000))
"$BIN" run --data-dir "$D/data" --api-bind "127.0.0.1:$PORT" --no-metrics --coordinator-interval 1 "$@" \
    > "$D/out" 2> "$D/log" &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$D"' EXIT
for _ in $(seq 100); do grep -q "listening on" "$D/out" 2>/dev/null && break; sleep 0.1; done
rate() {
    "$LOAD" --url "http://127.0.0.1:$PORT" --scenario "$1" --duration 10 --connections 32 --json |
        python3 -c 'import json,sys; print(round(json.load(sys.stdin)["status"].get("201", 0) / 10))'
}
echo "$BIN submit-binary=$(rate submit-binary)/s submit-json=$(rate submit-json)/s"
