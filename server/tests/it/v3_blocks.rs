//! v3 (IOTA 2.0) blocks through the real binary: `POST /api/core/v3/blocks` (JSON and
//! binary), read-back by id (binary byte-exact, JSON equal), metadata, every negative vector
//! case as a 400 with its reason, malformed bodies, limits, media types, and a restart.
//!
//! Nodes are started with `--v3-protocol-parameters` set to the `json` of the protocol
//! parameters vector each block refers to (`protocolParameters.ref`).

use crate::common;

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use common::{Reply, TestNode};
use ledger_test_support::{hex_bytes, nova_negative::expected};
use serde_json::{json, Value};

const BLOCKS: &str = "/api/core/v3/blocks";
const JSON: &str = "application/json";
const V3_BINARY: &str = "application/vnd.ledger.serializer-v2";
const V3_BINARY_ALIAS: &str = "application/vnd.iota.serializer-v2";

// ---- vectors ------------------------------------------------------------------------------

/// The `vectors` list of `vectors/nova/<file>`.
fn load(file: &str) -> Vec<Value> {
    ledger_test_support::load_entries("nova", file)
}

fn name(v: &Value) -> &str {
    v["name"].as_str().expect("vector name")
}

/// Protocol parameters JSON by reference (`protocol_parameters.json#<name>`).
fn params_by_ref() -> BTreeMap<String, Value> {
    load("protocol_parameters.json")
        .into_iter()
        .map(|p| {
            (
                format!("protocol_parameters.json#{}", name(&p)),
                p["json"].clone(),
            )
        })
        .collect()
}

fn params_ref(block: &Value) -> String {
    block["protocolParameters"]["ref"]
        .as_str()
        .unwrap_or_else(|| panic!("block {} has no protocolParameters.ref", name(block)))
        .to_owned()
}

/// The syntactic errors a block vector is known to have under its parameters.
fn known_errors(block: &Value) -> Vec<String> {
    block["derived"]["syntacticErrorsUnderProtocolParameters"]
        .as_array()
        .unwrap_or_else(|| panic!("block {} has no derived syntactic errors", name(block)))
        .iter()
        .map(|e| e.as_str().expect("error text").to_owned())
        .collect()
}

/// A block the node must accept: no syntactic error and a valid issuer signature.
fn is_valid(block: &Value) -> bool {
    known_errors(block).is_empty() && block["derived"]["blockSignatureValid"] == json!(true)
}

/// Serialized bytes of a block vector (`bytes`, given or computed).
fn block_bytes(block: &Value) -> Vec<u8> {
    let n = name(block);
    hex_bytes(
        n,
        block["bytes"]
            .as_str()
            .unwrap_or_else(|| panic!("{n}: no bytes")),
    )
}

fn block_id(block: &Value) -> String {
    block["id"].as_str().expect("block id").to_owned()
}

// ---- nodes --------------------------------------------------------------------------------

/// Writes `params` to a file in `dir` and returns its path.
fn params_file(dir: &Path, params: &Value) -> PathBuf {
    let path = dir.join("v3-params.json");
    std::fs::write(&path, params.to_string()).expect("write params file");
    path
}

/// A node started with these v3 protocol parameters (the file lives in `keep`).
fn node_with(keep: &tempfile::TempDir, params: &Value) -> TestNode {
    let path = params_file(keep.path(), params);
    let path = path.to_str().expect("utf-8 path");
    TestNode::start_with(&["--v3-protocol-parameters", path], &[])
}

fn post(node: &TestNode, content_type: &str, body: &[u8]) -> Reply {
    node.post(BLOCKS, &[("content-type", content_type)], body)
}

fn post_json(node: &TestNode, block: &Value) -> Reply {
    post(node, JSON, block.to_string().as_bytes())
}

/// Asserts a 201 for `id` (Location header and JSON body).
fn assert_created(reply: &Reply, id: &str, what: &str) {
    assert_eq!(
        reply.status,
        201,
        "{what}: {}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(reply.header("location"), Some(id), "{what}: Location");
    assert_eq!(reply.json(), json!({ "blockId": id }), "{what}: body");
}

fn body_text(reply: &Reply) -> String {
    String::from_utf8_lossy(&reply.body).into_owned()
}

// ---- valid blocks -------------------------------------------------------------------------

/// Posts, reads back, reposts and asks the metadata of every valid block vector, on one node
/// per protocol parameters set that gets JSON first and one that gets binary first.
#[test]
fn every_valid_vector_block_is_accepted_and_read_back() {
    let blocks = load("blocks.json");
    let params = params_by_ref();
    let mut groups: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for block in blocks.iter().filter(|b| is_valid(b)) {
        groups.entry(params_ref(block)).or_default().push(block);
    }
    let count: usize = groups.values().map(Vec::len).sum();
    assert!(count >= 8, "only {count} valid block vectors");

    for (reference, group) in &groups {
        let json_params = params
            .get(reference)
            .unwrap_or_else(|| panic!("unknown parameters {reference}"));
        let keep = tempfile::tempdir().expect("dir");
        for json_first in [true, false] {
            let node = node_with(&keep, json_params);
            for block in group {
                check_valid_block(&node, block, json_first);
            }
        }
    }
}

fn check_valid_block(node: &TestNode, block: &Value, json_first: bool) {
    let n = name(block);
    let id = block_id(block);
    let bytes = block_bytes(block);
    let via_json = |what: &str| assert_created(&post_json(node, &block["json"]), &id, what);
    let via_binary = |what: &str, media: &str| {
        assert_created(&post(node, media, &bytes), &id, what);
    };
    if json_first {
        via_json(&format!("{n}: JSON"));
        via_binary(&format!("{n}: binary repost"), V3_BINARY);
    } else {
        via_binary(&format!("{n}: binary"), V3_BINARY_ALIAS);
        via_json(&format!("{n}: JSON repost"));
    }
    // A repost in either encoding is still 201 with the same id.
    via_json(&format!("{n}: JSON repost"));
    via_binary(&format!("{n}: binary repost (alias)"), V3_BINARY_ALIAS);

    // Accept v3 binary on submit: the 36 id bytes.
    let reply = node.post(
        BLOCKS,
        &[("content-type", V3_BINARY), ("accept", V3_BINARY)],
        &bytes,
    );
    assert_eq!(reply.status, 201, "{n}: {}", body_text(&reply));
    assert_eq!(reply.content_type.as_deref(), Some(V3_BINARY), "{n}");
    assert_eq!(reply.body, hex_bytes(n, &id), "{n}: binary submit answer");
    assert_eq!(reply.header("location"), Some(id.as_str()), "{n}");

    let path = format!("{BLOCKS}/{id}");
    for media in [V3_BINARY, V3_BINARY_ALIAS] {
        let reply = node.get_with(&path, &[("accept", media)]);
        assert_eq!(reply.status, 200, "{n}: GET {media}: {}", body_text(&reply));
        assert_eq!(reply.content_type.as_deref(), Some(media), "{n}");
        assert_eq!(reply.body, bytes, "{n}: GET {media} is not byte-exact");
    }
    let reply = node.get(&path);
    assert_eq!(reply.status, 200, "{n}: GET JSON: {}", body_text(&reply));
    assert!(
        reply
            .content_type
            .as_deref()
            .is_some_and(|c| c.starts_with(JSON)),
        "{n}: {:?}",
        reply.content_type
    );
    assert_eq!(reply.json(), block["json"], "{n}: GET JSON differs");

    // Upper-case hex is accepted; the answer names the id in lower case.
    let upper = format!("0x{}", id[2..].to_uppercase());
    let reply = node.get(&format!("{BLOCKS}/{upper}/metadata"));
    assert_eq!(reply.status, 200, "{n}: metadata: {}", body_text(&reply));
    assert_eq!(
        reply.json(),
        json!({ "blockId": id, "blockState": "pending" }),
        "{n}: metadata"
    );
}

/// Block vectors that break a syntactic rule under their parameters are a 400 naming it, in
/// JSON and in binary.
#[test]
fn vector_blocks_with_known_syntactic_errors_are_400() {
    let blocks = load("blocks.json");
    let params = params_by_ref();
    let invalid: Vec<&Value> = blocks
        .iter()
        .filter(|b| !known_errors(b).is_empty())
        .collect();
    assert!(!invalid.is_empty(), "no block vector with a known error");
    let keep = tempfile::tempdir().expect("dir");
    let mut nodes: BTreeMap<String, TestNode> = BTreeMap::new();
    for block in invalid {
        let n = name(block);
        let reference = params_ref(block);
        let node = nodes
            .entry(reference.clone())
            .or_insert_with(|| node_with(&keep, &params[&reference]));
        for error in known_errors(block) {
            // "commitment too recent (ErrCommitmentTooRecent)" → "commitment too recent".
            let reason = error.split(" (").next().unwrap_or(&error).to_lowercase();
            for (how, reply) in [
                ("JSON", post_json(node, &block["json"])),
                ("binary", post(node, V3_BINARY, &block_bytes(block))),
            ] {
                let message = reply.assert_error(400).to_lowercase();
                assert!(
                    message.contains(&reason),
                    "{n} ({how}): {message:?} does not name {reason:?}"
                );
            }
        }
        assert_eq!(
            node.get(&format!("{BLOCKS}/{}", block_id(block))).status,
            404,
            "{n}: a rejected block must not be stored"
        );
    }
}

// ---- negative cases -----------------------------------------------------------------------

/// Every case of negative_blocks.json is a 400 with its reason: `bytes` and
/// `bytesIfEncodedNaively` posted as binary, `json` posted as JSON. None is stored.
#[test]
fn every_negative_case_is_400_with_its_reason() {
    let blocks = load("blocks.json");
    let params = params_by_ref();
    let cases = load("negative_blocks.json");
    assert_eq!(cases.len(), 32);
    let mut nodes: BTreeMap<String, TestNode> = BTreeMap::new();
    let keep = tempfile::tempdir().expect("dir");
    let mut checked = 0;
    for case in &cases {
        let n = name(case);
        let from = case["derivedFrom"]
            .as_str()
            .and_then(|s| s.strip_prefix("blocks.json#"))
            .unwrap_or_else(|| panic!("{n}: derivedFrom is not a blocks.json entry"));
        let origin = blocks
            .iter()
            .find(|b| name(b) == from)
            .unwrap_or_else(|| panic!("{n}: no block {from}"));
        let reference = params_ref(origin);
        let node = nodes
            .entry(reference.clone())
            .or_insert_with(|| node_with(&keep, &params[&reference]));
        assert_eq!(
            case["expect"]["recommendedHttpStatus"],
            json!(400),
            "{n}: this test expects 400 cases only"
        );
        let mut attempts = Vec::new();
        for key in ["bytes", "bytesIfEncodedNaively"] {
            if let Some(hex) = case[key].as_str() {
                attempts.push((key, post(node, V3_BINARY, &hex_bytes(n, hex))));
            }
        }
        if let Some(j) = case.get("json").filter(|j| !j.is_null()) {
            attempts.push(("json", post_json(node, j)));
        }
        assert!(!attempts.is_empty(), "{n}: nothing to post");
        for (how, reply) in attempts {
            let message = reply.assert_error(400).to_lowercase();
            for word in expected(n) {
                assert!(
                    message.contains(word),
                    "{n} ({how}): {message:?} does not mention {word:?}"
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= cases.len(), "only {checked} posts");
    for node in nodes.values() {
        assert!(
            !node.log().contains("panicked"),
            "the node panicked:\n{}",
            node.log()
        );
    }
}

// ---- malformed requests -------------------------------------------------------------------

fn first_valid_block() -> Value {
    load("blocks.json")
        .into_iter()
        .find(is_valid)
        .expect("a valid block vector")
}

#[test]
fn malformed_bodies_are_400_never_500() {
    let block = first_valid_block();
    let node = TestNode::start();
    let mut wrong_type = block["json"].clone();
    wrong_type["body"]["strongParents"] = json!("0x00");
    let mut wrong_nesting = block["json"].clone();
    wrong_nesting["header"] = json!([1, 2, 3]);
    let mut number_too_big = block["json"].clone();
    number_too_big["header"]["protocolVersion"] = json!(300);
    let mut negative = block["json"].clone();
    negative["header"]["latestFinalizedSlot"] = json!(-1);
    let mut bad_hex = block["json"].clone();
    bad_hex["signature"]["signature"] = json!("0xzz");
    let cases: Vec<(&str, &str, Vec<u8>)> = vec![
        ("empty JSON", JSON, Vec::new()),
        ("empty binary", V3_BINARY, Vec::new()),
        ("truncated JSON", JSON, b"{\"header\":".to_vec()),
        ("JSON null", JSON, b"null".to_vec()),
        ("JSON array", JSON, b"[]".to_vec()),
        ("JSON string", JSON, b"\"block\"".to_vec()),
        ("empty object", JSON, b"{}".to_vec()),
        ("not UTF-8", JSON, vec![0xff, 0xfe, 0x7b, 0x7d]),
        (
            "JSON with charset",
            "application/json; charset=utf-8",
            b"{".to_vec(),
        ),
        (
            "JSON on the binary type",
            V3_BINARY,
            block["json"].to_string().into_bytes(),
        ),
        ("binary on the JSON type", JSON, block_bytes(&block)),
        ("one zero byte", V3_BINARY, vec![0]),
        (
            "garbage",
            V3_BINARY,
            (0..=255u8).cycle().take(4000).collect(),
        ),
        ("wrong type", JSON, wrong_type.to_string().into_bytes()),
        (
            "wrong nesting",
            JSON,
            wrong_nesting.to_string().into_bytes(),
        ),
        ("u8 overflow", JSON, number_too_big.to_string().into_bytes()),
        ("negative number", JSON, negative.to_string().into_bytes()),
        ("bad hex", JSON, bad_hex.to_string().into_bytes()),
    ];
    for (what, media, body) in cases {
        let reply = post(&node, media, &body);
        let message = reply.assert_error(400);
        assert!(!message.is_empty(), "{what}");
    }
    // Still serving after all of that.
    assert_created(
        &post_json(&node, &block["json"]),
        &block_id(&block),
        "valid block after malformed ones",
    );
    assert!(!node.log().contains("panicked"), "{}", node.log());
}

#[test]
fn wrong_content_types_are_415() {
    let block = first_valid_block();
    let bytes = block_bytes(&block);
    let node = TestNode::start();
    for media in [
        "text/plain",
        "application/octet-stream",
        "application/x-www-form-urlencoded",
        // v2 binary on the v3 route.
        "application/vnd.ledger.serializer-v1",
        "application/vnd.iota.serializer-v1",
    ] {
        let message = post(&node, media, &bytes).assert_error(415);
        assert!(message.contains(media), "{media}: {message}");
    }
    assert_eq!(
        node.get(&format!("{BLOCKS}/{}", block_id(&block))).status,
        404,
        "a 415 must not store the block"
    );
}

#[test]
fn oversize_bodies_are_413() {
    let node = TestNode::start_with(&["--api-body-limit", "4096"], &[]);
    let big = vec![0u8; 4097];
    for media in [JSON, V3_BINARY] {
        post(&node, media, &big).assert_error(413);
        node.post_chunked(BLOCKS, &[("content-type", media)], &big)
            .assert_error(413);
    }
    // At the limit the body is read and judged: a 400, not a 413.
    post(&node, V3_BINARY, &vec![0u8; 4096]).assert_error(400);
}

#[test]
fn default_body_limit_is_1_mib() {
    let node = TestNode::start();
    post(&node, V3_BINARY, &vec![0u8; (1 << 20) + 1]).assert_error(413);
}

#[test]
fn bad_and_unknown_ids() {
    let block = first_valid_block();
    let id = block_id(&block);
    let node = TestNode::start();
    let unknown = format!("0x{}", "ab".repeat(36));
    for suffix in ["", "/metadata"] {
        for bad in [
            "0x00".to_owned(),
            "0xzz".to_owned(),
            id[2..].to_owned(),
            format!("{}ab", id),
            id[..id.len() - 8].to_owned(),
            "0x".to_owned(),
            format!("0x{}", "g".repeat(72)),
        ] {
            let reply = node.get(&format!("{BLOCKS}/{bad}{suffix}"));
            let message = reply.assert_error(400);
            assert!(message.contains("block id"), "{bad}{suffix}: {message}");
        }
        let message = node
            .get(&format!("{BLOCKS}/{unknown}{suffix}"))
            .assert_error(404);
        assert!(message.contains("not found"), "{message}");
        // Not yet submitted.
        node.get(&format!("{BLOCKS}/{id}{suffix}"))
            .assert_error(404);
    }
    // Unknown methods on the v3 routes.
    assert_eq!(node.request("DELETE", BLOCKS).status, 405);
    assert_eq!(node.request("GET", BLOCKS).status, 405);
}

// ---- parameters and restart ---------------------------------------------------------------

/// The embedded dev default is the vectors' `tip49-testnet` parameters, so a node started
/// without `--v3-protocol-parameters` takes every valid vector block with the expected id.
#[test]
fn dev_default_parameters_are_the_vector_parameters() {
    let embedded: Value =
        serde_json::from_str(include_str!("../../src/dev-v3-protocol-parameters.json"))
            .expect("embedded parameters are JSON");
    let params = params_by_ref();
    assert_eq!(
        params.get("protocol_parameters.json#tip49-testnet"),
        Some(&embedded),
        "the dev default differs from the tip49-testnet vector"
    );
    let node = TestNode::start();
    for block in load("blocks.json").iter().filter(|b| is_valid(b)) {
        assert_eq!(params_ref(block), "protocol_parameters.json#tip49-testnet");
        assert_created(
            &post(&node, V3_BINARY, &block_bytes(block)),
            &block_id(block),
            name(block),
        );
    }
}

/// Parameters with another network name: the vector blocks are a 400 (network id mismatch).
#[test]
fn other_network_rejects_the_vector_blocks() {
    let params = params_by_ref();
    let mut other = params["protocol_parameters.json#tip49-testnet"].clone();
    other["networkName"] = json!("example-mynetwork");
    let keep = tempfile::tempdir().expect("dir");
    let node = node_with(&keep, &other);
    let block = first_valid_block();
    let message = post_json(&node, &block["json"]).assert_error(400);
    assert!(message.contains("network id mismatch"), "{message}");
}

#[test]
fn invalid_parameters_file_stops_the_node() {
    let keep = tempfile::tempdir().expect("dir");
    let path = params_file(keep.path(), &json!({"type": 0, "version": 3}));
    let err = common::run_fails(
        &keep.path().join("data"),
        &["--v3-protocol-parameters", path.to_str().expect("utf-8")],
    );
    assert!(err.contains("v3-params.json"), "{err}");
}

/// Blocks stay readable after SIGTERM and a start on the same data dir.
#[test]
fn blocks_survive_a_restart() {
    let keep = tempfile::tempdir().expect("dir");
    let params = params_by_ref();
    let valid: Vec<Value> = load("blocks.json").into_iter().filter(is_valid).collect();
    let tip49 = &params["protocol_parameters.json#tip49-testnet"];
    let mut node = node_with(&keep, tip49);
    for block in &valid {
        assert_created(
            &post_json(&node, &block["json"]),
            &block_id(block),
            name(block),
        );
    }
    assert_eq!(node.terminate().code(), Some(0), "{}", node.log());
    let dir = std::mem::replace(&mut node.dir, tempfile::tempdir().expect("dir"));
    drop(node);

    let path = params_file(keep.path(), tip49);
    let node = TestNode::start_in(
        dir,
        &["--v3-protocol-parameters", path.to_str().expect("utf-8")],
        &[],
    );
    for block in &valid {
        let n = name(block);
        let path = format!("{BLOCKS}/{}", block_id(block));
        let reply = node.get_with(&path, &[("accept", V3_BINARY)]);
        assert_eq!(
            reply.status,
            200,
            "{n} after restart: {}",
            body_text(&reply)
        );
        assert_eq!(reply.body, block_bytes(block), "{n} after restart");
        assert_eq!(node.get(&path).json(), block["json"], "{n} after restart");
        // Known after the restart: 201 with the same id.
        assert_created(
            &post(&node, V3_BINARY, &block_bytes(block)),
            &block_id(block),
            n,
        );
    }
}
