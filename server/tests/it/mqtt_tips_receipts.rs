//! The event API's two topics that follow the node rather than a client's block: blocks
//! entering and leaving the tip pool on `tip-score-updates` (inx-mqtt's, from Hornet's
//! `TipAdded`/`TipRemoved`), and a confirmed milestone's receipt on `receipts` (docs/events.md
//! §1.1), both before the milestone's `milestone-info/confirmed`.

use ledger_codec::{
    ed25519::SigningKey,
    stardust::{merkle_root, Block, Ed25519Signature, Milestone, MilestoneOption, Payload},
    types::{Bytes, Hash32},
    Codec,
};
use serde_json::{json, Value};

use crate::{
    mqtt::{milestone_index, post_tagged, start, WAIT},
    mqtt_support::{json as json_of, names, Client},
    v2_support::*,
};

/// The `blockId`s of the `tip-score-updates` messages in `seen`.
fn tip_updates(seen: &[(String, Vec<u8>)]) -> Vec<Value> {
    seen.iter()
        .filter(|(t, _)| t == "tip-score-updates")
        .map(|(_, p)| json_of(p))
        .collect()
}

fn ids(updates: &[Value]) -> Vec<&str> {
    updates
        .iter()
        .map(|m| m["blockId"].as_str().expect("blockId"))
        .collect()
}

#[test]
fn tip_score_updates_tell_blocks_entering_and_leaving_the_tip_pool() {
    let node = start(&[]);
    let first = node.issue_milestone();
    let mut c = Client::connected(&node, "tips");
    assert_eq!(
        c.subscribe(1, &["tip-score-updates", "milestone-info/confirmed"]),
        vec![1, 1]
    );
    c.until("milestone-info/confirmed", |_| true, WAIT);
    // Only the milestone block is a tip now; a new block takes its place.
    let milestone_block = first["blockId"].as_str().expect("blockId").to_owned();
    let (id, bytes) = post_tagged(&node, b"tips", b"one");
    let parents: Vec<String> = Block::decode(&bytes)
        .expect("block")
        .parents
        .iter()
        .map(|p| hex0x(p))
        .collect();
    assert_eq!(parents, vec![milestone_block.clone()]);
    let (seen, added) = c.until(
        "tip-score-updates",
        |p| json_of(p)["blockId"] == json!(id),
        WAIT,
    );
    let added = json_of(&added);
    assert_eq!(added["isSolid"], json!(true), "{added}");
    assert!(added.get("referencedByMilestoneIndex").is_none(), "{added}");
    assert_eq!(added["parentBlockIds"], json!(parents), "{added}");
    assert_eq!(
        ids(&tip_updates(&seen)),
        vec![milestone_block.as_str()],
        "the parent leaves the pool first: {:?}",
        names(&seen)
    );

    // A milestone takes the block out of the pool (referenced) and its own block enters,
    // both told before the milestone's confirmation.
    let issued = node.issue_milestone();
    let index = issued["index"].as_u64().expect("index");
    let (seen, confirmed) = c.until("milestone-info/confirmed", |_| true, WAIT);
    assert_eq!(milestone_index(&confirmed), index);
    let updates = tip_updates(&seen);
    assert_eq!(
        ids(&updates),
        vec![id.as_str(), issued["blockId"].as_str().expect("blockId")],
        "{:?}",
        names(&seen)
    );
    assert_eq!(
        updates[0]["referencedByMilestoneIndex"],
        json!(index),
        "{}",
        updates[0]
    );
    assert!(updates[1].get("referencedByMilestoneIndex").is_none());
}

/// A milestone signed with the node's own coordinator key, carrying `options`, referencing
/// only the previous milestone's block.
fn milestone_after(
    node: &crate::common::TestNode,
    previous: &Value,
    options: Vec<MilestoneOption<'static>>,
) -> Vec<u8> {
    let seed = std::fs::read_to_string(node.data_dir().join("coordinator.key")).expect("key");
    let seed: [u8; 32] = hex::decode(seed.trim().trim_start_matches("0x"))
        .expect("hex")
        .try_into()
        .expect("32 bytes");
    let key = SigningKey::from_seed(&seed);
    let index = previous["index"].as_u64().expect("index");
    let timestamp = node
        .get(&format!("/api/core/v2/milestones/by-index/{index}"))
        .json()["timestamp"]
        .as_u64()
        .expect("timestamp");
    let parent: [u8; 32] = unhex(previous["blockId"].as_str().expect("blockId"))
        .try_into()
        .expect("block id");
    let previous_id: [u8; 32] = unhex(previous["milestoneId"].as_str().expect("milestoneId"))
        .try_into()
        .expect("milestone id");
    let mut milestone = Milestone {
        index: u32::try_from(index + 1).expect("index"),
        timestamp: u32::try_from(timestamp + 1).expect("timestamp"),
        protocol_version: 2,
        previous_milestone_id: Hash32::from(previous_id),
        parents: vec![parent].into(),
        inclusion_merkle_root: Hash32::from(merkle_root(&[parent])),
        applied_merkle_root: Hash32::from(merkle_root(&[])),
        metadata: Bytes::default(),
        options,
        signatures: Vec::new().into(),
    };
    let signature = key.sign(&milestone.id().expect("id"));
    milestone.signatures = vec![Ed25519Signature::new(key.public_key(), signature)].into();
    block_bytes(&[parent], Some(Payload::Milestone(milestone)), 0)
}

#[test]
fn a_milestone_receipt_goes_out_on_receipts_before_its_confirmation() {
    let node = start(&[]);
    let previous = node.issue_milestone();
    let mut c = Client::connected(&node, "receipts");
    assert_eq!(
        c.subscribe(1, &["receipts", "milestone-info/confirmed"]),
        vec![1, 1]
    );
    c.until("milestone-info/confirmed", |_| true, WAIT);

    // The receipt of the public vector (iota.js), its deposit raised to the minimum a
    // migration may carry.
    let vector = stardust_vectors("milestone_options.json")
        .into_iter()
        .find(|v| {
            v["kind"] == json!("milestone_option")
                && v["name"].as_str().is_some_and(|n| n.contains("receipt"))
        })
        .expect("receipt option vector");
    let wire = unhex(vector["bytes"].as_str().expect("bytes"));
    let MilestoneOption::Receipt(mut receipt) = MilestoneOption::decode(&wire)
        .expect("receipt option")
        .into_owned()
    else {
        panic!("not a receipt");
    };
    receipt.funds[0].deposit = 1_000_000;
    let option = MilestoneOption::Receipt(receipt);
    let option_bytes = option.to_bytes().expect("encode");
    let block = milestone_after(&node, &previous, vec![option]);
    let reply = node.post(BLOCKS, &[("content-type", BINARY)], &block);
    assert_eq!(
        reply.status,
        201,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );

    let (seen, confirmed) = c.until("milestone-info/confirmed", |_| true, WAIT);
    let index = previous["index"].as_u64().expect("index") + 1;
    assert_eq!(milestone_index(&confirmed), index);
    let receipts: Vec<&Vec<u8>> = seen
        .iter()
        .filter(|(t, _)| t == "receipts")
        .map(|(_, p)| p)
        .collect();
    assert_eq!(receipts.len(), 1, "{:?}", names(&seen));
    // The option as the wire carries it, without its type byte (`ReceiptMilestoneOption`).
    assert_eq!(receipts[0].as_slice(), &option_bytes[1..]);

    // A milestone without a receipt sends nothing there.
    node.issue_milestone();
    let (seen, _) = c.until("milestone-info/confirmed", |_| true, WAIT);
    assert!(!names(&seen).contains(&"receipts"), "{:?}", names(&seen));
}
