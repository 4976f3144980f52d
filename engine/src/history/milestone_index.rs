//! The milestone index on disk (`history/milestones.redb`, layout in `engine/FORMAT.md`,
//! "Milestone index"): for each confirmed milestone, where its journal entry starts and its
//! milestone id, and the way back from a milestone id to its index. Without it a node holds
//! both in memory for every milestone since its ledger's start (≈ 48 B each) and frames the
//! whole journal at each open to rebuild them (issue 24: "what moves to disk: … milestones").
//!
//! Offsets are *logical*: a journal rewrite (a new ledger base drops the entries before it)
//! copies the kept entries byte for byte, so the distance between two entries never changes;
//! the journal turns a stored offset into a file position by subtracting its bias, the stored
//! offset of its first entry less the header (`crate::history::Journal`). A rewrite changes
//! the bias, never a row.
//!
//! Each row carries a CRC-32 of its index, offset and id: a row that fails it is reported with
//! the file's path and never used. Everything here is derived from the journal: the journal
//! checks the rows it starts from at each open, and a damaged or missing file is rebuilt by
//! framing the journal again.

use std::path::Path;

use redb::{ReadOnlyTable, ReadableTable, TableDefinition};

use super::redb_file::RedbFile;
use super::HistoryError;

/// The index's file name in the history directory.
pub(crate) const FILE: &str = "milestones.redb";

/// Bytes of an entry row: logical offset, milestone id, CRC-32.
const VALUE_LEN: usize = 8 + 32 + 4;

/// Milestone index → its entry's logical offset, its milestone id, and their checksum.
const ENTRIES: TableDefinition<'_, u32, [u8; VALUE_LEN]> = TableDefinition::new("entries");
/// Milestone id → milestone index.
const BY_ID: TableDefinition<'_, [u8; 32], u32> = TableDefinition::new("by_id");

/// Format version of the index's tables.
const VERSION: u32 = 1;

/// One milestone's row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IndexRow {
    pub(crate) index: u32,
    /// Where the milestone's journal entry starts, as a logical offset.
    pub(crate) offset: u64,
    pub(crate) milestone_id: [u8; 32],
}

fn encode(row: &IndexRow) -> [u8; VALUE_LEN] {
    let mut v = [0u8; VALUE_LEN];
    v[0..8].copy_from_slice(&row.offset.to_le_bytes());
    v[8..40].copy_from_slice(&row.milestone_id);
    let crc = checksum(row.index, &v[0..40]);
    v[40..44].copy_from_slice(&crc.to_le_bytes());
    v
}

fn checksum(index: u32, fields: &[u8]) -> u32 {
    let mut crc = crc32fast::Hasher::new();
    crc.update(&index.to_le_bytes());
    crc.update(fields);
    crc.finalize()
}

fn decode(index: u32, v: &[u8; VALUE_LEN]) -> Result<IndexRow, String> {
    let (fields, crc) = v.split_at(40);
    if checksum(index, fields).to_le_bytes() != crc {
        return Err(format!("the row of milestone {index} fails its checksum"));
    }
    let (offset, id) = fields.split_at(8);
    Ok(IndexRow {
        index,
        offset: u64::from_le_bytes(offset.try_into().map_err(|_| "short row")?),
        milestone_id: id.try_into().map_err(|_| "short row")?,
    })
}

/// The milestone index of a node's journal, on disk.
#[derive(Debug)]
pub(crate) struct MilestoneIndex {
    file: RedbFile,
}

impl MilestoneIndex {
    /// Opens (or creates) the index at `path`, its page cache capped at `cache_bytes`. A file
    /// `redb` cannot open, or of another version, is [`HistoryError::Damaged`]: the caller
    /// removes it and the journal's next open rebuilds it.
    ///
    /// # Errors
    /// I/O failures, or a damaged file.
    pub(crate) fn open(path: &Path, cache_bytes: usize) -> Result<Self, HistoryError> {
        let file = RedbFile::open(path, cache_bytes, VERSION, |file, tx| {
            tx.open_table(ENTRIES).map_err(|e| file.err(e))?;
            tx.open_table(BY_ID).map_err(|e| file.err(e))?;
            Ok(())
        })?;
        Ok(Self { file })
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        self.file.path()
    }

    fn entries(&self) -> Result<ReadOnlyTable<u32, [u8; VALUE_LEN]>, HistoryError> {
        let tx = self.file.begin_read()?;
        tx.open_table(ENTRIES).map_err(|e| self.file.err(e))
    }

    /// The highest milestone stored, `None` when empty.
    ///
    /// # Errors
    /// The file cannot be read.
    pub(crate) fn last(&self) -> Result<Option<u32>, HistoryError> {
        let table = self.entries()?;
        let last = table.last().map_err(|e| self.file.err(e))?;
        Ok(last.map(|(k, _)| k.value()))
    }

    /// How many milestones are stored.
    #[cfg(test)]
    pub(crate) fn len(&self) -> Result<u64, HistoryError> {
        use redb::ReadableTableMetadata;
        self.entries()?.len().map_err(|e| self.file.err(e))
    }

    /// The row of milestone `index`, if stored.
    ///
    /// # Errors
    /// The file cannot be read, or the row fails its checksum ([`HistoryError::Damaged`]).
    pub(crate) fn get(&self, index: u32) -> Result<Option<IndexRow>, HistoryError> {
        self.snapshot()?.get(index)
    }

    /// The row of the milestone whose id is `id`, if stored (one read transaction for both
    /// tables). The row's own id is not compared with `id`: the caller does, with the entry's.
    ///
    /// # Errors
    /// The file cannot be read, or the row fails its checksum ([`HistoryError::Damaged`]).
    pub(crate) fn find(&self, id: &[u8; 32]) -> Result<Option<IndexRow>, HistoryError> {
        let tx = self.file.begin_read()?;
        let by_id = tx.open_table(BY_ID).map_err(|e| self.file.err(e))?;
        let Some(index) = by_id.get(id).map_err(|e| self.file.err(e))? else {
            return Ok(None);
        };
        let entries = tx.open_table(ENTRIES).map_err(|e| self.file.err(e))?;
        IndexSnapshot {
            table: entries,
            path: self.path().to_path_buf(),
        }
        .get(index.value())
    }

    /// The rows as they are now, read later without regard to commits made meanwhile.
    ///
    /// # Errors
    /// The file cannot be read.
    pub(crate) fn snapshot(&self) -> Result<IndexSnapshot, HistoryError> {
        Ok(IndexSnapshot {
            table: self.entries()?,
            path: self.path().to_path_buf(),
        })
    }

    /// Stores `rows` and removes every row of a milestone below `forget_below` (entries the
    /// journal no longer holds), in one durable commit; rows below it are not stored.
    ///
    /// # Errors
    /// I/O failures; nothing is changed then.
    pub(crate) fn store(&self, rows: &[IndexRow], forget_below: u32) -> Result<(), HistoryError> {
        let tx = self.file.begin_write()?;
        {
            let mut entries = tx.open_table(ENTRIES).map_err(|e| self.file.err(e))?;
            let mut by_id = tx.open_table(BY_ID).map_err(|e| self.file.err(e))?;
            self.remove(&mut entries, &mut by_id, ..forget_below)?;
            for row in rows.iter().filter(|r| r.index >= forget_below) {
                entries
                    .insert(row.index, encode(row))
                    .map_err(|e| self.file.err(e))?;
                by_id
                    .insert(row.milestone_id, row.index)
                    .map_err(|e| self.file.err(e))?;
            }
        }
        super::crash_point("milestone-index-before-commit");
        tx.commit().map_err(|e| self.file.err(e))
    }

    /// Removes the rows of milestones after `index` (entries a resume makes again), in one
    /// durable commit.
    ///
    /// # Errors
    /// I/O failures; nothing is changed then.
    pub(crate) fn truncate_after(&self, index: u32) -> Result<(), HistoryError> {
        let Some(from) = index.checked_add(1) else {
            return Ok(());
        };
        let tx = self.file.begin_write()?;
        {
            let mut entries = tx.open_table(ENTRIES).map_err(|e| self.file.err(e))?;
            let mut by_id = tx.open_table(BY_ID).map_err(|e| self.file.err(e))?;
            self.remove(&mut entries, &mut by_id, from..)?;
        }
        tx.commit().map_err(|e| self.file.err(e))
    }

    /// Removes every row.
    ///
    /// # Errors
    /// I/O failures.
    pub(crate) fn clear(&self) -> Result<(), HistoryError> {
        let tx = self.file.begin_write()?;
        tx.delete_table(ENTRIES).map_err(|e| self.file.err(e))?;
        tx.delete_table(BY_ID).map_err(|e| self.file.err(e))?;
        tx.open_table(ENTRIES).map_err(|e| self.file.err(e))?;
        tx.open_table(BY_ID).map_err(|e| self.file.err(e))?;
        tx.commit().map_err(|e| self.file.err(e))
    }

    /// Removes the rows of the milestones in `range` from both tables (a row whose id entry
    /// names another index leaves that entry alone).
    fn remove(
        &self,
        entries: &mut redb::Table<'_, u32, [u8; VALUE_LEN]>,
        by_id: &mut redb::Table<'_, [u8; 32], u32>,
        range: impl std::ops::RangeBounds<u32>,
    ) -> Result<(), HistoryError> {
        let gone = entries
            .extract_from_if(range, |_, _| true)
            .map_err(|e| self.file.err(e))?;
        let mut ids = Vec::new();
        for row in gone {
            let (k, v) = row.map_err(|e| self.file.err(e))?;
            // A damaged row's id is taken as it is: at worst an id entry is left behind, and
            // a lookup through it finds no row or another milestone's (which the caller
            // compares with the id it asked for).
            let v = v.value();
            let id: [u8; 32] = v[8..40].try_into().unwrap_or([0; 32]);
            ids.push((id, k.value()));
        }
        for (id, index) in ids {
            let names = by_id.get(&id).map_err(|e| self.file.err(e))?;
            if names.map(|v| v.value()) == Some(index) {
                by_id.remove(&id).map_err(|e| self.file.err(e))?;
            }
        }
        Ok(())
    }
}

/// The milestone index as it was when taken (see [`MilestoneIndex::snapshot`]).
pub(crate) struct IndexSnapshot {
    table: ReadOnlyTable<u32, [u8; VALUE_LEN]>,
    path: std::path::PathBuf,
}

impl std::fmt::Debug for IndexSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexSnapshot")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl IndexSnapshot {
    /// The index file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The row of milestone `index`, if it was stored.
    ///
    /// # Errors
    /// The file cannot be read, or the row fails its checksum ([`HistoryError::Damaged`]).
    pub(crate) fn get(&self, index: u32) -> Result<Option<IndexRow>, HistoryError> {
        let Some(v) = self
            .table
            .get(index)
            .map_err(|e| super::redb_file::failure(&self.path, e.into()))?
        else {
            return Ok(None);
        };
        decode(index, &v.value())
            .map(Some)
            .map_err(|why| HistoryError::Damaged {
                path: self.path.clone(),
                why,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(index: u32) -> IndexRow {
        IndexRow {
            index,
            offset: 32 + 100 * u64::from(index),
            milestone_id: [index as u8; 32],
        }
    }

    #[test]
    fn stores_reads_forgets_and_truncates_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let index = MilestoneIndex::open(&path, 1 << 20).unwrap();
        assert_eq!(index.last().unwrap(), None);
        let rows: Vec<_> = (5..=20).map(row).collect();
        index.store(&rows, 0).unwrap();
        let before = index.snapshot().unwrap();
        assert_eq!(index.last().unwrap(), Some(20));
        assert_eq!(index.get(7).unwrap(), Some(row(7)));
        assert_eq!(index.find(&[7; 32]).unwrap(), Some(row(7)));
        assert_eq!(index.get(21).unwrap(), None);

        // A later store forgets what is below its bound and skips rows there.
        index.store(&[row(3), row(21)], 10).unwrap();
        assert_eq!(index.get(9).unwrap(), None);
        assert_eq!(index.get(3).unwrap(), None);
        assert_eq!(index.find(&[9; 32]).unwrap(), None);
        assert_eq!(index.get(10).unwrap(), Some(row(10)));
        assert_eq!(index.get(21).unwrap(), Some(row(21)));
        assert_eq!(index.len().unwrap(), 12);
        // The snapshot taken before still reads what was there.
        assert_eq!(before.get(9).unwrap(), Some(row(9)));

        index.truncate_after(15).unwrap();
        assert_eq!(index.last().unwrap(), Some(15));
        assert_eq!(index.find(&[16; 32]).unwrap(), None);
        drop(index);

        let index = MilestoneIndex::open(&path, 1 << 20).unwrap();
        assert_eq!(index.get(15).unwrap(), Some(row(15)));
        index.clear().unwrap();
        assert_eq!(index.last().unwrap(), None);
        assert_eq!(index.find(&[15; 32]).unwrap(), None);
    }

    #[test]
    fn a_flipped_byte_in_a_row_is_detected_and_named() {
        let mut v = encode(&row(4));
        assert_eq!(decode(4, &v), Ok(row(4)));
        assert!(decode(5, &v).is_err(), "a row read under another index");
        for i in 0..VALUE_LEN {
            v[i] ^= 0x10;
            assert!(decode(4, &v).is_err(), "byte {i}");
            v[i] ^= 0x10;
        }
    }

    #[test]
    fn a_file_that_is_not_an_index_is_damaged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(&path, vec![0x5A; 8192]).unwrap();
        let err = MilestoneIndex::open(&path, 1 << 20).unwrap_err();
        assert!(
            matches!(&err, HistoryError::Damaged { path: p, .. } if *p == path),
            "{err}"
        );
    }
}
