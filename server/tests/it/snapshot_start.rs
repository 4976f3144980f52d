//! A node started from Hornet's snapshot files (`--snapshot-full`, `--snapshot-delta`;
//! docs/snapshots-pruning.md §3, fixtures in vectors/hornet-snapshots/) reaches the end state
//! Hornet's own snapshot test asserts, serves it, issues milestones on top of it, keeps it
//! across restarts without the flags, and refuses what does not fit: a data directory in use,
//! a delta without its full file, a cut file, two ledgers at once.

use crate::common;

use std::path::{Path, PathBuf};

use common::{run_fails, TestNode};
use serde_json::{json, Value};

const INFO: &str = "/api/core/v2/info";
/// The coordinator issues milestones only when the test asks.
const FROZEN: &[&str] = &["--no-p2p", "--coordinator-interval", "0"];
const SUPPLY: u64 = 2_779_530_283_277_761;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../vectors/hornet-snapshots")
        .join(name)
}

fn start_from(files: &[&str]) -> TestNode {
    let mut args: Vec<String> = FROZEN.iter().map(|s| (*s).to_owned()).collect();
    let paths: Vec<String> = files
        .iter()
        .map(|f| fixture(f).display().to_string())
        .collect();
    args.extend(["--snapshot-full".to_owned(), paths[0].clone()]);
    if let Some(delta) = paths.get(1) {
        args.extend(["--snapshot-delta".to_owned(), delta.clone()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    TestNode::start_with(&args, &[])
}

fn output_id(byte: u8) -> String {
    format!("0x{}", format!("{byte:02x}").repeat(34))
}

fn amount_of(node: &TestNode, id: &str) -> u64 {
    let out = node
        .get(&format!("/api/core/v2/outputs/{id}"))
        .assert_json(200);
    assert_eq!(out["metadata"]["isSpent"], json!(false), "{id}");
    out["output"]["amount"]
        .as_str()
        .expect("amount")
        .parse()
        .expect("decimal")
}

fn status(node: &TestNode) -> Value {
    node.get(INFO).json()["status"].clone()
}

#[test]
fn full_and_delta_reach_hornets_end_state_and_the_ledger_goes_on() {
    let node = start_from(&["snapshot_full_snapshot.bin", "snapshot_delta_snapshot.bin"]);
    let s = status(&node);
    // Hornet after an import at T: CMI = LMI = pruning = T, no milestone id (not stored).
    assert_eq!(s["confirmedMilestone"]["index"], json!(5), "{s}");
    assert_eq!(s["pruningIndex"], json!(5), "{s}");
    let info = node.get(INFO).json();
    assert_eq!(info["protocol"]["networkName"], json!("alphanet1"));
    assert_eq!(info["protocol"]["bech32Hrp"], json!("atoi"));
    // Hornet's snapshot_test.go: one output of 40 000 000 at 0x09…09 (index 2313).
    assert_eq!(amount_of(&node, &output_id(9)), 40_000_000);
    let treasury = node.get("/api/core/v2/treasury").assert_json(200);
    assert_eq!(treasury["amount"], json!((SUPPLY - 40_000_000).to_string()));
    let id = treasury["milestoneId"].as_str().expect("milestoneId");
    assert!(
        id.starts_with("0x2f9698b3") && id.ends_with("65cc41"),
        "{id}"
    );
    for gone in [1, 3] {
        node.get(&format!("/api/core/v2/outputs/{}", output_id(gone)))
            .assert_error(404);
    }
    node.get("/api/core/v2/milestones/by-index/5")
        .assert_error(404);

    // The built-in coordinator continues the chain from the target milestone.
    let issued = node.issue_milestone();
    assert_eq!(issued["index"], json!(6));
    assert_eq!(status(&node)["confirmedMilestone"]["index"], json!(6));
    node.get("/api/core/v2/milestones/by-index/6")
        .assert_json(200);

    // Later starts open the data directory as it is: no flags needed.
    let mut node = node;
    node.terminate();
    let node = TestNode::start_in(node.into_dir(), FROZEN, &[]);
    assert_eq!(status(&node)["confirmedMilestone"]["index"], json!(6));
    assert_eq!(amount_of(&node, &output_id(9)), 40_000_000);
    assert_eq!(
        node.get("/api/core/v2/treasury").assert_json(200)["amount"],
        json!((SUPPLY - 40_000_000).to_string())
    );
    assert_eq!(node.issue_milestone()["index"], json!(7));
}

#[test]
fn each_full_file_alone_is_a_starting_ledger() {
    // The full file alone: rolled back to its target 1.
    let node = start_from(&["snapshot_full_snapshot.bin"]);
    assert_eq!(status(&node)["confirmedMilestone"]["index"], json!(1));
    assert_eq!(amount_of(&node, &output_id(1)), 20_000_000);
    assert_eq!(amount_of(&node, &output_id(2)), 10_000_000);
    assert_eq!(
        node.get("/api/core/v2/treasury").assert_json(200)["amount"],
        json!("2779530253277761")
    );
    drop(node);

    // snap-gen's genesis: target 0, the whole supply on one output with a zero id.
    for (file, treasury) in [
        ("full_snapshot.bin", 0u64),
        ("migration_full_snapshot.bin", 10_000_000_000),
    ] {
        let node = start_from(&[file]);
        assert_eq!(
            status(&node)["confirmedMilestone"]["index"],
            json!(0),
            "{file}"
        );
        assert_eq!(amount_of(&node, &output_id(0)), SUPPLY - treasury, "{file}");
        assert_eq!(
            node.get("/api/core/v2/treasury").assert_json(200)["amount"],
            json!(treasury.to_string()),
            "{file}"
        );
        assert_eq!(node.issue_milestone()["index"], json!(1), "{file}");
    }
}

#[test]
fn snapshot_starts_that_do_not_fit_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().expect("temp dir");
    let full = fixture("snapshot_full_snapshot.bin").display().to_string();
    let delta = fixture("snapshot_delta_snapshot.bin").display().to_string();

    // A delta needs its full file.
    let message = run_fails(&dir.path().join("a"), &["--snapshot-delta", &delta]);
    assert!(
        message.contains("--snapshot-delta needs --snapshot-full"),
        "{message}"
    );

    // Two ledgers at once.
    let message = run_fails(
        &dir.path().join("b"),
        &["--snapshot-full", &full, "--genesis", "g.json"],
    );
    assert!(message.contains("give one"), "{message}");

    // A cut file: refused, naming it, and nothing is left to be taken for a started node.
    let cut = dir.path().join("cut.bin");
    let bytes = std::fs::read(fixture("snapshot_full_snapshot.bin")).expect("fixture");
    std::fs::write(&cut, &bytes[..bytes.len() - 7]).expect("write");
    let data = dir.path().join("c");
    let message = run_fails(&data, &["--snapshot-full", &cut.display().to_string()]);
    assert!(message.contains("cut.bin"), "{message}");
    assert!(!data.join("genesis-snapshot.bin").exists());

    // A data directory in use.
    let mut node = TestNode::start_with(FROZEN, &[]);
    let data = node.data_dir();
    node.terminate();
    let kept = node.into_dir();
    let message = run_fails(&data, &["--snapshot-full", &full]);
    drop(kept);
    assert!(message.contains("is not empty"), "{message}");
}
