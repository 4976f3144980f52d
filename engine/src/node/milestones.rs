//! The confirmed milestones a node serves (`/milestones/{index}` and by id, gossip's milestone
//! requests, snapshots): the latest in memory, every other one read back from the milestone
//! journal, whose entries start with the milestone's identity, found by index or by milestone
//! id through the journal's milestone index (on disk): nothing is held per milestone.

use super::MilestoneInfo;
use crate::history::Journal;

/// The confirmed milestones from `first` on.
#[derive(Debug, Default)]
pub(super) struct Milestones {
    latest: Option<MilestoneInfo>,
    /// The lowest index served: above the ledger's start and the pruning index.
    first: u32,
}

impl Milestones {
    /// None confirmed yet; the first will be `first`.
    pub(super) fn new(first: u32) -> Self {
        Self {
            latest: None,
            first,
        }
    }

    /// The latest confirmed milestone.
    pub(super) fn latest(&self) -> Option<MilestoneInfo> {
        self.latest
    }

    /// Adds the milestone confirmed next (its journal entry appended).
    pub(super) fn insert(&mut self, info: MilestoneInfo) {
        if self.latest.is_none_or(|l| info.index > l.index) {
            self.latest = Some(info);
        }
    }

    /// Confirmed milestone `index`, read from `journal` unless it is the latest; `None` when
    /// it is not served (pruned, not confirmed) or its entry cannot be read (logged).
    pub(super) fn get(&self, index: u32, journal: &Journal) -> Option<MilestoneInfo> {
        let latest = self.latest?;
        if index == latest.index {
            return Some(latest);
        }
        if index < self.first || index > latest.index {
            return None;
        }
        match journal.read_head(index) {
            Ok(head) => head.map(|h| MilestoneInfo {
                index,
                timestamp: h.timestamp,
                milestone_id: h.milestone_id,
                block_id: h.block_id,
            }),
            Err(err) => {
                tracing::error!(index, "milestone not served: {err}");
                None
            }
        }
    }

    /// The confirmed milestone whose id is `id` (see [`Milestones::get`]); an index row that
    /// names another milestone's entry is logged and not served.
    pub(super) fn by_id(&self, id: &[u8; 32], journal: &Journal) -> Option<MilestoneInfo> {
        let latest = self.latest?;
        if latest.milestone_id == *id {
            return Some(latest);
        }
        let (index, head) = match journal.head_by_id(id) {
            Ok(found) => found?,
            Err(err) => {
                tracing::error!("milestone {} not served: {err}", hex::encode(id));
                return None;
            }
        };
        if index < self.first || index > latest.index {
            return None;
        }
        if head.milestone_id != *id {
            tracing::error!(
                "{} is damaged: milestone {} names the entry of milestone {index}, whose id \
                 is {}",
                journal.milestone_index().path().display(),
                hex::encode(id),
                hex::encode(head.milestone_id)
            );
            return None;
        }
        Some(MilestoneInfo {
            index,
            timestamp: head.timestamp,
            milestone_id: head.milestone_id,
            block_id: head.block_id,
        })
    }

    /// Serves no milestone at or below `index` from now on; returns how many were served.
    pub(super) fn forget_through(&mut self, index: u32) -> usize {
        let forgotten = self.latest.map_or(0, |latest| {
            let last = index.min(latest.index);
            if last >= self.first {
                (last - self.first + 1) as usize
            } else {
                0
            }
        });
        self.first = self.first.max(index.saturating_add(1));
        if self.latest.is_some_and(|l| l.index <= index) {
            self.latest = None;
        }
        forgotten
    }
}

impl super::Engine {
    /// Stores the milestone index rows held in memory for milestones at or below `through`
    /// (one durable commit, outside the state lock), when at least `min_rows` are held.
    /// Returns how many were stored. Run by checkpoints only (their lock keeps two apart).
    pub(super) fn store_milestone_index(
        &self,
        through: u32,
        min_rows: usize,
    ) -> Result<usize, super::EngineError> {
        let (rows, forget_below, index) = {
            let st = self.read();
            if st.journal.index_rows_held() < min_rows.max(1) {
                return Ok(0);
            }
            let (rows, first) = st.journal.index_rows(through);
            (
                rows,
                first,
                std::sync::Arc::clone(st.journal.milestone_index()),
            )
        };
        let Some(last) = rows.last().map(|r| r.index) else {
            return Ok(0);
        };
        index.store(&rows, forget_below)?;
        crate::history::crash_point("milestone-index-after-commit");
        self.write().journal.index_stored(last);
        Ok(rows.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::JournalEntry;

    fn info(index: u32) -> MilestoneInfo {
        MilestoneInfo {
            index,
            timestamp: 1000 + index,
            milestone_id: [index as u8; 32],
            block_id: [index as u8 + 100; 32],
        }
    }

    fn entry(i: &MilestoneInfo) -> JournalEntry {
        JournalEntry {
            index: i.index,
            timestamp: i.timestamp,
            milestone_id: i.milestone_id,
            block_id: i.block_id,
            referenced: 1,
            created: Vec::new(),
            consumed: Vec::new(),
            balance_changes: Vec::new(),
        }
    }

    #[test]
    fn older_milestones_come_from_the_journal_and_pruned_ones_are_not_served() {
        let dir = tempfile::tempdir().unwrap();
        let index =
            crate::history::MilestoneIndex::open(&dir.path().join("milestones.redb"), 1 << 20);
        let mut journal = Journal::create(
            &dir.path().join("milestones.journal"),
            5,
            index.unwrap().into(),
        )
        .unwrap();
        let mut m = Milestones::new(5);
        assert_eq!(m.latest(), None);
        assert_eq!(m.get(5, &journal), None);
        for index in 5..=12 {
            journal.append(&entry(&info(index))).unwrap();
            m.insert(info(index));
        }
        assert_eq!(m.latest(), Some(info(12)));
        for index in 5..=12 {
            assert_eq!(
                m.get(index, &journal),
                Some(info(index)),
                "milestone {index}"
            );
            assert_eq!(m.by_id(&[index as u8; 32], &journal), Some(info(index)));
        }
        assert_eq!(m.get(4, &journal), None);
        assert_eq!(m.get(13, &journal), None);
        assert_eq!(m.by_id(&[99; 32], &journal), None);

        assert_eq!(m.forget_through(7), 3);
        assert_eq!(m.get(7, &journal), None, "pruned");
        assert_eq!(m.by_id(&[6; 32], &journal), None);
        assert_eq!(m.get(8, &journal), Some(info(8)));
        assert_eq!(m.forget_through(7), 0, "nothing left at or below 7");
        assert_eq!(m.forget_through(3), 0);
        assert_eq!(m.latest(), Some(info(12)));
    }
}
