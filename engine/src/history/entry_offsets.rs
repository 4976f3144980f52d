//! Where each journal entry starts and whose milestone it is: stored in the milestone index
//! (`super::MilestoneIndex`) up to a point, and held in memory only for the entries appended
//! since the last commit (the tail). Offsets are logical (see `milestone_index.rs`); the bias
//! turns them into positions in the journal file as it is now.

use std::collections::HashMap;
use std::sync::Arc;

use super::milestone_index::{IndexRow, IndexSnapshot, MilestoneIndex};
use super::HistoryError;

/// Milestones whose rows the tail holds before a running node stores them (one durable commit
/// of the index per this many milestones).
pub(crate) const RUN_BATCH: usize = 1 << 10;

/// The journal's entry offsets and milestone ids.
#[derive(Debug)]
pub(super) struct EntryOffsets {
    store: Arc<MilestoneIndex>,
    /// Logical offset − file position.
    bias: u64,
    /// The index of the tail's first row: every milestone from the journal's first to the one
    /// before is stored.
    tail_first: u32,
    /// Logical offset and milestone id, from `tail_first` on.
    tail: Vec<(u64, [u8; 32])>,
    tail_ids: HashMap<[u8; 32], u32>,
}

impl EntryOffsets {
    /// Offsets whose rows before `tail_first` are stored with this `bias`.
    pub(super) fn new(store: Arc<MilestoneIndex>, bias: u64, tail_first: u32) -> Self {
        Self {
            store,
            bias,
            tail_first,
            tail: Vec::new(),
            tail_ids: HashMap::new(),
        }
    }

    /// The first milestone whose row is held in memory, not stored.
    pub(super) fn tail_first(&self) -> u32 {
        self.tail_first
    }

    /// The index the rows are stored in.
    pub(super) fn store(&self) -> &Arc<MilestoneIndex> {
        &self.store
    }

    /// Records that the entry of milestone `index` (the next one) starts at file position `at`.
    pub(super) fn push(&mut self, index: u32, at: u64, milestone_id: [u8; 32]) {
        debug_assert_eq!(index as usize, self.tail_first as usize + self.tail.len());
        self.tail.push((at + self.bias, milestone_id));
        self.tail_ids.insert(milestone_id, index);
    }

    /// The file position of milestone `index`'s entry; `None` when the journal (from
    /// `first_index`) does not hold it.
    ///
    /// # Errors
    /// The index cannot be read, or lacks a row it must hold (named).
    pub(super) fn position(
        &self,
        index: u32,
        first_index: u32,
    ) -> Result<Option<u64>, HistoryError> {
        if index < first_index {
            return Ok(None);
        }
        if index >= self.tail_first {
            let k = (index - self.tail_first) as usize;
            return Ok(self.tail.get(k).map(|(o, _)| o - self.bias));
        }
        stored_position(self.store.get(index)?, index, self.bias, self.store.path()).map(Some)
    }

    /// The milestone whose id is `id` and the file position of its entry, if the journal (from
    /// `first_index`) holds it (the caller checks the entry's id: an index row may be damaged).
    ///
    /// # Errors
    /// The index cannot be read, or the row fails its checksum.
    pub(super) fn find(
        &self,
        id: &[u8; 32],
        first_index: u32,
    ) -> Result<Option<(u32, u64)>, HistoryError> {
        if let Some(&index) = self.tail_ids.get(id) {
            if index < first_index {
                return Ok(None);
            }
            let k = (index - self.tail_first) as usize;
            return Ok(self.tail.get(k).map(|(o, _)| (index, o - self.bias)));
        }
        match self.store.find(id)? {
            Some(row) if row.index >= first_index => {
                let at = stored_position(Some(row), row.index, self.bias, self.store.path())?;
                Ok(Some((row.index, at)))
            }
            _ => Ok(None),
        }
    }

    /// The journal file was rewritten without its first `shift` bytes of entries.
    pub(super) fn rewritten(&mut self, shift: u64) {
        self.bias += shift;
    }

    /// The tail's rows of milestones at or below `through`.
    pub(super) fn rows_through(&self, through: u32) -> Vec<IndexRow> {
        (self.tail_first..)
            .zip(&self.tail)
            .take_while(|(i, _)| *i <= through)
            .map(|(index, (offset, milestone_id))| IndexRow {
                index,
                offset: *offset,
                milestone_id: *milestone_id,
            })
            .collect()
    }

    /// How many rows the tail holds.
    pub(super) fn tail_len(&self) -> usize {
        self.tail.len()
    }

    /// The rows of milestones at or below `through` are stored: the tail lets them go.
    pub(super) fn stored_through(&mut self, through: u32) {
        let n = (through.saturating_add(1).saturating_sub(self.tail_first) as usize)
            .min(self.tail.len());
        for (_, id) in self.tail.drain(..n) {
            self.tail_ids.remove(&id);
        }
        self.tail_first += n as u32;
    }

    /// The positions of milestones `from..=upto` (all held by the journal, which starts at
    /// `first_index`), readable without the journal: the tail's part copied, the stored part
    /// read from a snapshot of the index when asked for.
    ///
    /// # Errors
    /// The index cannot be read.
    pub(super) fn range(&self, from: u32, upto: u32) -> Result<RangePositions, HistoryError> {
        let tail_from = from.max(self.tail_first);
        let skip = (tail_from - self.tail_first) as usize;
        let take = upto.saturating_add(1).saturating_sub(tail_from) as usize;
        let tail = self
            .tail
            .iter()
            .skip(skip)
            .take(take)
            .map(|(o, _)| o - self.bias)
            .collect();
        let stored = (from < self.tail_first)
            .then(|| self.store.snapshot())
            .transpose()?;
        Ok(RangePositions {
            from,
            upto,
            bias: self.bias,
            tail_from,
            tail,
            stored,
        })
    }
}

/// Entry positions of a range of milestones (see [`EntryOffsets::range`]).
#[derive(Debug)]
pub(super) struct RangePositions {
    from: u32,
    upto: u32,
    bias: u64,
    tail_from: u32,
    tail: Vec<u64>,
    stored: Option<IndexSnapshot>,
}

impl RangePositions {
    /// The file position of milestone `index`'s entry; `None` outside the range.
    ///
    /// # Errors
    /// The index cannot be read, or lacks a row it must hold.
    pub(super) fn position(&self, index: u32) -> Result<Option<u64>, HistoryError> {
        if index < self.from || index > self.upto {
            return Ok(None);
        }
        if index >= self.tail_from {
            return Ok(self.tail.get((index - self.tail_from) as usize).copied());
        }
        let Some(stored) = &self.stored else {
            return Ok(None);
        };
        stored_position(stored.get(index)?, index, self.bias, stored.path()).map(Some)
    }
}

/// The file position of milestone `index`'s entry from its stored `row` (taken with `bias`),
/// which must be there: a missing row or one before the journal is a damaged index at `path`.
fn stored_position(
    row: Option<IndexRow>,
    index: u32,
    bias: u64,
    path: &std::path::Path,
) -> Result<u64, HistoryError> {
    let damaged = |why: String| HistoryError::Damaged {
        path: path.to_path_buf(),
        why,
    };
    let row = row.ok_or_else(|| damaged(format!("no row for milestone {index}")))?;
    row.offset.checked_sub(bias).ok_or_else(|| {
        damaged(format!(
            "the row of milestone {index} lies before the journal"
        ))
    })
}
