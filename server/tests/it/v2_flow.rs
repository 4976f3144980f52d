//! The v2 API end to end through the real binary: submit tagged data (JSON without parents
//! and nonce, and binary), spend the dev genesis output, issue a milestone, then read
//! everything back: outputs, included block, block metadata, milestones, rich list.

use crate::common;
use crate::v2_support;

use common::TestNode;
use serde_json::{json, Value};
use v2_support::*;

use ledger_codec::{
    stardust::{Block, Output, Payload},
    Codec,
};

fn start() -> TestNode {
    TestNode::start_with(&["--coordinator-interval", "0"], &[])
}

fn bearer(node: &TestNode) -> String {
    format!("Bearer {}", node.jwt())
}

/// Posts a JSON block and returns its id (asserting 201, Location and body).
fn post_json(node: &TestNode, block: &Value) -> String {
    assert_created(&node.post_json(BLOCKS, block))
}

fn assert_created(reply: &common::Reply) -> String {
    let id = reply.assert_json(201)["blockId"]
        .as_str()
        .expect("blockId")
        .to_owned();
    assert_eq!(reply.header("location"), Some(id.as_str()));
    assert_eq!(id.len(), 66, "{id}");
    assert_eq!(id, id.to_lowercase());
    id
}

#[test]
fn full_flow_tagged_data_transaction_milestone_and_reads() {
    let node = start();

    // A JSON tagged-data block without parents and nonce: the node fills both in.
    let tagged = json!({"protocolVersion": 2, "payload": tagged_data(b"flow", b"json")});
    let json_id = post_json(&node, &tagged);
    let stored = node.get(&format!("{BLOCKS}/{json_id}"));
    assert_eq!(stored.status, 200);
    let stored = stored.json();
    assert_eq!(stored["payload"], tagged["payload"]);
    assert_eq!(stored["nonce"], json!("0"));
    assert!(!stored["parents"].as_array().expect("parents").is_empty());

    // The same block again: 201 with the same id.
    let again = node.post(
        BLOCKS,
        &[("content-type", JSON_CT)],
        stored.to_string().as_bytes(),
    );
    assert_eq!(assert_created(&again), json_id);

    // A binary tagged-data block on the tips; the id is BLAKE2b-256 of the bytes.
    let tips = tips_of(&node.get("/api/core/v2/tips").json());
    let tagged_payload: Payload<'static> =
        serde_json::from_value(tagged_data(b"flow", b"binary")).expect("payload");
    let bytes = block_bytes(&tips, Some(tagged_payload), 0);
    let bin_id = assert_created(&node.post(BLOCKS, &[("content-type", BINARY)], &bytes));
    assert_eq!(bin_id, hex0x(&Block::id_of(&bytes)));
    let raw = node.get_with(&format!("{BLOCKS}/{bin_id}"), &[("accept", BINARY_IOTA)]);
    assert_eq!(raw.status, 200);
    assert_eq!(raw.content_type.as_deref(), Some(BINARY_IOTA));
    assert_eq!(raw.body, bytes);

    // Not yet referenced: metadata without inclusion state, with tip advice.
    let meta = node.get(&format!("{BLOCKS}/{bin_id}/metadata")).json();
    assert_eq!(meta["blockId"], json!(bin_id));
    assert_eq!(meta["isSolid"], json!(true));
    assert!(meta.get("referencedByMilestoneIndex").is_none(), "{meta}");
    assert!(meta.get("ledgerInclusionState").is_none(), "{meta}");
    assert_eq!(meta["shouldPromote"], json!(false), "{meta}");
    assert_eq!(meta["shouldReattach"], json!(false), "{meta}");

    // Spend the genesis output: 1 Mi to a new address, the rest back to the owner.
    let receiver = format!("0x{}", "11".repeat(32));
    let tx = genesis_split(1_000_000, &receiver);
    let tx_id = hex0x(&tx.id().unwrap());
    let tx_block = json!({"protocolVersion": 2, "payload": Payload::Transaction(tx.clone())});
    let tx_block_id = post_json(&node, &tx_block);

    // Before the milestone: the transaction's outputs and included block are unknown.
    let out0 = format!("{tx_id}0000");
    node.get(&format!("/api/core/v2/outputs/{out0}"))
        .assert_error(404);
    node.get(&format!("/api/core/v2/transactions/{tx_id}/included-block"))
        .assert_error(404);
    // The genesis output is confirmed from the start.
    let genesis = node.get(&format!("/api/core/v2/outputs/{}", genesis_output_id()));
    assert_eq!(genesis.status, 200);
    assert_eq!(genesis.json()["metadata"]["isSpent"], json!(false));

    let index_before = node.get("/api/core/v2/info").json()["status"]["confirmedMilestone"]
        ["index"]
        .as_u64()
        .expect("index");

    let issued = node.issue_milestone();
    let index = issued["index"].as_u64().expect("index");
    assert_eq!(index, index_before + 1, "{issued}");
    let milestone_id = issued["milestoneId"]
        .as_str()
        .expect("milestoneId")
        .to_owned();
    let milestone_block = issued["blockId"].as_str().expect("blockId").to_owned();

    // The new output, JSON and binary.
    let out = node.get(&format!("/api/core/v2/outputs/{out0}"));
    assert_eq!(out.status, 200, "{}", String::from_utf8_lossy(&out.body));
    let out = out.json();
    assert_eq!(out["output"], basic_output(1_000_000, &receiver));
    let m = &out["metadata"];
    assert_eq!(m["blockId"], json!(tx_block_id));
    assert_eq!(m["transactionId"], json!(tx_id));
    assert_eq!(m["outputIndex"], json!(0));
    assert_eq!(m["isSpent"], json!(false));
    assert_eq!(m["milestoneIndexBooked"], json!(index));
    assert_eq!(m["ledgerIndex"], json!(index));
    assert!(m["milestoneTimestampBooked"]
        .as_u64()
        .is_some_and(|t| t > 0));
    for absent in [
        "milestoneIndexSpent",
        "milestoneTimestampSpent",
        "transactionIdSpent",
    ] {
        assert!(m.get(absent).is_none(), "{absent} in {m}");
    }
    let meta_only = node.get(&format!("/api/core/v2/outputs/{out0}/metadata"));
    assert_eq!(meta_only.json(), *m);
    let raw = node.get_with(
        &format!("/api/core/v2/outputs/{out0}"),
        &[("accept", BINARY)],
    );
    assert_eq!(raw.status, 200);
    assert_eq!(raw.content_type.as_deref(), Some(BINARY));
    let decoded = Output::decode(&raw.body).expect("output bytes");
    assert_eq!(decoded.amount(), 1_000_000);

    // The spent genesis output carries the spending fields.
    let spent = node
        .get(&format!("/api/core/v2/outputs/{}", genesis_output_id()))
        .json();
    let sm = &spent["metadata"];
    assert_eq!(sm["isSpent"], json!(true), "{spent}");
    assert_eq!(sm["milestoneIndexSpent"], json!(index));
    assert_eq!(sm["transactionIdSpent"], json!(tx_id));
    assert!(sm["milestoneTimestampSpent"].as_u64().is_some());

    // Included block, JSON and binary, and its metadata.
    let inc = node.get(&format!("/api/core/v2/transactions/{tx_id}/included-block"));
    assert_eq!(inc.status, 200);
    assert_eq!(inc.json()["payload"], tx_block["payload"]);
    let inc_raw = node.get_with(
        &format!("/api/core/v2/transactions/{tx_id}/included-block"),
        &[("accept", BINARY)],
    );
    assert_eq!(inc_raw.content_type.as_deref(), Some(BINARY));
    assert_eq!(hex0x(&Block::id_of(&inc_raw.body)), tx_block_id);
    let inc_meta = node
        .get(&format!(
            "/api/core/v2/transactions/{tx_id}/included-block/metadata"
        ))
        .json();
    assert_eq!(inc_meta["blockId"], json!(tx_block_id));
    assert_eq!(inc_meta["ledgerInclusionState"], json!("included"));
    assert_eq!(inc_meta["referencedByMilestoneIndex"], json!(index));
    assert!(inc_meta["whiteFlagIndex"].as_u64().is_some(), "{inc_meta}");
    assert!(inc_meta.get("shouldPromote").is_none(), "{inc_meta}");
    assert!(inc_meta.get("conflictReason").is_none(), "{inc_meta}");

    // Tagged-data blocks are referenced without a transaction.
    for id in [&json_id, &bin_id] {
        let meta = node.get(&format!("{BLOCKS}/{id}/metadata")).json();
        assert_eq!(
            meta["ledgerInclusionState"],
            json!("noTransaction"),
            "{meta}"
        );
        assert_eq!(meta["referencedByMilestoneIndex"], json!(index), "{meta}");
    }

    // The milestone by index and by id: JSON payload and binary payload bytes.
    let by_index = node.get(&format!("/api/core/v2/milestones/by-index/{index}"));
    assert_eq!(by_index.status, 200);
    let by_index = by_index.json();
    assert_eq!(by_index["type"], json!(7));
    assert_eq!(by_index["index"], json!(index));
    let by_id = node
        .get(&format!("/api/core/v2/milestones/by-id/{milestone_id}"))
        .json();
    assert_eq!(by_id, by_index);
    let upper = format!("0x{}", milestone_id[2..].to_uppercase());
    assert_eq!(
        node.get(&format!("/api/core/v2/milestones/by-id/{upper}"))
            .json(),
        by_index
    );
    let ms_raw = node.get_with(
        &format!("/api/core/v2/milestones/by-index/{index}"),
        &[("accept", BINARY)],
    );
    assert_eq!(ms_raw.content_type.as_deref(), Some(BINARY));
    let payload = Payload::decode(&ms_raw.body).expect("milestone payload bytes");
    let Payload::Milestone(ms) = payload else {
        panic!("not a milestone payload")
    };
    assert_eq!(hex0x(&ms.id().unwrap()), milestone_id);
    let ms_block = node.get(&format!("{BLOCKS}/{milestone_block}")).json();
    assert_eq!(ms_block["payload"], by_index);
    let ms_meta = node
        .get(&format!("{BLOCKS}/{milestone_block}/metadata"))
        .json();
    assert_eq!(ms_meta["milestoneIndex"], json!(index), "{ms_meta}");

    // Info reflects the milestone.
    let info = node.get("/api/core/v2/info").json();
    for key in ["latestMilestone", "confirmedMilestone"] {
        let m = &info["status"][key];
        assert_eq!(m["index"], json!(index), "{info}");
        assert_eq!(m["milestoneId"], json!(milestone_id), "{info}");
        assert!(m["timestamp"].as_u64().is_some(), "{info}");
    }

    // Rich list now and one index earlier.
    let rich_list =
        |query: String| node.get(&format!("/api/explorer/v2/ledger/richest-addresses{query}"));
    let rich = rich_list(format!("?ledgerIndex={index}&top=5")).json();
    assert_eq!(rich["ledgerIndex"], json!(index));
    assert_eq!(
        rich["top"],
        json!([
            {"address": [{"type": 0, "pubKeyHash": GENESIS_ADDRESS}],
             "balance": (DEV_SUPPLY - 1_000_000).to_string()},
            {"address": [{"type": 0, "pubKeyHash": receiver}], "balance": "1000000"},
        ])
    );
    assert_eq!(rich_list(String::new()).json(), rich);
    let before = rich_list(format!("?ledger_index={index_before}")).json();
    assert_eq!(before["ledgerIndex"], json!(index_before));
    assert_eq!(
        before["top"],
        json!([{"address": [{"type": 0, "pubKeyHash": GENESIS_ADDRESS}],
                "balance": DEV_SUPPLY.to_string()}])
    );
    let one = rich_list("?top=1".into()).json();
    assert_eq!(one["top"].as_array().map(Vec::len), Some(1));
    rich_list(format!("?ledgerIndex={}", index + 1)).assert_error(404);

    // A double spend after confirmation is accepted as a block but conflicts.
    let double = genesis_spend(vec![basic_output(DEV_SUPPLY, &receiver)], DEV_NETWORK);
    let double_id = hex0x(&double.id().unwrap());
    let double_block_id = post_json(
        &node,
        &json!({"protocolVersion": 2, "payload": Payload::Transaction(double)}),
    );
    node.issue_milestone();
    let meta = node
        .get(&format!("{BLOCKS}/{double_block_id}/metadata"))
        .json();
    assert_eq!(meta["ledgerInclusionState"], json!("conflicting"), "{meta}");
    assert!(
        meta["conflictReason"].as_u64().is_some_and(|c| c > 0),
        "{meta}"
    );
    node.get(&format!(
        "/api/core/v2/transactions/{double_id}/included-block"
    ))
    .assert_error(404);
    node.get(&format!(
        "/api/core/v2/transactions/{double_id}/included-block/metadata"
    ))
    .assert_error(404);
}

#[test]
fn control_milestone_needs_a_token_and_a_coordinator() {
    let node = start();
    assert_eq!(
        node.post(CONTROL_MILESTONE, &[], b"").assert_error(403),
        ledger_api::error::NOT_PUBLIC
    );
    node.post(
        CONTROL_MILESTONE,
        &[("authorization", "Bearer nonsense")],
        b"",
    )
    .assert_error(403);
    let first = node.issue_milestone();
    let second = node.issue_milestone();
    assert_eq!(
        second["index"].as_u64(),
        first["index"].as_u64().map(|i| i + 1)
    );
    for key in ["milestoneId", "blockId"] {
        assert_eq!(first[key].as_str().map(str::len), Some(66), "{first}");
    }

    let no_coo = TestNode::start_with(&["--no-coordinator"], &[]);
    let token = bearer(&no_coo);
    let message = no_coo
        .post(CONTROL_MILESTONE, &[("authorization", &token)], b"")
        .assert_error(503);
    assert!(message.contains("coordinator"), "{message}");
}

#[test]
fn info_has_every_field_the_client_needs() {
    let node = start();
    let reply = node.get("/api/core/v2/info");
    assert_eq!(reply.status, 200);
    assert!(reply
        .content_type
        .as_deref()
        .is_some_and(|c| c.starts_with("application/json")));
    let info = reply.json();
    assert_eq!(info["name"], json!("ledger-node"));
    assert!(info["version"].as_str().is_some_and(|v| !v.is_empty()));
    assert_eq!(info["status"]["isHealthy"], json!(true));
    assert_eq!(info["status"]["latestMilestone"]["index"], json!(0));
    assert_eq!(info["status"]["confirmedMilestone"]["index"], json!(0));
    assert!(info["status"]["pruningIndex"].as_u64().is_some());
    assert_eq!(info["supportedProtocolVersions"], json!([2]));
    assert_eq!(
        info["protocol"],
        json!({
            "version": 2, "networkName": DEV_NETWORK, "bech32Hrp": "rms", "minPowScore": 0,
            "belowMaxDepth": 15,
            "rentStructure": {"vByteCost": 100, "vByteFactorData": 1, "vByteFactorKey": 10},
            "tokenSupply": DEV_SUPPLY.to_string(),
        })
    );
    assert_eq!(info["pendingProtocolParameters"], json!([]));
    for key in ["name", "tickerSymbol", "unit", "subunit"] {
        assert!(info["baseToken"][key].is_string(), "{key}: {info}");
    }
    assert!(info["baseToken"]["decimals"].is_u64());
    assert!(info["baseToken"]["useMetricPrefix"].is_boolean());
    for key in [
        "blocksPerSecond",
        "referencedBlocksPerSecond",
        "referencedRate",
    ] {
        assert!(info["metrics"][key].is_number(), "{key}: {info}");
    }
    assert_eq!(info["features"], json!(["pow"]));

    let no_pow = TestNode::start_with(&["--no-pow", "--coordinator-interval", "0"], &[]);
    assert_eq!(
        no_pow.get("/api/core/v2/info").json()["features"],
        json!([])
    );
}

#[test]
fn tips_on_a_fresh_node_and_after_blocks() {
    let node = start();
    let reply = node.get("/api/core/v2/tips");
    assert_eq!(reply.status, 200);
    let fresh = tips_of(&reply.json());
    // No block yet: the genesis entry point stands in.
    assert_eq!(fresh, vec![[0u8; 32]]);
    let mut ids = Vec::new();
    for i in 0..6u8 {
        let block = json!({"protocolVersion": 2, "parents": [hex0x(&[0; 32])],
                           "payload": tagged_data(&[i], b"tip")});
        ids.push(post_json(&node, &block));
    }
    let tips = tips_of(&node.get("/api/core/v2/tips").json());
    assert!((1..=4).contains(&tips.len()), "{tips:?}");
    let mut sorted = tips.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted, tips, "sorted and unique");
    for tip in &tips {
        assert!(
            ids.contains(&hex0x(tip)),
            "{} is not a new block",
            hex0x(tip)
        );
    }
}

#[test]
fn routes_lists_the_explorer() {
    let node = start();
    let routes = node.get("/api/routes").json();
    let list = routes["routes"].as_array().expect("routes");
    for group in ["core/v2", "explorer/v2"] {
        assert!(list.contains(&json!(group)), "{routes}");
    }
}
