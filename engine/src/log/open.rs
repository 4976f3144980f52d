//! Opening a log: the directory lock, the O(1) checks of the sealed segments' index files, the
//! scan of the active segment (and of sealed ones without a usable index file) and the
//! recovery rules (torn tail truncated, corruption refused; `engine/FORMAT.md`).

use super::*;

/// Takes the exclusive lock on `dir/LOCK` (created if missing), or [`LogError::Locked`].
pub(super) fn lock_dir(dir: &Path) -> Result<fs::File, LogError> {
    let path = dir.join("LOCK");
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| LogError::io("open", &path, e))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(fs::TryLockError::WouldBlock) => Err(LogError::Locked { path }),
        Err(fs::TryLockError::Error(e)) => Err(LogError::io("lock", &path, e)),
    }
}

/// Largest body a segment of `size` bytes can hold, for the longest id.
pub(super) fn max_body(size: u32) -> usize {
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    size.saturating_sub(HEADER_LEN + FRAME_HEADER_LEN + 36 + SEAL_FRAME_LEN)
}

/// An upper bound on the records a segment of `size` bytes holds: its room for frames
/// divided by the smallest frame (a v2 record with an empty body).
pub(super) fn max_records_per_segment(size: u32) -> u32 {
    let room = size.saturating_sub((HEADER_LEN + SEAL_FRAME_LEN) as u32);
    room / (FRAME_HEADER_LEN + 32) as u32
}

/// How a segment's records end.
#[derive(Clone, Copy)]
pub(super) enum Tail {
    /// A valid seal record at this offset.
    Sealed(u32),
    /// Zero bytes (or no room for a frame) at this offset.
    End(usize),
    /// Bytes that are not an intact frame at this offset.
    Torn(usize, &'static str),
}

pub(super) fn corrupted(segment: u32, offset: usize, reason: impl Into<String>) -> LogError {
    LogError::Corrupted {
        segment,
        offset: u64::try_from(offset).unwrap_or(u64::MAX),
        reason: reason.into(),
    }
}

/// Reads the frame offsets of `seg` into `offsets`, verifying every checksum; returns how
/// they end and how many there were.
pub(super) fn scan_segment(seg: &Segment, offsets: &mut Vec<u32>) -> Result<(Tail, u32), LogError> {
    let bytes = seg.bytes();
    let mut at = HEADER_LEN;
    let mut count: u32 = 0;
    loop {
        let frame = match format::scan_frame(bytes, at) {
            Scan::Frame(f) => f,
            Scan::End => return Ok((Tail::End(at), count)),
            Scan::Invalid(why) => return Ok((Tail::Torn(at, why), count)),
            Scan::Unsupported(kind) => {
                return Err(LogError::UnsupportedRecord {
                    segment: seg.number,
                    offset: u64::try_from(at).unwrap_or(u64::MAX),
                    kind,
                })
            }
        };
        let offset = u32::try_from(at).map_err(|_| corrupted(seg.number, at, "offset"))?;
        if frame.kind == KIND_SEAL {
            let body = bytes.get(frame.body_start..frame.end).unwrap_or_default();
            let sealed_count = format::u32_at(body, 0);
            let sealed_at = format::u32_at(body, 4);
            if body.len() != format::SEAL_BODY_LEN
                || sealed_count != Some(count)
                || sealed_at != Some(offset)
            {
                return Err(corrupted(seg.number, at, "seal does not match the segment"));
            }
            return Ok((Tail::Sealed(offset), count));
        }
        offsets.push(offset);
        count = count
            .checked_add(1)
            .ok_or_else(|| corrupted(seg.number, at, "count"))?;
        at = frame.end;
    }
}

/// The segment and index files of a log directory.
struct Listing {
    /// Segment numbers, sorted.
    segments: Vec<u32>,
    /// Numbers of the index files present, sorted.
    indexes: Vec<u32>,
}

/// Lists the directory, deleting what an interrupted creation left (`*.seg.tmp`,
/// `*.idx.tmp`).
fn list_dir(dir: &Path) -> Result<Listing, LogError> {
    let mut listing = Listing {
        segments: Vec::new(),
        indexes: Vec::new(),
    };
    for entry in fs::read_dir(dir).map_err(|e| LogError::io("list", dir, e))? {
        let entry = entry.map_err(|e| LogError::io("list", dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(n) = Segment::parse_name(name) {
            listing.segments.push(n);
        } else if let Some(n) = SealedIndex::parse_name(name) {
            listing.indexes.push(n);
        } else if name.ends_with(".seg.tmp") || name.ends_with(".idx.tmp") {
            // A segment or index file whose creation did not finish: never in use.
            let path = entry.path();
            fs::remove_file(&path).map_err(|e| LogError::io("remove", &path, e))?;
        }
    }
    listing.segments.sort_unstable();
    listing.indexes.sort_unstable();
    Ok(listing)
}

/// Deletes the files of segments retired below `first` (`retire.rs`) and checks that the
/// remaining segment numbers are contiguous from `first`.
fn drop_retired(dir: &Path, listing: &mut Listing, first: u32) -> Result<(), LogError> {
    let deleted = retire::delete_retired(dir, &listing.segments, first)?;
    if deleted > 0 {
        tracing::info!(
            dir = %dir.display(),
            segments = deleted,
            first,
            "deleted retired segments"
        );
    }
    listing.segments.retain(|&n| n >= first);
    for &n in listing.indexes.iter().filter(|&&n| n < first) {
        remove_index(dir, n)?;
    }
    listing.indexes.retain(|&n| n >= first);
    if first > 0 && listing.segments.first() != Some(&first) {
        return Err(corrupted(
            first,
            0,
            format!(
                "segment {first} is missing: {} says the segments below it are retired, so it \
                 must exist",
                dir.join(retire::RETIRED_FILE).display()
            ),
        ));
    }
    for (expected, &n) in (first..).zip(&listing.segments) {
        if expected != n {
            return Err(corrupted(n, 0, format!("segment {expected} is missing")));
        }
    }
    Ok(())
}

/// Deletes the index file of segment `n` (one without a sealed segment to describe).
fn remove_index(dir: &Path, n: u32) -> Result<(), LogError> {
    let path = dir.join(SealedIndex::file_name(n));
    match fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(LogError::io("remove", &path, e)),
    }
}

/// The active segment found by the open: its writer and its records' offsets.
struct Active {
    writer: Writer,
    offsets: Vec<u32>,
}

impl Log {
    /// Opens the log in `dir`, creating it if needed, and recovers it.
    ///
    /// A sealed segment whose index file passes the O(1) checks (header, lengths, seal, first
    /// and last record bounds) is not scanned (its frames are verified when read), and the
    /// index file's sections are not read: they are verified after the open, by the
    /// `log-idx-scrub` thread or by the first lookup in the segment, and a damaged file is
    /// rebuilt then ([`Log::index_health`]). The active (last) segment, and any sealed segment
    /// whose index file is missing or fails those checks, is scanned and every frame's
    /// checksum verified; such a sealed segment must be intact and gets its index file written
    /// anew. In the active segment, the first bytes that are not an intact frame and everything
    /// after them are a torn tail and are cut off. [`Log::recovery`] reports what was scanned,
    /// rebuilt and cut.
    ///
    /// # Errors
    /// I/O errors, [`LogError::Corrupted`] for damage outside the active segment's tail,
    /// [`LogError::UnsupportedRecord`] for records of a newer format, [`LogError::Config`].
    pub fn open(dir: impl AsRef<Path>, config: LogConfig) -> Result<Self, LogError> {
        let dir = dir.as_ref().to_path_buf();
        if config.segment_size < format::MIN_SEGMENT_SIZE {
            return Err(LogError::Config("segment size below 4096 bytes"));
        }
        fs::create_dir_all(&dir).map_err(|e| LogError::io("create directory", &dir, e))?;
        let lock = lock_dir(&dir)?;
        let first = retire::read_first(&dir)?;
        let mut listing = list_dir(&dir)?;
        drop_retired(&dir, &mut listing, first)?;
        let numbers = &listing.segments;
        let last = numbers.last().copied();
        // Index files of segments that do not exist (left by deleted segments) could be
        // taken for a later segment of the same number.
        for &n in &listing.indexes {
            if last.is_none_or(|l| n > l) {
                remove_index(&dir, n)?;
            }
        }

        // Numbered from the first segment kept: retired numbers are not held.
        let segments = SegmentTable::new(first);
        let mut recovery = Recovery::default();
        let mut sealed_records = 0u64;
        let mut largest_size = config.segment_size;
        let mut active: Option<Active> = None;
        for &n in numbers {
            let seg = Segment::open(&dir, n)?;
            let size = format::decode_header(seg.bytes(), n).map_err(|r| corrupted(n, 0, r))?;
            largest_size = largest_size.max(size);
            let is_last = Some(n) == last;
            let file_len = seg.bytes().len();
            if !is_last && u64::try_from(file_len).ok() != Some(u64::from(size)) {
                return Err(corrupted(
                    n,
                    file_len,
                    "file length differs from the header",
                ));
            }
            let has_index = listing.indexes.binary_search(&n).is_ok();
            // The active segment has no index file: it is scanned without a word.
            let index_problem = if is_last && !has_index {
                "missing".to_owned()
            } else {
                match SealedIndex::open(&dir, &seg, size) {
                    Ok(sealed) => {
                        // A sealed segment whose index file passed the O(1) checks: not
                        // scanned; the index's sections are verified before first use.
                        sealed_records = sealed_records.saturating_add(u64::from(sealed.count()));
                        recovery.unverified_indexes = recovery.unverified_indexes.saturating_add(1);
                        seg.install_index(sealed, false);
                        segments.install(seg)?;
                        continue;
                    }
                    Err(why) => why,
                }
            };
            let mut offsets = Vec::new();
            let (tail, count) = scan_segment(&seg, &mut offsets)?;
            recovery.scanned_segments = recovery.scanned_segments.saturating_add(1);
            let end = match (tail, is_last) {
                (Tail::Sealed(seal_at), _) => {
                    let why = index_problem;
                    let path = dir.join(SealedIndex::file_name(n));
                    tracing::warn!(
                        file = %path.display(),
                        reason = %why,
                        "index file of a sealed segment unusable: segment scanned, index rebuilt"
                    );
                    recovery.rebuilt_indexes.push((n, why));
                    let sealed = SealedIndex::write(&dir, &seg, &offsets, seal_at, size)?;
                    sealed_records = sealed_records.saturating_add(u64::from(count));
                    seg.install_index(sealed, true);
                    segments.install(seg)?;
                    continue;
                }
                (Tail::End(at), false) => return Err(corrupted(n, at, "segment is not sealed")),
                (Tail::Torn(at, why), false) => return Err(corrupted(n, at, why)),
                (Tail::End(at) | Tail::Torn(at, _), true) => {
                    // Only a torn tail may be cut: damage with intact records after it is
                    // corruption, and the start stops with every file as it was.
                    if let Some(next) = format::intact_frame_after(seg.allocated(at), at) {
                        return Err(corrupted(
                            n,
                            at,
                            format!(
                                "damaged data followed by an intact record at offset {next}: \
                                 not a torn tail, so nothing was changed (to keep what is \
                                 intact: `ledger-node tools salvage`, see engine/FORMAT.md)"
                            ),
                        ));
                    }
                    if let Tail::Torn(_, why) = tail {
                        tracing::warn!(
                            segment = n,
                            offset = at,
                            reason = why,
                            "truncating torn tail (the last record was cut short)"
                        );
                        recovery.truncated_at = Some(Location {
                            segment: n,
                            offset: u32::try_from(at).unwrap_or(u32::MAX),
                        });
                        recovery.truncated_reason = Some(why);
                    }
                    at
                }
            };
            // An index file beside the unsealed active segment describes no segment of this
            // log.
            if has_index {
                remove_index(&dir, n)?;
            }
            // The active segment: cut whatever follows the last intact frame, so that stale
            // bytes can never be read as records later, and make what remains durable.
            let end_u64 = u64::try_from(end).unwrap_or(u64::MAX);
            let seg = seg.truncate_tail(end_u64, size)?;
            segments.install(seg)?;
            active = Some(Active {
                writer: Writer {
                    segment: n,
                    offset: u32::try_from(end).map_err(|_| corrupted(n, end, "offset"))?,
                    size,
                    records: count,
                    buf: Vec::new(),
                },
                offsets,
            });
        }
        let Active { writer, offsets } = match active {
            Some(active) => active,
            None => {
                // Empty directory, or the last segment is sealed: start the next one.
                let n = last
                    .map_or(Some(first), |l| l.checked_add(1))
                    .ok_or(LogError::Full("too many segments"))?;
                let seg = Segment::create(&dir, n, config.segment_size)?;
                segments.install(seg)?;
                Active {
                    writer: Writer {
                        segment: n,
                        offset: HEADER_LEN as u32,
                        size: config.segment_size,
                        records: 0,
                        buf: Vec::new(),
                    },
                    offsets: Vec::new(),
                }
            }
        };
        recovery.segments = writer.segment.saturating_add(1).saturating_sub(first);
        let index = Index::build(
            &segments.load(),
            writer.segment,
            offsets,
            writer.offset,
            sealed_records,
        );
        recovery.records = index.len();
        let idx_report = scrub::IdxReport {
            rebuilt: recovery.rebuilt_indexes.clone(),
            unusable: Vec::new(),
        };
        let unverified = recovery.unverified_indexes;
        let head = pos(writer.segment, writer.offset);
        let writer_segment = writer.segment;
        let inner = Arc::new(Inner {
            dir,
            config,
            segments,
            index: RwLock::new(index),
            writer: Mutex::new(writer),
            // Recovered bytes were fsynced by `truncate_tail` or when their segment was sealed.
            sync: Mutex::new(SyncState {
                written: head,
                synced: head,
                ..SyncState::default()
            }),
            work: Condvar::new(),
            done: Condvar::new(),
            poisoned: AtomicBool::new(false),
            corrupt_reads: AtomicU64::new(0),
            first: AtomicU32::new(first),
            retiring: Mutex::new(()),
            max_records_per_segment: max_records_per_segment(largest_size),
            recovery,
            idx_verified: AtomicU32::new(0),
            idx_report: Mutex::new(idx_report),
            scrub_stop: AtomicBool::new(false),
            scrub_done: AtomicBool::new(unverified == 0),
            sealed_keys: sealed_keys::SealedKeys::default(),
            timings: OnceLock::new(),
            _lock: lock,
        });
        let active = writer_segment;
        let syncer_dir = inner.dir.clone();
        let syncer = match config.durability {
            Durability::EveryAppend => None,
            Durability::Group { interval_ms } | Durability::Deferred { interval_ms } => {
                let inner = Arc::clone(&inner);
                let interval = Duration::from_millis(u64::from(interval_ms));
                let handle = std::thread::Builder::new()
                    .name("log-sync".into())
                    .spawn(move || inner.run_syncer(interval))
                    .map_err(|e| LogError::io("spawn syncer thread for", syncer_dir, e))?;
                Some(handle)
            }
        };
        let scrub = if config.scrub && unverified > 0 {
            let inner = Arc::clone(&inner);
            let spawned = std::thread::Builder::new()
                .name("log-idx-scrub".into())
                .spawn(move || inner.run_scrub(active));
            match spawned {
                Ok(handle) => Some(handle),
                Err(e) => {
                    // Lookups verify each index file before its first use anyway.
                    tracing::warn!(error = %e, "cannot start the index scrub thread");
                    None
                }
            }
        } else {
            // Nothing left to verify: the filter over the sealed keys is built now (after a
            // scrub, by the scrub).
            if config.scrub {
                inner.build_sealed_keys();
            }
            None
        };
        Ok(Self {
            inner,
            syncer,
            scrub,
        })
    }
}
