#!/usr/bin/env python3
"""Soak run of three peered nodes: a line A - B - C on loopback for minutes, under load.

A runs the coordinator (a milestone every --interval s); B and C follow it by gossip;
with --kill-b-every N, B is killed with SIGKILL and restarted on its ports every N minutes. One
`ledger-load` submits node-filled JSON blocks at B and one submits binary blocks at C (one
connection each, as fast as they are answered), for the whole run (the load tool is started
again after each of its 10-minute runs); B's load meets refused connections while B restarts. Every window (default 30 s)
it prints one row per node: confirmed milestone, RSS (MiB), connected peers, WARN/ERROR log
lines so far. At the end it checks that the three agree at a common ledger index (milestone,
utxo changes and the rich list, byte for byte) and prints a summary; the exit code is 1 if they
do not, if a node died, or if any node logged an ERROR. Python 3.8+, standard library only.

  cargo build --release -p ledger-server -p ledger-load
  scripts/soak-peers.py --bin target/release/ledger-node --minutes 10
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from typing import List

from nodeproc import NodeProcess, binaries_and_root, follower_args, get, parser

LOAD_MAX_SECS = 600


class Node(NodeProcess):
    """A node of the soak line (a restart keeps its ports)."""

    def connected(self) -> int:
        peers = json.loads(get(self.api, "/api/core/v2/peers", self.token))
        return sum(1 for p in peers if p["connected"])

    def rss_mib(self) -> float:
        with open(f"/proc/{self.proc.pid}/status", encoding="utf-8") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--interval", type=float, default=1.0, help="coordinator interval (s)")
    ap.add_argument("--window", type=int, default=30)
    ap.add_argument("--kill-b-every", type=float, default=0,
                    help="SIGKILL B and restart it on the same ports every N minutes (0: never)")
    args = ap.parse_args()
    binary, loader, root = binaries_and_root(args.bin, "soak-peers-")
    nodes: List[Node] = []
    loads: List[subprocess.Popen] = []
    failed = False
    try:
        a = Node(binary, root, "a", ["--coordinator-interval", str(args.interval)])
        nodes.append(a)
        key = a.coordinator_key()
        b = Node(binary, root, "b", follower_args(key, a.addr()))
        nodes.append(b)
        c = Node(binary, root, "c", follower_args(key, b.addr()))
        nodes.append(c)
        end = time.monotonic() + args.minutes * 60
        specs = [(b.api, "submit-json"), (c.api, "submit-binary")]
        submitted = [0] * len(specs)

        def launch(i: int) -> subprocess.Popen:
            port, scenario = specs[i]
            secs = max(1, min(LOAD_MAX_SECS, int(end - time.monotonic())))
            return subprocess.Popen(  # pylint: disable=consider-using-with
                [loader, "--url", f"http://127.0.0.1:{port}", "--scenario", scenario,
                 "--connections", "1", "--duration", str(secs), "--json"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

        def collect(p: subprocess.Popen) -> int:
            out, _ = p.communicate(timeout=120)
            return json.loads(out)["status"].get("201", 0) if out else 0

        loads.extend(launch(i) for i in range(len(specs)))
        start = time.monotonic()
        print("t     " + "  ".join(f"{n.name}:cmi   rss  peers warn" for n in nodes))
        next_kill = start + args.kill_b_every * 60 if args.kill_b_every else float("inf")
        while time.monotonic() < end:
            time.sleep(min(args.window, max(0.0, end - time.monotonic())))
            if time.monotonic() >= next_kill:
                b.kill_and_restart()
                next_kill += args.kill_b_every * 60
                print(f"{time.monotonic() - start:5.0f} B killed (SIGKILL) and restarted", flush=True)
            row = []
            for n in nodes:
                if n.proc.poll() is not None:
                    print(f"{n.name} exited with {n.proc.returncode}")
                    return 1
                row.append(f"{n.confirmed():6d} {n.rss_mib():5.0f} {n.connected():5d} "
                           f"{n.log_count('WARN'):4d}")
            print(f"{time.monotonic() - start:5.0f} " + "  ".join(row), flush=True)
            # The load tool runs 10 minutes at most: start it again for the rest of the run.
            for i, p in enumerate(loads):
                if p.poll() is not None and end - time.monotonic() > 5:
                    submitted[i] += collect(p)
                    loads[i] = launch(i)
        for i, p in enumerate(loads):
            submitted[i] += collect(p)
        # Agreement at a common index, once everyone has it.
        index = a.confirmed()
        deadline = time.monotonic() + 60
        while min(n.confirmed() for n in nodes) < index and time.monotonic() < deadline:
            time.sleep(0.2)
        for path in (f"/api/core/v2/milestones/by-index/{index}",
                     f"/api/core/v2/milestones/by-index/{index}/utxo-changes",
                     f"/api/explorer/v2/ledger/richest-addresses?top=1000&ledgerIndex={index}"):
            bodies = {get(n.api, path) for n in nodes}
            if len(bodies) != 1:
                print(f"DISAGREE at {path}")
                failed = True
        errors = sum(n.log_count("ERROR") for n in nodes)
        print(json.dumps({
            "minutes": args.minutes,
            "milestones": index,
            "submitted_json_at_b": submitted[0],
            "submitted_binary_at_c": submitted[1],
            "agree_at_index": not failed,
            "b_restarts": b.restarts,
            "rss_mib": {n.name: round(n.rss_mib()) for n in nodes},
            "warn_lines": {n.name: n.log_count("WARN") for n in nodes},
            "error_lines": errors,
        }, indent=2))
        return 1 if failed or errors else 0
    finally:
        for p in loads:
            if p.poll() is None:
                p.kill()
        for n in nodes:
            n.stop()
        if failed:
            print(f"logs kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
