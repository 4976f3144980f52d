#!/usr/bin/env python3
"""Soak run: one ledger-node under load for minutes, sampled every 10 s.

Starts the given binary on a fresh data dir (loopback only), runs `ledger-load` (built beside
it: `cargo build --release -p ledger-server -p ledger-load`) next to it, and a probe client that
posts a node-filled block and reads /info four times a second. The load (`--load`):

  mixed    as fast as the node answers: node-filled JSON submits (4 connections), binary
           submits on /tips (4), output reads (2), rich-list reads (1)  [default]
  steady   binary submits on /tips at a fixed rate: `ledger-load --scenario submit-binary
           --rate N` (`--rate`, default 2000 a second in total, over `--connections`, default
           16); missed start times are dropped, never made up in a burst
  none     only the probe: an idle node

`ledger-load` runs at most 600 s (`--load-run SECS` for shorter runs); it is started again,
with new connections, as soon as a run ends, for the whole soak. Every window (default 10 s)
it prints one row:

  t        seconds since start
  cmi      confirmed milestone index at the end of the window
  ms       milestones confirmed in the window; gap = longest time without a new one (s)
  rss      resident memory of the node (VmRSS, MiB); anon = its anonymous part (RssAnon, MiB,
           the heap: what grows with what the node keeps in memory); fds = open file descriptors
  disk     what the data directory takes on disk (allocated blocks, MiB)
  blk/s    new blocks per second (from /info metrics); ref/s referenced per second
  tips     tip pool (healthy/semi-lazy/lazy) after the latest milestone (the node's log line)
  p50/p99  probe latency (ms) of POST /blocks (node-filled) and GET /info together
  err      probe answers that were not 2xx, or failed

At the end it prints a summary: worst milestone gap against the interval, RSS after warm-up
and at the end, RSS growth per stored block; RssAnon at minute 5 (`--ref-minute`) and at the
end and their ratio (the steady-load acceptance: at minute 30 within 15 % of minute 5), and
the blocks stored (new blocks a second from /info, summed over the windows); with
`--load steady` also what each `ledger-load` run achieved (requests started a second, answers
by status). Python 3.8+, standard library only.

  scripts/soak.py --bin target/release/ledger-node --minutes 10
  scripts/soak.py --bin target/release/ledger-node --minutes 30 --load steady --rate 2000
  scripts/soak.py --bin target/release/ledger-node --minutes 10 --load none   # idle node
  scripts/soak.py --minutes 30 --load steady --rate 2000 --ref-minute 10 \
      --node-arg=--pruning-milestones-to-keep --node-arg=100   # pruning: disk and RssAnon flat
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Dict, List, Optional, Tuple

from nodeproc import free_port, http

# (scenario, connections) of the bench-api load generators of `--load mixed`.
MIXED_LOAD = [("submit-json", 4), ("submit-binary", 4), ("get-output", 2), ("richest", 1)]
BENCH_API_MAX_SECS = 600
WARM_UP_S = 60


class Node:
    """The node process: started on free loopback ports, killed at the end."""

    def __init__(self, binary: str, interval: float, data_dir: str, extra: List[str]) -> None:
        help_text = subprocess.run([binary, "run", "--help"], capture_output=True, text=True).stdout
        self.data_dir = data_dir
        args = [binary, "run", "--data-dir", data_dir, "--api-bind", "127.0.0.1:0",
                "--coordinator-interval", str(interval)] + extra
        if "--metrics-bind" in help_text:
            args += ["--metrics-bind", f"127.0.0.1:{free_port()}"]
        if "--p2p-bind" in help_text:
            args += ["--p2p-bind", "/ip4/127.0.0.1/tcp/0"]
        self.log = open(os.path.join(os.path.dirname(data_dir), "node.log"), "wb")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.log,
                                     env={**os.environ, "RUST_LOG": "info"})
        assert self.proc.stdout is not None
        deadline = time.time() + 120
        self.base = ""
        while time.time() < deadline:
            line = self.proc.stdout.readline().decode(errors="replace").strip()
            if line.startswith("listening on http://"):
                self.base = line[len("listening on "):]
                break
            if not line and self.proc.poll() is not None:
                break
        if not self.base:
            raise SystemExit("soak: the node did not start; see node.log")
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()

    def status_mib(self, field: str) -> float:
        """A memory line of /proc/PID/status (`VmRSS`, `RssAnon`, ...) in MiB."""
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def disk_mib(self) -> float:
        """What the data directory takes on disk (allocated blocks, MiB)."""
        total = 0
        for root, _, files in os.walk(self.data_dir):
            for name in files:
                try:
                    total += os.lstat(os.path.join(root, name)).st_blocks * 512
                except OSError:
                    pass
        return total / (1024 * 1024)

    def rss_mib(self) -> float:
        return self.status_mib("VmRSS")

    def rss_anon_mib(self) -> float:
        return self.status_mib("RssAnon")

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def tips(self) -> str:
        """The tip pool (healthy/semi-lazy/lazy) of the node's latest milestone log line."""
        self.log.flush()
        with open(self.log.name, "rb") as f:
            f.seek(max(0, os.path.getsize(self.log.name) - 65536))
            tail = f.read().decode(errors="replace")
        found = re.findall(r"milestone confirmed.*?tips=(\d+/\d+/\d+)|tips=(\d+/\d+/\d+).*?milestone confirmed", tail)
        if not found:
            return "n/a"
        last = found[-1]
        return last[0] or last[1]

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class Watcher(threading.Thread):
    """Polls /info every 100 ms: milestone changes and block rates."""

    def __init__(self, base: str) -> None:
        super().__init__(daemon=True)
        self.base = base
        self.lock = threading.Lock()
        self.cmi = 0
        self.last_change = time.time()
        self.window_gap = 0.0
        self.window_milestones = 0
        self.rates: List[Tuple[float, float]] = []
        self.stop = False

    def run(self) -> None:
        while not self.stop:
            try:
                status, body = http("GET", self.base + "/api/core/v2/info", timeout=10)
                if status == 200:
                    info = json.loads(body)
                    cmi = info["status"]["confirmedMilestone"]["index"]
                    m = info["metrics"]
                    now = time.time()
                    with self.lock:
                        if cmi != self.cmi:
                            self.window_gap = max(self.window_gap, now - self.last_change)
                            self.window_milestones += cmi - self.cmi
                            self.cmi = cmi
                            self.last_change = now
                        self.rates.append((m["blocksPerSecond"], m["referencedBlocksPerSecond"]))
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.1)

    def take(self) -> Tuple[int, int, float, float, float]:
        with self.lock:
            gap = max(self.window_gap, time.time() - self.last_change)
            n = len(self.rates) or 1
            blk = sum(r[0] for r in self.rates) / n
            ref = sum(r[1] for r in self.rates) / n
            out = (self.cmi, self.window_milestones, gap, blk, ref)
            self.window_gap, self.window_milestones, self.rates = 0.0, 0, []
            return out


class Probe(threading.Thread):
    """A well-behaved client: a node-filled block and an /info read, four times a second."""

    def __init__(self, base: str) -> None:
        super().__init__(daemon=True)
        self.base = base
        self.lock = threading.Lock()
        self.latencies: List[float] = []
        self.errors = 0
        self.stop = False

    def run(self) -> None:
        seq = 0
        while not self.stop:
            seq += 1
            block = json.dumps({"protocolVersion": 2, "payload": {
                "type": 5, "tag": "0x" + b"soak".hex(), "data": "0x" + seq.to_bytes(8, "little").hex()}})
            for method, path, body in (("POST", "/api/core/v2/blocks", block.encode()),
                                       ("GET", "/api/core/v2/info", None)):
                t0 = time.perf_counter()
                try:
                    status, _ = http(method, self.base + path, body)
                    ok = 200 <= status < 300
                except OSError:
                    ok = False
                dt = (time.perf_counter() - t0) * 1000
                with self.lock:
                    self.latencies.append(dt)
                    self.errors += 0 if ok else 1
            time.sleep(0.25)

    def take(self) -> Tuple[float, float, int]:
        with self.lock:
            lat = sorted(self.latencies)
            errors = self.errors
            self.latencies, self.errors = [], 0
        if not lat:
            return 0.0, 0.0, errors
        p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]  # noqa: E731
        return p(0.50), p(0.99), errors


def start_load(load_binary: str, base: str, seconds: int) -> List[subprocess.Popen]:
    procs = []
    for scenario, conns in MIXED_LOAD:
        procs.append(subprocess.Popen(
            [load_binary, "--url", base, "--scenario", scenario,
             "--connections", str(conns), "--threads", "1",
             "--duration", str(min(seconds, BENCH_API_MAX_SECS))],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return procs


def start_steady(load_binary: str, base: str, seconds: int, rate: int, conns: int) -> subprocess.Popen:
    """One `ledger-load` run of binary submits at `rate` a second; its JSON report on stdout."""
    return subprocess.Popen(
        [load_binary, "--url", base, "--scenario", "submit-binary", "--rate", str(rate),
         "--connections", str(conns), "--threads", "1",
         "--duration", str(min(seconds, BENCH_API_MAX_SECS)), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def steady_report(proc: subprocess.Popen, wait: float) -> dict:
    """The JSON report of a finished steady run (waiting up to `wait` s), or why there is none."""
    try:
        out, err = proc.communicate(timeout=wait)
    except subprocess.TimeoutExpired:
        proc.terminate()
        out, err = proc.communicate()
        return {"error": "still running at the end: stopped without a report"}
    try:
        return json.loads(out)
    except ValueError:
        return {"error": f"exit {proc.returncode}: {err.decode(errors='replace').strip()[:300]}"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/ledger-node", help="the ledger-node binary")
    ap.add_argument("--load-bin", default=None,
                    help="the ledger-load binary [default: ledger-load beside --bin]")
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--interval", type=float, default=1.0, help="coordinator interval (s)")
    ap.add_argument("--window", type=float, default=10.0, help="seconds per sample row")
    ap.add_argument("--load", choices=["mixed", "steady", "none"], default="mixed")
    ap.add_argument("--rate", type=int, default=2000,
                    help="--load steady: binary submits a second, over all connections [2000]")
    ap.add_argument("--connections", type=int, default=16,
                    help="--load steady: ledger-load connections [16]")
    ap.add_argument("--ref-minute", type=float, default=5.0,
                    help="RssAnon and disk use are compared between this minute and the end [5]")
    ap.add_argument("--keep-log", default=None, metavar="FILE",
                    help="copy the node's log (stderr) to FILE at the end")
    ap.add_argument("--load-run", type=int, default=BENCH_API_MAX_SECS, metavar="SECS",
                    help="seconds of one ledger-load run before the next one starts (new "
                         f"connections); at most {BENCH_API_MAX_SECS}")
    ap.add_argument("--node-arg", action="append", default=[],
                    help="an extra argument for `ledger-node run` (repeatable), e.g. "
                         "--node-arg=--pruning-milestones-to-keep --node-arg=100")
    args = ap.parse_args()
    if args.rate < 1 or args.connections < 1:
        sys.exit("soak: --rate and --connections must be at least 1")
    load_bin = args.load_bin or os.path.join(os.path.dirname(args.bin) or ".", "ledger-load")
    if args.load != "none" and not os.access(load_bin, os.X_OK):
        sys.exit(f"soak: no ledger-load at {load_bin}; build it (cargo build --release -p ledger-load) or pass --load-bin")

    work = tempfile.mkdtemp(prefix="ledger-soak-")
    node = Node(args.bin, args.interval, os.path.join(work, "data"), args.node_arg)
    watcher, probe = Watcher(node.base), Probe(node.base)
    watcher.start()
    probe.start()
    total = int(args.minutes * 60)
    started = time.time()
    load: List[subprocess.Popen] = []
    run_secs = max(1, min(args.load_run, BENCH_API_MAX_SECS))
    steady_runs: List[dict] = []
    load_until = started  # the end of the current load run
    load_over = args.load == "none"  # no further run to start
    rows = []
    what = f"steady {args.rate}/s over {args.connections} connections" if args.load == "steady" else args.load
    print(f"# soak: {args.bin} {' '.join(args.node_arg)}, {args.minutes} min, coordinator "
          f"{args.interval} s, load {what}, {os.cpu_count()} cores, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("| t s | cmi | ms | gap s | rss MiB | anon MiB | disk MiB | fds | blk/s | ref/s | tips h/s/l | p50 ms | p99 ms | err |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    blocks = 0.0
    next_row = started + args.window
    last_row = started
    finished = False
    try:
        while time.time() - started < total:
            # (Re)start the load as soon as its run is over, then sleep to the next row.
            while True:
                now = time.time()
                if not load_over and now >= load_until:
                    remaining = total - (now - started)
                    # Whole seconds, rounded up and one more: the last run covers the last row
                    # too (at the end the soak waits for it to finish and report).
                    left = min(math.ceil(remaining) + 1, run_secs)
                    if remaining > 0:
                        if args.load == "steady":
                            if load:
                                steady_runs.append(steady_report(load[0], 15))
                            load = [start_steady(load_bin, node.base, left, args.rate, args.connections)]
                        else:
                            for p in load:
                                try:
                                    p.wait(timeout=15)
                                except subprocess.TimeoutExpired:
                                    p.terminate()
                            load = start_load(load_bin, node.base, left)
                        load_until = now + left
                    else:
                        load_over = True
                if now >= next_row:
                    break
                time.sleep(max(0.0, (next_row if load_over else min(next_row, load_until)) - now))
            next_row += args.window
            cmi, ms, gap, blk, ref = watcher.take()
            p50, p99, err = probe.take()
            now = time.time()
            blocks += blk * (now - last_row)
            last_row = now
            row = (now - started, cmi, ms, gap, node.rss_mib(), node.fds(), blk, ref,
                   node.tips(), p50, p99, err, blocks, node.rss_anon_mib(), node.disk_mib())
            rows.append(row)
            print("| {:.0f} | {} | {} | {:.2f} | {:.0f} | {:.0f} | {:.0f} | {} | {:.0f} | {:.0f} | {} | {:.1f} | {:.1f} | {} |"
                  .format(*row[:5], row[13], row[14], *row[5:12]), flush=True)
        finished = True
    finally:
        watcher.stop = probe.stop = True
        try:
            if args.load == "steady" and load:
                # The last run was given the time left: let it finish and report (unless the
                # soak was interrupted).
                wait = max(0.0, load_until - time.time()) + 15 if finished else 0.0
                steady_runs.append(steady_report(load[0], wait))
        finally:
            for p in load:
                if p.poll() is None:
                    p.terminate()
            node.stop()
    warm = [r for r in rows if r[0] >= WARM_UP_S] or rows
    worst_gap = max(r[3] for r in rows) if rows else 0
    if warm:
        first, last = warm[0], warm[-1]
        grown = (last[4] - first[4]) * 1024 * 1024
        stored = last[12] - first[12]
        per_block = grown / stored if stored > 0 else float("nan")
        print(f"\nworst milestone gap {worst_gap:.2f} s (interval {args.interval} s, "
              f"{worst_gap / args.interval:.1f}x); RSS {first[4]:.0f} MiB at {first[0]:.0f} s -> "
              f"{last[4]:.0f} MiB at {last[0]:.0f} s over {stored:.0f} new blocks: "
              f"{per_block:.0f} bytes of RAM per stored block; fds {first[5]} -> {last[5]}")
    if rows:
        last = rows[-1]
        ref_s = args.ref_minute * 60
        at_ref = [r for r in rows if r[0] >= ref_s]
        if len(at_ref) > 1:
            ref, note = at_ref[0], f"minute {args.ref_minute:g}"
        else:
            ref = warm[0]
            note = f"{ref[0]:.0f} s (the run has no row after minute {args.ref_minute:g})"
        ratio = last[13] / ref[13] if ref[13] > 0 else float("nan")
        print(f"RssAnon {ref[13]:.1f} MiB at {note} ({ref[0]:.0f} s) -> {last[13]:.1f} MiB at the end "
              f"({last[0]:.0f} s): ratio {ratio:.3f} ({(ratio - 1) * 100:+.1f} %); "
              f"blocks stored {last[12]:.0f} ({last[12] - ref[12]:.0f} since {ref[0]:.0f} s)")
        disk_ratio = last[14] / ref[14] if ref[14] > 0 else float("nan")
        print(f"data directory {ref[14]:.1f} MiB at {note} -> {last[14]:.1f} MiB at the end: "
              f"ratio {disk_ratio:.3f} ({(disk_ratio - 1) * 100:+.1f} %)")
    for i, r in enumerate(steady_runs, 1):
        if "error" in r:
            print(f"ledger-load run {i}: {r['error']}")
            continue
        status = ", ".join(f"{k}: {v}" for k, v in r.get("status", {}).items())
        print(f"ledger-load run {i}: {r.get('seconds', 0):.1f} s, target {r.get('rate')}/s, "
              f"achieved {r.get('achievedRate', 0):.1f}/s ({r.get('started')} started, "
              f"{r.get('errors')} failed without answer), status {status}, "
              f"latency p50 {r['latencyMs']['p50']:.2f} ms p99 {r['latencyMs']['p99']:.2f} ms")
    if args.keep_log:
        shutil.copyfile(os.path.join(work, "node.log"), args.keep_log)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
