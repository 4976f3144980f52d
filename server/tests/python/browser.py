"""A real headless Chromium driven over the Chrome DevTools Protocol (CDP), for the dashboard test.

Why CDP over a websocket rather than Selenium + chromedriver: the test needs what the page logs
(console errors, uncaught exceptions, CSP and network errors: the `Runtime` and `Log` domains)
and every request it sends (`Network.requestWillBeSent`, to prove no request leaves the node's
origin). CDP gives both directly; WebDriver classic gives neither without vendor extensions.
CDP needs one small pure-Python package (`websocket-client`, pinned in requirements.txt) and
Debian's `chromium` alone, where Selenium would add `chromium-driver` and a larger dependency
closure. Protocol reference: https://chromedevtools.github.io/devtools-protocol/.

The browser is Debian's `chromium` (`CHROMIUM_BIN` overrides the path); scripts/test-all
installs it when it is missing.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import struct
import subprocess
import tempfile
import time
import urllib.request
import zlib
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional
from urllib.parse import urlsplit

import websocket  # websocket-client

from conftest import wait_for

# Bounds only stop a hang on a loaded 2-core machine; they assert no speed.
LAUNCH_TIMEOUT_S = 60
CALL_TIMEOUT_S = 60


def chromium_binary() -> Optional[str]:
    """The Chromium to run: `CHROMIUM_BIN`, else `chromium` on the PATH."""
    return os.environ.get("CHROMIUM_BIN") or shutil.which("chromium")


class CdpError(RuntimeError):
    """A CDP call answered with an error, or a page script threw."""


class Browser:
    """A headless Chromium with one page, its console and network events recorded."""

    def __init__(self, binary: str):
        self.profile = tempfile.TemporaryDirectory(prefix="ledger-dashboard-chromium-")
        self.stderr = open(  # pylint: disable=consider-using-with
            Path(self.profile.name) / "chromium.log", "wb"
        )
        # No sandbox: test containers often run as root, where Chromium's sandbox refuses to
        # start; the browser only opens pages of a node on loopback.
        self.process = subprocess.Popen(  # pylint: disable=consider-using-with
            [
                binary,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                f"--user-data-dir={self.profile.name}",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--disable-default-apps",
                "--mute-audio",
                "--hide-scrollbars",
                "--window-size=1280,800",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=self.stderr,
        )
        port = self._devtools_port()
        page_ws = self._page_websocket(port)
        self.ws = websocket.create_connection(
            page_ws, timeout=CALL_TIMEOUT_S, suppress_origin=True
        )
        self._next_id = 0
        self.events: List[Dict[str, Any]] = []
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")

    def _devtools_port(self) -> int:
        """The port Chromium chose, from `DevToolsActivePort` in its profile."""
        marker = Path(self.profile.name) / "DevToolsActivePort"
        deadline = time.monotonic() + LAUNCH_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise CdpError(f"chromium exited ({self.process.returncode}): {self.log_tail()}")
            try:
                first = marker.read_text().splitlines()[0]
                return int(first)
            except (OSError, IndexError, ValueError):
                time.sleep(0.1)
        raise CdpError(f"chromium opened no DevTools port: {self.log_tail()}")

    @staticmethod
    def _page_websocket(port: int) -> str:
        deadline = time.monotonic() + LAUNCH_TIMEOUT_S
        while time.monotonic() < deadline:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{port}/json/list", timeout=CALL_TIMEOUT_S
            ) as resp:
                targets = json.loads(resp.read())
            pages = [t for t in targets if t.get("type") == "page"]
            if pages:
                return pages[0]["webSocketDebuggerUrl"]
            time.sleep(0.1)
        raise CdpError("chromium has no page target")

    def log_tail(self) -> str:
        """The end of Chromium's own stderr."""
        try:
            return (Path(self.profile.name) / "chromium.log").read_text(errors="replace")[-3000:]
        except OSError as e:
            return f"(no log: {e})"

    def close(self) -> None:
        """Ends the browser and removes its profile."""
        try:
            self.ws.close()
        except Exception:  # pylint: disable=broad-except
            pass
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.stderr.close()
        self.profile.cleanup()

    # --- the protocol ------------------------------------------------------------------------

    def _receive(self) -> Dict[str, Any]:
        message = json.loads(self.ws.recv())
        if "method" in message:
            self.events.append(message)
        return message

    def call(self, method: str, **params: Any) -> Dict[str, Any]:
        """Sends one command and returns its result; events read meanwhile are recorded."""
        self._next_id += 1
        call_id = self._next_id
        self.ws.send(json.dumps({"id": call_id, "method": method, "params": params}))
        while True:
            message = self._receive()
            if message.get("id") == call_id:
                if "error" in message:
                    raise CdpError(f"{method}: {message['error']}")
                return message.get("result", {})

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises are awaited)."""
        result = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise CdpError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, what: str, expression: str, timeout: float = 60) -> Any:
        """Polls `expression` until it is truthy; returns its value."""
        return wait_for(what, lambda: self.evaluate(expression), timeout)

    def wait_until(self, what: str, check: Callable[[], Any], timeout: float = 60) -> Any:
        """Polls a Python `check` (which may evaluate in the page) until it is truthy."""
        return wait_for(what, check, timeout)

    # --- page actions ------------------------------------------------------------------------

    def open(self, url: str) -> None:
        """Navigates to `url` and waits for the load to complete."""
        self.call("Page.navigate", url=url)
        self.wait_for(f"{url} to load", "document.readyState === 'complete'")

    def viewport(self, width: int, height: int, mobile: bool = False) -> None:
        """Sets the page's size (CSS pixels, scale 1)."""
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=mobile,
        )

    def color_scheme(self, scheme: str) -> None:
        """Emulates `prefers-color-scheme: light` or `dark`."""
        self.call(
            "Emulation.setEmulatedMedia",
            features=[{"name": "prefers-color-scheme", "value": scheme}],
        )

    def type_into(self, selector: str, text: str) -> None:
        """Focuses `selector` and types `text` as keyboard input (as a paste would insert it)."""
        self.evaluate(f"document.querySelector({json.dumps(selector)}).focus()")
        self.call("Input.insertText", text=text)

    def press_enter(self) -> None:
        """Presses and releases Enter in the focused element."""
        for kind in ("keyDown", "keyUp"):
            self.call(
                "Input.dispatchKeyEvent",
                type=kind,
                key="Enter",
                code="Enter",
                windowsVirtualKeyCode=13,
                text="\r" if kind == "keyDown" else "",
            )

    def screenshot(self, path: Path) -> bytes:
        """Writes a PNG of the viewport to `path` and returns its bytes."""
        data = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return data

    # --- what the page did -------------------------------------------------------------------

    def pump(self, seconds: float) -> None:
        """Reads events for `seconds` (the page keeps running meanwhile)."""
        deadline = time.monotonic() + seconds
        self.ws.settimeout(0.2)
        try:
            while time.monotonic() < deadline:
                try:
                    self._receive()
                except websocket.WebSocketTimeoutException:
                    pass
        finally:
            self.ws.settimeout(CALL_TIMEOUT_S)

    def console_errors(self) -> List[str]:
        """Console errors, uncaught exceptions and browser-logged errors (CSP, network)."""
        errors = []
        for e in self.events:
            method, params = e["method"], e.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                errors.append(f"console.{params['type']}: {params.get('args')}")
            elif method == "Runtime.exceptionThrown":
                errors.append(f"exception: {params.get('exceptionDetails')}")
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                entry = params["entry"]
                errors.append(f"{entry.get('source')}: {entry.get('text')} {entry.get('url', '')}")
        return errors

    def requested_urls(self) -> List[str]:
        """Every URL the page requested."""
        return [
            e["params"]["request"]["url"]
            for e in self.events
            if e["method"] == "Network.requestWillBeSent"
        ]


def other_origin_requests(urls: List[str], origin: str) -> List[str]:
    """The URLs of `urls` that go to a network origin other than `origin` (data: and blob:
    URLs stay in the page)."""
    own = urlsplit(origin)
    out = []
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme in ("data", "blob"):
            continue
        if (parts.scheme, parts.netloc) != (own.scheme, own.netloc):
            out.append(url)
    return out


def png_pixels(data: bytes):
    """Decodes an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes): width, height
    and the pixels as one `bytes` per row, `bpp` bytes each (PNG spec, filters 0 to 4)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        chunk = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat.append(chunk)
        elif kind == b"IEND":
            break
    assert header, "no IHDR"
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[i], bytearray(raw[i + 1 : i + 1 + stride])
        i += 1 + stride
        if kind == 1:
            for x in range(bpp, stride):
                line[x] = (line[x] + line[x - bpp]) & 0xFF
        elif kind == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
        elif kind == 3:
            for x in range(stride):
                left = line[x - bpp] if x >= bpp else 0
                line[x] = (line[x] + ((left + prev[x]) >> 1)) & 0xFF
        elif kind == 4:
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                b = prev[x]
                c = prev[x - bpp] if x >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pred) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def blank_report(data: bytes) -> Optional[str]:
    """Why a screenshot looks blank (one colour over nearly all of it, or hardly any colours),
    or None when it shows something."""
    width, height, bpp, rows = png_pixels(data)
    counts: Counter = Counter()
    for row in rows:
        counts.update(row[x : x + bpp] for x in range(0, len(row), bpp))
    total = width * height
    top_share = counts.most_common(1)[0][1] / total
    if len(counts) < 16:
        return f"{width}x{height}: only {len(counts)} colours"
    if top_share > 0.97:
        return f"{width}x{height}: one colour covers {top_share:.1%}"
    return None
