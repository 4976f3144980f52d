//! Pruning gives disk back, through the real binary (engine/FORMAT.md, "Retired segments"): a
//! node that prunes while blocks flow retires its oldest log segments, its data directory
//! stays far below what it stored, and what it still serves (milestones, blocks, an old unspent
//! output, the rich list, the indexer) is the same after a SIGTERM, a SIGKILL and a damaged
//! checkpoint; a crash at each step of a retirement loses nothing it still retains.

use crate::common;
use crate::v2_support;

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use common::TestNode;
use serde_json::{json, Value};
use v2_support::{post_genesis_split, tagged_data, BLOCKS};

const INFO: &str = "/api/core/v2/info";
const MILESTONE: &str = "/api/core/v2/control/milestone";
/// Milestones on demand ([`flow`] asks for one after each batch of blocks, so how many blocks a
/// milestone confirms does not depend on how fast this machine posts), pruning 21 below the
/// confirmed one, 64 KiB segments, disk released at once.
const FLOWING: &[&str] = &[
    "--no-p2p",
    "--coordinator-interval",
    "0",
    "--pruning-milestones-to-keep",
    "21",
    "--log-segment-size",
    "64KB",
];
/// The coordinator issues milestones only when asked: the state holds still.
const FROZEN: &[&str] = &["--no-p2p", "--coordinator-interval", "0"];

/// Bytes a directory takes on disk (allocated blocks, recursively). A running node deletes
/// retired files meanwhile: one gone between the listing and its metadata counts nothing.
fn disk_use(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).expect("list").flatten() {
        let meta = match entry.metadata() {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => panic!("metadata of {}: {e}", entry.path().display()),
        };
        total += if meta.is_dir() {
            disk_use(&entry.path())
        } else {
            meta.blocks() * 512
        };
    }
    total
}

fn status(node: &TestNode) -> Value {
    node.get(INFO).json()["status"].clone()
}

/// Blocks posted between two milestones of [`flow`].
const BATCH: u32 = 10;

/// Posts 1 KiB tagged-data blocks in batches of [`BATCH`] until the node stops answering or
/// `done` says so, asking for a milestone after each batch when `issue` (a node started with
/// [`FLOWING`]); returns (block id, confirmed index when it was posted) of each acknowledged
/// block.
fn flow(
    node: &TestNode,
    issue: bool,
    mut done: impl FnMut(u64, u64) -> bool,
) -> Vec<(String, u64)> {
    let mut acked = Vec::new();
    let data = vec![0x5a; 1024];
    let bearer = format!("Bearer {}", node.jwt());
    for i in 0u32.. {
        let Some(info) = node.try_get(INFO) else {
            break;
        };
        let s = &info.json()["status"];
        let confirmed = s["confirmedMilestone"]["index"].as_u64().unwrap_or(0);
        let pruned = s["pruningIndex"].as_u64().unwrap_or(0);
        if done(confirmed, pruned) {
            break;
        }
        for j in 0..BATCH {
            let mut d = data.clone();
            d[..8].copy_from_slice(&(u64::from(i) << 32 | u64::from(j)).to_le_bytes());
            let body = json!({"protocolVersion": 2, "payload": tagged_data(b"fill", &d)});
            let Some(reply) = node.try_post(
                BLOCKS,
                &[("content-type", "application/json")],
                body.to_string().as_bytes(),
            ) else {
                return acked;
            };
            if reply.status == 201 {
                acked.push((reply.created_id(), confirmed));
            }
        }
        if issue {
            let auth = [("authorization", bearer.as_str())];
            match node.try_post(MILESTONE, &auth, b"") {
                Some(r) if r.status == 200 => {}
                // Stopped (a crash point) or stopping.
                _ => return acked,
            }
        }
        assert!(i < 20_000, "the flow did not end");
    }
    acked
}

/// Posts a transaction splitting the genesis output; returns the receiver's output id, the
/// transaction id and the block id.
fn transfer(node: &TestNode) -> (String, String, String) {
    let receiver = format!("0x{}", "22".repeat(32));
    let (tx_id, block) = post_genesis_split(node, 2_000_000, &receiver);
    (format!("{tx_id}0000"), tx_id, block)
}

/// What a frozen node answers about everything it still keeps.
fn answers(node: &TestNode, output: &str, blocks: &[String]) -> Vec<(String, u16, Vec<u8>)> {
    let s = status(node);
    let pruned = s["pruningIndex"].as_u64().expect("pruningIndex");
    let confirmed = s["confirmedMilestone"]["index"]
        .as_u64()
        .expect("confirmed");
    let mut paths = vec![
        format!("/api/core/v2/outputs/{output}"),
        "/api/explorer/v2/ledger/richest-addresses?top=5".to_owned(),
        format!(
            "/api/indexer/v1/outputs/basic?address={}",
            v2_support::ed25519_bech32(&[0x22; 32])
        ),
    ];
    for i in pruned + 1..=confirmed {
        paths.push(format!("/api/core/v2/milestones/by-index/{i}"));
        paths.push(format!("/api/core/v2/milestones/by-index/{i}/utxo-changes"));
    }
    for id in blocks {
        paths.push(format!("{BLOCKS}/{id}"));
        paths.push(format!("{BLOCKS}/{id}/metadata"));
    }
    paths
        .into_iter()
        .map(|p| {
            let r = node.get(&p);
            (p, r.status, r.body)
        })
        .collect()
}

fn assert_same(before: &[(String, u16, Vec<u8>)], after: &[(String, u16, Vec<u8>)], when: &str) {
    assert_eq!(before.len(), after.len(), "{when}");
    for (b, a) in before.iter().zip(after) {
        assert_eq!(
            (b.1, &b.2),
            (a.1, &a.2),
            "{when}: {} answered {} {}, before {} {}",
            b.0,
            a.1,
            String::from_utf8_lossy(&a.2),
            b.1,
            String::from_utf8_lossy(&b.2)
        );
    }
}

#[test]
fn a_pruning_node_gives_disk_back_and_answers_the_same_after_restarts() {
    let node = TestNode::start_with(FLOWING, &[]);
    let (kept_output, tx_id, tx_block) = transfer(&node);
    let acked = flow(&node, true, |_, pruned| pruned >= 200);
    let dir = node.data_dir();
    assert!(dir.join("log/RETIRED").exists(), "{}", node.log());
    assert!(dir.join("history/base.bin").exists());
    assert!(node.log().contains("retired pruned log segments"));
    // Everything stored went through the log; the retired segments' space came back.
    let stored = acked.len() as u64 * 1100;
    let used = disk_use(&dir.join("log"));
    assert!(
        used * 3 < stored,
        "the log takes {used} bytes on disk after storing about {stored}"
    );
    let out = node
        .get(&format!("/api/core/v2/outputs/{kept_output}"))
        .assert_json(200);
    assert_eq!(out["metadata"]["isSpent"], json!(false));
    // Its block is pruned and its segment retired: Hornet's text, naming the block.
    let gone = node
        .get(&format!("/api/core/v2/transactions/{tx_id}/included-block"))
        .assert_error(404);
    assert_eq!(gone, format!("block not found: {tx_block}"));

    let mut node = node;
    node.terminate();
    let mut node = TestNode::start_in(node.into_dir(), FROZEN, &[]);
    let pruned = status(&node)["pruningIndex"].as_u64().unwrap();
    assert!(pruned >= 200, "{pruned}");
    assert!(!node.data_dir().join("log/00000000.seg").exists());
    // Blocks posted once the confirmed index was well past the pruning index are kept.
    let recent: Vec<String> = acked
        .iter()
        .filter(|(_, confirmed)| *confirmed > pruned + 2)
        .map(|(id, _)| id.clone())
        .collect();
    assert!(recent.len() > 50, "{} recent blocks", recent.len());
    let before = answers(&node, &kept_output, &recent);
    assert!(
        before.iter().all(|(_, s, _)| *s == 200),
        "{:?}",
        before.iter().find(|(_, s, _)| *s != 200)
    );

    node.terminate();
    let node = TestNode::start_in(node.into_dir(), FROZEN, &[]);
    assert_same(
        &before,
        &answers(&node, &kept_output, &recent),
        "after SIGTERM",
    );
    let node = TestNode::start_in(node.kill_9(), FROZEN, &[]);
    assert_same(
        &before,
        &answers(&node, &kept_output, &recent),
        "after SIGKILL",
    );

    // A damaged checkpoint: the state is rebuilt from the ledger base and the remaining log.
    let mut node = node;
    node.terminate();
    let checkpoint = node.data_dir().join("history/checkpoint");
    let dir = node.into_dir();
    let mut bytes = std::fs::read(&checkpoint).unwrap();
    bytes[20] ^= 0x40;
    std::fs::write(&checkpoint, &bytes).unwrap();
    let node = TestNode::start_in(dir, FROZEN, &[]);
    assert!(
        node.log().contains("rebuilt from the block log"),
        "{}",
        node.log()
    );
    assert_same(
        &before,
        &answers(&node, &kept_output, &recent),
        "after a replay from the base",
    );
}

#[test]
fn a_crash_at_each_step_of_a_retirement_loses_nothing_retained() {
    for point in [
        "base-outputs-written@1",
        "base-before-journal@1",
        "retire-before-marker@1",
        "retire-before-marker@2",
    ] {
        let node = TestNode::start_with(FLOWING, &[("LEDGER_NODE_CRASH_AT", point)]);
        let (kept_output, _, _) = transfer(&node);
        let acked = flow(&node, true, |_, _| false);
        assert!(
            node.log()
                .contains(&format!("LEDGER_NODE_CRASH_AT={point}")),
            "{point}: stopped elsewhere:\n{}",
            node.log()
        );
        let node = TestNode::start_in(node.kill_9(), FROZEN, &[]);
        let pruned = status(&node)["pruningIndex"].as_u64().unwrap();
        let mut served = 0;
        for (id, confirmed) in &acked {
            if *confirmed > pruned {
                let got = node.get(&format!("{BLOCKS}/{id}/metadata")).status;
                assert_eq!(
                    got, 200,
                    "{point}: {id} (posted at {confirmed}, pruned {pruned})"
                );
                served += 1;
            }
        }
        assert!(served > 10, "{point}: only {served} blocks checked");
        node.get(&format!("/api/core/v2/outputs/{kept_output}"))
            .assert_json(200);
        // Pruning goes on after the restart: a flowing node retires again.
        let mut node = node;
        node.terminate();
        let node = TestNode::start_in(node.into_dir(), FLOWING, &[]);
        flow(&node, true, |_, p| p >= pruned + 30);
        node.get(&format!("/api/core/v2/outputs/{kept_output}"))
            .assert_json(200);
    }
}

/// Lines of process `pid`'s memory map that map a log file (segment or index), and those whose
/// file was deleted.
fn log_mappings(pid: u32) -> (usize, usize) {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).expect("maps");
    let log_file = |l: &&str| l.contains("/log/") && (l.contains(".seg") || l.contains(".idx"));
    let lines: Vec<&str> = maps.lines().filter(log_file).collect();
    let deleted = lines.iter().filter(|l| l.ends_with("(deleted)")).count();
    (lines.len(), deleted)
}

#[test]
fn with_default_segments_disk_follows_pruning_by_milestones_and_retired_segments_are_unmapped() {
    // Default segment size (64 MiB): far more than this test stores. Pruning by milestones
    // seals segments early (a sixteenth of the milestones kept, 1 MiB at least), so the
    // oldest ones are retired while blocks flow.
    let args = [
        "--no-p2p",
        "--coordinator-interval",
        "0.05",
        "--pruning-milestones-to-keep",
        "32",
    ];
    let node = TestNode::start_with(&args, &[]);
    let log_dir = node.data_dir().join("log");
    let mut most_mappings = 0;
    let acked = flow(&node, false, |_, pruned| {
        most_mappings = most_mappings.max(log_mappings(node.pid()).0);
        pruned >= 150 && node.log().matches("retired pruned log segments").count() >= 3
    });
    let stored = acked.len() as u64 * 1100;
    assert!(
        stored < 60 << 20,
        "stored {stored} bytes: not one default segment"
    );
    assert!(log_dir.join("RETIRED").exists(), "{}", node.log());
    assert!(!log_dir.join("00000000.seg").exists());
    let used = disk_use(&log_dir);
    assert!(
        used * 2 < stored,
        "the log takes {used} bytes on disk after storing about {stored}"
    );
    // Retired segments are unmapped once no reader holds them: the node's mappings of log
    // files stay bounded by the segments it keeps, none of a deleted file lingers.
    let live = std::fs::read_dir(&log_dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".seg"))
        .count();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let (mapped, deleted) = loop {
        let (mapped, deleted) = log_mappings(node.pid());
        if deleted == 0 || std::time::Instant::now() > deadline {
            break (mapped, deleted);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(deleted, 0, "mappings of deleted log files remain");
    assert!(
        mapped <= 2 * live + 2,
        "{mapped} mappings of log files for {live} segments"
    );
    assert!(most_mappings <= 2 * live + 40, "{most_mappings} at most");
    // Blocks posted after the pruning caught up are served.
    let pruned = status(&node)["pruningIndex"].as_u64().unwrap();
    let recent = acked
        .iter()
        .rev()
        .take_while(|(_, confirmed)| *confirmed > pruned + 2)
        .take(20);
    for (id, _) in recent {
        node.get(&format!("{BLOCKS}/{id}")).assert_json(200);
    }
}
