"""The official Python client `iota-sdk` 1.1.4, unmodified, against a fresh ledger-node.

The scenario, built up by module-scoped fixtures so each test states one thing:
1. the client connects (`Client(nodes=[url])`, default options: node health is checked, local
   PoW) and accepts the node's `/info`;
2. `MnemonicSecretManager` (the public test mnemonic, IOTA coin type 4219, account 0) owns the
   dev genesis output; the client builds, signs and posts, through its own
   `build_and_post_block` flow (client-side PoW, binary submit), a transaction spending the
   genesis output into several outputs;
3. a milestone confirms it (`POST /api/core/v2/control/milestone`, JWT from `tools jwt`);
4. a second transaction, spending one of the new outputs, is prepared and signed by the client
   and posted as plain JSON (urllib) without `parents` and `nonce`, so the node fills them in;
   a tagged-data block is posted the same way;
5. a second milestone confirms both; then outputs, included blocks, blocks, metadata and
   milestones are read back through the client's own calls, and every id is checked against
   the client's own computation (`Utils.block_id`, `Utils.transaction_id`,
   `Utils.compute_output_id`, signatures over milestone ids via
   `Utils.verify_ed25519_signature`).
"""

from __future__ import annotations

import hashlib
from urllib.parse import urlsplit
from dataclasses import dataclass
from typing import Any, Dict, List

import pytest
from iota_sdk import (
    AddressUnlockCondition,
    Block,
    Client,
    Ed25519Address,
    MetadataFeature,
    MnemonicSecretManager,
    SecretManager,
    TagFeature,
    TaggedDataPayload,
    TransactionPayload,
    Utils,
    utf8_to_hex,
)

from conftest import COIN_TYPE, TEST_MNEMONIC

GENESIS_TRANSACTION_ID = "0x" + "00" * 32
GENESIS_OUTPUT_ID = "0x" + "00" * 34
GENESIS_PUB_KEY_HASH = "0xd18f653d669d2267974caac6ff6254effd5e6c0eeebe3e25944193fbfcafb9c0"
GENESIS_BECH32 = "rms1qrgc7efav6wjyeuhfj4vdlmz2nhl6hnvpmhtu039j3qe87lu47uuqrn3vek"
DEV_NETWORK_NAME = "ledger-dev"
DEV_TOKEN_SUPPLY = 1813620509061365

# Outputs of the first transaction besides the remainder: (address index, amount, feature).
FIRST_OUTPUTS = [
    (1, 1_000_000, None),
    (2, 2_000_000, TagFeature(utf8_to_hex("ledger-node"))),
    (1, 3_000_000, MetadataFeature(utf8_to_hex("official client test"))),
]
# The second transaction spends the first one's output 0 (address 1) into these two.
SECOND_OUTPUTS = [(2, 400_000), (1, 600_000)]

BLOCKS = "/api/core/v2/blocks"


# ---------------------------------------------------------------------------------------------
# Fixtures: the scenario


@pytest.fixture(scope="module")
def client(node) -> Client:
    """The official client with default options, pointed at the node."""
    return Client(nodes=[node.url])


@pytest.fixture(scope="module")
def secret_manager() -> MnemonicSecretManager:
    """The secret manager holding the public test mnemonic."""
    return MnemonicSecretManager(TEST_MNEMONIC)


@pytest.fixture(scope="module")
def addresses(client, secret_manager) -> List[str]:
    """Ed25519 addresses 0..3 of coin type 4219, account 0, as hex pubKeyHash."""
    bech32 = SecretManager(secret_manager).generate_ed25519_addresses(
        coin_type=COIN_TYPE,
        account_index=0,
        start=0,
        end=3,
        bech32_hrp=client.get_bech32_hrp(),
    )
    assert bech32[0] == GENESIS_BECH32, bech32
    return [Utils.bech32_to_hex(a) for a in bech32]


@pytest.fixture(scope="module")
def genesis_output_before(client):
    """The genesis output as the client reads it before anything spends it."""
    return client.get_output(GENESIS_OUTPUT_ID)


@dataclass
class PostedTransaction:
    """A transaction block the test posted, and what the client computes for it."""

    block_id: str
    block: Block  # for node-filled blocks: the block as read back from the node
    payload: TransactionPayload
    transaction_id: str
    output_ids: List[str]
    sent_payload: Dict[str, Any]


def utxo_input(transaction_id: str, index: int) -> Dict[str, Any]:
    """A UTXO input in the client's options shape."""
    return {"type": 0, "transactionId": transaction_id, "transactionOutputIndex": index}


def basic_output(client: Client, address_hex: str, amount: int, feature=None):
    """A basic output built by the client (`buildBasicOutput`)."""
    return client.build_basic_output(
        unlock_conditions=[AddressUnlockCondition(Ed25519Address(address_hex))],
        amount=amount,
        features=[feature] if feature else None,
    )


def output_ids_of(transaction_id: str, payload: TransactionPayload) -> List[str]:
    """The output ids of every output of `payload`, as the client computes them."""
    return [
        repr(Utils.compute_output_id(transaction_id, i))
        for i in range(len(payload.essence.outputs))
    ]


@pytest.fixture(scope="module")
def first_tx(client, secret_manager, addresses, genesis_output_before) -> PostedTransaction:
    """Spends the genesis output through the client's own flow (`build_and_post_block`)."""
    assert not genesis_output_before.metadata.isSpent
    outputs = [
        basic_output(client, addresses[i], amount, feature)
        for i, amount, feature in FIRST_OUTPUTS
    ]
    block_id, block = client.build_and_post_block(
        secret_manager,
        coin_type=COIN_TYPE,
        account_index=0,
        inputs=[utxo_input(GENESIS_TRANSACTION_ID, 0)],
        outputs=outputs,
        tag=utf8_to_hex("ledger-node"),
        data=utf8_to_hex("first transaction"),
    )
    assert isinstance(block.payload, TransactionPayload), block
    transaction_id = Utils.transaction_id(block.payload)
    return PostedTransaction(
        block_id=block_id,
        block=block,
        payload=block.payload,
        transaction_id=transaction_id,
        output_ids=output_ids_of(transaction_id, block.payload),
        sent_payload=block.payload.as_dict(),
    )


@pytest.fixture(scope="module")
def milestone1(node, first_tx) -> Dict[str, Any]:
    """The milestone that confirms the first transaction."""
    return node.issue_milestone()


def post_json_without_parents_and_nonce(node, payload: Dict[str, Any]) -> str:
    """POSTs `{"protocolVersion":2,"payload":…}` as JSON; the node fills parents and nonce."""
    reply = node.post_json(BLOCKS, {"protocolVersion": 2, "payload": payload})
    assert reply.status == 201, f"{reply.status}: {reply.body[:500]!r}"
    block_id = reply.json()["blockId"]
    assert reply.headers.get("location") == block_id, reply.headers
    return block_id


@pytest.fixture(scope="module")
def second_tx(
    node, client, secret_manager, addresses, first_tx, milestone1
) -> PostedTransaction:
    """Spends output 0 of the first transaction; prepared and signed by the client, posted as
    plain JSON without parents and nonce."""
    spent = first_tx.payload.essence.outputs[0]
    assert spent.unlockConditions[0].address.pubKeyHash == addresses[1]
    prepared = client.prepare_transaction(
        secret_manager,
        {
            "coinType": COIN_TYPE,
            "accountIndex": 0,
            "inputs": [utxo_input(first_tx.transaction_id, 0)],
            "outputs": [
                basic_output(client, addresses[i], amount).as_dict()
                for i, amount in SECOND_OUTPUTS
            ],
        },
    )
    payload = SecretManager(secret_manager).sign_transaction(prepared)
    sent = payload.as_dict()
    block_id = post_json_without_parents_and_nonce(node, sent)
    block = client.get_block_data(block_id)
    transaction_id = Utils.transaction_id(payload)
    return PostedTransaction(
        block_id=block_id,
        block=block,
        payload=payload,
        transaction_id=transaction_id,
        output_ids=output_ids_of(transaction_id, payload),
        sent_payload=sent,
    )


@pytest.fixture(scope="module")
def tagged_block(node) -> Dict[str, Any]:
    """A tagged-data block posted as plain JSON without parents and nonce."""
    payload = {
        "type": 5,
        "tag": utf8_to_hex("ledger-node"),
        "data": utf8_to_hex("node-filled parents and nonce"),
    }
    return {"block_id": post_json_without_parents_and_nonce(node, payload), "payload": payload}


@pytest.fixture(scope="module")
def milestone2(node, second_tx, tagged_block) -> Dict[str, Any]:
    """The milestone that confirms the second transaction and the tagged-data block."""
    return node.issue_milestone()


# ---------------------------------------------------------------------------------------------
# Helpers


def assert_block_id(block: Block, block_id: str) -> None:
    """The client's own block id of `block` is `block_id`."""
    assert Utils.block_id(block) == block_id, block
    assert block.id() == block_id


def assert_parents_node_filled(block: Block) -> None:
    """Parents chosen by the node: 1..8, unique, sorted; a nonce is present."""
    assert 1 <= len(block.parents) <= 8, block.parents
    assert block.parents == sorted(set(block.parents)), block.parents
    assert int(block.nonce) >= 0


def milestone_id_of(raw_block: bytes, signature_count: int) -> str:
    """BLAKE2b-256 of the milestone essence, cut out of the block's bytes: the payload after
    its type, without the signature count byte and the 97-byte Ed25519 signature blocks."""
    parent_count = raw_block[1]
    start = 2 + 32 * parent_count
    payload_len = int.from_bytes(raw_block[start : start + 4], "little")
    payload = raw_block[start + 4 : start + 4 + payload_len]
    assert int.from_bytes(payload[:4], "little") == 7, "not a milestone payload"
    assert payload[-(1 + 97 * signature_count)] == signature_count
    essence = payload[4 : len(payload) - 1 - 97 * signature_count]
    return "0x" + hashlib.blake2b(essence, digest_size=32).hexdigest()


# ---------------------------------------------------------------------------------------------
# Tests


def test_client_accepts_node_info(client, node):
    """The client parses `/info` (every field it requires) and counts the node as healthy."""
    info = client.get_node_info(node.url)
    assert info.status.isHealthy
    assert info.supportedProtocolVersions == [2]
    assert info.protocol.version == 2
    assert info.protocol.networkName == DEV_NETWORK_NAME
    assert info.protocol.bech32Hrp == "rms"
    assert int(info.protocol.tokenSupply) == DEV_TOKEN_SUPPLY
    assert "pow" in info.features
    assert client.unhealthy_nodes() == []
    wrapped = client.get_info()
    # The client reports the node as `scheme://host`, without the port.
    parsed = urlsplit(node.url)
    assert wrapped.url == f"{parsed.scheme}://{parsed.hostname}"
    assert wrapped.nodeInfo.protocol.networkName == DEV_NETWORK_NAME
    assert client.get_bech32_hrp() == "rms"
    assert client.get_min_pow_score() == info.protocol.minPowScore
    assert len(client.get_tips()) >= 1


def test_mnemonic_address_owns_the_dev_genesis_output(addresses, genesis_output_before):
    """Address 0 of the test mnemonic is the dev genesis owner; the client reads its output."""
    assert addresses[0] == GENESIS_PUB_KEY_HASH
    out = genesis_output_before
    assert out.metadata.transactionId == GENESIS_TRANSACTION_ID
    assert out.metadata.outputIndex == 0
    assert not out.metadata.isSpent
    assert int(out.output.amount) == DEV_TOKEN_SUPPLY
    assert out.output.unlockConditions[0].address.pubKeyHash == GENESIS_PUB_KEY_HASH


def test_client_flow_posts_the_first_transaction(client, first_tx, genesis_output_before):
    """The block the client built, PoW'd and posted has the id the node returned."""
    assert_block_id(first_tx.block, first_tx.block_id)
    essence = first_tx.payload.essence
    assert [(i.transactionId, i.transactionOutputIndex) for i in essence.inputs] == [
        (GENESIS_TRANSACTION_ID, 0)
    ]
    assert int(essence.networkId) == client.get_network_id()
    # The requested outputs plus the remainder back to address 0.
    assert len(essence.outputs) == len(FIRST_OUTPUTS) + 1
    assert sum(int(o.amount) for o in essence.outputs) == int(
        genesis_output_before.output.amount
    )
    assert len(set(first_tx.output_ids)) == len(essence.outputs)


def test_reposting_the_first_block_returns_its_id(client, first_tx):
    """The client's JSON and binary submits of a known block both answer the same id."""
    # `post_block` serialises `block.__dict__` with `json.dumps`, so the payload goes in as the
    # plain dict of the client's own `as_dict()`.
    as_json = Block(**first_tx.block.as_dict())
    assert client.post_block(as_json) == first_tx.block_id
    raw = Utils.block_bytes(first_tx.block)
    assert client.post_block_raw(list(raw)) == first_tx.block_id


def test_node_fills_parents_and_nonce_of_json_blocks(client, second_tx, tagged_block):
    """JSON blocks without parents and nonce get both from the node; the ids the node
    returned are the client's ids of the stored blocks, whose payloads are unchanged."""
    assert_parents_node_filled(second_tx.block)
    assert_block_id(second_tx.block, second_tx.block_id)
    assert second_tx.block.payload.as_dict() == second_tx.sent_payload
    assert Utils.transaction_id(second_tx.block.payload) == second_tx.transaction_id

    tagged = client.get_block_data(tagged_block["block_id"])
    assert_parents_node_filled(tagged)
    assert_block_id(tagged, tagged_block["block_id"])
    assert tagged.payload.as_dict() == tagged_block["payload"]


def test_outputs_read_back(client, first_tx, second_tx, milestone1, milestone2):
    """Every created output reads back, under the client's output ids, with its metadata."""
    spent_id = first_tx.output_ids[0]
    booked_timestamp = {
        m["index"]: client.get_milestone_by_index(m["index"]).timestamp
        for m in (milestone1, milestone2)
    }
    for tx, booked in ((first_tx, milestone1), (second_tx, milestone2)):
        for index, output_id in enumerate(tx.output_ids):
            got = client.get_output(output_id)
            meta = got.metadata
            assert client.get_output_metadata(output_id) == meta
            assert got.output.as_dict() == tx.payload.essence.outputs[index].as_dict()
            assert meta.blockId == tx.block_id
            assert meta.transactionId == tx.transaction_id
            assert meta.outputIndex == index
            assert meta.milestoneIndexBooked == booked["index"]
            assert meta.milestoneTimestampBooked == booked_timestamp[booked["index"]]
            assert meta.ledgerIndex == milestone2["index"]
            if output_id == spent_id:
                assert meta.isSpent
                assert meta.transactionIdSpent == second_tx.transaction_id
                assert meta.milestoneIndexSpent == milestone2["index"]
            else:
                assert not meta.isSpent, output_id
                assert meta.transactionIdSpent is None


def test_genesis_output_is_spent_by_the_first_transaction(client, first_tx, milestone1):
    """The dev genesis output reads back as spent by the first transaction."""
    meta = client.get_output(GENESIS_OUTPUT_ID).metadata
    assert meta.isSpent
    assert meta.transactionIdSpent == first_tx.transaction_id
    assert meta.milestoneIndexSpent == milestone1["index"]


def test_included_blocks(client, first_tx, second_tx, milestone1, milestone2):
    """`get_included_block` returns, for each transaction, the block that carried it."""
    for tx, milestone in ((first_tx, milestone1), (second_tx, milestone2)):
        included = client.get_included_block(tx.transaction_id)
        assert_block_id(included, tx.block_id)
        assert included.as_dict() == tx.block.as_dict()
        assert Utils.transaction_id(included.payload) == tx.transaction_id
        meta = client.get_included_block_metadata(tx.transaction_id)
        assert meta.blockId == tx.block_id
        assert meta.ledgerInclusionState == "included"
        assert meta.referencedByMilestoneIndex == milestone["index"]


def test_blocks_read_back(client, first_tx, second_tx, tagged_block, milestone2):
    """Blocks read back as JSON and as bytes, with metadata, under the client's ids."""
    blocks = [
        (first_tx.block_id, first_tx.block, "included"),
        (second_tx.block_id, second_tx.block, "included"),
        (tagged_block["block_id"], None, "noTransaction"),
    ]
    for block_id, posted, inclusion in blocks:
        block = client.get_block_data(block_id)
        assert_block_id(block, block_id)
        if posted is not None:
            assert block.as_dict() == posted.as_dict()
        raw = bytes(client.get_block_raw(block_id))
        assert raw == Utils.block_bytes(block)
        assert "0x" + hashlib.blake2b(raw, digest_size=32).hexdigest() == block_id
        meta = client.get_block_metadata(block_id)
        assert meta.blockId == block_id
        assert meta.parents == block.parents
        assert meta.isSolid
        assert meta.ledgerInclusionState == inclusion
        assert meta.referencedByMilestoneIndex is not None
        assert meta.referencedByMilestoneIndex <= milestone2["index"]


def test_milestones_read_back(client, node, milestone1, milestone2):
    """Each milestone reads back by index and id; its block id is the client's, the coordinator
    signed its milestone id, and `/info` reports the newest one."""
    assert milestone2["index"] == milestone1["index"] + 1
    for m in (milestone1, milestone2):
        block = client.get_block_data(m["blockId"])
        assert_block_id(block, m["blockId"])
        payload = block.payload
        assert payload.type == 7
        assert payload.index == m["index"]
        raw = bytes(client.get_block_raw(m["blockId"]))
        milestone_id = milestone_id_of(raw, len(payload.signatures))
        assert milestone_id == m["milestoneId"]
        for signature in payload.signatures:
            assert Utils.verify_ed25519_signature(signature, milestone_id)
        by_index = client.get_milestone_by_index(m["index"])
        assert by_index.index == m["index"]
        assert by_index.as_dict() == payload.as_dict()
    assert client.get_milestone_by_index(milestone2["index"]).previousMilestoneId == (
        milestone1["milestoneId"]
    )
    status = client.get_node_info(node.url).status
    assert status.latestMilestone.index == milestone2["index"]
    assert status.latestMilestone.milestoneId == milestone2["milestoneId"]
    assert status.confirmedMilestone.index == milestone2["index"]


def test_client_reads_milestones_by_id(client, milestone1, milestone2):
    """`get_milestone_by_id` returns the milestone the coordinator issued under that id."""
    for m in (milestone1, milestone2):
        by_id = client.get_milestone_by_id(m["milestoneId"])
        assert by_id.index == m["index"]
        assert by_id.as_dict() == client.get_milestone_by_index(m["index"]).as_dict()


def test_client_submits_a_tagged_data_payload(client):
    """`submit_payload` (client-side tips and PoW, binary submit) answers the client's id."""
    payload = TaggedDataPayload(utf8_to_hex("ledger-node"), utf8_to_hex("submit_payload"))
    block_id, block = client.submit_payload(payload)
    assert_block_id(block, block_id)
    read = client.get_block_data(block_id)
    assert read.as_dict() == block.as_dict()


def test_client_remote_pow_flow(node):
    """With `local_pow=False` the client sends nonce 0 to a node announcing `pow`, then reads
    the block the node finished back; its id is the client's."""
    remote = Client(nodes=[node.url], local_pow=False)
    assert not remote.get_local_pow()
    payload = TaggedDataPayload(utf8_to_hex("ledger-node"), utf8_to_hex("remote PoW"))
    block_id, block = remote.submit_payload(payload)
    assert_block_id(block, block_id)
    assert block.payload.as_dict() == payload.as_dict()
