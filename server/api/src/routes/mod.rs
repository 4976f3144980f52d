//! The endpoints: health and route list here; peers, the v2 core API, the explorer and the
//! dashboard in the submodules.

use axum::{extract::State, http::StatusCode, Json};
use serde::{Deserialize, Serialize};

use crate::{error::ApiError, state::AppState};

pub mod blocks;
pub mod control;
pub mod dashboard;
pub mod explorer;
pub mod ids;
pub mod indexer;
pub mod indexer_params;
pub mod info;
pub mod milestones;
pub mod mqtt;
pub mod openapi;
pub mod outputs;
pub mod peers;
pub mod transactions;
pub mod treasury;
pub mod v3;

/// The API groups this node serves, as listed by `GET /api/routes`.
pub const ROUTE_GROUPS: &[&str] = &[
    "core/v2",
    "core/v3",
    "explorer/v2",
    "indexer/v1",
    "mqtt/v1",
    "dashboard/v1",
];

/// `GET /health`: 200 with no body when healthy, 503 otherwise.
pub async fn health(State(state): State<AppState>) -> Result<StatusCode, ApiError> {
    if state.node.is_healthy() {
        Ok(StatusCode::OK)
    } else {
        Err(ApiError::unavailable("node is not healthy"))
    }
}

/// Body of `GET /api/routes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoutesResponse {
    /// API groups such as `core/v2`.
    pub routes: Vec<String>,
}

/// `GET /api/routes`: `{"routes":["core/v2",...]}`, without `indexer/v1` when the indexer is
/// turned off, without `mqtt/v1` when the event API is, and without `dashboard/v1` when the
/// dashboard is.
pub async fn routes(State(state): State<AppState>) -> Json<RoutesResponse> {
    let indexer = state.node.engine().is_some_and(|e| e.has_indexer());
    Json(RoutesResponse {
        routes: ROUTE_GROUPS
            .iter()
            .filter(|r| indexer || **r != "indexer/v1")
            .filter(|r| state.events.is_some() || **r != "mqtt/v1")
            .filter(|r| state.dashboard.is_some() || **r != "dashboard/v1")
            .map(|&r| r.to_owned())
            .collect(),
    })
}
