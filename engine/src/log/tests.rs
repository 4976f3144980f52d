use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use super::*;

pub(super) const FAST: LogConfig = LogConfig {
    segment_size: 1 << 20,
    durability: Durability::Deferred { interval_ms: 1000 },
    scrub: true,
};

pub(super) fn block(i: u64) -> Vec<u8> {
    let len = 40 + (i * 37 % 300) as usize;
    (0..len).map(|j| (i as usize * 31 + j * 7) as u8).collect()
}

pub(super) fn v2(bytes: &[u8]) -> BlockId {
    BlockId::V2(ledger_codec::hash::blake2b256(bytes))
}

pub(super) fn segment_path(dir: &Path, n: u32) -> PathBuf {
    dir.join(Segment::file_name(n))
}

pub(super) fn index_path(dir: &Path, n: u32) -> PathBuf {
    dir.join(SealedIndex::file_name(n))
}

/// Every record's id and bytes in append order.
pub(super) fn contents(log: &Log) -> Vec<(BlockId, Location, Vec<u8>)> {
    log.reader()
        .iter()
        .map(|r| (r.id(), r.location(), r.bytes().to_vec()))
        .collect()
}

#[test]
fn appended_blocks_read_back_by_id_location_and_iteration() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), FAST).unwrap();
    assert!(log.is_empty());
    let mut locs = Vec::new();
    for i in 0..100 {
        let a = log.append_v2(&block(i)).unwrap();
        assert!(a.inserted);
        locs.push(a.location);
    }
    assert_eq!(log.len(), 100);
    for (i, loc) in locs.iter().enumerate() {
        let b = block(i as u64);
        let reader = log.reader();
        let r = reader.get(&v2(&b)).unwrap();
        assert_eq!(r.bytes(), &b[..], "block {i}");
        assert_eq!(r.location(), *loc);
        assert_eq!(r.kind(), RecordKind::V2Block);
        assert_eq!(log.reader().read(*loc).unwrap().bytes(), &b[..]);
        assert_eq!(Location::from_u64(loc.to_u64()), *loc);
    }
    let all = contents(&log);
    assert_eq!(all.len(), 100);
    for (i, (id, loc, bytes)) in all.iter().enumerate() {
        assert_eq!(*id, v2(&block(i as u64)));
        assert_eq!(*loc, locs[i]);
        assert_eq!(bytes, &block(i as u64));
    }
    assert!(log.reader().get(&v2(b"never stored")).is_none());
}

#[test]
fn every_id_is_found_across_many_index_growths_and_after_a_reopen() {
    // 20 000 records: each of the index's tables grows many times, from pushes and from the
    // build at open. (`block` repeats itself after 19 200.)
    let unique = |i: u64| [&i.to_le_bytes()[..], b"index growth"].concat();
    let dir = tempfile::tempdir().unwrap();
    let n = 20_000u64;
    let locations: Vec<Location> = {
        let log = Log::open(dir.path(), FAST).unwrap();
        (0..n)
            .map(|i| log.append_v2(&unique(i)).unwrap().location)
            .collect()
    };
    let log = Log::open(dir.path(), FAST).unwrap();
    for (i, loc) in locations.iter().enumerate() {
        let reader = log.reader();
        let r = reader.get(&v2(&unique(i as u64))).unwrap();
        assert_eq!(r.location(), *loc, "block {i}");
    }
    for i in n..n + 1000 {
        assert!(
            log.reader().get(&v2(&unique(i))).is_none(),
            "{i} never stored"
        );
    }
    // Pushes after the build land in the same tables.
    let again = log.append_v2(&unique(7)).unwrap();
    assert_eq!((again.inserted, again.location), (false, locations[7]));
    for i in n..n + 1000 {
        log.append_v2(&unique(i)).unwrap();
    }
    for i in 0..n + 1000 {
        assert!(
            log.reader().get(&v2(&unique(i))).is_some(),
            "{i} after the appends"
        );
    }
}

#[test]
fn appending_a_known_id_returns_the_existing_location() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), FAST).unwrap();
    let first = log.append_v2(b"same block").unwrap();
    log.append_v2(b"other block").unwrap();
    let again = log.append_v2(b"same block").unwrap();
    assert_eq!(
        again,
        Appended {
            location: first.location,
            inserted: false
        }
    );
    assert_eq!(log.len(), 2);
    let used = log.stats().used_bytes;
    assert_eq!(
        log.append_v2(b"same block").unwrap().location,
        first.location
    );
    assert_eq!(
        log.stats().used_bytes,
        used,
        "nothing written for a known id"
    );
}

#[test]
fn v3_records_keep_their_36_byte_id_beside_v2_records() {
    let dir = tempfile::tempdir().unwrap();
    let mut id = [9u8; 36];
    id[32..].copy_from_slice(&77u32.to_le_bytes());
    {
        let log = Log::open(dir.path(), FAST).unwrap();
        log.append_v2(b"v2 block").unwrap();
        let a = log.append_v3(id, b"v3 block").unwrap();
        assert!(a.inserted);
        assert!(!log.append_v3(id, b"v3 block").unwrap().inserted);
    }
    let log = Log::open(dir.path(), FAST).unwrap();
    let reader = log.reader();
    let r = reader.get(&BlockId::V3(id)).unwrap();
    assert_eq!(
        (r.kind(), r.bytes()),
        (RecordKind::V3Block, &b"v3 block"[..])
    );
    assert_eq!(r.id(), BlockId::V3(id));
    // A v2 id with the same leading bytes is a different key.
    let mut short = [0u8; 32];
    short.copy_from_slice(&id[..32]);
    assert!(log.reader().get(&BlockId::V2(short)).is_none());
}

#[test]
fn reopened_log_equals_the_log_before_in_every_durability_mode() {
    for durability in [
        Durability::EveryAppend,
        Durability::Group { interval_ms: 1 },
        Durability::Deferred { interval_ms: 1 },
    ] {
        let dir = tempfile::tempdir().unwrap();
        let config = LogConfig::default()
            .with_segment_size(8192)
            .with_durability(durability);
        let before = {
            let log = Log::open(dir.path(), config).unwrap();
            for i in 0..120 {
                log.append_v2(&block(i)).unwrap();
            }
            assert!(log.stats().segments > 3, "{durability:?}: segments rolled");
            contents(&log)
        };
        let log = Log::open(dir.path(), config).unwrap();
        assert_eq!(contents(&log), before, "{durability:?}");
        assert_eq!(log.recovery().truncated_at, None);
        assert_eq!(log.recovery().records, 120);
        // Appends continue where the log ended, and a second reopen sees them too.
        log.append_v2(b"after reopen").unwrap();
        let after = contents(&log);
        drop(log);
        assert_eq!(
            contents(&Log::open(dir.path(), config).unwrap()),
            after,
            "{durability:?}"
        );
    }
}

/// Opens a log in `dir` and appends blocks 0, 1, … until `done(log, appended)`: its records
/// and stats.
fn fill_until(
    dir: &Path,
    config: LogConfig,
    done: impl Fn(&Log, u64) -> bool,
) -> (Vec<(BlockId, Location, Vec<u8>)>, LogStats) {
    let log = Log::open(dir, config).unwrap();
    let mut i = 0;
    while !done(&log, i) {
        log.append_v2(&block(i)).unwrap();
        i += 1;
    }
    (contents(&log), log.stats())
}

fn fill(dir: &Path, n: u64) -> (Vec<(BlockId, Location, Vec<u8>)>, LogStats) {
    fill_until(dir, FAST, |_, i| i == n)
}

#[test]
fn sealed_last_segment_starts_a_new_one_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let config = FAST.with_segment_size(4096);
    // Fill segment 0 and roll: the roll seals 0 and creates 1.
    let (before, _) = fill_until(dir.path(), config, |log, _| log.stats().segments == 2);
    // Remove the (empty but for one record) active segment's record, leaving segment 0 sealed
    // and segment 1 absent, as if the crash came between seal and creation.
    let last = before.last().unwrap().1.segment();
    std::fs::remove_file(segment_path(dir.path(), last)).unwrap();
    let log = Log::open(dir.path(), config).unwrap();
    assert_eq!(contents(&log), before[..before.len() - 1]);
    assert_eq!(log.stats().segments, 2);
}

#[test]
fn torn_last_record_at_every_byte_is_truncated_and_the_log_still_opens() {
    let dir = tempfile::tempdir().unwrap();
    let (all, stats) = fill(dir.path(), 5);
    let path = segment_path(dir.path(), 0);
    let pristine = std::fs::read(&path).unwrap();
    let start = all[4].1.offset() as usize;
    let end = stats.used_bytes as usize;
    for cut in start..end {
        for zero_fill in [true, false] {
            // Either the tail is zero (a torn write in a preallocated file) or the file is short.
            std::fs::write(&path, &pristine).unwrap();
            let f = OpenOptions::new().write(true).open(&path).unwrap();
            if zero_fill {
                f.write_all_at(&vec![0u8; end - cut], cut as u64).unwrap();
            } else {
                f.set_len(cut as u64).unwrap();
            }
            drop(f);
            let log = Log::open(dir.path(), FAST).unwrap();
            assert_eq!(
                contents(&log),
                all[..4],
                "cut at {cut}, zero_fill {zero_fill}"
            );
            let torn = log.recovery().truncated_at;
            if cut == start {
                assert_eq!(torn, None, "nothing left of the record at {cut}");
            } else {
                assert_eq!(torn, Some(all[4].1), "cut at {cut}, zero_fill {zero_fill}");
            }
            // The log takes the record again at the same place.
            let again = log.append_v2(&all[4].2).unwrap();
            assert_eq!(again.location, all[4].1);
            assert_eq!(contents(&log), all);
        }
    }
}

/// Flips one bit in the body of record `n`.
fn flip_in_record(dir: &Path, record: Location) {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(segment_path(dir, record.segment()))
        .unwrap();
    let at = u64::from(record.offset()) + 60;
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, at).unwrap();
    f.write_all_at(&[b[0] ^ 0x04], at).unwrap();
}

#[test]
fn checksum_flip_in_the_middle_of_the_active_segment_stops_the_open_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (all, _) = fill(dir.path(), 6);
    flip_in_record(dir.path(), all[3].1);
    let path = segment_path(dir.path(), 0);
    let before = std::fs::read(&path).unwrap();
    match Log::open(dir.path(), FAST) {
        Err(LogError::Corrupted {
            segment,
            offset,
            reason,
        }) => {
            assert_eq!(segment, 0);
            assert_eq!(offset, u64::from(all[3].1.offset()));
            assert!(reason.contains("not a torn tail"), "{reason}");
        }
        other => panic!("expected corruption, got {other:?}"),
    }
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the segment was changed"
    );
}

#[test]
fn checksum_flip_in_the_last_record_is_a_torn_tail_and_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    let (all, _) = fill(dir.path(), 6);
    flip_in_record(dir.path(), all[5].1);
    let log = Log::open(dir.path(), FAST).unwrap();
    assert_eq!(log.recovery().truncated_at, Some(all[5].1));
    assert_eq!(log.recovery().truncated_reason, Some("checksum mismatch"));
    assert_eq!(contents(&log), all[..5]);
    // The damaged record was cut off: appending a new record and reopening must not bring
    // it back.
    log.append_v2(b"new record").unwrap();
    let expected = contents(&log);
    drop(log);
    let log = Log::open(dir.path(), FAST).unwrap();
    assert_eq!(contents(&log), expected);
    assert_eq!(log.recovery().truncated_at, None);
}

#[test]
fn checksum_flip_in_a_scanned_sealed_segment_is_reported_as_corruption() {
    // A sealed segment is scanned when its index file is missing (a log of the previous
    // format, or a deleted index): then damage in it stops the open as before. (With a valid
    // index file the segment is not scanned and the damaged record is not served:
    // `flipped_frame_of_an_indexed_sealed_segment_is_never_served`.)
    let dir = tempfile::tempdir().unwrap();
    let config = FAST.with_segment_size(4096);
    let (all, _) = fill_until(dir.path(), config, |_, i| i == 60);
    std::fs::remove_file(index_path(dir.path(), 1)).unwrap();
    let victim = all.iter().find(|r| r.1.segment() == 1).unwrap().1;
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(segment_path(dir.path(), 1))
        .unwrap();
    let at = u64::from(victim.offset()) + 12;
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, at).unwrap();
    f.write_all_at(&[b[0] ^ 0x80], at).unwrap();
    let err = Log::open(dir.path(), config).unwrap_err();
    assert!(
        matches!(err, LogError::Corrupted { segment: 1, offset, .. } if offset == u64::from(victim.offset())),
        "{err}"
    );
    // A flipped header bit is caught too.
    f.write_all_at(&[b[0]], at).unwrap();
    f.write_all_at(&[0xAA], 20).unwrap();
    let err = Log::open(dir.path(), config).unwrap_err();
    assert!(
        matches!(
            err,
            LogError::Corrupted {
                segment: 1,
                offset: 0,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn missing_middle_segment_is_corruption_and_leftover_tmp_files_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let config = FAST.with_segment_size(4096);
    {
        let log = Log::open(dir.path(), config).unwrap();
        for i in 0..60 {
            log.append_v2(&block(i)).unwrap();
        }
    }
    let tmp = dir.path().join("00000099.seg.tmp");
    std::fs::write(&tmp, b"half-created").unwrap();
    let log = Log::open(dir.path(), config).unwrap();
    assert_eq!(log.len(), 60);
    assert!(!tmp.exists());
    drop(log);
    std::fs::remove_file(segment_path(dir.path(), 1)).unwrap();
    let err = Log::open(dir.path(), config).unwrap_err();
    assert!(matches!(err, LogError::Corrupted { .. }), "{err}");
}

#[test]
fn record_of_an_unknown_kind_with_a_valid_checksum_is_unsupported() {
    let dir = tempfile::tempdir().unwrap();
    let (all, stats) = fill(dir.path(), 2);
    let mut frame = Vec::new();
    format::encode_frame(&mut frame, 0x42, &[], b"from the future");
    let f = OpenOptions::new()
        .write(true)
        .open(segment_path(dir.path(), 0))
        .unwrap();
    f.write_all_at(&frame, stats.used_bytes).unwrap();
    let err = Log::open(dir.path(), FAST).unwrap_err();
    assert!(
        matches!(err, LogError::UnsupportedRecord { kind: 0x42, .. }),
        "{err}"
    );
    assert_eq!(all.len(), 2);
}

#[test]
fn oversized_record_is_rejected_and_the_log_stays_usable() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), FAST.with_segment_size(4096)).unwrap();
    let max = log.max_record_len();
    let err = log.append_v2(&vec![1u8; max + 1]).unwrap_err();
    assert!(
        matches!(err, LogError::RecordTooLarge { len, .. } if len == max + 1),
        "{err}"
    );
    log.append_v2(&vec![2u8; max]).unwrap();
    log.append_v2(&vec![3u8; max]).unwrap();
    assert_eq!(log.stats().segments, 2);
}

#[test]
fn read_of_a_location_that_is_not_a_record_start_is_none() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), FAST).unwrap();
    let a = log.append_v2(b"some block").unwrap().location;
    assert!(log.reader().read(a).is_some());
    assert!(log
        .reader()
        .read(Location {
            segment: 0,
            offset: a.offset + 1
        })
        .is_none());
    assert!(log
        .reader()
        .read(Location {
            segment: 5,
            offset: a.offset
        })
        .is_none());
}

#[test]
fn concurrent_appenders_and_readers_see_every_block_once() {
    let dir = tempfile::tempdir().unwrap();
    let config = LogConfig::default()
        .with_segment_size(64 << 10)
        .with_durability(Durability::Group { interval_ms: 1 });
    let log = Arc::new(Log::open(dir.path(), config).unwrap());
    let threads: Vec<_> = (0..6u64)
        .map(|t| {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                for i in 0..150u64 {
                    // Threads overlap on half their blocks to race the idempotency check.
                    let n = if i % 2 == 0 { i } else { t * 1000 + i };
                    let b = block(n);
                    let a = log.append_v2(&b).unwrap();
                    assert_eq!(log.reader().read(a.location).unwrap().bytes(), &b[..]);
                    assert_eq!(log.reader().get(&v2(&b)).unwrap().location(), a.location);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let expected = 75 + 6 * 75;
    assert_eq!(log.len(), expected);
    let all = contents(&log);
    let mut ids: Vec<_> = all.iter().map(|r| r.0).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len() as u64, expected, "no id stored twice");
    assert!(
        all.windows(2).all(|w| w[0].1 < w[1].1),
        "iteration in append order"
    );
    drop(log);
    assert_eq!(contents(&Log::open(dir.path(), config).unwrap()), all);
}

#[test]
fn nowait_appends_report_durability_through_callbacks_in_every_mode() {
    for durability in [
        Durability::Group { interval_ms: 2 },
        Durability::EveryAppend,
        Durability::Deferred { interval_ms: 1000 },
    ] {
        let dir = tempfile::tempdir().unwrap();
        let config = LogConfig::default().with_durability(durability);
        let log = Log::open(dir.path(), config).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let mut marks = Vec::new();
        for i in 0..200u64 {
            let b = block(i);
            let (a, mark) = log.append_v2_nowait(&b).unwrap();
            assert!(a.inserted);
            // Readable before it is durable.
            assert_eq!(log.reader().read(a.location).unwrap().bytes(), &b[..]);
            let tx = tx.clone();
            log.on_durable(mark, move |r| tx.send((i, r.is_ok())).unwrap());
            marks.push(mark);
        }
        // The same block again: not inserted, the first record's mark.
        let (again, mark) = log.append_v2_nowait(&block(7)).unwrap();
        assert!(!again.inserted);
        assert_eq!(mark, marks[7]);
        assert_eq!(log.durable_mark(&v2(&block(7))), Some(marks[7]));
        assert_eq!(log.durable_mark(&v2(&block(9999))), None);
        let mut seen: Vec<u64> = (0..200)
            .map(|_| {
                let (i, ok) = rx
                    .recv_timeout(std::time::Duration::from_secs(10))
                    .expect("callback");
                assert!(ok, "{durability:?}: block {i}");
                i
            })
            .collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..200).collect::<Vec<_>>(), "{durability:?}");
        // Every mark is durable now: waiting returns at once, a late callback runs inline.
        log.wait_durable_at(marks[199]).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        log.on_durable(marks[0], move |r| tx.send(r.is_ok()).unwrap());
        assert_eq!(rx.try_recv(), Ok(true), "{durability:?}");
        drop(log);
        assert_eq!(Log::open(dir.path(), config).unwrap().len(), 200);
    }
}

#[test]
fn a_second_open_of_the_same_directory_is_refused_until_the_first_closes() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), FAST).unwrap();
    log.append_v2(&block(1)).unwrap();
    match Log::open(dir.path(), FAST) {
        Err(LogError::Locked { path }) => assert_eq!(path, dir.path().join("LOCK")),
        other => panic!("second open: {:?}", other.map(|l| l.len())),
    }
    // The refused open changed nothing.
    assert_eq!(log.len(), 1);
    drop(log);
    let again = Log::open(dir.path(), FAST).unwrap();
    assert_eq!(again.len(), 1);
}

#[test]
fn a_lookup_near_a_segment_finds_what_a_lookup_from_the_newest_finds() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), FAST.with_segment_size(16 << 10)).unwrap();
    for i in 0..600 {
        log.append_v2(&block(i)).unwrap();
    }
    let (first, active) = (log.first_segment(), log.active_segment());
    assert!(active >= 5, "{active} segments");
    let reader = log.reader();
    for (id, loc, bytes) in contents(&log) {
        for near in [first, loc.segment, active / 2, active, active + 10] {
            let r = reader
                .get_near(&id, near)
                .unwrap_or_else(|| panic!("{loc:?} near {near}"));
            assert_eq!((r.location(), r.bytes()), (loc, &bytes[..]));
        }
    }
    for i in 1_000..1_050 {
        let absent = v2(&block(i));
        assert!(reader.get_near(&absent, active / 2).is_none());
    }
}

#[test]
fn sealing_the_active_segment_early_keeps_every_record_and_needs_a_record_and_the_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), FAST).unwrap();
    assert!(!log.seal_active(0).unwrap(), "nothing to seal");
    for i in 0..10 {
        log.append_v2(&block(i)).unwrap();
    }
    assert!(!log.seal_active(1 << 20).unwrap(), "below the bytes asked");
    assert_eq!(log.active_segment(), 0);
    assert!(log.seal_active(1).unwrap());
    assert_eq!(log.active_segment(), 1);
    assert!(
        index_path(dir.path(), 0).exists(),
        "sealed with its index file"
    );
    log.append_v2(&block(10)).unwrap();
    let before = contents(&log);
    assert_eq!(before.len(), 11);
    drop(log);
    let log = Log::open(dir.path(), FAST).unwrap();
    assert_eq!(contents(&log), before);
    assert_eq!(log.active_segment(), 1);
    assert_eq!(
        log.recovery().scanned_segments,
        1,
        "only the active segment scanned"
    );
}

#[test]
fn after_an_early_seal_that_failed_no_record_goes_into_the_sealed_segment() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), FAST).unwrap();
    for i in 0..10 {
        log.append_v2(&block(i)).unwrap();
    }
    // The next segment cannot be created: its temporary name is taken by a directory.
    let blocker = dir.path().join(format!("{}.tmp", Segment::file_name(1)));
    std::fs::create_dir(&blocker).unwrap();
    assert!(log.seal_active(1).is_err());
    assert!(
        log.append_v2(&block(10)).is_err(),
        "the append retries the roll, and fails with it"
    );
    std::fs::remove_dir(&blocker).unwrap();
    log.append_v2(&block(10)).unwrap();
    assert_eq!(log.active_segment(), 1);
    let all = contents(&log);
    assert_eq!(all.len(), 11);
    assert_eq!(
        all[10].1.segment, 1,
        "the record went into the next segment"
    );
    let reader = log.reader();
    for (id, loc, bytes) in &all {
        let r = reader.get(id).unwrap();
        assert_eq!((r.location(), r.bytes()), (*loc, &bytes[..]));
    }
    drop(reader);
    drop(log);
    let log = Log::open(dir.path(), FAST).unwrap();
    assert_eq!(contents(&log), all);
}
