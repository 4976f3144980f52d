//! Errors of the block log.

use std::io;
use std::path::PathBuf;

/// An error of the block log.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LogError {
    /// An I/O operation on a log file failed.
    #[error("{op} {}: {source}", path.display())]
    Io {
        /// What the log was doing (`"open"`, `"write"`, `"fsync"`, ...).
        op: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// Bytes that must be intact (a sealed segment, a segment header) are not.
    ///
    /// A torn tail of the active segment is never reported this way: it is truncated.
    #[error("log corrupted in segment {segment} at offset {offset}: {reason}")]
    Corrupted {
        /// The segment number.
        segment: u32,
        /// The byte offset inside the segment file.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// A record with an intact checksum has a kind this version does not know (a newer format).
    #[error("segment {segment} offset {offset}: unsupported record kind {kind:#04x}")]
    UnsupportedRecord {
        /// The segment number.
        segment: u32,
        /// The byte offset of the record inside the segment file.
        offset: u64,
        /// The record kind byte.
        kind: u8,
    },
    /// The record does not fit in one segment.
    #[error("record of {len} bytes exceeds the maximum of {max} bytes")]
    RecordTooLarge {
        /// The body length asked for.
        len: usize,
        /// The largest body the configured segment size allows.
        max: usize,
    },
    /// A file of the log failed its checks.
    #[error("{} is damaged: {why}", path.display())]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong and what to do.
        why: String,
    },
    /// The log reached its maximum number of segments or records.
    #[error("log is full: {0}")]
    Full(&'static str),
    /// The configuration is unusable.
    #[error("invalid log configuration: {0}")]
    Config(&'static str),
    /// An earlier `fsync` failed; the log refuses further appends until it is reopened.
    ///
    /// After a failed `fsync` the kernel may have dropped dirty pages, so what is on disk is
    /// unknown; reopening rescans the files and recovers a consistent state.
    #[error("log is poisoned by an earlier fsync failure; reopen it")]
    Poisoned,
    /// Another process (or another open log in this one) holds the directory's lock file.
    #[error("{} is locked: the log is in use by another process (stop it first)", path.display())]
    Locked {
        /// The lock file.
        path: PathBuf,
    },
}

impl LogError {
    /// Whether this is a write refused for lack of space (ENOSPC, or EDQUOT: over quota).
    pub fn is_storage_full(&self) -> bool {
        const ENOSPC: i32 = 28;
        const EDQUOT: i32 = 122;
        match self {
            Self::Io { source, .. } => {
                source.kind() == io::ErrorKind::StorageFull
                    || matches!(source.raw_os_error(), Some(ENOSPC | EDQUOT))
            }
            _ => false,
        }
    }

    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io {
            op,
            path: path.into(),
            source,
        }
    }
}
