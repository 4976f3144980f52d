//! The built-in coordinator: tip selection, checkpoints, milestones, PoW for clients.

use super::*;

impl Engine {
    /// Up to 4 non-lazy tips, unique and sorted; with none, the last
    /// milestone block or the first solid entry point.
    pub fn select_parents(&self) -> Vec<BlockId> {
        let st = self.read();
        let mut tips = st.tangle.select_tips(4, &mut rand::thread_rng());
        if tips.is_empty() {
            if let Some(m) = st.milestones.latest() {
                tips.push(m.block_id);
            } else if let Some(sep) = self.start.entry_point {
                tips.push(sep);
            }
        }
        tips
    }

    /// Finds a nonce for `body` (a block without its nonce) at the network's
    /// minimum score; `cancel` stops the search.
    pub fn mine(&self, body: &[u8], cancel: &AtomicBool) -> Option<u64> {
        ledger_codec::pow::mine(body, self.params().min_pow_score, self.pow_workers, cancel)
    }

    /// Issues a milestone now (dev coordinator): checkpoints gather tips that
    /// do not fit into one block, then the milestone references every tip.
    /// Returns once the milestone is confirmed.
    ///
    /// # Errors
    /// No coordinator, or a fault while building or confirming.
    pub fn issue_milestone(&self) -> Result<MilestoneInfo, EngineError> {
        let key = self
            .coordinator
            .as_ref()
            .ok_or(EngineError::NoCoordinator)?;
        if self.shutting_down.load(Ordering::Relaxed) {
            return Err(EngineError::ShuttingDown);
        }
        let guard = self
            .confirming
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let issued = self.issue_milestone_locked(key);
        drop(guard);
        if let Err(e) = self.confirm_if_wanted() {
            tracing::error!("confirming a pending milestone after issuing one: {e}");
        }
        issued
    }

    /// [`Engine::issue_milestone`] while holding `confirming`.
    fn issue_milestone_locked(&self, key: &SigningKey) -> Result<MilestoneInfo, EngineError> {
        let started = Instant::now();
        let mut parents = self.read().tangle.tips();
        // Our own blocks, announced to peers once the milestone is durable.
        let mut issued = Vec::new();
        while parents.len() > 8 {
            parents = self.issue_checkpoints(&parents)?;
            issued.extend_from_slice(&parents);
        }
        if parents.is_empty() {
            parents = self.select_parents();
        }
        let (index, timestamp, previous) = {
            let st = self.read();
            let last = st.milestones.latest();
            let ts = now_secs().max(last.map_or(self.start.timestamp, |l| l.timestamp) + 1);
            (
                st.ledger.ledger_index() + 1,
                ts,
                last.map_or(self.start.milestone_id, |l| l.milestone_id),
            )
        };
        let conf = self.white_flag(&parents, timestamp)?;
        let mut milestone = Milestone {
            index,
            timestamp,
            protocol_version: PROTOCOL_VERSION,
            previous_milestone_id: Hash32::from(previous),
            parents: parents.clone().into(),
            inclusion_merkle_root: Hash32::from(conf.inclusion_root),
            applied_merkle_root: Hash32::from(conf.applied_root),
            metadata: Bytes::default(),
            options: Vec::new(),
            signatures: Vec::new().into(),
        };
        let id = milestone.id()?;
        milestone.signatures = vec![Ed25519Signature::new(key.public_key(), key.sign(&id))].into();
        let block = Block {
            protocol_version: PROTOCOL_VERSION,
            parents: parents.into(),
            payload: Some(Payload::Milestone(milestone)),
            nonce: 0,
        };
        let bytes = block.to_bytes()?;
        let block_id = Block::id_of(&bytes);
        if let Some(mark) = &self.issued_mark {
            if let Some(issued) = mark.read()?.filter(|&i| i >= index) {
                return Err(EngineError::Inconsistent(format!(
                    "refusing to issue milestone {index}: this key already issued {issued}"
                )));
            }
        }
        let ticket = self.inflight.begin();
        let appended = self.log.append(&LogId::V2(block_id), &bytes)?;
        self.inflight.appended(appended.location.to_u64());
        // The log is the record of issuance; the mark outlives a lost log.
        if let Some(mark) = &self.issued_mark {
            if let Err(e) = mark.write(index) {
                tracing::error!(index, "cannot record the issued milestone index: {e}");
            }
        }
        {
            let mut st = self.write();
            Self::insert_block(
                &mut st,
                block_id,
                &block,
                None,
                appended.location.to_u64(),
                None,
            );
        }
        drop(ticket);
        issued.push(block_id);
        self.announce_stored(&issued);
        // Our own blocks are solid as they are made (their parents are known).
        self.announce_solid(&issued);
        self.announce(issued);
        if !self.confirm_milestone_block(block_id, Some(conf), started, Replay::No)? {
            return Err(EngineError::Inconsistent(format!(
                "own milestone {index} was not confirmed"
            )));
        }
        let info = self.read().milestones.latest().filter(|m| m.index == index);
        info.ok_or_else(|| EngineError::Inconsistent("milestone not recorded".into()))
    }

    /// One level of checkpoint blocks gathering `tips` eight at a time; returns their ids,
    /// sorted. The blocks are written without waiting for an fsync each (the milestone's
    /// own durable append, after them in the log, covers them all) and enter the tangle
    /// under one lock, so a wide tip pool costs the coordinator one fsync, not one per
    /// checkpoint, and client submits are not held up block by block.
    pub(super) fn issue_checkpoints(&self, tips: &[BlockId]) -> Result<Vec<BlockId>, EngineError> {
        let cancel = AtomicBool::new(false);
        let mut written = Vec::with_capacity(tips.len().div_ceil(8));
        let ticket = self.inflight.begin();
        for chunk in tips.chunks(8) {
            let mut block = Block {
                protocol_version: PROTOCOL_VERSION,
                parents: chunk.to_vec().into(),
                payload: None,
                nonce: 0,
            };
            let bytes = block.to_bytes()?;
            let body = ledger_codec::pow::pow_body(&bytes).unwrap_or_default();
            block.nonce = self.mine(body, &cancel).unwrap_or(0);
            let bytes = block.to_bytes()?;
            let id = Block::id_of(&bytes);
            let (appended, _durable) = self.log.append_nowait(&LogId::V2(id), &bytes)?;
            self.inflight.appended(appended.location.to_u64());
            written.push((id, block, appended.location.to_u64()));
        }
        let mut st = self.write();
        let mut ids = Vec::with_capacity(written.len());
        for (id, block, record) in &written {
            Self::insert_block(&mut st, *id, block, None, *record, None);
            ids.push(*id);
        }
        drop(st);
        drop(ticket);
        ids.sort_unstable();
        Ok(ids)
    }

    /// Starts the coordinator thread issuing a milestone every `interval`
    /// (nothing when zero or without coordinator).
    pub fn start_coordinator(
        self: &Arc<Self>,
        interval: Duration,
    ) -> Option<std::thread::JoinHandle<()>> {
        if self.coordinator.is_none() || interval.is_zero() {
            return None;
        }
        let engine = Arc::clone(self);
        std::thread::Builder::new()
            .name("coordinator".into())
            .spawn(move || {
                // A failure repeats every interval (a full disk): logged when it changes.
                let mut failing: Option<String> = None;
                while !engine.shutting_down.load(Ordering::Relaxed) {
                    std::thread::sleep(interval);
                    if engine.shutting_down.load(Ordering::Relaxed) {
                        break;
                    }
                    match engine.issue_milestone() {
                        Ok(_) if failing.take().is_some() => {
                            tracing::info!("coordinator: issuing milestones again");
                        }
                        Ok(_) => {}
                        Err(e) => {
                            let text = e.to_string();
                            if failing.as_deref() != Some(text.as_str()) {
                                tracing::error!("coordinator: {text} (repeats are not logged)");
                                failing = Some(text);
                            }
                        }
                    }
                }
            })
            .ok()
    }
}
