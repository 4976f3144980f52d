//! Snapshots created by the running binary (docs/snapshots-pruning.md §2.3, §4.6, §6.3):
//! `POST /api/core/v2/control/snapshots/create` writes `full_snapshot_<N>.bin` in the snapshot
//! directory and states the window `[min, max]` in every refusal (adjacent targets are never
//! both too old and too new, hornet #540); `tools snap-hash FILE` equals
//! `tools snap-hash --data-dir` of a node started from that file; a kill -9 while writing
//! leaves no file under the final name.

use crate::common;
use crate::v2_support;

use std::path::Path;

use common::{run_cli, TestNode};
use serde_json::{json, Value};
use v2_support::post_genesis_split;

const CREATE: &str = "/api/core/v2/control/snapshots/create";
/// The coordinator issues milestones only when the test asks.
const FROZEN: &[&str] = &["--no-p2p", "--coordinator-interval", "0"];

fn create(node: &TestNode, path: &str, body: &Value) -> common::Reply {
    let auth = format!("Bearer {}", node.jwt());
    node.post(
        path,
        &[
            ("content-type", "application/json"),
            ("authorization", &auth),
        ],
        body.to_string().as_bytes(),
    )
}

fn snap_hash(args: &[&str]) -> Value {
    let mut all = vec!["tools", "snap-hash"];
    all.extend(args);
    let (status, out, err) = run_cli(&all);
    assert!(status.success(), "snap-hash {args:?}: {err}");
    serde_json::from_str(&out).expect("snap-hash prints JSON")
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn a_snapshot_on_request_states_its_window_and_hashes_as_the_node_started_from_it() {
    let node = TestNode::start_with(FROZEN, &[]);
    // A value transaction in milestone 1, so the ledger is more than the genesis.
    let receiver = format!("0x{}", "33".repeat(32));
    let (tx_id, _) = post_genesis_split(&node, 5_000_000, &receiver);
    node.issue_until(25);

    // CMI 25: the window is empty; the message names both ends.
    let msg = create(&node, CREATE, &json!({"index": 5})).assert_error(400);
    assert!(
        msg.contains("not enough history") && msg.contains("[30, 5]"),
        "{msg}"
    );
    let msg = create(&node, CREATE, &json!({})).assert_error(400);
    assert_eq!(msg, "index needs to be specified");
    let msg = create(&node, CREATE, &json!({"index": "7"})).assert_error(400);
    assert!(msg.starts_with("invalid request, error:"), "{msg}");
    // Protected like the other control routes.
    node.post(
        CREATE,
        &[("content-type", "application/json")],
        b"{\"index\":30}",
    )
    .assert_error(403);

    node.issue_until(60);
    // CMI 60: [30, 40]. Each neighbour of an end is refused on its own side only.
    let msg = create(&node, CREATE, &json!({"index": 29})).assert_error(400);
    assert!(msg.contains("too old") && msg.contains("[30, 40]"), "{msg}");
    let msg = create(&node, CREATE, &json!({"index": 41})).assert_error(400);
    assert!(msg.contains("too new") && msg.contains("[30, 40]"), "{msg}");
    create(&node, CREATE, &json!({"index": 30})).assert_json(200);
    // TIP-25's singular path too.
    let made = create(
        &node,
        "/api/core/v2/control/snapshot/create",
        &json!({"index": 40}),
    )
    .assert_json(200);
    let file = node
        .data_dir()
        .join("snapshots")
        .join("full_snapshot_40.bin");
    assert_eq!(made, json!({"index": 40, "filePath": path_str(&file)}));
    assert!(node
        .data_dir()
        .join("snapshots/full_snapshot_30.bin")
        .exists());

    let file_hash = snap_hash(&[path_str(&file)]);
    assert_eq!(file_hash["ledgerIndex"], json!(40));
    let kept = format!("{tx_id}0000");
    node.get(&format!("/api/core/v2/outputs/{kept}"))
        .assert_json(200);

    // A node started from the file, stopped at once, is at ledger index 40: same hashes.
    let mut started = TestNode::start_with(
        &[
            "--no-p2p",
            "--coordinator-interval",
            "0",
            "--snapshot-full",
            path_str(&file),
        ],
        &[],
    );
    let output = started
        .get(&format!("/api/core/v2/outputs/{kept}"))
        .assert_json(200);
    assert_eq!(output["metadata"]["isSpent"], json!(false));
    assert!(started.terminate().success());
    let dir = started.into_dir();
    let node_hash = snap_hash(&["--data-dir", path_str(&dir.path().join("data"))]);
    assert_eq!(node_hash, file_hash);

    // The writer's own data at 60 hashes differently (and says so).
    let mut node = node;
    assert!(node.terminate().success());
    let dir = node.into_dir();
    let writer = snap_hash(&["--data-dir", path_str(&dir.path().join("data"))]);
    assert_eq!(writer["ledgerIndex"], json!(60));
    assert_ne!(writer["ledgerStateHash"], file_hash["ledgerStateHash"]);
    assert_eq!(writer["ledgerTokenSupply"], file_hash["ledgerTokenSupply"]);
}

#[test]
fn a_kill_while_writing_leaves_no_file_under_the_final_name() {
    let node = TestNode::start_with(
        FROZEN,
        &[("LEDGER_NODE_CRASH_AT", "snapshot-outputs-written@1")],
    );
    node.issue_until(55);
    let auth = format!("Bearer {}", node.jwt());
    // The process dies in the middle of the file: no answer.
    let reply = node.try_post(
        CREATE,
        &[
            ("content-type", "application/json"),
            ("authorization", &auth),
        ],
        b"{\"index\":35}",
    );
    assert!(
        reply.is_none(),
        "the node answered: {:?}",
        reply.map(|r| r.status)
    );
    let dir = node.kill_9();
    let snapshots = dir.path().join("data").join("snapshots");
    assert!(!snapshots.join("full_snapshot_35.bin").exists());
    // What is there is the temporary file, which no reader takes for the snapshot.
    let names: Vec<String> = std::fs::read_dir(&snapshots)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| n.ends_with("_tmp")),
        "files after the crash: {names:?}"
    );
    // Started again, the node writes it whole.
    let node = TestNode::start_in(dir, FROZEN, &[]);
    let made = create(&node, CREATE, &json!({"index": 35})).assert_json(200);
    let file = snapshots_file(&node, 35);
    assert_eq!(made["filePath"], json!(path_str(&file)));
    assert_eq!(snap_hash(&[path_str(&file)])["ledgerIndex"], json!(35));
}

fn snapshots_file(node: &TestNode, index: u32) -> std::path::PathBuf {
    node.data_dir()
        .join("snapshots")
        .join(format!("full_snapshot_{index}.bin"))
}

/// Posts a snapshot request for `index` on its own thread; its status when answered.
fn create_in_background(node: &TestNode, index: u32) -> std::thread::JoinHandle<Option<u16>> {
    let url = node.url(CREATE);
    let auth = format!("Bearer {}", node.jwt());
    std::thread::spawn(move || {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        agent
            .post(&url)
            .header("content-type", "application/json")
            .header("authorization", &auth)
            .send(format!("{{\"index\":{index}}}"))
            .map(|r| r.status().as_u16())
            .ok()
    })
}

/// Waits until the node logged its `n`-th pause at the snapshot's pause point.
fn wait_for_pause(node: &TestNode, n: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while node
        .log()
        .matches("LEDGER_NODE_PAUSE_AT=snapshot-outputs-written")
        .count()
        < n
    {
        assert!(std::time::Instant::now() < deadline, "{}", node.log());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn while_a_snapshot_is_written_prune_and_snapshot_requests_get_503() {
    // Each snapshot waits 2 s after its outputs are written, holding the prune/snapshot lock.
    let node = TestNode::start_with(
        FROZEN,
        &[("LEDGER_NODE_PAUSE_AT", "snapshot-outputs-written:2000")],
    );
    node.issue_until(55);
    let writer = create_in_background(&node, 35);
    wait_for_pause(&node, 1);
    let busy = "node is already creating a snapshot or pruning is running";
    let second = create(&node, CREATE, &json!({"index": 34})).assert_error(503);
    assert!(second.contains(busy), "{second}");
    let prune = create(
        &node,
        "/api/core/v2/control/database/prune",
        &json!({"index": 10}),
    )
    .assert_error(503);
    assert!(prune.contains(busy), "{prune}");
    assert_eq!(writer.join().unwrap(), Some(200));
    assert!(snapshots_file(&node, 35).exists());
    // Free again.
    create(&node, CREATE, &json!({"index": 34})).assert_json(200);
}

#[test]
fn a_shutdown_does_not_wait_for_a_snapshot_and_leaves_no_file() {
    // The snapshot pauses longer than the node waits for open requests (10 s) at shutdown.
    let mut node = TestNode::start_with(
        FROZEN,
        &[("LEDGER_NODE_PAUSE_AT", "snapshot-outputs-written:12000")],
    );
    node.issue_until(55);
    let late = create_in_background(&node, 35);
    wait_for_pause(&node, 1);
    let stopping = std::time::Instant::now();
    let status = node.terminate();
    let took = stopping.elapsed();
    assert!(status.success(), "{status:?}\n{}", node.log());
    // Bounded by the request grace (10 s) and the blocking-task grace (5 s); the snapshot
    // sees the shutdown when its pause ends and gives up.
    assert!(
        took < std::time::Duration::from_secs(16),
        "stopping took {took:?}"
    );
    assert_eq!(late.join().unwrap(), None, "the request was not answered");
    let snapshots = node.data_dir().join("snapshots");
    let names: Vec<String> = std::fs::read_dir(&snapshots)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    // Neither the snapshot nor its temporary file.
    assert!(names.is_empty(), "files after the shutdown: {names:?}");
}
