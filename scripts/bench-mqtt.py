#!/usr/bin/env python3
"""The event API under load (issue 26's benchmark): submit throughput and node CPU per block at
a steady rate with no MQTT subscribers, then with SUBSCRIBERS connected (BLOCKS_SUBS of them on
`blocks`, the rest each on its own `outputs/unlock/address/…` topic), and the delivery latency
of probe blocks from their 201 to the `blocks` subscribers (p50/p99).

    .venv/bin/python scripts/bench-mqtt.py --bin target/release/ledger-node \\
        [--subscribers 1000] [--blocks-subscribers 100] [--rate 2000] [--duration 60]

Each phase runs a fresh node (coordinator every second, loopback only) and `ledger-load
--scenario submit-binary --rate RATE` (from target/release, else target/debug, beside this
repository) for DURATION seconds, while a probe thread posts PROBE_RATE JSON blocks per second
and records when each 201 came. A probe delivered before its 201 (events leave once a block is
stored, the 201 after its fsync) counts as 0 ms. Needs paho-mqtt (server/tests/python/
requirements.txt, installed into .venv by scripts/test-all). Prints one line per phase and the
with/without throughput ratio; run it on a quiet machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from typing import Dict, List

import paho.mqtt.client as mqtt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nodeproc import free_port, parser  # noqa: E402  pylint: disable=wrong-import-position

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_tool() -> str:
    for profile in ("release", "debug"):
        path = os.path.join(ROOT, "target", profile, "ledger-load")
        if os.path.exists(path):
            return path
    raise SystemExit("build ledger-load first: cargo build --release -p ledger-load")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: List[float], p: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))]


class Subscribers:
    """`n` paho clients over websockets: `blocks_n` on `blocks`, the rest on one address topic
    each. Records when each block id reached each `blocks` subscriber."""

    def __init__(self, port: int, n: int, blocks_n: int) -> None:
        self.arrivals: Dict[str, List[float]] = {}
        self.lock = threading.Lock()
        self.clients = []
        for i in range(n):
            topic = "blocks" if i < blocks_n else f"outputs/unlock/address/rms1qbench{i:054d}"
            c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"bench-{i}",
                            transport="websockets", protocol=mqtt.MQTTv311)
            c.ws_set_options(path="/api/mqtt/v1")
            c.user_data_set(topic)
            c.on_connect = lambda client, topic, *_: client.subscribe(topic, 0)
            c.on_message = self.on_message
            c.connect("127.0.0.1", port, keepalive=60)
            c.loop_start()
            self.clients.append(c)

    def on_message(self, _client, _userdata, msg) -> None:
        now = time.monotonic()
        if msg.topic == "blocks":
            block_id = "0x" + hashlib.blake2b(msg.payload, digest_size=32).hexdigest()
            with self.lock:
                self.arrivals.setdefault(block_id, []).append(now)

    def stop(self) -> None:
        for c in self.clients:
            c.loop_stop()
            c.disconnect()


def probe(port: int, rate: float, until: float, sent: Dict[str, float]) -> None:
    """Posts JSON tagged-data blocks at `rate` per second; records each 201's time by id."""
    i = 0
    while time.monotonic() < until:
        body = json.dumps({"protocolVersion": 2, "payload": {
            "type": 5, "tag": "0x" + f"probe{i}".encode().hex(), "data": "0x00"}}).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/api/core/v2/blocks", data=body,
                                     headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                block_id = json.loads(r.read())["blockId"]
                sent[block_id] = time.monotonic()
        except OSError:
            pass
        i += 1
        time.sleep(1 / rate)


def phase(binary: str, subscribers: int, blocks_subs: int, rate: int, duration: int,
          probe_rate: float) -> dict:
    port = free_port()
    with tempfile.TemporaryDirectory() as root:
        with open(os.path.join(root, "node.log"), "wb") as log:
            node = subprocess.Popen(  # pylint: disable=consider-using-with
                [binary, "run", "--data-dir", os.path.join(root, "data"),
                 "--api-bind", f"127.0.0.1:{port}", "--no-metrics", "--coordinator-interval", "1",
                 "--p2p-bind", f"/ip4/127.0.0.1/tcp/{free_port()}",
                 "--mqtt-max-clients", str(max(subscribers, 1))],
                stdout=subprocess.PIPE, stderr=log)
        try:
            assert node.stdout is not None
            for line in node.stdout:
                if line.startswith(b"listening on"):
                    break
            subs = Subscribers(port, subscribers, blocks_subs) if subscribers else None
            time.sleep(2 if subscribers else 0)
            sent: Dict[str, float] = {}
            cpu0 = cpu_seconds(node.pid)
            prober = threading.Thread(target=probe, args=(port, probe_rate, time.monotonic() + duration, sent))
            prober.start()
            out = subprocess.run([load_tool(), "--url", f"http://127.0.0.1:{port}", "--scenario",
                                  "submit-binary", "--rate", str(rate), "--duration", str(duration),
                                  "--connections", "64", "--json"],
                                 capture_output=True, text=True, check=True).stdout
            prober.join()
            cpu = cpu_seconds(node.pid) - cpu0
            time.sleep(2)
            report = json.loads(out)
            created = report["status"].get("201", 0)
            latencies = []
            if subs:
                with subs.lock:
                    for block_id, t201 in sent.items():
                        for t in subs.arrivals.get(block_id, []):
                            latencies.append(max(0.0, t - t201) * 1000)
                subs.stop()
            return {
                "subscribers": subscribers,
                "blocks_per_s": created / duration,
                "cpu_us_per_block": cpu / max(created, 1) * 1e6,
                "probes": len(sent),
                "deliveries": len(latencies),
                "p50_ms": percentile(latencies, 50),
                "p99_ms": percentile(latencies, 99),
            }
        finally:
            node.terminate()
            node.wait(timeout=60)


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--subscribers", type=int, default=1000)
    p.add_argument("--blocks-subscribers", type=int, default=100)
    p.add_argument("--rate", type=int, default=2000)
    p.add_argument("--duration", type=int, default=60)
    p.add_argument("--probe-rate", type=float, default=20)
    a = p.parse_args()
    base = phase(a.bin, 0, 0, a.rate, a.duration, a.probe_rate)
    loaded = phase(a.bin, a.subscribers, a.blocks_subscribers, a.rate, a.duration, a.probe_rate)
    for r in (base, loaded):
        print(f"{r['subscribers']:>5} subscribers: {r['blocks_per_s']:.0f} blocks/s, "
              f"{r['cpu_us_per_block']:.1f} us CPU/block, {r['probes']} probes, "
              f"{r['deliveries']} deliveries, p50 {r['p50_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms")
    print(f"throughput with/without subscribers: {loaded['blocks_per_s'] / max(base['blocks_per_s'], 1e-9):.2f}")


if __name__ == "__main__":
    main()
