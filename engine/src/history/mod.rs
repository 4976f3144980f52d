//! What a node keeps of its history beside the block log, so that memory follows the live
//! tangle and a restart opens state instead of rebuilding it (formats in `engine/FORMAT.md`):
//! - `blockmeta`: the metadata of referenced blocks, one slot per log position, mapped;
//! - `journal`: per confirmed milestone, what it changed in the ledger (append-only);
//! - `base`: the ledger at the pruning index, once pruning retired log segments;
//! - `spent`: the ledger's spent rows, by output id (an embedded B-tree store);
//! - `milestone_index`: where each milestone's journal entry starts and its id → index (the
//!   same kind of store), so that neither is held in memory per milestone;
//! - `ledger_checkpoint`: the unspent outputs at a confirmed milestone, so that a restart
//!   applies only the journal entries after it;
//! - `checkpoint`: the confirmed index a restart starts from, where the log tail begins and
//!   which blocks were still unreferenced then;
//! - `inflight`: which appended blocks have not reached the tangle yet, so a checkpoint
//!   never names a log position past one of them.
//!
//! Everything here is derived from the log: a missing or damaged journal or checkpoint is
//! rebuilt by replaying the log, as a data directory of the previous format is.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::utxo::{AddressBytes, BytesLoc};

mod base;
mod blockmeta;
mod checkpoint;
mod entry_offsets;
mod inflight;
mod journal;
pub(crate) mod ledger_checkpoint;
mod milestone_index;
mod redb_file;
pub(crate) use redb_file::open_or_empty;
mod spent;

pub(crate) use base::BaseContent;
pub use base::BaseError;
pub use blockmeta::BlockMetaFiles;
pub(crate) use checkpoint::Checkpoint;
pub(crate) use entry_offsets::RUN_BATCH as INDEX_RUN_BATCH;
pub(crate) use inflight::InFlight;
pub(crate) use journal::{Journal, JournalEntry, OpenedJournal, ReplayEntries};
/// The milestone index's file name in the history directory.
pub(crate) use milestone_index::FILE as MILESTONE_INDEX_FILE;
pub(crate) use milestone_index::{IndexRow, MilestoneIndex};
pub(crate) use spent::SpentStore;
/// The spent store's file name in the history directory.
pub(crate) use spent::FILE as SPENT_FILE;

/// The directory of the history files inside a data directory.
pub(crate) const DIR: &str = "history";

/// Why history files could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HistoryError {
    /// An I/O failure on a named file.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file failed its checks.
    #[error("{} is damaged: {why}", path.display())]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The ledger base (`base.bin`) failed (boxed: the engine's errors stay small).
    #[error(transparent)]
    Base(Box<BaseError>),
    /// A file written whole under a temporary name (`ledger.checkpoint`) failed.
    #[error(transparent)]
    Write(Box<crate::snapshot::SnapshotError>),
}

impl From<BaseError> for HistoryError {
    fn from(e: BaseError) -> Self {
        Self::Base(Box::new(e))
    }
}

/// Reading and writing the ledger base (`base.bin`).
pub(crate) mod ledger_base {
    pub(crate) use super::base::{read, write};
}

impl HistoryError {
    pub(crate) fn io(what: &'static str, path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            what,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Ends the process on the spot (no destructor runs, like `kill -9`) when the environment
/// variable `LEDGER_NODE_CRASH_AT` names this point, as `NAME` (the first time it is reached)
/// or `NAME@N` (the N-th time): the crash tests stop a node halfway through writing a history
/// file this way. `LEDGER_NODE_PAUSE_AT=NAME:MS` makes every pass of the point wait MS
/// milliseconds instead (tests of what happens while a prune or snapshot runs).
pub(crate) fn crash_point(name: &str) {
    pause_point(name);
    use std::sync::atomic::{AtomicU32, Ordering};
    static AT: std::sync::OnceLock<Option<(String, u32)>> = std::sync::OnceLock::new();
    static REACHED: AtomicU32 = AtomicU32::new(0);
    let at = AT.get_or_init(|| {
        let v = std::env::var("LEDGER_NODE_CRASH_AT").ok()?;
        Some(match v.split_once('@') {
            Some((point, n)) => (point.to_owned(), n.parse().unwrap_or(1)),
            None => (v, 1),
        })
    });
    if let Some((point, n)) = at {
        if point == name && REACHED.fetch_add(1, Ordering::SeqCst) + 1 == *n {
            eprintln!("LEDGER_NODE_CRASH_AT={name}@{n}: stopping here");
            std::process::abort();
        }
    }
}

fn pause_point(name: &str) {
    static PAUSE: std::sync::OnceLock<Option<(String, u64)>> = std::sync::OnceLock::new();
    let pause = PAUSE.get_or_init(|| {
        let v = std::env::var("LEDGER_NODE_PAUSE_AT").ok()?;
        let (point, ms) = v.split_once(':')?;
        Some((point.to_owned(), ms.parse().ok()?))
    });
    if let Some((point, ms)) = pause {
        if point == name {
            eprintln!("LEDGER_NODE_PAUSE_AT={name}:{ms}: waiting");
            std::thread::sleep(std::time::Duration::from_millis(*ms));
        }
    }
}

/// A file to make durable, with its own handle (so the caller holds no lock meanwhile).
#[derive(Debug)]
pub(crate) struct SyncHandle {
    pub(crate) path: PathBuf,
    pub(crate) file: File,
}

impl SyncHandle {
    /// `fdatasync`s the file.
    pub(crate) fn sync(&self) -> Result<(), HistoryError> {
        self.file
            .sync_data()
            .map_err(|e| HistoryError::io("syncing", &self.path, e))
    }
}

/// Fsyncs a directory so that files created or renamed in it are durable.
pub(crate) fn fsync_dir(dir: &Path) -> Result<(), HistoryError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| HistoryError::io("syncing", dir, e))
}

/// Little-endian readers over a byte slice, failing with the reason.
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.bytes.len() < n {
            return Err("ends early".into());
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        self.take(N)?
            .try_into()
            .map_err(|_| "ends early".to_string())
    }

    pub(crate) fn u8(&mut self) -> Result<u8, String> {
        Ok(self.array::<1>()?[0])
    }

    pub(crate) fn u32(&mut self) -> Result<u32, String> {
        self.array().map(u32::from_le_bytes)
    }

    pub(crate) fn u64(&mut self) -> Result<u64, String> {
        self.array().map(u64::from_le_bytes)
    }

    pub(crate) fn i128(&mut self) -> Result<i128, String> {
        self.array().map(i128::from_le_bytes)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// An owner at fixed width (see [`fixed_owner`]).
    pub(crate) fn fixed_owner(&mut self) -> Result<Option<AddressBytes>, String> {
        match self.u8()? {
            0 => {
                self.take(33)?;
                Ok(None)
            }
            1 => Ok(Some(self.array()?)),
            other => Err(format!("owner flag {other}")),
        }
    }

    /// Where an output's bytes are (see [`loc_bytes`]).
    pub(crate) fn bytes_loc(&mut self) -> Result<BytesLoc, String> {
        Ok(BytesLoc {
            record: self.u64()?,
            offset: self.u32()?,
            len: self.u32()?,
        })
    }
}

/// An output's owner in the fixed-width rows of `spent.redb` and `ledger.checkpoint`: flag u8
/// (0 none, 1 address), then the address, or 33 zero bytes.
pub(crate) fn fixed_owner(owner: Option<&AddressBytes>) -> [u8; 34] {
    let mut b = [0u8; 34];
    if let Some(a) = owner {
        b[0] = 1;
        b[1..].copy_from_slice(a);
    }
    b
}

/// Where an output's bytes are, as the history files write it: log record u64 (or
/// `u64::MAX`: the ledger base), offset u32, length u32.
pub(crate) fn loc_bytes(loc: BytesLoc) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&loc.record.to_le_bytes());
    b[8..12].copy_from_slice(&loc.offset.to_le_bytes());
    b[12..].copy_from_slice(&loc.len.to_le_bytes());
    b
}
