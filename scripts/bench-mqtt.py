#!/usr/bin/env python3
"""The event API under load (issue 26's benchmark): submit throughput, node CPU per block and
the delivery latency of probe blocks to `blocks` subscribers, in five phases of one run.

    python3 scripts/bench-mqtt.py --bin target/release/ledger-node \\
        [--rate 2000] [--duration 60] [--max-duration 30] [--subscribers 1000] \\
        [--blocks-subscribers 100] [--probe-rate 20] [--phases abcde] [--json FILE]

Phases, each on a fresh node (`run --no-p2p --coordinator-interval 1`, loopback only):
(a) no subscribers, (b) BLOCKS_SUBSCRIBERS on `blocks`, (c) SUBSCRIBERS (BLOCKS_SUBSCRIBERS on
`blocks`, each other one on its own `outputs/unlock/address/...`), all three with `ledger-load
--scenario submit-binary --rate RATE` for DURATION seconds; then (d) no subscribers and (e)
BLOCKS_SUBSCRIBERS on `blocks` with `ledger-load` at its maximum rate (no --rate) for
MAX_DURATION seconds, for the with/without throughput ratio.

The subscribers and the probes are `mqtt-swarm` (load/src/bin/mqtt-swarm.rs), which posts
PROBE_RATE JSON tagged-data blocks a second in every phase (also with no subscribers, so every
phase carries the same extra load) and times each probe's delivery from its 201. `ledger-load`
and `mqtt-swarm` are taken from beside --bin (`cargo build --release -p ledger-server -p
ledger-load`). Node CPU per block is the node's utime+stime (/proc/PID/stat) over the phase,
divided by the blocks created (load and probes), with the share of it spent in the kernel; the
CPU seconds of the node, of `mqtt-swarm` and of `ledger-load` over the phase are printed too.
Node, load tool and subscribers share the machine: run it on a quiet one and say what else
ran.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nodeproc import parser  # noqa: E402  pylint: disable=wrong-import-position


def cpu_seconds(pid: int) -> Tuple[float, float]:
    """The process's user and system CPU seconds (utime, stime of /proc/PID/stat)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def tool(binary: str, name: str) -> str:
    path = os.path.join(os.path.dirname(os.path.abspath(binary)), name)
    if not os.path.exists(path):
        raise SystemExit(f"{path} is missing: cargo build --release -p ledger-server -p ledger-load")
    return path


def phase(binary: str, name: str, subscribers: int, blocks_subs: int, rate: Optional[int],
          duration: int, probe_rate: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-mqtt-") as root:
        with open(os.path.join(root, "node.log"), "wb") as log:
            node = subprocess.Popen(  # pylint: disable=consider-using-with
                [binary, "run", "--no-p2p", "--no-metrics", "--data-dir", os.path.join(root, "data"),
                 "--api-bind", "127.0.0.1:0", "--coordinator-interval", "1",
                 "--mqtt-max-clients", str(max(subscribers, 1))],
                stdout=subprocess.PIPE, stderr=log)
        swarm = None
        try:
            assert node.stdout is not None
            url = ""
            for line in node.stdout:
                if line.startswith(b"listening on "):
                    url = line.decode().split()[-1]
                    break
            if not url:
                raise SystemExit(f"{name}: the node did not start; see its log")
            load_avg = os.getloadavg()[0]
            swarm = subprocess.Popen(  # pylint: disable=consider-using-with
                [tool(binary, "mqtt-swarm"), "--url", url, "--subscribers", str(subscribers),
                 "--blocks-subscribers", str(blocks_subs), "--duration", str(duration),
                 "--probe-rate", str(probe_rate), "--json"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            assert swarm.stderr is not None
            for line in swarm.stderr:
                if "connected" in line:
                    break
                sys.stderr.write(line)
            cpu0 = cpu_seconds(node.pid)
            swarm0 = sum(cpu_seconds(swarm.pid))
            children0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            load_cmd = [tool(binary, "ledger-load"), "--url", url, "--scenario", "submit-binary",
                        "--duration", str(duration), "--connections", "64", "--json"]
            if rate:
                load_cmd += ["--rate", str(rate)]
            load = json.loads(subprocess.run(load_cmd, capture_output=True, text=True,
                                             check=True).stdout)
            user1, sys1 = cpu_seconds(node.pid)
            user, system = user1 - cpu0[0], sys1 - cpu0[1]
            # The swarm is still listening (its drain); the load tool has been waited for.
            try:
                swarm_cpu = sum(cpu_seconds(swarm.pid)) - swarm0
            except OSError:
                swarm_cpu = float("nan")
            children1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            load_cpu = (children1.ru_utime + children1.ru_stime
                        - children0.ru_utime - children0.ru_stime)
            out, err = swarm.communicate(timeout=120)
            if swarm.returncode != 0:
                raise SystemExit(f"{name}: mqtt-swarm failed: {err}")
            probes = json.loads(out)
        finally:
            if swarm and swarm.poll() is None:
                swarm.kill()
            node.terminate()
            node.wait(timeout=60)
    created = load["status"].get("201", 0)
    blocks = created + probes["probesCreated"]
    lat = probes["latencyMs"]
    return {
        "phase": name, "subscribers": subscribers, "blocksSubscribers": blocks_subs,
        "rate": rate, "seconds": load["seconds"], "loadAverage1m": load_avg,
        "blocksPerS": created / load["seconds"],
        "cpuUsPerBlock": (user + system) / max(blocks, 1) * 1e6,
        "systemShare": system / max(user + system, 1e-9),
        "nodeCpuS": user + system, "swarmCpuS": swarm_cpu, "loadCpuS": load_cpu,
        "probesCreated": probes["probesCreated"], "deliveries": probes["deliveries"],
        "expectedDeliveries": probes["expectedDeliveries"], "before201": probes["before201"],
        "p50Ms": lat["p50"], "p99Ms": lat["p99"], "maxMs": lat["max"],
        "messages": probes["messages"], "dropped": probes["dropped"],
    }


def row(r: dict) -> str:
    rate = f"{r['rate']}" if r["rate"] else "max"
    subs = f"{r['subscribers']} ({r['blocksSubscribers']} on `blocks`)" if r["subscribers"] else "0"
    latency = (f"{r['p50Ms']:.1f} ms | {r['p99Ms']:.1f} ms | {r['maxMs']:.1f} ms"
               if r["blocksSubscribers"] else "— | — | —")
    deliveries = (f"{r['deliveries']} of {r['expectedDeliveries']}"
                  if r["blocksSubscribers"] else "—")
    return (f"| {r['phase']} | {rate} | {subs} | {r['blocksPerS']:.0f} | {r['cpuUsPerBlock']:.1f} µs "
            f"({r['systemShare'] * 100:.0f} % sys) "
            f"| {deliveries} | {latency} | {r['messages']} | {r['dropped']} "
            f"| {r['nodeCpuS']:.0f} / {r['swarmCpuS']:.0f} / {r['loadCpuS']:.0f} s "
            f"| {r['loadAverage1m']:.1f} |")


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--subscribers", type=int, default=1000)
    p.add_argument("--blocks-subscribers", type=int, default=100)
    p.add_argument("--rate", type=int, default=2000)
    p.add_argument("--duration", type=int, default=60)
    p.add_argument("--max-duration", type=int, default=30)
    p.add_argument("--probe-rate", type=int, default=20)
    p.add_argument("--phases", default="abcde",
                   help="the phases to run, in this order (letters may repeat: 'dede')")
    p.add_argument("--json", help="also write the phases as JSON to this file")
    a = p.parse_args()
    b = a.blocks_subscribers
    phases = {"a": (0, 0, a.rate, a.duration), "b": (b, b, a.rate, a.duration),
              "c": (a.subscribers, b, a.rate, a.duration), "d": (0, 0, None, a.max_duration),
              "e": (b, b, None, a.max_duration)}
    if not a.phases or any(name not in phases for name in a.phases):
        raise SystemExit(f"--phases {a.phases!r}: letters of 'abcde' only")
    results: List[dict] = []
    for name in a.phases:
        subs, blocks_subs, rate, duration = phases[name]
        r = phase(a.bin, name, subs, blocks_subs, rate, duration, a.probe_rate)
        print(json.dumps(r), file=sys.stderr, flush=True)
        results.append(r)
        time.sleep(2)
    print("| phase | rate | subscribers | blocks/s | node CPU per block | probe deliveries "
          "| p50 | p99 | max | messages received | clients dropped | CPU node / swarm / load tool "
          "| load avg (1 min) at start |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(row(r))
    by = {r["phase"]: r for r in results}  # the last run of each phase
    if "d" in by and "e" in by:
        print(f"\nthroughput at max rate, {b} `blocks` subscribers / none: "
              f"{by['e']['blocksPerS'] / max(by['d']['blocksPerS'], 1e-9):.2f}")
    for other in "bc":
        if "a" in by and other in by:
            print(f"node CPU per block at {a.rate}/s, ({other})/(a): "
                  f"{by[other]['cpuUsPerBlock'] / by['a']['cpuUsPerBlock']:.2f}")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
