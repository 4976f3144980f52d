//! `GET /api/core/v2/milestones/by-index/{index}` and `…/by-id/{milestoneId}`: the milestone
//! payload as JSON, or its bytes (with the payload type) when `Accept` asks for v2 binary.

use axum::{
    extract::{Path, State},
    response::Response,
};

use ledger_codec::{
    stardust::{Block, Payload},
    Codec,
};
use ledger_engine::{Engine, MilestoneInfo};

use crate::{
    error::ApiError,
    media::{binary, Accept},
    routes::{
        blocks::block_bytes,
        ids::{json_response, parse_hex_id, parse_index, to_hex, v2_binary},
    },
    state::AppState,
};

fn milestone_response(
    engine: &Engine,
    info: MilestoneInfo,
    accept: Accept,
) -> Result<Response, ApiError> {
    let bytes = block_bytes(engine, &info.block_id)?;
    let block = Block::decode(&bytes).map_err(ApiError::internal)?;
    let Some(payload @ Payload::Milestone(_)) = block.payload else {
        return Err(ApiError::internal(format!(
            "milestone {} is recorded on a block without a milestone payload",
            info.index
        )));
    };
    match v2_binary(accept.0) {
        Some(media) => Ok(binary(
            media,
            payload.to_bytes().map_err(ApiError::internal)?,
        )),
        None => json_response(&payload),
    }
}

/// The milestone with the hex id in path parameter `milestone_id`: 400 for a bad id, 404 for
/// an unknown one.
fn milestone_by_id(engine: &Engine, milestone_id: &str) -> Result<MilestoneInfo, ApiError> {
    let id = parse_hex_id::<32>("milestoneId", milestone_id)?;
    engine
        .milestone_by_id(&id)
        .ok_or_else(|| ApiError::not_found(format!("milestone not found: {milestone_id}")))
}

/// `GET /api/core/v2/milestones/by-index/{index}`.
pub async fn by_index(
    State(state): State<AppState>,
    Path(index): Path<String>,
    accept: Accept,
) -> Result<Response, ApiError> {
    let index = parse_index("milestone index", &index)?;
    let engine = state.engine()?;
    let info = engine
        .milestone_by_index(index)
        .ok_or_else(|| ApiError::not_found(format!("milestone index not found: {index}")))?;
    milestone_response(engine, info, accept)
}

/// `GET /api/core/v2/milestones/by-id/{milestoneId}`.
pub async fn by_id(
    State(state): State<AppState>,
    Path(milestone_id): Path<String>,
    accept: Accept,
) -> Result<Response, ApiError> {
    let engine = state.engine()?;
    let info = milestone_by_id(engine, &milestone_id)?;
    milestone_response(engine, info, accept)
}

/// Body of `…/utxo-changes`: the outputs a milestone created and consumed.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UtxoChangesResponse {
    /// The milestone index.
    pub index: u32,
    /// Output ids it created, in booking order.
    pub created_outputs: Vec<String>,
    /// Output ids it consumed, in booking order.
    pub consumed_outputs: Vec<String>,
}

fn utxo_changes_response(engine: &Engine, index: u32) -> Result<Response, ApiError> {
    let changes = engine.utxo_changes(index).ok_or_else(|| {
        let why = match engine.pruning_index() {
            p if index <= p => format!("pruned (pruning index {p})"),
            _ => "not confirmed by this node".to_owned(),
        };
        ApiError::not_found(format!(
            "can't load milestone diff for index: {index}, error: {why}"
        ))
    })?;
    let hex = |ids: &[[u8; 34]]| ids.iter().map(|id| to_hex(id)).collect();
    json_response(&UtxoChangesResponse {
        index: changes.index,
        created_outputs: hex(&changes.created),
        consumed_outputs: hex(&changes.consumed),
    })
}

/// `GET /api/core/v2/milestones/by-index/{index}/utxo-changes`.
pub async fn utxo_changes_by_index(
    State(state): State<AppState>,
    Path(index): Path<String>,
) -> Result<Response, ApiError> {
    let index = parse_index("milestone index", &index)?;
    utxo_changes_response(state.engine()?, index)
}

/// `GET /api/core/v2/milestones/by-id/{milestoneId}/utxo-changes`.
pub async fn utxo_changes_by_id(
    State(state): State<AppState>,
    Path(milestone_id): Path<String>,
) -> Result<Response, ApiError> {
    let engine = state.engine()?;
    let info = milestone_by_id(engine, &milestone_id)?;
    utxo_changes_response(engine, info.index)
}
