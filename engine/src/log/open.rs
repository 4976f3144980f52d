//! Opening a log: the directory lock, the scan of every segment and the recovery rules
//! (torn tail truncated, corruption refused; `engine/FORMAT.md`).

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

/// How a segment's records end.
#[derive(Clone, Copy)]
pub(super) enum Tail {
    /// A valid seal record at this offset.
    Sealed,
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

/// Reads the frames of `seg` into `entries`; returns how they end and how many there were.
pub(super) fn scan_segment(
    seg: &Segment,
    entries: &mut Vec<Entry>,
) -> Result<(Tail, u32), LogError> {
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
            return Ok((Tail::Sealed, count));
        }
        entries.push(Entry {
            segment: seg.number,
            offset,
        });
        count = count
            .checked_add(1)
            .ok_or_else(|| corrupted(seg.number, at, "count"))?;
        at = frame.end;
    }
}

impl Log {
    /// Opens the log in `dir`, creating it if needed, and recovers it.
    ///
    /// Every frame's checksum is verified. Sealed segments must be intact; in the active (last)
    /// segment, the first bytes that are not an intact frame and everything after them are a
    /// torn tail and are cut off (reported by [`Log::recovery`]).
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
        let mut numbers = Vec::new();
        for entry in fs::read_dir(&dir).map_err(|e| LogError::io("list", &dir, e))? {
            let entry = entry.map_err(|e| LogError::io("list", &dir, e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if let Some(n) = Segment::parse_name(name) {
                numbers.push(n);
            } else if name.ends_with(".seg.tmp") {
                // A segment whose creation did not finish; it never held records.
                let path = entry.path();
                fs::remove_file(&path).map_err(|e| LogError::io("remove", &path, e))?;
            }
        }
        numbers.sort_unstable();
        for (expected, &n) in numbers.iter().enumerate() {
            if u32::try_from(expected).ok() != Some(n) {
                return Err(corrupted(n, 0, format!("segment {expected} is missing")));
            }
        }

        let segments = SegmentTable::new();
        let mut entries = Vec::new();
        let mut recovery = Recovery::default();
        let last = numbers.last().copied();
        let mut writer: Option<Writer> = None;
        for &n in &numbers {
            let seg = Segment::open(&dir, n)?;
            let size = format::decode_header(seg.bytes(), n).map_err(|r| corrupted(n, 0, r))?;
            let is_last = Some(n) == last;
            let file_len = seg.bytes().len();
            if !is_last && u64::try_from(file_len).ok() != Some(u64::from(size)) {
                return Err(corrupted(
                    n,
                    file_len,
                    "file length differs from the header",
                ));
            }
            let (tail, count) = scan_segment(&seg, &mut entries)?;
            let end = match (tail, is_last) {
                (Tail::Sealed, _) => {
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
            // The active segment: cut whatever follows the last intact frame, so that stale
            // bytes can never be read as records later, and make what remains durable.
            let end_u64 = u64::try_from(end).unwrap_or(u64::MAX);
            let seg = seg.truncate_tail(end_u64, size)?;
            segments.install(seg)?;
            writer = Some(Writer {
                segment: n,
                offset: u32::try_from(end).map_err(|_| corrupted(n, end, "offset"))?,
                size,
                records: count,
                buf: Vec::new(),
            });
        }
        let writer = match writer {
            Some(w) => w,
            None => {
                // Empty directory, or the last segment is sealed: start the next one.
                let n = last
                    .map_or(Some(0), |l| l.checked_add(1))
                    .ok_or(LogError::Full("too many segments"))?;
                let seg = Segment::create(&dir, n, config.segment_size)?;
                segments.install(seg)?;
                Writer {
                    segment: n,
                    offset: HEADER_LEN as u32,
                    size: config.segment_size,
                    records: 0,
                    buf: Vec::new(),
                }
            }
        };
        recovery.segments = writer.segment.saturating_add(1);
        recovery.records = u64::try_from(entries.len()).unwrap_or(u64::MAX);
        if entries.len() > u32::MAX as usize {
            return Err(LogError::Full("more than u32::MAX records"));
        }
        let index = Index::build(&segments, entries);
        let head = pos(writer.segment, writer.offset);
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
            recovery,
            timings: OnceLock::new(),
            _lock: lock,
        });
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
        Ok(Self { inner, syncer })
    }
}
