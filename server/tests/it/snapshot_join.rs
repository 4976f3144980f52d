//! A node that joins from another's snapshot files (docs/snapshots-pruning.md §2.2, §2.5,
//! §3): A, a coordinator with automatic snapshots, writes a full file and a delta on it; D
//! starts empty from both, peered with A, catches up, and answers as A does at every index D
//! keeps: outputs, richest addresses, and the ledger hash of `tools snap-hash --data-dir`.

use crate::common;
use crate::p2p_support;
use crate::v2_support;

use std::time::Duration;

use common::run_cli;
use ledger_codec::stardust::{self, Output, Payload};
use p2p_support::{assert_same, NodeConfig, PeerNode, Role};
use serde_json::{json, Value};
use v2_support::{basic_output, dev_key_spend, hex0x, DEV_NETWORK, DEV_SUPPLY, GENESIS_ADDRESS};

const COO_SEED: [u8; 32] = [7; 32];
const OTHER: &str = "0x4444444444444444444444444444444444444444444444444444444444444444";

fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

fn ledger_hash(data_dir: &std::path::Path) -> Value {
    let dir = data_dir.to_str().expect("utf-8");
    let (status, out, err) = run_cli(&["tools", "snap-hash", "--data-dir", dir]);
    assert!(status.success(), "snap-hash --data-dir {dir}: {err}");
    serde_json::from_str(&out).expect("JSON")
}

/// Spends `input` (holding `remainder`, owned by the genesis key) into `amount` to OTHER and
/// the rest back; returns the new outputs and the remainder's input.
fn pay(
    a: &PeerNode,
    input: ([u8; 32], u16),
    remainder: &mut u64,
    amount: u64,
) -> (Vec<String>, ([u8; 32], u16)) {
    let spent: Output<'static> =
        serde_json::from_value(basic_output(*remainder, GENESIS_ADDRESS)).expect("output");
    *remainder -= amount;
    let tx = dev_key_spend(
        input,
        &spent,
        vec![
            basic_output(amount, OTHER),
            basic_output(*remainder, GENESIS_ADDRESS),
        ],
        DEV_NETWORK,
    );
    let tx_id = tx.id().expect("tx id");
    let payload = serde_json::to_value(Payload::Transaction(tx)).expect("payload");
    a.node()
        .post_json(
            "/api/core/v2/blocks",
            &json!({"protocolVersion": 2, "payload": payload}),
        )
        .created_id();
    let outputs = (0..2u16)
        .map(|index| {
            hex0x(
                &stardust::OutputId {
                    transaction_id: tx_id,
                    index,
                }
                .to_array(),
            )
        })
        .collect();
    (outputs, (tx_id, 1))
}

#[test]
fn a_node_started_from_anothers_snapshots_catches_up_with_the_same_ledger() {
    let a = PeerNode::start(
        NodeConfig::new(
            "A",
            Role::Coordinator {
                seed: COO_SEED,
                interval: 0.0,
            },
        )
        .args(&["--snapshot-interval", "10", "--snapshot-depth", "20"]),
    );
    let mut outputs = Vec::new();
    let mut input = ([0u8; 32], 0u16);
    let mut remainder = DEV_SUPPLY;
    for i in 1..=60u64 {
        if i % 7 == 3 {
            let (made, next) = pay(&a, input, &mut remainder, 1_000_000 * i);
            outputs.extend(made);
            input = next;
        }
        if i % 5 == 0 {
            a.post_tagged(b"snapshot-join", &i.to_le_bytes());
        }
        assert_eq!(a.issue_milestone(), i);
    }
    // Snapshots at CMI 50 (full, target 30) and 60 (delta, target 40).
    let snapshots = a.data_dir().join("snapshots");
    let full = snapshots.join("full_snapshot.bin");
    let delta = snapshots.join("delta_snapshot.bin");
    assert!(full.exists() && delta.exists(), "A wrote no snapshot files");

    let d = PeerNode::start(
        NodeConfig::new(
            "D",
            Role::Follower {
                coordinator_seed: COO_SEED,
            },
        )
        .peer(&a.multiaddr, None)
        .args(&[
            "--snapshot-full",
            full.to_str().expect("utf-8"),
            "--snapshot-delta",
            delta.to_str().expect("utf-8"),
        ]),
    );
    assert!(d.ledger_index() >= 40, "D started below the delta's target");
    // A goes on, with a payment after the snapshot; D follows.
    for i in 61..=70u64 {
        if i == 63 {
            let (made, _) = pay(&a, input, &mut remainder, 1_000_000 * i);
            outputs.extend(made);
        }
        assert_eq!(a.issue_milestone(), i);
    }
    p2p_support::wait_until(
        Duration::from_secs(90),
        "D reaches ledger index 70",
        || match d.ledger_index() {
            70.. => Ok(()),
            at => Err(format!("at {at}; D's log:\n{}", tail(&d.node().log()))),
        },
    );

    for index in 40..=70 {
        assert_same(
            &[&a, &d],
            &format!("/api/explorer/v2/ledger/richest-addresses?top=1000&ledgerIndex={index}"),
        );
    }
    // Outputs D knows: those unspent at 40 and everything after; spent ones below 40 are
    // not in its ledger.
    let mut compared = 0;
    for id in &outputs {
        let path = format!("/api/core/v2/outputs/{id}");
        let on_d = d.node().get(&path);
        if on_d.status == 404 {
            let meta = a.node().get(&format!("{path}/metadata")).assert_json(200);
            let spent_at = meta["milestoneIndexSpent"].as_u64().unwrap_or(0);
            assert!(
                spent_at > 0 && spent_at <= 40,
                "D lacks {id}, which A has unspent at 40: {meta}"
            );
            continue;
        }
        assert_same(&[&a, &d], &path);
        compared += 1;
    }
    assert!(compared >= 4, "only {compared} outputs compared");

    let mut a = a;
    let mut d = d;
    a.stop();
    d.stop();
    let (ha, hd) = (ledger_hash(&a.data_dir()), ledger_hash(&d.data_dir()));
    assert_eq!(ha["ledgerIndex"], json!(70));
    assert_eq!(hd["ledgerIndex"], json!(70));
    for key in [
        "ledgerStateHash",
        "utxosCount",
        "ledgerTokenSupply",
        "treasury",
    ] {
        assert_eq!(ha[key], hd[key], "{key}: A {ha} D {hd}");
    }
}
