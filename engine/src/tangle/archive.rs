//! Where the metadata of referenced blocks goes once their rows leave the tangle's memory.

use std::fs::File;
use std::path::PathBuf;

use hashbrown::HashMap;

use super::{BlockId, Inclusion};

/// What stays known of a referenced block once its row has left memory: the metadata the
/// milestone that referenced it fixed for good.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Archived {
    /// Index of the milestone that referenced it.
    pub referenced_by: u32,
    /// Position in that milestone's white-flag order.
    pub white_flag_index: u32,
    /// Inclusion state (never [`Inclusion::Pending`]).
    pub inclusion: Inclusion,
}

/// Why archived metadata could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ArchiveError(pub String);

/// Where the metadata of referenced blocks goes when their rows leave memory, and where it
/// is read back: the engine keeps it on disk beside the log (`history::BlockMetaFiles`);
/// [`MemoryArchive`] keeps it in a map for tests.
pub trait Archive: Send + Sync + std::fmt::Debug {
    /// The log record of the stored block `id`, if it is stored.
    fn locate(&self, id: &BlockId) -> Option<u64>;
    /// The archived metadata of block `id`, stored at `record`; `None` if none was written
    /// for that block there.
    ///
    /// # Errors
    /// The stored metadata is damaged (the message names the file).
    fn read(&self, id: &BlockId, record: u64) -> Result<Option<Archived>, ArchiveError>;
    /// Archives the metadata of the referenced block `id` stored at `record`.
    ///
    /// # Errors
    /// It could not be written; the row then stays in memory.
    fn write(&mut self, id: &BlockId, record: u64, meta: &Archived) -> Result<(), ArchiveError>;
    /// The files written since the last call, each with a handle of its own, so that the
    /// caller can make them durable (`fsync`) without holding the archive.
    ///
    /// # Errors
    /// A handle could not be opened.
    fn take_unsynced(&mut self) -> Result<Vec<(PathBuf, File)>, ArchiveError>;
    /// Drops the metadata of every block stored in a log segment below `segment` (retired
    /// by pruning). Returns how many files went.
    ///
    /// # Errors
    /// A file could not be deleted.
    fn retire_below(&mut self, segment: u32) -> Result<usize, ArchiveError>;
}

/// An [`Archive`] in memory (tests and benchmarks).
#[derive(Debug, Default)]
pub struct MemoryArchive {
    records: HashMap<BlockId, u64>,
    metas: HashMap<BlockId, Archived>,
}

impl Archive for MemoryArchive {
    fn locate(&self, id: &BlockId) -> Option<u64> {
        self.records.get(id).copied()
    }

    fn read(&self, id: &BlockId, record: u64) -> Result<Option<Archived>, ArchiveError> {
        if self.records.get(id) != Some(&record) {
            return Ok(None);
        }
        Ok(self.metas.get(id).copied())
    }

    fn write(&mut self, id: &BlockId, record: u64, meta: &Archived) -> Result<(), ArchiveError> {
        self.records.insert(*id, record);
        self.metas.insert(*id, *meta);
        Ok(())
    }

    fn take_unsynced(&mut self) -> Result<Vec<(PathBuf, File)>, ArchiveError> {
        Ok(Vec::new())
    }

    fn retire_below(&mut self, segment: u32) -> Result<usize, ArchiveError> {
        let below = |record: u64| crate::log::Location::from_u64(record).segment() < segment;
        let gone: Vec<BlockId> = self
            .records
            .iter()
            .filter(|(_, r)| below(**r))
            .map(|(id, _)| *id)
            .collect();
        for id in &gone {
            self.records.remove(id);
            self.metas.remove(id);
        }
        Ok(0)
    }
}
