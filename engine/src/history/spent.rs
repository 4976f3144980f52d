//! Spent outputs on disk (`history/spent.redb`, layout in `engine/FORMAT.md`, "Spent
//! outputs"): the ledger keeps its unspent rows in memory and hands every spent row here once
//! a checkpoint names the milestone that spent it, so that memory does not grow with the
//! transactions a node has confirmed (issue 24: "what moves to disk: … spent outputs").
//!
//! An embedded B-tree store (`redb`) rather than files of our own: the rows are looked up by
//! output id (uniform hashes, no locality), inserted once per checkpoint, removed by spending
//! milestone when pruning, and rewritten in place when the ledger base moves their bytes;
//! `redb` does each in O(log n) with atomic, durable commits, which a sorted-run design would
//! have to build (merges, manifests). Each value carries a CRC-32 of its key and fields: a row
//! that fails it is reported with the file's path and never served.
//!
//! What the store holds is exact: every row spent at a milestone at or below `through`, and
//! nothing spent above it (a resume removes rows above its checkpoint first). Everything in it
//! is derived from the milestone journal, so a damaged or missing store is rebuilt by a
//! replay.

use std::path::Path;

use redb::{ReadableTable, TableDefinition};

use super::redb_file::{RedbFile, META};
use super::{fixed_owner, loc_bytes, Cursor, HistoryError};
use crate::utxo::{BytesLoc, OutputId, OutputRow, Spent};

/// The store's file name in the history directory.
pub(crate) const FILE: &str = "spent.redb";

/// Bytes of a value: the row's fields, then a CRC-32 of the key and those fields.
const VALUE_LEN: usize = 32 + 8 + 1 + 33 + 4 * 4 + 32 + 8 + 4 + 4 + 4;

/// Output id → the row's fields and their checksum.
const ROWS: TableDefinition<'_, OutputId, [u8; VALUE_LEN]> = TableDefinition::new("spent_rows");
/// (Spending milestone, output id) → nothing: which rows a milestone spent, for pruning and
/// for removing rows above a checkpoint (keys sort by milestone).
const BY_MILESTONE: TableDefinition<'_, (u32, OutputId), ()> =
    TableDefinition::new("spent_by_milestone");
// `meta` (`RedbFile`'s): `through` → the milestone up to which every spent row is stored.

/// Format version of the store's tables.
const VERSION: u32 = 1;

/// The spent rows of a node's ledger, on disk.
#[derive(Debug)]
pub(crate) struct SpentStore {
    file: RedbFile,
}

fn encode(row: &OutputRow) -> Option<[u8; VALUE_LEN]> {
    let spent = row.spent?;
    let mut v = Vec::with_capacity(VALUE_LEN);
    v.extend_from_slice(&row.block_id);
    v.extend_from_slice(&row.amount.to_le_bytes());
    v.extend_from_slice(&fixed_owner(row.owner.as_ref()));
    v.extend_from_slice(&row.booked_index.to_le_bytes());
    v.extend_from_slice(&row.booked_timestamp.to_le_bytes());
    v.extend_from_slice(&spent.index.to_le_bytes());
    v.extend_from_slice(&spent.timestamp.to_le_bytes());
    v.extend_from_slice(&spent.transaction_id);
    v.extend_from_slice(&loc_bytes(row.loc));
    let mut crc = crc32fast::Hasher::new();
    crc.update(&row.output_id);
    crc.update(&v);
    v.extend_from_slice(&crc.finalize().to_le_bytes());
    v.try_into().ok()
}

fn decode(id: &OutputId, v: &[u8; VALUE_LEN]) -> Result<OutputRow, String> {
    let (fields, crc) = v.split_at(VALUE_LEN - 4);
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(id);
    hasher.update(fields);
    if hasher.finalize().to_le_bytes() != crc {
        return Err(format!(
            "the row of output {} fails its checksum",
            hex::encode(id)
        ));
    }
    let mut c = Cursor::new(fields);
    let block_id = c.array()?;
    let amount = c.u64()?;
    let owner = c.fixed_owner()?;
    Ok(OutputRow {
        output_id: *id,
        block_id,
        amount,
        owner,
        booked_index: c.u32()?,
        booked_timestamp: c.u32()?,
        spent: Some(Spent {
            index: c.u32()?,
            timestamp: c.u32()?,
            transaction_id: c.array()?,
        }),
        loc: c.bytes_loc()?,
    })
}

impl SpentStore {
    /// Opens (or creates) the store at `path`, its page cache capped at `cache_bytes`. A file
    /// `redb` cannot open, or of another version, is [`HistoryError::Damaged`]: the caller
    /// removes it and rebuilds.
    ///
    /// # Errors
    /// I/O failures, or a damaged file.
    pub(crate) fn open(path: &Path, cache_bytes: usize) -> Result<Self, HistoryError> {
        let file = RedbFile::open(path, cache_bytes, VERSION, |file, tx| {
            let mut meta = tx.open_table(META).map_err(|e| file.err(e))?;
            if meta.get("through").map_err(|e| file.err(e))?.is_none() {
                meta.insert("through", 0).map_err(|e| file.err(e))?;
            }
            tx.open_table(ROWS).map_err(|e| file.err(e))?;
            tx.open_table(BY_MILESTONE).map_err(|e| file.err(e))?;
            Ok(())
        })?;
        Ok(Self { file })
    }

    fn err(&self, e: impl Into<redb::Error>) -> HistoryError {
        self.file.err(e)
    }

    fn damaged(&self, why: String) -> HistoryError {
        self.file.damaged(why)
    }

    fn begin_write(&self) -> Result<redb::WriteTransaction, HistoryError> {
        self.file.begin_write()
    }

    /// Every row spent at or below this milestone is stored (0: none yet).
    ///
    /// # Errors
    /// The file cannot be read.
    pub(crate) fn through(&self) -> Result<u32, HistoryError> {
        let tx = self.file.begin_read()?;
        let meta = tx.open_table(META).map_err(|e| self.err(e))?;
        let through = meta.get("through").map_err(|e| self.err(e))?;
        Ok(through.map_or(0, |v| v.value()))
    }

    /// Stores `rows` (each spent at or below `through`) and records that every row spent up to
    /// `through` is stored, in one durable commit.
    ///
    /// # Errors
    /// I/O failures; nothing is changed then.
    pub(crate) fn insert(&self, rows: &[OutputRow], through: u32) -> Result<(), HistoryError> {
        let tx = self.begin_write()?;
        {
            let mut table = tx.open_table(ROWS).map_err(|e| self.err(e))?;
            let mut by_ms = tx.open_table(BY_MILESTONE).map_err(|e| self.err(e))?;
            for row in rows {
                let (Some(value), Some(spent)) = (encode(row), row.spent) else {
                    continue;
                };
                table
                    .insert(row.output_id, value)
                    .map_err(|e| self.err(e))?;
                by_ms
                    .insert((spent.index, row.output_id), ())
                    .map_err(|e| self.err(e))?;
            }
            let mut meta = tx.open_table(META).map_err(|e| self.err(e))?;
            meta.insert("through", through).map_err(|e| self.err(e))?;
        }
        super::crash_point("spent-before-commit");
        tx.commit().map_err(|e| self.err(e))
    }

    /// The stored row of `id`, if it is there.
    ///
    /// # Errors
    /// The file cannot be read, or the row fails its checksum ([`HistoryError::Damaged`]).
    pub(crate) fn get(&self, id: &OutputId) -> Result<Option<OutputRow>, HistoryError> {
        let tx = self.file.begin_read()?;
        let table = tx.open_table(ROWS).map_err(|e| self.err(e))?;
        let Some(v) = table.get(id).map_err(|e| self.err(e))? else {
            return Ok(None);
        };
        decode(id, &v.value())
            .map(Some)
            .map_err(|why| self.damaged(why))
    }

    /// True when `id` is stored (spent at or below `through`).
    ///
    /// # Errors
    /// The file cannot be read.
    pub(crate) fn contains(&self, id: &OutputId) -> Result<bool, HistoryError> {
        let tx = self.file.begin_read()?;
        let table = tx.open_table(ROWS).map_err(|e| self.err(e))?;
        Ok(table.get(id).map_err(|e| self.err(e))?.is_some())
    }

    /// The stored rows spent after milestone `index` (the ledger base's rows that were spent
    /// after it), in order of spending milestone.
    ///
    /// # Errors
    /// The file cannot be read, or a row fails its checksum.
    pub(crate) fn spent_after(&self, index: u32) -> Result<Vec<OutputRow>, HistoryError> {
        let tx = self.file.begin_read()?;
        let by_ms = tx.open_table(BY_MILESTONE).map_err(|e| self.err(e))?;
        let table = tx.open_table(ROWS).map_err(|e| self.err(e))?;
        let Some(from) = index.checked_add(1) else {
            return Ok(Vec::new());
        };
        let mut rows = Vec::new();
        for k in by_ms.range((from, [0u8; 34])..).map_err(|e| self.err(e))? {
            let (k, _) = k.map_err(|e| self.err(e))?;
            let (_, id) = k.value();
            let v = table.get(&id).map_err(|e| self.err(e))?.ok_or_else(|| {
                self.damaged(format!(
                    "output {} is listed but not stored",
                    hex::encode(id)
                ))
            })?;
            rows.push(decode(&id, &v.value()).map_err(|why| self.damaged(why))?);
        }
        Ok(rows)
    }

    /// Points the stored rows in `moves` at other bytes (the ledger base took them), in one
    /// durable commit. Ids not stored are skipped.
    ///
    /// # Errors
    /// I/O failures, or a row that fails its checksum.
    pub(crate) fn relocate(&self, moves: &[(OutputId, BytesLoc)]) -> Result<(), HistoryError> {
        let tx = self.begin_write()?;
        {
            let mut table = tx.open_table(ROWS).map_err(|e| self.err(e))?;
            for (id, loc) in moves {
                let Some(old) = table.get(id).map_err(|e| self.err(e))?.map(|v| v.value()) else {
                    continue;
                };
                let mut row = decode(id, &old).map_err(|why| self.damaged(why))?;
                row.loc = *loc;
                if let Some(v) = encode(&row) {
                    table.insert(*id, v).map_err(|e| self.err(e))?;
                }
            }
        }
        tx.commit().map_err(|e| self.err(e))
    }

    /// Removes the rows spent at milestones in `range` (pruning: at or below the pruning
    /// index; a resume: above its checkpoint), and lowers `through` to `keep_through` when it
    /// is above. Returns how many rows went.
    ///
    /// # Errors
    /// I/O failures; nothing is changed then.
    pub(crate) fn remove_spent(
        &self,
        range: std::ops::RangeInclusive<u32>,
        keep_through: Option<u32>,
    ) -> Result<usize, HistoryError> {
        let tx = self.begin_write()?;
        let removed = {
            let mut by_ms = tx.open_table(BY_MILESTONE).map_err(|e| self.err(e))?;
            let mut table = tx.open_table(ROWS).map_err(|e| self.err(e))?;
            let lo = (*range.start(), [0u8; 34]);
            let hi = (*range.end(), [0xFFu8; 34]);
            let gone = by_ms
                .extract_from_if(lo..=hi, |_, ()| true)
                .map_err(|e| self.err(e))?;
            let mut ids = Vec::new();
            for k in gone {
                let (k, _) = k.map_err(|e| self.err(e))?;
                ids.push(k.value().1);
            }
            for id in &ids {
                table.remove(id).map_err(|e| self.err(e))?;
            }
            let mut meta = tx.open_table(META).map_err(|e| self.err(e))?;
            let through = meta
                .get("through")
                .map_err(|e| self.err(e))?
                .map_or(0, |v| v.value());
            if let Some(keep) = keep_through.filter(|k| through > *k) {
                meta.insert("through", keep).map_err(|e| self.err(e))?;
            }
            ids.len()
        };
        tx.commit().map_err(|e| self.err(e))?;
        Ok(removed)
    }

    /// Removes every row (a replay rebuilds them all).
    ///
    /// # Errors
    /// I/O failures.
    pub(crate) fn clear(&self) -> Result<(), HistoryError> {
        self.remove_spent(0..=u32::MAX, Some(0)).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(tx: u8, i: u16, booked: u32, spent: u32) -> OutputRow {
        let mut id = [0u8; 34];
        id[0] = tx;
        id[32..].copy_from_slice(&i.to_le_bytes());
        OutputRow {
            output_id: id,
            block_id: [tx; 32],
            amount: 1000 + u64::from(tx),
            owner: tx.is_multiple_of(2).then_some([tx; 33]),
            booked_index: booked,
            booked_timestamp: booked * 10,
            spent: Some(Spent {
                index: spent,
                timestamp: spent * 10,
                transaction_id: [spent as u8; 32],
            }),
            loc: BytesLoc {
                record: u64::from(tx) << 32,
                offset: 40,
                len: 60,
            },
        }
    }

    #[test]
    fn stores_reads_prunes_and_truncates_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let store = SpentStore::open(&path, 1 << 20).unwrap();
        assert_eq!(store.through().unwrap(), 0);
        let rows: Vec<_> = (1..=6).map(|t| row(t, 0, 1, u32::from(t) + 1)).collect();
        store.insert(&rows, 7).unwrap();
        assert_eq!(store.through().unwrap(), 7);
        for r in &rows {
            assert_eq!(store.get(&r.output_id).unwrap().as_ref(), Some(r));
            assert!(store.contains(&r.output_id).unwrap());
        }
        assert_eq!(store.get(&row(9, 0, 1, 2).output_id).unwrap(), None);
        let after: Vec<_> = store.spent_after(5).unwrap();
        assert_eq!(after, rows[4..].to_vec());
        // Reopened: the same.
        drop(store);
        let store = SpentStore::open(&path, 1 << 20).unwrap();
        assert_eq!(
            store.get(&rows[2].output_id).unwrap().as_ref(),
            Some(&rows[2])
        );
        // Pruning at 3 removes the rows spent at 2 and 3; `through` stays.
        assert_eq!(store.remove_spent(0..=3, None).unwrap(), 2);
        assert_eq!(store.get(&rows[0].output_id).unwrap(), None);
        assert_eq!(store.through().unwrap(), 7);
        // Above a checkpoint at 5: the rows spent at 6 and 7 go, `through` comes down.
        assert_eq!(store.remove_spent(6..=u32::MAX, Some(5)).unwrap(), 2);
        assert_eq!(store.through().unwrap(), 5);
        let kept: Vec<_> = rows
            .iter()
            .filter(|r| store.get(&r.output_id).unwrap().is_some())
            .map(|r| r.spent.map(|s| s.index))
            .collect();
        assert_eq!(kept, vec![Some(4), Some(5)]);
        let mut moved = rows[2].clone();
        moved.loc = BytesLoc {
            record: BytesLoc::GENESIS,
            offset: 7,
            len: 60,
        };
        store.relocate(&[(moved.output_id, moved.loc)]).unwrap();
        assert_eq!(store.get(&moved.output_id).unwrap(), Some(moved));
        store.clear().unwrap();
        assert_eq!(store.through().unwrap(), 0);
        assert_eq!(store.spent_after(0).unwrap(), Vec::new());
    }

    #[test]
    fn a_flipped_byte_in_a_row_is_detected_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let r = row(4, 1, 1, 2);
        {
            let store = SpentStore::open(&path, 1 << 20).unwrap();
            store.insert(std::slice::from_ref(&r), 2).unwrap();
        }
        let mut bytes = std::fs::read(&path).unwrap();
        // The value starts with the block id ([4; 32]) followed by the amount (1004).
        let mut needle = vec![4u8; 32];
        needle.extend_from_slice(&1004u64.to_le_bytes());
        let at = bytes
            .windows(needle.len())
            .position(|w| w == needle.as_slice())
            .expect("the row's value in the file");
        bytes[at + 35] ^= 0x01;
        std::fs::write(&path, &bytes).unwrap();
        let store = SpentStore::open(&path, 1 << 20).unwrap();
        let err = store.get(&r.output_id).unwrap_err();
        assert!(matches!(err, HistoryError::Damaged { .. }), "{err}");
        assert!(err.to_string().contains("spent.redb"), "{err}");
        assert!(err.to_string().contains("checksum"), "{err}");
    }

    #[test]
    fn a_file_that_is_not_a_store_is_damaged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(&path, vec![0x5A; 8192]).unwrap();
        let err = SpentStore::open(&path, 1 << 20).unwrap_err();
        assert!(matches!(err, HistoryError::Damaged { .. }), "{err}");
        assert!(err.to_string().contains("spent.redb"), "{err}");
    }
}
