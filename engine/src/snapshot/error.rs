//! Why a snapshot file was refused: where in which file (format errors), or which import rule
//! of docs/snapshots-pruning.md §1.10 and §3.2-3.3 the content breaks.

use std::{io, path::PathBuf};

/// A snapshot file that cannot be read, written or imported.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The file cannot be opened or created.
    #[error("{path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// A read failed for another reason than the end of the file.
    #[error("{file}, {section} at byte {offset}: read failed: {source}")]
    Io {
        /// `full snapshot` or `delta snapshot`.
        file: &'static str,
        /// The part of the file (header, outputs, milestone diffs, solid entry points).
        section: &'static str,
        /// Byte offset of the field being read.
        offset: u64,
        /// The OS error.
        source: io::Error,
    },
    /// The bytes do not follow the layout (engine/FORMAT-snapshot.md): a short file, a length
    /// over its cap, a count or offset that disagrees with the content, an invalid record.
    #[error("{file}, {section} at byte {offset}: {reason}")]
    Format {
        /// `full snapshot` or `delta snapshot`.
        file: &'static str,
        /// The part of the file.
        section: &'static str,
        /// Byte offset of the field or record that is wrong.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// The delta file does not continue the full file (docs/snapshots-pruning.md §1.7).
    #[error(
        "snapshots not mergeable: the delta's full snapshot target milestone id 0x{} is not the \
         full snapshot's target milestone id 0x{}",
        hex::encode(delta),
        hex::encode(full)
    )]
    NotMergeable {
        /// The delta header's Full Snapshot Target Milestone ID.
        delta: [u8; 32],
        /// The full header's Target Milestone ID.
        full: [u8; 32],
    },
    /// The file is for another network.
    #[error("snapshot is for network {found:?}, expected {expected:?}")]
    WrongNetwork {
        /// The network asked for.
        expected: String,
        /// The network name in the full file's protocol parameters.
        found: String,
    },
    /// The content is well formed but the ledger it describes is not consistent: a diff at
    /// the wrong index, an output spent twice, a supply that does not add up.
    #[error("{file}: {reason}")]
    Ledger {
        /// `full snapshot` or `delta snapshot`.
        file: &'static str,
        /// What is inconsistent.
        reason: String,
    },
    /// Writing a file failed.
    #[error("writing {path}: {reason}")]
    Write {
        /// The file being written.
        path: PathBuf,
        /// What failed.
        reason: String,
    },
}
