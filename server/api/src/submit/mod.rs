//! The submit service: what happens to a block between the handler that decoded the request
//! and the answer. It completes a v2 block (the engine's `prepare_v2`), searches a nonce on the
//! shared [`PowPool`] within [`POW_TIMEOUT`] (cancelled when the request goes away), stores
//! it on the right thread and waits until the log's fsync covers it: a success means the
//! block survives a crash. v3 blocks are checked and stored by the engine alone.
//!
//! No HTTP here: the handlers (`routes::blocks`, `routes::v3`) decode media types and map
//! [`SubmitFailure`] onto status codes.

mod pow_pool;

use std::{
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    time::Duration,
};

use ledger_codec::{nova, stardust::TaggedData};
use ledger_engine::{
    BlockId, Engine, LogError, PowStep, Prepared, SubmitError, V2Draft, V3Submitted,
};

pub use pow_pool::{PowPool, PowPoolError, DEFAULT_QUEUE};

/// Part of the message of a 503 when the node would have to do proof of work but cannot
/// (clients look for this text).
pub const POW_UNAVAILABLE: &str = "proof of work is not available on this node";

/// Longest the node searches for a nonce before giving up.
pub const POW_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a submit did not end with a stored, durable block.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SubmitFailure {
    /// The engine refused the block (invalid, or the node cannot take it now).
    #[error(transparent)]
    Refused(#[from] SubmitError),
    /// The block needs a nonce and this node does no proof of work (`--no-pow`).
    #[error("failed to attach block: {POW_UNAVAILABLE}")]
    PowDisabled,
    /// The nonce search did not finish in time.
    #[error("proof of work did not finish within {} s", .0.as_secs())]
    PowTimeout(Duration),
    /// The nonce search was stopped before it found a nonce.
    #[error("proof of work was cancelled")]
    PowCancelled,
    /// The proof-of-work pool is full or stopped.
    #[error(transparent)]
    PowPool(#[from] PowPoolError),
    /// The block was stored but the log could not make it durable.
    #[error("the block log could not be synced: {0}")]
    NotDurable(#[source] LogError),
    /// A task of the service ended without an answer (a panic, or the runtime shutting down).
    #[error("a submit task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// The durability callback was dropped without an answer.
    #[error("the block log dropped a durability wait")]
    DurabilityLost,
}

/// Submits blocks to the engine for both submit routes.
#[derive(Debug)]
pub struct SubmitService {
    /// Whether the node fills in missing nonces.
    pow: bool,
    /// The nonce search pool shared by all submits.
    pool: PowPool,
}

impl SubmitService {
    /// A service that searches nonces when `pow` is on.
    pub fn new(pow: bool) -> Self {
        Self {
            pow,
            pool: PowPool::default(),
        }
    }

    /// Whether the node fills in missing nonces (`info.features` lists `pow`).
    pub fn pow_enabled(&self) -> bool {
        self.pow
    }

    /// Nonce searches run to their end so far (Hornet's `iota_restapi_pow_requests`).
    pub fn pow_completed(&self) -> u64 {
        self.pool.completed()
    }

    /// Completes, checks and stores a v2 block, and returns its id once it is durable.
    ///
    /// # Errors
    /// See [`SubmitFailure`].
    pub async fn submit_v2(
        &self,
        engine: &Arc<Engine>,
        draft: V2Draft,
    ) -> Result<BlockId, SubmitFailure> {
        let prepared = engine.prepare_v2(draft)?;
        tracing::trace!(
            len = prepared.bytes.len(),
            parents_filled = prepared.parents_filled,
            "v2 block submitted"
        );
        let bytes = self.proof_of_work(engine, prepared).await?;
        // Blocks without heavy checks are stored on this thread; transactions (signatures)
        // and milestones (confirmation) on the blocking pool.
        let (submitted, durable) = if is_light(&bytes) {
            engine.submit_v2_nowait(&bytes)?
        } else {
            let engine = Arc::clone(engine);
            tokio::task::spawn_blocking(move || engine.submit_v2_nowait(&bytes)).await??
        };
        // Success only once the block survives a crash (group commit: the next fsync).
        let (done, durable_now) = tokio::sync::oneshot::channel();
        engine.on_durable(durable, move |result| {
            let _ = done.send(result);
        });
        durable_now
            .await
            .map_err(|_| SubmitFailure::DurabilityLost)?
            .map_err(SubmitFailure::NotDurable)?;
        Ok(submitted.block_id)
    }

    /// Checks and stores a v3 block (the log syncs on insert, so on the blocking pool).
    ///
    /// # Errors
    /// See [`SubmitFailure`].
    pub async fn submit_v3(
        &self,
        engine: &Arc<Engine>,
        bytes: Vec<u8>,
        params: &Arc<nova::ProtocolParameters>,
    ) -> Result<V3Submitted, SubmitFailure> {
        let engine = Arc::clone(engine);
        let params = Arc::clone(params);
        Ok(tokio::task::spawn_blocking(move || engine.submit_v3(&bytes, &params)).await??)
    }

    /// The PoW step the engine asked for: none, or a nonce search on the shared pool.
    async fn proof_of_work(
        &self,
        engine: &Arc<Engine>,
        prepared: Prepared,
    ) -> Result<Vec<u8>, SubmitFailure> {
        let mut bytes = prepared.bytes;
        let PowStep::Search { body_len } = prepared.pow else {
            return Ok(bytes);
        };
        if !self.pow {
            return Err(SubmitFailure::PowDisabled);
        }
        let cancel = CancelOnDrop(Arc::new(AtomicBool::new(false)));
        let flag = Arc::clone(&cancel.0);
        let miner = Arc::clone(engine);
        let body = bytes.get(..body_len).unwrap_or_default().to_vec();
        let search = self.pool.run(move || miner.mine(&body, &flag));
        let nonce = tokio::time::timeout(POW_TIMEOUT, search)
            .await
            .map_err(|_| SubmitFailure::PowTimeout(POW_TIMEOUT))??
            .ok_or(SubmitFailure::PowCancelled)?;
        if let Some(slot) = bytes.get_mut(body_len..) {
            slot.copy_from_slice(&nonce.to_le_bytes());
        }
        Ok(bytes)
    }
}

/// Whether a block's checks are cheap enough for the async thread: no payload or tagged
/// data.
fn is_light(bytes: &[u8]) -> bool {
    matches!(
        ledger_codec::stardust::payload_kind(bytes),
        None | Some(TaggedData::KIND)
    )
}

/// Sets the flag when dropped: a timed-out or abandoned request stops its PoW threads.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}
