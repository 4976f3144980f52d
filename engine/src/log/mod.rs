//! The durable, memory-mapped, append-only block log.
//!
//! Records (v2 and v3 blocks) are appended to fixed-size segment files and read back zero-copy
//! from read-only memory maps. Only the active (last) segment is indexed in memory; each sealed
//! segment has an index file beside it (`NNNNNNNN.idx`, written when the segment is sealed),
//! so the memory the index takes is bounded by one segment. Opening a log checks the sealed
//! segments' index files in O(1) each (header, lengths, seal) instead of scanning their frames
//! (frames of sealed segments are checksummed when read), scans the active segment, truncates
//! its torn tail, and scans and re-indexes any sealed segment whose index file is missing or
//! fails those checks; there is no clean-shutdown flag and no repair step. The index files'
//! sections are verified after the open, by a background scrub or by the first lookup in their
//! segment, and a damaged one is rebuilt then (`scrub.rs`). The byte layout, the recovery rules and what each
//! [`Durability`] risks are specified in `engine/FORMAT.md`.
//!
//! ```no_run
//! # fn main() -> Result<(), ledger_engine::LogError> {
//! use ledger_engine::internals::log::{Log, LogConfig};
//! let log = Log::open("data/log", LogConfig::default())?;
//! let appended = log.append_v2(b"block bytes")?;
//! let reader = log.reader();
//! let record = reader.read(appended.location).expect("just appended");
//! assert_eq!(record.bytes(), b"block bytes");
//! # Ok(()) }
//! ```
#![deny(clippy::undocumented_unsafe_blocks)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

mod error;
mod format;
mod frames;
mod idx_file;
mod idx_format;
mod index;
mod key_filter;
mod salvage;
mod segment;

use std::collections::VecDeque;
use std::fmt;
use std::fs;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::timing::TimingObserver;
pub use error::LogError;
pub use salvage::{salvage, SalvageReport};

use format::{Scan, FRAME_HEADER_LEN, HEADER_LEN, KIND_SEAL, KIND_V2, KIND_V3, SEAL_FRAME_LEN};
use idx_file::SealedIndex;
use index::{Entry, Index};
use segment::{Segment, SegmentTable, Segments};

mod append;
mod open;
mod read;
mod retire;
mod scrub;
mod sealed_keys;
mod sync;
mod types;

use open::{corrupted, max_body};
pub use read::{Iter, Reader};
pub use retire::Retired;
pub use sync::Durable;
use sync::SyncState;
use types::pos;
pub use types::{
    Appended, BlockId, Durability, IndexHealth, Location, LogConfig, LogStats, Record, RecordBytes,
    RecordKind, Recovery,
};

/// The append-only block log. Share it as `Arc<Log>`: every method takes `&self`.
pub struct Log {
    inner: Arc<Inner>,
    syncer: Option<JoinHandle<()>>,
    /// The index scrub (`log-idx-scrub`), stopped and joined on drop.
    scrub: Option<JoinHandle<()>>,
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
    /// Reads of sealed-segment frames whose checksum failed (never served).
    corrupt_reads: AtomicU64,
    /// The first segment that is not retired (`retire.rs`).
    first: AtomicU32,
    /// Held by a retirement (`retire.rs`): they run one at a time.
    retiring: Mutex<()>,
    /// See [`Log::max_records_per_segment`].
    max_records_per_segment: u32,
    recovery: Recovery,
    /// Index files found at open whose sections were verified since.
    idx_verified: AtomicU32,
    /// Index files rebuilt and segments left unindexed since the open began.
    idx_report: Mutex<scrub::IdxReport>,
    /// Tells the scrub to stop (the log is dropped).
    scrub_stop: AtomicBool,
    /// Set by the scrub once it went through every sealed segment.
    scrub_done: AtomicBool,
    /// One filter over the keys of every sealed segment (`sealed_keys.rs`).
    sealed_keys: sealed_keys::SealedKeys,
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

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a log lock leaves plain data behind; the log's invariants are
    // restored by the next open anyway.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Log {
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
        let mut seg = inner.segment(w.segment)?;
        // A roll that failed after the segment's index was installed (an early seal,
        // `Log::seal_active`) leaves it sealed: nothing more may go into it.
        if (frame_len as u64).saturating_add(SEAL_FRAME_LEN as u64) > room || seg.is_sealed() {
            inner.roll(&mut w)?;
            seg = inner.segment(w.segment)?;
        }
        let mut buf = std::mem::take(&mut w.buf);
        buf.clear();
        format::encode_frame(&mut buf, id.kind().byte(), id.as_bytes(), body);
        let written = seg.with_file(|f| f.write_all_at(&buf, u64::from(w.offset)));
        w.buf = buf;
        written.map_err(|e| LogError::io("write", &seg.path, e))?;
        if inner.config.durability == Durability::EveryAppend {
            if let Err(e) = inner.commit(&seg) {
                inner.poison();
                return Err(LogError::io("fsync", &seg.path, e));
            }
        }
        let entry = Entry {
            segment: w.segment,
            offset: w.offset,
        };
        let frame_end = w.offset.saturating_add(frame_len_u32);
        {
            let mut index = inner.index.write().unwrap_or_else(PoisonError::into_inner);
            if !index.push(id, entry.offset, frame_end) {
                return Err(LogError::Full("more than u32::MAX records in a segment"));
            }
        }
        w.offset = frame_end;
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
        let first = inner.first.load(Ordering::Acquire);
        for n in first..w.segment {
            let size = inner.segment(n).map_or(0, |s| s.bytes().len());
            sealed = sealed.saturating_add(u64::try_from(size).unwrap_or(0));
        }
        LogStats {
            records: self.len(),
            segments: w.segment.saturating_add(1).saturating_sub(first),
            used_bytes: sealed.saturating_add(u64::from(w.offset)),
            corrupt_reads: inner.corrupt_reads.load(Ordering::Relaxed),
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

    /// An upper bound on the records one segment of this log can hold: the largest segment
    /// size (the configured one, or a bigger one found at open) without its header and seal,
    /// divided by the smallest frame (a v2 record with an empty body, 41 bytes). Every
    /// [`Log::ordinal`] is below it, for callers that keep fixed-size per-record slots per
    /// segment.
    pub fn max_records_per_segment(&self) -> u32 {
        self.inner.max_records_per_segment
    }
}

impl Drop for Log {
    fn drop(&mut self) {
        // The scrub stops before its next segment: the wait is one segment's check at most.
        self.inner.scrub_stop.store(true, Ordering::Release);
        if let Some(handle) = self.scrub.take() {
            let _ = handle.join();
        }
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
    fn segment(&self, n: u32) -> Result<Arc<Segment>, LogError> {
        self.segments
            .load()
            .get_arc(n)
            .cloned()
            .ok_or_else(|| corrupted(n, 0, "segment not installed"))
    }
}

#[cfg(test)]
mod idx_tests;
#[cfg(test)]
mod tests;
