"""The official wallet (iota-sdk `Wallet`) works against the node: it syncs through the
indexer API, sends base tokens, mints an NFT and sends it on, and the receiving account's sync
shows both. The indexer's own answers (by address, by NFT id, paged with a small page size)
agree with what the wallet sees.

The node runs as the README starts it (built-in coordinator, a milestone every second), so the
wallet's flows span many milestones.
"""

from __future__ import annotations

import json
import urllib.parse

import pytest
from iota_sdk import (
    ClientOptions,
    MintNftParams,
    MnemonicSecretManager,
    SendNftParams,
    SendParams,
    Wallet,
    utf8_to_hex,
)

from conftest import COIN_TYPE, TEST_MNEMONIC, module_node

SENT_AMOUNTS = [1_000_000, 2_000_000, 3_000_000]


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    """The README's default node: a milestone every second."""
    yield from module_node(tmp_path_factory, coordinator_interval="1")


@pytest.fixture(scope="module")
def wallet(node, tmp_path_factory):
    path = tmp_path_factory.mktemp("wallet-db")
    w = Wallet(
        str(path / "db"),
        ClientOptions(nodes=[node.url]),
        COIN_TYPE,
        MnemonicSecretManager(TEST_MNEMONIC),
    )
    yield w
    w.destroy()


def indexer(node, path: str, **params) -> dict:
    query = urllib.parse.urlencode(params)
    reply = node.request("GET", f"/api/indexer/v1/{path}?{query}")
    assert reply.status == 200, (path, params, reply.status, reply.body[:300])
    return reply.json()


def all_pages(node, path: str, page_size: int, **params) -> list:
    """Walks every page; checks each holds at most `page_size` items."""
    items, cursor, pages = [], None, 0
    while True:
        q = dict(params, pageSize=page_size)
        if cursor:
            q["cursor"] = cursor
        body = indexer(node, path, **q)
        assert len(body["items"]) <= page_size, body
        assert body["pageSize"] == page_size, body
        items += body["items"]
        pages += 1
        cursor = body.get("cursor")
        if not cursor:
            return items
        assert pages < 100, "paging does not end"


def unspent_ids(account, kind: int) -> set:
    return {
        o.outputId
        for o in account.unspent_outputs()
        if o.output.type == kind
    }


def test_wallet_sends_tokens_and_an_nft_and_the_indexer_agrees(node, wallet):
    info = json.loads(node.request("GET", "/api/core/v2/info").body)
    supply = int(info["protocol"]["tokenSupply"])
    alice = wallet.create_account("alice")
    bob = wallet.create_account("bob")

    balance = alice.sync()
    assert int(balance.baseCoin.total) == supply, balance.baseCoin
    bob_address = bob.addresses()[0].address
    alice_address = alice.addresses()[0].address

    tx = alice.send_with_params(
        [SendParams(address=bob_address, amount=str(a)) for a in SENT_AMOUNTS]
    )
    alice.retry_transaction_until_included(tx.transactionId)
    alice.sync()

    tx = alice.mint_nfts([MintNftParams(immutableMetadata=utf8_to_hex("ledger-node nft"))])
    alice.retry_transaction_until_included(tx.transactionId)
    minted = alice.sync().nfts
    assert len(minted) == 1, minted
    nft_id = minted[0]

    tx = alice.send_nft([SendNftParams(address=bob_address, nftId=nft_id)])
    alice.retry_transaction_until_included(tx.transactionId)

    bob_balance = bob.sync()
    assert bob_balance.nfts == [nft_id], bob_balance.nfts
    assert int(bob_balance.baseCoin.available) == sum(SENT_AMOUNTS), bob_balance.baseCoin
    alice_balance = alice.sync()
    assert alice_balance.nfts == [], alice_balance.nfts
    # Everything not at bob's address is still alice's.
    assert int(alice_balance.baseCoin.total) + int(bob_balance.baseCoin.total) == supply

    # The indexer by address agrees with each account's unspent basic outputs.
    basic = set(indexer(node, "outputs/basic", address=bob_address)["items"])
    assert basic == unspent_ids(bob, 3) and len(basic) == len(SENT_AMOUNTS)
    basic = set(indexer(node, "outputs/basic", address=alice_address)["items"])
    assert basic == unspent_ids(alice, 3) and basic

    # By NFT id: bob's NFT output, which the NFT query by address also finds.
    nft_output = indexer(node, f"outputs/nft/{nft_id}")["items"]
    assert set(nft_output) == unspent_ids(bob, 6), nft_output
    assert indexer(node, "outputs/nft", address=bob_address)["items"] == nft_output
    assert indexer(node, "outputs/nft", address=alice_address)["items"] == []

    # Paged one item at a time, the combined query walks all of bob's outputs exactly once,
    # in the same order as one big page.
    paged = all_pages(node, "outputs", 1, unlockableByAddress=bob_address)
    whole = indexer(node, "outputs", unlockableByAddress=bob_address)["items"]
    assert paged == whole, (paged, whole)
    assert set(paged) == unspent_ids(bob, 3) | unspent_ids(bob, 6)
    assert len(paged) == len(set(paged)) == len(SENT_AMOUNTS) + 1

    # The utxo changes of the milestone that booked the NFT transfer hold bob's NFT output.
    meta = json.loads(
        node.request(
            "GET", f"/api/core/v2/outputs/{nft_output[0]}/metadata"
        ).body
    )
    booked = meta["milestoneIndexBooked"]
    changes = json.loads(
        node.request("GET", f"/api/core/v2/milestones/by-index/{booked}/utxo-changes").body
    )
    assert changes["index"] == booked
    assert nft_output[0] in changes["createdOutputs"], changes
    spent = changes["consumedOutputs"]
    assert spent, changes
    # Spent outputs stay readable, marked spent.
    spent_meta = json.loads(
        node.request("GET", f"/api/core/v2/outputs/{spent[0]}/metadata").body
    )
    assert spent_meta["isSpent"] is True, spent_meta
