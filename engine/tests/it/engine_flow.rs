//! The engine end to end: genesis, blocks, milestones by the built-in
//! coordinator, white-flag, ledger, rich list, restart.

use std::sync::Arc;

use ledger_codec::ed25519::SigningKey;
use ledger_codec::stardust::{Block, Output, Payload, TaggedData};
use ledger_codec::types::Bytes;
use ledger_codec::Codec;
use ledger_engine::Inclusion;
use ledger_engine::{AttachError, Engine, EngineConfig, InvalidBlock, SubmitError};
use ledger_test_support::blocks;

use crate::dev_net::{self, basic, key, SUPPLY};

fn open(dir: &std::path::Path) -> Arc<Engine> {
    Engine::open(dev_net::config(dir, 50)).unwrap()
}

fn tagged(engine: &Engine, tag: &[u8]) -> Vec<u8> {
    blocks::tagged_block(engine.select_parents(), tag)
}

/// A transaction spending `inputs` (output id, output) into `outputs`, signed by `key`.
fn transfer(
    engine: &Engine,
    key: &SigningKey,
    inputs: &[([u8; 34], Output<'static>)],
    outputs: Vec<Output<'static>>,
) -> Vec<u8> {
    let tx = blocks::transaction(engine.params().network_id(), key, inputs, outputs);
    blocks::transaction_block(engine.select_parents(), tx)
}

fn genesis_output() -> ([u8; 34], Output<'static>) {
    ([0; 34], basic(SUPPLY, key().address()))
}

fn tx_id_of(block: &[u8]) -> [u8; 32] {
    match Block::decode(block).unwrap().payload {
        Some(Payload::Transaction(tx)) => tx.id().unwrap(),
        _ => panic!("no transaction"),
    }
}

fn output_id(tx: [u8; 32], i: u16) -> [u8; 34] {
    blocks::output_id(tx, i)
}

#[test]
fn a_transfer_is_confirmed_by_the_next_milestone_and_survives_restart() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    assert_eq!(engine.ledger_index(), 0);
    let m1 = engine.issue_milestone().unwrap();
    assert_eq!((m1.index, engine.ledger_index()), (1, 1));

    let data = tagged(&engine, b"hello");
    let data_id = engine.submit_v2(&data).unwrap().block_id;
    let other = SigningKey::from_seed(&[9; 32]);
    let tx_block = transfer(
        &engine,
        &key(),
        &[genesis_output()],
        vec![
            basic(1_000_000, other.address()),
            basic(SUPPLY - 1_000_000, key().address()),
        ],
    );
    let tx_block_id = engine.submit_v2(&tx_block).unwrap().block_id;
    let again = engine.submit_v2(&tx_block).unwrap();
    assert_eq!(
        (again.block_id, again.inserted),
        (tx_block_id, false),
        "a known block answers with its id"
    );
    assert!(
        engine.output(&output_id(tx_id_of(&tx_block), 0)).is_none(),
        "unconfirmed outputs do not exist"
    );

    let m2 = engine.issue_milestone().unwrap();
    assert_eq!(m2.index, 2);
    assert_eq!(engine.inclusion(&data_id), Some(Inclusion::NoTransaction));
    assert_eq!(engine.inclusion(&tx_block_id), Some(Inclusion::Included));
    let tx = tx_id_of(&tx_block);
    let out = engine.output(&output_id(tx, 0)).unwrap();
    assert_eq!(
        (out.row.amount, out.row.booked_index, out.ledger_index),
        (1_000_000, 2, 2)
    );
    assert_eq!(
        Output::decode(&out.bytes).unwrap(),
        basic(1_000_000, other.address())
    );
    assert_eq!(engine.output(&[0; 34]).unwrap().row.spent.unwrap().index, 2);
    assert_eq!(engine.included_block(&tx), Some(tx_block_id));

    let (at, top) = engine.richest(10, None).unwrap();
    assert_eq!(at, 2);
    let mut me = [0u8; 33];
    me[1..].copy_from_slice(&key().address());
    assert_eq!(top[0], (me, SUPPLY - 1_000_000));
    assert_eq!(top[1].1, 1_000_000);
    assert_eq!(
        engine.richest(10, Some(1)).unwrap().1,
        vec![(me, SUPPLY)],
        "history is kept"
    );

    let state = |engine: &Engine| {
        (
            engine.ledger_index(),
            engine.richest(10, Some(1)).unwrap(),
            engine.richest(10, None).unwrap(),
            engine.milestone_diff(2),
            engine.latest_milestone(),
        )
    };
    let before = state(&engine);
    engine.shutdown().unwrap();
    drop(engine);
    let engine = open(dir.path());
    assert_eq!(before, state(&engine));
    assert_eq!(engine.inclusion(&tx_block_id), Some(Inclusion::Included));
    assert_eq!(
        engine.issue_milestone().unwrap().index,
        3,
        "the coordinator continues after restart"
    );
}

#[test]
fn a_double_spend_in_one_milestone_conflicts_and_the_first_wins() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let a = SigningKey::from_seed(&[1; 32]).address();
    let b = SigningKey::from_seed(&[2; 32]).address();
    let first = transfer(&engine, &key(), &[genesis_output()], vec![basic(SUPPLY, a)]);
    let first_id = engine.submit_v2(&first).unwrap().block_id;
    let second = transfer(&engine, &key(), &[genesis_output()], vec![basic(SUPPLY, b)]);
    let second_id = engine.submit_v2(&second).unwrap().block_id;
    engine.issue_milestone().unwrap();
    // The second block approves the first, so white-flag meets the first one first.
    assert_eq!(engine.inclusion(&first_id), Some(Inclusion::Included));
    assert_eq!(
        engine.inclusion(&second_id),
        Some(Inclusion::Conflicting(2))
    );
    // An input that never existed.
    let ghost = transfer(
        &engine,
        &key(),
        &[(
            {
                let mut g = [0x77; 34];
                g[32] = 0;
                g[33] = 0;
                g
            },
            basic(SUPPLY, key().address()),
        )],
        vec![basic(SUPPLY, b)],
    );
    let ghost_id = engine.submit_v2(&ghost).unwrap().block_id;
    // And across milestones: spending it again is "already spent".
    let third = transfer(&engine, &key(), &[genesis_output()], vec![basic(SUPPLY, b)]);
    let third_id = engine.submit_v2(&third).unwrap().block_id;
    engine.issue_milestone().unwrap();
    assert_eq!(engine.inclusion(&third_id), Some(Inclusion::Conflicting(1)));
    assert_eq!(engine.inclusion(&ghost_id), Some(Inclusion::Conflicting(3)));
}

#[test]
fn data_and_transaction_blocks_interleaved_keep_their_white_flag_order() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let a = SigningKey::from_seed(&[1; 32]);
    let mut chain = Vec::new();
    let mut submit = |block: Vec<u8>| {
        let id = engine.submit_v2(&block).unwrap().block_id;
        chain.push(id);
        (id, block)
    };
    // Each block approves the one before it (the only tip), so the cone's white-flag order
    // is the order of submission: data, spend genesis, data, spend that, data.
    let (d1, _) = submit(tagged(&engine, b"one"));
    let (t1, t1_bytes) = submit(transfer(
        &engine,
        &key(),
        &[genesis_output()],
        vec![basic(SUPPLY, a.address())],
    ));
    let (d2, _) = submit(tagged(&engine, b"two"));
    let spend_t1 = (
        output_id(tx_id_of(&t1_bytes), 0),
        basic(SUPPLY, a.address()),
    );
    let (t2, t2_bytes) = submit(transfer(
        &engine,
        &a,
        &[spend_t1],
        vec![basic(SUPPLY, key().address())],
    ));
    let (d3, _) = submit(tagged(&engine, b"three"));
    engine.issue_milestone().unwrap();

    for id in [d1, d2, d3] {
        assert_eq!(engine.inclusion(&id), Some(Inclusion::NoTransaction));
    }
    // t2 spends an output t1 created in the same milestone: it is applied only when t1
    // came first.
    for id in [t1, t2] {
        assert_eq!(engine.inclusion(&id), Some(Inclusion::Included));
    }
    let order: Vec<u32> = chain
        .iter()
        .map(|id| {
            engine
                .block_status(id)
                .unwrap()
                .unwrap()
                .view
                .white_flag_index
                .unwrap()
        })
        .collect();
    assert!(
        order.windows(2).all(|w| w[1] == w[0] + 1),
        "consecutive white-flag indexes in submission order: {order:?}"
    );
    let spent = engine.output(&output_id(tx_id_of(&t1_bytes), 0)).unwrap();
    assert_eq!(spent.row.spent.unwrap().transaction_id, tx_id_of(&t2_bytes));

    // The tangle keeps no parents for referenced blocks; the engine reads them from the
    // stored block. Unreferenced blocks answer from the tangle. Both are the wire parents.
    let later = tagged(&engine, b"later");
    let later_id = engine.submit_v2(&later).unwrap().block_id;
    for id in chain.iter().chain([&later_id]) {
        let bytes = engine.block_bytes(id).unwrap();
        let stored = Block::decode(&bytes).unwrap();
        let status = engine.block_status(id).unwrap().unwrap();
        assert_eq!(status.parents, stored.parents.to_vec());
        assert!(!status.parents.is_empty());
        assert_eq!(
            status.view.referenced_by.is_none(),
            *id == later_id,
            "only the last block is unreferenced"
        );
    }
}

#[test]
fn more_tips_than_parents_are_gathered_by_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let m1 = engine.issue_milestone().unwrap();
    let mut ids = Vec::new();
    for i in 0..30u8 {
        // All on the milestone block, so each is its own tip.
        let block = Block {
            protocol_version: 2,
            parents: vec![m1.block_id].into(),
            payload: Some(Payload::TaggedData(TaggedData {
                tag: Bytes::from(vec![i]),
                data: Bytes::default(),
            })),
            nonce: 0,
        };
        ids.push(
            engine
                .submit_v2(&block.to_bytes().unwrap())
                .unwrap()
                .block_id,
        );
    }
    assert_eq!(engine.tips().len(), 30);
    let m2 = engine.issue_milestone().unwrap();
    for id in ids {
        assert_eq!(
            engine
                .block_status(&id)
                .unwrap()
                .unwrap()
                .view
                .referenced_by,
            Some(m2.index)
        );
    }
}

#[test]
fn rejects_invalid_blocks_with_their_reason() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let mut block = Block::decode(&tagged(&engine, b"x")).unwrap().into_owned();
    block.parents = vec![[0x55; 32]].into();
    match engine.submit_v2(&block.to_bytes().unwrap()) {
        Err(e @ SubmitError::Invalid(InvalidBlock::Attach(AttachError::NotSolid(_)))) => {
            assert!(e.to_string().contains("not solid"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    block.parents = engine.select_parents().into();
    block.protocol_version = 3;
    match engine.submit_v2(&block.to_bytes().unwrap()) {
        Err(e @ SubmitError::Invalid(InvalidBlock::ProtocolVersion { version: 3 })) => {
            assert_eq!(e.to_string(), "invalid block: protocolVersion invalid: 3");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        engine.submit_v2(&[2, 0]),
        Err(SubmitError::Invalid(InvalidBlock::Decode(_)))
    ));
}

#[test]
fn milestone_threshold_counts_distinct_keys() {
    // A repeated key counts once: a milestone can carry its signature only once.
    let dir = tempfile::tempdir().unwrap();
    let mut c = EngineConfig::dev(dir.path());
    c.coordinator = false;
    c.coordinator_public_keys = vec![[7; 32], [7; 32]];
    c.milestone_threshold = 2;
    let Err(err) = Engine::open(c.clone()) else {
        panic!("threshold above distinct keys accepted")
    };
    assert!(
        err.to_string().contains("2 exceeds the 1 distinct"),
        "{err}"
    );
    c.milestone_threshold = 0;
    let Err(err) = Engine::open(c.clone()) else {
        panic!("threshold 0 accepted")
    };
    assert!(err.to_string().contains("at least 1"), "{err}");
    c.coordinator_public_keys = vec![[7; 32], [9; 32]];
    c.milestone_threshold = 2;
    assert!(Engine::open(c).is_ok());
}
