"""The event API (TIP-28, MQTT over WebSocket at /api/mqtt/v1, docs/events.md) with the
official client (`Client.listen_mqtt`, the recipe of docs/events.md §3.5) and with paho-mqtt over
websockets (§4).

The node runs with a milestone every second, so consecutive milestones arrive while the tests
wait.
"""

from __future__ import annotations

import hashlib
import json
import queue
import threading
import time
import urllib.parse
from typing import Any, Callable, List, Tuple

import paho.mqtt.client as mqtt
import pytest
from iota_sdk import (
    Block,
    Client,
    ClientOptions,
    MnemonicSecretManager,
    SendParams,
    TaggedDataPayload,
    Utils,
    Wallet,
    utf8_to_hex,
)

from conftest import COIN_TYPE, TEST_MNEMONIC, module_node

WAIT_S = 60


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    """A milestone every second."""
    yield from module_node(tmp_path_factory, coordinator_interval="1")


class Events:
    """What a listener received: (topic, payload) pairs in order, on a queue."""

    def __init__(self) -> None:
        self.queue: "queue.Queue[Tuple[str, Any]]" = queue.Queue()
        self.seen: List[Tuple[str, Any]] = []
        # Received but not yet returned by `until` (messages of two topics may interleave).
        self.unclaimed: List[Tuple[str, Any]] = []

    def sdk_handler(self, event: Any) -> None:
        """The official client's callback: a str JSON-encoded twice (§3.4). Never raises."""
        try:
            value = event
            while isinstance(value, str):
                value = json.loads(value)
            payload = value["payload"]
            if isinstance(payload, str):
                try:
                    payload = json.loads(payload)
                except ValueError:
                    pass
            self.queue.put((value["topic"], payload))
        except Exception as e:  # pylint: disable=broad-except
            self.queue.put(("<handler error>", repr(e)))

    def until(self, topic: str, want: Callable[[Any], bool] = lambda _: True) -> Any:
        """The first payload on `topic` satisfying `want` not returned before, whether it came
        before this call (while waiting for another topic) or comes within WAIT_S."""
        for i, (t, p) in enumerate(self.unclaimed):
            if t == topic and want(p):
                del self.unclaimed[i]
                return p
        deadline = time.monotonic() + WAIT_S
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                pytest.fail(f"no {topic} within {WAIT_S}s; saw {[t for t, _ in self.seen]}")
            try:
                t, p = self.queue.get(timeout=left)
            except queue.Empty:
                continue
            assert t != "<handler error>", p
            self.seen.append((t, p))
            if t == topic and want(p):
                return p
            self.unclaimed.append((t, p))


def info(node) -> dict:
    return node.request("GET", "/api/core/v2/info").json()


def check_milestone_info(p: dict) -> int:
    assert set(p) == {"index", "timestamp", "milestoneId"}, p
    mid = p["milestoneId"]
    assert mid.startswith("0x") and len(mid) == 66 and mid == mid.lower(), p
    return p["index"]


def test_official_client_gets_milestones_blocks_and_metadata(node):
    client = Client(nodes=[node.url])
    lmi = info(node)["status"]["latestMilestone"]["index"]
    ev = Events()
    client.listen_mqtt(
        [
            "milestone-info/latest",
            "milestone-info/confirmed",
            "blocks",
            "block-metadata/referenced",
        ],
        ev.sdk_handler,
    )
    first = check_milestone_info(ev.until("milestone-info/latest"))
    assert first >= lmi

    payload = TaggedDataPayload(utf8_to_hex("ledger-node"), utf8_to_hex("mqtt"))
    block_id, block = client.submit_payload(payload)
    got = ev.until("blocks", lambda p: Utils.block_id(Block.from_dict(p)) == block_id)
    assert got["protocolVersion"] == 2
    assert 1 <= len(got["parents"]) <= 8
    raw = node.request(
        "GET", f"/api/core/v2/blocks/{block_id}", headers={"accept": "application/vnd.iota.serializer-v1"}
    )
    assert raw.status == 200
    assert "0x" + hashlib.blake2b(raw.body, digest_size=32).hexdigest() == block_id

    meta = ev.until("block-metadata/referenced", lambda p: p["blockId"] == block_id)
    assert meta["isSolid"] is True
    assert meta["referencedByMilestoneIndex"] > lmi
    assert meta["ledgerInclusionState"] == "noTransaction"
    assert isinstance(meta["whiteFlagIndex"], int)
    assert meta["parentBlockIds"] == block.parents

    # Its metadata on block-metadata/{id}: a second block, watched until referenced.
    second_id, _ = client.submit_payload(TaggedDataPayload(utf8_to_hex("ledger-node"), utf8_to_hex("2")))
    own = f"block-metadata/{second_id}"
    # A second listener on its own client: the binding holds the GIL while `listen_mqtt`
    # waits for the client's MQTT lock, which the callback thread of a busy listener holds
    # while it waits for the GIL.
    Client(nodes=[node.url]).listen_mqtt([own], ev.sdk_handler)
    referenced = ev.until(own, lambda p: "referencedByMilestoneIndex" in p)
    assert referenced["blockId"] == second_id and referenced["isSolid"] is True

    # Consecutive milestones, latest and confirmed, strictly increasing.
    confirmed = [check_milestone_info(ev.until("milestone-info/confirmed")) for _ in range(3)]
    assert all(b == a + 1 for a, b in zip(confirmed, confirmed[1:])), confirmed
    latest = [check_milestone_info(p) for t, p in ev.seen if t == "milestone-info/latest"]
    assert all(b > a for a, b in zip(latest, latest[1:])), latest


def test_official_client_sees_a_wallet_transfer(node, tmp_path):
    wallet = Wallet(
        str(tmp_path / "db"), ClientOptions(nodes=[node.url]), COIN_TYPE, MnemonicSecretManager(TEST_MNEMONIC)
    )
    try:
        alice = wallet.create_account("alice")
        bob = wallet.create_account("bob")
        alice.sync()
        bob_address = bob.addresses()[0].address
        client = Client(nodes=[node.url])
        ev = Events()
        by_address = f"outputs/unlock/address/{bob_address}"
        by_plus = f"outputs/unlock/+/{bob_address}"
        # One SUBSCRIBE for all three: the milestone snapshot tells it is in effect.
        client.listen_mqtt([by_address, by_plus, "milestone-info/latest"], ev.sdk_handler)
        ev.until("milestone-info/latest")

        tx = alice.send_with_params([SendParams(address=bob_address, amount="1000000")])
        alice.retry_transaction_until_included(tx.transactionId)

        created = ev.until(by_address, lambda p: p["metadata"]["transactionId"] == tx.transactionId)
        plus = ev.until(by_plus, lambda p: p["metadata"]["transactionId"] == tx.transactionId)
        assert plus == created
        m = created["metadata"]
        assert m["isSpent"] is False
        assert m["milestoneIndexBooked"] == m["ledgerIndex"]
        index = m["outputIndex"]
        rest = node.request(
            "GET", f"/api/core/v2/outputs/{tx.transactionId}{index.to_bytes(2, 'little').hex()}"
        ).json()
        assert created["output"] == rest["output"], (created, rest)

        # The transaction is included by now: the current value on subscribe.
        included = f"transactions/{tx.transactionId}/included-block"
        Client(nodes=[node.url]).listen_mqtt([included], ev.sdk_handler)
        block = ev.until(included)
        assert block["payload"]["type"] == 6
        expected = node.request("GET", f"/api/core/v2/transactions/{tx.transactionId}/included-block").json()
        assert Utils.block_id(Block.from_dict(block)) == Utils.block_id(Block.from_dict(expected))
    finally:
        wallet.destroy()


def test_paho_over_websockets_with_wildcards(node):
    host, port = urllib.parse.urlsplit(node.url).netloc.split(":")
    got: "queue.Queue[mqtt.MQTTMessage]" = queue.Queue()
    granted: "queue.Queue[list]" = queue.Queue()
    # (paho refuses malformed filters itself: SUBACK 0x80 is tested in server/tests/it/mqtt.rs)
    filters = [("milestones", 1), ("blocks/#", 0), ("milestone-info/+", 2)]

    c = mqtt.Client(
        mqtt.CallbackAPIVersion.VERSION2, client_id="paho-test", transport="websockets", protocol=mqtt.MQTTv311
    )
    c.ws_set_options(path="/api/mqtt/v1")
    c.on_connect = lambda client, userdata, flags, rc, props: client.subscribe(filters)
    c.on_subscribe = lambda client, userdata, mid, codes, props: granted.put([int(x.value) for x in codes])
    c.on_message = lambda client, userdata, msg: got.put(msg)
    c.connect(host, int(port), keepalive=60)
    c.loop_start()
    try:
        assert granted.get(timeout=WAIT_S) == [1, 0, 2]
        client = Client(nodes=[node.url])
        block_id, _ = client.submit_payload(TaggedDataPayload(utf8_to_hex("paho"), utf8_to_hex("ws")))
        raw = node.request(
            "GET", f"/api/core/v2/blocks/{block_id}", headers={"accept": "application/vnd.iota.serializer-v1"}
        ).body
        tag_topic = "blocks/tagged-data/" + utf8_to_hex("paho")
        seen = set()
        deadline = time.monotonic() + WAIT_S
        while {"blocks", tag_topic, "milestones", "milestone-info/confirmed"} - seen:
            assert time.monotonic() < deadline, f"saw {sorted(seen)}"
            msg = got.get(timeout=WAIT_S)
            assert msg.retain is False, msg.topic
            if msg.topic in ("blocks", tag_topic) and msg.payload != raw:
                continue  # another block (the coordinator's)
            seen.add(msg.topic)
            if msg.topic == "milestones":
                assert msg.payload[:4] == bytes.fromhex("07000000")
            elif msg.topic.startswith("milestone-info/"):
                check_milestone_info(json.loads(msg.payload))
            elif msg.topic in ("blocks", tag_topic):
                assert "0x" + hashlib.blake2b(msg.payload, digest_size=32).hexdigest() == block_id
    finally:
        c.loop_stop()
        c.disconnect()


def test_paho_sees_the_literal_plus_topic(node):
    """`outputs/unlock/+/{bech32}` arrives on a topic name holding a literal `+` (§1.3)."""
    wallet_dir = node.data_dir.parent / "paho-wallet"
    wallet = Wallet(str(wallet_dir), ClientOptions(nodes=[node.url]), COIN_TYPE, MnemonicSecretManager(TEST_MNEMONIC))
    try:
        alice = wallet.create_account("alice")
        carol = wallet.create_account("carol")
        alice.sync()
        address = carol.addresses()[0].address
        host, port = urllib.parse.urlsplit(node.url).netloc.split(":")
        got: "queue.Queue[str]" = queue.Queue()
        ready = threading.Event()
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, transport="websockets", protocol=mqtt.MQTTv311)
        c.ws_set_options(path="/api/mqtt/v1")
        c.on_connect = lambda client, *_: client.subscribe(f"outputs/unlock/+/{address}", 1)
        c.on_subscribe = lambda *_: ready.set()
        c.on_message = lambda client, userdata, msg: got.put(msg.topic)
        c.connect(host, int(port), keepalive=60)
        c.loop_start()
        try:
            assert ready.wait(WAIT_S)
            tx = alice.send_with_params([SendParams(address=address, amount="1000000")])
            alice.retry_transaction_until_included(tx.transactionId)
            topics = {got.get(timeout=WAIT_S), got.get(timeout=WAIT_S)}
            assert topics == {f"outputs/unlock/+/{address}", f"outputs/unlock/address/{address}"}, topics
        finally:
            c.loop_stop()
            c.disconnect()
    finally:
        wallet.destroy()
