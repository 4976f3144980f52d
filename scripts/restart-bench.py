#!/usr/bin/env python3
"""Memory per stored block and restart time, old binary beside new, in one run.

For each binary and each target size it starts a node on a fresh data dir (`--no-p2p`, a
milestone every second), fills it with `ledger-load --scenario submit-binary` until the log
holds the target number of blocks, waits until they are referenced and older than
below-max-depth, and samples the node's anonymous resident memory (RssAnon) before and after:
the growth per stored block. It then stops the node (SIGTERM), starts it again on the same data
dir and measures the time from spawn to the first `200` of `GET /info` and to the first `201`
of a submit. Before the fill it submits 2 000 marker blocks (the oldest part of the history);
after it, it reads each of them (`GET /blocks/{id}` and `/blocks/{id}/metadata`, two passes, the
second one timed: warm page cache) and the genesis output, and reports p50/p99 latencies. It
also reports the p50/p99 of the node's own "milestone confirmed" times (`took_ms`), over all
milestones and over those that referenced at least 1 000 blocks. Python 3.8+, standard library only.

  scripts/restart-bench.py --old /path/old/ledger-node --new target/release/ledger-node \
      --load target/release/ledger-load --blocks 1000000 5000000
"""

from __future__ import annotations

import argparse
import http.client as httpclient
import json
import re
import os
import shutil
import signal
import subprocess
import tempfile
import time

import nodeproc
from nodeproc import free_port

TAGGED = json.dumps({"protocolVersion": 2, "payload": {"type": 5, "tag": "0x01", "data": "0x"}}).encode()


def http(method: str, url: str, body: bytes | None = None, timeout: float = 5):
    """`nodeproc.http`, with a connection that fails (a node still starting) as status 0."""
    try:
        return nodeproc.http(method, url, body, timeout)
    except OSError:
        return 0, b""


def rss_anon_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    return 0


def start(binary: str, data: str, port: int) -> subprocess.Popen:
    args = [binary, "--data-dir", data, "--api-bind", f"127.0.0.1:{port}", "--no-p2p",
            "--no-metrics", "--coordinator-interval", "1"]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=open(os.path.join(os.path.dirname(data), "node.log"), "ab"))


def wait_until(pred, timeout: float, step: float = 0.005) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if pred():
            return time.monotonic() - t0
        time.sleep(step)
    raise TimeoutError


def info(base: str) -> dict:
    status, body = http("GET", f"{base}/api/core/v2/info")
    return json.loads(body) if status == 200 else {}


def percentiles(xs: list) -> tuple:
    xs = sorted(xs)
    if not xs:
        return (None, None)
    return (round(xs[len(xs) // 2], 3), round(xs[min(len(xs) - 1, int(len(xs) * 0.99))], 3))


def timed_gets(port: int, paths: list) -> list:
    """Milliseconds per GET over one keep-alive connection."""
    conn = httpclient.HTTPConnection("127.0.0.1", port, timeout=10)
    out = []
    for p in paths:
        t0 = time.perf_counter()
        conn.request("GET", p)
        r = conn.getresponse()
        r.read()
        out.append((time.perf_counter() - t0) * 1000)
        assert r.status == 200, (p, r.status)
    conn.close()
    return out


def run_one(binary: str, load: str, blocks: int, work: str) -> dict:
    data = os.path.join(work, "data")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    node = start(binary, data, port)
    wait_until(lambda: http("GET", f"{base}/api/core/v2/info")[0] == 200, 60)
    time.sleep(3)
    markers = []
    for i in range(2000):
        body = json.dumps({"protocolVersion": 2, "payload": {"type": 5, "tag": "0x0b", "data": hex(i)[2:].rjust(8, "0").join(["0x", ""])}}).encode()
        status, answer = http("POST", f"{base}/api/core/v2/blocks", body)
        assert status == 201, (status, answer)
        markers.append(json.loads(answer)["blockId"])
    rss0 = rss_anon_kib(node.pid)
    t0 = time.monotonic()
    subprocess.run([load, "--url", base, "--scenario", "submit-binary", "--connections", "64",
                    "--requests", str(blocks), "--duration", "600"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    fill_s = time.monotonic() - t0
    # Every block referenced and more than below-max-depth (15) milestones old.
    time.sleep(25)
    rss1 = rss_anon_kib(node.pid)
    block_paths = [f"/api/core/v2/blocks/{b}" for b in markers]
    meta_paths = [f"/api/core/v2/blocks/{b}/metadata" for b in markers]
    output_paths = ["/api/core/v2/outputs/0x" + "00" * 34] * 2000
    timed_gets(port, block_paths + meta_paths + output_paths)
    get_block = percentiles(timed_gets(port, block_paths))
    get_meta = percentiles(timed_gets(port, meta_paths))
    get_output = percentiles(timed_gets(port, output_paths))
    with open(os.path.join(work, "node.log"), errors="replace") as f:
        lines = [l for l in f.read().splitlines() if "milestone confirmed" in l]
    took, loaded = [], []
    for line in lines:
        t = re.search(r"took_ms\W+([0-9.]+)", line)
        r = re.search(r"referenced\W+([0-9]+)", line)
        if t:
            took.append(float(t.group(1)))
            if r and int(r.group(1)) >= 1000:
                loaded.append(float(t.group(1)))
    confirm = percentiles(took)
    confirm_loaded = percentiles(loaded)
    node.send_signal(signal.SIGTERM)
    node.wait(120)
    node = start(binary, data, port)
    t_spawn = time.monotonic()
    wait_until(lambda: http("GET", f"{base}/api/core/v2/info")[0] == 200, 600)
    to_info = time.monotonic() - t_spawn
    wait_until(lambda: http("POST", f"{base}/api/core/v2/blocks", TAGGED)[0] == 201, 600)
    to_submit = time.monotonic() - t_spawn
    time.sleep(3)
    rss_restarted = rss_anon_kib(node.pid)
    node.send_signal(signal.SIGTERM)
    node.wait(120)
    return {
        "blocks": blocks, "fill_s": round(fill_s, 1),
        "rss_before_mib": round(rss0 / 1024, 1), "rss_after_mib": round(rss1 / 1024, 1),
        "growth_b_per_block": round((rss1 - rss0) * 1024 / blocks, 1),
        "restart_to_info_s": round(to_info, 3), "restart_to_submit_s": round(to_submit, 3),
        "rss_after_restart_mib": round(rss_restarted / 1024, 1),
        "get_old_block_ms_p50_p99": get_block, "get_old_block_metadata_ms_p50_p99": get_meta,
        "get_output_ms_p50_p99": get_output,
        "milestones": len(took), "confirm_ms_p50_p99": confirm,
        "loaded_milestones": len(loaded), "confirm_loaded_ms_p50_p99": confirm_loaded,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--old", help="the old binary (omit to measure only the new one)")
    p.add_argument("--new", required=True)
    p.add_argument("--load", required=True)
    p.add_argument("--blocks", type=int, nargs="+", default=[1_000_000, 5_000_000])
    a = p.parse_args()
    for blocks in a.blocks:
        for name, binary in (("old", a.old), ("new", a.new)):
            if binary is None:
                continue
            work = tempfile.mkdtemp(prefix="restart-bench-")
            try:
                row = run_one(binary, a.load, blocks, work)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            print(json.dumps({"binary": name, **row}), flush=True)


if __name__ == "__main__":
    main()
