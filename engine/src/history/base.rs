//! The ledger base: `history/base.bin`, the ledger at a pruning index as a TIP-35 full
//! snapshot file (target = ledger index, no diffs; layout in engine/FORMAT-snapshot.md).
//!
//! Once pruning retires the oldest log segments (`crate::log::Log::retire_below`), the blocks
//! that created the older outputs are gone, and so is the journal's way of rebuilding the
//! ledger from the start. The base takes their place: a node opens it as the start of its
//! ledger (outputs, solid entry points, milestone) and applies the journal's milestones after
//! it. It is written (temporary name, fsync, rename, directory fsync) before any segment it
//! replaces is retired, and replaced whole at each retirement.

use std::path::{Path, PathBuf};

use crate::genesis::Genesis;
use crate::snapshot::{self, FullHeader, FullWriter, SnapshotError, SnapshotOutput};

/// The base's file name in the history directory.
pub(crate) const FILE: &str = "base.bin";

/// Why the base could not be used or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BaseError {
    /// The file is unreadable or damaged.
    #[error(
        "{}: {source}; the segments it replaces are retired, so the node cannot rebuild the \
         ledger without it: restore the data directory from a backup, or start a new one from a \
         snapshot (--snapshot-full)", path.display()
    )]
    Unusable {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        source: SnapshotError,
    },
    /// The file describes another network.
    #[error(
        "{} holds the ledger of network {found:?}, this node is configured for {expected:?}: \
         use the data directory of that network", path.display()
    )]
    OtherNetwork {
        /// The file.
        path: PathBuf,
        /// The configured network.
        expected: String,
        /// The file's network.
        found: String,
    },
    /// The file's ledger cannot seed the engine.
    #[error("{}: {why}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// Writing failed.
    #[error("writing {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: SnapshotError,
    },
}

/// What a base holds: the ledger at `header.target_milestone_index` (= its ledger index).
#[derive(Debug)]
pub(crate) struct BaseContent {
    pub(crate) header: FullHeader,
    pub(crate) outputs: Vec<SnapshotOutput>,
    pub(crate) seps: Vec<[u8; 32]>,
}

/// The base's path in the history directory `dir`.
pub(crate) fn path(dir: &Path) -> PathBuf {
    dir.join(FILE)
}

/// The ledger start in `dir/base.bin`, if there is one; checked against `network`.
///
/// # Errors
/// [`BaseError`] naming the file: a base that exists is never skipped, because the log no
/// longer holds what it replaces.
pub(crate) fn read(dir: &Path, network: &str) -> Result<Option<Genesis>, BaseError> {
    let path = path(dir);
    if !path.exists() {
        return Ok(None);
    }
    let loaded = snapshot::load(&path, None, None).map_err(|source| BaseError::Unusable {
        path: path.clone(),
        source,
    })?;
    if loaded.network_name != network {
        return Err(BaseError::OtherNetwork {
            path,
            expected: network.to_owned(),
            found: loaded.network_name,
        });
    }
    Genesis::from_snapshot(&loaded)
        .map(Some)
        .map_err(|e| BaseError::Invalid {
            path,
            why: e.to_string(),
        })
}

/// Writes `content` as `dir/base.bin`, replacing the previous base atomically.
///
/// # Errors
/// [`BaseError::Write`]; the previous base is then unchanged.
pub(crate) fn write(dir: &Path, content: &BaseContent) -> Result<PathBuf, BaseError> {
    let path = path(dir);
    let failed = |source| BaseError::Write {
        path: path.clone(),
        source,
    };
    let mut w = FullWriter::create(&path, &content.header).map_err(failed)?;
    for o in &content.outputs {
        w.push_output(o).map_err(failed)?;
    }
    super::crash_point("base-outputs-written");
    for s in &content.seps {
        w.push_sep(s).map_err(failed)?;
    }
    w.finish().map_err(failed)
}
