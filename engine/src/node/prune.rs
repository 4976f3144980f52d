//! Pruning: the node forgets milestones at and below the pruning index (reference:
//! `docs/snapshots-pruning.md` §4, after Hornet's `pkg/pruning/pruning.go`).
//!
//! What a pruned milestone leaves behind is no longer served (blocks it referenced, its
//! payload and diff, the outputs it consumed) and leaves memory: the milestone list, the
//! rich list's history, the ledger's spent rows, and unreferenced blocks filed at or below
//! the index. Every unspent output stays. The pruning index is persisted by the checkpoint
//! written right after, and applied again when the node opens.

use std::sync::atomic::AtomicU32;

use super::*;

/// How far below the confirmed milestone pruning may go: Hornet keeps the solid entry point
/// check threshold (below max depth + 5) of history (`MinimumMilestoneIndex`).
pub const PRUNING_MARGIN: u32 = 20;
/// A run must move at least this far past the entry point index (Hornet's
/// `AdditionalPruningThreshold` + 1, hornet #406).
pub const PRUNING_MIN_STEP: u32 = 6;

/// When the node prunes by itself, after a confirmed milestone (both off: never).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PruningConfig {
    /// Keep this many milestones below the confirmed one (0 = off).
    pub milestones_to_keep: u32,
    /// Prune when the data directory reaches this many bytes (0 = off).
    pub target_size: u64,
    /// By size, prune this percentage below the target size.
    pub threshold_percentage: u8,
    /// By size, wait this long after a run before measuring again.
    pub cooldown: Duration,
}

/// What a prune request asks for (Hornet's `POST /control/database/prune` bodies).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PruneTarget {
    /// Prune up to and including this milestone index.
    Index(u32),
    /// Keep this many milestones below the confirmed one.
    Depth(u32),
    /// Prune until the data directory is below this many bytes (less the threshold).
    Size(u64),
}

impl PruneTarget {
    /// Parses a size in Hornet's binary units (`30GB` = 30 × 2³⁰ bytes; `B`, `K`/`KB`/`KiB`,
    /// `M…`, `G…`, `T…`, any case; a bare number is bytes).
    ///
    /// # Errors
    /// A message naming what is wrong.
    pub fn parse_size(text: &str) -> Result<u64, String> {
        let t = text.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (digits, unit) = t.split_at(split);
        let n: u64 = digits.parse().map_err(|_| {
            format!("invalid size {text:?}: expected a number and a unit like 30GB")
        })?;
        let shift = match unit.trim().to_ascii_uppercase().as_str() {
            "" | "B" => 0,
            "K" | "KB" | "KIB" => 10,
            "M" | "MB" | "MIB" => 20,
            "G" | "GB" | "GIB" => 30,
            "T" | "TB" | "TIB" => 40,
            other => {
                return Err(format!(
                    "invalid size {text:?}: unknown unit {other:?} (B, KB, MB, GB, TB)"
                ))
            }
        };
        n.checked_mul(1u64 << shift)
            .ok_or_else(|| format!("invalid size {text:?}: too large"))
    }
}

/// Why a prune did not run. Each window error states the allowed `[min, max]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PruneError {
    /// Another prune (or a snapshot) holds the lock.
    #[error("node is already creating a snapshot or pruning is running")]
    Busy,
    /// The target is at or below the pruning index.
    #[error(
        "no pruning needed: pruning index: {pruning_index}, target index: {target} \
         (allowed window: [{min}, {max}])"
    )]
    NotNeeded {
        /// The current pruning index.
        pruning_index: u32,
        /// The requested target.
        target: u32,
        /// Lowest allowed target.
        min: u32,
        /// Highest allowed target.
        max: u32,
    },
    /// The target is below the window, or the window is empty.
    #[error(
        "not enough history: minimum index: {min}, target index: {target} (allowed window: \
         [{min}, {max}]{})",
        if min > max { ", empty until more milestones are confirmed" } else { "" }
    )]
    NotEnoughHistory {
        /// The requested target.
        target: u32,
        /// Lowest allowed target.
        min: u32,
        /// Highest allowed target.
        max: u32,
    },
    /// The target is above the window.
    #[error("pruning target is too new: maximum index: {max}, target index: {target} (allowed window: [{min}, {max}])")]
    TooNew {
        /// The requested target.
        target: u32,
        /// Lowest allowed target.
        min: u32,
        /// Highest allowed target.
        max: u32,
    },
    /// The data directory is already below the requested size.
    #[error(
        "no pruning needed: the data directory holds {size} bytes, the target is {target} bytes"
    )]
    SizeReached {
        /// Bytes in the data directory.
        size: u64,
        /// The requested size.
        target: u64,
    },
    /// The pruning index could not be persisted.
    #[error("pruning database failed: {0}")]
    Failed(String),
}

/// The pruning state the engine keeps beside its state lock.
#[derive(Debug, Default)]
pub(super) struct Pruning {
    pub(super) index: AtomicU32,
    // One prune (or snapshot) at a time.
    pub(super) running: Mutex<()>,
    // When the last run by size ended (the cooldown starts there).
    pub(super) last_size_run: Mutex<Option<Instant>>,
    pub(super) config: PruningConfig,
}

impl Pruning {
    pub(super) fn new(index: u32, config: PruningConfig) -> Self {
        Self {
            index: AtomicU32::new(index),
            config,
            ..Self::default()
        }
    }
}

impl Engine {
    /// The pruning index: milestones at and below it are no longer served.
    pub fn pruning_index(&self) -> u32 {
        self.pruning.index.load(Ordering::Acquire)
    }

    /// The window a prune target must lie in now, `[min, max]` (empty when `min > max`):
    /// at least [`PRUNING_MIN_STEP`] past the pruning index, at most [`PRUNING_MARGIN`]
    /// below the confirmed milestone.
    pub fn pruning_window(&self) -> (u32, u32) {
        let min = self.pruning_index().saturating_add(PRUNING_MIN_STEP);
        let max = self.ledger_index().saturating_sub(PRUNING_MARGIN);
        // With snapshots on, the next snapshot's history stays (docs/snapshots-pruning.md
        // §4.2, `MinimumMilestoneIndex`).
        let max = self.snapshot_pruning_cap().map_or(max, |cap| max.min(cap));
        (min, max)
    }

    /// Bytes the block log and the history files take on disk.
    pub fn data_size(&self) -> u64 {
        let used = |dir: &Path| crate::disk_usage(dir).unwrap_or(0);
        used(self.log.dir()).saturating_add(used(&self.history_dir))
    }

    /// Prunes to the milestone `target` asks for; returns the new pruning index.
    ///
    /// # Errors
    /// [`PruneError`]: busy, a target outside the window (stated), or a failed write.
    pub fn prune(&self, target: PruneTarget) -> Result<u32, PruneError> {
        let Ok(_running) = self.pruning.running.try_lock() else {
            return Err(PruneError::Busy);
        };
        let (min, max) = self.pruning_window();
        let cmi = self.ledger_index();
        let index = match target {
            PruneTarget::Index(i) => i,
            PruneTarget::Depth(d) if d >= cmi => {
                return Err(PruneError::NotEnoughHistory {
                    target: 0,
                    min,
                    max,
                })
            }
            PruneTarget::Depth(d) => cmi - d,
            PruneTarget::Size(bytes) => self.size_target(bytes)?,
        };
        self.check_window(index, min, max)?;
        self.prune_through(index)?;
        // Below `index` only when a shutdown stopped the run.
        Ok(self.pruning_index())
    }

    /// After a confirmation: prunes by milestones and by size as configured (the larger
    /// target wins, capped to the window); a target below the window waits.
    pub(super) fn prune_automatically(&self) {
        let config = &self.pruning.config;
        if config.milestones_to_keep == 0 && config.target_size == 0 {
            return;
        }
        if !self.sync_state().is_synced() {
            tracing::debug!("automatic pruning skipped: not synced");
            return;
        }
        let cmi = self.ledger_index();
        let by_milestones =
            (config.milestones_to_keep > 0).then(|| cmi.saturating_sub(config.milestones_to_keep));
        let by_size = (config.target_size > 0)
            .then(|| self.automatic_size_target())
            .flatten();
        let Some(target) = by_milestones.max(by_size) else {
            return;
        };
        let (min, max) = self.pruning_window();
        let target = target.min(max);
        if target < min {
            return;
        }
        let Ok(_running) = self.pruning.running.try_lock() else {
            tracing::debug!("automatic pruning skipped: a prune or snapshot is running");
            return;
        };
        if let Err(e) = self.prune_through(target) {
            tracing::error!("automatic pruning to {target} failed: {e}");
        } else if by_size.is_some_and(|s| s >= target) {
            *self
                .pruning
                .last_size_run
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Instant::now());
        }
    }

    /// The size rule's target when the cooldown has passed and the directory is over the
    /// configured size (Hornet's, `docs/snapshots-pruning.md` §4.2); each skip is logged
    /// with its reason (hornet #1428).
    fn automatic_size_target(&self) -> Option<u32> {
        let config = &self.pruning.config;
        let last = *self
            .pruning
            .last_size_run
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(at) = last.filter(|at| at.elapsed() < config.cooldown) {
            tracing::debug!(
                remaining_secs = (config.cooldown - at.elapsed()).as_secs(),
                "pruning by size skipped: cooldown"
            );
            return None;
        }
        self.size_target(config.target_size).ok()
    }

    /// The index whose pruning brings the data directory to `target` bytes less the
    /// threshold, assuming bytes spread evenly over the milestones kept.
    fn size_target(&self, target: u64) -> Result<u32, PruneError> {
        let size = self.data_size();
        if size < target || size == 0 {
            return Err(PruneError::SizeReached { size, target });
        }
        let pct =
            u64::from(100u8.saturating_sub(self.pruning.config.threshold_percentage.min(100)));
        let cmi = self.ledger_index();
        let kept = u64::from(cmi.saturating_sub(self.pruning_index()));
        let keep = (u128::from(kept) * u128::from(target) * u128::from(pct))
            .div_ceil(100 * u128::from(size));
        let keep = u32::try_from(keep).unwrap_or(u32::MAX);
        Ok(cmi.saturating_sub(keep))
    }

    fn check_window(&self, index: u32, min: u32, max: u32) -> Result<(), PruneError> {
        let pruning_index = self.pruning_index();
        if index <= pruning_index {
            return Err(PruneError::NotNeeded {
                pruning_index,
                target: index,
                min,
                max,
            });
        }
        if index < min || min > max {
            return Err(PruneError::NotEnoughHistory {
                target: index,
                min,
                max,
            });
        }
        if index > max {
            return Err(PruneError::TooNew {
                target: index,
                min,
                max,
            });
        }
        Ok(())
    }

    /// Moves the pruning index to `index` (checked by the caller) one milestone at a time,
    /// forgetting what each covers and persisting each with a checkpoint, then gives disk
    /// back (`retire.rs`). A shutdown stops it between two milestones.
    fn prune_through(&self, index: u32) -> Result<(), PruneError> {
        let started = Instant::now();
        let before = self.pruning_index();
        let (mut milestones, mut blocks, mut outputs) = (0, 0, 0);
        let mut milestone = None;
        // One milestone at a time, each step persisted (Hornet's order): a run that is
        // interrupted, by a crash or a shutdown, leaves the index where its last step got.
        for step in before.saturating_add(1)..=index {
            if self.shutting_down.load(Ordering::Relaxed) {
                break;
            }
            // No spent row moves to the store meanwhile: one copied before this step and
            // stored after it would come back.
            let moving = self.spent.moving.lock();
            let (m, b, o) = {
                let mut st = self.write();
                milestone = st.milestones.get(step, &st.journal);
                self.pruning.index.store(step, Ordering::Release);
                Self::forget_through(&mut st, step)
            };
            let stored = self
                .spent
                .store
                .remove_spent(0..=step, None)
                .map_err(|e| PruneError::Failed(e.to_string()))?;
            drop(moving);
            (milestones, blocks, outputs) = (milestones + m, blocks + b, outputs + o + stored);
            crate::history::crash_point("prune-before-checkpoint");
            self.checkpoint()
                .map_err(|e| PruneError::Failed(e.to_string()))?;
        }
        let index = self.pruning_index();
        tracing::info!(
            from = before,
            to = index,
            milestones,
            unreferenced_blocks = blocks,
            spent_outputs = outputs,
            ms = started.elapsed().as_millis(),
            "pruned"
        );
        // The pruned milestone is known unless the node started above it.
        if let Some(milestone) = milestone {
            self.retire_pruned_segments(index, &milestone)?;
        }
        Ok(())
    }

    /// Forgets, in memory, everything of milestones at and below `index`: the milestone
    /// list, the rich list's history, spent ledger rows, unreferenced blocks filed there.
    /// Returns (milestones, blocks, outputs) forgotten. Also applied by the open.
    pub(super) fn forget_through(st: &mut State, index: u32) -> (usize, usize, usize) {
        let milestones = st.milestones.forget_through(index);
        st.pending = st.pending.split_off(&(index.saturating_add(1)));
        st.richlist.prune_before(index.saturating_add(1));
        let blocks = st.tangle.prune_unreferenced(index);
        let outputs = st.ledger.forget_spent_through(index);
        (milestones, blocks, outputs)
    }

    /// True when block `id` was referenced at or below the pruning index (or, unreferenced,
    /// dropped by pruning): it is no longer served.
    pub(super) fn is_pruned_block(st: &State, pruning_index: u32, id: &BlockId) -> bool {
        if pruning_index == 0 || st.tangle.get(id).is_some() {
            return false;
        }
        st.tangle
            .archived(id)
            .is_none_or(|(a, _)| a.referenced_by <= pruning_index)
    }
}

#[cfg(test)]
mod tests {
    use super::PruneTarget;

    #[test]
    fn sizes_use_binary_units_and_bad_ones_are_named() {
        let p = PruneTarget::parse_size;
        assert_eq!(p("0"), Ok(0));
        assert_eq!(p("512"), Ok(512));
        assert_eq!(p("30GB"), Ok(30 << 30));
        assert_eq!(p("20gb"), Ok(20 << 30));
        assert_eq!(p("1 MiB"), Ok(1 << 20));
        assert_eq!(p("2K"), Ok(2048));
        assert!(p("GB").unwrap_err().contains("expected a number"));
        assert!(p("3PB").unwrap_err().contains("unknown unit"));
        assert!(p("99999999999TB").unwrap_err().contains("too large"));
    }
}
