//! Admission of block submissions: at most `--api-max-pending-submits` submits are in flight
//! (from routing, before their body is read, until their answer), so a flood cannot queue
//! without bound inside the node; beyond it a submit gets 503 with `Retry-After` at once
//! (load shed, not queued), while reads and the coordinator carry on.

use std::sync::Arc;

use axum::{
    extract::{FromRef, FromRequestParts},
    http::request::Parts,
};
use tokio::sync::OwnedSemaphorePermit;

use crate::{app::AppState, error::ApiError};

/// Default `--api-max-pending-submits`.
pub const DEFAULT_MAX_PENDING_SUBMITS: usize = 4096;

/// One admitted submission; its slot is free again when this is dropped (the answer is sent).
#[derive(Debug)]
pub struct SubmitSlot(
    // Held for its drop.
    #[allow(dead_code)] OwnedSemaphorePermit,
);

impl<S> FromRequestParts<S> for SubmitSlot
where
    S: Send + Sync,
    AppState: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(_: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let app = AppState::from_ref(state);
        Arc::clone(&app.submit_slots)
            .try_acquire_owned()
            .map(SubmitSlot)
            .map_err(|_| {
                ApiError::Busy(
                    "too many blocks are being submitted at once: try again shortly".into(),
                )
            })
    }
}
