//! Pruning in the engine (docs/snapshots-pruning.md §4.3–4.4): a gossiped block whose parents
//! never arrive is dropped once pruning passes the milestone it was filed under; referenced
//! blocks, milestones and their diffs at or below the pruning index are no longer served; the
//! pruning index survives a reopen.

use ledger_engine::{Engine, PruneError, PruneTarget};
use ledger_test_support::blocks;

use crate::dev_net;

#[test]
fn an_orphan_goes_with_its_milestone_and_the_index_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dev_net::config(dir.path(), 5)).unwrap();
    engine.issue_milestone().unwrap();
    // Filed under milestone 1 (the confirmed index when it arrived); its parent never comes.
    let orphan = blocks::tagged_block(vec![[9; 32]], b"orphan");
    let orphan_id = engine.submit_gossip(&orphan).unwrap().block_id;
    let referenced = engine
        .submit_v2(&blocks::tagged_block(
            engine.select_parents(),
            b"kept a while",
        ))
        .unwrap()
        .block_id;
    for _ in 0..29 {
        engine.issue_milestone().unwrap();
    }
    assert_eq!(engine.ledger_index(), 30);
    assert!(engine.block_bytes(&orphan_id).is_some());
    let in_memory = engine.blocks_in_memory();

    assert_eq!(
        engine.prune(PruneTarget::Index(11)),
        Err(PruneError::TooNew {
            target: 11,
            min: 6,
            max: 10
        })
    );
    assert_eq!(engine.prune(PruneTarget::Index(8)), Ok(8));
    assert_eq!(engine.pruning_index(), 8);
    assert_eq!(engine.block_bytes(&orphan_id), None);
    assert_eq!(engine.block_bytes(&referenced), None);
    assert_eq!(engine.block_status(&referenced).unwrap(), None);
    assert_eq!(engine.blocks_in_memory(), in_memory - 1);
    assert_eq!(engine.milestone_by_index(8), None);
    assert_eq!(engine.utxo_changes(8), None);
    assert!(engine.milestone_by_index(9).is_some());
    assert!(engine.utxo_changes(9).is_some());
    assert_eq!(engine.sync_state().pruned, 8);
    let fresh = engine
        .submit_v2(&blocks::tagged_block(engine.select_parents(), b"fresh"))
        .unwrap()
        .block_id;
    engine.issue_milestone().unwrap();
    engine.shutdown().unwrap();
    drop(engine);

    let engine = Engine::open(dev_net::config(dir.path(), 5)).unwrap();
    assert_eq!(engine.pruning_index(), 8);
    assert_eq!(engine.block_bytes(&orphan_id), None);
    assert_eq!(engine.block_bytes(&referenced), None);
    assert_eq!(engine.milestone_by_index(8), None);
    assert!(engine.milestone_by_index(9).is_some());
    assert!(engine.block_bytes(&fresh).is_some());
    assert_eq!(
        engine.prune(PruneTarget::Index(8)),
        Err(PruneError::NotNeeded {
            pruning_index: 8,
            target: 8,
            min: 14,
            max: 11
        })
    );
}
