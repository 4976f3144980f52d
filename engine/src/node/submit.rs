//! Block intake: the checks every v2 and v3 block passes before it is stored, and the durable
//! store.

use super::*;

impl Engine {
    /// Verifies (protocol version, network id, syntax, signature) and stores a
    /// serialized v3 block under `params`. A known block answers with its id.
    /// The block is durable in the log when this returns Ok.
    ///
    /// # Errors
    /// [`SubmitError::Invalid`] with the broken rule, or an internal fault.
    pub fn submit_v3(
        &self,
        bytes: &[u8],
        params: &nova::ProtocolParameters,
    ) -> Result<V3Submitted, SubmitError> {
        let block = nova::Block::decode(bytes).map_err(InvalidBlock::Decode)?;
        block.validate(params).map_err(InvalidBlock::Syntax)?;
        let id = nova::Block::id_of(bytes, params).ok_or(InvalidBlock::TooShortForId)?;
        let appended = self
            .log
            .append_v3(id, bytes)
            .map_err(|e| self.store_error(e))?;
        self.stored();
        Ok(V3Submitted {
            block_id: id,
            inserted: appended.inserted,
        })
    }

    /// The serialized v3 block `id`, zero-copy from the log.
    pub fn block_v3_bytes(&self, id: &[u8; 36]) -> Option<RecordBytes> {
        self.log.get_bytes(&LogId::V3(*id))
    }

    /// Verifies and stores a serialized v2 block. A known block is answered
    /// with its id. The block is durable in the log when this returns Ok.
    ///
    /// # Errors
    /// [`SubmitError::Invalid`] with the broken rule, or an internal fault.
    pub fn submit_v2(&self, bytes: &[u8]) -> Result<Submitted, SubmitError> {
        let (submitted, durable) = self.submit_v2_nowait(bytes)?;
        self.log
            .wait_durable_at(durable)
            .map_err(InternalError::Log)?;
        Ok(submitted)
    }

    /// [`Engine::submit_v2`] without waiting for the fsync: the block is stored, readable
    /// and in the tangle, but must only be acknowledged once [`Engine::on_durable`] (or
    /// [`Log::wait_durable_at`]) reports the returned position durable. A milestone is
    /// waited for here, before it is confirmed: the ledger never runs ahead of the log.
    ///
    /// # Errors
    /// As [`Engine::submit_v2`].
    pub fn submit_v2_nowait(&self, bytes: &[u8]) -> Result<(Submitted, Durable), SubmitError> {
        self.store_v2(bytes, Intake::Api)
            .map(|s| (s.submitted, s.durable))
    }

    /// Stores a v2 block that passed the rules of `intake` (see [`Intake`]); the block is
    /// readable and in the tangle when this returns, durable once `durable` is.
    pub(super) fn store_v2(&self, bytes: &[u8], intake: Intake) -> Result<Stored, SubmitError> {
        let internal = |e: crate::log::LogError| self.store_error(e);
        let block = Block::decode(bytes).map_err(InvalidBlock::Decode)?;
        let id = Block::id_of(bytes);
        let milestone_index = match &block.payload {
            Some(Payload::Milestone(m)) => Some(m.index),
            _ => None,
        };
        if let Some(durable) = self.log.durable_mark(&LogId::V2(id)) {
            return Ok(Stored {
                submitted: Submitted {
                    block_id: id,
                    inserted: false,
                },
                durable,
                milestone_index,
                missing_parents: Vec::new(),
            });
        }
        self.check_block(&block, bytes, intake)?;
        // Registered until the block is in the tangle (see `crate::history::InFlight`).
        let ticket = self.inflight.begin();
        let (appended, durable) = self
            .log
            .append_nowait(&LogId::V2(id), bytes)
            .map_err(internal)?;
        self.inflight.appended(appended.location.to_u64());
        self.stored();
        let tx_id = ledger_codec::stardust::transaction_id_of_block(bytes);
        if milestone_index.is_some() {
            self.log.wait_durable_at(durable).map_err(internal)?;
        }
        let mut solidified = Vec::new();
        let (arrived, missing_parents, next_solid, broadcast, inserted, solid_event, tips_event) = {
            let mut st = self.write();
            let record = appended.location.to_u64();
            let inserted =
                Self::insert_block(&mut st, id, &block, tx_id, record, Some(&mut solidified));
            let mut arrived = Vec::new();
            if inserted && whiteflag::has_signatures(&block) {
                st.unverified.push((id, record));
                if st.unverified.len() >= whiteflag::ARRIVAL_BATCH {
                    arrived = std::mem::take(&mut st.unverified);
                }
            }
            let missing: Vec<BlockId> = block
                .parents
                .iter()
                .filter(|p| st.tangle.is_unknown(p))
                .copied()
                .collect();
            let next_solid = Self::next_milestone_solid(&st);
            let solid_event = self.events.get().map(|_| solidified.clone());
            let tips_event = self.tip_changes(&mut st);
            let broadcast = match self.broadcast.get() {
                Some(_) => Self::worth_broadcasting(&st, solidified),
                None => Vec::new(),
            };
            (
                arrived,
                missing,
                next_solid,
                broadcast,
                inserted,
                solid_event,
                tips_event,
            )
        };
        drop(ticket);
        if inserted {
            self.announce_stored(&[id]);
        }
        if let Some(ids) = solid_event {
            self.announce_solid(&ids);
        }
        self.announce_tips(&tips_event);
        if !arrived.is_empty() {
            self.verify_arrived(&arrived);
        }
        if let (Some(hook), false) = (self.broadcast.get(), broadcast.is_empty()) {
            let hook = Arc::clone(hook);
            self.log.on_durable(durable, move |result| {
                if result.is_ok() {
                    hook.solid(broadcast);
                }
            });
        }
        // The next milestone is confirmed once its cone is complete; the cone's blocks may
        // have come after it (gossip). A milestone, and a gossiped block that completed a
        // cone, wait for the confirmation (gossip's back-pressure during a catch-up); a
        // client's block leaves it to a confirmation under way, if there is one, so no HTTP
        // worker waits for the coordinator.
        let confirmed = match (milestone_index, next_solid, intake) {
            (Some(_), _, _) | (None, true, Intake::Gossip) => self.confirm_pending(Replay::No),
            (None, true, Intake::Api) => self.confirm_unless_busy(),
            (None, false, _) => Ok(()),
        };
        confirmed.map_err(|e| InternalError::Confirm(Box::new(e)))?;
        Ok(Stored {
            submitted: Submitted {
                block_id: id,
                inserted: appended.inserted,
            },
            durable,
            milestone_index,
            missing_parents,
        })
    }

    /// The submit error for a failed append: 503 `storage full` when the disk is full (the
    /// change of state logged once), else an internal fault.
    pub(super) fn store_error(&self, e: crate::log::LogError) -> SubmitError {
        if e.is_storage_full() {
            if !self.storage_full.swap(true, Ordering::Relaxed) {
                tracing::warn!("storage full: refusing blocks until space returns ({e})");
            }
            Unavailable::StorageFull.into()
        } else {
            InternalError::Log(e).into()
        }
    }

    /// Notes a successful append (logs the end of a storage-full state).
    pub(super) fn stored(&self) {
        if self.storage_full.load(Ordering::Relaxed)
            && self.storage_full.swap(false, Ordering::Relaxed)
        {
            tracing::info!("storage available again: accepting blocks");
        }
    }

    /// Calls `f` once `mark` (from [`Engine::submit_v2_nowait`]) is durable, or with the
    /// log's error; see [`Log::on_durable`].
    pub fn on_durable(
        &self,
        mark: Durable,
        f: impl FnOnce(Result<(), crate::log::LogError>) + Send + 'static,
    ) {
        self.log.on_durable(mark, f);
    }

    pub(super) fn check_block(
        &self,
        block: &Block<'_>,
        bytes: &[u8],
        intake: Intake,
    ) -> Result<(), SubmitError> {
        let params = self.params();
        if block.protocol_version != params.version {
            return Err(InvalidBlock::ProtocolVersion {
                version: block.protocol_version,
            }
            .into());
        }
        block.validate(params).map_err(InvalidBlock::Syntax)?;
        match &block.payload {
            Some(Payload::Milestone(m)) => self.check_milestone(block, m)?,
            _ => {
                if !ledger_codec::pow::meets_score(bytes, params.min_pow_score) {
                    return Err(InvalidBlock::PowScore {
                        score: ledger_codec::pow::pow_score(bytes),
                        min_score: params.min_pow_score,
                    }
                    .into());
                }
            }
        }
        match intake {
            Intake::Api => self
                .read()
                .tangle
                .check_attachable(&block.parents)
                .map_err(|e| InvalidBlock::Attach(e).into()),
            Intake::Gossip => Ok(()),
        }
    }

    pub(super) fn check_milestone(
        &self,
        block: &Block<'_>,
        m: &Milestone<'_>,
    ) -> Result<(), SubmitError> {
        if block.nonce != 0 {
            return Err(InvalidBlock::MilestoneNonce.into());
        }
        if m.parents[..] != block.parents[..] {
            return Err(InvalidBlock::MilestoneParents.into());
        }
        let id = m.id().map_err(InvalidBlock::MilestoneId)?;
        let mut valid = 0usize;
        for s in m.signatures.iter() {
            if !self.coordinator_keys.contains(&s.public_key) {
                return Err(InvalidBlock::UnknownKey { key: s.public_key }.into());
            }
            if !s.verify(&id) {
                return Err(InvalidBlock::BadSignature { key: s.public_key }.into());
            }
            valid += 1;
        }
        if valid < self.threshold {
            return Err(InvalidBlock::TooFewSignatures {
                valid,
                needed: self.threshold,
            }
            .into());
        }
        let st = self.read();
        let ledger_index = st.ledger.ledger_index();
        // The start's own milestone (a start from a snapshot at T): block T is part of
        // T+1's cone and arrives after the start (docs/snapshots-pruning.md §2.6).
        let start = m.index == self.genesis.milestone_index && id == self.genesis.milestone_id;
        if m.index <= ledger_index && !start {
            return Err(InvalidBlock::MilestoneNotNewer {
                index: m.index,
                ledger_index,
            }
            .into());
        }
        Ok(())
    }
}
