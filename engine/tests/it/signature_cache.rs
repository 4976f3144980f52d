//! Signatures verified on arrival: white-flag over cached verdicts confirms
//! exactly what a cold verification of the same cone confirms.

use std::borrow::Cow;
use std::sync::Arc;

use ledger_codec::ed25519::SigningKey;
use ledger_codec::stardust::{
    inputs_commitment, Block, Ed25519Signature, Essence, Output, Payload, Transaction, Unlock,
    UtxoInput,
};
use ledger_codec::types::Hash32;
use ledger_codec::Codec;
use ledger_engine::internals::whiteflag::ARRIVAL_BATCH;
use ledger_engine::ConflictReason;
use ledger_engine::Engine;
use ledger_engine::Inclusion;

use crate::dev_net::{self, basic, key, SUPPLY};

fn open(dir: &std::path::Path) -> Arc<Engine> {
    // Both nodes share the coordinator key, so one accepts the other's milestone.
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("coordinator.key"), hex::encode([9u8; 32])).unwrap();
    Engine::open(dev_net::config(dir, 50)).unwrap()
}

fn output_id(tx: [u8; 32], i: u16) -> [u8; 34] {
    let mut o = [0u8; 34];
    o[..32].copy_from_slice(&tx);
    o[32..].copy_from_slice(&i.to_le_bytes());
    o
}

enum Signer<'k> {
    Valid(&'k SigningKey),
    // The right key, but the signature's first byte flipped.
    Corrupted(&'k SigningKey),
}

/// A block on `parent` spending `input` into `outputs`; returns (bytes, tx id).
fn transfer(
    network_id: u64,
    parent: [u8; 32],
    input: &([u8; 34], Output<'static>),
    outputs: Vec<Output<'static>>,
    signer: Signer<'_>,
) -> (Vec<u8>, [u8; 32]) {
    let (id, consumed) = input;
    let essence = Essence {
        network_id,
        inputs: Cow::Owned(vec![{
            let id = ledger_codec::stardust::OutputId::from_array(id);
            UtxoInput::new(id.transaction_id, id.index)
        }]),
        inputs_commitment: Hash32::from(inputs_commitment([consumed]).unwrap()),
        outputs,
        payload: None,
    };
    let (k, corrupt) = match signer {
        Signer::Valid(k) => (k, false),
        Signer::Corrupted(k) => (k, true),
    };
    let mut sig = k.sign(&essence.signing_hash().unwrap());
    if corrupt {
        sig[0] ^= 1;
    }
    let tx = Transaction {
        essence,
        unlocks: vec![Unlock::Signature(Cow::Owned(Ed25519Signature::new(
            k.public_key(),
            sig,
        )))],
    };
    let tx_id = tx.id().unwrap();
    let block = Block {
        protocol_version: 2,
        parents: vec![parent].into(),
        payload: Some(Payload::Transaction(tx)),
        nonce: 0,
    };
    (block.to_bytes().unwrap(), tx_id)
}

/// A chain of more than [`ARRIVAL_BATCH`] transaction blocks: a fan-out of
/// the genesis output, spends of every piece and of their halves, a
/// corrupted signature, a key that does not own its input, and a spend of
/// an output the corrupted transaction would have created.
fn chain(engine: &Engine) -> Vec<Vec<u8>> {
    let k = key();
    let other = SigningKey::from_seed(&[8; 32]);
    let net = engine.params().network_id();
    let me = k.address();
    let sep = engine.select_parents()[0];
    let mut blocks = Vec::new();
    let tip = |blocks: &Vec<Vec<u8>>| blocks.last().map_or(sep, |b| Block::id_of(b));
    let push = |(bytes, tx): (Vec<u8>, [u8; 32]), blocks: &mut Vec<Vec<u8>>| {
        blocks.push(bytes);
        tx
    };
    let piece = 1_000_000u64;
    let mut outs: Vec<Output<'static>> = (0..127).map(|_| basic(piece, me)).collect();
    outs.push(basic(SUPPLY - 127 * piece, me));
    let fan = push(
        transfer(
            net,
            tip(&blocks),
            &([0; 34], basic(SUPPLY, me)),
            outs,
            Signer::Valid(&k),
        ),
        &mut blocks,
    );
    // Every piece split in two, then every half spent, round after round,
    // until more than one arrival batch is in flight.
    let mut frontier: Vec<[u8; 34]> = Vec::new();
    for i in 0..127u16 {
        let input = (output_id(fan, i), basic(piece, me));
        let halves = vec![basic(piece / 2, me), basic(piece / 2, me)];
        let tx = push(
            transfer(net, tip(&blocks), &input, halves, Signer::Valid(&k)),
            &mut blocks,
        );
        frontier.extend([output_id(tx, 0), output_id(tx, 1)]);
    }
    while blocks.len() <= ARRIVAL_BATCH {
        for o in std::mem::take(&mut frontier) {
            let input = (o, basic(piece / 2, me));
            let next = vec![basic(piece / 2, me)];
            let tx = push(
                transfer(net, tip(&blocks), &input, next, Signer::Valid(&k)),
                &mut blocks,
            );
            frontier.push(output_id(tx, 0));
        }
    }
    // The rest of the fan-out, spent whole by `signer`.
    let rest = SUPPLY - 127 * piece;
    let mut spend_rest = |input: [u8; 34], signer: Signer<'_>| {
        let tx = transfer(
            net,
            tip(&blocks),
            &(input, basic(rest, me)),
            vec![basic(rest, me)],
            signer,
        );
        push(tx, &mut blocks)
    };
    let corrupted = spend_rest(output_id(fan, 127), Signer::Corrupted(&k));
    spend_rest(output_id(fan, 127), Signer::Valid(&other));
    spend_rest(output_id(corrupted, 0), Signer::Valid(&k));
    assert!(blocks.len() > ARRIVAL_BATCH);
    blocks
}

#[test]
fn cached_verdicts_confirm_exactly_what_cold_verification_confirms() {
    let dir = tempfile::tempdir().unwrap();
    let cached = open(&dir.path().join("cached"));
    let cold = open(&dir.path().join("cold"));
    let blocks = chain(&cached);
    let ids: Vec<[u8; 32]> = blocks.iter().map(|b| Block::id_of(b)).collect();

    for (i, b) in blocks.iter().enumerate() {
        assert!(cached.submit_v2(b).unwrap().inserted, "block {i} stored");
    }
    // The first full arrival batch was verified by the submit that filled it.
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(
            cached.cached_signature_verdicts(id).is_some(),
            i < ARRIVAL_BATCH,
            "block {i} before the flush"
        );
    }
    cached.flush_signature_checks();
    let n = ids.len();
    for (i, id) in ids.iter().enumerate() {
        // Unlock 0 is the only unlock: valid except the corrupted signature
        // (the wrong key's signature itself verifies; its address does not match).
        let want = if i == n - 3 { 0 } else { 1 };
        assert_eq!(
            cached.cached_signature_verdicts(id),
            Some(want),
            "block {i}"
        );
    }
    let m = cached.issue_milestone().unwrap();
    assert!(ids
        .iter()
        .all(|id| cached.cached_signature_verdicts(id).is_none()));

    for b in &blocks {
        cold.submit_v2(b).unwrap();
    }
    cold.forget_signature_verdicts();
    assert!(ids
        .iter()
        .all(|id| cold.cached_signature_verdicts(id).is_none()));
    // The same milestone, confirmed cold: its Merkle roots must match.
    cold.submit_v2(&cached.block_bytes(&m.block_id).unwrap())
        .unwrap();
    assert_eq!(
        cold.latest_milestone(),
        Some(m),
        "cold node confirms the milestone"
    );

    for (i, id) in ids.iter().enumerate() {
        let want = match i {
            _ if i == n - 3 || i == n - 2 => {
                Inclusion::Conflicting(ConflictReason::InvalidSignature.code())
            }
            _ if i == n - 1 => Inclusion::Conflicting(ConflictReason::InputNotFound.code()),
            _ => Inclusion::Included,
        };
        assert_eq!(cached.inclusion(id), Some(want), "cached node, block {i}");
        assert_eq!(cold.inclusion(id), Some(want), "cold node, block {i}");
    }
    assert_eq!(cached.milestone_diff(m.index), cold.milestone_diff(m.index));
    assert_eq!(
        cached.richest(300, None).unwrap(),
        cold.richest(300, None).unwrap()
    );
}

#[test]
fn verdicts_arriving_after_confirmation_are_not_kept() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let blocks = chain(&engine);
    for b in blocks.iter().take(3) {
        engine.submit_v2(b).unwrap();
    }
    engine.issue_milestone().unwrap();
    // The queued blocks were referenced meanwhile: nothing is cached for them.
    engine.flush_signature_checks();
    for b in blocks.iter().take(3) {
        let id = Block::id_of(b);
        assert_eq!(engine.inclusion(&id), Some(Inclusion::Included));
        assert_eq!(engine.cached_signature_verdicts(&id), None);
    }
}

#[test]
fn blocks_replayed_on_reopen_are_verified_at_confirmation() {
    let dir = tempfile::tempdir().unwrap();
    let blocks = {
        let engine = open(dir.path());
        let blocks = chain(&engine);
        for b in &blocks {
            engine.submit_v2(b).unwrap();
        }
        engine.flush_signature_checks();
        engine.shutdown().unwrap();
        blocks
    };
    let engine = open(dir.path());
    let ids: Vec<[u8; 32]> = blocks.iter().map(|b| Block::id_of(b)).collect();
    assert!(ids
        .iter()
        .all(|id| engine.cached_signature_verdicts(id).is_none()));
    engine.issue_milestone().unwrap();
    let n = ids.len();
    for (i, id) in ids.iter().enumerate() {
        let want = if i == n - 3 || i == n - 2 {
            Inclusion::Conflicting(ConflictReason::InvalidSignature.code())
        } else if i == n - 1 {
            Inclusion::Conflicting(ConflictReason::InputNotFound.code())
        } else {
            Inclusion::Included
        };
        assert_eq!(engine.inclusion(id), Some(want), "block {i}");
    }
}
