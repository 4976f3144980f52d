//! Helpers for the v2 endpoint tests: building tagged-data and signed transaction blocks,
//! reading the shared vectors, common constants.

use ledger_codec::{
    ed25519::SigningKey,
    stardust::{
        inputs_commitment, network_id, Address, Block, Essence, Output, Payload, Transaction,
    },
    Codec,
};
use ledger_test_support::keys::{
    dev_genesis_key, signing_key_from_mnemonic, DEV_MNEMONIC, IOTA_COIN_TYPE,
};
use serde_json::{json, Value};

pub const BLOCKS: &str = "/api/core/v2/blocks";
pub const CONTROL_MILESTONE: &str = "/api/core/v2/control/milestone";
pub const BINARY: &str = "application/vnd.ledger.serializer-v1";
pub const BINARY_IOTA: &str = "application/vnd.iota.serializer-v1";
pub const JSON_CT: &str = "application/json";

/// The dev network name (engine/src/dev-genesis.json).
pub const DEV_NETWORK: &str = "ledger-dev";
/// The dev token supply, all on the genesis output.
pub const DEV_SUPPLY: u64 = 1_813_620_509_061_365;
/// The dev genesis owner's Ed25519 address (`docs/decisions.md`).
pub const GENESIS_ADDRESS: &str =
    "0xd18f653d669d2267974caac6ff6254effd5e6c0eeebe3e25944193fbfcafb9c0";
/// The genesis output id: 34 zero bytes.
pub fn genesis_output_id() -> String {
    format!("0x{}", "00".repeat(34))
}

/// `0x` + lowercase hex.
pub fn hex0x(bytes: &[u8]) -> String {
    format!("0x{}", hex::encode(bytes))
}

/// Loads `vectors/stardust/<file>`.
pub fn stardust_vectors(file: &str) -> Vec<Value> {
    ledger_test_support::load_entries("stardust", file)
}

/// Bytes of a `0x…` hex string.
pub fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s.trim_start_matches("0x")).expect("hex")
}

/// A tagged-data payload as JSON.
pub fn tagged_data(tag: &[u8], data: &[u8]) -> Value {
    json!({"type": 5, "tag": hex0x(tag), "data": hex0x(data)})
}

/// A basic output of `amount` to Ed25519 address `pub_key_hash` (0x hex).
pub fn basic_output(amount: u64, pub_key_hash: &str) -> Value {
    json!({
        "type": 3,
        "amount": amount.to_string(),
        "unlockConditions": [
            {"type": 0, "address": {"type": 0, "pubKeyHash": pub_key_hash}}
        ]
    })
}

/// The dev genesis output.
pub fn genesis_output() -> Output<'static> {
    serde_json::from_value(basic_output(DEV_SUPPLY, GENESIS_ADDRESS)).expect("output")
}

/// A transaction spending the dev genesis output into `outputs` (amounts must add up),
/// signed with the dev genesis key, on network `network`.
pub fn genesis_spend(outputs: Vec<Value>, network: &str) -> Transaction<'static> {
    dev_key_spend(([0; 32], 0), &genesis_output(), outputs, network)
}

/// A dev-network transaction sending `amount` of the genesis output to `receiver` (0x hex
/// Ed25519 address) and the rest back to the genesis address.
pub fn genesis_split(amount: u64, receiver: &str) -> Transaction<'static> {
    genesis_spend(
        vec![
            basic_output(amount, receiver),
            basic_output(DEV_SUPPLY - amount, GENESIS_ADDRESS),
        ],
        DEV_NETWORK,
    )
}

/// Posts (as JSON) a block with [`genesis_split`]`(amount, receiver)` to `node` and
/// returns the transaction id and the block id (0x hex), asserting 201.
pub fn post_genesis_split(
    node: &crate::common::TestNode,
    amount: u64,
    receiver: &str,
) -> (String, String) {
    let tx = genesis_split(amount, receiver);
    let tx_id = hex0x(&tx.id().expect("transaction id"));
    let block = json!({"protocolVersion": 2, "payload": Payload::Transaction(tx)});
    (tx_id, node.post_json(BLOCKS, &block).created_id())
}

/// A transaction spending output `input` (transaction id, index), which is `spent` and owned
/// by the dev genesis key, into `outputs` (amounts must add up), signed with that key.
pub fn dev_key_spend(
    input: ([u8; 32], u16),
    spent: &Output<'static>,
    outputs: Vec<Value>,
    network: &str,
) -> Transaction<'static> {
    key_spend(&dev_genesis_key(), &[(input, spent)], outputs, network)
}

/// The key of address `index` of the dev mnemonic (`m/44'/4219'/0'/0'/index'`); address 0
/// owns the dev genesis.
pub fn dev_address_key(index: u32) -> SigningKey {
    signing_key_from_mnemonic(DEV_MNEMONIC, IOTA_COIN_TYPE, 0, index).expect("dev mnemonic key")
}

/// The bech32 (`rms`) form of Ed25519 address `pub_key_hash`.
pub fn ed25519_bech32(pub_key_hash: &[u8; 32]) -> String {
    let mut address = [0u8; 33];
    address[1..].copy_from_slice(pub_key_hash);
    Address::decode(&address).unwrap().to_bech32("rms").unwrap()
}

/// A transaction spending `inputs` (each an output id as transaction id and index, with the
/// output it names), all owned by `key`'s Ed25519 address, into `outputs` (amounts must add
/// up): one signature unlock, then reference unlocks to it.
pub fn key_spend(
    key: &SigningKey,
    inputs: &[(([u8; 32], u16), &Output<'static>)],
    outputs: Vec<Value>,
    network: &str,
) -> Transaction<'static> {
    let commitment = inputs_commitment(inputs.iter().map(|(_, spent)| *spent)).unwrap();
    let input_json: Vec<Value> = inputs
        .iter()
        .map(|((tx, index), _)| {
            json!({"type": 0, "transactionId": hex0x(tx), "transactionOutputIndex": index})
        })
        .collect();
    let essence: Essence<'static> = serde_json::from_value(json!({
        "type": 1,
        "networkId": network_id(network).to_string(),
        "inputs": input_json,
        "inputsCommitment": hex0x(&commitment),
        "outputs": outputs,
    }))
    .expect("essence JSON");
    let signature = key.sign(&essence.signing_hash().unwrap());
    let mut unlocks = vec![json!({"type": 0, "signature": {
        "type": 0,
        "publicKey": hex0x(&key.public_key()),
        "signature": hex0x(&signature),
    }})];
    unlocks.extend((1..inputs.len()).map(|_| json!({"type": 1, "reference": 0})));
    let tx = json!({"type": 6, "essence": essence, "unlocks": unlocks});
    match serde_json::from_value::<Payload<'static>>(tx).expect("transaction JSON") {
        Payload::Transaction(t) => t,
        other => panic!("not a transaction: {other:?}"),
    }
}

/// The transaction id of a transaction payload.
pub fn transaction_id(tx: &Transaction<'_>) -> [u8; 32] {
    tx.id().unwrap()
}

/// Block bytes with these parents, payload and nonce.
pub fn block_bytes(parents: &[[u8; 32]], payload: Option<Payload<'static>>, nonce: u64) -> Vec<u8> {
    Block {
        protocol_version: 2,
        parents: parents.to_vec().into(),
        payload,
        nonce,
    }
    .to_bytes()
    .unwrap()
}

/// Parses `{"tips":[…]}` into ids.
pub fn tips_of(json: &Value) -> Vec<[u8; 32]> {
    json["tips"]
        .as_array()
        .expect("tips array")
        .iter()
        .map(|t| {
            unhex(t.as_str().expect("tip string"))
                .try_into()
                .expect("32-byte tip")
        })
        .collect()
}
