//! `POST /api/core/v2/control/milestone` (protected): the dev coordinator issues a milestone
//! now and answers once it is confirmed and the ledger has advanced.

use std::sync::Arc;

use axum::{extract::State, response::Response};
use serde::Serialize;

use ledger_engine::EngineError;

use crate::{
    error::ApiError,
    routes::ids::{json_response, to_hex},
    state::AppState,
};

/// Body of a successful `POST /api/core/v2/control/milestone`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MilestoneIssued {
    /// The new milestone's index (the new ledger index).
    pub index: u32,
    /// Its milestone id.
    pub milestone_id: String,
    /// The block that carries it.
    pub block_id: String,
}

/// `POST /api/core/v2/control/milestone`: 200 with `{"index","milestoneId","blockId"}`; 503
/// when this node runs no coordinator or is shutting down.
pub async fn milestone(State(state): State<AppState>) -> Result<Response, ApiError> {
    let engine = Arc::clone(state.engine()?);
    if !engine.has_coordinator() {
        return Err(ApiError::unavailable(
            "this node runs no coordinator, so it cannot issue milestones",
        ));
    }
    let info = tokio::task::spawn_blocking(move || engine.issue_milestone())
        .await
        .map_err(ApiError::internal)?
        .map_err(|e| match e {
            EngineError::NoCoordinator | EngineError::ShuttingDown => {
                ApiError::unavailable(e.to_string())
            }
            other => ApiError::internal(other),
        })?;
    json_response(&MilestoneIssued {
        index: info.index,
        milestone_id: to_hex(&info.milestone_id),
        block_id: to_hex(&info.block_id),
    })
}
