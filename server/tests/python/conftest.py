"""Fixtures for the official-client test: a real `ledger-node` process on an ephemeral port.

The binary comes from `LEDGER_NODE_BIN` (scripts/test-all sets it after building); without it
the debug build under the repository's `target/` is used. When a test fails, the tail of the
node's log is attached to the failure report.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Tuple

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]

# Generous bounds for a loaded 2-core machine; they only stop a hang, they assert no speed.
STARTUP_TIMEOUT_S = 120
SHUTDOWN_TIMEOUT_S = 60
HTTP_TIMEOUT_S = 60

LOG_TAIL_LINES = 60


def node_binary() -> Path:
    """The ledger-node binary under test."""
    env = os.environ.get("LEDGER_NODE_BIN")
    path = Path(env) if env else REPO_ROOT / "target" / "debug" / "ledger-node"
    if not path.is_file():
        pytest.fail(
            f"ledger-node binary not found at {path}; build it with "
            "`cargo build -p ledger-server --bin ledger-node` or set LEDGER_NODE_BIN",
            pytrace=False,
        )
    return path


@dataclass
class HttpReply:
    """A plain HTTP answer: status, headers (lower-case names), body."""

    status: int
    headers: Dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The body parsed as JSON."""
        try:
            return json.loads(self.body)
        except ValueError as e:
            raise AssertionError(
                f"body is not JSON ({e}): status {self.status}, body {self.body[:500]!r}"
            ) from e


@dataclass
class Node:
    """A running ledger-node with its own data dir."""

    process: subprocess.Popen
    url: str
    data_dir: Path
    log_path: Path
    binary: Path
    _token: Optional[str] = field(default=None, repr=False)

    def request(
        self,
        method: str,
        path: str,
        body: Optional[bytes] = None,
        headers: Optional[Dict[str, str]] = None,
    ) -> HttpReply:
        """Sends one request with urllib; HTTP error statuses are returned, not raised."""
        req = urllib.request.Request(
            self.url + path, data=body, method=method, headers=headers or {}
        )
        try:
            with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT_S) as resp:
                return HttpReply(
                    resp.status,
                    {k.lower(): v for k, v in resp.headers.items()},
                    resp.read(),
                )
        except urllib.error.HTTPError as e:
            return HttpReply(
                e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()
            )

    def post_json(
        self, path: str, value: Any, headers: Optional[Dict[str, str]] = None
    ) -> HttpReply:
        """POSTs `value` as `application/json`."""
        all_headers = {"Content-Type": "application/json", "Accept": "application/json"}
        all_headers.update(headers or {})
        return self.request("POST", path, json.dumps(value).encode(), all_headers)

    def token(self) -> str:
        """A token for protected routes, from `ledger-node tools jwt --data-dir DIR`."""
        if self._token is None:
            out = subprocess.run(
                [str(self.binary), "tools", "jwt", "--data-dir", str(self.data_dir)],
                capture_output=True,
                text=True,
                timeout=HTTP_TIMEOUT_S,
                env=_node_env(),
                check=False,
            )
            assert out.returncode == 0, f"tools jwt failed: {out.stderr}"
            token = out.stdout.strip()
            assert token.count(".") == 2, f"not a JWT: {out.stdout!r}"
            self._token = token
        return self._token

    def issue_milestone(self) -> Dict[str, Any]:
        """`POST /api/core/v2/control/milestone`; returns `{"index","milestoneId","blockId"}`."""
        reply = self.request(
            "POST",
            "/api/core/v2/control/milestone",
            b"",
            {"Authorization": f"Bearer {self.token()}", "Accept": "application/json"},
        )
        assert reply.status == 200, (
            f"control/milestone answered {reply.status}: {reply.body[:500]!r}"
        )
        body = reply.json()
        assert set(body) >= {"index", "milestoneId", "blockId"}, body
        return body

    def log_tail(self) -> str:
        """The last lines of the node's log (stderr)."""
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError as e:
            return f"(cannot read {self.log_path}: {e})"
        return "\n".join(lines[-LOG_TAIL_LINES:])


def _node_env() -> Dict[str, str]:
    """The environment for the node: ours without LEDGER_NODE_* settings, plain logs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEDGER_NODE_")}
    env["RUST_LOG"] = "info"
    env["NO_COLOR"] = "1"
    return env


def _pump_lines(stdout, lines: "queue.Queue[Optional[str]]") -> None:
    for line in stdout:
        lines.put(line)
    lines.put(None)


def start_node(
    data_dir: Path,
    log_path: Path,
    coordinator_interval: str = "0",
    extra_args: Sequence[str] = (),
) -> Node:
    """Starts ledger-node on 127.0.0.1:0 and waits for its address; milestones on demand
    unless `coordinator_interval` (seconds) says otherwise; `extra_args` are added to the
    command line."""
    binary = node_binary()
    log = open(log_path, "wb")  # pylint: disable=consider-using-with
    process = subprocess.Popen(  # pylint: disable=consider-using-with
        [
            str(binary),
            "--data-dir",
            str(data_dir),
            "--api-bind",
            "127.0.0.1:0",
            "--metrics-bind",
            "127.0.0.1:0",
            "--p2p-bind",
            "/ip4/127.0.0.1/tcp/0",
            "--coordinator-interval",
            coordinator_interval,
            *extra_args,
        ],
        stdout=subprocess.PIPE,
        stderr=log,
        env=_node_env(),
        text=True,
    )
    log.close()
    lines: "queue.Queue[Optional[str]]" = queue.Queue()
    threading.Thread(target=_pump_lines, args=(process.stdout, lines), daemon=True).start()
    seen = []
    while True:
        try:
            line = lines.get(timeout=STARTUP_TIMEOUT_S)
        except queue.Empty:
            process.kill()
            pytest.fail(f"ledger-node printed no address within {STARTUP_TIMEOUT_S}s")
        if line is None:
            process.wait(timeout=SHUTDOWN_TIMEOUT_S)
            pytest.fail(
                f"ledger-node exited ({process.returncode}) before listening; "
                f"stdout {seen!r}; log:\n{log_path.read_text(errors='replace')}"
            )
        seen.append(line)
        if line.startswith("listening on http://"):
            url = line.strip().removeprefix("listening on ")
            return Node(process, url, data_dir, log_path, binary)


def stop_node(node: Node) -> Tuple[int, str]:
    """SIGTERM, then wait; returns the exit code and the log tail."""
    if node.process.poll() is None:
        node.process.send_signal(signal.SIGTERM)
        try:
            node.process.wait(timeout=SHUTDOWN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            node.process.kill()
            node.process.wait()
            return -9, node.log_tail()
    return node.process.returncode, node.log_tail()


_RUNNING: Dict[str, Node] = {}


# The public test mnemonic whose first address owns the dev genesis output (README), and the
# coin type of the dev network's addresses.
TEST_MNEMONIC = " ".join(["abandon"] * 23 + ["art"])
COIN_TYPE = 4219


def module_node(tmp_path_factory, coordinator_interval: str = "0"):
    """Runs a fresh node for a module-scoped fixture (`yield from` it); on teardown it must
    shut down cleanly (exit 0) on SIGTERM and must not have panicked."""
    base = tmp_path_factory.mktemp("ledger-node")
    started = start_node(base / "data", base / "node.log", coordinator_interval)
    _RUNNING["node"] = started
    yield started
    _RUNNING.pop("node", None)
    code, tail = stop_node(started)
    assert code == 0, f"ledger-node exited with {code} on SIGTERM; log tail:\n{tail}"
    log = started.log_path.read_text(errors="replace")
    assert "panicked" not in log, f"ledger-node panicked; log:\n{log}"


@pytest.fixture(scope="module")
def node(tmp_path_factory) -> Node:
    """A fresh node for the module, milestones on demand."""
    yield from module_node(tmp_path_factory)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):  # pylint: disable=unused-argument
    """Attaches the node's log tail to failed tests."""
    report = yield
    running = _RUNNING.get("node")
    if report.failed and running is not None:
        report.sections.append(("ledger-node log (tail)", running.log_tail()))
    return report


# Helpers of the tests that peer two nodes (test_wallet_peered.py, test_dashboard.py).
# Bounds only stop a hang on a loaded 2-core machine; they assert no speed.
PEERING_TIMEOUT_S = 60


def wait_for(what: str, check, timeout: float = PEERING_TIMEOUT_S):
    """Polls `check` until it returns something truthy, and returns that."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def first_line(path) -> str:
    """The first line of a file a node writes, once it is there (e.g. `listen.addrs`)."""
    def read():
        try:
            return path.read_text().splitlines()[0]
        except (OSError, IndexError):
            return None
    return wait_for(f"{path}", read)


def coordinator_key(node) -> str:
    """The built-in coordinator's public key, from the node's log line."""
    def read():
        m = re.search(r"public_key=(0x[0-9a-f]{64})", node.log_path.read_text(errors="replace"))
        return m.group(1) if m else None
    return wait_for("the coordinator's public key in the log", read)


def peered_pair(tmp_path_factory, name: str):
    """Node A (coordinator, a milestone a second) and node B (follows A's coordinator, peered
    with A): yields (a, b, b's peer id) once, then stops both and checks that they exited
    cleanly without a panic."""
    base = tmp_path_factory.mktemp(name)
    a = start_node(base / "a", base / "a.log", "1")
    _RUNNING["node"] = a
    a_addr = first_line(base / "a" / "p2pstore" / "listen.addrs")
    b = start_node(
        base / "b",
        base / "b.log",
        "0",
        [
            "--no-coordinator",
            "--coordinator-public-keys",
            coordinator_key(a),
            "--peer",
            a_addr,
            "--peer-alias",
            "A",
            "--p2p-reconnect-interval",
            "1",
        ],
    )
    b_id = first_line(base / "b" / "p2pstore" / "listen.addrs").rsplit("/p2p/", 1)[1]
    yield a, b, b_id
    _RUNNING.pop("node", None)
    for node in (b, a):
        code, tail = stop_node(node)
        assert code == 0, f"{node.log_path} exited with {code}; log tail:\n{tail}"
        assert "panicked" not in node.log_path.read_text(errors="replace")
