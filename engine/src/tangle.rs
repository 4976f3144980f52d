//! The tangle: block metadata, children, solidification, tips and the
//! past-cone walk that white-flag confirmation runs over.

// hashbrown with its default foldhash (randomly seeded): block ids are hashed on every lookup.
use hashbrown::{HashMap, HashSet};

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

/// What the tangle keeps per block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockMeta {
    /// Parents in wire order.
    pub parents: Vec<BlockId>,
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
    /// Id of the transaction this block carries, if any.
    pub transaction_id: Option<[u8; 32]>,
    /// Oldest cone root index (tip scoring).
    pub ocri: u32,
    /// Youngest cone root index (tip scoring).
    pub ycri: u32,
    /// Blocks that name this one as parent.
    pub children: Vec<BlockId>,
    /// Position of the block's record in the log.
    pub record: u64,
}

/// Tip-selection parameters (Hornet's URTS defaults).
#[derive(Debug, Clone, Copy)]
pub struct TipScoring {
    /// A tip whose OCRI is more than this behind the CMI is lazy.
    pub below_max_depth: u32,
    /// A tip whose YCRI is more than this behind the CMI is lazy.
    pub max_ycri_delta: u32,
}

impl Default for TipScoring {
    fn default() -> Self {
        Self {
            below_max_depth: 15,
            max_ycri_delta: 8,
        }
    }
}

/// The tip pool: O(1) insert, remove and random pick (a vector plus positions).
#[derive(Debug, Default)]
struct TipPool {
    ids: Vec<BlockId>,
    pos: HashMap<BlockId, usize>,
}

impl TipPool {
    fn insert(&mut self, id: BlockId) {
        if !self.pos.contains_key(&id) {
            self.pos.insert(id, self.ids.len());
            self.ids.push(id);
        }
    }

    fn remove(&mut self, id: &BlockId) {
        if let Some(i) = self.pos.remove(id) {
            self.ids.swap_remove(i);
            if let Some(moved) = self.ids.get(i) {
                self.pos.insert(*moved, i);
            }
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
    #[error("block is below max depth")]
    BelowMaxDepth,
}

/// Blocks, their metadata and the tip pool.
#[derive(Debug, Default)]
pub struct Tangle {
    blocks: HashMap<BlockId, BlockMeta>,
    entry_points: HashMap<BlockId, u32>,
    // Children waiting for a missing or unsolid parent.
    waiting: HashMap<BlockId, Vec<BlockId>>,
    tips: TipPool,
    cmi: u32,
    scoring: TipScoring,
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
            entry_points: entry_points.into_iter().collect(),
            cmi,
            scoring,
            ..Self::default()
        }
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// True when no block is stored.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
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
        self.blocks.get(p).map(|m| match m.referenced_by {
            Some(i) => (m.solid, i, i),
            None => (m.solid, m.ocri, m.ycri),
        })
    }

    /// Checks that a new block with `parents` may be attached by the API:
    /// every parent known and solid, none below max depth.
    ///
    /// # Errors
    /// The first broken rule.
    pub fn check_attachable(&self, parents: &[BlockId]) -> Result<(), AttachError> {
        for p in parents {
            match self.parent_state(p) {
                Some((true, ocri, _)) => {
                    if self.cmi.saturating_sub(ocri) > self.scoring.below_max_depth {
                        return Err(AttachError::BelowMaxDepth);
                    }
                }
                _ => return Err(AttachError::NotSolid(format!("0x{}", hex::encode(p)))),
            }
        }
        Ok(())
    }

    /// Adds a block (idempotent: a known id changes nothing and returns false).
    /// Solidity propagates to waiting children.
    pub fn insert(
        &mut self,
        id: BlockId,
        parents: Vec<BlockId>,
        transaction_id: Option<[u8; 32]>,
        milestone_index: Option<u32>,
        record: u64,
    ) -> bool {
        if self.blocks.contains_key(&id) || self.entry_points.contains_key(&id) {
            return false;
        }
        for p in &parents {
            if let Some(m) = self.blocks.get_mut(p) {
                m.children.push(id);
            }
            self.tips.remove(p);
        }
        let meta = BlockMeta {
            parents,
            solid: false,
            referenced_by: None,
            white_flag_index: None,
            inclusion: Inclusion::Pending,
            milestone_index,
            transaction_id,
            ocri: 0,
            ycri: 0,
            // Children that arrived before this block.
            children: self.waiting.get(&id).cloned().unwrap_or_default(),
            record,
        };
        self.blocks.insert(id, meta);
        self.try_solidify(id);
        true
    }

    fn try_solidify(&mut self, start: BlockId) {
        let mut stack = vec![start];
        while let Some(id) = stack.pop() {
            let Some(meta) = self.blocks.get(&id) else {
                continue;
            };
            if meta.solid {
                continue;
            }
            let mut ocri = u32::MAX;
            let mut ycri = 0;
            let mut missing = None;
            for p in &meta.parents {
                match self.parent_state(p) {
                    Some((true, o, y)) => {
                        ocri = ocri.min(o);
                        ycri = ycri.max(y);
                    }
                    _ => {
                        missing = Some(*p);
                        break;
                    }
                }
            }
            if let Some(p) = missing {
                let w = self.waiting.entry(p).or_default();
                if !w.contains(&id) {
                    w.push(id);
                }
                continue;
            }
            let has_children = !meta.children.is_empty();
            if let Some(m) = self.blocks.get_mut(&id) {
                m.solid = true;
                m.ocri = if ocri == u32::MAX { self.cmi } else { ocri };
                m.ycri = ycri;
                if m.referenced_by.is_none() && !has_children {
                    self.tips.insert(id);
                }
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

    fn is_non_lazy(&self, id: &BlockId) -> bool {
        self.blocks.get(id).is_some_and(|m| {
            self.cmi.saturating_sub(m.ocri) <= self.scoring.below_max_depth
                && self.cmi.saturating_sub(m.ycri) <= self.scoring.max_ycri_delta
        })
    }

    /// Up to `count` distinct non-lazy tips, sorted, drawn at random as Hornet's URTS does
    /// (at most `(count − 1) × 10` random picks), so the cost does not grow with the pool.
    pub fn select_tips(&self, count: usize, rng: &mut impl rand::Rng) -> Vec<BlockId> {
        let draws = count.saturating_sub(1).max(1) * 10;
        let mut out: Vec<BlockId> = Vec::with_capacity(count);
        if self.tips.ids.len() <= draws {
            // Small pool: look at every tip, pick at random among the non-lazy ones.
            let mut all: Vec<BlockId> = self
                .tips
                .iter()
                .filter(|t| self.is_non_lazy(t))
                .copied()
                .collect();
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
        let mut order = Vec::new();
        let mut seen: HashSet<BlockId> = HashSet::new();
        // (block, next parent position to visit)
        let mut stack: Vec<(BlockId, usize)> = Vec::new();
        for root in parents {
            if self.entry_points.contains_key(root) || !seen.insert(*root) {
                continue;
            }
            match self.blocks.get(root) {
                Some(m) if m.referenced_by.is_some() => continue,
                Some(_) => stack.push((*root, 0)),
                None => return Err(*root),
            }
            while let Some((id, next)) = stack.last().copied() {
                let meta = self.blocks.get(&id).ok_or(id)?;
                if let Some(p) = meta.parents.get(next) {
                    if let Some(top) = stack.last_mut() {
                        top.1 += 1;
                    }
                    if self.entry_points.contains_key(p) || !seen.insert(*p) {
                        continue;
                    }
                    match self.blocks.get(p) {
                        Some(m) if m.referenced_by.is_some() => {}
                        Some(_) => stack.push((*p, 0)),
                        None => return Err(*p),
                    }
                } else {
                    order.push(id);
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
            .is_some_and(|m| m.referenced_by.is_none())
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
        for (i, (id, inclusion)) in referenced.iter().enumerate() {
            self.tips.remove(id);
            self.signature_verdicts.remove(id);
            if let Some(m) = self.blocks.get_mut(id) {
                m.referenced_by = Some(index);
                m.white_flag_index = u32::try_from(i).ok();
                m.inclusion = *inclusion;
                m.ocri = index;
                m.ycri = index;
            }
        }
        self.cmi = self.cmi.max(index);
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
        assert!(t.insert(id(1), vec![id(0)], None, None, 0));
        assert!(t.get(&id(1)).unwrap().solid);
        assert_eq!(t.tips(), vec![id(1)]);
        assert!(
            !t.insert(id(1), vec![id(0)], None, None, 0),
            "second insert is a no-op"
        );
    }

    #[test]
    fn solidity_propagates_when_a_missing_parent_arrives() {
        let mut t = tangle();
        t.insert(id(3), vec![id(2)], None, None, 0);
        assert!(!t.get(&id(3)).unwrap().solid);
        assert!(t.check_attachable(&[id(3)]).is_err());
        t.insert(id(2), vec![id(0)], None, None, 0);
        assert!(t.get(&id(3)).unwrap().solid);
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
        t.insert(id(1), vec![id(0)], None, None, 0);
        t.insert(id(2), vec![id(0)], None, None, 0);
        t.insert(id(3), vec![id(1), id(2)], None, None, 0);
        t.insert(id(4), vec![id(2), id(3)], None, None, 0);
        assert_eq!(
            t.unreferenced_cone(&[id(4)]).unwrap(),
            vec![id(2), id(1), id(3), id(4)]
        );
        t.confirm(1, &[(id(1), Inclusion::NoTransaction)]);
        assert_eq!(
            t.unreferenced_cone(&[id(4)]).unwrap(),
            vec![id(2), id(3), id(4)]
        );
        assert_eq!(t.get(&id(1)).unwrap().referenced_by, Some(1));
    }

    #[test]
    fn selects_up_to_four_sorted_non_lazy_tips_from_a_large_pool() {
        let mut t = tangle();
        for n in 1..=200u8 {
            t.insert(id(n), vec![id(0)], None, None, 0);
        }
        assert_eq!(t.tips().len(), 200);
        let picked = t.select_tips(4, &mut rand::thread_rng());
        assert_eq!(picked.len(), 4);
        assert!(picked.windows(2).all(|w| w[0] < w[1]), "sorted and unique");
        assert!(picked.iter().all(|p| t.tips().contains(p)));
        // Removing tips keeps the pool consistent.
        t.insert(id(201), picked.clone(), None, None, 0);
        assert_eq!(t.tips().len(), 197);
        assert!(picked.iter().all(|p| !t.tips().contains(p)));
    }

    #[test]
    fn signature_verdicts_are_cached_until_the_block_is_referenced() {
        let mut t = tangle();
        t.set_signature_verdicts(&id(1), 1);
        assert_eq!(t.signature_verdicts(&id(1)), None, "unknown block");
        t.insert(id(1), vec![id(0)], None, None, 0);
        t.insert(id(2), vec![id(0)], None, None, 0);
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
        t.insert(id(1), vec![id(0)], None, None, 0);
        t.confirm(20, &[]);
        assert_eq!(
            t.check_attachable(&[id(1)]),
            Err(AttachError::BelowMaxDepth)
        );
        assert!(t.non_lazy_tips().is_empty());
        assert_eq!(t.tips(), vec![id(1)]);
    }
}
