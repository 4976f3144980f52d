//! What the event API (TIP-28, docs/events.md) is told by the engine, without the engine
//! knowing it: a hook in the manner of [`super::BroadcastHook`] and
//! [`crate::TimingObserver`]. The hook hands values on (e.g. into a queue) and builds
//! nothing: whoever listens reads the payloads back from the engine, only for the topics it
//! has subscribers for.

use super::*;

/// Told about new blocks and confirmed milestones, in the order they happen: a milestone's
/// block is announced before its confirmation. Calls come from the threads that store blocks
/// and confirm milestones (a REST submit, gossip intake, the coordinator), so an
/// implementation must be quick, must not block and must not call back into the engine.
/// Milestones replayed while opening the store are not announced.
pub trait EventHook: Send + Sync + 'static {
    /// Block `id` was stored (submitted, received by gossip or issued by our coordinator); its
    /// bytes are readable from [`Engine::block_bytes`].
    fn block_stored(&self, id: &BlockId);

    /// `ids` became solid, oldest first: a stored block whose past cone is complete, and the
    /// blocks that waited for it (told after [`EventHook::block_stored`] of that block).
    fn blocks_solid(&self, ids: &[BlockId]);

    /// A milestone was confirmed: its ledger changes are applied and readable.
    fn milestone_confirmed(&self, milestone: ConfirmedMilestone);

    /// `ids` entered or left the tip pool (Hornet's `TipAdded`/`TipRemoved`), each once, told
    /// after the event that moved them (a block stored, a milestone confirmed).
    fn tips_changed(&self, _ids: &[BlockId]) {}
}

/// What one confirmed milestone changed, in the orders the event API publishes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmedMilestone {
    /// The milestone.
    pub info: MilestoneInfo,
    /// The blocks it referenced, in white-flag order.
    pub referenced: Vec<BlockId>,
    /// The outputs it spent, in booking order.
    pub consumed: Vec<OutputId>,
    /// The outputs it created, in booking order.
    pub created: Vec<OutputId>,
}

impl Engine {
    /// Sets the hook told about new blocks and confirmed milestones; false if one was set
    /// already.
    pub fn set_event_hook(&self, hook: Arc<dyn EventHook>) -> bool {
        let set = self.events.set(hook).is_ok();
        if set {
            self.write().tangle.watch_tip_changes();
        }
        set
    }

    /// The tip pool's changes since the last call, taken under the state lock; empty without
    /// a hook.
    pub(super) fn tip_changes(&self, st: &mut State) -> Vec<BlockId> {
        match self.events.get() {
            Some(_) => st.tangle.take_tip_changes(),
            None => Vec::new(),
        }
    }

    /// Tells the event hook about blocks that entered or left the tip pool.
    pub(super) fn announce_tips(&self, ids: &[BlockId]) {
        if let (Some(hook), false) = (self.events.get(), ids.is_empty()) {
            hook.tips_changed(ids);
        }
    }

    /// Tells the event hook about stored blocks.
    pub(super) fn announce_stored(&self, ids: &[BlockId]) {
        if let Some(hook) = self.events.get() {
            for id in ids {
                hook.block_stored(id);
            }
        }
    }

    /// Tells the event hook about newly solid blocks.
    pub(super) fn announce_solid(&self, ids: &[BlockId]) {
        if let (Some(hook), false) = (self.events.get(), ids.is_empty()) {
            hook.blocks_solid(ids);
        }
    }

    /// The event hook's part of a confirmation, taken before the confirmation's lists move
    /// into the journal (`None` without a hook).
    pub(super) fn confirmed_event(
        &self,
        conf: &Confirmation,
        info: MilestoneInfo,
    ) -> Option<ConfirmedMilestone> {
        self.events.get()?;
        Some(ConfirmedMilestone {
            info,
            referenced: conf.referenced.iter().map(|(id, _)| *id).collect(),
            consumed: conf.consumed.iter().map(|(id, _)| *id).collect(),
            created: conf.created.iter().map(|o| o.output_id).collect(),
        })
    }

    /// Tells the event hook about a confirmed milestone.
    pub(super) fn announce_confirmed(&self, event: Option<ConfirmedMilestone>) {
        if let (Some(hook), Some(event)) = (self.events.get(), event) {
            hook.milestone_confirmed(event);
        }
    }
}
