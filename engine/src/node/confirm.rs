//! Milestone confirmation: white flag over a milestone's cone and the state it moves.

use super::*;

impl Engine {
    /// White flag over the unreferenced cone of `parents` for a milestone at `timestamp`, on
    /// the current state (read lock; the Merkle roots after it, since submits wait for it).
    pub(super) fn white_flag(
        &self,
        parents: &[BlockId],
        timestamp: u32,
    ) -> Result<Confirmation, EngineError> {
        let mut conf = self.white_flag_walk(parents, timestamp)?;
        conf.set_roots();
        Ok(conf)
    }

    fn white_flag_walk(
        &self,
        parents: &[BlockId],
        timestamp: u32,
    ) -> Result<Confirmation, EngineError> {
        let st = self.read();
        whiteflag::walk(
            whiteflag::Store {
                tangle: &st.tangle,
                ledger: &st.ledger,
                spent: Some(&|id| self.stored_as_spent(id)),
                log: &self.log,
                genesis_blob: &st.base_blob,
            },
            parents,
            timestamp,
            self.params(),
            self.indexer.is_some(),
        )
    }

    /// Confirms pending milestones in index order while the next one is known, waiting for
    /// a confirmation under way first.
    pub(super) fn confirm_pending(&self, replay: Replay) -> Result<(), EngineError> {
        let guard = self
            .confirming
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if self.confirm_holding(guard, replay)? {
            self.confirm_unless_busy()
        } else {
            Ok(())
        }
    }

    /// Confirms pending milestones as [`Engine::confirm_pending`] unless another thread is
    /// confirming one (the coordinator, or gossip's milestone): that thread then looks again
    /// before it returns. A client's block that completes the next milestone's cone does not
    /// wait for a confirmation it did not start.
    pub(super) fn confirm_unless_busy(&self) -> Result<(), EngineError> {
        self.confirm_wanted.store(true, Ordering::SeqCst);
        loop {
            let guard = match self.confirming.try_lock() {
                Ok(guard) => guard,
                Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => return Ok(()),
            };
            if !self.confirm_holding(guard, Replay::No)? {
                return Ok(());
            }
        }
    }

    /// Called by every other holder of `confirming` after letting it go: confirms what a
    /// submit asked for meanwhile ([`Engine::confirm_unless_busy`]).
    pub(super) fn confirm_if_wanted(&self) -> Result<(), EngineError> {
        if self.confirm_wanted.load(Ordering::SeqCst) {
            self.confirm_unless_busy()
        } else {
            Ok(())
        }
    }

    /// Confirms what is pending while holding `guard` (of `confirming`), lets it go, and
    /// tells whether a submit asked for a confirmation meanwhile (the caller looks again).
    fn confirm_holding(
        &self,
        guard: std::sync::MutexGuard<'_, ()>,
        replay: Replay,
    ) -> Result<bool, EngineError> {
        self.confirm_wanted.store(false, Ordering::SeqCst);
        self.confirm_pending_locked(replay)?;
        drop(guard);
        Ok(self.confirm_wanted.load(Ordering::SeqCst))
    }

    /// The loop of [`Engine::confirm_pending`]; the caller holds `confirming`.
    fn confirm_pending_locked(&self, replay: Replay) -> Result<(), EngineError> {
        loop {
            let next = {
                let st = self.read();
                let want = st.ledger.ledger_index() + 1;
                st.pending
                    .range(..=want)
                    .next_back()
                    .filter(|(i, _)| **i == want)
                    .map(|(_, id)| *id)
            };
            let Some(block_id) = next else { return Ok(()) };
            // A milestone whose past cone is incomplete (a salvaged log) waits: white flag
            // needs every block of the cone.
            // Gossip fills a cone after its milestone arrives: that is the normal case then.
            if !self
                .read()
                .tangle
                .get(&block_id)
                .is_some_and(|m| m.view.solid)
            {
                if replay == Replay::Yes {
                    tracing::warn!(
                        block = %hex32(&block_id),
                        "the next milestone's past cone is incomplete: confirmation stops here"
                    );
                } else {
                    tracing::debug!(block = %hex32(&block_id), "next milestone waits for its cone");
                }
                return Ok(());
            }
            // The cone's blocks may have come after the milestone (gossip): the log is
            // made durable up to here first, so the ledger never runs ahead of the log.
            if replay == Replay::No {
                self.log.wait_durable_at(self.log.written_mark())?;
            }
            self.confirm_milestone_block(block_id, None, Instant::now(), replay)?;
        }
    }

    /// White-flag + apply for one milestone block. `precomputed` skips the walk
    /// when the coordinator already computed it for the same parents.
    /// `started` is when the work on this milestone began (the log line reports the time
    /// since); a replayed milestone is logged at debug level only.
    pub(super) fn confirm_milestone_block(
        &self,
        block_id: BlockId,
        precomputed: Option<Confirmation>,
        started: Instant,
        replay: Replay,
    ) -> Result<bool, EngineError> {
        let reader = self.log.reader();
        let rec = reader.get(&LogId::V2(block_id)).ok_or_else(|| {
            EngineError::Inconsistent("milestone block missing from the log".into())
        })?;
        let block =
            Block::decode(rec.bytes()).map_err(|e| EngineError::Inconsistent(e.to_string()))?;
        let Some(Payload::Milestone(m)) = &block.payload else {
            return Err(EngineError::Inconsistent(
                "pending milestone block without milestone".into(),
            ));
        };
        // Before anything changes: a milestone without an id is refused whole.
        let milestone_id = m.id()?;
        let mut conf = match precomputed {
            Some(c) => c,
            None => self.white_flag(&m.parents, m.timestamp)?,
        };
        let mut st = self.write();
        st.pending.remove(&m.index);
        let previous = st.milestones.latest();
        let prev_ok = match previous {
            Some(p) => {
                m.previous_milestone_id.as_array() == &p.milestone_id && m.timestamp > p.timestamp
            }
            // The first after the genesis, snapshot or ledger base names its milestone (zero
            // at a genesis).
            None => {
                m.previous_milestone_id.as_array() == &self.start.milestone_id
                    && m.timestamp > self.start.timestamp
            }
        };
        if !prev_ok
            || conf.inclusion_root != *m.inclusion_merkle_root.as_array()
            || conf.applied_root != *m.applied_merkle_root.as_array()
        {
            tracing::warn!(
                index = m.index,
                "milestone rejected: previous milestone or Merkle roots do not match"
            );
            return Ok(false);
        }
        st.ledger
            .apply(m.index, m.timestamp, &conf.created, &conf.consumed)
            .map_err(|e| EngineError::Inconsistent(e.to_string()))?;
        st.richlist
            .apply_milestone(m.index, conf.balance_changes.iter().copied())
            .map_err(|e| EngineError::Inconsistent(e.to_string()))?;
        st.tangle.confirm(m.index, &conf.referenced);
        st.referenced = st
            .referenced
            .saturating_add(u64::try_from(conf.referenced.len()).unwrap_or(u64::MAX));
        let info = MilestoneInfo {
            index: m.index,
            timestamp: m.timestamp,
            milestone_id,
            block_id,
        };
        st.milestones.insert(info);
        let event = match replay {
            Replay::No => self.confirmed_event(&conf, info),
            Replay::Yes => None,
        };
        if st.journal_ok {
            let entry = JournalEntry {
                index: m.index,
                timestamp: m.timestamp,
                milestone_id,
                block_id,
                referenced: u32::try_from(conf.referenced.len()).unwrap_or(u32::MAX),
                created: std::mem::take(&mut conf.created),
                consumed: conf.consumed.clone(),
                balance_changes: std::mem::take(&mut conf.balance_changes),
            };
            if let Err(e) = st.journal.append(&entry) {
                // The state in memory is right; only a restart needs the journal, and it
                // then rebuilds from the log (no checkpoint is written from here on).
                tracing::error!("{e}: no more checkpoints until the node restarts");
                st.journal_ok = false;
            }
        }
        let (healthy, semi_lazy, lazy) = st.tangle.tip_pool_sizes();
        let tips_event = self.tip_changes(&mut st);
        drop(st);
        // Milestones are confirmed one at a time (`confirming`), so they reach the indexer in
        // order.
        if let Some(indexer) = &self.indexer {
            let consumed = conf.consumed.iter().map(|(id, _)| *id).collect();
            indexer.apply(
                m.index,
                m.timestamp,
                std::mem::take(&mut conf.indexed),
                consumed,
            );
        }
        if replay == Replay::No {
            if let Err(e) = self.confirmed_mark.write(m.index) {
                tracing::error!(index = m.index, "cannot record the confirmed index: {e}");
            }
        }
        // Tip changes first: everything of a milestone goes out before its confirmation
        // (`milestone-info/confirmed` last, docs/events.md §1.4).
        if replay == Replay::No {
            self.announce_tips(&tips_event);
        }
        self.announce_confirmed(event);
        let took = started.elapsed();
        let ms = took.as_secs_f64() * 1000.0;
        if replay == Replay::No {
            if let Some(observer) = self.timings.get() {
                observer.milestone_confirmed(took);
            }
            self.recent.push(RecentConfirmation {
                index: m.index,
                timestamp: m.timestamp,
                referenced: u32::try_from(conf.referenced.len()).unwrap_or(u32::MAX),
                took,
            });
        }
        if replay == Replay::Yes {
            // A replay writes no checkpoint until it ends: its spent rows go to the store in
            // batches (a crash before the end replays again, and the store is emptied first).
            if let Err(e) = self.store_spent(m.index, spent::OPEN_BATCH) {
                tracing::error!(index = m.index, "spent outputs stay in memory: {e}");
            }
            tracing::debug!(
                index = m.index,
                referenced = conf.referenced.len(),
                "milestone replayed"
            );
        } else {
            tracing::info!(
                index = m.index,
                referenced = conf.referenced.len(),
                took_ms = format_args!("{ms:.1}"),
                tips = format_args!("{healthy}/{semi_lazy}/{lazy}"),
                "milestone confirmed"
            );
        }
        // After the milestone's own work and its log line: the fsyncs of a checkpoint are not
        // part of its confirmation time.
        if replay == Replay::No && m.index % self.checkpoint_interval == 0 {
            if let Err(e) = self.checkpoint() {
                tracing::error!(index = m.index, "checkpoint not written: {e}");
            }
        }
        if replay == Replay::No {
            // Snapshots first, then pruning, in series (Hornet, docs/snapshots-pruning.md
            // §2.2).
            self.snapshot_automatically();
            self.prune_automatically();
            self.seal_segment_early();
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use ledger_test_support::blocks;

    use crate::internals::log::BlockId as LogId;
    use crate::{Engine, EngineConfig};

    #[test]
    fn a_client_block_completing_a_cone_during_a_confirmation_leaves_it_to_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let a = Engine::open(EngineConfig::dev(dir.path().join("a"))).unwrap();
        for tag in [b"x", b"y", b"z"] {
            a.submit_v2(&blocks::tagged_block(a.select_parents(), tag))
                .unwrap();
        }
        a.issue_milestone().unwrap();
        let stored: Vec<Vec<u8>> = a
            .internal_log()
            .reader()
            .iter()
            .filter(|r| matches!(r.id(), LogId::V2(_)))
            .map(|r| r.bytes().to_vec())
            .collect();
        let (milestone, cone) = stored.split_last().unwrap();
        let mut config = EngineConfig::dev(dir.path().join("b"));
        config.coordinator = false;
        config.coordinator_public_keys = vec![a.coordinator_public_key().unwrap()];
        let b = Engine::open(config).unwrap();
        b.submit_gossip(milestone).unwrap();
        assert_eq!(b.sync_state().confirmed, 0, "the cone is missing");

        // Another confirmation is under way: a client's blocks completing the cone are
        // stored without waiting for it.
        let held = b.confirming.lock().unwrap();
        let (done, finished) = mpsc::channel();
        let feeder = {
            let b = std::sync::Arc::clone(&b);
            let cone = cone.to_vec();
            std::thread::spawn(move || {
                for bytes in &cone {
                    b.submit_v2(bytes).unwrap();
                }
                done.send(()).unwrap();
            })
        };
        if finished.recv_timeout(Duration::from_secs(20)).is_err() {
            drop(held);
            panic!("a submit waited for the confirmation under way");
        }
        feeder.join().unwrap();
        assert_eq!(b.sync_state().confirmed, 0);
        // Its holder looks again before it returns.
        drop(held);
        b.confirm_if_wanted().unwrap();
        assert_eq!(b.sync_state().confirmed, 1);
        assert_eq!(b.milestone_by_index(1), a.milestone_by_index(1));
    }
}
