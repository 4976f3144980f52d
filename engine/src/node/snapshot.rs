//! Creating full snapshot files from the running node (docs/snapshots-pruning.md §2.3, §2.4,
//! §2.6; the file layout is `crate::snapshot`'s, engine/FORMAT-snapshot.md).
//!
//! Everything the file holds is read under one read lock of the state (the unspent set at the
//! confirmed milestone, the diffs from the journal, the output bytes from the log, the solid
//! entry points from the tangle), then written outside it. Creation shares the pruning lock:
//! one prune or snapshot at a time.

use std::collections::{HashMap, HashSet};

use crate::log::Reader;
use crate::snapshot::{
    FullHeader, FullWriter, MilestoneDiff as FileDiff, ProtocolParametersOption, SnapshotOutput,
    SnapshotSpent, Treasury,
};
use crate::utxo::OutputRow;

use super::*;

/// Solid entry point check threshold: below max depth + 5 (Hornet
/// `components/snapshot/component.go`, docs/snapshots-pruning.md §2.1).
pub(super) const SEP_THRESHOLD: u32 = 20;
/// Diffs a full file holds below its target (Hornet's `AdditionalMilestoneDiffRange` less
/// the excluded end, docs/snapshots-pruning.md §1.7).
const EXTRA_DIFFS_BELOW_TARGET: u32 = 29;
/// The lowest target Hornet allows (`checkSnapshotLimits`).
const MIN_SNAPSHOT_TARGET: u32 = 21;

/// Why a snapshot was not written. Each window error states the allowed `[min, max]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotCreateError {
    /// A prune or another snapshot holds the lock.
    #[error("node is already creating a snapshot or pruning is running")]
    Busy,
    /// The window is empty.
    #[error(
        "not enough history: minimum index ({min}) exceeds maximum index ({max}) \
         (allowed window: [{min}, {max}])"
    )]
    NotEnoughHistory {
        /// Lowest allowed target.
        min: u32,
        /// Highest allowed target.
        max: u32,
    },
    /// The target is above the window.
    #[error(
        "snapshot target is too new: maximum: {max}, actual: {target} \
         (allowed window: [{min}, {max}])"
    )]
    TooNew {
        /// The requested target.
        target: u32,
        /// Lowest allowed target.
        min: u32,
        /// Highest allowed target.
        max: u32,
    },
    /// The target is below the window.
    #[error(
        "snapshot target is too old: minimum: {min}, actual: {target} \
         (allowed window: [{min}, {max}])"
    )]
    TooOld {
        /// The requested target.
        target: u32,
        /// Lowest allowed target.
        min: u32,
        /// Highest allowed target.
        max: u32,
    },
    /// Reading the node's state or writing the file failed.
    #[error("creating snapshot failed: {0}")]
    Failed(String),
}

/// Whether `target` lies in the window `[min, max]`, or the error that states the window.
pub(super) fn check_target(target: u32, min: u32, max: u32) -> Result<(), SnapshotCreateError> {
    if min > max {
        Err(SnapshotCreateError::NotEnoughHistory { min, max })
    } else if target > max {
        Err(SnapshotCreateError::TooNew { target, min, max })
    } else if target < min {
        Err(SnapshotCreateError::TooOld { target, min, max })
    } else {
        Ok(())
    }
}

/// Automatic snapshots (docs/snapshots-pruning.md §2.1-2.2) and where files go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotConfig {
    /// Milestones between automatic snapshots (0 = off).
    pub interval: u32,
    /// The target is this far below the confirmed milestone.
    pub depth: u32,
    /// A delta larger than this percentage of the full file is replaced by a new full file
    /// (0 = always a delta).
    pub delta_threshold_percentage: u8,
    /// Where `full_snapshot.bin`, `delta_snapshot.bin` and REST snapshots are written.
    pub dir: PathBuf,
}

/// Default of [`SnapshotConfig::depth`] (Hornet's).
pub const DEFAULT_SNAPSHOT_DEPTH: u32 = 50;
/// Default of [`SnapshotConfig::delta_threshold_percentage`] (Hornet's).
pub const DEFAULT_DELTA_THRESHOLD_PERCENTAGE: u8 = 50;
/// The file automatic full snapshots go to, in [`SnapshotConfig::dir`].
pub const FULL_SNAPSHOT_FILE: &str = "full_snapshot.bin";
/// The file automatic delta snapshots go to, in [`SnapshotConfig::dir`].
pub const DELTA_SNAPSHOT_FILE: &str = "delta_snapshot.bin";

impl SnapshotConfig {
    /// Off, with Hornet's defaults, files in `data_dir/snapshots`.
    pub fn off(data_dir: &Path) -> Self {
        Self {
            interval: 0,
            depth: DEFAULT_SNAPSHOT_DEPTH,
            delta_threshold_percentage: DEFAULT_DELTA_THRESHOLD_PERCENTAGE,
            dir: data_dir.join("snapshots"),
        }
    }
}

/// A full snapshot written: its target and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotWritten {
    /// Target milestone index.
    pub index: u32,
    /// The file.
    pub path: PathBuf,
}

/// What a full file holds, read under one lock.
struct FullContent {
    header: FullHeader,
    outputs: Vec<SnapshotOutput>,
    diffs: Vec<FileDiff>,
    seps: Vec<[u8; 32]>,
}

pub(super) fn failed(what: impl std::fmt::Display) -> SnapshotCreateError {
    SnapshotCreateError::Failed(what.to_string())
}

impl Engine {
    /// The window a snapshot target must lie in now, `[min, max]` (empty when `min > max`):
    /// Hornet's limits (docs/snapshots-pruning.md §2.3) and the diffs the file needs down to
    /// target − 29, which exist above the pruning index and the genesis.
    pub fn snapshot_window(&self) -> (u32, u32) {
        let pruning = self.pruning_index();
        let lowest_diff = pruning.max(self.genesis.milestone_index).saturating_add(1);
        let min = MIN_SNAPSHOT_TARGET
            .max(pruning.saturating_add(1 + SEP_THRESHOLD))
            .max(lowest_diff.saturating_add(EXTRA_DIFFS_BELOW_TARGET));
        let cmi = self.ledger_index();
        let max = cmi.saturating_sub(SEP_THRESHOLD);
        (min, if cmi < SEP_THRESHOLD { 0 } else { max })
    }

    /// Writes a full snapshot (TIP-35 v2, as Hornet's node writes it) with target milestone
    /// `target` to `path`: the unspent set at the confirmed milestone, the diffs from it down
    /// to `target` − 29, the solid entry points of `target`. The file appears whole or not at
    /// all.
    ///
    /// # Errors
    /// [`SnapshotCreateError`]: busy, a target outside the window (stated), or a failed read
    /// or write.
    pub fn create_full_snapshot(
        &self,
        target: u32,
        path: &Path,
    ) -> Result<SnapshotWritten, SnapshotCreateError> {
        let Ok(_running) = self.pruning.running.try_lock() else {
            return Err(SnapshotCreateError::Busy);
        };
        let (min, max) = self.snapshot_window();
        check_target(target, min, max)?;
        let started = Instant::now();
        let content = self.full_content(target)?;
        let (outputs, diffs, seps) = (
            content.outputs.len(),
            content.diffs.len(),
            content.seps.len(),
        );
        let path = write_full(path, &content, &self.shutting_down)?;
        tracing::info!(
            target,
            ledger_index = content.header.ledger_milestone_index,
            outputs,
            diffs,
            seps,
            ms = started.elapsed().as_millis(),
            path = %path.display(),
            "full snapshot written"
        );
        Ok(SnapshotWritten {
            index: target,
            path,
        })
    }

    fn full_content(&self, target: u32) -> Result<FullContent, SnapshotCreateError> {
        let st = self.read();
        let cmi = st.ledger.ledger_index();
        let target_ms = st
            .milestones
            .get(target, &st.journal)
            .ok_or_else(|| failed(format!("milestone {target} is not known")))?;
        let header = self.full_header(&target_ms, cmi)?;
        let outputs = self.unspent_records(&st)?;
        let lowest = target.saturating_sub(EXTRA_DIFFS_BELOW_TARGET);
        let mut diffs = Vec::new();
        for index in (lowest..=cmi).rev() {
            diffs.push(self.file_diff(&st, index)?);
        }
        let seps = Self::solid_entry_points(&st, &self.log, target, cmi)?;
        Ok(FullContent {
            header,
            outputs,
            diffs,
            seps,
        })
    }

    /// The header of a full file with target milestone `target` and the ledger at
    /// `ledger_index` (counts patched by the writer).
    pub(super) fn full_header(
        &self,
        target: &MilestoneInfo,
        ledger_index: u32,
    ) -> Result<FullHeader, SnapshotCreateError> {
        let params = self.genesis.params.to_bytes().map_err(failed)?;
        Ok(FullHeader {
            genesis_milestone_index: self.genesis_milestone_index(),
            target_milestone_index: target.index,
            target_milestone_timestamp: target.timestamp,
            target_milestone_id: target.milestone_id,
            ledger_milestone_index: ledger_index,
            treasury: Treasury {
                milestone_id: self.genesis.treasury.0,
                amount: self.genesis.treasury.1,
            },
            protocol_parameters: ProtocolParametersOption {
                activation_index: 0,
                protocol_version: self.genesis.params.version,
                params,
            },
            output_count: 0,
            diff_count: 0,
            sep_count: 0,
        })
    }

    /// The genesis milestone index a file names: the index before the first milestone
    /// (Hornet's, docs/snapshots-pruning.md §1.2). A node started from a snapshot does not
    /// know the network's, and names its own start.
    fn genesis_milestone_index(&self) -> u32 {
        self.genesis.milestone_index
    }

    pub(super) fn snapshot_output(
        &self,
        st: &State,
        row: &OutputRow,
    ) -> Result<SnapshotOutput, SnapshotCreateError> {
        let reader = self.log.reader();
        let bytes = whiteflag::output_bytes(&reader, &st.base_blob, row.loc).ok_or_else(|| {
            failed(format!(
                "bytes of output {} not found",
                hex32(&row.output_id)
            ))
        })?;
        Ok(SnapshotOutput {
            output_id: row.output_id,
            block_id: row.block_id,
            booked_index: row.booked_index,
            booked_timestamp: row.booked_timestamp,
            output: bytes.to_vec(),
        })
    }

    /// Milestone `index`'s diff as a file holds it: its payload from the milestone block in
    /// the log, created and consumed outputs sorted by output id.
    pub(super) fn file_diff(
        &self,
        st: &State,
        index: u32,
    ) -> Result<FileDiff, SnapshotCreateError> {
        let entry = st
            .journal
            .read_entry(index)
            .map_err(failed)?
            .ok_or_else(|| failed(format!("the diff of milestone {index} is not kept")))?;
        let reader = self.log.reader();
        let block = reader
            .get(&LogId::V2(entry.block_id))
            .ok_or_else(|| failed(format!("the block of milestone {index} is not in the log")))?;
        let block = Block::decode(block.bytes()).map_err(failed)?;
        let Some(Payload::Milestone(milestone)) = &block.payload else {
            return Err(failed(format!(
                "the block of milestone {index} carries no milestone"
            )));
        };
        let milestone_payload = milestone.to_bytes().map_err(failed)?;
        if milestone.receipt().is_some() {
            return Err(failed(format!(
                "milestone {index} carries a receipt: its treasury input is not kept"
            )));
        }
        let mut created = Vec::with_capacity(entry.created.len());
        for o in &entry.created {
            let bytes =
                whiteflag::output_bytes(&reader, &st.base_blob, o.loc).ok_or_else(|| {
                    failed(format!("bytes of output {} not found", hex32(&o.output_id)))
                })?;
            created.push(SnapshotOutput {
                output_id: o.output_id,
                block_id: o.block_id,
                booked_index: entry.index,
                booked_timestamp: entry.timestamp,
                output: bytes.to_vec(),
            });
        }
        created.sort_unstable_by_key(|o| o.output_id);
        let mut consumed = Vec::with_capacity(entry.consumed.len());
        for (id, tx) in &entry.consumed {
            let row = self
                .output_row(st, id)
                .ok_or_else(|| failed(format!("consumed output {} not kept", hex32(id))))?;
            consumed.push(SnapshotSpent {
                output: self.snapshot_output(st, &row)?,
                spent_by: *tx,
            });
        }
        consumed.sort_unstable_by_key(|s| s.output.output_id);
        Ok(FileDiff {
            milestone_payload,
            treasury_input: None,
            created,
            consumed,
        })
    }

    /// The solid entry points of `target` (docs/snapshots-pruning.md §2.6): blocks referenced
    /// by milestones `target` − 20 ..= `target` with a direct child referenced after
    /// `target`. The children are found from the other side: the blocks referenced by
    /// milestones `target` + 1 ..= `cmi`, walked from each milestone's payload parents, and
    /// their parents read from the log. Blocks the node does not hold (a start's entry
    /// points) are skipped, as Hornet skips missing children. Sorted.
    pub(super) fn solid_entry_points(
        st: &State,
        log: &Log,
        target: u32,
        cmi: u32,
    ) -> Result<Vec<[u8; 32]>, SnapshotCreateError> {
        let reader = log.reader();
        // The blocks met while walking one milestone's cone, each looked up once: the
        // milestone that referenced it (none: unreferenced) and its record; `None` when the
        // node does not hold it. Blocks are looked up next
        // to the child they were met from (a parent is stored shortly before its child), not
        // from the newest segment down: under pruning they sit among the oldest segments,
        // which a newest-first search reaches last. Emptied at each milestone, so that it
        // holds one cone and its parents, not the whole span (a retirement runs this every
        // few seconds; a span-wide table was a passing 5–10 MiB each time). `walked`: the
        // blocks of the cone whose parents were looked at, emptied likewise.
        let mut known: HashMap<BlockId, Option<Seen>> = HashMap::new();
        let mut walked = HashSet::new();
        let low = target.saturating_sub(SEP_THRESHOLD);
        let mut seps = HashSet::new();
        let mut stack: Vec<(BlockId, u32)> = Vec::new();
        for k in target.saturating_add(1)..=cmi {
            let ms = st
                .milestones
                .get(k, &st.journal)
                .ok_or_else(|| failed(format!("milestone {k} is not known")))?;
            let unreadable = || failed(format!("the block of milestone {k} is not readable"));
            let record = reader.get(&LogId::V2(ms.block_id)).ok_or_else(unreadable)?;
            let Some(Payload::Milestone(m)) = Block::decode(record.bytes())
                .map_err(|_| unreadable())?
                .payload
            else {
                return Err(unreadable());
            };
            let near = record.location().segment();
            known.clear();
            walked.clear();
            // Blocks referenced by k: its cone stops at blocks referenced before k.
            stack.extend(m.parents.iter().map(|p| (*p, near)));
            while let Some((id, near)) = stack.pop() {
                let Some(seen) = look_up(st, &reader, &mut known, &id, near)? else {
                    continue;
                };
                if seen.referenced_by != Some(k) || !walked.insert(id) {
                    continue;
                }
                let at = seen.at;
                let Some(block) = reader.read(at).and_then(|r| Block::decode(r.bytes()).ok())
                else {
                    continue;
                };
                for p in block.parents.iter() {
                    let parent = look_up(st, &reader, &mut known, p, at.segment())?;
                    match parent.and_then(|s| s.referenced_by) {
                        Some(r) if r == k => stack.push((*p, at.segment())),
                        Some(r) if (low..=target).contains(&r) => {
                            seps.insert(*p);
                        }
                        _ => {}
                    }
                }
            }
        }
        let mut seps: Vec<[u8; 32]> = seps.into_iter().collect();
        seps.sort_unstable();
        Ok(seps)
    }
}

/// What the solid-entry-point walk knows of a block it met.
#[derive(Debug, Clone, Copy)]
struct Seen {
    /// The milestone that referenced it; `None`: unreferenced.
    referenced_by: Option<u32>,
    /// Its record.
    at: Location,
}

/// `id` as the walk sees it, from `known` or looked up (in the tangle, else in the log near
/// segment `near`) and remembered; `None` when the node does not hold it.
fn look_up(
    st: &State,
    reader: &Reader<'_>,
    known: &mut HashMap<BlockId, Option<Seen>>,
    id: &BlockId,
    near: u32,
) -> Result<Option<Seen>, SnapshotCreateError> {
    if let Some(found) = known.get(id) {
        return Ok(*found);
    }
    let found = match st.tangle.get(id) {
        Some(m) => Some(Seen {
            referenced_by: m.view.referenced_by,
            at: Location::from_u64(m.record),
        }),
        None => match reader.get_near(&LogId::V2(*id), near) {
            Some(record) => {
                let at = record.location();
                let archived = st
                    .tangle
                    .archived_at_checked(id, at.to_u64())
                    .map_err(|e| failed(e.0))?;
                Some(Seen {
                    referenced_by: archived.map(|a| a.referenced_by),
                    at,
                })
            }
            None => None,
        },
    };
    known.insert(*id, found);
    Ok(found)
}

/// Fails once the node is shutting down: a snapshot being written is given up (its temporary
/// file removed), so that a shutdown never waits for a large file.
pub(super) fn unless_stopping(stop: &AtomicBool) -> Result<(), SnapshotCreateError> {
    match stop.load(Ordering::Relaxed) {
        true => Err(failed(
            "the node is shutting down: the snapshot was not written",
        )),
        false => Ok(()),
    }
}

/// Writes `content` to `path` through the snapshot writer (temporary file, fsync, rename),
/// giving up when `stop` is set.
fn write_full(
    path: &Path,
    content: &FullContent,
    stop: &AtomicBool,
) -> Result<PathBuf, SnapshotCreateError> {
    let mut w = FullWriter::create(path, &content.header).map_err(failed)?;
    for (i, o) in content.outputs.iter().enumerate() {
        if i % 4096 == 0 {
            unless_stopping(stop)?;
        }
        w.push_output(o).map_err(failed)?;
    }
    crate::history::crash_point("snapshot-outputs-written");
    for d in &content.diffs {
        unless_stopping(stop)?;
        w.push_diff(d).map_err(failed)?;
    }
    unless_stopping(stop)?;
    for s in &content.seps {
        w.push_sep(s).map_err(failed)?;
    }
    w.finish().map_err(failed)
}
