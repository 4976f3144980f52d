//! Pruning through the real binary (docs/snapshots-pruning.md §4): what a pruned milestone
//! covered answers 404 with Hornet's texts, what is newer and every unspent output still
//! answers 200, `/info` reports the pruning index, a restart keeps it, and
//! `POST /api/core/v2/control/database/prune` states its window in every refusal.

use crate::common;
use crate::p2p_support;
use crate::v2_support;

use std::time::Duration;

use common::TestNode;
use p2p_support::{heartbeat, wait_until, NodeConfig, PeerNode, Role};
use serde_json::{json, Value};
use v2_support::{genesis_output_id, post_genesis_split, tagged_data, BLOCKS};

const INFO: &str = "/api/core/v2/info";
const PRUNE: &str = "/api/core/v2/control/database/prune";
const MILESTONES: &str = "/api/core/v2/milestones";
/// The coordinator issues milestones only when the test asks.
const FROZEN: &[&str] = &["--no-p2p", "--coordinator-interval", "0"];

fn pruning_index(node: &TestNode) -> u64 {
    node.get(INFO).json()["status"]["pruningIndex"]
        .as_u64()
        .expect("pruningIndex")
}

fn prune(node: &TestNode, token: &str, body: &Value) -> common::Reply {
    let auth = format!("Bearer {token}");
    node.post(
        PRUNE,
        &[
            ("content-type", "application/json"),
            ("authorization", &auth),
        ],
        body.to_string().as_bytes(),
    )
}

/// Asserts a 404 whose message is `message`.
fn assert_gone(node: &TestNode, path: &str, message: &str) {
    let got = node.get(path).assert_error(404);
    assert_eq!(got, message, "{path}");
}

#[test]
fn pruning_by_milestones_forgets_what_it_covers_and_keeps_the_ledger() {
    let mut args = FROZEN.to_vec();
    args.extend(["--pruning-milestones-to-keep", "25"]);
    let node = TestNode::start_with(&args, &[]);
    assert_eq!(pruning_index(&node), 0);

    // Milestone 1 references a tagged-data block and a transaction that spends the genesis
    // output into a receiver's output (which stays unspent) and the rest.
    let data = node
        .post_json(
            BLOCKS,
            &json!({"protocolVersion": 2, "payload": tagged_data(b"old", b"data")}),
        )
        .created_id();
    let receiver = format!("0x{}", "22".repeat(32));
    let (tx_id, tx_block) = post_genesis_split(&node, 2_000_000, &receiver);
    node.issue_until(1);
    let kept_output = format!("{tx_id}0000");
    node.get(&format!("/api/core/v2/outputs/{}", genesis_output_id()))
        .assert_json(200);

    node.issue_until(60);
    let pruned = pruning_index(&node);
    // Keep 25 below 60, moved in steps of at least 6: somewhere in [29, 35].
    assert!((29..=35).contains(&pruned), "pruning index {pruned}");

    // Pruned: the milestones, their diffs, the blocks they referenced, spent outputs.
    assert_gone(
        &node,
        &format!("{MILESTONES}/by-index/1"),
        "milestone index not found: 1",
    );
    assert_gone(
        &node,
        &format!("{MILESTONES}/by-index/{pruned}"),
        &format!("milestone index not found: {pruned}"),
    );
    let changes = node
        .get(&format!("{MILESTONES}/by-index/1/utxo-changes"))
        .assert_error(404);
    assert!(
        changes.starts_with("can't load milestone diff for index: 1, error: pruned"),
        "{changes}"
    );
    for path in [
        format!("{BLOCKS}/{data}"),
        format!("{BLOCKS}/{data}/metadata"),
    ] {
        assert_gone(&node, &path, &format!("block not found: {data}"));
    }
    assert_gone(
        &node,
        &format!("/api/core/v2/outputs/{}", genesis_output_id()),
        &format!("output not found: {}", genesis_output_id()),
    );
    // The receiver's output is unspent: kept, though the block that made it is pruned.
    let output = node
        .get(&format!("/api/core/v2/outputs/{kept_output}"))
        .assert_json(200);
    assert_eq!(output["metadata"]["isSpent"], json!(false));
    assert_gone(
        &node,
        &format!("/api/core/v2/transactions/{tx_id}/included-block"),
        &format!("block not found: {tx_block}"),
    );
    let old_rich = node
        .get("/api/explorer/v2/ledger/richest-addresses?ledgerIndex=1")
        .status;
    assert!((400..500).contains(&old_rich), "{old_rich}");

    // Not pruned: newer milestones and blocks.
    node.get(&format!("{MILESTONES}/by-index/{}", pruned + 1))
        .assert_json(200);
    node.get(&format!(
        "{MILESTONES}/by-index/{}/utxo-changes",
        pruned + 1
    ))
    .assert_json(200);
    let fresh = node
        .post_json(
            BLOCKS,
            &json!({"protocolVersion": 2, "payload": tagged_data(b"new", b"data")}),
        )
        .created_id();
    node.get(&format!("{BLOCKS}/{fresh}")).assert_json(200);
    node.get("/api/explorer/v2/ledger/richest-addresses")
        .assert_json(200);

    // A restart keeps the pruning index and what it hides.
    let mut node = node;
    node.terminate();
    let node = TestNode::start_in(node.into_dir(), FROZEN, &[]);
    assert_eq!(pruning_index(&node), pruned);
    assert_gone(
        &node,
        &format!("{BLOCKS}/{data}"),
        &format!("block not found: {data}"),
    );
    assert_gone(
        &node,
        &format!("{MILESTONES}/by-index/{pruned}"),
        &format!("milestone index not found: {pruned}"),
    );
    node.get(&format!("{MILESTONES}/by-index/{}", pruned + 1))
        .assert_json(200);
    node.get(&format!("/api/core/v2/outputs/{kept_output}"))
        .assert_json(200);
    node.get(&format!("{BLOCKS}/{fresh}")).assert_json(200);
}

#[test]
fn the_prune_route_states_its_window_and_prunes_inside_it() {
    let mut args = FROZEN.to_vec();
    args.extend(["--pruning-target-size", "0"]);
    let node = TestNode::start_with(&args, &[]);
    node.issue_until(30);
    let token = node.jwt();

    let unauthorized = node.post(
        PRUNE,
        &[("content-type", "application/json")],
        br#"{"index":8}"#,
    );
    assert_eq!(
        unauthorized.status, 403,
        "protected like the other control routes"
    );

    let refused = |body: Value, expected: &str| {
        let message = prune(&node, &token, &body).assert_error(400);
        assert!(message.contains(expected), "{body}: {message}");
    };
    // CMI 30: at most 20 below it, at least 6 past the pruning index 0.
    refused(json!({}), "either index, depth or size has to be specified");
    refused(
        json!({"index": 8, "depth": 2}),
        "either index, depth or size",
    );
    refused(json!({"index": "8"}), "invalid request, error:");
    refused(json!({"index": 11}), "too new");
    refused(json!({"index": 11}), "[6, 10]");
    refused(json!({"index": 5}), "not enough history: minimum index: 6");
    refused(json!({"depth": 40}), "not enough history");
    refused(
        json!({"targetDatabaseSize": "lots"}),
        "invalid request, error:",
    );
    refused(
        json!({"targetDatabaseSize": "1TB"}),
        "no pruning needed: the data directory holds",
    );

    let done = prune(&node, &token, &json!({"index": 8})).assert_json(200);
    assert_eq!(done, json!({"index": 8}));
    assert_eq!(pruning_index(&node), 8);
    refused(
        json!({"index": 8}),
        "no pruning needed: pruning index: 8, target index: 8",
    );
    refused(
        json!({"index": 10}),
        "not enough history: minimum index: 14",
    );
    assert_gone(
        &node,
        &format!("{MILESTONES}/by-index/8"),
        "milestone index not found: 8",
    );
    node.get(&format!("{MILESTONES}/by-index/9"))
        .assert_json(200);

    // By depth: keep 20 below CMI 40 -> 20.
    node.issue_until(40);
    let done = prune(&node, &token, &json!({"depth": 20})).assert_json(200);
    assert_eq!(done, json!({"index": 20}));
    assert_eq!(pruning_index(&node), 20);
}

#[test]
fn the_heartbeat_carries_the_pruning_index_to_peers() {
    const COO_SEED: [u8; 32] = [7; 32];
    let b = PeerNode::start(NodeConfig::new(
        "B",
        Role::Follower {
            coordinator_seed: COO_SEED,
        },
    ));
    let a = PeerNode::start(
        NodeConfig::new(
            "A",
            Role::Coordinator {
                seed: COO_SEED,
                interval: 0.05,
            },
        )
        .args(&["--pruning-milestones-to-keep", "21"])
        .peer(&b.multiaddr, Some("bee")),
    );
    a.wait_connected(&b.peer_id, true, Duration::from_secs(15));
    // A prunes once it is 27 milestones in; B hears of it by heartbeat, and keeps following.
    // The index moves one milestone at a time (each step persisted), so a heartbeat sent
    // during A's first prune may carry a step below 6: B is waited for until it has seen the
    // whole first prune.
    let seen = wait_until(Duration::from_secs(60), "B sees A's pruning index", || {
        let ours = pruning_index(a.node());
        let entry = b.entry(&a.peer_id);
        let theirs = heartbeat(&entry, "prunedMilestoneIndex");
        match ours >= 6 && theirs >= 6 {
            true => Ok(theirs),
            false => Err(format!("A's pruning index {ours}, B's view {theirs}")),
        }
    });
    assert!(seen >= 6, "{seen}");
    // B's own pruning index stays 0 (not configured), and it is not asked below A's index:
    // it keeps confirming A's milestones.
    assert_eq!(pruning_index(b.node()), 0);
    let before = b.node().get(INFO).json()["status"]["confirmedMilestone"]["index"]
        .as_u64()
        .expect("confirmed");
    wait_until(Duration::from_secs(30), "B keeps following", || {
        let now = b.node().get(INFO).json()["status"]["confirmedMilestone"]["index"]
            .as_u64()
            .expect("confirmed");
        (now > before + 10)
            .then_some(())
            .ok_or(format!("B at {now}"))
    });
}

#[test]
fn a_crash_between_pruning_and_its_checkpoint_loses_nothing_retained() {
    let dir = tempfile::tempdir().expect("temp dir");
    let node = TestNode::start_in(
        dir,
        &[
            "--no-p2p",
            "--coordinator-interval",
            "0.05",
            "--pruning-milestones-to-keep",
            "21",
        ],
        // The index moves one milestone at a time, each step persisted: the first run
        // takes it from 0 to 6 in six steps, the second from 6 on; its third step (to 9) is
        // the ninth.
        &[("LEDGER_NODE_CRASH_AT", "prune-before-checkpoint@9")],
    );
    // (block id, confirmed index before it was posted): a block acknowledged then is
    // referenced by a later milestone, so it must be served while that index is not pruned.
    let mut acked: Vec<(String, u64)> = Vec::new();
    for i in 0u32.. {
        let Some(info) = node.try_get(INFO) else {
            break;
        };
        let confirmed = info.json()["status"]["confirmedMilestone"]["index"]
            .as_u64()
            .unwrap_or(0);
        let body =
            json!({"protocolVersion": 2, "payload": tagged_data(b"crash", &i.to_le_bytes())});
        let Some(reply) = node.try_post(
            BLOCKS,
            &[("content-type", "application/json")],
            body.to_string().as_bytes(),
        ) else {
            break;
        };
        if reply.status == 201 {
            acked.push((reply.created_id(), confirmed));
        }
        assert!(i < 100_000, "the node did not stop at its crash point");
    }
    assert!(
        node.log()
            .contains("LEDGER_NODE_CRASH_AT=prune-before-checkpoint@9"),
        "stopped elsewhere:\n{}",
        node.log()
    );
    let node = TestNode::start_in(node.kill_9(), FROZEN, &[]);
    // The second run's first two steps (to 8) were persisted, its third was not: the index
    // stands between the two runs' targets.
    assert_eq!(pruning_index(&node), 8);
    let mut served = 0;
    for (id, confirmed) in &acked {
        let status = node.get(&format!("{BLOCKS}/{id}/metadata")).status;
        if *confirmed >= 8 {
            assert_eq!(status, 200, "{id} (posted at confirmed index {confirmed})");
            served += 1;
        }
    }
    assert!(served > 10, "only {served} blocks checked");
}
