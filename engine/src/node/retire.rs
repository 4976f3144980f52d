//! Giving disk back after pruning (engine/FORMAT.md, "Retired segments"; docs/snapshots-pruning.md
//! §4: pruning frees disk by dropping whole files, never by rewriting the log).
//!
//! After a prune to P, the oldest log segments whose every block is pruned (referenced at or
//! below P, or unreferenced and dropped) are retired with their block metadata files. The
//! outputs created by their blocks are still in the ledger, and the journal's early entries
//! name those blocks, so first the ledger at P becomes the node's ledger base
//! (`history/base.bin`, a full snapshot file): its bytes replace the log's for those outputs,
//! in memory and for every later start, and the journal is rewritten to begin after P. The
//! order makes each crash point safe: base written → journal rewritten → segments retired
//! (`RETIRED`) → metadata files deleted; a start after any of them opens a consistent state.

use super::*;
use crate::history::{ledger_base, BaseContent};
use crate::snapshot::SnapshotOutput;

/// A segment known to hold a block referenced after some index: it stays until the pruning
/// index reaches that index (saves scanning it again at every prune).
#[derive(Debug, Default)]
pub(super) struct RetireScan {
    blocked: parking_lot::Mutex<Option<(u32, u32)>>,
}

fn failed(e: impl std::fmt::Display) -> PruneError {
    PruneError::Failed(e.to_string())
}

impl Engine {
    /// After a prune to `index` (the pruning lock held): retires the oldest segments whose
    /// blocks are all pruned, after moving the ledger's start to a base at `index`.
    /// `milestone` is milestone `index` (read before the prune forgot it).
    pub(super) fn retire_pruned_segments(
        &self,
        index: u32,
        milestone: &MilestoneInfo,
    ) -> Result<(), PruneError> {
        let first = self.log.first_segment();
        let keep_from = self.first_kept_segment(index);
        if keep_from <= first {
            return Ok(());
        }
        let started = Instant::now();
        let outputs = self.rebase(index, milestone)?;
        crate::history::crash_point("retire-before-marker");
        let retired = self.log.retire_below(keep_from).map_err(failed)?;
        let metas = self
            .write()
            .tangle
            .retire_archive_below(keep_from)
            .map_err(failed)?;
        tracing::info!(
            pruning_index = index,
            segments = retired.segments,
            records = retired.records,
            bytes = retired.bytes,
            metadata_files = metas,
            base_outputs = outputs,
            ms = started.elapsed().as_millis(),
            "retired pruned log segments"
        );
        Ok(())
    }

    /// The first segment to keep after pruning to `index`: the segments before it hold only
    /// pruned blocks. Never the active segment, nor one with blocks not yet in the tangle.
    fn first_kept_segment(&self, index: u32) -> u32 {
        let tail = Location::from_u64(self.inflight.safe_tail()).segment();
        let last = self.log.active_segment().min(tail);
        let mut n = self.log.first_segment();
        let mut blocked = self.retire_scan.blocked.lock();
        while n < last {
            if let Some((segment, until)) = *blocked {
                if segment == n && index < until {
                    break;
                }
            }
            match self.referenced_after(n, index) {
                Some(by) => {
                    *blocked = Some((n, by));
                    break;
                }
                None => n += 1,
            }
        }
        n
    }

    /// The first milestone above `index` found referencing a block of `segment`, or
    /// `u32::MAX` for a block still in the tangle (unreferenced, or referenced too recently
    /// to have left memory); `None` when every block of the segment is pruned.
    fn referenced_after(&self, segment: u32, index: u32) -> Option<u32> {
        // The state lock is taken per batch: a confirmation waits for one batch at most.
        const BATCH: usize = 4096;
        let start = Location::from_u64(u64::from(segment) << 32);
        let reader = self.log.reader();
        let mut records = reader
            .iter_from(start)
            .take_while(|r| r.location().segment() == segment)
            .filter_map(|r| match r.id() {
                LogId::V2(id) => Some((id, r.location().to_u64())),
                LogId::V3(_) => None,
            });
        let mut batch = Vec::with_capacity(BATCH);
        loop {
            batch.clear();
            batch.extend(records.by_ref().take(BATCH));
            if batch.is_empty() {
                return None;
            }
            let st = self.read();
            for (id, record) in &batch {
                if st.tangle.get(id).is_some() {
                    return Some(u32::MAX);
                }
                match st.tangle.archived_at(id, *record) {
                    Some(a) if a.referenced_by > index => return Some(a.referenced_by),
                    _ => {}
                }
            }
        }
    }

    /// Makes the ledger at `index` the node's base: written to `history/base.bin`, its bytes
    /// swapped in for the outputs it holds, the journal rewritten to start after it. Returns
    /// the base's output count.
    fn rebase(&self, index: u32, milestone: &MilestoneInfo) -> Result<usize, PruneError> {
        // No spent row moves to the store meanwhile (it would keep bytes that moved).
        let _moving = self.spent.moving.lock();
        let (content, ids) = {
            let st = self.read();
            let cmi = st.ledger.ledger_index();
            let mut outputs = Vec::new();
            let reader = self.log.reader();
            // The outputs unspent at `index`: those the ledger holds, and those spent after
            // it whose rows are stored.
            let stored: Vec<OutputRow> = self
                .spent
                .store
                .spent_after(index)
                .map_err(failed)?
                .into_iter()
                .filter(|row| row.booked_index <= index)
                .collect();
            let held = st
                .ledger
                .rows_booked_through(index)
                .filter_map(|r| st.ledger.row(r));
            for row in held.chain(stored.iter().cloned()) {
                let bytes =
                    whiteflag::output_bytes(&reader, &st.base_blob, row.loc).ok_or_else(|| {
                        failed(format!(
                            "the bytes of output {} are not readable",
                            hex32(&row.output_id)
                        ))
                    })?;
                outputs.push(SnapshotOutput {
                    output_id: row.output_id,
                    block_id: row.block_id,
                    booked_index: row.booked_index,
                    booked_timestamp: row.booked_timestamp,
                    output: bytes.to_vec(),
                });
            }
            // In output id order, as the file holds them: the offsets computed below are the
            // ones the next open reads from the file, for stored rows as for held ones.
            outputs.sort_unstable_by_key(|o| o.output_id);
            let ids: Vec<_> = outputs.iter().map(|o| o.output_id).collect();
            // A child referenced after `index` of a block referenced at or below it is
            // referenced within below-max-depth of it: the milestones up to `index` + 20 hold
            // every such child (the snapshot files' rule walks to the confirmed milestone).
            let last = cmi.min(index.saturating_add(snapshot::SEP_THRESHOLD));
            let mut seps = Self::solid_entry_points(&st, &self.log, index, last).map_err(failed)?;
            if seps.is_empty() {
                // Nothing referenced after `index` has a parent at or below it (no block
                // but milestones yet): the milestone itself is where the tangle resumes.
                seps.push(milestone.block_id);
            }
            let header = self.full_header(milestone, index).map_err(failed)?;
            (
                BaseContent {
                    header,
                    outputs,
                    seps,
                },
                ids,
            )
        };
        ledger_base::write(&self.history_dir, &content).map_err(failed)?;
        crate::history::crash_point("base-before-journal");
        let mut blob = Vec::with_capacity(content.outputs.iter().map(|o| o.output.len()).sum());
        let mut locs = Vec::with_capacity(ids.len());
        for o in &content.outputs {
            let offset = u32::try_from(blob.len()).map_err(|_| failed("base over 4 GiB"))?;
            let len = u32::try_from(o.output.len()).map_err(|_| failed("output over 4 GiB"))?;
            blob.extend_from_slice(&o.output);
            locs.push(BytesLoc {
                record: BytesLoc::GENESIS,
                offset,
                len,
            });
        }
        // The journal's kept entries are copied (and fsynced) without the state lock, which
        // submits need; what confirmations append meanwhile is copied under it.
        let rewrite = self
            .read()
            .journal
            .begin_rewrite(index.saturating_add(1))
            .map_err(failed)?;
        let rewrite = match rewrite {
            Some(mut r) => {
                r.copy().map_err(failed)?;
                Some(r)
            }
            None => None,
        };
        let mut st = self.write();
        // Rows booked at or below `index` changed at most their spent columns meanwhile
        // (the pruning lock keeps other prunes out). Stored rows move under the state lock
        // too: readers never see the new blob with the old offsets.
        // The store first: if it fails, nothing has changed.
        let moves: Vec<_> = ids
            .iter()
            .zip(&locs)
            .filter(|(id, _)| st.ledger.row_of(id).is_none())
            .map(|(id, loc)| (*id, *loc))
            .collect();
        self.spent.store.relocate(&moves).map_err(failed)?;
        for (id, loc) in ids.iter().zip(locs) {
            if let Some(row) = st.ledger.row_of(id) {
                st.ledger.relocate(row, loc);
            }
        }
        st.base_blob = blob;
        st.base_index = index;
        // A ledger checkpoint names the base its rows' bytes are in: the next one is due now.
        self.ledger_checkpoints.force();
        if let Some(r) = rewrite {
            st.journal.finish_rewrite(r).map_err(failed)?;
        }
        Ok(ids.len())
    }
}
