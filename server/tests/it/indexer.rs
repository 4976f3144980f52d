//! The TIP-26 indexer and the utxo-changes endpoints on the real binary: one transaction
//! creates outputs with every filterable feature, and each filter, the chain-id lookups and
//! paging answer exactly the outputs they should; bad parameters are 400s naming the
//! parameter (never a 500); the answers are the same after a `kill -9` and restart.

use crate::common;
use crate::v2_support;

use common::TestNode;
use ledger_codec::stardust::{self, Address, OutputId};
use ledger_codec::Codec;
use serde_json::{json, Value};
use v2_support::{
    basic_output, genesis_output_id, genesis_spend, hex0x, transaction_id, BLOCKS, DEV_NETWORK,
    DEV_SUPPLY, GENESIS_ADDRESS,
};

const OTHER: &str = "0x2222222222222222222222222222222222222222222222222222222222222222";
const EXPIRES: u32 = 2_000_000_000;
const TIMELOCK: u32 = 1_900_000_000;
const TAG: &str = "0x696e6465786572"; // "indexer"
const AMOUNT: u64 = 1_000_000;

fn ed(hash: &str) -> Value {
    json!({"type": 0, "pubKeyHash": hash})
}

fn bech32(hash: &str) -> String {
    let mut a = [0u8; 33];
    a[1..].copy_from_slice(&hex::decode(&hash[2..]).unwrap());
    Address::decode(&a).unwrap().to_bech32("rms").unwrap()
}

/// The outputs of the test transaction, by index: 0 tag+sender, 1 expiration, 2 timelock,
/// 3 storage deposit return, 4 NFT, 5 alias, 6 the remainder back to genesis.
fn outputs() -> Vec<Value> {
    let to_other = json!({"type": 0, "address": ed(OTHER)});
    let mut v = vec![
        json!({"type": 3, "amount": AMOUNT.to_string(), "unlockConditions": [to_other],
               "features": [{"type": 0, "address": ed(GENESIS_ADDRESS)}, {"type": 3, "tag": TAG}]}),
        json!({"type": 3, "amount": AMOUNT.to_string(), "unlockConditions": [to_other,
               {"type": 3, "returnAddress": ed(GENESIS_ADDRESS), "unixTime": EXPIRES}]}),
        json!({"type": 3, "amount": AMOUNT.to_string(), "unlockConditions": [to_other,
               {"type": 2, "unixTime": TIMELOCK}]}),
        json!({"type": 3, "amount": AMOUNT.to_string(), "unlockConditions": [to_other,
               {"type": 1, "returnAddress": ed(GENESIS_ADDRESS), "amount": "500000"}]}),
        json!({"type": 6, "amount": AMOUNT.to_string(), "nftId": hex0x(&[0; 32]),
               "unlockConditions": [to_other],
               "immutableFeatures": [{"type": 1, "address": ed(GENESIS_ADDRESS)}]}),
        json!({"type": 4, "amount": AMOUNT.to_string(), "aliasId": hex0x(&[0; 32]),
               "stateIndex": 0, "foundryCounter": 0,
               "unlockConditions": [{"type": 4, "address": ed(OTHER)},
                                    {"type": 5, "address": ed(GENESIS_ADDRESS)}],
               "immutableFeatures": [{"type": 1, "address": ed(GENESIS_ADDRESS)}]}),
    ];
    v.push(basic_output(DEV_SUPPLY - 6 * AMOUNT, GENESIS_ADDRESS));
    v
}

fn get_ok(node: &TestNode, path: &str) -> Value {
    let r = node.get(path);
    assert_eq!(
        r.status,
        200,
        "{path}: {}",
        String::from_utf8_lossy(&r.body)
    );
    r.json()
}

fn items(node: &TestNode, path: &str) -> Vec<String> {
    let v = get_ok(node, &format!("/api/indexer/v1/{path}"));
    v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

struct Created {
    ids: Vec<String>,
    nft_id: String,
    alias_id: String,
    alias_address: String,
    milestone: u32,
    timestamp: u64,
}

fn create(node: &TestNode) -> Created {
    let tx = genesis_spend(outputs(), DEV_NETWORK);
    let tx_id = transaction_id(&tx);
    let payload = serde_json::to_value(stardust::Payload::Transaction(tx)).unwrap();
    node.post_json(BLOCKS, &json!({"protocolVersion": 2, "payload": payload}))
        .created_id();
    let ms = node.issue_milestone();
    let milestone = u32::try_from(ms["index"].as_u64().unwrap()).unwrap();
    let timestamp = get_ok(
        node,
        &format!("/api/core/v2/milestones/by-index/{milestone}"),
    )["timestamp"]
        .as_u64()
        .unwrap();
    let oid = |i: u16| OutputId {
        transaction_id: tx_id,
        index: i,
    };
    let alias_id = stardust::alias_id(&oid(5));
    let mut alias_address = [8u8; 33];
    alias_address[1..].copy_from_slice(&alias_id);
    Created {
        ids: (0..7).map(|i| hex0x(&oid(i).to_array())).collect(),
        nft_id: hex0x(&stardust::nft_id(&oid(4))),
        alias_id: hex0x(&alias_id),
        alias_address: Address::decode(&alias_address)
            .unwrap()
            .to_bech32("rms")
            .unwrap(),
        milestone,
        timestamp,
    }
}

/// Every filter answers exactly its outputs, in output-id order (one booking time).
fn check_filters(node: &TestNode, c: &Created) {
    let other = bech32(OTHER);
    let genesis = bech32(GENESIS_ADDRESS);
    let pick = |idx: &[usize]| idx.iter().map(|i| c.ids[*i].clone()).collect::<Vec<_>>();
    let t = c.timestamp;
    let cases: Vec<(String, Vec<usize>)> = vec![
        ("outputs".into(), vec![0, 1, 2, 3, 4, 5, 6]),
        (
            format!("outputs?unlockableByAddress={other}"),
            vec![0, 1, 2, 3, 4, 5],
        ),
        (
            format!("outputs?unlockableByAddress={genesis}"),
            vec![1, 3, 5, 6],
        ),
        (
            format!("outputs?createdBefore={}", t + 1),
            vec![0, 1, 2, 3, 4, 5, 6],
        ),
        (format!("outputs?createdAfter={t}"), vec![]),
        ("outputs?hasNativeTokens=true".into(), vec![]),
        (
            "outputs?maxNativeTokenCount=0".into(),
            vec![0, 1, 2, 3, 4, 5, 6],
        ),
        (format!("outputs/basic?address={other}"), vec![0, 1, 2, 3]),
        (format!("outputs/basic?address={genesis}"), vec![6]),
        (format!("outputs/basic?tag={TAG}"), vec![0]),
        (format!("outputs/basic?sender={genesis}"), vec![0]),
        ("outputs/basic?hasExpiration=true".into(), vec![1]),
        (
            format!("outputs/basic?hasExpiration=false&address={other}"),
            vec![0, 2, 3],
        ),
        (
            format!("outputs/basic?expiresBefore={}", EXPIRES + 1),
            vec![1],
        ),
        (format!("outputs/basic?expiresBefore={EXPIRES}"), vec![]),
        (
            format!("outputs/basic?expiresAfter={}", EXPIRES - 1),
            vec![1],
        ),
        (
            format!("outputs/basic?expirationReturnAddress={genesis}"),
            vec![1],
        ),
        ("outputs/basic?hasTimelock=true".into(), vec![2]),
        (
            format!("outputs/basic?timelockedBefore={}", TIMELOCK + 1),
            vec![2],
        ),
        (format!("outputs/basic?timelockedAfter={TIMELOCK}"), vec![]),
        ("outputs/basic?hasStorageDepositReturn=true".into(), vec![3]),
        (
            format!("outputs/basic?storageDepositReturnAddress={genesis}"),
            vec![3],
        ),
        (
            format!("outputs/basic?unlockableByAddress={genesis}"),
            vec![1, 3, 6],
        ),
        (format!("outputs/nft?address={other}"), vec![4]),
        (format!("outputs/nft?issuer={genesis}"), vec![4]),
        (format!("outputs/nft?address={genesis}"), vec![]),
        (format!("outputs/alias?stateController={other}"), vec![5]),
        (format!("outputs/alias?governor={genesis}"), vec![5]),
        (format!("outputs/alias?issuer={genesis}"), vec![5]),
        (
            format!("outputs/alias?unlockableByAddress={genesis}"),
            vec![5],
        ),
        (
            format!("outputs/foundry?aliasAddress={}", c.alias_address),
            vec![],
        ),
        (format!("outputs/nft/{}", c.nft_id), vec![4]),
        (format!("outputs/alias/{}", c.alias_id), vec![5]),
    ];
    for (path, want) in cases {
        assert_eq!(items(node, &path), pick(&want), "{path}");
    }
}

/// Pages of 2 walk the same items as one page, each once, with a cursor until the last.
fn check_paging(node: &TestNode, c: &Created) {
    let base = format!("outputs?unlockableByAddress={}", bech32(OTHER));
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    for page in 0.. {
        assert!(page < 10, "paging does not end");
        let path = match &cursor {
            Some(cur) => format!("/api/indexer/v1/{base}&pageSize=2&cursor={cur}"),
            None => format!("/api/indexer/v1/{base}&pageSize=2"),
        };
        let v = get_ok(node, &path);
        assert_eq!(v["pageSize"], 2, "{v}");
        assert_eq!(v["ledgerIndex"], c.milestone, "{v}");
        seen.extend(v["items"].as_array().unwrap().iter().map(|s| s.to_string()));
        match v.get("cursor").and_then(Value::as_str) {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    let whole: Vec<String> = items(node, &base)
        .iter()
        .map(|s| format!("{s:?}"))
        .collect();
    assert_eq!(seen, whole);
    assert_eq!(seen.len(), 6);
}

fn check_utxo_changes(node: &TestNode, c: &Created) {
    let by_index = get_ok(
        node,
        &format!(
            "/api/core/v2/milestones/by-index/{}/utxo-changes",
            c.milestone
        ),
    );
    assert_eq!(by_index["index"], c.milestone);
    assert_eq!(by_index["createdOutputs"], json!(c.ids));
    assert_eq!(by_index["consumedOutputs"], json!([genesis_output_id()]));
    let id = confirmed_milestone_id(node, c.milestone);
    let by_id = get_ok(
        node,
        &format!("/api/core/v2/milestones/by-id/{id}/utxo-changes"),
    );
    assert_eq!(by_id, by_index);
    // The spent genesis output stays readable.
    let meta = get_ok(
        node,
        &format!("/api/core/v2/outputs/{}/metadata", genesis_output_id()),
    );
    assert_eq!(meta["isSpent"], true);
}

/// The id of the confirmed milestone, which must be `index`.
fn confirmed_milestone_id(node: &TestNode, index: u32) -> String {
    let info = get_ok(node, "/api/core/v2/info");
    let confirmed = &info["status"]["confirmedMilestone"];
    assert_eq!(confirmed["index"], index, "{info}");
    confirmed["milestoneId"].as_str().unwrap().to_owned()
}

fn check_errors(node: &TestNode) {
    let bad_400: &[(&str, &str)] = &[
        ("outputs?unlockableByAddress=rms1xyz", "unlockableByAddress"),
        ("outputs?hasNativeTokens=maybe", "hasNativeTokens"),
        ("outputs?minNativeTokenCount=65", "minNativeTokenCount"),
        ("outputs?createdBefore=yesterday", "createdBefore"),
        ("outputs?pageSize=-1", "pageSize"),
        ("outputs?cursor=abc.1", "cursor"),
        ("outputs/basic?tag=696e", "tag"),
        ("outputs/basic?expiresAfter=1e9", "expiresAfter"),
        ("outputs/nft?issuer=iota1qqqq", "issuer"),
        ("outputs/alias?governor=%00", "governor"),
        ("outputs/foundry?aliasAddress=rms1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqsd6lgh", "aliasAddress"),
        ("outputs/alias/0x1234", "aliasId"),
        ("outputs/nft/zz", "nftId"),
        ("outputs/foundry/0x08", "foundryId"),
    ];
    for (path, name) in bad_400 {
        let r = node.get(&format!("/api/indexer/v1/{path}"));
        let message = r.assert_error(400);
        assert!(message.contains(name), "{path}: {message}");
    }
    for path in [
        format!("outputs/alias/{}", hex0x(&[1; 32])),
        format!("outputs/nft/{}", hex0x(&[1; 32])),
        format!("outputs/foundry/{}", hex0x(&[8; 38])),
    ] {
        node.get(&format!("/api/indexer/v1/{path}"))
            .assert_error(404);
    }
    node.get("/api/core/v2/milestones/by-index/999999/utxo-changes")
        .assert_error(404);
    node.get("/api/core/v2/milestones/by-index/x/utxo-changes")
        .assert_error(400);
    node.get(&format!(
        "/api/core/v2/milestones/by-id/{}/utxo-changes",
        hex0x(&[3; 32])
    ))
    .assert_error(404);
}

#[test]
fn indexer_answers_every_filter_and_survives_a_kill() {
    let node = TestNode::start_with(&["--coordinator-interval", "0"], &[]);
    // Before any transaction: the genesis output alone, at the genesis ledger index.
    assert_eq!(items(&node, "outputs"), vec![genesis_output_id()]);
    let routes = get_ok(&node, "/api/routes");
    assert!(routes["routes"]
        .as_array()
        .unwrap()
        .contains(&json!("indexer/v1")));

    let created = create(&node);
    check_filters(&node, &created);
    check_paging(&node, &created);
    check_utxo_changes(&node, &created);
    check_errors(&node);

    let dir = node.kill_9();
    let node = TestNode::start_in(dir, &["--coordinator-interval", "0"], &[]);
    check_filters(&node, &created);
    check_paging(&node, &created);
    check_utxo_changes(&node, &created);
}

#[test]
fn a_node_without_the_indexer_says_so() {
    let node = TestNode::start_with(&["--coordinator-interval", "0", "--no-indexer"], &[]);
    let message = node.get("/api/indexer/v1/outputs").assert_error(503);
    assert!(message.contains("--no-indexer"), "{message}");
    node.get(&format!("/api/indexer/v1/outputs/nft/{}", hex0x(&[1; 32])))
        .assert_error(503);
    let routes = get_ok(&node, "/api/routes");
    assert!(!routes["routes"]
        .as_array()
        .unwrap()
        .contains(&json!("indexer/v1")));
    // Everything else works as before.
    let created = create(&node);
    check_utxo_changes(&node, &created);
}
