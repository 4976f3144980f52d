//! Admission of block submissions: at most `--api-max-pending-submits` submits are in flight
//! (from routing, before their body is read, until their answer), so a flood cannot queue
//! without bound inside the node; beyond it a submit gets 503 with `Retry-After` at once
//! (load shed, not queued), while reads and the coordinator carry on.

use std::sync::Arc;

use axum::{
    extract::{FromRef, FromRequestParts},
    http::request::Parts,
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::ApiError;

/// Default `--api-max-pending-submits`.
pub const DEFAULT_MAX_PENDING_SUBMITS: usize = 4096;

/// The submit slots: the sub-state [`SubmitSlot`] is taken from.
#[derive(Debug, Clone)]
pub struct Admission(Arc<Semaphore>);

impl Admission {
    /// At most `n` (at least one) submissions in flight.
    pub fn new(n: usize) -> Self {
        Self(Arc::new(Semaphore::new(n.max(1))))
    }
}

/// One admitted submission; its slot is free again when this is dropped (the answer is sent).
#[derive(Debug)]
pub struct SubmitSlot(
    // Held for its drop.
    #[expect(dead_code, reason = "held for its drop, which frees the slot")] OwnedSemaphorePermit,
);

impl<S> FromRequestParts<S> for SubmitSlot
where
    S: Send + Sync,
    Admission: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(_: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Admission(slots) = Admission::from_ref(state);
        slots.try_acquire_owned().map(SubmitSlot).map_err(|_| {
            ApiError::Busy("too many blocks are being submitted at once: try again shortly".into())
        })
    }
}
