//! The node keeps accepting blocks for as long as it runs: the real binary with the built-in
//! coordinator at 0.2 s runs through more than 60 milestones while clients post tagged data and
//! value transactions, with parents filled by the node and with parents read from `/tips`
//! (fresh, and held back for a while as a slow client would). Every post is 201, every block is
//! referenced by a milestone soon after its 201, tip selection always has a healthy tip, and
//! parents held past below-max-depth are refused with the precise reason.

use crate::common;
use crate::v2_support;

use std::time::{Duration, Instant};

use common::TestNode;
use ledger_codec::stardust::{Output, Payload};
use serde_json::{json, Value};
use v2_support::{
    basic_output, block_bytes, dev_key_spend, genesis_output, hex0x, tagged_data, tips_of,
    transaction_id, BINARY, BLOCKS, DEV_NETWORK, DEV_SUPPLY, GENESIS_ADDRESS,
};

/// Milestones the run goes through (the bug this guards against struck at the 16th).
const MILESTONES: u32 = 70;
/// The dev network's below-max-depth.
const BELOW_MAX_DEPTH: u32 = 15;
/// A block must be referenced by a milestone at most this many milestones after its 201
/// (the coordinator references every tip, so the tip pool drains at each milestone).
const MAX_REFERENCE_DELAY: u32 = 3;
/// Bounds a hang on a loaded machine; asserts nothing about speed.
const RUN_TIMEOUT: Duration = Duration::from_secs(300);

fn confirmed_index(node: &TestNode) -> u32 {
    let info = node.get("/api/core/v2/info").json();
    let index = info["status"]["confirmedMilestone"]["index"].as_u64();
    u32::try_from(index.unwrap_or(0)).expect("index fits u32")
}

fn read_tips(node: &TestNode) -> Vec<[u8; 32]> {
    let reply = node.get("/api/core/v2/tips");
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let tips = tips_of(&reply.json());
    assert!(!tips.is_empty(), "no tips");
    tips
}

/// A posted block: its id and the confirmed index when it got its 201.
struct Posted {
    id: String,
    at: u32,
    what: &'static str,
}

/// The value-transaction chain: each spends the previous one's only output back to the
/// genesis owner, and is sent once the previous one is included.
struct Spender {
    input: ([u8; 32], u16),
    spent: Output<'static>,
    pending: Option<String>,
    included: u32,
    /// The output of the last included transaction.
    last_included: Option<([u8; 32], u16)>,
}

impl Spender {
    fn new() -> Self {
        Self {
            input: ([0; 32], 0),
            spent: genesis_output(),
            pending: None,
            included: 0,
            last_included: None,
        }
    }

    /// The next transaction payload if the previous one is included (or none was sent).
    fn next(&mut self, node: &TestNode) -> Option<Payload<'static>> {
        if let Some(id) = &self.pending {
            let meta = node.get(&format!("{BLOCKS}/{id}/metadata")).json();
            match meta.get("ledgerInclusionState").and_then(Value::as_str) {
                None => return None,
                Some("included") => {
                    self.included += 1;
                    self.pending = None;
                    self.last_included = Some(self.input);
                }
                Some(other) => panic!("transaction block {id} is {other}: {meta}"),
            }
        }
        let output = basic_output(DEV_SUPPLY, GENESIS_ADDRESS);
        let tx = dev_key_spend(self.input, &self.spent, vec![output.clone()], DEV_NETWORK);
        self.input = (transaction_id(&tx), 0);
        self.spent = serde_json::from_value(output).expect("output");
        Some(Payload::Transaction(tx))
    }
}

#[test]
fn a_node_accepts_blocks_through_many_milestones() {
    let node = TestNode::start_with(&["--coordinator-interval", "0.2"], &[]);
    let started = Instant::now();
    let mut posted: Vec<Posted> = Vec::new();
    let mut spender = Spender::new();
    // Tips a slow client read, with the index at which it read them.
    let mut held: Option<(u32, Vec<[u8; 32]>)> = None;
    let mut held_checked = 0;
    let mut refused_checked = false;
    let mut round = 0u32;
    loop {
        let cmi = confirmed_index(&node);
        if cmi >= MILESTONES {
            break;
        }
        assert!(
            started.elapsed() < RUN_TIMEOUT,
            "stuck at milestone {cmi}; log:\n{}",
            node.log()
        );
        round += 1;
        let tag = format!("long-run {round}");

        // Parents filled by the node (JSON without parents and nonce).
        let body = json!({"protocolVersion": 2, "payload": tagged_data(tag.as_bytes(), b"node")});
        let id = node.post_json(BLOCKS, &body).created_id();
        posted.push(Posted {
            id,
            at: cmi,
            what: "node-filled tagged data",
        });

        // Parents read from /tips, sent as binary.
        let tips = read_tips(&node);
        let data: Payload<'static> =
            serde_json::from_value(tagged_data(tag.as_bytes(), b"tips")).expect("payload");
        let bytes = block_bytes(&tips, Some(data), 0);
        let id = node
            .post(BLOCKS, &[("content-type", BINARY)], &bytes)
            .created_id();
        posted.push(Posted {
            id,
            at: cmi,
            what: "tagged data on /tips",
        });

        // A value transaction, alternating node-filled parents and parents from /tips.
        if let Some(tx) = spender.next(&node) {
            let id = if round.is_multiple_of(2) {
                let body = json!({"protocolVersion": 2, "payload": tx});
                node.post_json(BLOCKS, &body).created_id()
            } else {
                let bytes = block_bytes(&read_tips(&node), Some(tx), 0);
                node.post(BLOCKS, &[("content-type", BINARY)], &bytes)
                    .created_id()
            };
            spender.pending = Some(id.clone());
            posted.push(Posted {
                id,
                at: cmi,
                what: "value transaction",
            });
        }

        // A slow client: tips read now, used some milestones later.
        match &held {
            None if cmi >= 5 => held = Some((cmi, read_tips(&node))),
            Some((at, tips)) if cmi - at >= 10 && cmi - at <= BELOW_MAX_DEPTH - 2 => {
                // Old but within below-max-depth: accepted.
                let body = json!({
                    "protocolVersion": 2,
                    "parents": tips.iter().map(|t| hex0x(t)).collect::<Vec<_>>(),
                    "payload": tagged_data(b"held", tag.as_bytes()),
                });
                let id = node.post_json(BLOCKS, &body).created_id();
                posted.push(Posted {
                    id,
                    at: cmi,
                    what: "tagged data on old tips",
                });
                held_checked += 1;
            }
            Some((at, tips)) if cmi - at > BELOW_MAX_DEPTH + 1 => {
                // Now below max depth: refused, naming the parent and the indexes.
                let body = json!({
                    "protocolVersion": 2,
                    "parents": tips.iter().map(|t| hex0x(t)).collect::<Vec<_>>(),
                    "payload": tagged_data(b"held", b"too old"),
                });
                let message = node.post_json(BLOCKS, &body).assert_error(400);
                assert!(message.contains("below max depth"), "{message}");
                assert!(message.contains("oldest cone root index"), "{message}");
                refused_checked = true;
                held = None;
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(40));
    }
    assert!(
        held_checked > 0,
        "no post on parents held within below-max-depth"
    );
    assert!(refused_checked, "no post on parents held below max depth");
    assert!(
        spender.included >= 10,
        "only {} transactions included",
        spender.included
    );

    // Let the last posts be referenced.
    let end = confirmed_index(&node) + MAX_REFERENCE_DELAY + 1;
    while confirmed_index(&node) < end {
        assert!(started.elapsed() < RUN_TIMEOUT, "milestones stopped");
        std::thread::sleep(Duration::from_millis(50));
    }
    for p in &posted {
        let meta = node.get(&format!("{BLOCKS}/{}/metadata", p.id)).json();
        let by = meta["referencedByMilestoneIndex"]
            .as_u64()
            .unwrap_or_else(|| {
                panic!(
                    "{} {} posted at {} never referenced: {meta}",
                    p.what, p.id, p.at
                )
            });
        let by = u32::try_from(by).expect("u32");
        assert!(
            by > p.at && by <= p.at + MAX_REFERENCE_DELAY,
            "{} {} posted at milestone {} referenced by {by}",
            p.what,
            p.id,
            p.at
        );
        let expected = if p.what == "value transaction" {
            "included"
        } else {
            "noTransaction"
        };
        assert_eq!(meta["ledgerInclusionState"], expected, "{}: {meta}", p.what);
    }
    // The latest milestone block is a healthy tip: the next client can attach.
    for tip in read_tips(&node) {
        let meta = node
            .get(&format!("{BLOCKS}/{}/metadata", hex0x(&tip)))
            .json();
        if meta.get("referencedByMilestoneIndex").is_none() {
            assert_eq!(meta["shouldPromote"], false, "{meta}");
            assert_eq!(meta["shouldReattach"], false, "{meta}");
        }
    }
    let (tx, index) = spender.last_included.expect("a transaction was included");
    let mut output_id = tx.to_vec();
    output_id.extend_from_slice(&index.to_le_bytes());
    let output = node.get(&format!("/api/core/v2/outputs/{}", hex0x(&output_id)));
    assert_eq!(
        output.status,
        200,
        "{}",
        String::from_utf8_lossy(&output.body)
    );
    assert_eq!(output.json()["output"]["amount"], DEV_SUPPLY.to_string());

    // After a kill and a restart (replay of the whole log), the node still accepts blocks.
    let before = confirmed_index(&node);
    let dir = node.kill_9();
    let node = TestNode::start_in(dir, &["--coordinator-interval", "0.2"], &[]);
    assert!(confirmed_index(&node) >= before, "ledger went back");
    let body = json!({"protocolVersion": 2, "payload": tagged_data(b"restarted", b"node")});
    let filled = node.post_json(BLOCKS, &body).created_id();
    let data: Payload<'static> =
        serde_json::from_value(tagged_data(b"restarted", b"tips")).expect("payload");
    let bytes = block_bytes(&read_tips(&node), Some(data), 0);
    let on_tips = node
        .post(BLOCKS, &[("content-type", BINARY)], &bytes)
        .created_id();
    let end = confirmed_index(&node) + MAX_REFERENCE_DELAY;
    while confirmed_index(&node) < end {
        assert!(
            started.elapsed() < RUN_TIMEOUT,
            "milestones stopped after restart"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    for id in [filled, on_tips] {
        let meta = node.get(&format!("{BLOCKS}/{id}/metadata")).json();
        assert!(
            meta["referencedByMilestoneIndex"].as_u64().is_some(),
            "{meta}"
        );
    }
}
