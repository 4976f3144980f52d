//! The snapshot writers put a file in place whole or not at all (docs/snapshots-pruning.md §5,
//! last row) and refuse records out of the order the readers demand (§1.7).

use std::fs;

use ledger_codec::Codec;
use ledger_engine::snapshot::{
    load, temporary_path, DeltaHeader, DeltaWriter, FullHeader, FullWriter, MilestoneDiff,
    SnapshotOutput, Treasury,
};

use super::snapshot_model::params;

fn genesis_header() -> FullHeader {
    FullHeader {
        genesis_milestone_index: 0,
        target_milestone_index: 0,
        target_milestone_timestamp: 0,
        target_milestone_id: [0; 32],
        ledger_milestone_index: 0,
        treasury: Treasury::default(),
        protocol_parameters: ledger_engine::snapshot::ProtocolParametersOption {
            activation_index: 0,
            protocol_version: 2,
            params: params(0).to_bytes().unwrap(),
        },
        output_count: 99,
        diff_count: 99,
        sep_count: 99,
    }
}

fn all_supply() -> SnapshotOutput {
    SnapshotOutput {
        output_id: [0; 34],
        block_id: [0; 32],
        booked_index: 0,
        booked_timestamp: 0,
        output: ledger_test_support::ledger::basic_to(params(0).token_supply, [1; 32])
            .to_bytes()
            .unwrap(),
    }
}

fn milestone_diff(index: u32) -> MilestoneDiff {
    let payload = ledger_codec::stardust::Milestone {
        index,
        timestamp: index,
        protocol_version: 2,
        previous_milestone_id: [0u8; 32].into(),
        parents: vec![[7u8; 32]].into(),
        inclusion_merkle_root: [0u8; 32].into(),
        applied_merkle_root: [0u8; 32].into(),
        metadata: Vec::new().into(),
        options: Vec::new(),
        signatures: vec![ledger_codec::stardust::Ed25519Signature::new(
            [3; 32], [4; 64],
        )]
        .into(),
    };
    MilestoneDiff {
        milestone_payload: payload.to_bytes().unwrap(),
        treasury_input: None,
        created: Vec::new(),
        consumed: Vec::new(),
    }
}

#[test]
fn a_writer_dropped_before_finish_leaves_the_old_file_and_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("full_snapshot.bin");
    fs::write(&path, b"old").unwrap();
    {
        let mut w = FullWriter::create(&path, &genesis_header()).unwrap();
        w.push_output(&all_supply()).unwrap();
        assert!(temporary_path(&path).exists());
        assert_eq!(fs::read(&path).unwrap(), b"old");
    }
    assert_eq!(fs::read(&path).unwrap(), b"old");
    assert!(!temporary_path(&path).exists());
    assert_eq!(
        temporary_path(&path).file_name().unwrap(),
        "full_snapshot.bin_tmp"
    );
}

#[test]
fn a_finished_genesis_file_replaces_the_old_one_with_its_counts_patched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("full_snapshot.bin");
    fs::write(&path, b"old").unwrap();
    let mut w = FullWriter::create(&path, &genesis_header()).unwrap();
    w.push_output(&all_supply()).unwrap();
    w.push_sep(&[0; 32]).unwrap();
    assert_eq!(w.finish().unwrap(), path);
    let s = load(&path, None, Some("snapnet")).unwrap();
    assert_eq!(s.full_header.output_count, 1);
    assert_eq!(s.full_header.diff_count, 0);
    assert_eq!(s.full_header.sep_count, 1);
    assert_eq!(s.unspent, [all_supply()]);
    assert!(!temporary_path(&path).exists());
}

#[test]
fn records_out_of_order_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = FullWriter::create(&dir.path().join("f"), &genesis_header()).unwrap();
    w.push_diff(&milestone_diff(5)).unwrap();
    let err = w.push_diff(&milestone_diff(5)).unwrap_err();
    assert!(err.to_string().contains("strictly descending"), "{err}");
    let err = w.push_output(&all_supply()).unwrap_err();
    assert!(err.to_string().contains("after a later section"), "{err}");
    w.push_sep(&[0; 32]).unwrap();
    assert!(w.push_diff(&milestone_diff(4)).is_err());
    let mut huge = all_supply();
    huge.output = vec![3; 40_000];
    let mut w = FullWriter::create(&dir.path().join("g"), &genesis_header()).unwrap();
    let err = w.push_output(&huge).unwrap_err();
    assert!(err.to_string().contains("at most 32768"), "{err}");

    let header = DeltaHeader {
        target_milestone_index: 3,
        target_milestone_timestamp: 0,
        full_snapshot_target_milestone_id: [0; 32],
        sep_file_offset: 0,
        diff_count: 0,
        sep_count: 0,
    };
    let mut w = DeltaWriter::create(&dir.path().join("d"), &header).unwrap();
    w.push_diff(&milestone_diff(2)).unwrap();
    let err = w.push_diff(&milestone_diff(1)).unwrap_err();
    assert!(err.to_string().contains("strictly ascending"), "{err}");
    let mut with_input = milestone_diff(3);
    with_input.treasury_input = Some(Treasury::default());
    let err = w.push_diff(&with_input).unwrap_err();
    assert!(err.to_string().contains("treasury input"), "{err}");
}

/// Hornet's fixtures, read and written again with the writers, are the same bytes: the
/// writers are byte-compatible with Hornet's (docs/snapshots-pruning.md §1).
#[test]
fn the_writers_reproduce_hornets_fixtures_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let vectors = ledger_test_support::vectors_dir().join("hornet-snapshots");
    for name in [
        "full_snapshot.bin",
        "migration_full_snapshot.bin",
        "snapshot_full_snapshot.bin",
    ] {
        let data = fs::read(vectors.join(name)).unwrap();
        let mut r = ledger_engine::snapshot::FullReader::new(&data[..]).unwrap();
        let mut header = r.header().clone();
        header.output_count = 0;
        header.diff_count = 0;
        header.sep_count = 0;
        let out = dir.path().join(name);
        let mut w = FullWriter::create(&out, &header).unwrap();
        while let Some(o) = r.next_output().unwrap() {
            w.push_output(&o).unwrap();
        }
        while let Some(d) = r.next_diff().unwrap() {
            w.push_diff(&d).unwrap();
        }
        while let Some(s) = r.next_sep().unwrap() {
            w.push_sep(&s).unwrap();
        }
        w.finish().unwrap();
        assert!(fs::read(&out).unwrap() == data, "{name} differs");
    }
    let data = fs::read(vectors.join("snapshot_delta_snapshot.bin")).unwrap();
    let mut r = ledger_engine::snapshot::DeltaReader::new(&data[..]).unwrap();
    let mut header = *r.header();
    header.sep_file_offset = 0;
    header.diff_count = 0;
    header.sep_count = 0;
    let out = dir.path().join("delta.bin");
    let mut w = DeltaWriter::create(&out, &header).unwrap();
    while let Some(d) = r.next_diff().unwrap() {
        w.push_diff(&d).unwrap();
    }
    while let Some(s) = r.next_sep().unwrap() {
        w.push_sep(&s).unwrap();
    }
    w.finish().unwrap();
    assert!(fs::read(&out).unwrap() == data, "the delta differs");
}

#[test]
fn snapshot_times_print_as_rfc3339_utc() {
    use ledger_engine::snapshot::rfc3339_utc;
    for (unix, text) in [
        (0, "1970-01-01T00:00:00Z"),
        (951_782_400, "2000-02-29T00:00:00Z"),
        (1_720_163_517, "2024-07-05T07:11:57Z"),
        (u32::MAX, "2106-02-07T06:28:15Z"),
    ] {
        assert_eq!(rfc3339_utc(unix), text);
    }
}

/// Extending a delta (TIP-35 "updating an existing delta snapshot file") gives the same bytes
/// as writing the longer delta at once, and refuses a delta on another full file.
#[test]
fn an_extended_delta_equals_one_written_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let header = |target| DeltaHeader {
        target_milestone_index: target,
        target_milestone_timestamp: target * 10,
        full_snapshot_target_milestone_id: [6; 32],
        sep_file_offset: 0,
        diff_count: 0,
        sep_count: 0,
    };
    let once = dir.path().join("once.bin");
    let mut w = DeltaWriter::create(&once, &header(5)).unwrap();
    for i in 2..=5 {
        w.push_diff(&milestone_diff(i)).unwrap();
    }
    w.push_sep(&[8; 32]).unwrap();
    w.finish().unwrap();

    let grown = dir.path().join("delta_snapshot.bin");
    let mut w = DeltaWriter::create(&grown, &header(3)).unwrap();
    for i in 2..=3 {
        w.push_diff(&milestone_diff(i)).unwrap();
    }
    w.push_sep(&[7; 32]).unwrap();
    w.finish().unwrap();
    let err = DeltaWriter::extend(&grown, [1; 32], 5, 50).err().unwrap();
    assert!(
        err.to_string().starts_with("snapshots not mergeable"),
        "{err}"
    );
    let mut w = DeltaWriter::extend(&grown, [6; 32], 5, 50).unwrap();
    let err = w.push_diff(&milestone_diff(3)).unwrap_err();
    assert!(err.to_string().contains("strictly ascending"), "{err}");
    for i in 4..=5 {
        w.push_diff(&milestone_diff(i)).unwrap();
    }
    w.push_sep(&[8; 32]).unwrap();
    w.finish().unwrap();
    assert!(fs::read(&grown).unwrap() == fs::read(&once).unwrap());
    assert!(!temporary_path(&grown).exists());
}
