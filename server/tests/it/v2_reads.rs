//! The v2 read endpoints through the real binary: path id parsing (400 naming the
//! parameter), unknown ids (404), content negotiation, rich-list query rules.

use crate::common;
use crate::v2_support;

use common::TestNode;
use ledger_codec::Codec;
use serde_json::json;
use v2_support::*;

fn start() -> TestNode {
    TestNode::start_with(&["--coordinator-interval", "0"], &[])
}

/// Routes with a path id: (template with `{}`, parameter name, id length in bytes).
const ID_ROUTES: &[(&str, &str, usize)] = &[
    ("/api/core/v2/blocks/{}", "blockId", 32),
    ("/api/core/v2/blocks/{}/metadata", "blockId", 32),
    ("/api/core/v2/outputs/{}", "outputId", 34),
    ("/api/core/v2/outputs/{}/metadata", "outputId", 34),
    (
        "/api/core/v2/transactions/{}/included-block",
        "transactionId",
        32,
    ),
    (
        "/api/core/v2/transactions/{}/included-block/metadata",
        "transactionId",
        32,
    ),
    ("/api/core/v2/milestones/by-id/{}", "milestoneId", 32),
];

#[test]
fn malformed_ids_are_400_naming_the_parameter() {
    let node = start();
    for &(template, name, len) in ID_ROUTES {
        let bad = [
            "abc".to_owned(),
            "0x".to_owned(),
            "ab".repeat(len),
            format!("0x{}", "ab".repeat(len - 1)),
            format!("0x{}", "ab".repeat(len + 1)),
            format!("0x{}a", "ab".repeat(len)),
            format!("0x{}", "zz".repeat(len)),
            format!("0x{}%C3%A9", "a".repeat(2 * len - 2)),
            "0x%00".to_owned(),
        ];
        for id in bad {
            let path = template.replace("{}", &id);
            let message = node.get(&path).assert_error(400);
            assert!(message.contains(name), "{path}: {message}");
        }
    }
}

#[test]
fn unknown_ids_are_404_in_either_case() {
    let node = start();
    for &(template, _, len) in ID_ROUTES {
        for id in [
            format!("0x{}", "ab".repeat(len - 2) + "0000"),
            format!("0X{}", "AB".repeat(len - 2) + "0000"),
        ] {
            let path = template.replace("{}", &id);
            let message = node.get(&path).assert_error(404);
            assert!(
                message.contains("not found") || message.contains("no "),
                "{path}: {message}"
            );
            let binary = node.get_with(&path, &[("accept", BINARY)]);
            binary.assert_error(404);
        }
    }
}

/// Reads take any index (a snapshot's ledger may hold one above 127): an unknown id is 404.
#[test]
fn output_index_above_127_is_read_like_any_other() {
    let node = start();
    for v in stardust_vectors("invalid.json") {
        if v["kind"] != json!("output_id") {
            continue;
        }
        let name = v["name"].as_str().expect("name");
        let id = v["bytes"].as_str().expect("bytes");
        for path in [
            format!("/api/core/v2/outputs/{id}"),
            format!("/api/core/v2/outputs/{id}/metadata"),
        ] {
            let message = node.get(&path).assert_error(404);
            assert!(
                message.starts_with("output not found: "),
                "{name}: {message}"
            );
        }
    }
}

#[test]
fn milestone_indices() {
    let node = start();
    for bad in ["abc", "-1", "4294967296", "1.5", "0x1"] {
        let message = node
            .get(&format!("/api/core/v2/milestones/by-index/{bad}"))
            .assert_error(400);
        assert!(message.contains("index"), "{bad}: {message}");
    }
    for unknown in ["0", "1", "4294967295"] {
        node.get(&format!("/api/core/v2/milestones/by-index/{unknown}"))
            .assert_error(404);
    }
}

#[test]
fn genesis_output_json_binary_and_negotiation() {
    let node = start();
    let path = format!("/api/core/v2/outputs/{}", genesis_output_id());
    let reply = node.get(&path);
    assert_eq!(reply.status, 200);
    let body = reply.json();
    assert_eq!(body["output"], basic_output(DEV_SUPPLY, GENESIS_ADDRESS));
    let m = &body["metadata"];
    assert_eq!(m["transactionId"], json!(hex0x(&[0; 32])));
    assert_eq!(m["outputIndex"], json!(0));
    assert_eq!(m["isSpent"], json!(false));
    assert_eq!(m["milestoneIndexBooked"], json!(0));
    assert_eq!(m["ledgerIndex"], json!(0));
    assert!(m.get("transactionIdSpent").is_none());
    // Uppercase hex finds the same output.
    let upper = format!("0x{}", "00".repeat(34)).replace("0x", "0X");
    assert_eq!(
        node.get(&format!("/api/core/v2/outputs/{upper}")).json(),
        body
    );
    for accept in [BINARY, BINARY_IOTA] {
        let raw = node.get_with(&path, &[("accept", accept)]);
        assert_eq!(raw.status, 200);
        assert_eq!(raw.content_type.as_deref(), Some(accept));
        let output = ledger_codec::stardust::Output::decode(&raw.body).expect("output bytes");
        assert_eq!(serde_json::to_value(&output).expect("JSON"), body["output"]);
    }
    // Anything else, including v3 binary, gets JSON (never 406).
    for accept in [
        "*/*",
        "text/html",
        "application/vnd.ledger.serializer-v2",
        "application/json, application/vnd.iota.serializer-v1",
    ] {
        let reply = node.get_with(&path, &[("accept", accept)]);
        assert_eq!(reply.status, 200, "{accept}");
        assert_eq!(reply.json(), body, "{accept}");
    }
}

#[test]
fn richest_addresses_query_rules() {
    let node = start();
    let base = "/api/explorer/v2/ledger/richest-addresses";
    let genesis_only = json!({
        "top": [{"address": [{"type": 0, "pubKeyHash": GENESIS_ADDRESS}],
                 "balance": DEV_SUPPLY.to_string()}],
        "ledgerIndex": 0,
    });
    for query in [
        "",
        "?top=1",
        "?top=1000",
        "?top=100000",
        "?top=99999999999999999999999",
        "?ledgerIndex=0",
        "?ledger_index=0",
        "?ledgerIndex=0&ledger_index=0",
        "?unrelated=1",
    ] {
        let reply = node.get(&format!("{base}{query}"));
        assert_eq!(reply.status, 200, "{query}");
        assert_eq!(reply.json(), genesis_only, "{query}");
    }
    for query in [
        "?top=0",
        "?top=",
        "?top=-3",
        "?top=ten",
        "?top=1e3",
        "?ledgerIndex=x",
        "?ledger_index=-1",
        "?ledgerIndex=1&ledger_index=0",
    ] {
        node.get(&format!("{base}{query}")).assert_error(400);
    }
    for query in ["?ledgerIndex=1", "?ledger_index=4294967295"] {
        node.get(&format!("{base}{query}")).assert_error(404);
    }
    // Access is decided on the path only: a query cannot reach a protected route.
    node.get("/api/core/v2/peers?x=/api/explorer/v2/ledger/richest-addresses")
        .assert_error(403);
}

#[test]
fn no_request_in_this_file_crashed_the_node() {
    // Every malformed request above runs against its own node; this one checks a long run
    // of odd requests against one node and that it still serves afterwards.
    let node = start();
    let long = format!("0x{}", "a".repeat(10_000));
    for path in [
        format!("/api/core/v2/blocks/{long}"),
        format!("/api/core/v2/outputs/{long}/metadata"),
        "/api/core/v2/milestones/by-index/99999999999999999999".to_owned(),
        "/api/explorer/v2/ledger/richest-addresses?top=abc".to_owned(),
    ] {
        node.get(&path).assert_error(400);
    }
    assert_eq!(node.get("/health").status, 200);
    assert_eq!(node.get("/api/core/v2/info").status, 200);
}
