//! Gossip intake in the engine: a follower fed another node's blocks in any order (children
//! before parents, milestones before their cones) confirms every milestone and ends with the
//! same ledger; invalid blocks are refused with their reason; the broadcast hook hears of
//! each block once it is solid and durable.

use std::sync::{Arc, Mutex};

use ledger_codec::ed25519::SigningKey;
use ledger_codec::stardust::{Address, Output};
use ledger_codec::types::Hash32;
use ledger_engine::internals::log::BlockId as LogId;
use ledger_engine::BlockId;
use ledger_engine::{BroadcastHook, Engine, InvalidBlock, SubmitError};
use ledger_test_support::blocks;

use crate::dev_net::{self, key, SUPPLY};

fn coordinator(dir: &std::path::Path) -> Arc<Engine> {
    Engine::open(dev_net::config(dir, 5)).unwrap()
}

fn follower(dir: &std::path::Path, coordinator_key: [u8; 32]) -> Arc<Engine> {
    let mut c = dev_net::config(dir, 5);
    c.coordinator = false;
    c.coordinator_public_keys = vec![coordinator_key];
    Engine::open(c).unwrap()
}

fn tagged(engine: &Engine, tag: &[u8]) -> Vec<u8> {
    blocks::tagged_block(engine.select_parents(), tag)
}

/// Sends all of `input` to `to` in one transaction; returns the block and the new output.
fn transfer(
    engine: &Engine,
    from: &SigningKey,
    input: ([u8; 34], Output<'static>),
    to: &SigningKey,
) -> (Vec<u8>, ([u8; 34], Output<'static>)) {
    let out = Output::basic(
        input.1.amount(),
        Address::Ed25519(Hash32::from(to.address())),
    );
    let tx = blocks::transaction(
        engine.params().network_id(),
        from,
        &[input],
        vec![out.clone()],
    );
    let id = blocks::output_id(tx.id().unwrap(), 0);
    (
        blocks::transaction_block(engine.select_parents(), tx),
        (id, out),
    )
}

/// A coordinator with `milestones` milestones, a transfer and a tagged block in each.
fn history(dir: &std::path::Path, milestones: u32) -> Arc<Engine> {
    let a = coordinator(dir);
    let keys: Vec<SigningKey> = (0..4u8)
        .map(|i| SigningKey::from_seed(&[i + 20; 32]))
        .collect();
    let mut owner = key();
    let mut coin = ([0u8; 34], dev_net::basic(SUPPLY, key().address()));
    for i in 0..milestones {
        let next = keys[i as usize % keys.len()].clone();
        let (block, out) = transfer(&a, &owner, coin, &next);
        a.submit_v2(&block).unwrap();
        a.submit_v2(&tagged(&a, &i.to_le_bytes())).unwrap();
        a.issue_milestone().unwrap();
        owner = next;
        coin = out;
    }
    a
}

/// Under `dir`: node `a` with `milestones` of history, an empty follower `b` of a's
/// coordinator, and a's v2 blocks in log order.
fn history_and_follower(
    dir: &std::path::Path,
    milestones: u32,
) -> (Arc<Engine>, Arc<Engine>, Vec<Vec<u8>>) {
    let a = history(&dir.join("a"), milestones);
    let b = follower(&dir.join("b"), a.coordinator_public_key().unwrap());
    let blocks = blocks_of(&a);
    (a, b, blocks)
}

fn blocks_of(engine: &Engine) -> Vec<Vec<u8>> {
    engine
        .internal_log()
        .reader()
        .iter()
        .filter(|r| matches!(r.id(), LogId::V2(_)))
        .map(|r| r.bytes().to_vec())
        .collect()
}

fn same_ledger(a: &Engine, b: &Engine) {
    assert_eq!(a.ledger_index(), b.ledger_index());
    for i in 1..=a.ledger_index() {
        assert_eq!(
            a.milestone_by_index(i),
            b.milestone_by_index(i),
            "milestone {i}"
        );
        assert_eq!(a.utxo_changes(i), b.utxo_changes(i), "utxo changes {i}");
        assert_eq!(
            a.richest(100, Some(i)).unwrap(),
            b.richest(100, Some(i)).unwrap(),
            "rich list at {i}"
        );
    }
    assert_eq!(
        a.richest(100, None).unwrap(),
        b.richest(100, None).unwrap(),
        "rich list"
    );
}

#[test]
fn a_follower_fed_blocks_backwards_confirms_every_milestone_with_the_same_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, blocks) = history_and_follower(dir.path(), 8);
    assert!(blocks.len() >= 24, "{} blocks", blocks.len());
    let mut reported_missing = 0usize;
    for (n, bytes) in blocks.iter().rev().enumerate() {
        let stored = b.submit_gossip(bytes).unwrap();
        assert!(stored.inserted);
        reported_missing += stored.missing_parents.len();
        if n == 0 {
            // The newest milestone came first: it is known, not confirmed, and its cone is
            // what is missing.
            let index = stored
                .milestone_index
                .expect("the last block is a milestone");
            assert_eq!(b.sync_state().latest, index);
            assert_eq!(b.sync_state().confirmed, 0);
            assert_eq!(b.milestone_block_id(index), Some(stored.block_id));
            assert_eq!(b.latest_milestone(), None, "nothing confirmed yet");
            assert_eq!(b.latest_known_milestone(), a.milestone_by_index(index));
            let missing = b.missing_in_milestone_cone(index, 100);
            assert!(!missing.is_empty());
            assert!(missing.iter().all(|id| a.block_bytes(id).is_some()));
        }
    }
    assert!(reported_missing > 0, "parents arrived after their children");
    assert!(b.sync_state().is_synced());
    same_ledger(&a, &b);
    // Known blocks are answered as known.
    assert!(!b.submit_gossip(&blocks[0]).unwrap().inserted);
    // And the follower's ledger survives a restart.
    drop(b);
    let b = follower(&dir.path().join("b"), a.coordinator_public_key().unwrap());
    same_ledger(&a, &b);
}

#[test]
fn a_follower_fed_from_several_threads_at_once_confirms_every_milestone() {
    // Milestones on one thread, the other blocks backwards on three more, as the peering
    // service's validation workers feed it: every milestone is confirmed once its cone is
    // complete, whichever thread completes it. Nothing is fed after the threads end.
    let dir = tempfile::tempdir().unwrap();
    let (a, _, blocks) = history_and_follower(&dir.path().join("h"), 12);
    let is_milestone = |bytes: &[u8]| {
        ledger_codec::stardust::payload_kind(bytes) == Some(ledger_codec::stardust::Milestone::KIND)
    };
    let (milestones, others): (Vec<&Vec<u8>>, Vec<&Vec<u8>>) =
        blocks.iter().partition(|b| is_milestone(b));
    for round in 0..4 {
        let b = follower(
            &dir.path().join(format!("f{round}")),
            a.coordinator_public_key().unwrap(),
        );
        std::thread::scope(|s| {
            s.spawn(|| {
                for bytes in &milestones {
                    b.submit_gossip(bytes).unwrap();
                }
            });
            for lane in 0..3 {
                let b = &b;
                let others = &others;
                s.spawn(move || {
                    for bytes in others.iter().rev().skip(lane).step_by(3) {
                        b.submit_gossip(bytes).unwrap();
                    }
                });
            }
        });
        assert_eq!(b.sync_state().confirmed, a.ledger_index(), "round {round}");
        same_ledger(&a, &b);
    }
}

#[test]
fn gossip_takes_blocks_the_api_refuses_for_missing_parents_but_not_invalid_ones() {
    let dir = tempfile::tempdir().unwrap();
    let (_a, b, blocks) = history_and_follower(dir.path(), 2);
    let last = blocks.last().unwrap();
    // Unknown parents: the API refuses, gossip stores and reports them.
    assert!(matches!(b.submit_v2(last), Err(SubmitError::Invalid(_))));
    let stored = b.submit_gossip(last).unwrap();
    assert!(!stored.missing_parents.is_empty());
    // A milestone signed by a key the follower does not accept is invalid.
    let stranger = coordinator(&dir.path().join("c"));
    stranger.issue_milestone().unwrap();
    let foreign = blocks_of(&stranger).pop().unwrap();
    let err = b.submit_gossip(&foreign).unwrap_err();
    assert!(
        matches!(&err, SubmitError::Invalid(InvalidBlock::UnknownKey { key })
            if !b.coordinator_keys().contains(key))
            && err.to_string().contains("unknown key"),
        "{err:?}"
    );
    // Trailing bytes, a wrong protocol version: invalid.
    let mut trailing = blocks[0].clone();
    trailing.push(0);
    assert!(matches!(
        b.submit_gossip(&trailing),
        Err(SubmitError::Invalid(InvalidBlock::Decode(_)))
    ));
    let mut version = blocks[0].clone();
    version[0] = 3;
    assert!(matches!(
        b.submit_gossip(&version),
        Err(SubmitError::Invalid(InvalidBlock::ProtocolVersion {
            version: 3
        }))
    ));
}

#[derive(Default, Clone)]
struct Heard(Arc<Mutex<Vec<BlockId>>>);

impl BroadcastHook for Heard {
    fn solid(&self, ids: Vec<BlockId>) {
        self.0.lock().unwrap().extend(ids);
    }
}

#[test]
fn the_broadcast_hook_hears_each_block_once_when_it_becomes_solid() {
    let dir = tempfile::tempdir().unwrap();
    let a = history(&dir.path().join("a"), 3);
    let b = follower(&dir.path().join("b"), a.coordinator_public_key().unwrap());
    let heard = Heard::default();
    assert!(b.set_broadcast_hook(Arc::new(heard.clone())));
    let blocks = blocks_of(&a);
    // The second block first: it waits for its parent and is heard with it.
    let (first, second) = (&blocks[0], &blocks[1]);
    let second_id = b.submit_gossip(second).unwrap().block_id;
    let first_id = b.submit_gossip(first).unwrap().block_id;
    for bytes in &blocks[2..] {
        b.submit_gossip(bytes).unwrap();
    }
    b.internal_log().sync().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while heard.0.lock().unwrap().len() < blocks.len() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let heard = heard.0.lock().unwrap().clone();
    let mut distinct = heard.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), heard.len(), "each block once");
    assert_eq!(heard.len(), blocks.len());
    let pos = |id| heard.iter().position(|h| *h == id).unwrap();
    assert!(pos(first_id) < pos(second_id), "parent before child");
    same_ledger(&a, &b);
}
