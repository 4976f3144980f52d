//! The ledger's spent rows on disk (`crate::history::SpentStore`): moved there at each
//! checkpoint, looked up where the ledger no longer holds them, removed by pruning.

use parking_lot::Mutex;

use super::*;
use crate::history::SpentStore;
use crate::utxo::OutputRow;

/// Spent rows held in memory during an open before they are stored (≈ 200 B each).
pub(super) const OPEN_BATCH: usize = 1 << 16;
/// Spent rows held while the node runs before a checkpoint stores them (≈ 0.8 MB): one
/// durable commit of the store per this many spent outputs, not one per milestone.
pub(super) const RUN_BATCH: usize = 1 << 12;

/// The store and the lock that keeps its writers apart.
#[derive(Debug)]
pub(super) struct SpentRows {
    pub(super) store: SpentStore,
    // Held while rows move from the ledger to the store, and while the ledger base relocates
    // stored rows: a row is never copied with bytes that moved meanwhile.
    pub(super) moving: Mutex<()>,
}

impl SpentRows {
    /// Opens the store in `dir` with a page cache of at most `cache_bytes`; a damaged one is
    /// removed (logged, naming it) and started empty: the resume or replay that follows stores
    /// every spent row again.
    pub(super) fn open(dir: &Path, cache_bytes: usize) -> Result<Self, EngineError> {
        let path = dir.join(crate::history::SPENT_FILE);
        let store = crate::history::open_or_empty(
            &path,
            "its rows are stored again from the journal",
            |p| SpentStore::open(p, cache_bytes),
        )?;
        Ok(Self {
            store,
            moving: Mutex::new(()),
        })
    }
}

impl Engine {
    /// Everything about output `id`: the ledger's row, or the stored spent row. A stored row
    /// that cannot be read is logged (naming the file) and answered as unknown.
    pub(super) fn output_row(&self, st: &State, id: &OutputId) -> Option<OutputRow> {
        if let Some(row) = st.ledger.get(id) {
            return Some(row);
        }
        match self.spent.store.get(id) {
            Ok(row) => row,
            Err(e) => {
                tracing::error!("{e}");
                None
            }
        }
    }

    /// True when `id` was spent and its row is stored (white flag: "already spent", not
    /// "not found").
    pub(super) fn stored_as_spent(&self, id: &OutputId) -> bool {
        self.spent.store.contains(id).unwrap_or_else(|e| {
            tracing::error!("{e}");
            false
        })
    }

    /// Moves the spent rows held for milestones at or below `through` to the store (one
    /// durable commit) and drops them from the ledger, when at least `min_rows` are held.
    /// Returns how many moved; none while the ledger base is being rewritten (the next
    /// checkpoint moves them).
    pub(super) fn store_spent(&self, through: u32, min_rows: usize) -> Result<usize, EngineError> {
        let Some(_moving) = self.spent.moving.try_lock() else {
            return Ok(0);
        };
        let rows = {
            let st = self.read();
            if st.ledger.spent_in_memory() < min_rows.max(1) {
                return Ok(0);
            }
            st.ledger.spent_rows_through(through)
        };
        self.spent.store.insert(&rows, through)?;
        crate::history::crash_point("spent-after-commit");
        Ok(self.write().ledger.drop_spent_through(through))
    }
}
