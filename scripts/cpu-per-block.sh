#!/usr/bin/env bash
# REST submit throughput and the node's CPU time per accepted block, for old-beside-new
# comparisons at a load that saturates the 2 cores (ab-submit.sh's 32 connections measure the
# fsync cadence instead: the node idles at ~0.4 core there).
#   scripts/cpu-per-block.sh BIN [SCENARIO=submit-binary] [CONNECTIONS=128]
# Starts BIN on a fresh data dir (loopback, coordinator every second, p2p on loopback), runs
# `ledger-load` (from target/release beside this repository) for 10 s, reads the node's
# utime+stime from /proc before and after.
set -euo pipefail
BIN=$1; SC=${2:-submit-binary}; C=${3:-128}
LOAD="$(cd "$(dirname "$0")/.." && pwd)/target/release/ledger-load"
D=$(mktemp -d); PORT=$((20000 + RANDOM % 10000))
"$BIN" run --data-dir "$D/data" --api-bind "127.0.0.1:$PORT" --no-metrics --coordinator-interval 1 \
    --p2p-bind /ip4/127.0.0.1/tcp/0 > "$D/out" 2> "$D/log" &
NP=$!
trap 'kill $NP 2>/dev/null; wait $NP 2>/dev/null; rm -rf "$D"' EXIT
for _ in $(seq 100); do grep -q "listening on" "$D/out" 2>/dev/null && break; sleep 0.1; done
t0=$(awk '{print $14+$15}' "/proc/$NP/stat")
"$LOAD" --url "http://127.0.0.1:$PORT" --scenario "$SC" --duration 10 --connections "$C" --json > "$D/load.json"
t1=$(awk '{print $14+$15}' "/proc/$NP/stat")
python3 - "$D/load.json" "$t0" "$t1" "$BIN" "$SC" "$C" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
n = d["status"].get("201", 0)
cpu = (int(sys.argv[3]) - int(sys.argv[2])) / os.sysconf("SC_CLK_TCK")
print(f"{sys.argv[4]} {sys.argv[5]} c={sys.argv[6]}: {n / 10:.0f} blocks/s, "
      f"node CPU {cpu:.2f} s, {cpu / max(n, 1) * 1e6:.1f} us/block")
PY
