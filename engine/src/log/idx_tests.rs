//! Tests of the sealed segments' index files: written at seal, used instead of a scan on
//! reopen, rebuilt when missing or damaged; lookups and iteration across many segments.

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;

use super::tests::{block, contents, index_path, segment_path, v2, FAST};
use super::*;

/// Small segments: dozens of them for a few hundred blocks.
const SMALL: LogConfig = FAST.with_segment_size(4096);
/// `SMALL` without the index scrub: index files are verified by lookups only.
const NO_SCRUB: LogConfig = SMALL.with_index_scrub(false);

type Contents = Vec<(BlockId, Location, Vec<u8>)>;

/// A log of `n` blocks in `SMALL` segments; its contents.
fn small_log(dir: &Path, n: u64) -> Contents {
    let log = Log::open(dir, SMALL).unwrap();
    for i in 0..n {
        log.append_v2(&block(i)).unwrap();
    }
    contents(&log)
}

/// Sealed segments of a log whose last record is in `contents`.
fn sealed_segments(all: &Contents) -> u32 {
    all.last().unwrap().1.segment()
}

/// Checks every lookup of every record against `all`.
fn assert_lookups(log: &Log, all: &Contents) {
    assert_eq!(log.len(), all.len() as u64);
    assert_same(&contents(log), all, "contents");
    for (id, loc, bytes) in all {
        let reader = log.reader();
        let r = reader
            .get(id)
            .unwrap_or_else(|| panic!("{loc:?} not found"));
        assert_eq!((r.location(), r.bytes()), (*loc, &bytes[..]));
        assert!(log.contains(id));
        assert_eq!(log.reader().read(*loc).unwrap().bytes(), &bytes[..]);
        assert!(log
            .reader()
            .read(Location {
                segment: loc.segment,
                offset: loc.offset + 1
            })
            .is_none());
    }
    for i in 10_000..10_100 {
        assert!(log.reader().get(&v2(&block(i))).is_none());
    }
}

fn flip(path: &Path, at: u64) {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, at).unwrap();
    f.write_all_at(&[b[0] ^ 0x10], at).unwrap();
}

fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn index_files_are_written_at_seal_and_used_on_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let all = small_log(dir.path(), 600);
    let sealed = sealed_segments(&all);
    assert!(sealed >= 24, "dozens of segments: {sealed}");
    for n in 0..sealed {
        assert!(index_path(dir.path(), n).exists(), "index of segment {n}");
    }
    assert!(
        !index_path(dir.path(), sealed).exists(),
        "the active one has none"
    );
    let log = Log::open(dir.path(), SMALL).unwrap();
    let recovery = log.recovery();
    assert_eq!(recovery.scanned_segments, 1, "only the active segment");
    assert_eq!(recovery.rebuilt_indexes, vec![]);
    assert_eq!(recovery.records, 600);
    assert_eq!(recovery.segments, sealed + 1);
    assert_lookups(&log, &all);
    // Appends go on, and roll, after an open from index files.
    let more: Vec<_> = (600..700)
        .map(|i| log.append_v2(&block(i)).unwrap())
        .collect();
    assert!(more.iter().all(|a| a.inserted));
    assert!(!log.append_v2(&block(3)).unwrap().inserted, "a sealed one");
    let all = contents(&log);
    drop(log);
    let log = Log::open(dir.path(), SMALL).unwrap();
    assert_eq!(log.recovery().scanned_segments, 1);
    assert_lookups(&log, &all);
}

#[test]
fn memory_index_holds_only_the_active_segment() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), SMALL).unwrap();
    let mut in_active = 0;
    for i in 0..400 {
        let a = log.append_v2(&block(i)).unwrap();
        in_active = if a.location.offset() == 32 {
            1
        } else {
            in_active + 1
        };
        let active = log.end().segment();
        assert_eq!(a.location.segment(), active);
        let index = log.inner.index.read().unwrap();
        assert_eq!(index.segment(), active);
        assert_eq!(index.offsets().len(), in_active, "after block {i}");
        assert!(in_active < log.max_records_per_segment() as usize);
    }
    assert!(log.end().segment() > 20);
}

/// Asserts `got == want` without printing whole logs.
fn assert_same(got: &Contents, want: &[(BlockId, Location, Vec<u8>)], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (n, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(g == w, "{what}: record {n} differs: {:?} vs {:?}", g.1, w.1);
    }
}

#[test]
fn iter_from_ordinal_and_end_agree_with_append_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut all = small_log(dir.path(), 300);
    for round in 0..2u64 {
        let log = Log::open(dir.path(), SMALL).unwrap();
        assert_eq!(log.recovery().scanned_segments, 1);
        assert_same(&contents(&log), &all, "reopened");
        let bound = log.max_records_per_segment();
        assert_eq!(bound, (4096 - 32 - 17) / 41);
        // Ordinals count up from 0 in each segment.
        let mut expected = 0;
        for (i, (_, loc, _)) in all.iter().enumerate() {
            if i > 0 && all[i - 1].1.segment() != loc.segment() {
                expected = 0;
            }
            assert_eq!(log.ordinal(*loc), Some(expected), "{loc:?}");
            assert!(expected < bound);
            let inside = Location {
                segment: loc.segment,
                offset: loc.offset + 3,
            };
            assert_eq!(log.ordinal(inside), None);
            expected += 1;
        }
        let beyond = Location {
            segment: log.end().segment() + 1,
            offset: 32,
        };
        assert_eq!(log.ordinal(beyond), None);
        // From the start, from each record, from inside a record, from the end.
        let from = |l: Location| {
            log.reader()
                .iter_from(l)
                .map(|r| (r.id(), r.location(), r.bytes().to_vec()))
                .collect::<Contents>()
        };
        let start = Location {
            segment: 0,
            offset: 0,
        };
        assert_same(&from(start), &all, "from the start");
        for (i, (_, loc, _)) in all.iter().enumerate() {
            assert_same(&from(*loc), &all[i..], &format!("from record {i}"));
            let inside = Location {
                segment: loc.segment,
                offset: loc.offset + 1,
            };
            assert_same(&from(inside), &all[i + 1..], &format!("inside record {i}"));
        }
        let end = log.end();
        assert!(end > all.last().unwrap().1);
        assert!(from(end).is_empty());
        assert!(from(beyond).is_empty());
        assert_eq!(log.reader().iter_from(start).size_hint().1, Some(all.len()));
        assert_eq!(
            log.reader().iter_from(all[100].1).size_hint().1,
            Some(all.len() - 100)
        );
        // The next append lands at the end, or at the start of the next segment.
        let a = log.append_v2(&block(9_000 + round)).unwrap();
        assert!(
            a.location == end
                || (a.location.segment() == end.segment() + 1 && a.location.offset() == 32),
            "{a:?} vs {end:?}"
        );
        assert_eq!(from(end).len(), 1);
        assert!(log.end() > a.location);
        // An iterator is a snapshot: later appends are not visited.
        let reader = log.reader();
        let mut it = reader.iter_from(a.location);
        log.append_v2(&block(9_100 + round)).unwrap();
        assert_eq!(it.next().unwrap().location(), a.location);
        assert!(it.next().is_none());
        all = contents(&log);
    }
}

#[test]
fn a_missing_index_file_is_rebuilt_from_its_segment() {
    let dir = tempfile::tempdir().unwrap();
    let all = small_log(dir.path(), 300);
    let path = index_path(dir.path(), 3);
    let pristine = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let log = Log::open(dir.path(), SMALL).unwrap();
    assert_eq!(
        log.recovery().rebuilt_indexes,
        vec![(3, "missing".to_owned())]
    );
    assert_eq!(log.recovery().scanned_segments, 2);
    assert_lookups(&log, &all);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        pristine,
        "the same file again"
    );
    drop(log);
    let log = Log::open(dir.path(), SMALL).unwrap();
    assert_eq!(log.recovery().rebuilt_indexes, vec![]);
    assert_eq!(log.recovery().scanned_segments, 1);
}

#[test]
fn a_flipped_byte_in_an_index_file_is_detected_named_and_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let all = small_log(dir.path(), 300);
    let path = index_path(dir.path(), 2);
    let pristine = std::fs::read(&path).unwrap();
    let count = (pristine.len() - idx_format::HEADER_LEN) / 16;
    let keys = idx_format::HEADER_LEN + 4 * count;
    // Caught by the open's O(1) checks: the header, and the first and last entries of
    // section A (checked against the segment's bounds).
    let at_open = [
        (idx_format::COUNT_OFFSET, "header checksum mismatch"),
        (0, "bad magic"),
        (
            idx_format::HEADER_LEN + 2,
            "record offsets do not span the segment up to its seal",
        ),
        (
            keys - 1,
            "record offsets do not span the segment up to its seal",
        ),
    ];
    for (at, reason) in at_open {
        flip(&path, at as u64);
        let log = Log::open(dir.path(), SMALL).unwrap();
        assert_eq!(
            log.recovery().rebuilt_indexes,
            vec![(2, reason.to_owned())],
            "flip at {at}"
        );
        assert_lookups(&log, &all);
        assert_eq!(std::fs::read(&path).unwrap(), pristine, "flip at {at}");
    }
    // Inside the sections: not read by the open, caught before the segment's first lookup
    // (without the scrub here), then named and rebuilt.
    let after_open = [
        (
            idx_format::HEADER_LEN + 4 * (count / 2) + 1,
            "section A (offsets) checksum mismatch",
        ),
        (keys, "section B (keys) checksum mismatch"),
        (pristine.len() - 1, "section B (keys) checksum mismatch"),
    ];
    for (at, reason) in after_open {
        flip(&path, at as u64);
        let log = Log::open(dir.path(), NO_SCRUB).unwrap();
        assert_eq!(log.recovery().rebuilt_indexes, vec![], "flip at {at}");
        assert_eq!(log.index_health().rebuilt, vec![], "flip at {at}");
        assert_lookups(&log, &all);
        let health = log.index_health();
        assert_eq!(health.rebuilt, vec![(2, reason.to_owned())], "flip at {at}");
        assert_eq!(health.unverified, 0);
        assert_eq!(health.unusable, vec![]);
        assert_eq!(std::fs::read(&path).unwrap(), pristine, "flip at {at}");
    }
    // A valid index file of another segment (consistent, but not this segment's).
    std::fs::copy(index_path(dir.path(), 5), &path).unwrap();
    let log = Log::open(dir.path(), SMALL).unwrap();
    assert_eq!(
        log.recovery().rebuilt_indexes,
        vec![(2, "segment number does not match the file name".to_owned())]
    );
    assert_lookups(&log, &all);
    drop(log);
    // Cut short.
    let f = OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(pristine.len() as u64 - 12).unwrap();
    drop(f);
    let log = Log::open(dir.path(), SMALL).unwrap();
    assert_eq!(
        log.recovery().rebuilt_indexes,
        vec![(2, "file length does not match the record count".to_owned())]
    );
    assert_lookups(&log, &all);
}

#[test]
fn an_index_file_whose_seal_does_not_match_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let all = small_log(dir.path(), 300);
    // Swap in a consistent index file that describes another segment's layout: rewrite the
    // number in its header so only the comparison with the segment can tell.
    let other = std::fs::read(index_path(dir.path(), 6)).unwrap();
    let header = idx_format::decode_header(&other, 6).unwrap();
    let moved = idx_format::Header {
        segment: 1,
        ..header
    };
    let mut bytes = other.clone();
    bytes[..idx_format::HEADER_LEN].copy_from_slice(&idx_format::encode_header(&moved));
    std::fs::write(index_path(dir.path(), 1), &bytes).unwrap();
    let log = Log::open(dir.path(), SMALL).unwrap();
    let rebuilt = &log.recovery().rebuilt_indexes;
    assert_eq!(rebuilt.len(), 1);
    assert_eq!(rebuilt[0].0, 1);
    assert_lookups(&log, &all);
}

#[test]
fn a_flipped_frame_of_an_indexed_sealed_segment_is_never_served() {
    let dir = tempfile::tempdir().unwrap();
    let all = small_log(dir.path(), 300);
    // A body byte of one record and an id byte of another, both in sealed segment 4.
    let in_four: Vec<_> = all.iter().filter(|r| r.1.segment() == 4).collect();
    let (body_hit, id_hit) = (in_four[1], in_four[2]);
    let seg = segment_path(dir.path(), 4);
    flip(&seg, u64::from(body_hit.1.offset()) + 9 + 32 + 5);
    flip(&seg, u64::from(id_hit.1.offset()) + 9 + 3);
    let log = Log::open(dir.path(), SMALL).unwrap();
    assert_eq!(log.recovery().scanned_segments, 1, "segment 4 not scanned");
    for hit in [body_hit, id_hit] {
        assert!(log.reader().get(&hit.0).is_none(), "{:?}", hit.1);
        assert!(!log.contains(&hit.0));
        assert!(log.reader().read(hit.1).is_none());
        assert!(log.durable_mark(&hit.0).is_none());
    }
    assert!(log.stats().corrupt_reads >= 4);
    let intact: Contents = all
        .iter()
        .filter(|r| r.1 != body_hit.1 && r.1 != id_hit.1)
        .cloned()
        .collect();
    assert_same(
        &contents(&log),
        &intact,
        "iteration skips the damaged records",
    );
    for (id, loc, bytes) in &intact {
        assert_eq!(log.reader().get(id).unwrap().bytes(), &bytes[..], "{loc:?}");
    }
    // The block arrives again: stored anew (the damaged copy does not count as stored).
    let again = log.append_v2(&body_hit.2).unwrap();
    assert!(again.inserted);
    assert_eq!(
        log.reader().get(&body_hit.0).unwrap().location(),
        again.location
    );
}

#[test]
fn leftover_tmp_and_orphan_index_files_are_deleted_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let all = small_log(dir.path(), 100);
    let active = sealed_segments(&all);
    let tmp = dir.path().join("00000002.idx.tmp");
    std::fs::write(&tmp, b"half-written").unwrap();
    // An index file beside the (unsealed) active segment, and one past the last segment.
    std::fs::copy(index_path(dir.path(), 0), index_path(dir.path(), active)).unwrap();
    std::fs::copy(index_path(dir.path(), 0), index_path(dir.path(), 99)).unwrap();
    let log = Log::open(dir.path(), SMALL).unwrap();
    assert!(!tmp.exists());
    assert!(!index_path(dir.path(), active).exists());
    assert!(!index_path(dir.path(), 99).exists());
    assert_eq!(log.recovery().rebuilt_indexes, vec![]);
    assert_lookups(&log, &all);
    let names = file_names(dir.path());
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}

#[test]
fn a_log_of_the_previous_format_opens_and_gets_index_files() {
    let dir = tempfile::tempdir().unwrap();
    let all = small_log(dir.path(), 300);
    let sealed = sealed_segments(&all);
    // The previous release wrote no index files.
    let pristine: Vec<_> = (0..sealed)
        .map(|n| std::fs::read(index_path(dir.path(), n)).unwrap())
        .collect();
    for n in 0..sealed {
        std::fs::remove_file(index_path(dir.path(), n)).unwrap();
    }
    let log = Log::open(dir.path(), SMALL).unwrap();
    let expected: Vec<_> = (0..sealed).map(|n| (n, "missing".to_owned())).collect();
    assert_eq!(log.recovery().rebuilt_indexes, expected);
    assert_eq!(log.recovery().scanned_segments, sealed + 1);
    assert_lookups(&log, &all);
    for (n, bytes) in (0..sealed).zip(&pristine) {
        assert_eq!(&std::fs::read(index_path(dir.path(), n)).unwrap(), bytes);
    }
    drop(log);
    let log = Log::open(dir.path(), SMALL).unwrap();
    assert_eq!(log.recovery().scanned_segments, 1);
    assert_lookups(&log, &all);
}

#[test]
fn a_crash_between_seal_and_index_file_rebuilds_the_index_and_starts_the_next_segment() {
    let dir = tempfile::tempdir().unwrap();
    let all = small_log(dir.path(), 200);
    let active = sealed_segments(&all);
    let kept: Contents = all
        .iter()
        .filter(|r| r.1.segment() < active)
        .cloned()
        .collect();
    // As if the process died after the seal's fsync, before the index file's rename.
    std::fs::remove_file(segment_path(dir.path(), active)).unwrap();
    std::fs::remove_file(index_path(dir.path(), active - 1)).unwrap();
    std::fs::write(
        dir.path().join(format!("{:08}.idx.tmp", active - 1)),
        b"partial",
    )
    .unwrap();
    let log = Log::open(dir.path(), SMALL).unwrap();
    assert_eq!(
        log.recovery().rebuilt_indexes,
        vec![(active - 1, "missing".to_owned())]
    );
    assert_eq!(
        log.end(),
        Location {
            segment: active,
            offset: 32
        }
    );
    assert_lookups(&log, &kept);
    // The crash came after the index file, before the next segment: nothing to rebuild.
    drop(log);
    std::fs::remove_file(segment_path(dir.path(), active)).unwrap();
    let log = Log::open(dir.path(), SMALL).unwrap();
    assert_eq!(log.recovery().rebuilt_indexes, vec![]);
    assert_eq!(log.recovery().scanned_segments, 0);
    assert_lookups(&log, &kept);
}

#[test]
fn random_appends_and_reopens_keep_get_equal_to_a_model_map() {
    use rand::{Rng, SeedableRng};
    use std::collections::HashMap;
    // A short fsync interval: dropping a log waits for the syncer's pending sleep.
    let config = SMALL.with_durability(Durability::Deferred { interval_ms: 1 });
    for seed in 0..12u64 {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let dir = tempfile::tempdir().unwrap();
        let mut log = Log::open(dir.path(), config).unwrap();
        let mut model: HashMap<BlockId, (Location, Vec<u8>)> = HashMap::new();
        for _ in 0..400 {
            match rng.gen_range(0..100) {
                0..=79 => {
                    let n = rng.gen_range(0..500u64);
                    let (id, a) = if n % 4 == 0 {
                        let mut id = [0u8; 36];
                        id[..32].copy_from_slice(v2(&block(n)).as_bytes());
                        id[32..].copy_from_slice(&(n as u32).to_le_bytes());
                        (BlockId::V3(id), log.append_v3(id, &block(n)).unwrap())
                    } else {
                        (v2(&block(n)), log.append_v2(&block(n)).unwrap())
                    };
                    let known = model.get(&id).map(|m| m.0);
                    assert_eq!(a.inserted, known.is_none(), "seed {seed}");
                    if let Some(at) = known {
                        assert_eq!(a.location, at);
                    }
                    model.entry(id).or_insert((a.location, block(n)));
                }
                80..=91 => {
                    drop(log);
                    if rng.gen_bool(0.3) {
                        // Lose a random index file now and then.
                        let n = rng.gen_range(0..40);
                        let _ = std::fs::remove_file(index_path(dir.path(), n));
                    }
                    log = Log::open(dir.path(), config).unwrap();
                    assert_eq!(log.recovery().truncated_at, None);
                }
                _ => {
                    let n = rng.gen_range(0..600u64);
                    let id = v2(&block(n));
                    assert_eq!(
                        log.reader()
                            .get(&id)
                            .map(|r| (r.location(), r.bytes().to_vec())),
                        model.get(&id).cloned(),
                        "seed {seed}, block {n}"
                    );
                }
            }
            assert_eq!(log.len(), model.len() as u64);
        }
        for (id, (loc, bytes)) in &model {
            let reader = log.reader();
            let r = reader.get(id).unwrap();
            assert_eq!((r.location(), r.bytes()), (*loc, &bytes[..]), "seed {seed}");
        }
        let mut locations: Vec<_> = model.values().map(|m| m.0).collect();
        locations.sort();
        let iterated: Vec<_> = log.reader().iter().map(|r| r.location()).collect();
        assert_eq!(iterated, locations, "seed {seed}");
    }
}

/// Byte offset in `NNNNNNNN.idx` of the section B entry that points at `ordinal`, and the
/// record count.
fn key_entry_of(idx: &[u8], ordinal: u32) -> usize {
    let count = (idx.len() - idx_format::HEADER_LEN) / 16;
    let keys = idx_format::HEADER_LEN + 4 * count;
    (0..count)
        .map(|i| keys + 12 * i)
        .find(|&at| idx_format::key_entry(&idx[at..]).unwrap().1 == ordinal)
        .unwrap()
}

/// Waits (10 s at most) until the scrub went through every sealed segment.
fn scrubbed(log: &Log) -> IndexHealth {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let health = log.index_health();
        if health.scrub_done {
            return health;
        }
        assert!(Instant::now() < deadline, "scrub not done: {health:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn open_reads_no_index_section_and_a_lookup_verifies_only_its_segment() {
    let dir = tempfile::tempdir().unwrap();
    let all = small_log(dir.path(), 600);
    let sealed = sealed_segments(&all);
    assert!(sealed >= 24);
    // Damage inside section B of segment 3: an open that read the sections would rebuild it.
    let idx = std::fs::read(index_path(dir.path(), 3)).unwrap();
    flip(&index_path(dir.path(), 3), key_entry_of(&idx, 0) as u64 + 2);
    let log = Log::open(dir.path(), NO_SCRUB).unwrap();
    let recovery = log.recovery();
    assert_eq!(recovery.unverified_indexes, sealed);
    assert_eq!(recovery.rebuilt_indexes, vec![]);
    assert_eq!(recovery.scanned_segments, 1);
    let health = log.index_health();
    assert_eq!((health.verified, health.unverified), (0, sealed));
    assert!(!health.scrub_done, "no scrub");
    // The active segment's records need no index file.
    let last = all.last().unwrap();
    assert_eq!(log.reader().get(&last.0).unwrap().bytes(), &last.2[..]);
    assert_eq!(log.index_health().verified, 0);
    // A read in segment 5 verifies segment 5 only.
    let in_five = all.iter().find(|r| r.1.segment() == 5).unwrap();
    assert_eq!(
        log.reader().read(in_five.1).unwrap().bytes(),
        &in_five.2[..]
    );
    assert_eq!(log.ordinal(in_five.1), Some(0));
    let health = log.index_health();
    assert_eq!((health.verified, health.unverified), (1, sealed - 1));
    // Everything, then: each index verified once, the damaged one rebuilt.
    assert_lookups(&log, &all);
    let health = log.index_health();
    assert_eq!((health.verified, health.unverified), (sealed, 0));
    assert_eq!(
        health.rebuilt,
        vec![(3, "section B (keys) checksum mismatch".to_owned())]
    );
    assert_eq!(std::fs::read(index_path(dir.path(), 3)).unwrap(), idx);
}

#[test]
fn a_lookup_in_a_damaged_unverified_segment_gets_the_right_record_after_a_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let all = small_log(dir.path(), 300);
    let path = index_path(dir.path(), 2);
    let pristine = std::fs::read(&path).unwrap();
    let in_two: Vec<_> = all.iter().filter(|r| r.1.segment() == 2).collect();
    let target = in_two[in_two.len() / 2];
    let ordinal = (in_two.len() / 2) as u32;
    // The top byte of the target's key: in this file, a binary search would miss it.
    flip(&path, key_entry_of(&pristine, ordinal) as u64 + 7);
    let log = Log::open(dir.path(), NO_SCRUB).unwrap();
    assert_eq!(log.recovery().rebuilt_indexes, vec![]);
    let reader = log.reader();
    let got = reader
        .get(&target.0)
        .expect("found through the rebuilt index");
    assert_eq!((got.location(), got.bytes()), (target.1, &target.2[..]));
    let health = log.index_health();
    assert_eq!(
        health.rebuilt,
        vec![(2, "section B (keys) checksum mismatch".to_owned())]
    );
    assert_eq!(health.unusable, vec![]);
    assert_eq!(std::fs::read(&path).unwrap(), pristine, "written anew");
    assert!(log.contains(&target.0));
    assert_eq!(log.ordinal(target.1), Some(ordinal));
    assert!(
        !log.append_v2(&target.2).unwrap().inserted,
        "not stored twice"
    );
    assert_lookups(&log, &all);
    assert_eq!(log.index_health().rebuilt.len(), 1, "rebuilt once");
    drop(log);
    let log = Log::open(dir.path(), NO_SCRUB).unwrap();
    assert_lookups(&log, &all);
    let health = log.index_health();
    assert_eq!((health.rebuilt, health.unverified), (vec![], 0));
}

#[test]
fn the_scrub_verifies_every_index_file_and_rebuilds_damaged_ones_without_lookups() {
    let dir = tempfile::tempdir().unwrap();
    let all = small_log(dir.path(), 600);
    let sealed = sealed_segments(&all);
    let damaged = [
        (4, "section A (offsets) checksum mismatch"),
        (1, "section B (keys) checksum mismatch"),
    ];
    let mut pristine = Vec::new();
    for (n, _) in damaged {
        let path = index_path(dir.path(), n);
        let bytes = std::fs::read(&path).unwrap();
        let at = if n == 4 {
            idx_format::HEADER_LEN + 4 * 3 + 1
        } else {
            bytes.len() - 5
        };
        flip(&path, at as u64);
        pristine.push((path, bytes));
    }
    let log = Log::open(dir.path(), SMALL).unwrap();
    assert_eq!(log.recovery().rebuilt_indexes, vec![]);
    let health = scrubbed(&log);
    assert_eq!((health.verified, health.unverified), (sealed, 0));
    // Newest first.
    let expected: Vec<_> = damaged.iter().map(|(n, r)| (*n, (*r).to_owned())).collect();
    assert_eq!(health.rebuilt, expected);
    for (path, bytes) in &pristine {
        assert_eq!(&std::fs::read(path).unwrap(), bytes, "{}", path.display());
    }
    assert_lookups(&log, &all);
    assert_eq!(
        log.index_health(),
        health,
        "lookups found nothing left to do"
    );
}

#[test]
fn lookups_racing_the_scrub_rebuild_a_damaged_index_once() {
    let dir = tempfile::tempdir().unwrap();
    let all = small_log(dir.path(), 600);
    // Damage segment 0, the scrub's last: the lookups likely get there first.
    let path = index_path(dir.path(), 0);
    let len = std::fs::metadata(&path).unwrap().len();
    flip(&path, len - 3);
    for _ in 0..5 {
        let log = Log::open(dir.path(), SMALL).unwrap();
        std::thread::scope(|s| {
            for t in 0..4 {
                let (log, all) = (&log, &all);
                s.spawn(move || {
                    for (id, loc, bytes) in all.iter().skip(t).step_by(4) {
                        let reader = log.reader();
                        let r = reader.get(id).unwrap_or_else(|| panic!("{loc:?}"));
                        assert_eq!((r.location(), r.bytes()), (*loc, &bytes[..]));
                    }
                });
            }
        });
        let health = scrubbed(&log);
        assert_eq!(health.rebuilt.len(), 1, "{health:?}");
        assert_eq!(health.unusable, vec![]);
        drop(log);
        flip(&path, len - 3);
    }
}

#[test]
fn a_damaged_index_of_a_damaged_segment_serves_nothing_of_it_and_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let all = small_log(dir.path(), 300);
    let in_three: Vec<_> = all.iter().filter(|r| r.1.segment() == 3).cloned().collect();
    let idx = index_path(dir.path(), 3);
    let pristine = std::fs::read(&idx).unwrap();
    flip(&idx, pristine.len() as u64 - 1);
    // A body byte of one record of segment 3: its scan fails.
    flip(
        &segment_path(dir.path(), 3),
        u64::from(in_three[1].1.offset()) + 9 + 32 + 2,
    );
    let log = Log::open(dir.path(), NO_SCRUB).unwrap();
    assert_eq!(log.recovery().rebuilt_indexes, vec![]);
    for (id, loc, _) in &in_three {
        assert!(log.reader().get(id).is_none(), "{loc:?}");
        assert!(log.reader().read(*loc).is_none());
        assert_eq!(log.ordinal(*loc), None);
    }
    let health = log.index_health();
    assert_eq!(health.rebuilt, vec![]);
    assert_eq!(health.unusable.len(), 1);
    assert_eq!(health.unusable[0].0, 3);
    assert!(
        health.unusable[0]
            .1
            .starts_with("section B (keys) checksum mismatch"),
        "{:?}",
        health.unusable
    );
    assert_eq!(
        std::fs::read(&idx).unwrap()[..],
        {
            let mut b = pristine.clone();
            *b.last_mut().unwrap() ^= 0x10;
            b
        }[..],
        "left as it was"
    );
    let others: Contents = all.iter().filter(|r| r.1.segment() != 3).cloned().collect();
    assert_same(&contents(&log), &others, "iteration skips segment 3");
    for (id, loc, bytes) in &others {
        assert_eq!(log.reader().get(id).unwrap().bytes(), &bytes[..], "{loc:?}");
    }
    // A block of segment 3 arrives again: stored anew in the active segment.
    let again = log.append_v2(&in_three[0].2).unwrap();
    assert!(again.inserted);
    assert_eq!(
        log.reader().get(&in_three[0].0).unwrap().location(),
        again.location
    );
}
