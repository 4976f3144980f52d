//! The durable, memory-mapped, append-only block log.
//!
//! Records (v2 and v3 blocks) are appended to fixed-size segment files and read back zero-copy
//! from read-only memory maps. Opening a log scans every segment, verifies every checksum,
//! truncates a torn tail of the active segment and rebuilds the in-memory index; there is no
//! clean-shutdown flag and no repair step. The byte layout, the recovery rules and what each
//! [`Durability`] risks are specified in `engine/FORMAT.md`.
//!
//! ```no_run
//! # fn main() -> Result<(), ledger_engine::log::LogError> {
//! use ledger_engine::log::{Log, LogConfig};
//! let log = Log::open("data/log", LogConfig::default())?;
//! let appended = log.append_v2(b"block bytes")?;
//! let record = log.read(appended.location).expect("just appended");
//! assert_eq!(record.bytes(), b"block bytes");
//! # Ok(()) }
//! ```
#![deny(clippy::undocumented_unsafe_blocks)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

mod error;
mod format;
mod index;
mod salvage;
mod segment;

use std::collections::VecDeque;
use std::fmt;
use std::fs;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::timing::TimingObserver;
pub use error::LogError;
pub use salvage::{salvage, SalvageReport};

use format::{Scan, FRAME_HEADER_LEN, HEADER_LEN, KIND_SEAL, KIND_V2, KIND_V3, SEAL_FRAME_LEN};
use index::{Entry, Index};
use segment::{Segment, SegmentTable};

/// The id of a stored block: v2 ids are BLAKE2b-256 of the block bytes, v3 ids carry a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BlockId {
    /// A v2 (Stardust) block id: BLAKE2b-256 of the serialized block.
    V2([u8; 32]),
    /// A v3 (Nova) block id: 32-byte hash followed by the little-endian slot index.
    V3([u8; 36]),
}

impl BlockId {
    /// The id bytes as stored (32 or 36 bytes).
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Self::V2(b) => b,
            Self::V3(b) => b,
        }
    }

    /// The kind of record this id belongs to.
    pub const fn kind(&self) -> RecordKind {
        match self {
            Self::V2(_) => RecordKind::V2Block,
            Self::V3(_) => RecordKind::V3Block,
        }
    }

    fn from_parts(kind: u8, id: &[u8]) -> Option<Self> {
        match kind {
            KIND_V2 => Some(Self::V2(id.try_into().ok()?)),
            KIND_V3 => Some(Self::V3(id.try_into().ok()?)),
            _ => None,
        }
    }
}

/// The kind of a stored record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RecordKind {
    /// A v2 (Stardust) block.
    V2Block,
    /// A v3 (Nova) block.
    V3Block,
}

impl RecordKind {
    const fn byte(self) -> u8 {
        match self {
            Self::V2Block => KIND_V2,
            Self::V3Block => KIND_V3,
        }
    }
}

/// Where a record lives: its segment and the offset of its frame in the segment file.
///
/// Locations order like appends. [`Location::to_u64`] packs one into 8 bytes for other indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    segment: u32,
    offset: u32,
}

impl Location {
    /// The segment number.
    pub const fn segment(self) -> u32 {
        self.segment
    }

    /// The offset of the record's frame inside the segment file.
    pub const fn offset(self) -> u32 {
        self.offset
    }

    /// Packs the location as `segment << 32 | offset`.
    pub const fn to_u64(self) -> u64 {
        pos(self.segment, self.offset)
    }

    /// Unpacks a location packed by [`Location::to_u64`].
    pub const fn from_u64(v: u64) -> Self {
        // NOTE: the halves of a u64 fit a u32 each by construction.
        #[expect(clippy::cast_possible_truncation)]
        Self {
            segment: (v >> 32) as u32,
            offset: v as u32,
        }
    }
}

/// Global log position of `offset` in `segment`; orders like appends.
const fn pos(segment: u32, offset: u32) -> u64 {
    ((segment as u64) << 32) | offset as u64
}

/// When an appended record is forced to stable storage.
///
/// Every mode survives `kill -9` of the process once [`Log::append_v2`]/[`Log::append_v3`]
/// returned, because the bytes are in the kernel's page cache by then. The modes differ in
/// what a power loss or kernel crash can take away; see `engine/FORMAT.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// `fdatasync` inside every append, before it returns and before the record is visible.
    /// Nothing acknowledged is lost on power loss; one fsync per append.
    EveryAppend,
    /// Group commit: an append returns after an `fdatasync` that covers it. A background
    /// thread issues at most one fsync per `interval_ms` and each covers every append written
    /// before it, so concurrent appenders share fsyncs. Nothing acknowledged is lost on power
    /// loss; an append waits up to `interval_ms` plus one fsync.
    Group {
        /// Minimum spacing between two fsyncs, in milliseconds.
        interval_ms: u32,
    },
    /// An append returns once the bytes are written; a background thread fsyncs at most every
    /// `interval_ms`. A power loss can take the appends of the last `interval_ms` plus one
    /// fsync. For bulk loading and tests.
    Deferred {
        /// Spacing between two background fsyncs, in milliseconds.
        interval_ms: u32,
    },
}

impl Default for Durability {
    /// Group commit every 2 ms.
    fn default() -> Self {
        Self::Group { interval_ms: 2 }
    }
}

/// How a log is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogConfig {
    segment_size: u32,
    durability: Durability,
}

impl Default for LogConfig {
    /// 256 MiB segments, group commit every 2 ms.
    fn default() -> Self {
        Self {
            segment_size: 256 << 20,
            durability: Durability::default(),
        }
    }
}

impl LogConfig {
    /// Sets the size of new segment files (at least 4096 bytes). Existing segments keep the
    /// size written in their headers.
    #[must_use]
    pub const fn with_segment_size(mut self, bytes: u32) -> Self {
        self.segment_size = bytes;
        self
    }

    /// Sets the fsync policy.
    #[must_use]
    pub const fn with_durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// The size of new segment files.
    pub const fn segment_size(&self) -> u32 {
        self.segment_size
    }

    /// The fsync policy.
    pub const fn durability(&self) -> Durability {
        self.durability
    }
}

/// The result of an append.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Appended {
    /// Where the record is.
    pub location: Location,
    /// `false` if a record with this id was already stored (nothing was written).
    pub inserted: bool,
}

/// What opening the log found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Segments found.
    pub segments: u32,
    /// Records recovered.
    pub records: u64,
    /// Where a torn or corrupt tail of the active segment began, if one was truncated.
    pub truncated_at: Option<Location>,
    /// Why the truncated tail was rejected.
    pub truncated_reason: Option<&'static str>,
}

/// Sizes of the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogStats {
    /// Records stored.
    pub records: u64,
    /// Segment files.
    pub segments: u32,
    /// Bytes used in segment files: headers, frames and seals, without the unused
    /// (zero, sparse) rest of the active segment.
    pub used_bytes: u64,
}

/// A stored record, borrowing the log's memory map.
#[derive(Clone, Copy)]
pub struct Record<'a> {
    location: Location,
    kind: u8,
    id: &'a [u8],
    bytes: &'a [u8],
}

impl fmt::Debug for Record<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Record")
            .field("location", &self.location)
            .field("id", &self.id())
            .field("len", &self.bytes.len())
            .finish_non_exhaustive()
    }
}

impl<'a> Record<'a> {
    fn new(location: Location, p: index::Parts<'a>) -> Self {
        Self {
            location,
            kind: p.kind,
            id: p.id,
            bytes: p.body,
        }
    }

    /// Where the record is.
    pub const fn location(&self) -> Location {
        self.location
    }

    /// The record kind.
    pub fn kind(&self) -> RecordKind {
        if self.kind == KIND_V3 {
            RecordKind::V3Block
        } else {
            RecordKind::V2Block
        }
    }

    /// The block id.
    pub fn id(&self) -> BlockId {
        // Frames are verified before they are indexed, so the id has the length of its kind.
        BlockId::from_parts(self.kind, self.id).unwrap_or(BlockId::V2([0; 32]))
    }

    /// The block bytes, straight from the memory map.
    pub const fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

/// The append-only block log. Share it as `Arc<Log>`: every method takes `&self`.
pub struct Log {
    inner: Arc<Inner>,
    syncer: Option<JoinHandle<()>>,
}

impl fmt::Debug for Log {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Log")
            .field("dir", &self.inner.dir)
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

struct Inner {
    dir: PathBuf,
    config: LogConfig,
    segments: SegmentTable,
    index: RwLock<Index>,
    writer: Mutex<Writer>,
    sync: Mutex<SyncState>,
    /// Signals the syncer that `written` moved or `shutdown` was set.
    work: Condvar,
    /// Signals appenders that `synced` moved or `failed` was set.
    done: Condvar,
    poisoned: AtomicBool,
    recovery: Recovery,
    /// Told how long each commit fsync took (see [`Log::observe_timings`]).
    timings: OnceLock<Arc<dyn TimingObserver>>,
    /// The directory's `LOCK` file, locked exclusively while the log is open (released by
    /// the OS when the process dies).
    _lock: fs::File,
}

/// The append head; its mutex serializes appends.
struct Writer {
    segment: u32,
    offset: u32,
    size: u32,
    /// Records in the active segment (written into its seal).
    records: u32,
    buf: Vec<u8>,
}

/// A callback waiting for an fsync to cover a log position (see [`Log::on_durable`]).
type Waiter = Box<dyn FnOnce(Result<(), LogError>) + Send>;

#[derive(Default)]
struct SyncState {
    /// Log position one past the last written record.
    written: u64,
    /// Log position up to which an fsync has completed.
    synced: u64,
    failed: bool,
    shutdown: bool,
    /// Callbacks for positions not yet synced, fired by the fsync loop.
    waiters: Vec<(u64, Waiter)>,
}

/// Waiters taken out of the sync state, to be called outside its lock.
struct Ready {
    waiters: Vec<(u64, Waiter)>,
    synced: u64,
}

impl SyncState {
    /// Removes the waiters whose position is synced (all of them once the log failed
    /// or shuts down).
    fn take_ready(&mut self) -> Ready {
        let synced = self.synced;
        let waiters = if self.failed || self.shutdown {
            std::mem::take(&mut self.waiters)
        } else {
            let (ready, pending) = std::mem::take(&mut self.waiters)
                .into_iter()
                .partition(|(end, _)| *end <= synced);
            self.waiters = pending;
            ready
        };
        Ready { waiters, synced }
    }
}

impl Ready {
    /// Calls each waiter: `Ok` if its position is synced, else `Poisoned` (the log
    /// failed or is gone).
    fn fire(self) {
        for (end, f) in self.waiters {
            f(if end <= self.synced {
                Ok(())
            } else {
                Err(LogError::Poisoned)
            });
        }
    }
}

/// A log position whose durability can be awaited: [`Log::wait_durable_at`] blocks,
/// [`Log::on_durable`] calls back. Returned by the `*_nowait` appends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Durable(u64);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a log lock leaves plain data behind; the log's invariants are
    // restored by the next open anyway.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Takes the exclusive lock on `dir/LOCK` (created if missing), or [`LogError::Locked`].
fn lock_dir(dir: &Path) -> Result<fs::File, LogError> {
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
fn max_body(size: u32) -> usize {
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    size.saturating_sub(HEADER_LEN + FRAME_HEADER_LEN + 36 + SEAL_FRAME_LEN)
}

/// How a segment's records end.
#[derive(Clone, Copy)]
enum Tail {
    /// A valid seal record at this offset.
    Sealed,
    /// Zero bytes (or no room for a frame) at this offset.
    End(usize),
    /// Bytes that are not an intact frame at this offset.
    Torn(usize, &'static str),
}

fn corrupted(segment: u32, offset: usize, reason: impl Into<String>) -> LogError {
    LogError::Corrupted {
        segment,
        offset: u64::try_from(offset).unwrap_or(u64::MAX),
        reason: reason.into(),
    }
}

/// Reads the frames of `seg` into `entries`; returns how they end and how many there were.
fn scan_segment(seg: &Segment, entries: &mut Vec<Entry>) -> Result<(Tail, u32), LogError> {
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

    /// Appends a v2 block; its id is BLAKE2b-256 of `bytes`.
    ///
    /// Returns once the record is as durable as the configured [`Durability`] promises. If a
    /// block with the same id is stored already, nothing is written and its location is
    /// returned with `inserted == false` (after waiting for its durability, like a new one).
    ///
    /// # Errors
    /// [`LogError::RecordTooLarge`], I/O errors, [`LogError::Poisoned`] after a failed fsync,
    /// [`LogError::Full`].
    pub fn append_v2(&self, bytes: &[u8]) -> Result<Appended, LogError> {
        let (appended, durable) = self.append_v2_nowait(bytes)?;
        self.wait_durable_at(durable)?;
        Ok(appended)
    }

    /// Appends a v2 block like [`Log::append_v2`] but returns as soon as the record is
    /// written (readable, not yet durable in group-commit mode): acknowledge it only after
    /// [`Log::wait_durable_at`] or [`Log::on_durable`] reports the returned position durable.
    /// For a block stored already, the position is that record's.
    ///
    /// # Errors
    /// As [`Log::append_v2`], except the fsync outcome, which the wait reports.
    pub fn append_v2_nowait(&self, bytes: &[u8]) -> Result<(Appended, Durable), LogError> {
        let id = BlockId::V2(ledger_codec::hash::blake2b256(bytes));
        self.append_nowait(&id, bytes)
    }

    /// The durability position of a stored record (for a resubmitted block whose first
    /// append may not be durable yet), or `None` if `id` is not stored.
    pub fn durable_mark(&self, id: &BlockId) -> Option<Durable> {
        self.find(id).map(|e| Durable(self.record_end(e)))
    }

    /// Blocks until `mark` is durable under the configured [`Durability`] (immediately for
    /// `EveryAppend` and `Deferred`).
    ///
    /// # Errors
    /// [`LogError::Poisoned`] when an fsync failed.
    pub fn wait_durable_at(&self, mark: Durable) -> Result<(), LogError> {
        self.wait_durable(mark.0)
    }

    /// Calls `f` once `mark` is durable (with `Err(Poisoned)` if an fsync fails first): at
    /// once on this thread when it already is, else on whichever thread completes the
    /// covering fsync (the log's fsync thread, or an appender that poisons the log while
    /// holding its writer lock), so `f` must be quick (e.g. send on a channel), must not
    /// panic and must not call into the log.
    pub fn on_durable(&self, mark: Durable, f: impl FnOnce(Result<(), LogError>) + Send + 'static) {
        let inner = &*self.inner;
        if !matches!(inner.config.durability, Durability::Group { .. }) {
            return f(if inner.poisoned.load(Ordering::Acquire) {
                Err(LogError::Poisoned)
            } else {
                Ok(())
            });
        }
        let mut s = lock(&inner.sync);
        if s.synced >= mark.0 {
            drop(s);
            return f(Ok(()));
        }
        if s.failed {
            drop(s);
            return f(Err(LogError::Poisoned));
        }
        // Fired by whatever advances `synced` past `mark` (the syncer wakes on every
        // append, so an unsynced mark always has an fsync coming).
        s.waiters.push((mark.0, Box::new(f)));
    }

    /// Appends a v3 block under the id the caller computed (hash and slot).
    ///
    /// Same contract as [`Log::append_v2`].
    ///
    /// # Errors
    /// As [`Log::append_v2`].
    pub fn append_v3(&self, id: [u8; 36], bytes: &[u8]) -> Result<Appended, LogError> {
        self.append(&BlockId::V3(id), bytes)
    }

    /// Appends under an id the caller computed already (for v2, the BLAKE2b-256 of
    /// `body`): the engine hashes each block once.
    pub(crate) fn append(&self, id: &BlockId, body: &[u8]) -> Result<Appended, LogError> {
        let (appended, durable) = self.append_nowait(id, body)?;
        self.wait_durable_at(durable)?;
        Ok(appended)
    }

    /// [`Log::append`] without waiting for the fsync (see [`Log::append_v2_nowait`]).
    pub(crate) fn append_nowait(
        &self,
        id: &BlockId,
        body: &[u8],
    ) -> Result<(Appended, Durable), LogError> {
        let inner = &*self.inner;
        if inner.poisoned.load(Ordering::Acquire) {
            return Err(LogError::Poisoned);
        }
        let mut w = lock(&inner.writer);
        if let Some(found) = self.find(id) {
            drop(w);
            let end = self.record_end(found);
            return Ok((
                Appended {
                    location: found.location(),
                    inserted: false,
                },
                Durable(end),
            ));
        }
        let max = max_body(w.size);
        if body.len() > max {
            return Err(LogError::RecordTooLarge {
                len: body.len(),
                max,
            });
        }
        // Fits in u32: bounded by the segment size above.
        let frame_len = FRAME_HEADER_LEN + id.as_bytes().len() + body.len();
        let frame_len_u32 = u32::try_from(frame_len).map_err(|_| LogError::Full("frame"))?;
        let room = u64::from(w.size).saturating_sub(u64::from(w.offset));
        if (frame_len as u64).saturating_add(SEAL_FRAME_LEN as u64) > room {
            inner.roll(&mut w)?;
        }
        let mut buf = std::mem::take(&mut w.buf);
        buf.clear();
        format::encode_frame(&mut buf, id.kind().byte(), id.as_bytes(), body);
        let seg = inner.segment(w.segment)?;
        let written = seg.file.write_all_at(&buf, u64::from(w.offset));
        w.buf = buf;
        written.map_err(|e| LogError::io("write", &seg.path, e))?;
        if inner.config.durability == Durability::EveryAppend {
            if let Err(e) = inner.commit(seg) {
                inner.poison();
                return Err(LogError::io("fsync", &seg.path, e));
            }
        }
        let entry = Entry {
            segment: w.segment,
            offset: w.offset,
        };
        {
            let mut index = inner.index.write().unwrap_or_else(PoisonError::into_inner);
            if !index.push(&inner.segments, id, entry) {
                return Err(LogError::Full("more than u32::MAX records"));
            }
        }
        w.offset = w.offset.saturating_add(frame_len_u32);
        w.records = w.records.saturating_add(1);
        let end = pos(w.segment, w.offset);
        drop(w);
        if inner.config.durability != Durability::EveryAppend {
            let mut s = lock(&inner.sync);
            s.written = s.written.max(end);
            drop(s);
            inner.work.notify_one();
        }
        Ok((
            Appended {
                location: entry.location(),
                inserted: true,
            },
            Durable(end),
        ))
    }

    fn find(&self, id: &BlockId) -> Option<Entry> {
        let index = self
            .inner
            .index
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        index.find(&self.inner.segments, id)
    }

    fn record_end(&self, e: Entry) -> u64 {
        let end = index::parts(&self.inner.segments, e).map_or(0, |p| p.end);
        pos(e.segment, u32::try_from(end).unwrap_or(u32::MAX))
    }

    /// In group-commit mode, waits until an fsync covered log position `end`.
    fn wait_durable(&self, end: u64) -> Result<(), LogError> {
        let inner = &*self.inner;
        if !matches!(inner.config.durability, Durability::Group { .. }) {
            return Ok(());
        }
        let mut s = lock(&inner.sync);
        while s.synced < end {
            if s.failed {
                return Err(LogError::Poisoned);
            }
            s = inner.done.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
        Ok(())
    }

    /// The record with this id.
    pub fn get(&self, id: &BlockId) -> Option<Record<'_>> {
        let e = self.find(id)?;
        self.record(e)
    }

    /// Whether a record with this id is stored.
    pub fn contains(&self, id: &BlockId) -> bool {
        self.find(id).is_some()
    }

    /// The record at `location`, or `None` if no record starts there.
    pub fn read(&self, location: Location) -> Option<Record<'_>> {
        let e = Entry {
            segment: location.segment,
            offset: location.offset,
        };
        let known = {
            let index = self
                .inner
                .index
                .read()
                .unwrap_or_else(PoisonError::into_inner);
            index.contains_entry(e)
        };
        if known {
            self.record(e)
        } else {
            None
        }
    }

    fn record(&self, e: Entry) -> Option<Record<'_>> {
        Some(Record::new(
            e.location(),
            index::parts(&self.inner.segments, e)?,
        ))
    }

    /// All records in append order, as of this call (later appends are not visited).
    pub fn iter(&self) -> Iter<'_> {
        let end = self
            .inner
            .index
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .entries
            .len();
        Iter {
            log: self,
            next: 0,
            end,
            buf: VecDeque::new(),
        }
    }

    /// Number of records stored.
    pub fn len(&self) -> u64 {
        let n = self
            .inner
            .index
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .entries
            .len();
        u64::try_from(n).unwrap_or(u64::MAX)
    }

    /// Whether no record is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forces every record written so far to stable storage.
    ///
    /// # Errors
    /// The fsync's I/O error (the log is then poisoned).
    pub fn sync(&self) -> Result<(), LogError> {
        let inner = &*self.inner;
        let w = lock(&inner.writer);
        let seg = inner.segment(w.segment)?;
        let end = pos(w.segment, w.offset);
        if let Err(e) = inner.commit(seg) {
            inner.poison();
            return Err(LogError::io("fsync", &seg.path, e));
        }
        drop(w);
        let mut s = lock(&inner.sync);
        s.synced = s.synced.max(end);
        let ready = s.take_ready();
        drop(s);
        inner.done.notify_all();
        ready.fire();
        Ok(())
    }

    /// What [`Log::open`] found and did.
    pub fn recovery(&self) -> &Recovery {
        &self.inner.recovery
    }

    /// Sizes of the log.
    pub fn stats(&self) -> LogStats {
        let inner = &*self.inner;
        let w = lock(&inner.writer);
        // Sealed segments may have other sizes than the configured one; sum their files.
        let mut sealed = 0u64;
        for n in 0..w.segment {
            let size = inner.segment(n).map_or(0, |s| s.bytes().len());
            sealed = sealed.saturating_add(u64::try_from(size).unwrap_or(0));
        }
        LogStats {
            records: self.len(),
            segments: w.segment.saturating_add(1),
            used_bytes: sealed.saturating_add(u64::from(w.offset)),
        }
    }

    /// The directory of the log.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// The configuration the log was opened with.
    pub fn config(&self) -> LogConfig {
        self.inner.config
    }

    /// Reports the duration of every commit fsync from now on to `observer` (a group commit,
    /// the fsync of an every-append append, [`Log::sync`]); segment seals are not commits.
    /// Only the first observer set is kept: returns false if one was set already.
    pub fn observe_timings(&self, observer: Arc<dyn TimingObserver>) -> bool {
        self.inner.timings.set(observer).is_ok()
    }

    /// The largest block body an append accepts.
    pub fn max_record_len(&self) -> usize {
        max_body(lock(&self.inner.writer).size)
    }
}

impl Drop for Log {
    fn drop(&mut self) {
        lock(&self.inner.sync).shutdown = true;
        self.inner.work.notify_all();
        if let Some(handle) = self.syncer.take() {
            // The syncer flushes what is pending before it exits.
            let _ = handle.join();
        }
        // Nothing should be left; anyone still waiting learns the log is gone.
        let left = lock(&self.inner.sync).take_ready();
        left.fire();
    }
}

impl Inner {
    /// fsyncs `seg` to make its appended records durable, and reports the time taken.
    fn commit(&self, seg: &Segment) -> std::io::Result<()> {
        let started = Instant::now();
        let result = seg.file.sync_data();
        if let Some(observer) = self.timings.get() {
            observer.log_committed(started.elapsed());
        }
        result
    }

    fn segment(&self, n: u32) -> Result<&Segment, LogError> {
        self.segments
            .get(n)
            .ok_or_else(|| corrupted(n, 0, "segment not installed"))
    }

    fn poison(&self) {
        self.poisoned.store(true, Ordering::Release);
        let mut s = lock(&self.sync);
        s.failed = true;
        let waiting = s.take_ready();
        drop(s);
        self.done.notify_all();
        waiting.fire();
    }

    /// Seals the active segment and starts the next one. Order: seal frame, fsync, create the
    /// next segment (itself fsynced, renamed into place, directory fsynced).
    fn roll(&self, w: &mut Writer) -> Result<(), LogError> {
        let seg = self.segment(w.segment)?;
        let mut body = [0u8; format::SEAL_BODY_LEN];
        body[..4].copy_from_slice(&w.records.to_le_bytes());
        body[4..].copy_from_slice(&w.offset.to_le_bytes());
        w.buf.clear();
        format::encode_frame(&mut w.buf, KIND_SEAL, &[], &body);
        seg.file
            .write_all_at(&w.buf, u64::from(w.offset))
            .map_err(|e| LogError::io("write seal", &seg.path, e))?;
        if let Err(e) = seg.file.sync_data() {
            self.poison();
            return Err(LogError::io("fsync", &seg.path, e));
        }
        let next = w
            .segment
            .checked_add(1)
            .ok_or(LogError::Full("too many segments"))?;
        if next >= segment::MAX_SEGMENTS {
            return Err(LogError::Full("too many segments"));
        }
        let created = Segment::create(&self.dir, next, self.config.segment_size)?;
        self.segments.install(created)?;
        *w = Writer {
            segment: next,
            offset: HEADER_LEN as u32,
            size: self.config.segment_size,
            records: 0,
            buf: std::mem::take(&mut w.buf),
        };
        Ok(())
    }

    /// The background fsync loop of [`Durability::Group`] and [`Durability::Deferred`].
    fn run_syncer(&self, interval: Duration) {
        let mut last: Option<Instant> = None;
        loop {
            let mut s = lock(&self.sync);
            while s.written <= s.synced && !s.shutdown && !s.failed {
                s = self.work.wait(s).unwrap_or_else(PoisonError::into_inner);
            }
            if s.failed || (s.shutdown && s.written <= s.synced) {
                return;
            }
            let shutdown = s.shutdown;
            drop(s);
            if let (Some(at), false) = (last, shutdown) {
                std::thread::sleep(interval.saturating_sub(at.elapsed()));
            }
            last = Some(Instant::now());
            let target = lock(&self.sync).written;
            // Segments before the target's are sealed, and sealing fsyncs them.
            let segment = Location::from_u64(target).segment;
            let result = self.segment(segment).map(|seg| (seg, self.commit(seg)));
            match result {
                Ok((_, Ok(()))) => {
                    let mut s = lock(&self.sync);
                    s.synced = s.synced.max(target);
                    let ready = s.take_ready();
                    drop(s);
                    self.done.notify_all();
                    ready.fire();
                }
                Ok((seg, Err(e))) => {
                    tracing::error!(path = %seg.path.display(), error = %e, "log fsync failed");
                    self.poison();
                    return;
                }
                Err(e) => {
                    tracing::error!(error = %e, "log fsync failed");
                    self.poison();
                    return;
                }
            }
        }
    }
}

/// Iterator over the records of a [`Log`] in append order; see [`Log::iter`].
pub struct Iter<'a> {
    log: &'a Log,
    next: usize,
    end: usize,
    buf: VecDeque<Entry>,
}

impl fmt::Debug for Iter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Iter")
            .field("next", &self.next)
            .field("end", &self.end)
            .finish()
    }
}

impl<'a> Iterator for Iter<'a> {
    type Item = Record<'a>;

    fn next(&mut self) -> Option<Record<'a>> {
        if self.buf.is_empty() && self.next < self.end {
            // Copy a batch of entries so the index lock is taken once per 1024 records.
            let upto = self.end.min(self.next.saturating_add(1024));
            let index = self
                .log
                .inner
                .index
                .read()
                .unwrap_or_else(PoisonError::into_inner);
            self.buf
                .extend(index.entries.get(self.next..upto).unwrap_or_default());
            self.next = upto;
        }
        let e = self.buf.pop_front()?;
        self.log.record(e)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self
            .end
            .saturating_sub(self.next)
            .saturating_add(self.buf.len());
        (n, Some(n))
    }
}

#[cfg(test)]
mod tests;
