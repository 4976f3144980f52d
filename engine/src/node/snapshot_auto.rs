//! Automatic snapshots after a confirmed milestone (docs/snapshots-pruning.md §2.2, §2.5):
//! when, which type (full or delta by the size rule), and the delta chained to the full
//! file's target. The snapshot index is the target of the newest of `full_snapshot.bin` and
//! `delta_snapshot.bin` in the snapshot directory: the files are its persistence, read again
//! when the node opens.

use std::sync::atomic::AtomicU32;

use crate::snapshot::{DeltaHeader, DeltaReader, DeltaWriter, FullReader, SnapshotError};

use super::snapshot::{
    check_target, failed, SnapshotConfig, SnapshotCreateError, SnapshotWritten,
    DELTA_SNAPSHOT_FILE, FULL_SNAPSHOT_FILE, SEP_THRESHOLD,
};
use super::*;

/// Hornet's `deltaSizeThresholdMinSize` default (50 MiB): a delta at most this large is
/// always kept as a delta (docs/snapshots-pruning.md §2.1).
const DELTA_MIN_SIZE: u64 = 50 << 20;

/// The snapshot configuration and index the engine keeps.
#[derive(Debug)]
pub(super) struct Snapshots {
    pub(super) config: SnapshotConfig,
    pub(super) index: AtomicU32,
}

impl Snapshots {
    pub(super) fn new(config: SnapshotConfig) -> Self {
        let index = files_index(&config.dir);
        Self {
            config,
            index: AtomicU32::new(index),
        }
    }

    fn full_path(&self) -> PathBuf {
        self.config.dir.join(FULL_SNAPSHOT_FILE)
    }

    fn delta_path(&self) -> PathBuf {
        self.config.dir.join(DELTA_SNAPSHOT_FILE)
    }
}

fn full_header(path: &Path) -> Option<crate::snapshot::FullHeader> {
    let f = std::fs::File::open(path).ok()?;
    FullReader::new(std::io::BufReader::new(f))
        .ok()
        .map(|r| r.header().clone())
}

fn delta_header(path: &Path) -> Option<DeltaHeader> {
    let f = std::fs::File::open(path).ok()?;
    DeltaReader::new(std::io::BufReader::new(f))
        .ok()
        .map(|r| *r.header())
}

/// The newest target among the automatic files in `dir` (0 without any).
fn files_index(dir: &Path) -> u32 {
    let full = full_header(&dir.join(FULL_SNAPSHOT_FILE)).map(|h| h.target_milestone_index);
    let delta = delta_header(&dir.join(DELTA_SNAPSHOT_FILE)).map(|h| h.target_milestone_index);
    full.max(delta).unwrap_or(0)
}

fn file_len(path: &Path) -> Option<u64> {
    std::fs::metadata(path).ok().map(|m| m.len())
}

impl Engine {
    /// The snapshot directory (`--snapshot-dir`).
    pub fn snapshot_dir(&self) -> &Path {
        &self.snapshots.config.dir
    }

    /// The target of the last automatic snapshot (0 before any).
    pub fn snapshot_index(&self) -> u32 {
        self.snapshots.index.load(Ordering::Acquire)
    }

    /// The depth automatic snapshots keep below the confirmed milestone: the configured one,
    /// at least below max depth + 5 (Hornet `components/snapshot/component.go`).
    pub fn snapshot_depth(&self) -> u32 {
        let floor = u32::from(self.genesis.params.below_max_depth).saturating_add(5);
        self.snapshots.config.depth.max(floor)
    }

    /// The highest index pruning may reach with snapshots on: snapshot index − depth − 20
    /// (Hornet's `MinimumMilestoneIndex`, docs/snapshots-pruning.md §4.2); `None` when
    /// snapshots are off.
    pub(super) fn snapshot_pruning_cap(&self) -> Option<u32> {
        (self.snapshots.config.interval > 0).then(|| {
            self.snapshot_index()
                .saturating_sub(self.snapshot_depth())
                .saturating_sub(SEP_THRESHOLD)
        })
    }

    /// After a confirmation: writes the automatic snapshot when it is due (§2.2).
    pub(super) fn snapshot_automatically(&self) {
        let interval = self.snapshots.config.interval;
        if interval == 0 || !self.sync_state().is_synced() {
            return;
        }
        let depth = self.snapshot_depth();
        let cmi = self.ledger_index();
        let due = cmi >= depth.saturating_add(interval)
            && cmi - depth >= self.pruning_index().saturating_add(1 + SEP_THRESHOLD)
            && cmi - (depth + interval) >= self.snapshot_index();
        if !due {
            return;
        }
        let target = cmi - depth;
        let (min, max) = self.snapshot_window();
        if !(min..=max).contains(&target) {
            tracing::debug!(
                target,
                min,
                max,
                "automatic snapshot skipped: outside the window"
            );
            return;
        }
        match self.snapshot_to_files(target) {
            Ok(kind) => {
                self.snapshots.index.store(target, Ordering::Release);
                tracing::info!(target, kind, "automatic snapshot written");
            }
            Err(SnapshotCreateError::Busy) => {
                tracing::debug!("automatic snapshot skipped: a prune or snapshot is running");
            }
            Err(e) => tracing::error!(target, "automatic snapshot failed: {e}"),
        }
    }

    /// Writes the full or delta file of `target` as the size rule says; returns which.
    fn snapshot_to_files(&self, target: u32) -> Result<&'static str, SnapshotCreateError> {
        let full = self.snapshots.full_path();
        let delta = self.snapshots.delta_path();
        if self.delta_is_due(&full, &delta)
            && full_header(&full).is_some_and(|h| h.target_milestone_index < target)
        {
            self.create_delta_snapshot(target)?;
            return Ok("delta");
        }
        std::fs::create_dir_all(&self.snapshots.config.dir).map_err(failed)?;
        self.create_full_snapshot(target, &full)?;
        // The old delta continued the old full file (Hornet deletes it, §2.4).
        match std::fs::remove_file(&delta) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(failed(format!("{}: {e}", delta.display()))),
        }
        Ok("full")
    }

    /// Writes the delta snapshot of `target` to `delta_snapshot.bin` in the snapshot
    /// directory, chained to `full_snapshot.bin` there (docs/snapshots-pruning.md §2.5): a
    /// new file with the diffs after the full file's target, or the existing delta on that
    /// full file extended to `target`. The target must be in [`Engine::snapshot_window`] and
    /// above the full file's target.
    ///
    /// # Errors
    /// [`SnapshotCreateError`]: busy, a target outside the window (stated), no full file, or
    /// a failed read or write.
    pub fn create_delta_snapshot(
        &self,
        target: u32,
    ) -> Result<SnapshotWritten, SnapshotCreateError> {
        let full_path = self.snapshots.full_path();
        let full = full_header(&full_path).ok_or_else(|| {
            failed(format!(
                "no readable full snapshot file at {} for the delta to continue",
                full_path.display()
            ))
        })?;
        let (min, max) = self.snapshot_window();
        let min = min.max(full.target_milestone_index.saturating_add(1));
        check_target(target, min, max)?;
        let path = self.snapshots.delta_path();
        self.write_delta(&full, &path, target)?;
        Ok(SnapshotWritten {
            index: target,
            path,
        })
    }

    /// Hornet's `optimalSnapshotType` (§2.2): true for a delta.
    fn delta_is_due(&self, full: &Path, delta: &Path) -> bool {
        let pct = self.snapshots.config.delta_threshold_percentage;
        let Some(full_len) = file_len(full) else {
            return false;
        };
        if pct == 0 {
            return true;
        }
        let Some(delta_len) = file_len(delta) else {
            return true;
        };
        if delta_len <= DELTA_MIN_SIZE {
            return true;
        }
        full_len.saturating_mul(u64::from(pct)) / 100 >= delta_len
    }

    /// Writes the delta of `target` on the full file `full`: a new one with the diffs after
    /// the full target, or the existing one extended (crash-safe, `DeltaWriter::extend`).
    fn write_delta(
        &self,
        full: &crate::snapshot::FullHeader,
        delta: &Path,
        target: u32,
    ) -> Result<(), SnapshotCreateError> {
        let Ok(_running) = self.pruning.running.try_lock() else {
            return Err(SnapshotCreateError::Busy);
        };
        let link = full.target_milestone_id;
        let old = delta_header(delta).filter(|h| {
            h.full_snapshot_target_milestone_id == link && h.target_milestone_index < target
        });
        let from = old
            .as_ref()
            .map_or(full.target_milestone_index, |h| h.target_milestone_index);
        let (diffs, seps, timestamp) = {
            let st = self.read();
            let timestamp = st
                .milestones
                .get(target, &st.journal)
                .map(|m| m.timestamp)
                .ok_or_else(|| failed(format!("milestone {target} is not known")))?;
            let mut diffs = Vec::new();
            for index in from.saturating_add(1)..=target {
                diffs.push(self.file_diff(&st, index)?);
            }
            let cmi = st.ledger.ledger_index();
            let seps = Self::solid_entry_points(&st, &self.log, target, cmi)?;
            (diffs, seps, timestamp)
        };
        let mut w = match old {
            Some(_) => DeltaWriter::extend(delta, link, target, timestamp),
            None => DeltaWriter::create(
                delta,
                &DeltaHeader {
                    target_milestone_index: target,
                    target_milestone_timestamp: timestamp,
                    full_snapshot_target_milestone_id: link,
                    sep_file_offset: 0,
                    diff_count: 0,
                    sep_count: 0,
                },
            ),
        }
        .map_err(|e: SnapshotError| failed(e))?;
        for d in &diffs {
            snapshot::unless_stopping(&self.shutting_down)?;
            w.push_diff(d).map_err(failed)?;
        }
        for s in &seps {
            w.push_sep(s).map_err(failed)?;
        }
        w.finish().map_err(failed)?;
        Ok(())
    }
}
