#!/usr/bin/env bash
# The REST API against its ceiling: throughput of an old and a new ledger-node binary as a
# share of `bare-axum` (load/src/bin/bare-axum.rs: the same routes with axum, tokio and hyper
# only, fixed answers), all driven by `ledger-load` on this machine, alternating.
#   scripts/api-ceiling.sh OLD_BIN NEW_BIN
# Environment (defaults): ROUNDS=3 DURATION=10 CONNECTIONS=64
#   SCENARIOS="get-output submit-binary" BARE=target/release/bare-axum
#   LOAD=target/release/ledger-load (both beside this repository: `cargo build --release -p
#   ledger-load`).
# Each run starts its server afresh (a node on a new data dir, no peering, dev coordinator),
# waits 2 s, loads it for DURATION seconds and counts the 2xx answers per second and the
# server's CPU time (utime+stime) per answer. The order bare, old, new rotates from round to
# round. Prints every run, then per scenario the median of each binary and the ratios
# new/bare and old/bare of the throughput; and of the CPU per answer, median and least
# (bare/new: the share of the ceiling's efficiency, steadier than throughput while other
# jobs share the machine).
set -euo pipefail
OLD=$1; NEW=$2
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BARE=${BARE:-$ROOT/target/release/bare-axum}
LOAD=${LOAD:-$ROOT/target/release/ledger-load}
ROUNDS=${ROUNDS:-3}; DURATION=${DURATION:-10}; CONNECTIONS=${CONNECTIONS:-64}
SCENARIOS=${SCENARIOS:-get-output submit-binary}
for b in "$OLD" "$NEW" "$BARE" "$LOAD"; do [ -x "$b" ] || { echo "not executable: $b" >&2; exit 2; }; done
W=$(mktemp -d)
PID=
trap 'if [ -n "$PID" ]; then kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; fi; rm -rf "$W"' EXIT

# start KIND: starts bare/old/new on a free loopback port; sets PID and URL.
start() {
    local out="$W/$1.out"
    # Removed first: the child truncates it only after the fork, and the previous run's
    # address must not be read meanwhile.
    rm -rf "$W/data" "$out"
    case $1 in
        bare) "$BARE" --bind 127.0.0.1:0 > "$out" 2> "$W/$1.log" & ;;
        old|new)
            local bin=$OLD; [ "$1" = new ] && bin=$NEW
            "$bin" run --no-p2p --data-dir "$W/data" --api-bind 127.0.0.1:0 \
                --metrics-bind 127.0.0.1:0 > "$out" 2> "$W/$1.log" & ;;
    esac
    PID=$!
    URL=
    for _ in $(seq 200); do
        URL=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$out" 2>/dev/null | head -1)
        [ -n "$URL" ] && break
        sleep 0.05
    done
    [ -n "$URL" ] || { echo "$1 did not start:" >&2; cat "$W/$1.log" >&2; exit 1; }
    sleep 2
}

stop() { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=; }

echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg); ${CONNECTIONS} connections, ${DURATION} s"
echo "# old=$OLD new=$NEW bare=$BARE"
kinds=(bare old new)
for r in $(seq "$ROUNDS"); do
    for sc in $SCENARIOS; do
        for i in 0 1 2; do
            k=${kinds[$(( (i + r - 1) % 3 ))]}
            start "$k"
            t0=$(awk '{print $14+$15}' "/proc/$PID/stat")
            "$LOAD" --url "$URL" --scenario "$sc" --duration "$DURATION" \
                --connections "$CONNECTIONS" --json > "$W/run.json"
            t1=$(awk '{print $14+$15}' "/proc/$PID/stat")
            stop
            read -r rate us < <(python3 -c 'import json, os, sys
d = json.load(open(sys.argv[1]))
n = sum(v for c, v in d["status"].items() if c.startswith("2"))
cpu = (int(sys.argv[3]) - int(sys.argv[2])) / os.sysconf("SC_CLK_TCK")
print(round(n / d["seconds"]), round(cpu / max(n, 1) * 1e6, 2))' "$W/run.json" "$t0" "$t1")
            echo "round $r $sc $k: $rate req/s, server CPU $us us/req"
            echo "$sc $k $rate $us" >> "$W/rates"
        done
    done
done
echo "# load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$W/rates" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    sc, kind, rate, us = line.split()
    runs.setdefault(sc, {}).setdefault(kind, []).append((int(rate), float(us)))
for sc, by in runs.items():
    med = {k: statistics.median(r for r, _ in v) for k, v in by.items()}
    cpu = {k: statistics.median(u for _, u in v) for k, v in by.items()}
    print(f"{sc}: median req/s bare {med['bare']:.0f}, old {med['old']:.0f}, new {med['new']:.0f}; "
          f"new/bare {med['new'] / med['bare']:.2f}, old/bare {med['old'] / med['bare']:.2f}, "
          f"new/old {med['new'] / med['old']:.2f}")
    low = {k: min(u for _, u in v) for k, v in by.items()}
    for name, c in (("median", cpu), ("least", low)):
        print(f"{sc}: {name} server CPU us/req bare {c['bare']:.1f}, old {c['old']:.1f}, "
              f"new {c['new']:.1f}; bare/new {c['bare'] / c['new']:.2f}, "
              f"bare/old {c['bare'] / c['old']:.2f}, old/new {c['old'] / c['new']:.2f}")
PY
