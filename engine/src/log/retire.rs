//! Retiring the oldest segments: how pruning gives disk back (engine/FORMAT.md, "Retired
//! segments").
//!
//! [`Log::retire_below`] moves the log's first segment forward. The new first segment number
//! is written to `RETIRED` (temporary name, fsync, rename, directory fsync) before anything
//! else, so a crash leaves either the old first segment or the new one, never a log with a
//! hole. From then on no lookup, read or iteration reaches a retired segment, and its files
//! are deleted. A [`Reader`] made before the retirement keeps the segment mapped (records it
//! handed out stay valid, and the deleted files' blocks stay allocated) until the last such
//! reader or [`RecordBytes`] is dropped. Files a crash left behind are deleted by the next
//! open.

use std::sync::atomic::Ordering;

use super::*;

/// The file holding the first segment that is not retired.
pub(super) const RETIRED_FILE: &str = "RETIRED";
const MAGIC: [u8; 8] = *b"\x89LRETD\r\n";
/// Magic, first segment (u32 LE), CRC-32 of both (u32 LE).
const LEN: usize = 16;

/// What [`Log::retire_below`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Retired {
    /// Segments retired by this call.
    pub segments: u32,
    /// Their records.
    pub records: u64,
    /// Their bytes (up to each segment's seal: what the files held).
    pub bytes: u64,
}

fn encode(first: u32) -> [u8; LEN] {
    let mut out = [0u8; LEN];
    out[..8].copy_from_slice(&MAGIC);
    out[8..12].copy_from_slice(&first.to_le_bytes());
    let crc = crc32fast::hash(&out[..12]);
    out[12..].copy_from_slice(&crc.to_le_bytes());
    out
}

/// The first segment that is not retired, from `dir/RETIRED` (0 when the file is missing).
///
/// # Errors
/// I/O failures, or a damaged file ([`LogError::Corrupted`] naming it: the log is not opened,
/// because guessing could serve retired segments or skip live ones).
pub(super) fn read_first(dir: &Path) -> Result<u32, LogError> {
    let path = dir.join(RETIRED_FILE);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(LogError::io("read", &path, e)),
    };
    let first = bytes
        .get(8..12)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map(u32::from_le_bytes);
    match first {
        Some(first) if bytes.len() == LEN && bytes == encode(first) => Ok(first),
        _ => Err(LogError::Damaged {
            path,
            why: "not a valid retired-segments file (magic, length or checksum); restore it \
                  from a backup, or delete the data directory and start from a snapshot"
                .into(),
        }),
    }
}

/// Writes `dir/RETIRED` crash-safely.
fn write_first(dir: &Path, first: u32) -> Result<(), LogError> {
    let path = dir.join(RETIRED_FILE);
    let tmp = dir.join(format!("{RETIRED_FILE}.tmp"));
    let mut f = fs::File::create(&tmp).map_err(|e| LogError::io("create", &tmp, e))?;
    std::io::Write::write_all(&mut f, &encode(first))
        .and_then(|()| f.sync_all())
        .map_err(|e| LogError::io("write", &tmp, e))?;
    fs::rename(&tmp, &path).map_err(|e| LogError::io("rename", &tmp, e))?;
    segment::sync_dir(dir)
}

/// Deletes the segment and index files of segments below `first` (at open, before anything
/// is mapped), and a leftover `RETIRED.tmp`.
pub(super) fn delete_retired(dir: &Path, segments: &[u32], first: u32) -> Result<u32, LogError> {
    let remove = |path: PathBuf| match fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(LogError::io("remove", &path, e)),
    };
    let mut deleted = 0;
    for &n in segments.iter().filter(|&&n| n < first) {
        remove(dir.join(SealedIndex::file_name(n)))?;
        remove(dir.join(Segment::file_name(n)))?;
        deleted += 1;
    }
    remove(dir.join(format!("{RETIRED_FILE}.tmp")))?;
    Ok(deleted)
}

impl Log {
    /// The first segment that is not retired: records of lower segments are gone.
    pub fn first_segment(&self) -> u32 {
        self.inner.first.load(Ordering::Acquire)
    }

    /// The segment of the active (unsealed) segment: only segments below it can be retired.
    pub fn active_segment(&self) -> u32 {
        lock(&self.inner.writer).segment
    }

    /// Retires every segment below `first` (at most up to the active one, which is never
    /// retired): persisted first, then no longer served, then their files deleted. A reader
    /// made before keeps a retired segment mapped (and its deleted file's blocks allocated)
    /// until it is dropped; the last one unmaps it. Returns what was retired (nothing when
    /// `first` is not past the first segment).
    ///
    /// # Errors
    /// The `RETIRED` file could not be written: nothing was retired.
    pub fn retire_below(&self, first: u32) -> Result<Retired, LogError> {
        let inner = &*self.inner;
        // One retirement at a time: `RETIRED` only ever moves forward.
        let _retiring = lock(&inner.retiring);
        // Never the active segment; segments only get added, so this stays below it. The
        // writer lock is not held while `RETIRED` is made durable: appends go on meanwhile.
        let first = first.min(lock(&inner.writer).segment);
        let old = inner.first.load(Ordering::Acquire);
        if first <= old {
            return Ok(Retired::default());
        }
        write_first(&inner.dir, first)?;
        let w = lock(&inner.writer);
        inner.first.store(first, Ordering::Release);
        let removed = inner.segments.remove_below(first);
        let mut retired = Retired::default();
        for seg in &removed {
            // Never written again: its descriptor goes now (readers keep the map).
            seg.close_file();
            retired.segments += 1;
            retired.records += seg.installed_index().map_or(0, |s| u64::from(s.count()));
            retired.bytes += seg
                .installed_index()
                .map_or(0, |s| u64::from(s.seal_offset()));
        }
        inner
            .index
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .forget_sealed(retired.records);
        drop(w);
        // `RETIRED` is durable: a crash before or during the deletions leaves files that the
        // next open deletes.
        for seg in &removed {
            for path in [
                inner.dir.join(SealedIndex::file_name(seg.number)),
                seg.path.clone(),
            ] {
                if let Err(e) = fs::remove_file(&path) {
                    tracing::warn!(file = %path.display(), error = %e, "cannot delete a retired file: the next start deletes it");
                }
            }
        }
        Ok(retired)
    }
}

#[cfg(test)]
mod tests {
    use super::super::segment::Segment;
    use super::super::tests::{block, contents, index_path, segment_path, v2, FAST};
    use super::*;

    /// A log of several sealed segments; returns it with every record's bytes in order.
    fn filled(dir: &Path) -> (Log, Vec<Vec<u8>>) {
        let log = Log::open(dir, FAST.with_segment_size(64 << 10)).unwrap();
        let blocks: Vec<Vec<u8>> = (0..2_000).map(block).collect();
        for b in &blocks {
            log.append_v2(b).unwrap();
        }
        log.sync().unwrap();
        assert!(log.active_segment() >= 4, "{}", log.active_segment());
        (log, blocks)
    }

    /// Lines of this process's memory map that map `path`.
    fn mappings_of(path: &Path) -> usize {
        let maps = fs::read_to_string("/proc/self/maps").unwrap();
        let path = path.to_str().unwrap();
        maps.lines().filter(|l| l.contains(path)).count()
    }

    /// This process's open descriptors on `path`.
    fn descriptors_of(path: &Path) -> usize {
        fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| fs::read_link(e.ok()?.path()).ok())
            .filter(|target| target.to_string_lossy().contains(path.to_str().unwrap()))
            .count()
    }

    #[test]
    fn retired_segments_are_deleted_at_once_and_unmapped_when_their_last_reader_goes() {
        let dir = tempfile::tempdir().unwrap();
        let (log, blocks) = filled(dir.path());
        let before = contents(&log);
        let in_seg = |n: u32| before.iter().filter(move |(_, l, _)| l.segment == n);
        let kept: Vec<_> = before
            .iter()
            .filter(|(_, l, _)| l.segment >= 3)
            .cloned()
            .collect();
        let gone: Vec<_> = before
            .iter()
            .filter(|(_, l, _)| l.segment < 3)
            .cloned()
            .collect();
        let used = crate::disk_usage(dir.path()).unwrap();
        // Read before the retirement, held across it.
        let (old_id, _, old_bytes) = &gone[0];
        let held = log.reader();
        let held_record = held.get(old_id).unwrap();
        let held_bytes = log.get_bytes(old_id).unwrap();
        assert!((0..3).all(|n| mappings_of(&segment_path(dir.path(), n)) > 0));

        let r = log.retire_below(3).unwrap();
        assert_eq!(r.segments, 3);
        assert_eq!(r.records, gone.len() as u64);
        assert_eq!(log.first_segment(), 3);
        assert_eq!(log.len(), kept.len() as u64);
        assert_eq!(log.stats().records, kept.len() as u64);
        assert_eq!(
            contents(&log),
            kept,
            "iteration starts at the first segment"
        );
        for n in 0..3 {
            let (seg, idx) = (segment_path(dir.path(), n), index_path(dir.path(), n));
            assert!(
                !seg.exists() && !idx.exists(),
                "segment {n}'s files deleted"
            );
            assert_eq!(descriptors_of(&seg), 0, "segment {n}'s descriptor closed");
        }
        // What was read before stays readable (its segment still mapped), though the
        // record is no longer served.
        assert_eq!(held_record.bytes(), &old_bytes[..]);
        assert_eq!(&*held_bytes, &old_bytes[..]);
        assert!(held.get(old_id).is_none());
        assert!(mappings_of(&segment_path(dir.path(), 0)) > 0);
        drop(held);
        assert!(mappings_of(&segment_path(dir.path(), 0)) > 0, "held bytes");
        drop(held_bytes);
        for n in 0..3 {
            assert_eq!(
                mappings_of(&segment_path(dir.path(), n)),
                0,
                "segment {n} unmapped by the last holder"
            );
        }
        for (id, loc, _) in &gone {
            assert!(log.reader().get(id).is_none() && log.reader().read(*loc).is_none());
            assert!(!log.contains(id));
        }
        for (id, loc, bytes) in &kept {
            assert_eq!(log.reader().get(id).unwrap().bytes(), &bytes[..]);
            assert_eq!(log.reader().read(*loc).unwrap().bytes(), &bytes[..]);
        }
        let from_retired = Location {
            segment: 1,
            offset: 0,
        };
        assert_eq!(log.reader().iter_from(from_retired).count(), kept.len());
        assert_eq!(
            in_seg(3).count(),
            log.reader()
                .iter_from(Location {
                    segment: 3,
                    offset: 0
                })
                .take_while(|r| r.location().segment == 3)
                .count()
        );
        // Retiring again, or below the first segment, does nothing.
        assert_eq!(log.retire_below(2).unwrap(), Retired::default());
        // The active segment is never retired.
        let active = log.active_segment();
        let r = log.retire_below(u32::MAX).unwrap();
        assert_eq!(log.first_segment(), active);
        assert_eq!(r.segments, active - 3);
        let after_all = contents(&log);
        assert!(after_all.iter().all(|(_, l, _)| l.segment == active));

        // The disk space is back, and no retired segment is mapped.
        assert!(crate::disk_usage(dir.path()).unwrap() <= used / 2);
        for n in 0..active {
            assert_eq!(mappings_of(&segment_path(dir.path(), n)), 0, "segment {n}");
            assert_eq!(mappings_of(&index_path(dir.path(), n)), 0, "index {n}");
        }
        // Appends go on; a reopen serves the same records.
        let extra = block(99_999);
        log.append_v2(&extra).unwrap();
        log.sync().unwrap();
        let expected = contents(&log);
        drop(log);
        let log = Log::open(dir.path(), FAST.with_segment_size(64 << 10)).unwrap();
        for n in 0..active {
            assert!(!segment_path(dir.path(), n).exists(), "segment {n} deleted");
            assert!(!index_path(dir.path(), n).exists(), "index {n} deleted");
        }
        assert_eq!(log.first_segment(), active);
        assert_eq!(contents(&log), expected);
        assert_eq!(log.len(), expected.len() as u64);
        assert!(log.reader().get(&v2(&blocks[0])).is_none());
        assert_eq!(log.reader().get(&v2(&extra)).unwrap().bytes(), &extra[..]);
        // New appends after the reopen land in later segments as before.
        for i in 0..2_000 {
            log.append_v2(&block(200_000 + i)).unwrap();
        }
        assert!(log.active_segment() > active);
    }

    #[test]
    fn a_damaged_marker_or_a_missing_first_segment_refuses_the_open() {
        let dir = tempfile::tempdir().unwrap();
        let (log, _) = filled(dir.path());
        log.retire_below(2).unwrap();
        drop(log);
        let path = dir.path().join(RETIRED_FILE);
        let good = fs::read(&path).unwrap();
        let mut bad = good.clone();
        bad[9] ^= 1;
        fs::write(&path, &bad).unwrap();
        let err = Log::open(dir.path(), FAST).unwrap_err().to_string();
        assert!(err.contains("RETIRED") && err.contains("damaged"), "{err}");
        fs::write(&path, &good).unwrap();
        // Segments 0 and 1 are deleted; take segment 2 away too.
        drop(Log::open(dir.path(), FAST).unwrap());
        fs::remove_file(segment_path(dir.path(), 2)).unwrap();
        let err = Log::open(dir.path(), FAST).unwrap_err().to_string();
        assert!(err.contains("segment 2 is missing"), "{err}");
    }

    #[test]
    fn the_marker_round_trips_and_a_flipped_byte_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_first(dir.path()).unwrap(), 0);
        write_first(dir.path(), 7).unwrap();
        assert_eq!(read_first(dir.path()).unwrap(), 7);
        let path = dir.path().join(RETIRED_FILE);
        for i in 0..LEN {
            let mut bytes = encode(7).to_vec();
            bytes[i] ^= 0x10;
            fs::write(&path, &bytes).unwrap();
            let err = read_first(dir.path()).unwrap_err().to_string();
            assert!(err.contains("RETIRED"), "{err}");
        }
        fs::write(&path, &encode(7)[..LEN - 1]).unwrap();
        assert!(read_first(dir.path()).is_err());
    }

    #[test]
    fn segment_numbers_count_from_the_first_kept_one_so_retired_numbers_are_not_held() {
        // A log whose first kept segment is numbered beyond what one table holds from 0: a
        // long-running pruning node gets there by retiring segments.
        let dir = tempfile::tempdir().unwrap();
        // (The table used to hold 65 536 segments counted from 0.)
        let first = 65_546;
        drop(Segment::create(dir.path(), first, 4096).unwrap());
        write_first(dir.path(), first).unwrap();
        let config = FAST.with_segment_size(4096);
        let log = Log::open(dir.path(), config).unwrap();
        let blocks: Vec<Vec<u8>> = (0..200).map(block).collect();
        for b in &blocks {
            log.append_v2(b).unwrap();
        }
        log.sync().unwrap();
        assert!(log.active_segment() > first + 2, "{}", log.active_segment());
        let before = contents(&log);
        assert_eq!(before.len(), blocks.len());
        drop(log);
        let log = Log::open(dir.path(), config).unwrap();
        assert_eq!(log.first_segment(), first);
        assert_eq!(contents(&log), before);
    }
}
