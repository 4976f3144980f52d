//! Coordinator settings through the real binary: a node with `--coordinator-key` issues
//! milestones with that key; a node with `--no-coordinator --coordinator-public-keys` follows
//! them when the blocks are posted to it, and rejects milestones of unknown keys. Also the
//! block rates of `info.metrics`.

use crate::common;
use crate::v2_support;

use std::{
    collections::HashSet,
    time::{Duration, Instant},
};

use common::TestNode;
use serde_json::{json, Value};
use v2_support::*;

use ledger_codec::ed25519::SigningKey;

const SEED: [u8; 32] = [7; 32];
const ZERO_ID: &str = "0x0000000000000000000000000000000000000000000000000000000000000000";

/// A node issuing milestones on demand with the key whose seed is [`SEED`].
fn start_coordinator() -> TestNode {
    let dir = tempfile::tempdir().expect("temp dir");
    let key_file = dir.path().join("coo.key");
    std::fs::write(&key_file, format!("0x{}\n", hex::encode(SEED))).expect("key file");
    let key_arg = format!("--coordinator-key={}", key_file.display());
    TestNode::start_in(dir, &["--coordinator-interval=0", &key_arg], &[])
}

fn coordinator_public_key() -> String {
    hex0x(&SigningKey::from_seed(&SEED).public_key())
}

fn post_json(node: &TestNode, block: &Value) -> String {
    node.post_json(BLOCKS, block).created_id()
}

/// The binary blocks of `tip`'s past cone on `node`, parents before children.
fn past_cone(node: &TestNode, tip: &str) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    // Iterative post-order walk: (id, children pushed?).
    let mut stack = vec![(tip.to_owned(), false)];
    while let Some((id, expanded)) = stack.pop() {
        if expanded {
            let raw = node.get_with(&format!("{BLOCKS}/{id}"), &[("accept", BINARY)]);
            assert_eq!(raw.status, 200, "block {id}");
            out.push((id, raw.body));
            continue;
        }
        if id == ZERO_ID || !seen.insert(id.clone()) {
            continue;
        }
        let block = node.get(&format!("{BLOCKS}/{id}")).json();
        stack.push((id, true));
        for parent in block["parents"].as_array().expect("parents") {
            stack.push((parent.as_str().expect("parent id").to_owned(), false));
        }
    }
    out
}

fn confirmed_index(node: &TestNode) -> u64 {
    node.get("/api/core/v2/info").json()["status"]["confirmedMilestone"]["index"]
        .as_u64()
        .expect("confirmed index")
}

#[test]
fn a_follower_applies_the_milestones_of_an_external_coordinator() {
    let coo = start_coordinator();
    let public_key = coordinator_public_key();
    let keys_arg = format!("--coordinator-public-keys={public_key}");
    let follower = TestNode::start_with(&["--no-coordinator", &keys_arg], &[]);
    let stranger = TestNode::start_with(
        &[
            "--no-coordinator",
            &format!("--coordinator-public-keys=0x{}", "ab".repeat(32)),
        ],
        &[],
    );
    assert!(
        coo.log().contains(&public_key[2..]),
        "the coordinator logs its public key:\n{}",
        coo.log()
    );

    // On the coordinator node: spend the genesis output and confirm it.
    let receiver = format!("0x{}", "22".repeat(32));
    let tx = genesis_split(2_000_000, &receiver);
    let tx_id = hex0x(&tx.id().unwrap());
    let tx_block = json!({"protocolVersion": 2, "payload": v2_payload(tx)});
    let tx_block_id = post_json(&coo, &tx_block);
    let milestone = coo.issue_milestone();
    let milestone_block = milestone["blockId"].as_str().expect("blockId").to_owned();
    assert_eq!(milestone["index"], json!(1));

    // Replay the milestone's past cone on the follower, parents first.
    let cone = past_cone(&coo, &milestone_block);
    assert!(
        cone.iter().any(|(id, _)| *id == tx_block_id),
        "cone has the tx"
    );
    assert_eq!(
        cone.last().map(|(id, _)| id.as_str()),
        Some(milestone_block.as_str())
    );
    for (id, bytes) in &cone {
        let reply = follower.post(BLOCKS, &[("content-type", BINARY)], bytes);
        assert_eq!(
            reply.status,
            201,
            "{id}: {}",
            String::from_utf8_lossy(&reply.body)
        );
        assert_eq!(reply.json()["blockId"], json!(id));
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while confirmed_index(&follower) < 1 {
        assert!(
            Instant::now() < deadline,
            "follower did not confirm:\n{}",
            follower.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // The follower's ledger and milestone equal the coordinator's.
    let included = follower
        .get(&format!("/api/core/v2/transactions/{tx_id}/included-block"))
        .json();
    assert_eq!(included, coo.get(&format!("{BLOCKS}/{tx_block_id}")).json());
    for node in [&coo, &follower] {
        let meta = node.get(&format!("{BLOCKS}/{tx_block_id}/metadata")).json();
        assert_eq!(meta["ledgerInclusionState"], json!("included"), "{meta}");
        assert_eq!(meta["referencedByMilestoneIndex"], json!(1), "{meta}");
    }
    let by_index = |n: &TestNode| n.get("/api/core/v2/milestones/by-index/1").json();
    assert_eq!(by_index(&follower), by_index(&coo));
    assert_eq!(
        follower
            .get(&format!("/api/core/v2/outputs/{tx_id}0000"))
            .json(),
        coo.get(&format!("/api/core/v2/outputs/{tx_id}0000")).json()
    );

    // A node that trusts another key stores the ordinary blocks but rejects the milestone.
    let (last, rest) = cone.split_last().expect("non-empty cone");
    for (id, bytes) in rest {
        let reply = stranger.post(BLOCKS, &[("content-type", BINARY)], bytes);
        assert_eq!(reply.status, 201, "{id}");
    }
    let reply = stranger.post(BLOCKS, &[("content-type", BINARY)], &last.1);
    let message = reply.assert_error(400);
    assert!(message.contains("unknown key"), "{message}");
    assert_eq!(confirmed_index(&stranger), 0);
    stranger
        .get(&format!("/api/core/v2/transactions/{tx_id}/included-block"))
        .assert_error(404);
}

#[test]
fn bad_coordinator_settings_are_refused_at_start() {
    let key = format!("0x{}", "ab".repeat(32));
    let twice = format!("--coordinator-public-keys={key},{key}");
    let cases: [(&[&str], &str); 5] = [
        (
            &["--no-coordinator", "--coordinator-public-keys=0x1234"],
            "coordinator-public-keys",
        ),
        (
            &["--no-coordinator", &twice, "--milestone-threshold=2"],
            "listed twice",
        ),
        (&["--milestone-threshold=2"], "milestone-threshold"),
        (&["--milestone-threshold=0"], "milestone-threshold"),
        (&["--coordinator-key=/nonexistent/coo.key"], "coo.key"),
    ];
    for (args, needle) in cases {
        let dir = tempfile::tempdir().expect("temp dir");
        let err = common::run_fails(&dir.path().join("data"), args);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn info_metrics_report_block_rates() {
    let node = start_coordinator();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut i = 0u32;
    loop {
        i += 1;
        post_json(
            &node,
            &json!({"protocolVersion": 2, "payload": tagged_data(b"rate", &i.to_le_bytes())}),
        );
        if i.is_multiple_of(5) {
            node.issue_milestone();
        }
        let metrics = node.get("/api/core/v2/info").json()["metrics"].clone();
        let rate = |k: &str| metrics[k].as_f64().expect("number");
        if rate("blocksPerSecond") > 0.0
            && rate("referencedBlocksPerSecond") > 0.0
            && rate("referencedRate") > 0.0
        {
            break;
        }
        assert!(Instant::now() < deadline, "metrics stayed zero: {metrics}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn v2_payload(tx: ledger_codec::stardust::Transaction<'static>) -> Value {
    serde_json::to_value(ledger_codec::stardust::Payload::Transaction(tx)).expect("payload JSON")
}
