"""The dashboard (issue 27) in a real headless Chromium against real nodes: A runs the
coordinator (a milestone every second) and takes a trickle of tagged-data blocks, B follows A
over libp2p. The page is opened on A.

Checked: the page loads with no console error and requests nothing from another origin; the
confirmed milestone it shows equals /info's within one; the blocks-per-second chart has at
least five points; the peer list says a token is needed without one and, with A's token
pasted, shows B connected and synced; a search for a block id posted here opens its view with
the right id and inclusion state; screenshots at 1280x800 and 390x844 (light, and dark at
1280x800, and the whole page at 1280 wide) are written to the output folder and are not blank.

Screenshots go to `LEDGER_TEST_OUTPUT/dashboard/` (default: `target/test-output/dashboard/`).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from browser import Browser, blank_report, chromium_binary, other_origin_requests
from conftest import (
    REPO_ROOT,
    peered_pair,
    wait_for,
)

TRICKLE_EVERY_S = 0.3
SIZES = [("1280x800", 1280, 800, False), ("390x844", 390, 844, True)]


def output_dir() -> Path:
    base = os.environ.get("LEDGER_TEST_OUTPUT")
    return (Path(base) if base else REPO_ROOT / "target" / "test-output") / "dashboard"


def info(node) -> dict:
    return node.request("GET", "/api/core/v2/info").json()


def post_tagged(node, n: int) -> str:
    payload = {"type": 5, "tag": "0x" + b"dashboard".hex(), "data": "0x" + f"{n:08x}"}
    reply = node.post_json("/api/core/v2/blocks", {"protocolVersion": 2, "payload": payload})
    assert reply.status == 201, f"submit answered {reply.status}: {reply.body[:300]!r}"
    return reply.json()["blockId"]


class Trickle:
    """Posts a tagged-data block to `node` every TRICKLE_EVERY_S until stopped."""

    def __init__(self, node):
        self.node = node
        self.ids: list[str] = []
        self.error: Exception | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            try:
                self.ids.append(post_tagged(self.node, n))
            except Exception as e:  # pylint: disable=broad-except
                self.error = e
                return
            n += 1
            self._stop.wait(TRICKLE_EVERY_S)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=60)
        assert self.error is None, f"the trickle failed: {self.error}"


@pytest.fixture(scope="module")
def chromium():
    binary = chromium_binary()
    if not binary:
        pytest.fail(
            "chromium not found: the dashboard test needs Debian's `chromium` package "
            "(scripts/test-all installs it; or set CHROMIUM_BIN)",
            pytrace=False,
        )
    browser = Browser(binary)
    yield browser
    browser.close()


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    yield from peered_pair(tmp_path_factory, "dashboard")


def text(browser: Browser, selector: str) -> str:
    return browser.evaluate(
        f"(document.querySelector({json.dumps(selector)}) || {{}}).textContent || ''"
    )


def shown_index(browser: Browser, selector: str) -> int | None:
    digits = text(browser, selector).replace(",", "")
    return int(digits) if digits.isdigit() else None


def test_dashboard_in_a_real_browser(chromium, pair):
    a, _b, b_id = pair
    browser = chromium
    trickle = Trickle(a)
    try:
        browser.viewport(1280, 800)
        browser.open(a.url + "/")
        assert browser.evaluate("document.title") == "ledger-node dashboard"

        # Live figures: the confirmed milestone as /info has it (within one), and at least
        # five points on the blocks-per-second chart after a few seconds.
        wait_for("a confirmed milestone on the page", lambda: shown_index(browser, "#cmi"))

        def cmi_matches():
            shown = shown_index(browser, "#cmi")
            actual = info(a)["status"]["confirmedMilestone"]["index"]
            return shown is not None and abs(actual - shown) <= 1 and (shown, actual)

        wait_for("the page's CMI to equal /info's within one", cmi_matches)
        points = browser.wait_for(
            "five points on the blocks chart",
            "Number(document.querySelector('#chart-blocks').dataset.points) >= 5 && "
            "Number(document.querySelector('#chart-blocks').dataset.points)",
        )
        assert points >= 5
        assert browser.evaluate("document.querySelectorAll('#chart-blocks canvas').length") >= 1
        # The trickle shows on the chart as blocks per second above zero.
        assert "blk/s received" in text(browser, "#now-blocks")
        received = browser.wait_for(
            "the received rate to show the trickle",
            "(() => { const t = document.querySelector('#now-blocks').textContent;"
            " const v = parseFloat(t); return v > 0 && v; })()",
        )
        assert received > 0

        # Peers: without a token, the page says one is needed and lists nobody.
        assert browser.evaluate("document.querySelector('#peers').dataset.state") == "token-needed"
        assert "token needed" in text(browser, "#peers-note").lower()
        assert browser.evaluate("document.querySelectorAll('#peers-table tbody tr').length") == 0

        # With A's token pasted: B is listed, connected and synced.
        browser.type_into("#token-input", a.token())
        browser.press_enter()
        row = f"#peers-table tr[data-peer-id={json.dumps(b_id)}]"
        browser.wait_for(
            "B connected and synced in A's peer list",
            f"(() => {{ const r = document.querySelector({json.dumps(row)});"
            " return r && r.dataset.connected === 'true' && r.dataset.synced === 'true'; })()",
        )
        assert browser.evaluate("document.querySelector('#peers').dataset.state") == "listed"
        # The token is kept in the tab's session storage, never in the URL.
        assert browser.evaluate("sessionStorage.getItem('ledger-node.api-token')") == a.token()
        assert a.token() not in browser.evaluate("location.href")
        assert not [u for u in browser.requested_urls() if a.token() in u]

        # The whole page with the peer listed (README's docs/dashboard.png is one of these).
        height = browser.evaluate("document.documentElement.scrollHeight")
        browser.viewport(1280, height)
        browser.pump(1.5)
        full = browser.screenshot(output_dir() / "dashboard-1280-full-light.png")
        problem = blank_report(full)
        assert problem is None, f"the full page looks blank: {problem}"
        browser.viewport(1280, 800)

        # Search: a block posted here, once referenced, opens its view with its id and state.
        block_id = trickle.ids[0]
        meta = wait_for(
            "the first trickled block to be referenced",
            lambda: (m := a.request("GET", f"/api/core/v2/blocks/{block_id}/metadata").json())
            .get("ledgerInclusionState")
            and m,
        )
        browser.type_into("#search-input", block_id)
        browser.press_enter()
        browser.wait_for(
            "the block view",
            "(() => { const d = document.querySelector('#detail');"
            " return !d.hidden && d.dataset.kind === 'block' && d.dataset.state === 'shown'; })()",
        )
        assert text(browser, "#detail-facts [data-key=blockId]") == block_id
        assert text(browser, "#detail-facts [data-key=inclusion]") == meta["ledgerInclusionState"]
        assert meta["ledgerInclusionState"] == "noTransaction"
        shown_json = json.loads(text(browser, "#detail-json"))
        assert shown_json["metadata"]["blockId"] == block_id

        # Back to the overview (Escape), then screenshots at both sizes.
        browser.call(
            "Input.dispatchKeyEvent", type="keyDown", key="Escape", code="Escape",
            windowsVirtualKeyCode=27,
        )
        browser.wait_for("the overview", "!document.querySelector('#overview').hidden")
        out = output_dir()
        shots = []
        backgrounds = {}
        for scheme in ("light", "dark"):
            browser.color_scheme(scheme)
            for name, width, height, mobile in SIZES:
                if scheme == "dark" and mobile:
                    continue
                browser.viewport(width, height, mobile)
                # Let the charts take the new size and a fresh poll land.
                browser.pump(1.5)
                browser.wait_for(
                    f"the page at {name}",
                    f"document.documentElement.clientWidth === {width}",
                )
                # Readable at this size: nothing wider than the screen (wide tables scroll
                # inside their panel), and the colours of the scheme asked for.
                assert browser.evaluate("document.documentElement.scrollWidth") <= width, name
                backgrounds[scheme] = browser.evaluate(
                    "getComputedStyle(document.body).backgroundColor"
                )
                path = out / f"dashboard-{name}-{scheme}.png"
                data = browser.screenshot(path)
                shots.append(path)
                problem = blank_report(data)
                assert problem is None, f"{path} looks blank: {problem}"
        assert all(p.stat().st_size > 0 for p in shots)
        assert backgrounds["light"] != backgrounds["dark"], backgrounds
        print(f"screenshots: {', '.join(str(p) for p in shots)}")

        # A few more seconds of polling, then nothing the page did may have logged an error
        # or gone to another origin.
        browser.pump(2)
    finally:
        trickle.stop()
    errors = browser.console_errors()
    assert not errors, "console errors:\n" + "\n".join(errors)
    urls = browser.requested_urls()
    assert any(u.endswith("/api/dashboard/v1/stats") for u in urls), urls
    assert not other_origin_requests(urls, a.url), other_origin_requests(urls, a.url)
    # Every request the page made is to one of the node's own routes.
    assert all(u.startswith(a.url + "/") for u in urls), urls
