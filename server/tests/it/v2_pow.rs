//! Node proof of work on submit with a mainnet-like `minPowScore` of 1500: the node mines a
//! valid nonce for blocks that come with nonce 0, refuses a non-zero nonce below the score,
//! and with `--no-pow` answers 503 with the message clients look for.

use crate::common;
use crate::v2_support;

use common::TestNode;
use serde_json::{json, Value};
use v2_support::*;

use ledger_codec::{
    pow::meets_score,
    stardust::{Block, Payload},
};

const MIN_POW_SCORE: u32 = 1500;

/// The dev genesis with `minPowScore` 1500, written to a temp dir.
fn genesis_file(dir: &tempfile::TempDir) -> String {
    let mut genesis: Value =
        serde_json::from_str(ledger_engine::DEV_GENESIS_JSON).expect("genesis JSON");
    genesis["protocolParameters"]["minPowScore"] = json!(MIN_POW_SCORE);
    let path = dir.path().join("genesis.json");
    std::fs::write(&path, genesis.to_string()).expect("write genesis");
    path.to_str().expect("utf-8 path").to_owned()
}

fn start(extra: &[&str]) -> (TestNode, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let genesis = genesis_file(&dir);
    let mut args = vec!["--genesis", genesis.as_str(), "--coordinator-interval", "0"];
    args.extend_from_slice(extra);
    (TestNode::start_with(&args, &[]), dir)
}

fn stored_bytes(node: &TestNode, id: &str) -> Vec<u8> {
    let reply = node.get_with(&format!("{BLOCKS}/{id}"), &[("accept", BINARY)]);
    assert_eq!(reply.status, 200);
    reply.body
}

fn created(reply: &common::Reply) -> String {
    reply.created_id()
}

#[test]
fn node_mines_nonces_at_score_1500() {
    let (node, _dir) = start(&[]);
    assert_eq!(
        node.get("/api/core/v2/info").json()["protocol"]["minPowScore"],
        json!(MIN_POW_SCORE)
    );

    // JSON without parents and nonce.
    let block = json!({"protocolVersion": 2, "payload": tagged_data(b"pow", b"json")});
    let id = created(&node.post(
        BLOCKS,
        &[("content-type", JSON_CT)],
        block.to_string().as_bytes(),
    ));
    let bytes = stored_bytes(&node, &id);
    assert!(
        meets_score(&bytes, MIN_POW_SCORE),
        "stored block misses the score"
    );
    assert_eq!(hex0x(&Block::id_of(&bytes)), id);
    assert_ne!(
        node.get(&format!("{BLOCKS}/{id}")).json()["nonce"],
        json!("0")
    );

    // Binary with parents and nonce 0: mined too, so the id is not that of the bytes sent.
    let payload: Payload<'static> =
        serde_json::from_value(tagged_data(b"pow", b"binary")).expect("payload");
    let sent = block_bytes(&[[0; 32]], Some(payload.clone()), 0);
    let id = created(&node.post(BLOCKS, &[("content-type", BINARY)], &sent));
    assert_ne!(id, hex0x(&Block::id_of(&sent)));
    let bytes = stored_bytes(&node, &id);
    assert!(meets_score(&bytes, MIN_POW_SCORE));
    assert_eq!(bytes[..bytes.len() - 8], sent[..sent.len() - 8]);

    // A non-zero nonce below the score is refused, not re-mined.
    let weak = (1u64..)
        .map(|n| block_bytes(&[[0; 32]], Some(payload.clone()), n))
        .find(|b| !meets_score(b, MIN_POW_SCORE))
        .expect("a nonce below the score");
    let message = node
        .post(BLOCKS, &[("content-type", BINARY)], &weak)
        .assert_error(400);
    assert!(message.contains("insufficient PoW score"), "{message}");

    // Milestones issued by the node itself are exempt and still confirm.
    let token = format!("Bearer {}", node.jwt());
    let reply = node.post(CONTROL_MILESTONE, &[("authorization", &token)], b"");
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
}

#[test]
fn without_node_pow_a_missing_nonce_is_503() {
    let (node, _dir) = start(&["--no-pow"]);
    assert_eq!(node.get("/api/core/v2/info").json()["features"], json!([]));
    let block = json!({"protocolVersion": 2, "payload": tagged_data(b"nopow", b"")});
    let message = node
        .post(
            BLOCKS,
            &[("content-type", JSON_CT)],
            block.to_string().as_bytes(),
        )
        .assert_error(503);
    assert!(
        message.contains("proof of work is not available on this node"),
        "{message}"
    );
    let bytes = block_bytes(&[[0; 32]], None, 0);
    let message = node
        .post(BLOCKS, &[("content-type", BINARY_IOTA)], &bytes)
        .assert_error(503);
    assert!(message.contains("proof of work is not available on this node"));
}

/// Threads of the node process (`Threads:` in /proc).
fn threads(node: &TestNode) -> u64 {
    std::fs::read_to_string(format!("/proc/{}/status", node.pid()))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn concurrent_pow_requests_share_one_bounded_pool() {
    let (node, _dir) = start(&["--pow-workers", "2"]);
    let before = threads(&node);
    let node = std::sync::Arc::new(node);
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let (node, done) = (std::sync::Arc::clone(&node), std::sync::Arc::clone(&done));
        std::thread::spawn(move || {
            let mut peak = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(threads(&node));
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            peak
        })
    };
    let clients: Vec<_> = (0..24)
        .map(|i| {
            let node = std::sync::Arc::clone(&node);
            std::thread::spawn(move || {
                let block = json!({"protocolVersion": 2,
                    "payload": tagged_data(b"pool", format!("{i}").as_bytes())});
                node.post(
                    BLOCKS,
                    &[("content-type", JSON_CT)],
                    block.to_string().as_bytes(),
                )
            })
        })
        .collect();
    let mut created = 0;
    for c in clients {
        let reply = c.join().expect("client");
        match reply.status {
            201 => created += 1,
            503 => {
                let message = reply.assert_error(503);
                assert!(message.contains("queue is full"), "{message}");
                assert_eq!(reply.header("retry-after"), Some("1"));
            }
            other => panic!("{other}: {}", String::from_utf8_lossy(&reply.body)),
        }
    }
    assert!(created > 0);
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    // One search at a time with two workers: no thread per request.
    let peak = sampler.join().expect("sampler");
    assert!(
        peak <= before + 8,
        "threads {before} -> {peak} for 24 concurrent PoW submits"
    );
}
