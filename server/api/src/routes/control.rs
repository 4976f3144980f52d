//! `POST /api/core/v2/control/milestone` (protected): the dev coordinator issues a milestone
//! now and answers once it is confirmed and the ledger has advanced.

use std::sync::Arc;

use axum::{extract::State, response::Response};
use serde::Serialize;

use ledger_engine::{EngineError, PruneError, PruneTarget, SnapshotCreateError};

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

/// Body of `POST /api/core/v2/control/database/prune`: exactly one of the three (Hornet's
/// shape; the size is a string in binary units, like `"20GB"`).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PruneRequest {
    /// Prune up to and including this milestone index.
    pub index: Option<u32>,
    /// Keep this many milestones below the confirmed one.
    pub depth: Option<u32>,
    /// Prune until the data directory is below this size.
    pub target_database_size: Option<String>,
}

/// Body of a successful prune: the new pruning index.
#[derive(Debug, Clone, Serialize)]
pub struct Pruned {
    /// The pruning index now.
    pub index: u32,
}

/// A control request's body that does not parse: 400 in Hornet's words.
fn invalid_request(e: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(format!("invalid request, error: {e}"))
}

/// `POST /api/core/v2/control/database/prune` (protected): 200 with `{"index"}`; 400 for a
/// malformed body or a target outside the window (the message states `[min, max]`); 503
/// while another prune runs.
pub async fn prune(
    State(state): State<AppState>,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let req: PruneRequest = serde_json::from_slice(&body).map_err(invalid_request)?;
    let target = match (req.index, req.depth, req.target_database_size) {
        (Some(i), None, None) => PruneTarget::Index(i),
        (None, Some(d), None) => PruneTarget::Depth(d),
        (None, None, Some(size)) => {
            PruneTarget::Size(PruneTarget::parse_size(&size).map_err(invalid_request)?)
        }
        _ => {
            return Err(ApiError::bad_request(
                "either index, depth or size has to be specified (exactly one)",
            ))
        }
    };
    let engine = Arc::clone(state.engine()?);
    let index = tokio::task::spawn_blocking(move || engine.prune(target))
        .await
        .map_err(ApiError::internal)?
        .map_err(|e| match e {
            PruneError::Busy => ApiError::unavailable(e.to_string()),
            PruneError::Failed(_) => ApiError::internal(e),
            _ => ApiError::bad_request(e.to_string()),
        })?;
    json_response(&Pruned { index })
}

/// Body of `POST /api/core/v2/control/snapshots/create` (Hornet's shape).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotRequest {
    /// Target milestone index of the full file.
    pub index: Option<u32>,
}

/// Body of a successful snapshot: its target and the file written.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotCreated {
    /// Target milestone index.
    pub index: u32,
    /// The full snapshot file.
    pub file_path: String,
}

/// `POST /api/core/v2/control/snapshots/create` (protected; also the singular
/// `/control/snapshot/create` of TIP-25): writes the full file
/// `<snapshot-dir>/full_snapshot_<index>.bin` (docs/snapshots-pruning.md §4.6), 200 with
/// `{"index","filePath"}`; 400 for a malformed body or a target outside the window (the
/// message states `[min, max]`); 503 while a prune or snapshot runs.
pub async fn create_snapshot(
    State(state): State<AppState>,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let req: SnapshotRequest = serde_json::from_slice(&body).map_err(invalid_request)?;
    let index = req
        .index
        .ok_or_else(|| ApiError::bad_request("index needs to be specified"))?;
    let engine = Arc::clone(state.engine()?);
    let written = tokio::task::spawn_blocking(move || {
        let dir = engine.snapshot_dir().to_owned();
        std::fs::create_dir_all(&dir)
            .map_err(|e| SnapshotCreateError::Failed(format!("{}: {e}", dir.display())))?;
        engine.create_full_snapshot(index, &dir.join(format!("full_snapshot_{index}.bin")))
    })
    .await
    .map_err(ApiError::internal)?
    .map_err(|e| match e {
        SnapshotCreateError::Busy => ApiError::unavailable(e.to_string()),
        SnapshotCreateError::Failed(_) => ApiError::internal(e),
        _ => ApiError::bad_request(e.to_string()),
    })?;
    json_response(&SnapshotCreated {
        index: written.index,
        file_path: written.path.display().to_string(),
    })
}
