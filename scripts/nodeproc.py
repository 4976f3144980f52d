"""Real `ledger-node` processes on loopback, for the stdlib benchmark and soak scripts.

One copy of what they share: starting a node on a fresh data dir and waiting for its API, its
JWT, its peering address and coordinator key, its confirmed milestone, stopping it.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from typing import List, Optional, Tuple


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method: str, url: str, body: Optional[bytes] = None, timeout: float = 30) -> Tuple[int, bytes]:
    """One request (a body is sent as JSON): the status and body, an error status included;
    a connection that fails raises OSError."""
    req = urllib.request.Request(url, data=body, method=method)
    if body is not None:
        req.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def get(port: int, path: str, token: str = "") -> bytes:
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
    if token:
        req.add_header("authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read()


def parser(description: str) -> argparse.ArgumentParser:
    """An argument parser with the --bin every script takes."""
    ap = argparse.ArgumentParser(description=description.splitlines()[0])
    ap.add_argument("--bin", required=True, help="the ledger-node binary (ledger-load beside it)")
    return ap


def binaries_and_root(bin_arg: str, prefix: str) -> Tuple[str, str, str]:
    """The node binary, the `ledger-load` beside it, and a fresh directory for the run."""
    binary = os.path.abspath(bin_arg)
    return binary, os.path.join(os.path.dirname(binary), "ledger-load"), tempfile.mkdtemp(prefix=prefix)


def follower_args(key: str, peer: str) -> List[str]:
    """Flags for a node that follows the coordinator `key` over gossip from `peer`."""
    return ["--no-coordinator", "--coordinator-public-keys", key, "--peer", peer]


class NodeProcess:
    """A node started on its own data dir below `root`, logging to `root/<name>.log`."""

    def __init__(self, binary: str, root: str, name: str, args: List[str],
                 api: Optional[int] = None, p2p: Optional[int] = None) -> None:
        self.binary, self.name, self.args = binary, name, args
        self.api = api or free_port()
        self.p2p = p2p or free_port()
        self.data = os.path.join(root, name)
        self.log = os.path.join(root, f"{name}.log")
        self.restarts = 0
        self.start()

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(  # pylint: disable=consider-using-with
                [self.binary, "run", "--data-dir", self.data,
                 "--api-bind", f"127.0.0.1:{self.api}", "--no-metrics",
                 "--p2p-bind", f"/ip4/127.0.0.1/tcp/{self.p2p}",
                 "--p2p-reconnect-interval", "1"] + self.args,
                stdout=subprocess.PIPE, stderr=log)
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith(b"listening on"):
                break
        self.token = subprocess.run([self.binary, "tools", "jwt", "--data-dir", self.data],
                                    capture_output=True, text=True, check=True).stdout.strip()

    def kill_and_restart(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self.restarts += 1
        self.start()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def addr(self) -> str:
        """The peering multiaddr the node wrote to its p2pstore."""
        path = os.path.join(self.data, "p2pstore", "listen.addrs")
        for _ in range(200):
            if os.path.exists(path) and os.path.getsize(path):
                with open(path, encoding="utf-8") as f:
                    return f.readline().strip()
            time.sleep(0.05)
        raise RuntimeError(f"{self.name}: no listen.addrs")

    def peer_id(self) -> str:
        return self.addr().rsplit("/p2p/", 1)[1]

    def coordinator_key(self) -> str:
        """The built-in coordinator's public key, from the node's log."""
        with open(self.log, encoding="utf-8", errors="replace") as f:
            for line in f:
                if "public_key=0x" in line:
                    return line.split("public_key=")[1].split()[0]
        raise RuntimeError(f"{self.name}: no coordinator key in the log")

    def confirmed(self) -> int:
        info = json.loads(get(self.api, "/api/core/v2/info"))
        return info["status"]["confirmedMilestone"]["index"]

    def log_count(self, level: str) -> int:
        with open(self.log, encoding="utf-8", errors="replace") as f:
            return sum(1 for line in f if f" {level} " in line)
