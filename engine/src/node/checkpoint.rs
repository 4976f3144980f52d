//! Checkpoints (`crate::history::Checkpoint`): written after confirmations (once the
//! milestone is confirmed and logged; the state lock is held only to list what the checkpoint
//! names, the fsyncs run without it), at the end of an open and at shutdown.

use parking_lot::Mutex;

use super::open::CHECKPOINT;
use super::*;
use crate::history::SyncHandle;

/// Whether a checkpoint is the last one before a clean stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leaving {
    Yes,
    No,
}

/// Serializes checkpoint writers (confirmations, an open, a shutdown): one
/// `checkpoint.tmp` at a time.
#[derive(Debug, Default)]
pub(super) struct Checkpointer {
    writing: Mutex<()>,
}

impl Engine {
    /// Writes a checkpoint at the current ledger index: the position of the log tail first
    /// (see `crate::history::InFlight`), then under the state lock only what the checkpoint
    /// lists; then block metadata and journal made durable, and the checkpoint file replaced
    /// atomically. Skipped when the journal could not be written.
    pub(super) fn checkpoint(&self) -> Result<(), EngineError> {
        self.checkpoint_with(Leaving::No)
    }

    /// [`Engine::checkpoint`] at a clean stop: every spent row is stored and a ledger
    /// checkpoint written if the journal grew at all, so that the next start applies no
    /// journal.
    pub(super) fn final_checkpoint(&self) -> Result<(), EngineError> {
        self.checkpoint_with(Leaving::Yes)
    }

    fn checkpoint_with(&self, leaving: Leaving) -> Result<(), EngineError> {
        let _writing = self.checkpointer.writing.lock();
        let tail = self.inflight.safe_tail();
        let (checkpoint, durable) = {
            let mut st = self.write();
            if !st.journal_ok {
                return Ok(());
            }
            let ledger_index = st.ledger.ledger_index();
            if st.journal.last_index() != ledger_index {
                return Err(EngineError::Inconsistent(format!(
                    "the milestone journal ends at {}, the ledger at {ledger_index}",
                    st.journal.last_index()
                )));
            }
            let checkpoint = Checkpoint {
                genesis_index: self.genesis.milestone_index,
                ledger_index,
                referenced: st.referenced,
                pruning_index: self.pruning_index(),
                tail,
                unreferenced: st.tangle.unreferenced_records(),
            };
            let metas = st
                .tangle
                .archive_files_to_sync()
                .map_err(|e| EngineError::Inconsistent(e.to_string()))?;
            let mut durable: Vec<SyncHandle> = metas
                .into_iter()
                .map(|(path, file)| SyncHandle { path, file })
                .collect();
            durable.push(st.journal.file_to_sync()?);
            (checkpoint, durable)
        };
        // Outside the lock: everything written up to the checkpoint's index (and maybe more,
        // which a resume ignores) reaches the disk before the checkpoint names it. After a
        // failed sync the kernel may have dropped the pages, so no checkpoint is written any
        // more until a restart (which resumes from the previous one, or replays).
        for f in &durable {
            if let Err(e) = f.sync() {
                self.write().journal_ok = false;
                return Err(e.into());
            }
        }
        crate::history::crash_point("checkpoint-before-write");
        checkpoint.write(&self.history_dir.join(CHECKPOINT))?;
        // The spent rows and the milestone index rows up to the checkpoint leave memory once a
        // batch of each is held, or all of them before a ledger checkpoint and at a clean stop
        // (a restart finds them stored, or makes them again from the journal: after a clean
        // stop it reads no journal entry).
        let ledger_due = self.ledger_checkpoint_due(leaving == Leaving::Yes);
        let all = ledger_due || leaving == Leaving::Yes;
        let batch = |run_batch| if all { 1 } else { run_batch };
        if let Err(e) = self.store_spent(checkpoint.ledger_index, batch(super::spent::RUN_BATCH)) {
            tracing::error!(
                ledger_index = checkpoint.ledger_index,
                "spent outputs stay in memory: {e}"
            );
        }
        let index_batch = batch(crate::history::INDEX_RUN_BATCH);
        if let Err(e) = self.store_milestone_index(checkpoint.ledger_index, index_batch) {
            tracing::error!(
                ledger_index = checkpoint.ledger_index,
                "milestone index rows stay in memory: {e}"
            );
        }
        if !ledger_due {
            return Ok(());
        }
        if let Err(e) = self.write_ledger_checkpoint_if_due(leaving == Leaving::Yes) {
            tracing::error!(
                ledger_index = checkpoint.ledger_index,
                "ledger checkpoint not written (a restart applies more of the journal): {e}"
            );
        }
        Ok(())
    }
}
