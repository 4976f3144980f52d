//! The history beside the log: a restart resumes from the checkpoint with answers identical
//! to before, rows of old referenced blocks leave memory, and a damaged history file is
//! named and never used (the state is rebuilt from the log instead).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ledger_engine::{BlockStatus, Engine, MilestoneInfo, Opened, UtxoChanges};
use ledger_test_support::blocks;

use crate::dev_net::{self, KeyChain};

const MILESTONES: u32 = 40;

fn open(dir: &Path) -> Arc<Engine> {
    Engine::open(dev_net::config(dir, 1)).unwrap()
}

/// The top addresses at one ledger index.
type RichAt = (u32, Vec<([u8; 33], u64)>);
/// An output's amount, booking index, spending index and bytes.
type OutputAnswer = (u64, u32, Option<u32>, Vec<u8>);

/// Everything the engine answers about its history.
#[derive(Debug, PartialEq)]
struct Answers {
    ledger_index: u32,
    blocks: Vec<Option<BlockStatus>>,
    milestones: Vec<(Option<MilestoneInfo>, Option<UtxoChanges>)>,
    /// Each milestone looked up by its id.
    by_id: Vec<Option<MilestoneInfo>>,
    richest: Vec<RichAt>,
    outputs: Vec<Option<OutputAnswer>>,
    included: Vec<Option<[u8; 32]>>,
}

struct History {
    blocks: Vec<[u8; 32]>,
    outputs: Vec<[u8; 34]>,
    txs: Vec<[u8; 32]>,
    milestone_ids: Vec<[u8; 32]>,
}

fn answers(engine: &Engine, h: &History) -> Answers {
    Answers {
        ledger_index: engine.ledger_index(),
        blocks: h
            .blocks
            .iter()
            .map(|id| engine.block_status(id).unwrap())
            .collect(),
        milestones: (1..=MILESTONES)
            .map(|i| (engine.milestone_by_index(i), engine.utxo_changes(i)))
            .collect(),
        by_id: h
            .milestone_ids
            .iter()
            .map(|id| engine.milestone_by_id(id))
            .collect(),
        richest: (1..=MILESTONES)
            .map(|i| engine.richest(5, Some(i)).unwrap())
            .collect(),
        outputs: h
            .outputs
            .iter()
            .map(|o| {
                engine.output(o).map(|r| {
                    (
                        r.row.amount,
                        r.row.booked_index,
                        r.row.spent.map(|s| s.index),
                        r.bytes,
                    )
                })
            })
            .collect(),
        included: h.txs.iter().map(|t| engine.included_block(t)).collect(),
    }
}

/// Forty milestones: each moves funds along a chain of keys and carries tagged data.
fn build(engine: &Engine) -> History {
    let mut h = History {
        blocks: Vec::new(),
        outputs: vec![[0; 34]],
        txs: Vec::new(),
        milestone_ids: Vec::new(),
    };
    let mut chain = KeyChain::new();
    for i in 1..=MILESTONES {
        let step = chain.step(engine, i, 100_000 * u64::from(i));
        h.blocks.push(step.tagged_block);
        h.blocks.push(step.tx_block);
        h.txs.push(step.tx_id);
        h.outputs.push(blocks::output_id(step.tx_id, 0));
        h.outputs.push(blocks::output_id(step.tx_id, 1));
        let m = engine.issue_milestone().unwrap();
        h.blocks.push(m.block_id);
        h.milestone_ids.push(m.milestone_id);
    }
    h
}

/// A node in `dir` that built the history and stopped cleanly, and its answers then.
fn stopped_history(dir: &Path) -> (History, Answers) {
    let engine = open(dir);
    let h = build(&engine);
    let before = answers(&engine, &h);
    engine.shutdown().unwrap();
    (h, before)
}

/// The journal entries the open of `engine` applied (it must have resumed from a checkpoint).
fn journal_applied(engine: &Engine) -> u32 {
    match engine.opened() {
        Some(Opened::Checkpoint {
            journal_applied, ..
        }) => *journal_applied,
        other => panic!("not resumed from a checkpoint: {other:?}"),
    }
}

/// The journal entries the open of `engine` framed (it must have resumed from a checkpoint).
fn journal_framed(engine: &Engine) -> u32 {
    match engine.opened() {
        Some(Opened::Checkpoint { journal_framed, .. }) => *journal_framed,
        other => panic!("not resumed from a checkpoint: {other:?}"),
    }
}

fn history_file(dir: &Path, name: &str) -> PathBuf {
    dir.join("history").join(name)
}

fn flip(path: &Path, at: u64) {
    let mut bytes = std::fs::read(path).unwrap();
    let at = usize::try_from(at).unwrap();
    bytes[at] ^= 0x40;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_restart_resumes_from_the_checkpoint_with_identical_answers() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let h = build(&engine);
    let before = answers(&engine, &h);
    assert!(
        engine.blocks_in_memory() < h.blocks.len() / 2,
        "rows of blocks referenced below max depth left memory: {} of {}",
        engine.blocks_in_memory(),
        h.blocks.len()
    );
    // Blocks after the last checkpoint, never referenced: the log tail.
    let late = blocks::tagged_block(engine.select_parents(), b"late");
    let late = engine.submit_v2(&late).unwrap().block_id;
    let late_status = engine.block_status(&late).unwrap();
    engine.shutdown().unwrap();
    drop(engine);

    let engine = open(dir.path());
    // The clean stop stored every spent row and wrote a ledger checkpoint: no journal is
    // applied, and the ledger holds the unspent outputs only.
    match engine.opened() {
        Some(Opened::Checkpoint {
            ledger_index: MILESTONES,
            journal_applied: 0,
            journal_framed: 0,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(answers(&engine, &h), before);
    assert_eq!(engine.outputs_in_memory().1, 0);
    assert_eq!(engine.block_status(&late).unwrap(), late_status);
    // It goes on confirming, the late block included.
    let m = engine.issue_milestone().unwrap();
    assert_eq!(m.index, MILESTONES + 1);
    assert_eq!(
        engine
            .block_status(&late)
            .unwrap()
            .unwrap()
            .view
            .referenced_by,
        Some(MILESTONES + 1)
    );
}

#[test]
fn without_a_clean_stop_the_tail_is_loaded_again() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let h = build(&engine);
    let late = blocks::tagged_block(engine.select_parents(), b"late");
    let late = engine.submit_v2(&late).unwrap().block_id;
    let before = answers(&engine, &h);
    // No shutdown: the last checkpoint is the one of the last milestone; the ledger opens
    // from the last ledger checkpoint before it and applies the journal since.
    drop(engine);
    let engine = open(dir.path());
    match engine.opened() {
        Some(Opened::Checkpoint {
            tail,
            journal_applied,
            ..
        }) => {
            assert!(*tail >= 1, "tail {tail}");
            assert!(
                *journal_applied < MILESTONES / 2,
                "{journal_applied} applied"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(answers(&engine, &h), before);
    assert!(engine.block_status(&late).unwrap().is_some());
}

#[test]
fn damaged_history_files_are_named_and_the_state_is_rebuilt_from_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let (h, before) = stopped_history(dir.path());

    let journal = history_file(dir.path(), "milestones.journal");
    let meta = history_file(dir.path(), "blockmeta/00000000.meta");
    let checkpoint = history_file(dir.path(), "checkpoint");
    for (file, at) in [
        (checkpoint.clone(), 20),
        (
            journal.clone(),
            std::fs::metadata(&journal).unwrap().len() / 2,
        ),
        (meta.clone(), 12),
    ] {
        // Without a ledger checkpoint the open checks every journal entry (with one, only
        // those after it: see the next test).
        std::fs::remove_file(history_file(dir.path(), "ledger.checkpoint")).unwrap();
        flip(&file, at);
        let engine = open(dir.path());
        let name = file.file_name().unwrap().to_str().unwrap().to_owned();
        match engine.opened() {
            Some(Opened::Replay { why }) => assert!(why.contains(&name), "{why}"),
            other => panic!("{name} flipped: {other:?}"),
        }
        assert_eq!(answers(&engine, &h), before, "{name} flipped");
        engine.shutdown().unwrap();
        drop(engine);
        // Rebuilt: the next start resumes again.
        let engine = open(dir.path());
        assert!(
            matches!(engine.opened(), Some(Opened::Checkpoint { .. })),
            "after {name}: {:?}",
            engine.opened()
        );
        engine.shutdown().unwrap();
    }
}

#[test]
fn a_damaged_metadata_slot_is_never_served() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let h = build(&engine);
    let old = h.blocks[0];
    let status = engine.block_status(&old).unwrap().unwrap();
    assert_eq!(status.view.referenced_by, Some(1));
    let offset = engine
        .internal_log()
        .reader()
        .get(&ledger_engine::internals::log::BlockId::V2(old))
        .unwrap()
        .location()
        .offset();
    engine.shutdown().unwrap();
    drop(engine);
    // The slot of the block (engine/FORMAT.md): header 32 bytes, 24-byte slots numbered by
    // (offset - 32) / 87.
    let slot = u64::from((offset - 32) / 87);
    flip(
        &history_file(dir.path(), "blockmeta/00000000.meta"),
        32 + slot * 24 + 9,
    );
    let engine = open(dir.path());
    assert!(matches!(engine.opened(), Some(Opened::Checkpoint { .. })));
    // Never used: the answer is an error naming the file, not a status.
    let err = engine.block_status(&old).unwrap_err().to_string();
    assert!(
        err.contains("00000000.meta") && err.contains("checksum"),
        "{err}"
    );
    let newest = h.blocks[h.blocks.len() - 1];
    assert!(engine.block_status(&newest).unwrap().is_some());
}

#[test]
fn a_data_directory_of_the_previous_format_is_upgraded_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let (h, before) = stopped_history(dir.path());
    // The previous release kept only the log's segments (and the key and watermark files):
    // no history directory, no index files beside the segments.
    std::fs::remove_dir_all(dir.path().join("history")).unwrap();
    for entry in std::fs::read_dir(dir.path().join("log")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "idx") {
            std::fs::remove_file(path).unwrap();
        }
    }
    let engine = open(dir.path());
    match engine.opened() {
        Some(Opened::Replay { why }) => assert!(why.contains("no checkpoint"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(answers(&engine, &h), before, "upgraded");
    drop(engine);
    // Upgraded in place: the next start resumes.
    let engine = open(dir.path());
    assert!(
        matches!(engine.opened(), Some(Opened::Checkpoint { .. })),
        "{:?}",
        engine.opened()
    );
    assert_eq!(answers(&engine, &h), before, "resumed after the upgrade");
}

/// The offsets in `file` where the stored row of an output created by block `block` with
/// `amount` starts (its value begins with the block id and the amount; engine/FORMAT.md).
fn stored_rows(file: &Path, block: &[u8; 32], amount: u64) -> Vec<usize> {
    let bytes = std::fs::read(file).unwrap();
    let mut needle = block.to_vec();
    needle.extend_from_slice(&amount.to_le_bytes());
    bytes
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle.as_slice())
        .map(|(at, _)| at)
        .collect()
}

#[test]
fn a_damaged_spent_row_is_named_and_never_served() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let h = build(&engine);
    let before = answers(&engine, &h);
    // Output 1 of the first transaction: spent by the second milestone, its row stored.
    let target = h.outputs[2];
    let row = engine.output(&target).unwrap().row;
    assert_eq!(row.spent.map(|s| s.index), Some(2));
    engine.shutdown().unwrap();
    drop(engine);
    let store = history_file(dir.path(), "spent.redb");
    let at = stored_rows(&store, &row.block_id, row.amount);
    assert!(!at.is_empty(), "the row is in {}", store.display());
    for a in at {
        flip(&store, u64::try_from(a + 45).unwrap());
    }
    let engine = open(dir.path());
    assert!(matches!(engine.opened(), Some(Opened::Checkpoint { .. })));
    assert!(
        engine.output(&target).is_none(),
        "a damaged row is not served"
    );
    // Everything else as before.
    let mut now = answers(&engine, &h);
    assert_eq!(now.outputs[2], None);
    now.outputs[2].clone_from(&before.outputs[2]);
    assert_eq!(now, before);
}

#[test]
fn a_missing_or_damaged_spent_store_is_rebuilt_from_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let (h, before) = stopped_history(dir.path());
    let store = history_file(dir.path(), "spent.redb");
    // A data directory of the previous release has no store: the resume stores every spent
    // row from the journal, and so it does for a file that is not a store.
    for damage in ["removed", "overwritten"] {
        match damage {
            "removed" => std::fs::remove_file(&store).unwrap(),
            _ => std::fs::write(&store, vec![0x5A; 4096]).unwrap(),
        }
        let engine = open(dir.path());
        assert!(
            matches!(engine.opened(), Some(Opened::Checkpoint { .. })),
            "{damage}: {:?}",
            engine.opened()
        );
        assert_eq!(engine.outputs_in_memory().1, 0, "{damage}");
        assert_eq!(answers(&engine, &h), before, "{damage}");
        engine.shutdown().unwrap();
    }
}

#[test]
fn a_damaged_ledger_checkpoint_is_named_and_the_whole_journal_applied() {
    let dir = tempfile::tempdir().unwrap();
    let (h, before) = stopped_history(dir.path());
    let file = history_file(dir.path(), "ledger.checkpoint");
    let len = std::fs::metadata(&file).unwrap().len();
    // In the header, in a row, in the trailing checksum.
    for at in [20, len / 2, len - 2] {
        flip(&file, at);
        let engine = open(dir.path());
        assert_eq!(journal_applied(&engine), MILESTONES, "byte {at}");
        assert_eq!(answers(&engine, &h), before, "byte {at}");
        engine.shutdown().unwrap();
        drop(engine);
        // The shutdown's checkpoint wrote a good one again: the next open uses it.
        let engine = open(dir.path());
        assert_eq!(journal_applied(&engine), 0, "after byte {at}");
        assert_eq!(answers(&engine, &h), before, "after byte {at}");
        engine.shutdown().unwrap();
    }
}

#[test]
fn a_ledger_checkpoint_naming_bytes_the_log_does_not_hold_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let (h, before) = stopped_history(dir.path());
    let file = history_file(dir.path(), "ledger.checkpoint");
    let mut bytes = std::fs::read(&file).unwrap();
    // A row whose bytes are in a log record (not the genesis blob) is pointed at a record past
    // the log's end, and the rows' checksum made to match: every check of the file passes,
    // but the output's bytes cannot be read when the open books it.
    const HEADER: usize = 36;
    const ROW: usize = 132;
    const RECORD_AT: usize = 116;
    let trailer = bytes.len() - 4;
    let rows_crc = |b: &[u8]| crc32fast::hash(&b[HEADER..trailer]).to_le_bytes();
    assert_eq!(
        rows_crc(&bytes),
        bytes[trailer..],
        "the rows' checksum as FORMAT.md says"
    );
    let rows = (trailer - HEADER) / ROW;
    let row = (0..rows)
        .map(|r| HEADER + r * ROW)
        .find(|at| bytes[at + RECORD_AT..at + RECORD_AT + 8] != [0xFF; 8])
        .expect("an unspent output created by a transaction");
    bytes[row + RECORD_AT..row + RECORD_AT + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let crc = rows_crc(&bytes);
    bytes[trailer..].copy_from_slice(&crc);
    std::fs::write(&file, &bytes).unwrap();
    // Not used (logged): the whole journal is applied instead, with the same answers.
    let engine = open(dir.path());
    assert_eq!(journal_applied(&engine), MILESTONES);
    assert_eq!(answers(&engine, &h), before);
}

#[test]
fn a_damaged_journal_entry_under_the_ledger_checkpoint_is_named_when_read_and_never_served() {
    let dir = tempfile::tempdir().unwrap();
    let (h, before) = stopped_history(dir.path());
    // The entry of milestone 2: after the 32-byte header and milestone 1's frame (CRC, length,
    // body); a byte of its body after the 72-byte head.
    let journal = history_file(dir.path(), "milestones.journal");
    let bytes = std::fs::read(&journal).unwrap();
    let len1 = u64::from(u32::from_le_bytes(bytes[36..40].try_into().unwrap()));
    flip(&journal, 32 + 8 + len1 + 8 + 72 + 3);
    let engine = open(dir.path());
    // The open only framed the entries the ledger checkpoint covers.
    assert_eq!(journal_applied(&engine), 0);
    // Milestone 2 is not served (its entry fails its checksum on each read) ...
    assert_eq!(engine.milestone_by_index(2), None);
    assert_eq!(engine.utxo_changes(2), None);
    assert!(engine.richest(5, Some(1)).is_err());
    // ... and everything else is as before.
    for i in (1..=MILESTONES).filter(|i| *i != 2) {
        let at = usize::try_from(i - 1).unwrap();
        assert_eq!(
            (engine.milestone_by_index(i), engine.utxo_changes(i)),
            before.milestones[at],
            "milestone {i}"
        );
        if i > 1 {
            assert_eq!(
                engine.richest(5, Some(i)).unwrap(),
                before.richest[at],
                "richest at {i}"
            );
        }
    }
    for (o, want) in h.outputs.iter().zip(&before.outputs) {
        let got = engine.output(o).map(|r| {
            (
                r.row.amount,
                r.row.booked_index,
                r.row.spent.map(|s| s.index),
                r.bytes,
            )
        });
        assert_eq!(&got, want);
    }
    for (b, want) in h.blocks.iter().zip(&before.blocks) {
        assert_eq!(&engine.block_status(b).unwrap(), want);
    }
}

#[test]
fn restarts_without_new_blocks_load_no_log_and_apply_no_journal() {
    let dir = tempfile::tempdir().unwrap();
    let (h, before) = stopped_history(dir.path());
    for round in 0..3 {
        let engine = open(dir.path());
        match engine.opened() {
            Some(Opened::Checkpoint {
                tail: 0,
                journal_applied: 0,
                journal_framed: 0,
                ..
            }) => {}
            other => panic!("round {round}: {other:?}"),
        }
        assert_eq!(answers(&engine, &h), before, "round {round}");
        engine.shutdown().unwrap();
    }
}

/// Where the milestone index in `file` holds the row of `id` (its value: an 8-byte offset
/// whose high half is zero, then the id), every copy.
fn index_rows(file: &Path, id: &[u8; 32]) -> Vec<usize> {
    let bytes = std::fs::read(file).unwrap();
    bytes
        .windows(36)
        .enumerate()
        .filter(|(_, w)| w[..4] == [0; 4] && w[4..] == id[..])
        .map(|(at, _)| at + 4)
        .collect()
}

#[test]
fn a_damaged_milestone_index_row_is_named_and_never_served() {
    let dir = tempfile::tempdir().unwrap();
    let (h, before) = stopped_history(dir.path());
    let index = history_file(dir.path(), "milestones.redb");
    let target = 20;
    let id = h.milestone_ids[target as usize - 1];
    let at = index_rows(&index, &id);
    assert!(!at.is_empty(), "the row is in {}", index.display());
    for a in at {
        // The row's checksum, after the id.
        flip(&index, u64::try_from(a + 32).unwrap());
    }
    let engine = open(dir.path());
    assert_eq!(
        journal_framed(&engine),
        0,
        "the rows an open starts from are intact"
    );
    assert_eq!(engine.milestone_by_index(target), None, "not served");
    assert_eq!(engine.milestone_by_id(&id), None, "not served");
    assert_eq!(engine.utxo_changes(target), None);
    assert!(
        engine.richest(5, Some(target - 1)).is_err(),
        "its balance changes"
    );
    // Everything else as before.
    let now = |i: u32| (engine.milestone_by_index(i), engine.utxo_changes(i));
    for i in (1..=MILESTONES).filter(|i| *i != target) {
        assert_eq!(now(i), before.milestones[i as usize - 1], "milestone {i}");
        assert_eq!(
            engine.milestone_by_id(&h.milestone_ids[i as usize - 1]),
            before.by_id[i as usize - 1]
        );
    }
    for i in target..=MILESTONES {
        assert_eq!(
            engine.richest(5, Some(i)).unwrap(),
            before.richest[i as usize - 1]
        );
    }
    let outputs: Vec<_> = h
        .outputs
        .iter()
        .map(|o| engine.output(o).map(|r| r.bytes))
        .collect();
    let want: Vec<_> = before
        .outputs
        .iter()
        .map(|o| o.clone().map(|o| o.3))
        .collect();
    assert_eq!(outputs, want);
}

#[test]
fn a_missing_or_damaged_milestone_index_is_filled_again_from_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let (h, before) = stopped_history(dir.path());
    let index = history_file(dir.path(), "milestones.redb");
    // A data directory of the previous release has no index; a file that is not one is
    // removed. Either way the open frames the whole journal and answers as before, and the
    // clean stop after it stores every row again.
    for damage in ["removed", "overwritten", "stored again"] {
        match damage {
            "removed" => std::fs::remove_file(&index).unwrap(),
            "overwritten" => std::fs::write(&index, vec![0x5A; 4096]).unwrap(),
            _ => {}
        }
        let engine = open(dir.path());
        let framed = if damage == "stored again" {
            0
        } else {
            MILESTONES
        };
        assert_eq!(journal_framed(&engine), framed, "{damage}");
        assert_eq!(answers(&engine, &h), before, "{damage}");
        engine.shutdown().unwrap();
    }
}

#[test]
fn a_crash_like_stop_frames_only_the_entries_since_the_last_commit() {
    let dir = tempfile::tempdir().unwrap();
    let (h, before) = stopped_history(dir.path());
    // Milestones after the clean stop's commit, then no clean stop: their rows were held in
    // memory only.
    let engine = open(dir.path());
    for _ in 0..5 {
        engine.issue_milestone().unwrap();
    }
    let ids: Vec<_> = (MILESTONES + 1..=MILESTONES + 5)
        .map(|i| engine.milestone_by_index(i).unwrap())
        .collect();
    drop(engine);
    let engine = open(dir.path());
    assert!(journal_framed(&engine) <= 5, "{:?}", engine.opened());
    let now = answers(&engine, &h);
    assert_eq!(now.ledger_index, MILESTONES + 5);
    assert!(now.milestones == before.milestones, "milestones differ");
    assert!(now.by_id == before.by_id, "milestones by id differ");
    assert!(now.richest == before.richest, "rich lists differ");
    assert!(now.outputs == before.outputs, "outputs differ");
    assert!(now.included == before.included, "included blocks differ");
    // All but milestone 40's block, which milestone 41 referenced.
    let n = before.blocks.len() - 1;
    assert!(now.blocks[..n] == before.blocks[..n], "blocks differ");
    for m in ids {
        assert_eq!(engine.milestone_by_id(&m.milestone_id), Some(m));
        assert_eq!(engine.milestone_by_index(m.index), Some(m));
    }
}
