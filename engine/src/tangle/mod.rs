//! The tangle: block metadata, children, solidification, tips and the
//! past-cone walk that white-flag confirmation runs over.

// hashbrown with its default foldhash (randomly seeded): block ids are hashed on every lookup.
use std::collections::VecDeque;

use hashbrown::{HashMap, HashSet};

use crate::sharded::ShardedMap;

mod archive;
pub use archive::{Archive, ArchiveError, Archived, MemoryArchive};

/// A v2 block id.
pub type BlockId = [u8; 32];

/// A block's ledger inclusion state (TIP-2), as in block metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inclusion {
    /// Not referenced by a milestone yet.
    Pending,
    /// Referenced; the block holds no transaction.
    NoTransaction,
    /// Referenced; its transaction was applied to the ledger.
    Included,
    /// Referenced; its transaction conflicted (TIP-2 conflict reason code).
    Conflicting(u8),
}

/// What the API may see of a block's row: solidity, confirmation and inclusion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockView {
    /// All parents are known and solid (or solid entry points).
    pub solid: bool,
    /// Index of the milestone that referenced it.
    pub referenced_by: Option<u32>,
    /// Position in its milestone's white-flag order.
    pub white_flag_index: Option<u32>,
    /// Inclusion state.
    pub inclusion: Inclusion,
    /// Index of the milestone this block carries, if any.
    pub milestone_index: Option<u32>,
}

/// What the tangle keeps per block: the view, and what only the engine reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockMeta {
    /// What the API may see.
    pub view: BlockView,
    /// Parents in wire order, while the block is unreferenced. Every walk of the tangle stops
    /// at referenced blocks, so confirmation drops the list; the stored block still has them.
    pub parents: Vec<BlockId>,
    /// Id of the transaction this block carries, if any.
    pub transaction_id: Option<[u8; 32]>,
    /// Oldest cone root index (tip scoring).
    pub ocri: u32,
    /// Youngest cone root index (tip scoring).
    pub ycri: u32,
    /// Blocks that name this one as parent, while it is unreferenced. Its confirmation walks
    /// them once (cone root indexes of the future cone) and drops them; children that
    /// arrive later are not recorded on a referenced block. Most of the history then keeps
    /// no child list in memory.
    pub children: Vec<BlockId>,
    /// Position of the block's record in the log.
    pub record: u64,
    /// The confirmed milestone index when the block arrived: an unreferenced block goes when
    /// pruning passes it (Hornet files such blocks under the milestone index of their
    /// arrival, `pkg/tangle/message.go`).
    pub filed: u32,
}

/// How many milestones the row of a referenced block stays in memory after the one that
/// referenced it. Nothing walks a referenced block (cone walks, solidification and cone root
/// indexes stop there; a referenced parent contributes its milestone index, which the archive
/// answers as well), so the rows only spare the archive the lookups of blocks that name the
/// latest referenced blocks as parents, which most new blocks do.
pub const REFERENCED_WINDOW: u32 = 1;

/// Tip-selection parameters (Hornet's URTS defaults).
#[derive(Debug, Clone, Copy)]
pub struct TipScoring {
    /// A block whose OCRI is more than this behind the CMI is below max depth:
    /// lazy, and refused as a parent.
    pub below_max_depth: u32,
    /// A tip whose YCRI is more than this behind the CMI is lazy.
    pub max_ycri_delta: u32,
    /// A tip whose OCRI is more than this behind the CMI is semi-lazy.
    pub max_ocri_delta: u32,
}

impl Default for TipScoring {
    fn default() -> Self {
        Self {
            below_max_depth: 15,
            max_ycri_delta: 8,
            max_ocri_delta: 13,
        }
    }
}

/// The score of a solid, unreferenced block at the current CMI (Hornet's
/// `TipScore`), checked in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TipScore {
    /// OCRI more than `below_max_depth` behind: lazy; the block must be re-sent.
    BelowMaxDepth,
    /// YCRI more than `max_ycri_delta` behind: lazy; the block should be promoted.
    YcriThresholdReached,
    /// OCRI more than `max_ocri_delta` behind: semi-lazy; the block should be promoted.
    OcriThresholdReached,
    /// Non-lazy: a good parent.
    Healthy,
}

impl TipScore {
    /// `(shouldPromote, shouldReattach)` of block metadata for this score.
    pub fn promote_reattach(self) -> (bool, bool) {
        match self {
            Self::BelowMaxDepth => (false, true),
            Self::YcriThresholdReached | Self::OcriThresholdReached => (true, false),
            Self::Healthy => (false, false),
        }
    }
}

impl TipScoring {
    /// Scores cone root indexes `(ocri, ycri)` against `cmi`.
    pub fn score(&self, ocri: u32, ycri: u32, cmi: u32) -> TipScore {
        let ocri_delta = cmi.saturating_sub(ocri);
        if ocri_delta > self.below_max_depth {
            TipScore::BelowMaxDepth
        } else if cmi.saturating_sub(ycri) > self.max_ycri_delta {
            TipScore::YcriThresholdReached
        } else if ocri_delta > self.max_ocri_delta {
            TipScore::OcriThresholdReached
        } else {
            TipScore::Healthy
        }
    }
}

/// The tip pool: O(1) insert, remove and random pick (a vector plus positions).
#[derive(Debug, Default)]
struct TipPool {
    ids: Vec<BlockId>,
    pos: HashMap<BlockId, usize>,
    // Blocks added to or removed from the pool since the last take, once watched
    // (`Tangle::watch_tip_changes`).
    changed: Option<Vec<BlockId>>,
}

impl TipPool {
    fn insert(&mut self, id: BlockId) {
        if !self.pos.contains_key(&id) {
            self.pos.insert(id, self.ids.len());
            self.ids.push(id);
            self.note(id);
        }
    }

    fn remove(&mut self, id: &BlockId) {
        if let Some(i) = self.pos.remove(id) {
            self.ids.swap_remove(i);
            if let Some(moved) = self.ids.get(i) {
                self.pos.insert(*moved, i);
            }
            self.note(*id);
        }
    }

    fn note(&mut self, id: BlockId) {
        if let Some(changed) = &mut self.changed {
            changed.push(id);
        }
    }

    fn iter(&self) -> impl Iterator<Item = &BlockId> {
        self.ids.iter()
    }
}

/// Why a block cannot be attached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AttachError {
    /// A parent is unknown or not solid.
    #[error("block is not solid: parent {0} is unknown or not solid")]
    NotSolid(String),
    /// A parent is below max depth.
    #[error(
        "block is below max depth: parent {parent} has oldest cone root index {ocri}, \
         more than {below_max_depth} behind the confirmed milestone index {cmi}"
    )]
    BelowMaxDepth {
        /// The parent, as `0x…` hex.
        parent: String,
        /// The parent's oldest cone root index.
        ocri: u32,
        /// The confirmed milestone index.
        cmi: u32,
        /// The network's below-max-depth.
        below_max_depth: u32,
    },
}

/// Blocks, their metadata and the tip pool.
///
/// Cone root indexes (OCRI/YCRI) follow one definition, kept here: for an
/// unreferenced block, the min/max over its parents' contributions, where a
/// referenced parent contributes the index of the milestone that referenced
/// it, a solid entry point its own index, and an unreferenced parent its own
/// OCRI/YCRI. They are kept current eagerly: each confirmation recomputes the
/// unreferenced future cone of the blocks it referenced (stopping where a
/// value does not change), so a stored value is always the value at the
/// current CMI. During bulk loading ([`Tangle::begin_bulk_load`]) the
/// refresh is deferred to one topological pass at the end.
#[derive(Debug)]
pub struct Tangle {
    blocks: ShardedMap<BlockMeta>,
    // Referenced blocks whose rows are still in memory, by the milestone that referenced them
    // (oldest first): a row leaves memory, its metadata kept by `archive`, once its
    // milestone is more than `REFERENCED_WINDOW` behind the CMI.
    window: VecDeque<(u32, Vec<BlockId>)>,
    archive: Box<dyn Archive>,
    entry_points: HashMap<BlockId, u32>,
    // Children waiting for a missing or unsolid parent.
    waiting: HashMap<BlockId, Vec<BlockId>>,
    tips: TipPool,
    cmi: u32,
    scoring: TipScoring,
    // Bulk loading: confirmations skip the future-cone refresh.
    bulk: bool,
    // Ed25519 verdicts of unreferenced blocks' Signature Unlocks, checked on
    // arrival (bit i set: unlock i holds a valid signature). Not part of the
    // block metadata: a cache, dropped when the block is referenced.
    signature_verdicts: HashMap<BlockId, u128>,
}

impl Tangle {
    /// An empty tangle with the given solid entry points (id → milestone index).
    pub fn new(
        entry_points: impl IntoIterator<Item = (BlockId, u32)>,
        cmi: u32,
        scoring: TipScoring,
    ) -> Self {
        Self {
            blocks: ShardedMap::default(),
            window: VecDeque::new(),
            archive: Box::new(MemoryArchive::default()),
            entry_points: entry_points.into_iter().collect(),
            waiting: HashMap::new(),
            tips: TipPool::default(),
            cmi,
            scoring,
            bulk: false,
            signature_verdicts: HashMap::new(),
        }
    }

    /// Keeps the metadata of referenced blocks whose rows leave memory in `archive` (a
    /// [`MemoryArchive`] by default).
    pub fn with_archive(mut self, archive: Box<dyn Archive>) -> Self {
        self.archive = archive;
        self
    }

    /// The archived metadata of `id`, if its row left memory (or was never loaded) and a
    /// milestone up to the CMI referenced it. Damaged metadata is reported and not used.
    pub fn archived(&self, id: &BlockId) -> Option<(Archived, u64)> {
        let record = self.archive.locate(id)?;
        self.archived_at(id, record).map(|a| (a, record))
    }

    /// [`Self::archived`], with damaged metadata as an error instead of a log line (for
    /// answers that must say why they have none).
    ///
    /// # Errors
    /// The block's archived metadata is damaged (the message names the file).
    pub fn archived_checked(&self, id: &BlockId) -> Result<Option<(Archived, u64)>, ArchiveError> {
        let Some(record) = self.archive.locate(id) else {
            return Ok(None);
        };
        Ok(self.read_archived(id, record)?.map(|a| (a, record)))
    }

    /// [`Self::archived_checked`] for a block whose log record is known.
    ///
    /// # Errors
    /// The block's archived metadata is damaged (the message names the file).
    pub fn archived_at_checked(
        &self,
        id: &BlockId,
        record: u64,
    ) -> Result<Option<Archived>, ArchiveError> {
        self.read_archived(id, record)
    }

    /// [`Self::archived`] for a block whose log record is known.
    pub fn archived_at(&self, id: &BlockId, record: u64) -> Option<Archived> {
        self.read_archived(id, record).unwrap_or_else(|e| {
            tracing::error!("block metadata not used: {e}");
            None
        })
    }

    /// The one rule for archived metadata: used only up to the CMI. Metadata written for a
    /// milestone above it belongs to a confirmation that will be made again (a restart from
    /// an older checkpoint).
    fn read_archived(&self, id: &BlockId, record: u64) -> Result<Option<Archived>, ArchiveError> {
        Ok(self
            .archive
            .read(id, record)?
            .filter(|a| a.referenced_by <= self.cmi))
    }

    /// The archive's files written since the last call (see [`Archive::take_unsynced`]);
    /// an error is logged and gives none, and the checkpoint that asked fails its own sync.
    pub fn archive_files_to_sync(
        &mut self,
    ) -> Result<Vec<(std::path::PathBuf, std::fs::File)>, ArchiveError> {
        self.archive.take_unsynced()
    }

    /// Drops the archived metadata of blocks stored in log segments below `segment`
    /// (retired by pruning); see [`Archive::retire_below`].
    ///
    /// # Errors
    /// A file could not be deleted.
    pub fn retire_archive_below(&mut self, segment: u32) -> Result<usize, ArchiveError> {
        self.archive.retire_below(segment)
    }

    /// Moves the CMI to `cmi` without confirming anything: the state up to it was loaded
    /// from a checkpoint, its referenced blocks are in the archive.
    pub fn resume_at(&mut self, cmi: u32) {
        self.cmi = self.cmi.max(cmi);
    }

    /// The log records of the unreferenced blocks, in log order.
    pub fn unreferenced_records(&self) -> Vec<u64> {
        let mut records: Vec<u64> = self
            .blocks
            .iter()
            .filter(|(_, m)| m.view.referenced_by.is_none())
            .map(|(_, m)| m.record)
            .collect();
        records.sort_unstable();
        records
    }

    /// Referenced blocks whose rows are still in memory (the below-max-depth window).
    pub fn window_len(&self) -> usize {
        self.window.iter().map(|(_, ids)| ids.len()).sum()
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// True when no block is stored.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// How many milestones a block's oldest cone root may lag before it is below max depth.
    pub fn below_max_depth(&self) -> u32 {
        self.scoring.below_max_depth
    }

    /// The confirmed milestone index.
    pub fn cmi(&self) -> u32 {
        self.cmi
    }

    /// Metadata of `id`.
    pub fn get(&self, id: &BlockId) -> Option<&BlockMeta> {
        self.blocks.get(id)
    }

    /// True when `id` is a solid entry point.
    pub fn is_entry_point(&self, id: &BlockId) -> bool {
        self.entry_points.contains_key(id)
    }

    /// Solid entry points.
    pub fn entry_points(&self) -> impl Iterator<Item = &BlockId> {
        self.entry_points.keys()
    }

    fn parent_state(&self, p: &BlockId) -> Option<(bool, u32, u32)> {
        if let Some(i) = self.entry_points.get(p) {
            return Some((true, *i, *i));
        }
        match self.blocks.get(p) {
            Some(m) => Some(match m.view.referenced_by {
                Some(i) => (m.view.solid, i, i),
                None => (m.view.solid, m.ocri, m.ycri),
            }),
            None => self
                .archived(p)
                .map(|(a, _)| (true, a.referenced_by, a.referenced_by)),
        }
    }

    /// Checks that a new block with `parents` may be attached by the API:
    /// every parent known and solid, none below max depth.
    ///
    /// # Errors
    /// The first broken rule.
    pub fn check_attachable(&self, parents: &[BlockId]) -> Result<(), AttachError> {
        for p in parents {
            match self.parent_state(p) {
                Some((true, ocri, ycri)) => {
                    if self.scoring.score(ocri, ycri, self.cmi) == TipScore::BelowMaxDepth {
                        return Err(AttachError::BelowMaxDepth {
                            parent: format!("0x{}", hex::encode(p)),
                            ocri,
                            cmi: self.cmi,
                            below_max_depth: self.scoring.below_max_depth,
                        });
                    }
                }
                _ => return Err(AttachError::NotSolid(format!("0x{}", hex::encode(p)))),
            }
        }
        Ok(())
    }

    /// Adds a block (idempotent: a known id changes nothing and returns false), and
    /// propagates solidity to waiting children. Appends to `solidified`, when given, every
    /// block that became solid because of it (the block itself first, then waiting
    /// children, in the order they solidified).
    pub fn insert(
        &mut self,
        id: BlockId,
        parents: Vec<BlockId>,
        transaction_id: Option<[u8; 32]>,
        milestone_index: Option<u32>,
        record: u64,
        solidified: Option<&mut Vec<BlockId>>,
    ) -> bool {
        if self.blocks.contains_key(&id)
            || self.entry_points.contains_key(&id)
            || self.archived_at(&id, record).is_some()
        {
            return false;
        }
        for p in &parents {
            if let Some(m) = self.blocks.get_mut(p) {
                if m.view.referenced_by.is_none() {
                    m.children.push(id);
                }
            }
            self.tips.remove(p);
        }
        let meta = BlockMeta {
            view: BlockView {
                solid: false,
                referenced_by: None,
                white_flag_index: None,
                inclusion: Inclusion::Pending,
                milestone_index,
            },
            parents,
            transaction_id,
            ocri: 0,
            ycri: 0,
            // Children that arrived before this block.
            children: self.waiting.get(&id).cloned().unwrap_or_default(),
            record,
            filed: self.cmi,
        };
        self.blocks.insert(id, meta);
        self.try_solidify(id, solidified);
        true
    }

    /// True when `id` is neither a stored block nor a solid entry point.
    pub fn is_unknown(&self, id: &BlockId) -> bool {
        !self.blocks.contains_key(id)
            && !self.entry_points.contains_key(id)
            && self.archived(id).is_none()
    }

    /// Up to `limit` blocks of the past cone of `parents` that are not in the tangle: the
    /// walk stops at solid blocks and solid entry points, and goes through stored blocks
    /// that are not solid yet. What a node must fetch before the cone can be confirmed.
    pub fn missing_in_cone(&self, parents: &[BlockId], limit: usize) -> Vec<BlockId> {
        let mut missing = Vec::new();
        let mut seen: HashSet<BlockId> = HashSet::new();
        let mut stack: Vec<BlockId> = parents.to_vec();
        while let Some(id) = stack.pop() {
            if missing.len() >= limit {
                break;
            }
            if self.entry_points.contains_key(&id) || !seen.insert(id) {
                continue;
            }
            match self.blocks.get(&id) {
                Some(m) if m.view.solid => {}
                Some(m) => stack.extend(m.parents.iter().copied()),
                None if self.archived(&id).is_some() => {}
                None => missing.push(id),
            }
        }
        missing
    }

    /// `(ocri, ycri)` of a block with `parents`, from their contributions (see
    /// [`Tangle`]); the first parent that is unknown or not solid otherwise.
    fn cone_roots(&self, parents: &[BlockId]) -> Result<(u32, u32), BlockId> {
        let mut ocri = u32::MAX;
        let mut ycri = 0;
        for p in parents {
            match self.parent_state(p) {
                Some((true, o, y)) => {
                    ocri = ocri.min(o);
                    ycri = ycri.max(y);
                }
                _ => return Err(*p),
            }
        }
        Ok((if ocri == u32::MAX { self.cmi } else { ocri }, ycri))
    }

    fn try_solidify(&mut self, start: BlockId, mut solidified: Option<&mut Vec<BlockId>>) {
        let mut stack = vec![start];
        while let Some(id) = stack.pop() {
            let Some(meta) = self.blocks.get(&id) else {
                continue;
            };
            if meta.view.solid {
                continue;
            }
            let (ocri, ycri) = match self.cone_roots(&meta.parents) {
                Ok(roots) => roots,
                Err(p) => {
                    let w = self.waiting.entry(p).or_default();
                    if !w.contains(&id) {
                        w.push(id);
                    }
                    continue;
                }
            };
            let has_children = !meta.children.is_empty();
            if let Some(m) = self.blocks.get_mut(&id) {
                m.view.solid = true;
                m.ocri = ocri;
                m.ycri = ycri;
                if m.view.referenced_by.is_none() && !has_children {
                    self.tips.insert(id);
                }
            }
            if let Some(out) = solidified.as_deref_mut() {
                out.push(id);
            }
            if let Some(children) = self.waiting.remove(&id) {
                stack.extend(children);
            }
        }
    }

    /// All current tips: solid, unreferenced blocks without children.
    pub fn tips(&self) -> Vec<BlockId> {
        let mut t: Vec<BlockId> = self.tips.iter().copied().collect();
        t.sort_unstable();
        t
    }

    /// From now on, remember which blocks enter or leave the tip pool (for the event API's
    /// `tip-score-updates`, Hornet's `TipAdded`/`TipRemoved`); [`Tangle::take_tip_changes`]
    /// hands them out.
    pub fn watch_tip_changes(&mut self) {
        self.tips.changed.get_or_insert_with(Vec::new);
    }

    /// The blocks that entered or left the tip pool since the last call, each once, in the
    /// order of their first change; empty unless watched.
    pub fn take_tip_changes(&mut self) -> Vec<BlockId> {
        let Some(changed) = self.tips.changed.as_mut().map(std::mem::take) else {
            return Vec::new();
        };
        let mut seen = HashSet::with_capacity(changed.len());
        changed.into_iter().filter(|id| seen.insert(*id)).collect()
    }

    /// The tip score of `id` at the current CMI; `None` for a block that is
    /// unknown, not solid or already referenced (no score applies).
    pub fn tip_score(&self, id: &BlockId) -> Option<TipScore> {
        self.blocks
            .get(id)
            .filter(|m| m.view.solid && m.view.referenced_by.is_none())
            .map(|m| self.scoring.score(m.ocri, m.ycri, self.cmi))
    }

    /// Non-lazy: neither lazy nor semi-lazy.
    fn is_non_lazy(&self, id: &BlockId) -> bool {
        self.tip_score(id) == Some(TipScore::Healthy)
    }

    /// Up to `count` distinct non-lazy tips, sorted, drawn at random as Hornet's URTS does
    /// (at most `(count − 1) × 10` random picks), so the cost does not grow with the pool.
    pub fn select_tips(&self, count: usize, rng: &mut impl rand::Rng) -> Vec<BlockId> {
        let draws = count.saturating_sub(1).max(1) * 10;
        let mut out: Vec<BlockId> = Vec::with_capacity(count);
        if self.tips.ids.len() <= draws {
            // Small pool: look at every tip, pick at random among the non-lazy ones.
            let mut all = self.non_lazy_tips();
            rand::seq::SliceRandom::shuffle(all.as_mut_slice(), rng);
            all.truncate(count);
            out = all;
        } else {
            for _ in 0..draws {
                if out.len() == count {
                    break;
                }
                let t = self.tips.ids[rng.gen_range(0..self.tips.ids.len())];
                if !out.contains(&t) && self.is_non_lazy(&t) {
                    out.push(t);
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// Sizes of the tip pool by score: `(healthy, semi-lazy, lazy)`, where
    /// lazy counts both YCRI-lazy tips and tips below max depth.
    pub fn tip_pool_sizes(&self) -> (usize, usize, usize) {
        let mut sizes = (0, 0, 0);
        for id in self.tips.iter() {
            match self.tip_score(id) {
                Some(TipScore::Healthy) => sizes.0 += 1,
                Some(TipScore::OcriThresholdReached) => sizes.1 += 1,
                Some(TipScore::YcriThresholdReached | TipScore::BelowMaxDepth) => sizes.2 += 1,
                None => {}
            }
        }
        sizes
    }

    /// Non-lazy tips (scored against the CMI), sorted.
    pub fn non_lazy_tips(&self) -> Vec<BlockId> {
        let mut t: Vec<BlockId> = self
            .tips
            .iter()
            .filter(|id| self.is_non_lazy(id))
            .copied()
            .collect();
        t.sort_unstable();
        t
    }

    /// Post-order DFS over the not-yet-referenced past cone of `parents`,
    /// visiting parents in their stored order (TIP-2 white-flag order).
    /// Entry points and referenced blocks are skipped.
    ///
    /// # Errors
    /// The id of a block of the cone that is not in the tangle.
    pub fn unreferenced_cone(&self, parents: &[BlockId]) -> Result<Vec<BlockId>, BlockId> {
        // Sized for every unreferenced block: the set never grows (and rehashes) on the way.
        let unreferenced = self.len().saturating_sub(self.window_len());
        let mut order = Vec::with_capacity(unreferenced);
        let mut seen: HashSet<BlockId> = HashSet::with_capacity(unreferenced);
        // (block, its parents, next parent position to visit): the parents are borrowed
        // once, so each step looks up only the parent it visits.
        let mut stack: Vec<(BlockId, &[BlockId], usize)> = Vec::new();
        for root in parents {
            if self.entry_points.contains_key(root) || !seen.insert(*root) {
                continue;
            }
            match self.blocks.get(root) {
                Some(m) if m.view.referenced_by.is_some() => continue,
                Some(m) => stack.push((*root, &m.parents, 0)),
                None if self.archived(root).is_some() => continue,
                None => return Err(*root),
            }
            while let Some((id, its_parents, next)) = stack.last_mut() {
                if let Some(p) = its_parents.get(*next) {
                    *next += 1;
                    if self.entry_points.contains_key(p) || !seen.insert(*p) {
                        continue;
                    }
                    match self.blocks.get(p) {
                        Some(m) if m.view.referenced_by.is_some() => {}
                        Some(m) => stack.push((*p, &m.parents, 0)),
                        None if self.archived(p).is_some() => {}
                        None => return Err(*p),
                    }
                } else {
                    order.push(*id);
                    stack.pop();
                }
            }
        }
        Ok(order)
    }

    /// Caches the signature verdicts of the unreferenced block `id` (bit i
    /// set: unlock i is a Signature Unlock whose signature verifies over the
    /// essence signing hash). Unknown or referenced blocks are ignored.
    pub fn set_signature_verdicts(&mut self, id: &BlockId, verdicts: u128) {
        if self
            .blocks
            .get(id)
            .is_some_and(|m| m.view.referenced_by.is_none())
        {
            self.signature_verdicts.insert(*id, verdicts);
        }
    }

    /// The cached signature verdicts of `id`, if it was checked on arrival.
    pub fn signature_verdicts(&self, id: &BlockId) -> Option<u128> {
        self.signature_verdicts.get(id).copied()
    }

    /// Forgets every cached signature verdict (white-flag then verifies all).
    pub fn clear_signature_verdicts(&mut self) {
        self.signature_verdicts.clear();
    }

    /// Marks the blocks of a confirmed milestone as referenced, in
    /// white-flag order, with their inclusion states, and moves the CMI.
    pub fn confirm(&mut self, index: u32, referenced: &[(BlockId, Inclusion)]) {
        // Children of the newly referenced blocks: where the cone root refresh starts. The
        // lists are taken, not copied: a referenced block keeps neither its children nor
        // its parents (see `BlockMeta`).
        let mut children = Vec::new();
        let mut archived = Vec::with_capacity(referenced.len());
        // Blocks whose metadata could not be archived, and the first reason (logged once).
        let mut kept: Option<(usize, ArchiveError)> = None;
        for (i, (id, inclusion)) in referenced.iter().enumerate() {
            self.tips.remove(id);
            self.signature_verdicts.remove(id);
            if let Some(m) = self.blocks.get_mut(id) {
                let white_flag_index = u32::try_from(i).unwrap_or(u32::MAX);
                m.view.referenced_by = Some(index);
                m.view.white_flag_index = Some(white_flag_index);
                m.view.inclusion = *inclusion;
                m.ocri = index;
                m.ycri = index;
                children.extend(std::mem::take(&mut m.children));
                m.parents = Vec::new();
                let meta = Archived {
                    referenced_by: index,
                    white_flag_index,
                    inclusion: *inclusion,
                };
                // A row whose metadata could not be archived stays in memory.
                match self.archive.write(id, m.record, &meta) {
                    Ok(()) => archived.push(*id),
                    Err(e) => kept.get_or_insert((0, e)).0 += 1,
                }
            }
        }
        if let Some((blocks, e)) = kept {
            tracing::error!(
                milestone = index,
                blocks,
                "block metadata kept in memory: {e}"
            );
        }
        self.cmi = self.cmi.max(index);
        self.window.push_back((index, archived));
        self.evict_below(index.saturating_sub(REFERENCED_WINDOW));
        if !self.bulk {
            self.refresh_cone_roots(children);
        }
    }

    /// Drops the rows of blocks referenced by milestones before `index` (their metadata is
    /// archived): nothing walks them any more, and lookups read the archive.
    fn evict_below(&mut self, index: u32) {
        while self.window.front().is_some_and(|(i, _)| *i < index) {
            if let Some((_, ids)) = self.window.pop_front() {
                for id in ids {
                    self.blocks.remove(&id);
                }
            }
        }
        self.blocks.shrink_sparse();
    }

    /// Drops every unreferenced block filed at or below `index` (see [`BlockMeta::filed`]):
    /// blocks whose parents never came, and solid ones no milestone took, which are below
    /// max depth long before pruning reaches them. Returns how many went.
    pub fn prune_unreferenced(&mut self, index: u32) -> usize {
        let gone: HashSet<BlockId> = self
            .blocks
            .iter()
            .filter(|(_, m)| m.view.referenced_by.is_none() && m.filed <= index)
            .map(|(id, _)| *id)
            .collect();
        for id in &gone {
            self.blocks.remove(id);
            self.tips.remove(id);
            self.signature_verdicts.remove(id);
        }
        self.waiting.retain(|_, children| {
            children.retain(|c| !gone.contains(c));
            !children.is_empty()
        });
        self.blocks.shrink_sparse();
        gone.len()
    }

    /// Starts bulk loading (replay of a stored tangle): confirmations no
    /// longer refresh cone root indexes until [`Tangle::end_bulk_load`].
    pub fn begin_bulk_load(&mut self) {
        self.bulk = true;
    }

    /// Ends bulk loading: recomputes the cone root indexes of every solid,
    /// unreferenced block once, parents first.
    pub fn end_bulk_load(&mut self) {
        self.bulk = false;
        let unreferenced: Vec<BlockId> = self
            .blocks
            .iter()
            .filter(|(_, m)| m.view.solid && m.view.referenced_by.is_none())
            .map(|(id, _)| *id)
            .collect();
        self.recompute_in_order(&unreferenced.into_iter().collect(), false);
    }

    /// Recomputes the cone root indexes of the solid, unreferenced future cone
    /// that starts at `children` (of the blocks just referenced), parents before
    /// children; a block whose values do not change does not pass the walk on to
    /// its children.
    fn refresh_cone_roots(&mut self, children: Vec<BlockId>) {
        let mut cone: HashSet<BlockId> = HashSet::new();
        let mut stack = children;
        while let Some(id) = stack.pop() {
            let Some(m) = self.blocks.get(&id) else {
                continue;
            };
            if m.view.solid && m.view.referenced_by.is_none() && cone.insert(id) {
                stack.extend(m.children.iter().copied());
            }
        }
        self.recompute_in_order(&cone, true);
    }

    /// Recomputes the cone root indexes of every block of `set` (solid and
    /// unreferenced), each after its parents in `set`. With `prune`, a block
    /// whose parents all lie in `set` and kept their values is left as it is.
    fn recompute_in_order(&mut self, set: &HashSet<BlockId>, prune: bool) {
        let mut done: HashMap<BlockId, bool> = HashMap::with_capacity(set.len());
        // (block, next parent position to visit)
        let mut stack: Vec<(BlockId, usize)> = Vec::new();
        for start in set {
            if done.contains_key(start) {
                continue;
            }
            stack.push((*start, 0));
            while let Some((id, next)) = stack.last().copied() {
                let Some(meta) = self.blocks.get(&id) else {
                    stack.pop();
                    done.insert(id, false);
                    continue;
                };
                if let Some(p) = meta.parents.get(next) {
                    if let Some(top) = stack.last_mut() {
                        top.1 += 1;
                    }
                    if set.contains(p) && !done.contains_key(p) {
                        stack.push((*p, 0));
                    }
                    continue;
                }
                stack.pop();
                if done.contains_key(&id) {
                    continue;
                }
                let must = !prune
                    || meta
                        .parents
                        .iter()
                        .any(|p| done.get(p).copied().unwrap_or(true));
                let mut changed = false;
                if must {
                    if let Ok((ocri, ycri)) = self.cone_roots(&meta.parents) {
                        if let Some(m) = self.blocks.get_mut(&id) {
                            changed = (m.ocri, m.ycri) != (ocri, ycri);
                            m.ocri = ocri;
                            m.ycri = ycri;
                        }
                    }
                }
                done.insert(id, changed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> BlockId {
        [n; 32]
    }

    fn tangle() -> Tangle {
        Tangle::new([(id(0), 0)], 0, TipScoring::default())
    }

    #[test]
    fn a_block_on_entry_points_is_solid_and_a_tip() {
        let mut t = tangle();
        assert!(t.insert(id(1), vec![id(0)], None, None, 0, None));
        assert!(t.get(&id(1)).unwrap().view.solid);
        assert_eq!(t.tips(), vec![id(1)]);
        assert!(
            !t.insert(id(1), vec![id(0)], None, None, 0, None),
            "second insert is a no-op"
        );
    }

    #[test]
    fn tip_changes_are_told_once_each_and_only_when_watched() {
        let mut t = tangle();
        t.insert(id(1), vec![id(0)], None, None, 0, None);
        assert!(t.take_tip_changes().is_empty(), "not watched yet");
        t.watch_tip_changes();
        t.insert(id(2), vec![id(0)], None, None, 0, None);
        // 3 takes 1 and 2 out of the pool; 4 waits for 5; once 5 comes, 3 leaves and 4
        // enters (5 never does: it has a child when it becomes solid).
        t.insert(id(3), vec![id(1), id(2)], None, None, 0, None);
        t.insert(id(4), vec![id(5)], None, None, 0, None);
        assert_eq!(t.take_tip_changes(), vec![id(2), id(1), id(3)]);
        t.insert(id(5), vec![id(3)], None, None, 0, None);
        assert_eq!(t.take_tip_changes(), vec![id(3), id(4)]);
        assert_eq!(t.tips(), vec![id(4)]);
        t.confirm(1, &[(id(4), Inclusion::NoTransaction)]);
        assert_eq!(t.take_tip_changes(), vec![id(4)], "a referenced tip leaves");
        assert!(t.take_tip_changes().is_empty());
    }

    #[test]
    fn solidity_propagates_when_a_missing_parent_arrives() {
        let mut t = tangle();
        t.insert(id(3), vec![id(2)], None, None, 0, None);
        assert!(!t.get(&id(3)).unwrap().view.solid);
        assert!(t.check_attachable(&[id(3)]).is_err());
        t.insert(id(2), vec![id(0)], None, None, 0, None);
        assert!(t.get(&id(3)).unwrap().view.solid);
        assert_eq!(t.tips(), vec![id(3)]);
        assert!(t.check_attachable(&[id(3)]).is_ok());
        assert!(matches!(
            t.check_attachable(&[id(9)]),
            Err(AttachError::NotSolid(_))
        ));
    }

    #[test]
    fn cone_is_post_order_in_parent_order_and_skips_referenced() {
        let mut t = tangle();
        t.insert(id(1), vec![id(0)], None, None, 0, None);
        t.insert(id(2), vec![id(0)], None, None, 0, None);
        t.insert(id(3), vec![id(1), id(2)], None, None, 0, None);
        t.insert(id(4), vec![id(2), id(3)], None, None, 0, None);
        assert_eq!(
            t.unreferenced_cone(&[id(4)]).unwrap(),
            vec![id(2), id(1), id(3), id(4)]
        );
        t.confirm(1, &[(id(1), Inclusion::NoTransaction)]);
        assert_eq!(
            t.unreferenced_cone(&[id(4)]).unwrap(),
            vec![id(2), id(3), id(4)]
        );
        assert_eq!(t.get(&id(1)).unwrap().view.referenced_by, Some(1));
    }

    #[test]
    fn selects_up_to_four_sorted_non_lazy_tips_from_a_large_pool() {
        let mut t = tangle();
        for n in 1..=200u8 {
            t.insert(id(n), vec![id(0)], None, None, 0, None);
        }
        assert_eq!(t.tips().len(), 200);
        let picked = t.select_tips(4, &mut rand::thread_rng());
        assert_eq!(picked.len(), 4);
        assert!(picked.windows(2).all(|w| w[0] < w[1]), "sorted and unique");
        assert!(picked.iter().all(|p| t.tips().contains(p)));
        // Removing tips keeps the pool consistent.
        t.insert(id(201), picked.clone(), None, None, 0, None);
        assert_eq!(t.tips().len(), 197);
        assert!(picked.iter().all(|p| !t.tips().contains(p)));
    }

    #[test]
    fn signature_verdicts_are_cached_until_the_block_is_referenced() {
        let mut t = tangle();
        t.set_signature_verdicts(&id(1), 1);
        assert_eq!(t.signature_verdicts(&id(1)), None, "unknown block");
        t.insert(id(1), vec![id(0)], None, None, 0, None);
        t.insert(id(2), vec![id(0)], None, None, 0, None);
        t.set_signature_verdicts(&id(1), 0b101);
        t.set_signature_verdicts(&id(2), 0);
        assert_eq!(t.signature_verdicts(&id(1)), Some(0b101));
        assert_eq!(t.signature_verdicts(&id(2)), Some(0));
        t.confirm(1, &[(id(1), Inclusion::Included)]);
        assert_eq!(t.signature_verdicts(&id(1)), None);
        t.set_signature_verdicts(&id(1), 1);
        assert_eq!(t.signature_verdicts(&id(1)), None, "referenced block");
        t.clear_signature_verdicts();
        assert_eq!(t.signature_verdicts(&id(2)), None);
    }

    #[test]
    fn blocks_below_max_depth_cannot_be_parents() {
        let mut t = tangle();
        t.insert(id(1), vec![id(0)], None, None, 0, None);
        t.confirm(20, &[]);
        assert_eq!(
            t.check_attachable(&[id(1)]),
            Err(AttachError::BelowMaxDepth {
                parent: format!("0x{}", hex::encode(id(1))),
                ocri: 0,
                cmi: 20,
                below_max_depth: 15,
            })
        );
        assert!(t.non_lazy_tips().is_empty());
        assert_eq!(t.tip_score(&id(1)), Some(TipScore::BelowMaxDepth));
        assert_eq!(t.tips(), vec![id(1)]);
    }

    #[test]
    fn a_block_on_unreferenced_parents_is_refreshed_when_they_are_referenced() {
        let mut t = tangle();
        t.insert(id(1), vec![id(0)], None, None, 0, None);
        t.insert(id(2), vec![id(1)], None, None, 0, None);
        t.insert(id(3), vec![id(2)], None, None, 0, None);
        assert_eq!(t.get(&id(3)).map(|m| (m.ocri, m.ycri)), Some((0, 0)));
        t.confirm(5, &[(id(1), Inclusion::NoTransaction)]);
        for n in [2, 3] {
            assert_eq!(t.get(&id(n)).map(|m| (m.ocri, m.ycri)), Some((5, 5)), "{n}");
        }
        // A second parent still on an older referenced block keeps the OCRI low.
        t.insert(id(4), vec![id(1), id(3)], None, None, 0, None);
        t.confirm(9, &[(id(2), Inclusion::NoTransaction)]);
        assert_eq!(t.get(&id(3)).map(|m| (m.ocri, m.ycri)), Some((9, 9)));
        assert_eq!(t.get(&id(4)).map(|m| (m.ocri, m.ycri)), Some((5, 9)));
    }

    #[test]
    fn semi_lazy_tips_are_not_selected_but_still_attachable() {
        let mut t = tangle();
        t.insert(id(1), vec![id(0)], None, None, 0, None);
        t.confirm(1, &[(id(1), Inclusion::NoTransaction)]);
        t.insert(id(3), vec![id(0)], None, None, 0, None);
        t.confirm(15, &[(id(3), Inclusion::NoTransaction)]);
        // OCRI 1 (14 behind), YCRI 15: semi-lazy.
        t.insert(id(2), vec![id(1), id(3)], None, None, 0, None);
        assert_eq!(t.tip_score(&id(2)), Some(TipScore::OcriThresholdReached));
        assert!(t.select_tips(4, &mut rand::thread_rng()).is_empty());
        assert_eq!(t.check_attachable(&[id(2)]), Ok(()));
        assert_eq!(t.tip_pool_sizes(), (0, 1, 0));
        t.confirm(17, &[]);
        assert_eq!(t.tip_score(&id(2)), Some(TipScore::BelowMaxDepth));
        assert_eq!(t.tip_pool_sizes(), (0, 0, 1));
        assert!(t.check_attachable(&[id(2)]).is_err());
    }

    #[test]
    fn bulk_load_defers_the_refresh_to_one_pass() {
        let mut t = tangle();
        t.begin_bulk_load();
        t.insert(id(1), vec![id(0)], None, None, 0, None);
        t.insert(id(2), vec![id(1)], None, None, 0, None);
        t.confirm(3, &[(id(1), Inclusion::NoTransaction)]);
        assert_eq!(t.get(&id(2)).map(|m| (m.ocri, m.ycri)), Some((0, 0)));
        t.end_bulk_load();
        assert_eq!(t.get(&id(2)).map(|m| (m.ocri, m.ycri)), Some((3, 3)));
    }
}
