//! Ledger checkpoints (`crate::history::ledger_checkpoint`): the unspent outputs written at a
//! checkpoint once enough milestone journal has been written since the last one, so that a
//! restart books them and applies only the journal after them. The rule (the journal grew by
//! at least the last file's size, and by [`EngineConfig::ledger_checkpoint_bytes`]) keeps the
//! writing to a fixed share of the journal's growth and the journal a restart applies no
//! larger than the ledger itself.

use parking_lot::Mutex;

use super::*;
use crate::history::ledger_checkpoint::{self as file, LedgerHeader};

/// When the next ledger checkpoint is due.
#[derive(Debug)]
pub(super) struct Due {
    min_bytes: u64,
    // The journal's length at the last ledger checkpoint (0: none written by this process and
    // none opened), and that checkpoint's size.
    last: Mutex<(u64, u64)>,
    // The ledger base moved: the file in place names the old one, the next checkpoint writes.
    forced: AtomicBool,
}

impl Due {
    /// `opened_at`: the journal's length when the ledger opened from a ledger checkpoint
    /// (the growth counts from there), 0 otherwise (the first checkpoint writes one).
    pub(super) fn new(min_bytes: u64, opened_at: u64) -> Self {
        Self {
            min_bytes,
            last: Mutex::new((opened_at, 0)),
            forced: AtomicBool::new(false),
        }
    }

    /// Whether a journal of `journal` bytes grew enough since `last` (length then, size of the
    /// file written then); `any`: grew at all.
    fn is_due(&self, last: (u64, u64), journal: u64, any: bool) -> bool {
        if self.forced.load(Ordering::Acquire) {
            return true;
        }
        let grown = journal.saturating_sub(last.0);
        grown > 0 && (any || grown >= self.min_bytes.max(last.1))
    }

    /// The ledger base moved (and the journal was rewritten): the next checkpoint writes one.
    pub(super) fn force(&self) {
        *self.last.lock() = (0, 0);
        self.forced.store(true, Ordering::Release);
    }
}

impl Engine {
    /// True when the journal grew enough for the next ledger checkpoint (`any`: at all).
    pub(super) fn ledger_checkpoint_due(&self, any: bool) -> bool {
        let last = *self.ledger_checkpoints.last.lock();
        let journal = self.read().journal.len_bytes();
        self.ledger_checkpoints.is_due(last, journal, any)
    }

    /// Writes a ledger checkpoint at the current ledger index when one is due: rows written
    /// under the state read lock (no copy of the ledger is made), made durable and renamed
    /// into place without it. Skipped while the ledger base is being rewritten, and while
    /// spent rows are still held (they must be stored for the checkpoint's index first).
    pub(super) fn write_ledger_checkpoint_if_due(&self, any: bool) -> Result<(), EngineError> {
        let Some(_moving) = self.spent.moving.try_lock() else {
            return Ok(());
        };
        let mut last = self.ledger_checkpoints.last.lock();
        let pending = {
            let st = self.read();
            let journal = st.journal.len_bytes();
            if !self.ledger_checkpoints.is_due(*last, journal, any)
                || st.ledger.spent_in_memory() > 0
            {
                return Ok(());
            }
            let ledger_index = st.ledger.ledger_index();
            // Every row spent up to the checkpoint's index is stored; the store says so.
            if self.spent.store.through()? < ledger_index {
                self.spent.store.insert(&[], ledger_index)?;
            }
            let header = LedgerHeader {
                genesis_index: self.genesis.milestone_index,
                base_index: st.base_index,
                ledger_index,
            };
            let pending = file::write_rows(
                &self.history_dir,
                &header,
                st.ledger.unspent_count(),
                st.ledger.unspent_rows(),
            )?;
            (pending, journal, ledger_index)
        };
        let (pending, journal, ledger_index) = pending;
        let bytes = pending.bytes();
        pending.commit()?;
        *last = (journal, bytes);
        self.ledger_checkpoints
            .forced
            .store(false, Ordering::Release);
        tracing::debug!(ledger_index, bytes, "ledger checkpoint written");
        Ok(())
    }
}
