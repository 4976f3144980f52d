#!/usr/bin/env python3
"""Gossip benchmarks on loopback: throughput, propagation latency and catch-up, one run.

Starts real `ledger-node` processes (release build; `ledger-load` beside it:
`cargo build --release -p ledger-server -p ledger-load`) on fresh data dirs, loopback only:

1. single: one node alone; `ledger-load --scenario submit-binary` against it for --seconds:
   the single-node submit throughput (blocks/s answered 201).
2. gossip: A (coordinator) and B (follower, --peer A). The same load at A; B's `newBlocks`
   from A (GET /api/core/v2/peers on B) is polled until it stops growing: blocks stored at B
   per second, from the start of the load to the last block stored at B.
3. catch-up: C starts empty with --peer B while A and B hold the history of phase 2 plus
   --extra-milestones small milestones; the time until C's confirmed milestone reaches A's
   confirmed milestone at C's start gives blocks/s (C's `newBlocks` from B) and milestones/s.
4. latency: a line A - B - C. A paced background load of --rate blocks/s at A (node-filled
   JSON, several keep-alive connections) and a sampler that posts one block at A every 20 ms
   and polls C for it (`GET /api/core/v2/blocks/{id}/metadata`, every 0.5 ms): the time from
   A's 201 to C's 200, p50/p99.

Prints one JSON object with every figure. Python 3.8+, standard library only.

  scripts/bench-gossip.py --bin target/release/ledger-node --seconds 10 --rate 1000
"""

from __future__ import annotations

import http.client
import json
import shutil
import subprocess
import sys
import threading
import time
from typing import List, Optional, Tuple

from nodeproc import NodeProcess, binaries_and_root, follower_args, parser


class Client:
    """One keep-alive HTTP connection to a node's API."""

    def __init__(self, port: int, token: Optional[str] = None) -> None:
        self.port = port
        self.token = token
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def request(self, method: str, path: str, body: Optional[bytes] = None) -> Tuple[int, bytes]:
        headers = {}
        if body is not None:
            headers["content-type"] = "application/json"
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        for attempt in range(2):
            try:
                self.conn.request(method, path, body=body, headers=headers)
                r = self.conn.getresponse()
                return r.status, r.read()
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def json(self, path: str):
        status, body = self.request("GET", path)
        if status != 200:
            raise RuntimeError(f"GET {path}: {status} {body[:200]!r}")
        return json.loads(body)


class Node(NodeProcess):
    """A node with a keep-alive client on its API."""

    def __init__(self, binary: str, root: str, name: str, args: List[str]) -> None:
        super().__init__(binary, root, name, args)
        self.client = Client(self.api, self.token)

    def peer_metrics(self, peer_id: str) -> dict:
        return self.client.json(f"/api/core/v2/peers/{peer_id}")["gossip"]["metrics"]


def load(loader: str, port: int, seconds: int, connections: int) -> dict:
    out = subprocess.run([loader, "--url", f"http://127.0.0.1:{port}", "--scenario",
                          "submit-binary", "--duration", str(seconds), "--connections",
                          str(connections), "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def ok_count(report: dict) -> int:
    return sum(n for code, n in report["status"].items() if code == "201")


def wait(pred, timeout: float, what: str) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if pred():
            return time.monotonic()
        time.sleep(0.02)
    raise RuntimeError(f"timed out waiting for {what}")


def pct(values: List[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--rate", type=int, default=1000, help="background blocks/s of phase 4")
    ap.add_argument("--latency-seconds", type=int, default=15)
    ap.add_argument("--extra-milestones", type=int, default=300,
                    help="small milestones issued at A before C catches up")
    args = ap.parse_args()
    binary, loader, root = binaries_and_root(args.bin, "bench-gossip-")
    nodes: List[Node] = []
    result: dict = {}
    try:
        # 1. single node
        single = Node(binary, root, "single", ["--coordinator-interval", "1"])
        nodes.append(single)
        rep = load(loader, single.api, args.seconds, args.connections)
        result["single_submit_per_s"] = round(ok_count(rep) / args.seconds)
        single.stop()
        nodes.remove(single)

        # 2. A -> B
        a = Node(binary, root, "a", ["--coordinator-interval", "1"])
        nodes.append(a)
        key = a.coordinator_key()
        b = Node(binary, root, "b", follower_args(key, a.addr()))
        nodes.append(b)
        a_id = a.peer_id()
        wait(lambda: b.client.request("GET", f"/api/core/v2/peers/{a_id}")[0] == 200
             and b.peer_metrics(a_id)["receivedHeartbeats"] > 0, 30, "B to peer with A")
        wait(lambda: b.confirmed() >= a.confirmed() >= 1, 30, "B to sync")
        before = b.peer_metrics(a_id)["newBlocks"]
        t0 = time.monotonic()
        rep = load(loader, a.api, args.seconds, args.connections)
        submitted = ok_count(rep)
        # Milestones and checkpoints are new blocks too: B is done once it stored at least
        # as many as A answered 201 for.
        t_done = wait(lambda: b.peer_metrics(a_id)["newBlocks"] - before >= submitted, 300,
                      "B to store the blocks submitted at A")
        stored = b.peer_metrics(a_id)["newBlocks"] - before
        last_change = t_done
        result["gossip_submitted_at_a"] = submitted
        result["gossip_submit_at_a_per_s"] = round(submitted / args.seconds)
        result["gossip_stored_at_b"] = stored
        result["gossip_stored_at_b_per_s"] = round(stored / (last_change - t0))
        result["gossip_ratio_to_single"] = round(
            result["gossip_stored_at_b_per_s"] / max(1, result["single_submit_per_s"]), 2)

        # 3. C catches up from B (empty start), over the big cones of phase 2 and then
        # --extra-milestones small ones (issued on demand at A).
        for _ in range(args.extra_milestones):
            status, body = a.client.request("POST", "/api/core/v2/control/milestone", b"")
            if status // 100 != 2:
                raise RuntimeError(f"issuing a milestone: {status} {body[:200]!r}")
        wait(lambda: b.confirmed() >= a.confirmed(), 120, "B to follow the extra milestones")
        target = a.confirmed()
        t_start = time.monotonic()
        c = Node(binary, root, "c", follower_args(key, b.addr()))
        nodes.append(c)
        t_done = wait(lambda: c.confirmed() >= target, 600, "C to catch up")
        took = t_done - t_start
        fetched = c.peer_metrics(b.peer_id())["newBlocks"]
        result["catchup_milestones"] = target
        result["catchup_blocks"] = fetched
        result["catchup_seconds"] = round(took, 2)
        result["catchup_blocks_per_s"] = round(fetched / took)
        result["catchup_milestones_per_s"] = round(target / took, 1)

        # 4. latency A -> B -> C under background load
        stop = threading.Event()
        sent = [0]

        def pace(worker: int, per_s: float) -> None:
            cl = Client(a.api)
            n = 0
            start = time.monotonic()
            while not stop.is_set():
                n += 1
                body = json.dumps({"protocolVersion": 2, "payload": {
                    "type": 5, "tag": "0x" + f"bg{worker}-{n}".encode().hex(), "data": "0x"}}).encode()
                cl.request("POST", "/api/core/v2/blocks", body)
                sent[0] += 1
                delay = start + n / per_s - time.monotonic()
                if delay > 0:
                    time.sleep(delay)

        workers = 4
        background = max(0, args.rate - 50)
        threads = [threading.Thread(target=pace, args=(w, background / workers), daemon=True)
                   for w in range(workers)]
        for t in threads:
            t.start()
        time.sleep(2)
        lat: List[float] = []
        sa, sc = Client(a.api), Client(c.api)
        end = time.monotonic() + args.latency_seconds
        n = 0
        bg_start, bg_sent = time.monotonic(), sent[0]
        while time.monotonic() < end:
            n += 1
            body = json.dumps({"protocolVersion": 2, "payload": {
                "type": 5, "tag": "0x" + f"probe-{n}".encode().hex(), "data": "0x"}}).encode()
            status, reply = sa.request("POST", "/api/core/v2/blocks", body)
            t_ack = time.monotonic()
            if status != 201:
                continue
            block_id = json.loads(reply)["blockId"]
            while time.monotonic() - t_ack < 10:
                if sc.request("GET", f"/api/core/v2/blocks/{block_id}/metadata")[0] == 200:
                    lat.append((time.monotonic() - t_ack) * 1000)
                    break
                time.sleep(0.0005)
            time.sleep(max(0.0, 0.02 - (time.monotonic() - t_ack)))
        achieved = (sent[0] - bg_sent + n) / (time.monotonic() - bg_start)
        stop.set()
        for t in threads:
            t.join(timeout=30)
        result["latency_load_per_s"] = round(achieved)
        result["latency_samples"] = len(lat)
        result["latency_p50_ms"] = round(pct(lat, 50), 2) if lat else None
        result["latency_p99_ms"] = round(pct(lat, 99), 2) if lat else None
        print(json.dumps(result, indent=2))
        return 0
    finally:
        for node in nodes:
            node.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
