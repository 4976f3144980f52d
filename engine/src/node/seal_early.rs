//! Sealing the active log segment early under pruning by milestones, so that disk follows the
//! pruning index in small steps.
//!
//! Pruning gives disk back a whole segment at a time (`retire.rs`), so the data directory
//! holds what is kept plus up to a segment of pruned blocks. With the default 64 MiB segments
//! and a short retention (100 milestones at 2 000 blocks/s is about 50 MiB) that is a
//! sawtooth as tall as the history itself. When pruning by milestones is on, the active
//! segment is therefore sealed once it spans a sixteenth of the milestones kept, so the
//! sawtooth is about a sixteenth of the history. Two floors keep the rolls cheap: a segment
//! holds at least [`EARLY_SEAL_MIN_BYTES`], and at least as many bytes as the ledger base,
//! which each retirement rewrites (the rewrites then cost at most as much writing as the
//! blocks themselves). Retired segments are unmapped once no reader holds them, so frequent
//! rolls do not accumulate mappings.

use super::*;

/// The smallest segment sealed early.
const EARLY_SEAL_MIN_BYTES: u64 = 1 << 20;

/// What the last look found: the active segment and the confirmed milestone when it was
/// first seen active.
#[derive(Debug, Default)]
pub(super) struct EarlySeal {
    since: parking_lot::Mutex<Option<(u32, u32)>>,
}

impl Engine {
    /// After a confirmation, with pruning by milestones on: seals the active segment if it
    /// spans a sixteenth of the milestones kept (at least one) and holds enough bytes.
    pub(super) fn seal_segment_early(&self) {
        let milestones_to_keep = self.pruning.config.milestones_to_keep;
        if milestones_to_keep == 0 {
            return;
        }
        let cmi = self.ledger_index();
        let active = self.log.active_segment();
        let span = (milestones_to_keep / 16).max(1);
        {
            let mut since = self.early_seal.since.lock();
            match *since {
                Some((segment, from)) if segment == active => {
                    if cmi.saturating_sub(from) < span {
                        return;
                    }
                }
                _ => {
                    *since = Some((active, cmi));
                    return;
                }
            }
        }
        let base = self.read().base_blob.len() as u64;
        match self.log.seal_active(base.max(EARLY_SEAL_MIN_BYTES)) {
            Ok(true) => {
                tracing::debug!(
                    segment = active,
                    milestones = span,
                    "log segment sealed early for pruning"
                );
            }
            Ok(false) => {}
            Err(e) => tracing::error!("sealing the log segment early failed: {e}"),
        }
    }
}
