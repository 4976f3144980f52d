//! Full snapshots written by the running engine (docs/snapshots-pruning.md §2.3, §2.4, §2.6):
//! the file at a target reads back (`snapshot::load`) as the engine's ledger at that target,
//! with Hornet's 30 extra diffs and solid entry points referenced in the target's window; a
//! target outside the window is refused with the window stated.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use ledger_engine::snapshot::{self, FullReader, SnapHash, SnapshotOutput};
use ledger_engine::{Engine, Genesis, PruneTarget, SnapshotCreateError};
use ledger_test_support::blocks;

use crate::dev_net::{self, KeyChain};

fn open(dir: &Path) -> Arc<Engine> {
    Engine::open(dev_net::config(dir, 1)).unwrap()
}

/// `milestones` milestones, each moving funds along a chain of keys; returns every output
/// id booked (the genesis output first).
fn build(engine: &Engine, milestones: u32) -> Vec<[u8; 34]> {
    let mut ids = vec![[0u8; 34]];
    let mut chain = KeyChain::new();
    for i in 1..=milestones {
        let tx_id = chain.step(engine, i, 1_000_000 + u64::from(i)).tx_id;
        ids.push(blocks::output_id(tx_id, 0));
        ids.push(blocks::output_id(tx_id, 1));
        engine.issue_milestone().unwrap();
    }
    ids
}

/// A loaded snapshot's unspent set by output id.
fn unspent_of(loaded: &snapshot::LoadedSnapshot) -> BTreeMap<[u8; 34], SnapshotOutput> {
    loaded
        .unspent
        .iter()
        .map(|o| (o.output_id, o.clone()))
        .collect()
}

/// The unspent set at milestone `at`, from the engine's rows (booked at or before `at`, not
/// spent by then), as a file's records.
fn unspent_at(engine: &Engine, ids: &[[u8; 34]], at: u32) -> BTreeMap<[u8; 34], SnapshotOutput> {
    ids.iter()
        .filter_map(|id| engine.output(id))
        .filter(|r| r.row.booked_index <= at && r.row.spent.is_none_or(|s| s.index > at))
        .map(|r| {
            (
                r.row.output_id,
                SnapshotOutput {
                    output_id: r.row.output_id,
                    block_id: r.row.block_id,
                    booked_index: r.row.booked_index,
                    booked_timestamp: r.row.booked_timestamp,
                    output: r.bytes,
                },
            )
        })
        .collect()
}

#[test]
fn a_full_snapshot_reads_back_as_the_ledger_at_its_target() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let ids = build(&engine, 60);
    let file = dir.path().join("full_snapshot_35.bin");
    let written = engine.create_full_snapshot(35, &file).unwrap();
    assert_eq!(
        (written.index, written.path.as_path()),
        (35, file.as_path())
    );

    // Header and diff order as Hornet writes them: ledger = CMI, diffs CMI down to T-29.
    let mut reader = FullReader::new(std::fs::File::open(&file).unwrap()).unwrap();
    let header = reader.header().clone();
    assert_eq!(header.ledger_milestone_index, 60);
    assert_eq!(header.target_milestone_index, 35);
    assert_eq!(header.diff_count, 60 - 35 + 30);
    let target = engine.milestone_by_index(35).unwrap();
    assert_eq!(header.target_milestone_id, target.milestone_id);
    assert_eq!(header.target_milestone_timestamp, target.timestamp);
    while reader.next_output().unwrap().is_some() {}
    let mut indexes = Vec::new();
    while let Some(d) = reader.next_diff().unwrap() {
        indexes.push(d.index().unwrap());
    }
    assert_eq!(indexes, (6..=60).rev().collect::<Vec<u32>>());

    let loaded = snapshot::load(&file, None, Some(&engine.params().network_name)).unwrap();
    assert_eq!(loaded.ledger_index, 35);
    assert_eq!(loaded.target_milestone_id, target.milestone_id);
    assert_eq!(
        (loaded.treasury.milestone_id, loaded.treasury.amount),
        engine.genesis().treasury
    );
    let got = unspent_of(&loaded);
    assert_eq!(got, unspent_at(&engine, &ids, 35));
    assert_eq!(
        got.len(),
        35 + 1,
        "one output kept per milestone and the last holder's"
    );

    // Every entry point was referenced in the target's window.
    assert!(!loaded.seps.is_empty());
    for sep in &loaded.seps {
        let referenced = engine
            .block_status(sep)
            .unwrap()
            .and_then(|s| s.view.referenced_by)
            .unwrap();
        assert!(
            (15..=35).contains(&referenced),
            "entry point referenced by {referenced}"
        );
    }
    // The milestone block of the target is referenced after it: its parents are the entry
    // points, it is not one.
    assert!(!loaded.seps.contains(&target.block_id));
    let parents = engine
        .block_status(&target.block_id)
        .unwrap()
        .unwrap()
        .parents;
    assert!(parents.iter().all(|p| loaded.seps.contains(p)));

    // A node started from the file is at ledger index 35 and hashes as the file does.
    let started = tempfile::tempdir().unwrap();
    let mut config = dev_net::config(started.path(), 1);
    config.genesis = Genesis::from_snapshot(&loaded).unwrap();
    config.coordinator = false;
    config.coordinator_public_keys = vec![engine.coordinator_public_key().unwrap()];
    let node = Engine::open(config).unwrap();
    assert_eq!(node.ledger_index(), 35);
    let from_file = SnapHash::of(&loaded);
    assert_eq!(node.ledger_snap_hash().unwrap(), from_file);
    // ... and differs from the writer's at 60.
    let writer = engine.ledger_snap_hash().unwrap();
    assert_eq!(writer.ledger_index, 60);
    assert_ne!(writer.ledger_state_hash, from_file.ledger_state_hash);
}

#[test]
fn a_target_outside_the_window_is_refused_with_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    build(&engine, 25);
    let file = dir.path().join("f.bin");
    // CMI 25: at most 5, at least 30 (diffs down to target - 29 from milestone 1).
    let err = engine.create_full_snapshot(5, &file).unwrap_err();
    assert_eq!(
        err,
        SnapshotCreateError::NotEnoughHistory { min: 30, max: 5 }
    );
    assert!(err.to_string().contains("[30, 5]"), "{err}");
    for _ in 0..30 {
        engine.issue_milestone().unwrap();
    }
    // CMI 55: [30, 35]; the neighbours of each end are refused on their own side only.
    assert_eq!(
        engine.create_full_snapshot(36, &file),
        Err(SnapshotCreateError::TooNew {
            target: 36,
            min: 30,
            max: 35
        })
    );
    assert_eq!(
        engine.create_full_snapshot(29, &file),
        Err(SnapshotCreateError::TooOld {
            target: 29,
            min: 30,
            max: 35
        })
    );
    assert!(!file.exists());
    assert_eq!(engine.create_full_snapshot(35, &file).unwrap().index, 35);
    assert_eq!(engine.create_full_snapshot(30, &file).unwrap().index, 30);
    // After pruning to 8, the diffs from 9 on are kept: the minimum is 9 + 29.
    assert_eq!(engine.prune(PruneTarget::Index(8)), Ok(8));
    assert_eq!(engine.snapshot_window(), (38, 35));
}

#[test]
fn automatic_snapshots_write_a_full_file_then_a_delta_that_chains_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = dev_net::config(dir.path(), 1);
    config.snapshots.interval = 10;
    config.snapshots.depth = 3; // raised to below max depth + 5 = 20
    let snapshots = config.snapshots.dir.clone();
    let engine = Engine::open(config.clone()).unwrap();
    assert_eq!(engine.snapshot_depth(), 20);
    let ids = build(&engine, 55);
    // CMI 50: the first target (30) inside the window, a full file.
    let full = snapshots.join(ledger_engine::FULL_SNAPSHOT_FILE);
    let delta = snapshots.join(ledger_engine::DELTA_SNAPSHOT_FILE);
    assert_eq!(engine.snapshot_index(), 30);
    assert!(!delta.exists());
    let loaded = snapshot::load(&full, None, None).unwrap();
    assert_eq!(loaded.ledger_index, 30);
    // Pruning keeps what the next snapshot needs: at most 30 - 20 - 20.
    assert_eq!(engine.pruning_window().1, 0);
    for _ in 0..5 {
        engine.issue_milestone().unwrap();
    }
    // CMI 60: target 40 as a delta on the full file.
    assert_eq!(engine.snapshot_index(), 40);
    let loaded = snapshot::load(&full, Some(&delta), None).unwrap();
    assert_eq!(loaded.ledger_index, 40);
    assert_eq!(unspent_of(&loaded), unspent_at(&engine, &ids, 40));
    for _ in 0..10 {
        engine.issue_milestone().unwrap();
    }
    // CMI 70: the delta extended to 50.
    assert_eq!(engine.snapshot_index(), 50);
    let loaded = snapshot::load(&full, Some(&delta), None).unwrap();
    assert_eq!(loaded.ledger_index, 50);
    assert_eq!(loaded.delta_diffs.len(), 20);
    // On request: within [full target + 1, CMI - 20], a delta on the same full file.
    assert_eq!(
        engine.create_delta_snapshot(51),
        Err(SnapshotCreateError::TooNew {
            target: 51,
            min: 31,
            max: 50
        })
    );
    assert_eq!(engine.create_delta_snapshot(45).unwrap().path, delta);
    let loaded = snapshot::load(&full, Some(&delta), None).unwrap();
    assert_eq!(loaded.ledger_index, 45);
    assert_eq!(unspent_of(&loaded), unspent_at(&engine, &ids, 45));
    engine.create_delta_snapshot(50).unwrap();
    engine.shutdown().unwrap();
    drop(engine);
    // The index is read again from the files.
    let engine = Engine::open(config).unwrap();
    assert_eq!(engine.snapshot_index(), 50);
}
