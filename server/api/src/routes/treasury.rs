//! `GET /api/core/v2/treasury`: the unspent treasury output, Hornet's shape
//! (`components/coreapi/utxo.go`): the milestone whose receipt created it and its amount.
//! A node started from a snapshot holds the treasury the file carried; the dev genesis has
//! none (zero id, amount 0).

use axum::{extract::State, response::Response};
use serde::Serialize;

use crate::{
    error::ApiError,
    routes::ids::{json_response, to_hex},
    state::AppState,
};

/// Body of `GET /api/core/v2/treasury`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreasuryResponse {
    /// Id of the milestone whose receipt created the treasury output (zero: none).
    pub milestone_id: String,
    /// Its amount, as a decimal string.
    pub amount: String,
}

/// `GET /api/core/v2/treasury`.
pub async fn treasury(State(state): State<AppState>) -> Result<Response, ApiError> {
    let (milestone_id, amount) = state.engine()?.genesis().treasury;
    json_response(&TreasuryResponse {
        milestone_id: to_hex(&milestone_id),
        amount: amount.to_string(),
    })
}
