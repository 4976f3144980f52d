"""The official wallet on a follower node: two nodes peered over libp2p on loopback, A running
the coordinator (a milestone every second) and B following it (`--no-coordinator
--coordinator-public-keys <A's key> --peer <A>`). The wallet talks to B only: its blocks reach
A by gossip, A's milestones reach B by gossip, and both nodes end with the same ledger.
"""

from __future__ import annotations

import json

import pytest
from iota_sdk import ClientOptions, MnemonicSecretManager, SendParams, Wallet

from conftest import (
    COIN_TYPE,
    TEST_MNEMONIC,
    peered_pair,
    wait_for,
)


def confirmed(node) -> int:
    info = json.loads(node.request("GET", "/api/core/v2/info").body)
    return info["status"]["confirmedMilestone"]["index"]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    for a, b, _ in peered_pair(tmp_path_factory, "peered"):
        yield a, b


def test_wallet_on_a_follower_sends_through_gossip_and_both_ledgers_agree(pair, tmp_path):
    a, b = pair
    wait_for("B to follow A's milestones", lambda: confirmed(b) >= max(2, confirmed(a) - 1))
    w = Wallet(
        str(tmp_path / "db"),
        ClientOptions(nodes=[b.url]),
        COIN_TYPE,
        MnemonicSecretManager(TEST_MNEMONIC),
    )
    try:
        alice = w.create_account("alice")
        bob = w.create_account("bob")
        alice.sync()
        tx = alice.send_with_params(
            [SendParams(address=bob.addresses()[0].address, amount="1000000")]
        )
        alice.retry_transaction_until_included(tx.transactionId)
        assert int(bob.sync().baseCoin.available) == 1_000_000
    finally:
        w.destroy()

    # The transaction went in through B; A, which issued the milestone, has it too, in the
    # same block, and both nodes agree on the ledger at B's index.
    path = f"/api/core/v2/transactions/{tx.transactionId}/included-block"
    on_b = b.request("GET", path)
    assert on_b.status == 200, on_b.body
    on_a = wait_for("A to answer for the transaction", lambda: (r := a.request("GET", path)).status == 200 and r)
    assert on_a.body == on_b.body
    index = confirmed(b)
    wait_for("A to reach B's index", lambda: confirmed(a) >= index)
    for route in (
        f"/api/core/v2/milestones/by-index/{index}",
        f"/api/core/v2/milestones/by-index/{index}/utxo-changes",
        f"/api/explorer/v2/ledger/richest-addresses?top=100&ledgerIndex={index}",
    ):
        ra, rb = a.request("GET", route), b.request("GET", route)
        assert ra.status == rb.status == 200, (route, ra.status, rb.status)
        assert ra.body == rb.body, route
