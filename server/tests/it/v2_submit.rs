//! `POST /api/core/v2/blocks` through the real binary: every way a block can be refused,
//! media types, limits, and the parent / nonce filling rules.

use crate::common;
use crate::v2_support;

use common::{Reply, TestNode};
use serde_json::{json, Value};
use v2_support::*;

use ledger_codec::stardust::Payload;

fn start() -> TestNode {
    TestNode::start_with(&["--coordinator-interval", "0"], &[])
}

fn post_json(node: &TestNode, block: &Value) -> Reply {
    node.post_json(BLOCKS, block)
}

fn post_binary(node: &TestNode, bytes: &[u8]) -> Reply {
    node.post(BLOCKS, &[("content-type", BINARY)], bytes)
}

/// Asserts a 400 whose message starts with `invalid block:` and contains `needle`.
fn assert_invalid(reply: &Reply, needle: &str, what: &str) {
    let message = reply.assert_error(400);
    assert!(
        message.starts_with("invalid block: ") && message.contains(needle),
        "{what}: {needle:?} not in {message:?}"
    );
}

fn created_id(reply: &Reply) -> [u8; 32] {
    assert_eq!(
        reply.status,
        201,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    unhex(reply.json()["blockId"].as_str().expect("blockId"))
        .try_into()
        .expect("32 bytes")
}

/// Two fresh blocks on the genesis entry point, sorted ascending.
fn two_blocks(node: &TestNode) -> ([u8; 32], [u8; 32]) {
    let mut ids: Vec<[u8; 32]> = (0..2u8)
        .map(|i| {
            created_id(&post_json(
                node,
                &json!({"protocolVersion": 2, "parents": [hex0x(&[0; 32])],
                        "payload": tagged_data(&[i], b"parent")}),
            ))
        })
        .collect();
    ids.sort_unstable();
    (ids[0], ids[1])
}

#[test]
fn invalid_vector_blocks_are_400() {
    let node = start();
    let vectors = stardust_vectors("invalid.json");
    let blocks: Vec<&Value> = vectors
        .iter()
        .filter(|v| v["kind"] == json!("block"))
        .collect();
    assert!(blocks.len() >= 3, "expected block vectors");
    for v in blocks {
        let name = v["name"].as_str().expect("name");
        let bytes = unhex(v["bytes"].as_str().expect("bytes"));
        for ct in [BINARY, BINARY_IOTA] {
            let reply = node.post(BLOCKS, &[("content-type", ct)], &bytes);
            assert_invalid(&reply, "", name);
        }
    }
}

#[test]
fn foreign_vector_blocks_are_400_never_500() {
    // Valid blocks of other networks: unknown parents, foreign milestones, wrong network.
    let node = start();
    for v in stardust_vectors("blocks.json") {
        let name = v["name"].as_str().expect("name");
        let bytes = unhex(v["bytes"].as_str().expect("bytes"));
        assert_invalid(&post_binary(&node, &bytes), "", name);
        if let Some(json) = v.get("json") {
            assert_invalid(&post_json(&node, json), "", name);
        }
    }
}

#[test]
fn parents_must_be_sorted_unique_known_and_at_most_eight() {
    let node = start();
    let (a, b) = two_blocks(&node);
    let payload = tagged_data(b"p", b"");
    let with = |parents: Vec<String>| json!({"protocolVersion": 2, "parents": parents, "payload": payload});

    assert_invalid(
        &post_json(&node, &with(vec![hex0x(&b), hex0x(&a)])),
        "sorted",
        "unsorted JSON",
    );
    assert_invalid(
        &post_binary(&node, &block_bytes(&[b, a], None, 0)),
        "sorted",
        "unsorted binary",
    );
    assert_invalid(
        &post_json(&node, &with(vec![hex0x(&a), hex0x(&a)])),
        "",
        "duplicate parents",
    );
    let nine: Vec<String> = (1..=9u8).map(|i| hex0x(&[i; 32])).collect();
    assert_invalid(&post_json(&node, &with(nine)), "parents", "nine parents");
    assert_invalid(
        &post_json(&node, &with(vec![hex0x(&[0xee; 32])])),
        "not solid",
        "unknown parent",
    );
    assert_invalid(
        &post_json(&node, &with(vec!["0x1234".to_owned()])),
        "",
        "short parent id",
    );
    // The sorted order is accepted and kept.
    let id = created_id(&post_json(&node, &with(vec![hex0x(&a), hex0x(&b)])));
    let stored = node.get(&format!("{BLOCKS}/{}", hex0x(&id))).json();
    assert_eq!(stored["parents"], json!([hex0x(&a), hex0x(&b)]));
}

#[test]
fn parentless_blocks_get_parents_only_with_nonce_zero() {
    let node = start();
    for nonce in [json!("0"), json!(""), json!(null)] {
        let block = json!({"protocolVersion": 2, "parents": [], "nonce": nonce,
                           "payload": tagged_data(b"np", nonce.to_string().as_bytes())});
        created_id(&post_json(&node, &block));
    }
    let block = json!({"protocolVersion": 2, "nonce": "7", "payload": tagged_data(b"np", b"")});
    assert_invalid(
        &post_json(&node, &block),
        "no parents were given but nonce was != 0",
        "JSON",
    );
    // Binary with a parent count of 0: filled in when the nonce is 0.
    let mut bytes = vec![2u8, 0, 0, 0, 0, 0];
    bytes.extend_from_slice(&0u64.to_le_bytes());
    let id = created_id(&post_binary(&node, &bytes));
    let meta = node
        .get(&format!("{BLOCKS}/{}/metadata", hex0x(&id)))
        .json();
    assert!(!meta["parents"].as_array().expect("parents").is_empty());
    let mut bytes = vec![2u8, 0, 0, 0, 0, 0];
    bytes.extend_from_slice(&9u64.to_le_bytes());
    assert_invalid(
        &post_binary(&node, &bytes),
        "no parents were given but nonce was != 0",
        "binary",
    );
}

#[test]
fn version_network_payload_and_shape_errors_are_400() {
    let node = start();
    let sep = hex0x(&[0; 32]);
    let cases: Vec<(Value, &str, &str)> = vec![
        (
            json!({"protocolVersion": 1, "parents": [sep], "payload": tagged_data(b"", b"")}),
            "protocolVersion invalid: 1",
            "version 1",
        ),
        (
            json!({"parents": [sep], "payload": tagged_data(b"", b"")}),
            "protocolVersion",
            "no version",
        ),
        (
            json!({"protocolVersion": "2", "parents": [sep]}),
            "protocolVersion",
            "version as string",
        ),
        (
            json!({"protocolVersion": 2, "parents": [sep], "payload": {"type": 4}}),
            "payload",
            "treasury payload",
        ),
        (
            json!({"protocolVersion": 2, "parents": [sep], "payload": {"type": 3}}),
            "payload",
            "receipt payload",
        ),
        (
            json!({"protocolVersion": 2, "parents": [sep], "bogus": 1}),
            "bogus",
            "unknown field",
        ),
        (
            json!({"protocolVersion": 2, "parents": [sep], "nonce": "x"}),
            "",
            "bad nonce",
        ),
        (
            json!({"protocolVersion": 2, "parents": [sep],
                   "payload": tagged_data(&[1; 65], b"")}),
            "",
            "tag too long",
        ),
        (
            json!({"protocolVersion": 2, "parents": [sep],
                   "payload": tagged_data(b"", &vec![7u8; 33_000])}),
            "",
            "block over 32768 bytes",
        ),
        (
            json!({"protocolVersion": 2, "parents": [sep],
                   "payload": tagged_data(&[1; 300], b"")}),
            "payload.tag: too long to encode: length 300, its prefix counts at most 255",
            "tag longer than its u8 length prefix",
        ),
        (
            json!({"protocolVersion": 2,
                   "parents": (0..257u32).map(|i| {
                       let mut p = [0u8; 32];
                       p[..4].copy_from_slice(&i.to_le_bytes());
                       p.reverse();
                       hex0x(&p)
                   }).collect::<Vec<_>>()}),
            "parents",
            "257 parents (more than the u8 count prefix)",
        ),
        (json!([1, 2]), "object", "not an object"),
    ];
    for (block, needle, what) in &cases {
        assert_invalid(&post_json(&node, block), needle, what);
    }
    for (body, what) in [(&b"{"[..], "broken JSON"), (b"", "empty JSON")] {
        let reply = node.post(BLOCKS, &[("content-type", JSON_CT)], body);
        assert_invalid(&reply, "JSON", what);
    }
    assert_invalid(&post_binary(&node, b""), "empty", "empty binary");
    assert_invalid(&post_binary(&node, &[2]), "", "one byte");
    assert_invalid(&post_binary(&node, &[3, 1]), "protocolVersion", "binary v3");

    // A transaction for another network.
    let tx = genesis_spend(vec![basic_output(DEV_SUPPLY, GENESIS_ADDRESS)], "other-net");
    let block = json!({"protocolVersion": 2, "parents": [sep], "payload": Payload::Transaction(tx.clone())});
    assert_invalid(&post_json(&node, &block), "networkID", "wrong network JSON");
    let bytes = block_bytes(&[[0; 32]], Some(Payload::Transaction(tx)), 0);
    assert_invalid(
        &post_binary(&node, &bytes),
        "networkID",
        "wrong network binary",
    );

    // Nothing was stored by any of these; the node is still fine.
    assert_eq!(node.get("/health").status, 200);
}

#[test]
fn media_types_and_body_limits() {
    let node = start();
    let sep = [0u8; 32];
    // A JSON 415 naming the media type; v3 binary is not a v2 block.
    for ct in [
        "text/plain",
        "application/octet-stream",
        "application/xml",
        "multipart/form-data",
        "application/vnd.ledger.serializer-v2",
        "application/vnd.iota.serializer-v2",
    ] {
        let message = node
            .post(BLOCKS, &[("content-type", ct)], b"{}")
            .assert_error(415);
        assert!(message.contains(ct), "{ct}: {message}");
    }
    // No Content-Type: JSON.
    let block =
        json!({"protocolVersion": 2, "parents": [hex0x(&sep)], "payload": tagged_data(b"ct", b"")});
    created_id(&node.post(BLOCKS, &[], block.to_string().as_bytes()));
    created_id(&node.post(
        BLOCKS,
        &[("content-type", "application/json; charset=utf-8")],
        block.to_string().replace("ct", "cu").as_bytes(),
    ));
    // Over 1 MiB: 413 for JSON and binary, declared or chunked.
    let over = vec![b' '; (1 << 20) + 1];
    for ct in [JSON_CT, BINARY] {
        let message = node
            .post(BLOCKS, &[("content-type", ct)], &over)
            .assert_error(413);
        assert!(message.contains("1048576"), "{message}");
        node.post_chunked(BLOCKS, &[("content-type", ct)], &over)
            .assert_error(413);
    }
    // At the limit the body is read and judged as a block.
    let at_limit = vec![b' '; 1 << 20];
    assert_invalid(
        &node.post(BLOCKS, &[("content-type", JSON_CT)], &at_limit),
        "JSON",
        "1 MiB of spaces",
    );
    assert_invalid(
        &node.post(BLOCKS, &[("content-type", BINARY)], &at_limit),
        "",
        "1 MiB binary",
    );
}

#[test]
fn binary_and_json_of_one_block_give_one_id() {
    let node = start();
    let payload: Payload<'static> =
        serde_json::from_value(tagged_data(b"same", b"block")).expect("payload");
    let bytes = block_bytes(&[[0; 32]], Some(payload), 42);
    let from_binary = created_id(&node.post(BLOCKS, &[("content-type", BINARY_IOTA)], &bytes));
    let json = node
        .get(&format!("{BLOCKS}/{}", hex0x(&from_binary)))
        .json();
    assert_eq!(json["nonce"], json!("42"));
    let from_json = created_id(&post_json(&node, &json));
    assert_eq!(from_json, from_binary);
}

#[test]
fn milestones_from_unknown_keys_are_400_and_own_milestones_are_known() {
    use ledger_codec::{
        ed25519::SigningKey,
        stardust::{Ed25519Signature, Milestone},
        types::{Bytes, Hash32},
    };
    let node = start();
    let parents = vec![[0u8; 32]];
    let mut milestone = Milestone {
        index: 1,
        timestamp: 1_700_000_000,
        protocol_version: 2,
        previous_milestone_id: Hash32::from([0; 32]),
        parents: parents.clone().into(),
        inclusion_merkle_root: Hash32::from([0; 32]),
        applied_merkle_root: Hash32::from([0; 32]),
        metadata: Bytes::default(),
        options: Vec::new(),
        signatures: Vec::new().into(),
    };
    let key = SigningKey::from_seed(&[5; 32]);
    let signature = key.sign(&milestone.id().unwrap());
    milestone.signatures = vec![Ed25519Signature::new(key.public_key(), signature)].into();
    let bytes = block_bytes(&parents, Some(Payload::Milestone(milestone)), 0);
    assert_invalid(
        &post_binary(&node, &bytes),
        "unknown key",
        "foreign milestone",
    );

    // The node's own milestone block, sent back: known, 201 with the same id.
    let token = format!("Bearer {}", node.jwt());
    let issued = node
        .post(CONTROL_MILESTONE, &[("authorization", &token)], b"")
        .json();
    let id = issued["blockId"].as_str().expect("blockId");
    let raw = node.get_with(&format!("{BLOCKS}/{id}"), &[("accept", BINARY)]);
    assert_eq!(raw.status, 200);
    assert_eq!(hex0x(&created_id(&post_binary(&node, &raw.body))), id);
    let json = node.get(&format!("{BLOCKS}/{id}")).json();
    assert_eq!(hex0x(&created_id(&post_json(&node, &json))), id);
}
