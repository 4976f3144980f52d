//! What peering asks of the engine: storing blocks that arrive by gossip (parents may still
//! be missing), announcing blocks worth passing on, and the sync state peers exchange.
//!
//! The rules a gossiped block passes are the REST rules (one copy, [`Engine::check_block`])
//! minus attachment: a gossiped block may arrive before its parents, and waits in the tangle
//! until they come.

use super::*;

/// How a v2 block reached the engine. Both run the same syntactic, PoW and milestone rules;
/// they differ only in what the block may reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Intake {
    /// Submitted through the API: every parent known, solid and not below max depth.
    Api,
    /// Received from a peer: parents may be missing (they are fetched) or old.
    Gossip,
}

/// What storing a block did (internal form of [`GossipStored`]).
#[derive(Debug)]
pub(super) struct Stored {
    pub(super) submitted: Submitted,
    pub(super) durable: Durable,
    pub(super) milestone_index: Option<u32>,
    pub(super) missing_parents: Vec<BlockId>,
}

/// The answer to [`Engine::submit_gossip`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GossipStored {
    /// The block id.
    pub block_id: BlockId,
    /// False when the block was already stored.
    pub inserted: bool,
    /// The milestone index, for a milestone block.
    pub milestone_index: Option<u32>,
    /// Parents that are neither stored nor solid entry points (empty for a known block).
    pub missing_parents: Vec<BlockId>,
}

/// Told about blocks worth passing on to peers: newly solid, not below max depth, while the
/// node is synced within below-max-depth milestones (Hornet's broadcast rule). Called once
/// the blocks are durable, on the log's fsync thread or the coordinator's: an
/// implementation must be quick, must not block and must not call back into the engine.
pub trait BroadcastHook: Send + Sync + 'static {
    /// `ids` became solid (oldest first).
    fn solid(&self, ids: Vec<BlockId>);
}

/// The sync state a node reports in its heartbeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SyncState {
    /// The confirmed milestone index (the ledger index).
    pub confirmed: u32,
    /// The highest milestone index known: confirmed, or stored and waiting for its cone.
    pub latest: u32,
    /// The pruning index: nothing at or below it is served (or asked of this node).
    pub pruned: u32,
}

impl SyncState {
    /// Hornet's "synced": every known milestone is confirmed.
    pub fn is_synced(&self) -> bool {
        self.confirmed >= self.latest
    }

    /// Hornet's "almost synced": at most two milestones behind.
    pub fn is_almost_synced(&self) -> bool {
        self.confirmed >= self.latest.saturating_sub(2)
    }
}

impl Engine {
    /// Stores a block received from a peer: strict decode, protocol version, syntax, PoW
    /// score or milestone signatures (the API's rules), but its parents may be missing.
    /// The block is readable at once; milestones and blocks that complete the next
    /// milestone's cone are durable (and the milestone confirmed) when this returns.
    ///
    /// # Errors
    /// [`SubmitError::Invalid`] with the broken rule (the peer sent an invalid block), or a
    /// fault of the store.
    pub fn submit_gossip(&self, bytes: &[u8]) -> Result<GossipStored, SubmitError> {
        let stored = self.store_v2(bytes, Intake::Gossip)?;
        Ok(GossipStored {
            block_id: stored.submitted.block_id,
            inserted: stored.submitted.inserted,
            milestone_index: stored.milestone_index,
            missing_parents: stored.missing_parents,
        })
    }

    /// Sets the hook told about blocks worth broadcasting; false if one was already set.
    pub fn set_broadcast_hook(&self, hook: Arc<dyn BroadcastHook>) -> bool {
        self.broadcast.set(hook).is_ok()
    }

    /// Announces our own new blocks (the coordinator's, already durable) to the hook.
    pub(super) fn announce(&self, ids: Vec<BlockId>) {
        if let Some(hook) = self.broadcast.get() {
            let ids = Self::worth_broadcasting(&self.read(), ids);
            if !ids.is_empty() {
                hook.solid(ids);
            }
        }
    }

    /// Hornet's broadcast rule over newly solid blocks: none while more than
    /// below-max-depth milestones behind; no block below max depth.
    pub(super) fn worth_broadcasting(st: &State, solidified: Vec<BlockId>) -> Vec<BlockId> {
        let latest = Self::latest_index(st);
        let bmd = st.tangle.below_max_depth();
        if latest.saturating_sub(st.ledger.ledger_index()) > bmd {
            return Vec::new();
        }
        let mut ids = solidified;
        ids.retain(|id| st.tangle.tip_score(id) != Some(TipScore::BelowMaxDepth));
        ids
    }

    /// Whether the milestone after the ledger index is stored with a complete cone.
    pub(super) fn next_milestone_solid(st: &State) -> bool {
        st.pending
            .get(&(st.ledger.ledger_index() + 1))
            .and_then(|id| st.tangle.get(id))
            .is_some_and(|m| m.view.solid)
    }

    fn latest_index(st: &State) -> u32 {
        let pending = st.pending.keys().next_back().copied().unwrap_or(0);
        pending.max(st.ledger.ledger_index())
    }

    /// The confirmed and the latest known milestone index.
    pub fn sync_state(&self) -> SyncState {
        let st = self.read();
        SyncState {
            confirmed: st.ledger.ledger_index(),
            latest: Self::latest_index(&st),
            pruned: self.pruning_index(),
        }
    }

    /// Blocks the tangle holds in memory that no milestone references yet: unsolid ones
    /// waiting for parents, tips, and cones waiting for their milestone. Warp sync narrows
    /// while this is large, so a catch-up holds a bounded number of them.
    pub fn unreferenced_blocks(&self) -> usize {
        let st = self.read();
        st.tangle.len().saturating_sub(st.tangle.window_len())
    }

    /// The latest milestone known: the highest stored one still waiting for its cone (a
    /// syncing node), else the latest confirmed one. Hornet's `latestMilestone`.
    pub fn latest_known_milestone(&self) -> Option<MilestoneInfo> {
        let (pending, confirmed) = {
            let st = self.read();
            (
                st.pending.iter().next_back().map(|(i, id)| (*i, *id)),
                st.milestones.latest(),
            )
        };
        let Some((index, block_id)) =
            pending.filter(|(i, _)| confirmed.is_none_or(|c| *i > c.index))
        else {
            return confirmed;
        };
        let reader = self.log.reader();
        let rec = reader.get(&LogId::V2(block_id))?;
        match Block::decode(rec.bytes()).ok()?.payload {
            Some(Payload::Milestone(m)) => match m.id() {
                Ok(milestone_id) => Some(MilestoneInfo {
                    index,
                    timestamp: m.timestamp,
                    milestone_id,
                    block_id,
                }),
                Err(_) => confirmed,
            },
            _ => confirmed,
        }
    }

    /// The block of milestone `index`, confirmed or stored and waiting for its cone.
    pub fn milestone_block_id(&self, index: u32) -> Option<BlockId> {
        let st = self.read();
        st.milestones
            .get(index, &st.journal)
            .map(|m| m.block_id)
            .or_else(|| st.pending.get(&index).copied())
    }

    /// Whether block `id` is stored.
    pub fn has_block(&self, id: &BlockId) -> bool {
        self.log.contains(&LogId::V2(*id))
    }

    /// Up to `limit` blocks missing from the cone of the stored, unconfirmed milestone
    /// `index` (what must be fetched before it can be confirmed); empty when the milestone
    /// is not stored or its cone is complete.
    pub fn missing_in_milestone_cone(&self, index: u32, limit: usize) -> Vec<BlockId> {
        let st = self.read();
        let Some(parents) = st
            .pending
            .get(&index)
            .and_then(|id| st.tangle.get(id))
            .filter(|m| !m.view.solid)
            .map(|m| m.parents.clone())
        else {
            return Vec::new();
        };
        st.tangle.missing_in_cone(&parents, limit)
    }
}
