#!/usr/bin/env bash
# A user's run of everything at once, on loopback, for MINUTES (default 30):
#   A  the coordinator (dev network, pruning keeps 200 milestones, snapshot files every 100),
#      under `ledger-load --scenario submit-binary --rate RATE` (default 1500 blocks/s);
#   B  a follower peered with A (pruning 200), stopped for 60 s at a quarter of the run and
#      SIGKILLed for 30 s at 60 %;
#   C  a new node started from A's snapshot files at 80 %, peered with A;
#   `mqtt-swarm` with 200 subscribers (50 on `blocks`) on A, `mover.py` (paho) moving between
#   audiences on A, `poster.py` (the official client) posting to A and reading back on B.
# Every 30 s: RssAnon, confirmed and pruning index, health and disk use of each node. At the end:
# the tools' reports, milestones and rich lists compared on A, B and C, WARN/ERROR lines, the
# event API's drops, exit codes of a SIGTERM stop.
#   cargo build --release -p ledger-server -p ledger-load && scripts/user-run/run.sh [MINUTES] [RATE]
# Needs the venv of scripts/test-all (.venv: iota-sdk, paho-mqtt). Output in $OUT (default
# target/user-run); nodes' data in $OUT/data.
set -uo pipefail
cd "$(dirname "$0")/../.."
MINUTES=${1:-30}; RATE=${2:-1500}
[ "$MINUTES" -ge 5 ] || { echo "run.sh: at least 5 minutes (the stops, the kill and C's start need room)" >&2; exit 2; }
BIN=${BIN:-target/release}; N=$BIN/ledger-node
OUT=${OUT:-target/user-run}; D=$OUT/data
PY=.venv/bin/python; HERE=scripts/user-run
for b in "$N" "$BIN/ledger-load" "$BIN/mqtt-swarm" "$PY"; do
    [ -x "$b" ] || { echo "missing: $b" >&2; exit 2; }
done
rm -rf "$OUT"; mkdir -p "$D"
SECS=$((MINUTES * 60)); SAMPLES=$((SECS / 30))
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null' EXIT

$N run --data-dir "$D/a" --p2p-bind /ip4/127.0.0.1/tcp/15600 --pruning-milestones-to-keep 200 \
    --snapshot-interval 100 --snapshot-depth 20 2> "$OUT/a.log" > /dev/null &
APID=$!; PIDS+=("$APID")
for _ in $(seq 60); do [ -s "$D/a/p2pstore/listen.addrs" ] && break; sleep 1; done
A_ADDR=$(grep 127.0.0.1 "$D/a/p2pstore/listen.addrs" | head -1)
KEY=$(grep -o 'public_key=0x[0-9a-f]*' "$OUT/a.log" | head -1 | cut -d= -f2)
[ -n "$A_ADDR" ] && [ -n "$KEY" ] || { echo "A did not start" >&2; cat "$OUT/a.log" >&2; exit 1; }
echo "A $A_ADDR, coordinator key $KEY"
follower() { # follower NAME PORT_OFFSET [FLAGS...]: a node peered with A
    local name=$1 k=$2; shift 2
    $N run --data-dir "$D/$name" --api-bind 127.0.0.1:$((14265 + k)) --metrics-bind 127.0.0.1:$((9311 + k)) \
        --p2p-bind /ip4/127.0.0.1/tcp/$((15600 + k)) --pruning-milestones-to-keep 200 --no-coordinator \
        --coordinator-public-keys "$KEY" --peer "$A_ADDR" --peer-alias A "$@" 2>> "$OUT/$name.log" > /dev/null &
    LAST=$!; PIDS+=("$LAST")
}
follower b 1; BPID=$LAST
sleep 3
segments() { # segments CMD...: CMD --duration S, back to back in runs of at most 560 s, for the run
    local left=$SECS
    while [ "$left" -gt 0 ]; do
        local s=$((left < 560 ? left : 560)); "$@" --duration "$s"; left=$((left - s))
    done
}
segments "$BIN/ledger-load" --scenario submit-binary --rate "$RATE" >> "$OUT/load.txt" 2>&1 &
PIDS+=($!)
segments "$BIN/mqtt-swarm" --subscribers 200 --blocks-subscribers 50 --probe-rate 10 >> "$OUT/swarm.txt" 2>&1 &
SW=$!; PIDS+=("$SW")
$PY $HERE/poster.py $((SECS - 40)) > "$OUT/poster.txt" 2>&1 & PO=$!; PIDS+=("$PO")
$PY $HERE/mover.py $((SECS - 40)) 14265 > "$OUT/mover.txt" 2>&1 & MV=$!; PIDS+=("$MV")

status() { curl -s -m 5 "127.0.0.1:$1/api/core/v2/info" | python3 -c '
import json, sys
s = json.load(sys.stdin)["status"]
print(s["confirmedMilestone"]["index"], s["pruningIndex"], "healthy" if s["isHealthy"] else "unhealthy")' 2>/dev/null; }
rss() { awk '/RssAnon/ {print int($2 / 1024)}' "/proc/$1/status" 2>/dev/null; }
CPID=
for i in $(seq 1 "$SAMPLES"); do
    line="$(date -u +%H:%M:%S)"
    for n in a b c; do
        case $n in a) p=$APID; k=0 ;; b) p=$BPID; k=1 ;; c) p=$CPID; k=2 ;; esac
        line+=" | $n $( [ -n "$p" ] && rss "$p")MiB [$(status $((14265 + k)))] $(du -sm "$D/$n" 2>/dev/null | cut -f1)MB"
    done
    echo "$line"
    case $i in
        $((SAMPLES / 4))) kill -TERM "$BPID"; wait "$BPID"; echo "B stopped (exit $?)" ;;
        $((SAMPLES / 4 + 2))) follower b 1; BPID=$LAST; echo "B started again" ;;
        $((SAMPLES * 6 / 10))) kill -9 "$BPID"; wait "$BPID" 2>/dev/null; echo "B killed" ;;
        $((SAMPLES * 6 / 10 + 1))) follower b 1; BPID=$LAST; echo "B started after the kill" ;;
        $((SAMPLES * 8 / 10)))
            delta=(); [ -f "$D/a/snapshots/delta_snapshot.bin" ] && delta=(--snapshot-delta "$D/a/snapshots/delta_snapshot.bin")
            follower c 2 --snapshot-full "$D/a/snapshots/full_snapshot.bin" "${delta[@]}"; CPID=$LAST
            echo "C started from A's snapshot files ($(ls "$D/a/snapshots" | tr '\n' ' '))" ;;
    esac
    sleep 30
done
wait "$SW" "$PO" "$MV"
echo "--- swarm"; grep -E "^(subscribers|probes|deliveries|latency|messages|dropped)" "$OUT/swarm.txt"
echo "--- poster"; cat "$OUT/poster.txt"
echo "--- mover"; cat "$OUT/mover.txt"
echo "--- load"; grep -E "^(requests|rate|status)" "$OUT/load.txt"
python3 - <<'PY'
import json, urllib.request
def get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return json.loads(r.read())
    except Exception:
        return None
ports = (14265, 14266, 14267)
st = {p: get(p, "/api/core/v2/info")["status"] for p in ports}
lo = max(s["pruningIndex"] for s in st.values()) + 1
hi = min(s["confirmedMilestone"]["index"] for s in st.values())
same = 0
for i in range(lo, hi + 1):
    ms = [get(p, f"/api/core/v2/milestones/by-index/{i}") for p in ports]
    same += ms[0] is not None and ms[0] == ms[1] == ms[2]
print("confirmed, pruning index:", {p: (s["confirmedMilestone"]["index"], s["pruningIndex"]) for p, s in st.items()})
print(f"milestones {lo}..{hi} identical on A, B and C: {same} of {hi - lo + 1}")
rich = [get(p, "/api/explorer/v2/ledger/richest-addresses?top=5") for p in ports]
print("rich lists equal:", rich[0] is not None and rich[0] == rich[1] == rich[2])
PY
echo "--- WARN/ERROR lines: a $(grep -c 'WARN\|ERROR' "$OUT/a.log") b $(grep -c 'WARN\|ERROR' "$OUT/b.log") c $(grep -c 'WARN\|ERROR' "$OUT/c.log")"
grep -h "WARN\|ERROR" "$OUT"/*.log | cut -c1-200 | head -5
curl -s 127.0.0.1:9311/metrics | grep "^iota_mqtt_dropped"
kill -TERM "$CPID" "$BPID"; wait "$CPID"; echo "C exit $?"; wait "$BPID"; echo "B exit $?"
kill -TERM "$APID"; wait "$APID"; echo "A exit $?"
